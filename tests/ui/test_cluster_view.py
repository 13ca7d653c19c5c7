"""The Cluster tab (ui/tabs/cluster_panel.py) with Pilot, against real nodes (network
namespaces with their own sshd): every node side by side with its state and busiest devices,
a dead node saying why, and a LUN seen from two nodes in one group with the cluster total,
flagged when all nodes together saturate it though no node alone does."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import TabbedContent

from racperf_tui.core.disks.iostat_sampler import IostatRow
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.cluster import load_cluster
from racperf_tui.orchestration.cluster_monitor import ClusterMonitor
from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.tabs.cluster_panel import ClusterPanel, cluster_file_to_watch
from racperf_tui.ui.widgets.cluster_luns import SharedLunTable
from racperf_tui.ui.widgets.cluster_node_card import NodeCard
from tests.helpers import FIXTURES
from tests.helpers.cluster_panel import PanelApp, until
from tests.helpers.cluster_trees import SharedLunTrees
from tests.helpers.netns_helpers import NetnsCluster

FIXTURE_ROOT = FIXTURES / "sysstat" / "root1"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    yield
    ssh.close_all()


def text_of(widget: NodeCard | SharedLunTable) -> str:
    return widget.render().plain


@contextlib.contextmanager
def disk_writes(directory: Path) -> Iterator[None]:
    """Writes reaching the disk under ``directory`` (64 KiB and an fsync, 20 times a second)
    until the block ends: the namespace nodes read this machine's /proc/diskstats, and a card
    of a node whose every disk was idle over the interval says "idle", with no figures."""
    stop = threading.Event()

    def write() -> None:
        with open(directory / "disk-writes", "wb") as f:
            while not stop.wait(0.05):
                f.seek(0)
                f.write(os.urandom(64 * 1024))
                f.flush()
                os.fsync(f.fileno())

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)


async def test_every_node_side_by_side_and_a_dead_one_says_why(netns_cluster: NetnsCluster, tmp_path: Path) -> None:
    netns_cluster.node("n3").stop_sshd()
    panel = ClusterPanel(netns_cluster.cluster_file, 0.5)
    app = PanelApp(panel)
    with disk_writes(tmp_path):
        async with app.run_test(size=(80, 24)) as pilot:
            cards = {name: panel.card(name) for name in ("n1", "n2", "n3")}
            await until(
                pilot,
                lambda: (
                    all(c.state is not None and c.state.seq >= 2 for n, c in cards.items() if n != "n3")
                    and cards["n3"].state is not None
                    and cards["n3"].state.state == "unreachable"
                    and "IOPS" in text_of(cards["n1"])
                ),
                why=lambda: {n: c.state for n, c in cards.items()},
            )
            await pilot.pause(0.1)
            n1, n3 = text_of(cards["n1"]), text_of(cards["n3"])
            assert "n1" in n1 and "ok" in n1 and "IOPS" in n1 and "await" in n1
            assert "n3" in n3 and "unreachable" in n3 and "refused" in n3 and "Connection refused" in n3
            # two cards a row at 80 columns, all as tall, every line of theirs shown
            assert cards["n1"].region.y == cards["n2"].region.y and cards["n3"].region.y > cards["n1"].region.y
            for card in cards.values():
                assert (
                    card.region.height == NodeCard.HEIGHT and len(card.render().plain.splitlines()) <= NodeCard.HEIGHT
                )
                assert len(card._lines(card.content_size.width)) <= NodeCard.HEIGHT, card.node_name
            assert "2/3 nodes" in str(panel.query_one("#cluster-status").render())
            assert text_of(panel.query_one(SharedLunTable)).startswith("No LUN seen")


async def test_a_lun_saturated_by_all_nodes_together_is_flagged_on_its_total(
    netns_cluster: NetnsCluster, tmp_path: Path
) -> None:
    """The array gives the LUN 2,000 IOPS. Both nodes do 1,000 at 8 ms; then n1 pushes harder
    (1,500 IOPS at 16 ms, avgqu-sz 8 -> 24) and n2 gets less (500 at 16 ms, avgqu-sz flat at 8).
    Neither node alone shows a knee (n1's IOPS rose, n2's queue did not), but the LUN's total
    does: avgqu-sz 16 -> 32 and await 8 -> 16 ms for the same 2,000 IOPS. Only the total says
    it, by the Disks tab's rules."""
    lun = SharedLunTrees(tmp_path)

    steady = {"n1": (1000, 8.0), "n2": (1000, 8.0)}
    lun.step(steady)
    nodes = load_cluster(netns_cluster.cluster_file).nodes[:2]
    monitor = ClusterMonitor(nodes, 0.25, remote_roots=lun.roots())
    panel = ClusterPanel(netns_cluster.cluster_file, 0.25, monitor=monitor)
    async with PanelApp(panel).run_test(size=(80, 40)) as pilot:
        table = panel.query_one(SharedLunTable)
        pushed = {"n1": (1500, 16.0), "n2": (500, 16.0)}
        # up to three rounds: a sample that read the new uptime over the old counters (see
        # test_cluster_monitor) is a zero in the history, and the next round has none
        for index, load in enumerate(([steady] * 4 + [pushed] * 4) * 3):
            if index % 8 == 0 and index and table.groups and table.groups[0].saturated:
                break
            seqs = {n: monitor.state(n).seq for n in ("n1", "n2")}
            lun.step(load)
            await until(pilot, lambda seqs=seqs: all(monitor.state(n).seq > seqs[n] for n in seqs), 20)
            await pilot.pause(0.3)  # the debounce: the totals of this tick
            if load is steady:
                assert not table.groups or not table.groups[0].saturated, table.groups
        await until(pilot, lambda: bool(table.groups) and table.groups[0].saturated, 10, lambda: table.groups)
        text = text_of(table)
        group = table.groups[0]
        members = {n: panel.models[n].devices["data1"] for n in ("n1", "n2")}
    assert group.lun.label == "data1" and [m.node for m in group.lun.members] == ["n1", "n2"]
    assert not any(d.flagged for d in members.values())  # no node alone
    assert group.total is not None and group.saturated_members == ()
    assert group.reason.startswith(
        "all nodes together: no more throughput: 2,000 IOPS at avgqu-sz 32.0, 2,000 at 16.0"
    ), group.reason
    total = group.lun.total
    assert total.r_s == pytest.approx(2000.0) and total.avgqu_sz == pytest.approx(32.0)
    assert total.await_ms == pytest.approx(16.0) and total.util_pct == pytest.approx(70.0)
    assert group.lun.queue_limit == 128
    assert "!data1" in text and "TOTAL" in text and " n1 data1" in text and " n2 data1" in text
    assert "all nodes together" in text


