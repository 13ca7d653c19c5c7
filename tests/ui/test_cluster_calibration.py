"""CALIBRATE_IO's load watched on every node's card (issue 10): a CALIBRATE_IO run running in a
real SQLite store, its datafiles' devices in its sample, read by the app's store watcher; the
Cluster tab, over real sshd nodes (network namespaces) replaying recorded trees, marks each
node's own names of those LUNs, pinned above busier devices, says which run above the cards,
and takes it all away when the run ends."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.remote.cluster import load_cluster, parse_cluster
from racperf_tui.core.store import Store
from racperf_tui.orchestration.calibration_watch import CalibrationFollower, CalibrationRun, instance_node
from racperf_tui.orchestration.cluster_monitor import ClusterMonitor, NodeState
from racperf_tui.ui.tabs.cluster_panel import ClusterPanel
from racperf_tui.ui.widgets.cluster_node_card import MARK, NodeCard
from tests.helpers.cluster_helpers import isolated_home  # noqa: F401 (fixture)
from tests.helpers.cluster_panel import PanelApp, until
from tests.helpers.cluster_trees import PATH, SHARED, stat_line, write_tree
from tests.helpers.netns_helpers import NetnsCluster
from tests.helpers.store_calls import store_calls  # noqa: F401 (the fixture: every Store call's thread)

#: a node's own busy disks: five of them, busier than the LUN, so the LUN is on the card only pinned
OWN = {"queue/nr_requests": "64"}


# no ~/.ssh of this machine's user and no agent, for every test here
pytestmark = pytest.mark.usefixtures("isolated_home")


def calibration_run(store: Store, host: str, devices: list[str] | None) -> int:
    """A CALIBRATE_IO run as its supervisor records it: running, one sample at the start of
    the calibration carrying the devices under its datafiles (none: still in its checks)."""
    run_id = store.create_run("calibrate_io", host, None, {"num_physical_disks": 2}, ["sqlplus"], "19.0")
    store.set_state(run_id, RunState.RUNNING)
    if devices is not None:
        store.add_sample(
            run_id,
            Sample(t=0.4, metrics={"elapsed_s": 0.0, "in_progress": 1.0}, extra={"devices": devices}),
        )
    return run_id


def write_trees(trees: dict[str, Path], step: int) -> None:
    """n1 and n2 see the LUN data1 through a multipath map (dm-0 on n1, dm-7 on n2) over two
    paths, idle; every node has five busy disks of its own; n3 does not see the LUN."""
    up = 1000.0 + step
    for name, root in trees.items():
        own = [
            stat_line(8, 64 + 16 * i, f"sd{c}", 1000 * step * (i + 1), 0, 0, 0, 500 * step, 0)
            for i, c in enumerate("efghi")
        ]
        block: dict[str, dict[str, str]] = {f"sd{c}": OWN for c in "efghi"}
        lun: list[str] = []
        dm = {"n1": "dm-0", "n2": "dm-7"}.get(name)
        if dm is not None:
            lun = [
                stat_line(8, 16, "sdb", 0, 0, 0, 0, 0, 0),
                stat_line(8, 32, "sdc", 0, 0, 0, 0, 0, 0),
                stat_line(253, int(dm[3:]), dm, 0, 0, 0, 0, 0, 0),
            ]
            block.update({"sdb": PATH, "sdc": PATH, dm: SHARED})
        write_tree(root, up, lun + own, block)


def busiest_iops(state: NodeState) -> float:
    """The node's highest r/s over the last interval (0 before one: a sample since boot)."""
    if state.since_boot:
        return 0.0
    return max((round(row.r_s) for row in state.rows), default=0.0)


def device_lines(card: NodeCard) -> list[str]:
    """The card's device lines (after the heading), stripped."""
    lines = card.render().plain.splitlines()
    heading = next(i for i, line in enumerate(lines) if "IOPS" in line)
    return [line.strip() for line in lines[heading + 1 :]]