async def test_the_dashboard_opens_on_the_cluster_tab_with_cluster(netns_cluster: NetnsCluster) -> None:
    app = RacperfApp(roots=[str(FIXTURE_ROOT)], cluster=str(netns_cluster.cluster_file), clock=False)
    async with app.run_test(size=(200, 60)) as pilot:
        await until(pilot, lambda: app.query_one(TabbedContent).active == "cluster", 10)
        panel = app.query_one(ClusterPanel)
        await until(
            pilot,
            lambda: all(
                panel.card(n).state is not None and panel.card(n).state.state == "ok" for n in ("n1", "n2", "n3")
            ),
            30,
        )
        cards = [panel.card(n) for n in ("n1", "n2", "n3")]
        assert len({c.region.y for c in cards}) == 1  # side by side at 200 columns
        await pilot.press("1")
        assert app.query_one(TabbedContent).active == "disks"
        await pilot.press("4")
        assert app.query_one(TabbedContent).active == "cluster"


def test_no_cluster_file_no_tab(tmp_path: Path) -> None:
    assert cluster_file_to_watch(None) is None  # XDG_CONFIG_HOME is empty here
    (tmp_path / "config" / "racperf").mkdir(parents=True)
    (tmp_path / "config" / "racperf" / "cluster.toml").write_text("")
    assert cluster_file_to_watch(None) == tmp_path / "config" / "racperf" / "cluster.toml"
    assert cluster_file_to_watch("~/x.toml") == Path.home() / "x.toml"


async def test_a_broken_cluster_file_is_said_not_raised(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[node]]\nname = "a b"\n')
    panel = ClusterPanel(bad)
    async with PanelApp(panel).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        status = str(panel.query_one("#cluster-status").render())
    assert str(bad) in status and "node name 'a b'" in status and panel.monitor is None


async def test_a_burst_of_sixteen_node_states_is_shown_in_a_pass_or_two(tmp_path: Path) -> None:
    # 16 nodes refused at once (port 9 of 127.0.0.1); then, the monitor stopped, a tick's burst
    # as the SSH loop makes it: the nodes' new states one after the other, 1 ms apart
    cluster = tmp_path / "cluster.toml"
    cluster.write_text("".join(f'[[node]]\nname = "n{i}"\nhost = "127.0.0.1"\nport = 9\n' for i in range(1, 17)))
    panel = ClusterPanel(cluster, 1.0)
    passes: list[int] = []
    take = panel._sampled.take

    def taken() -> list[str]:
        names = take()
        passes.append(len(names))
        return names

    panel._sampled.take = taken  # type: ignore[method-assign]
    async with PanelApp(panel).run_test(size=(200, 60)) as pilot:
        cards = [panel.card(f"n{i}") for i in range(1, 17)]
        await until(pilot, lambda: all(c.state is not None and c.state.state == "unreachable" for c in cards))
        monitor = panel.monitor
        assert monitor is not None
        monitor.stop(timeout_s=5.0)
        passes.clear()
        row = IostatRow("sda", 100.0, 0.0, 800.0, 0.0, 0.0, 0.0, 16.0, 0.1, 1.0, 1.0, 0.0, 0.5, 10.0)

        def burst() -> None:
            for i in range(1, 17):
                name = f"n{i}"
                state = monitor.state(name)
                monitor._states[name] = replace(
                    state, state="ok", reason="", rows=(row,), since_boot=False, interval_s=1.0,
                    sampled_at=time.time(), seq=state.seq + 1,
                )  # fmt: skip
                panel._from_worker(name)
                time.sleep(0.001)

        feeder = threading.Thread(target=burst)
        feeder.start()
        await until(pilot, lambda: all(c.state is not None and c.state.state == "ok" for c in cards))
        feeder.join()
        # within the 30 ms window: one pass, two or three when the thread took longer (8 with a 1 ms window)
        assert sum(passes) == 16 and len(passes) <= 3, passes
        assert all("sda" in text_of(card) for card in cards)


def test_a_reason_of_several_lines_is_one_paragraph_on_the_card() -> None:
    """Issue 21: a node card's reason showed a literal \\n (plain() spells control characters)."""
    from racperf_tui.core.disks.iostat_model import IostatModel
    from racperf_tui.orchestration.cluster_monitor import NodeState

    card = NodeCard("n1")
    card.state = NodeState("n1", "root@10.0.0.1:22", state="unreachable", reason="auth: login refused\nby the node")
    card.model = IostatModel()
    lines = [line.plain for line in card._lines(60)]
    assert lines[1] == "auth: login refused by the node" and not any("\\n" in line for line in lines)