async def test_every_node_marks_its_own_names_of_the_calibrations_luns_until_the_run_ends(
    netns_cluster: NetnsCluster,
    tmp_path: Path,
    store_calls: list[tuple[str, threading.Thread]],  # noqa: F811
) -> None:
    trees = {name: tmp_path / name for name in ("n1", "n2", "n3")}
    write_trees(trees, 1)
    data = tmp_path / "data"
    store = Store.open(data)
    # the devices under the datafiles on n1 (tools/calibrate_io/__init__.py: the map, then its paths)
    run_id = calibration_run(store, "n1", ["dm-0", "sdb", "sdc"])
    other = store.create_run("fio", "n2", "/dev/sde", {}, ["fio"], "3.33")  # not a calibration
    store.set_state(other, RunState.RUNNING)
    store_calls.clear()  # the seeding is the test's own
    monitor = ClusterMonitor(
        load_cluster(netns_cluster.cluster_file).nodes, 0.25, remote_roots={k: str(v) for k, v in trees.items()}
    )
    panel = ClusterPanel(netns_cluster.cluster_file, 0.25, monitor=monitor, data_dir=str(data))
    async with PanelApp(panel).run_test(size=(200, 60)) as pilot:
        cards = {name: panel.card(name) for name in trees}
        # a sample over an interval: the busy disks have figures. The node's loop may read the
        # tree between its two files' writes (the old uptime with the new counters: a sample over
        # no time, skipped, then one that shows the disks idle); the figures are the same at every
        # step, so a step more repairs it
        for step in range(2, 10):
            seqs = {n: monitor.state(n).seq for n in trees}
            write_trees(trees, step)
            await until(pilot, lambda seqs=seqs: all(monitor.state(n).seq > seqs[n] for n in seqs), 20)
            await pilot.pause(0.3)  # a sample more: one read mid-write is followed by the true one
            if step >= 3 and all(busiest_iops(monitor.state(n)) == 5000 for n in trees):
                break
        assert all(busiest_iops(monitor.state(n)) == 5000 for n in trees), monitor.states()
        await until(
            pilot,
            lambda: cards["n1"].marked and cards["n2"].marked,
            10,
            lambda: {n: (c.marked, c.state and c.state.luns) for n, c in cards.items()},
        )
        await pilot.pause(0.3)
        assert cards["n1"].marked == ("dm-0", "sdb", "sdc")
        assert cards["n2"].marked == ("dm-7",) and cards["n3"].marked == ()
        n1, n2, n3 = (device_lines(cards[n]) for n in ("n1", "n2", "n3"))
        # pinned first though idle (five disks of 1,000 to 5,000 IOPS are busier), then the busiest
        assert [line.split()[:3] for line in n1[:3]] == [
            ["CAL", "data1", "0"],
            ["CAL", "sdb", "0"],
            ["CAL", "sdc", "0"],
        ]
        assert n1[3].split()[:2] == ["sdi", "5000"]
        assert n2[0].split()[:3] == ["CAL", "data1", "0"] and [line.split()[0] for line in n2[1:4]] == [
            "sdi",
            "sdh",
            "sdg",
        ]
        assert not any(MARK in line for line in n3) and [line.split()[0] for line in n3[:4]] == [
            "sdi",
            "sdh",
            "sdg",
            "sdf",
        ]
        # the marks are in the card's calibration style, not only in its words
        style = cards["n2"].get_component_rich_style("node-card--calibration", partial=True)
        line = cards["n2"]._lines(cards["n2"].content_size.width)[2]
        assert line.plain.startswith(" CAL data1") and any(span.style == style for span in line.spans)
        said = panel.query_one("#cluster-calibration")
        assert said.display and said.region.y < cards["n1"].region.y
        assert str(said.render()) == (
            f"CALIBRATE_IO run {run_id} on n1: its datafiles' LUNs marked on every node (none of them seen on n3)"
        )

        store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
        await until(pilot, lambda: not any(c.marked for c in cards.values()), 5)
        await pilot.pause(0.2)
        assert not said.display
        assert not any(MARK in line for card in cards.values() for line in device_lines(card))
        assert device_lines(cards["n1"])[0].split()[:2] == ["sdi", "5000"]
    store.close()
    # the panel read the store on the watcher's thread only: on this one, the test's own end
    main = threading.main_thread()
    assert {name for name, thread in store_calls if thread is main} == {"set_state"}
    assert any(name == "unfinished_runs" for name, thread in store_calls if thread is not main)


async def test_a_calibration_with_nothing_to_mark_says_why(netns_cluster: NetnsCluster, tmp_path: Path) -> None:
    """On this host with no node of the file for it; still in its checks; on a disk no other
    node shares, with a node that was never sampled."""
    netns_cluster.node("n3").stop_sshd()
    data = tmp_path / "data"
    store = Store.open(data)
    waiting = calibration_run(store, "n1", None)  # still in its checks: no devices yet
    local = calibration_run(store, "local", ["dm-0", "sdb", "sdc"])
    own = calibration_run(store, "n2", ["sde"])  # a disk of n2's own: no identity to share
    trees = {name: tmp_path / name for name in ("n1", "n2", "n3")}
    write_trees(trees, 1)
    monitor = ClusterMonitor(
        load_cluster(netns_cluster.cluster_file).nodes, 0.25, remote_roots={k: str(v) for k, v in trees.items()}
    )
    panel = ClusterPanel(netns_cluster.cluster_file, 0.25, monitor=monitor, data_dir=str(data))
    expected = [
        f"CALIBRATE_IO run {waiting} on n1: the devices under its datafiles come when the calibration starts",
        f"CALIBRATE_IO run {local} on this host (local): its datafiles' LUNs marked on no node: it runs on "
        f'this host, and no node of {netns_cluster.cluster_file.name} is this host (host = "local" says which)',
        f"CALIBRATE_IO run {own} on n2: its datafiles' LUNs marked on every node (none of them seen on n1; "
        "n3 not sampled yet)",
    ]
    async with PanelApp(panel).run_test(size=(80, 24)) as pilot:
        said = panel.query_one("#cluster-calibration")
        await until(pilot, lambda: str(said.render()).splitlines() == expected, 20, lambda: str(said.render()))
        await until(pilot, lambda: panel.card("n3").state is not None and panel.card("n3").state.state == "unreachable")
        await pilot.pause(0.3)
        assert str(said.render()).splitlines() == expected and said.display
        assert panel.card("n2").marked == ("sde",) and device_lines(panel.card("n2"))[0].split()[:2] == ["CAL", "sde"]
        assert panel.card("n1").marked == () and panel.card("n3").marked == ()
    store.close()


# ---- the parts below the view -----------------------------------------------------------------


def test_the_follower_lists_running_calibrations_with_their_newest_devices(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    follower = CalibrationFollower()
    assert follower.poll(store) == ()
    pending = store.create_run("calibrate_io", "rac2", None, {}, ["sqlplus"], None)
    first = calibration_run(store, "rac1", ["dm-3", "sdb"])
    fio = store.create_run("fio", "rac1", "/dev/sdb", {}, ["fio"], None)
    store.set_state(fio, RunState.RUNNING)
    assert follower.poll(store) == (CalibrationRun(first, "rac1", ("dm-3", "sdb")),)
    # a status answer of the second session: the same devices again, and a sample without them
    store.add_sample(first, Sample(t=5.0, metrics={"elapsed_s": 5.0}, extra={"devices": ["dm-3", "sdb", "sdc"]}))
    store.add_sample(first, Sample(t=6.0, metrics={"elapsed_s": 6.0}, extra={"status": "IN PROGRESS"}))
    second = calibration_run(store, "local", [])
    assert follower.poll(store) == (
        CalibrationRun(first, "rac1", ("dm-3", "sdb", "sdc")),
        CalibrationRun(second, "local", ()),
    )
    store.set_state(first, RunState.STOPPED)
    store.set_state(pending, RunState.RUNNING)
    assert follower.poll(store) == (CalibrationRun(pending, "rac2", None), CalibrationRun(second, "local", ()))
    assert first not in follower._after_seq  # forgotten once ended
    store.close()


def test_the_instance_node_of_a_runs_host() -> None:
    with_local = parse_cluster(
        '[[node]]\nname = "rac1"\nhost = "local"\n'
        '[[node]]\nname = "rac2"\nhost = "rac2.example.com"\nuser = "oracle"\nport = 2222\n',
        Path("/etc/rac.toml"),
    )
    assert instance_node("local", with_local) == ("rac1", "")
    assert instance_node("rac2", with_local) == ("rac2", "")
    assert instance_node("oracle@rac2.example.com:2222", with_local) == ("rac2", "")  # an ad hoc --ssh run
    assert instance_node("rac9", with_local) == (None, "its node rac9 is not in rac.toml")
    without = parse_cluster('[[node]]\nname = "rac2"\nhost = "rac2.example.com"\n', Path("/etc/rac.toml"))
    assert instance_node("local", without) == (
        None,
        'it runs on this host, and no node of rac.toml is this host (host = "local" says which)',
    )
