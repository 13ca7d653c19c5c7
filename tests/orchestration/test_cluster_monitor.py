"""The cluster monitor (orchestration/cluster_monitor.py) against real nodes: network namespaces,
each with its own sshd (tests/helpers/netns_helpers.py). Remote iostat reads the same counters as local
iostat; a dead node, a node with an unknown host key or a refused login says why while the
others go on; a node whose files hold invalid UTF-8 leaves the other channels sampling; a cut
link marks the node lost, keeps its rows and resumes when the link is back; a LUN seen from
several nodes is one group with the cluster total, to the digit."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from racperf_tui.core.disks.diskstats import read_queue_facts, read_snapshot
from racperf_tui.core.disks.iostat_sampler import IostatRow
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.cluster import LOCAL, Node, load_cluster
from racperf_tui.core.remote.remote_diskstats import RemoteDiskstats
from racperf_tui.core.remote.ssh import HostKeyError, SshError
from racperf_tui.orchestration.cluster_monitor import (
    LOST,
    OK,
    UNREACHABLE,
    ClusterMonitor,
    NodeState,
    canonical_wwid,
    failure_reason,
    lun_identities,
    shared_luns,
    sum_rows,
)
from tests.helpers.cluster_trees import PATH, SHARED, WWID, stat_line, write_tree
from tests.helpers.netns_helpers import NetnsCluster


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    yield
    ssh.close_all()


def wait_for(what: Callable[[], bool], timeout_s: float, why: Callable[[], object] = lambda: "") -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if what():
            return
        time.sleep(0.02)
    raise AssertionError(f"not within {timeout_s} s: {why()}")


def row(
    device: str, r: float, w: float, rkb: float, wkb: float, qu: float, aw: float, ra: float, wa: float, util: float
):
    return IostatRow(device, r, w, rkb, wkb, 0.0, 0.0, 2 * (rkb + wkb) / (r + w), qu, aw, ra, wa, 0.1, util)


# ---- pure parts -----------------------------------------------------------------------------


def test_the_cluster_total_sums_rates_and_queues_weights_times_and_takes_the_highest_util() -> None:
    a = row("data1", 1000, 0, 8000, 0, 4.0, 2.0, 2.0, 0.0, 60.0)
    b = row("data1", 3000, 1000, 24000, 8000, 12.0, 4.0, 3.0, 7.0, 95.0)
    total = sum_rows("data1", [a, b])
    assert (total.r_s, total.w_s, total.rkb_s, total.wkb_s) == (4000, 1000, 32000, 8000)
    assert total.avgqu_sz == 16.0 and total.util_pct == 95.0
    assert total.await_ms == pytest.approx((1000 * 2.0 + 4000 * 4.0) / 5000)  # 3.6, not (2+4)/2
    assert total.r_await_ms == pytest.approx((1000 * 2.0 + 3000 * 3.0) / 4000)
    assert total.w_await_ms == pytest.approx(7.0)
    assert total.avgrq_sz == pytest.approx(2 * 40000 / 5000)  # 16 sectors = 8 KiB
    idle = sum_rows("x", [row("x", 1, 0, 0, 0, 0, 0, 0, 0, 0)._replace(r_s=0.0)])
    assert idle.await_ms == 0.0 and idle.util_pct == 0.0


def test_one_spelling_of_a_wwid() -> None:
    assert canonical_wwid("naa.6000C29ABCDEF012") == canonical_wwid("36000c29abcdef012") == "naa.6000c29abcdef012"
    assert canonical_wwid("eui.0025385b71b0e123") == canonical_wwid("20025385b71b0e123")
    assert canonical_wwid("t10.ATA     QEMU HARDDISK   ") == "t10.ATA QEMU HARDDISK"


def test_failure_reasons_name_the_kind() -> None:
    assert failure_reason(SshError("h: cannot connect: Name or service not known")).startswith("DNS: ")
    assert failure_reason(SshError("h: cannot connect: Connection refused")).startswith("refused: ")
    assert failure_reason(SshError("h: login refused (Permission denied)")).startswith("auth: ")
    assert failure_reason(HostKeyError("x", changed=True, fingerprint="f")).startswith("host key changed: ")
    assert failure_reason(HostKeyError("x", changed=False, fingerprint="f")).startswith("host key unknown: ")
    assert failure_reason(SshError("h: no sample within 2 s")).startswith("timeout: ")
    assert failure_reason(SshError("h: cannot connect: No route to host")).startswith("unreachable: ")
    assert failure_reason(SshError("h: the sampling channel closed")).startswith("lost link: ")


def test_a_lun_seen_from_two_nodes_is_one_group_with_the_cluster_total(
    netns_cluster: NetnsCluster, tmp_path: Path
) -> None:
    trees = {name: tmp_path / name for name in ("n1", "n2", "n3")}

    # n1 and n2 see the LUN through a multipath map (dm-0 on n1, dm-3 on n2) over two paths;
    # n3 has only a disk of its own
    def write(step: int) -> None:
        up = 1000.0 + step
        write_tree(
            trees["n1"],
            up,
            [
                stat_line(8, 16, "sdb", 500 * step, 0, 0, 0, 0, 0),
                stat_line(8, 32, "sdc", 500 * step, 0, 0, 0, 0, 0),
                stat_line(253, 0, "dm-0", 1000 * step, 2000 * step, 0, 0, 600 * step, 4000 * step),
            ],
            {"sdb": PATH, "sdc": PATH, "dm-0": SHARED},
        )
        write_tree(
            trees["n2"],
            up,
            [
                stat_line(8, 16, "sdb", 1500 * step, 0, 500 * step, 0, 0, 0),
                stat_line(8, 32, "sdc", 1500 * step, 0, 500 * step, 0, 0, 0),
                stat_line(253, 3, "dm-3", 3000 * step, 9000 * step, 1000 * step, 7000 * step, 950 * step, 12000 * step),
            ],
            {"sdb": PATH, "sdc": PATH, "dm-3": SHARED},
        )
        write_tree(
            trees["n3"],
            up,
            [stat_line(8, 0, "sda", 10 * step, 10 * step, 0, 0, 10 * step, 10 * step)],
            {"sda": {"device/wwid": "naa.5000c500aaaa0001"}},
        )

    def settled(states: dict[str, NodeState]) -> bool:
        groups = shared_luns(states)
        return all(not s.since_boot and s.interval_s == 1.0 for s in states.values()) and bool(
            groups and groups[0].total.r_s == 4000.0
        )

    write(1)
    nodes = load_cluster(netns_cluster.cluster_file).nodes
    with ClusterMonitor(nodes, 0.3, remote_roots={k: str(v) for k, v in trees.items()}) as monitor:
        wait_for(lambda: all(s.seq >= 1 for s in monitor.states().values()), 30, monitor.states)
        # one second of uptime later, at the same rates, until a sample reads one version of
        # both files (the sampler reads /proc/uptime, then /proc/diskstats: a write between the
        # two gives one sample of the new uptime over the old counters)
        for step in range(2, 10):
            seqs = {n: s.seq for n, s in monitor.states().items()}
            write(step)
            wait_for(lambda seqs=seqs: all(s.seq > seqs[n] for n, s in monitor.states().items()), 30)
            if settled(monitor.states()):
                break
        states = monitor.states()
    key = "wwid:naa." + WWID[1:]
    assert states["n1"].luns[key] == ("dm-0",) and states["n2"].luns[key] == ("dm-3",)  # the paths folded in
    assert key not in states["n3"].luns
    groups = shared_luns(states)
    assert [g.label for g in groups] == ["data1"]
    group = groups[0]
    assert [(m.node, m.row.device) for m in group.members] == [("n1", "data1"), ("n2", "data1")]
    total = group.total
    assert (total.r_s, total.w_s) == (4000.0, 1000.0)
    assert (total.rkb_s, total.wkb_s) == (16000.0, 4000.0)  # 4 KiB I/Os
    assert total.avgqu_sz == pytest.approx(4.0 + 12.0)  # weighted ms / interval ms, summed
    assert total.await_ms == pytest.approx((2000 + 9000 + 7000) / 5000)  # I/O time / I/Os, both nodes
    assert total.util_pct == pytest.approx(95.0)  # n2's 950 ms busy of 1000: the highest
    assert group.queue_limit == 2 * (32 + 32)  # each map is as deep as its two paths


def test_remote_iostat_reads_the_same_counters_as_local_iostat_in_the_namespace(netns_cluster: NetnsCluster) -> None:
    node = load_cluster(netns_cluster.cluster_file).node("n1")
    with RemoteDiskstats(ssh.connect(node.ssh_target())) as remote:
        before = read_snapshot(Path("/"))
        remote.refresh(full=True)
        after = read_snapshot(Path("/"))
        there = read_snapshot(remote.root)
        assert there.errors == [] and set(there.devices) == set(before.devices)
        for name, counters in there.devices.items():
            low, high = before.devices[name], after.devices[name]
            # read between the two local reads: every cumulative counter in between (not the
            # I/Os in flight, a gauge), equal where none moved
            cumulative = [f for f in counters._fields[3:] if f != "ios_pgr"]
            assert all(getattr(low, f) <= getattr(counters, f) <= getattr(high, f) for f in cumulative), (
                name,
                low,
                counters,
                high,
            )
            if low == high:
                assert counters == low, name
            assert read_queue_facts(name, remote.root) == read_queue_facts(name, Path("/")), name
        assert before.uptime_s <= there.uptime_s <= after.uptime_s + 0.01


# ---- faults -----------------------------------------------------------------------------------


def test_one_dead_node_among_live_ones_says_why_and_the_others_go_on(
    netns_cluster: NetnsCluster, tmp_path: Path
) -> None:
    cluster = load_cluster(netns_cluster.cluster_file)
    n1, n2, n3 = cluster.nodes
    netns_cluster.node("n2").stop_sshd()  # n2's machine is up, its sshd is not
    other_key = tmp_path / "not_authorised"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)], check=True)
    stranger = tmp_path / "empty_known_hosts"
    stranger.write_text("")
    nodes = [
        n1,
        n2,
        n3,
        Node("nodns", "no-such-node.invalid", user="root", identity=n1.identity, known_hosts=n1.known_hosts),
        Node("newkey", n3.host, "root", 22, n3.identity, known_hosts=(str(stranger),)),
        Node("nokey", n3.host, "root", 22, str(other_key), known_hosts=n3.known_hosts),
    ]
    with ClusterMonitor(nodes, 0.5, backoff_s=(5.0, 5.0)) as monitor:
        wait_for(lambda: monitor.state("n1").seq >= 3 and monitor.state("n3").seq >= 3, 30, monitor.states)
        states = monitor.states()
    assert states["n1"].state == states["n3"].state == OK and states["n1"].rows
    assert {name: (s.state, s.reason.partition(":")[0]) for name, s in states.items() if name not in ("n1", "n3")} == {
        "n2": (UNREACHABLE, "refused"),
        "nodns": (UNREACHABLE, "DNS"),
        "newkey": (UNREACHABLE, "host key unknown"),
        "nokey": (UNREACHABLE, "auth"),
    }
    fingerprint = netns_cluster.node("n3").sshd.host_fingerprint()  # type: ignore[union-attr]
    assert fingerprint in states["newkey"].reason
    assert all(s.rows == () and s.retry_at > 0 for n, s in states.items() if n not in ("n1", "n3"))


def test_invalid_utf8_in_one_nodes_output_leaves_the_others_sampling(
    netns_cluster: NetnsCluster, tmp_path: Path
) -> None:
    tree = tmp_path / "hostile"
    write_tree(tree, 100.0, [stat_line(8, 0, "sda", 1, 1, 1, 1, 1, 1)], {"sda": {}})
    # a device name, a sysfs fact and the uptime with bytes that are not UTF-8
    with open(tree / "proc" / "diskstats", "ab") as f:
        f.write(b"8 16 sd\xff\xfe 1 0 8 1 0 0 0 0 0 1 1\n\xc3\x28 garbage \x80\n")
    (tree / "sys" / "block" / "sda" / "queue").mkdir(parents=True)
    (tree / "sys" / "block" / "sda" / "queue" / "scheduler").write_bytes(b"[mq-\xffdeadline] none\n")
    os.mkdir(tree / "sys" / "block" / os.fsdecode(b"sd\xff\xfe"))
    nodes = load_cluster(netns_cluster.cluster_file).nodes[:2]
    with ClusterMonitor(nodes, 0.3, remote_roots={"n1": str(tree)}) as monitor:
        wait_for(lambda: monitor.state("n1").seq >= 3 and monitor.state("n2").seq >= 3, 30, monitor.states)
        hostile, live = monitor.state("n1"), monitor.state("n2")
    assert hostile.state == OK and live.state == OK and len(live.rows) > 1
    assert "sda" in {r.device for r in hostile.rows}
    assert any("diskstats" in e for e in hostile.errors)  # the bad lines named, not a crash


def test_a_cut_link_marks_the_node_lost_keeps_its_rows_and_resumes(netns_cluster: NetnsCluster) -> None:
    nodes = load_cluster(netns_cluster.cluster_file).nodes[:2]
    changes: list[tuple[str, str]] = []
    monitor = ClusterMonitor(nodes, 0.5, sample_timeout_s=2.0, sysfs_timeout_s=2.0, backoff_s=(0.5, 1.0))
    monitor.on_sample = lambda name: changes.append((name, monitor.state(name).state))
    with monitor:
        wait_for(lambda: monitor.state("n1").seq >= 2, 30, monitor.states)
        kept = monitor.state("n1").rows
        n2_before = monitor.state("n2").seq
        netns_cluster.node("n1").cut()
        cut_at = time.monotonic()
        try:
            wait_for(lambda: monitor.state("n1").state not in (OK,), 10, monitor.states)
            lost_after = time.monotonic() - cut_at
            lost = monitor.state("n1")
            assert lost.state == LOST and lost.reason.startswith("timeout: ") and lost.rows == kept
            wait_for(lambda: monitor.state("n2").seq >= n2_before + 4, 10, monitor.states)  # n2 goes on
            assert monitor.state("n2").state == OK
        finally:
            netns_cluster.node("n1").mend()
        seq_lost = monitor.state("n1").seq
        wait_for(lambda: monitor.state("n1").state == OK and monitor.state("n1").seq > seq_lost, 30, monitor.states)
    assert lost_after < 2.0 + 0.5 + 1.5  # the sample timeout, one interval, slack
    n1_states = [s for n, s in changes if n == "n1"]
    assert n1_states.index(LOST) < len(n1_states) - 1 - n1_states[::-1].index(OK)  # ok, lost, ..., ok again
    assert "reconnecting" in n1_states


def test_node_states_are_frozen_and_start_connecting() -> None:
    monitor = ClusterMonitor([Node("a", "10.0.0.1")], 1.0)
    state = monitor.state("a")
    assert isinstance(state, NodeState) and state.state == "connecting" and state.spec == "10.0.0.1"
    with pytest.raises(AttributeError):
        state.state = OK  # type: ignore[misc]
    with pytest.raises(ValueError, match="interval"):
        ClusterMonitor([], 0)
    with pytest.raises(ValueError, match="twice"):
        ClusterMonitor([Node("a", "h"), Node("a", "h2")])


def test_lun_identities_fold_a_maps_paths(tmp_path: Path) -> None:
    write_tree(
        tmp_path, 1.0, [], {"sdb": PATH, "sdc": PATH, "dm-0": SHARED, "sdd": {"device/wwid": "naa.5000c500aaaa0001"}}
    )
    (tmp_path / "sys" / "block" / "vg-root").mkdir()
    luns, labels = lun_identities(tmp_path)
    assert luns == {"wwid:naa." + WWID[1:]: ("dm-0",), "wwid:naa.5000c500aaaa0001": ("sdd",)}
    assert labels["wwid:naa." + WWID[1:]] == "data1"


def test_the_local_node_is_sampled_here_without_ssh() -> None:
    with ClusterMonitor([LOCAL], 0.25) as monitor:  # the 2nd sample may come at once (the phase)
        wait_for(lambda: monitor.state("local").seq >= 3, 10, monitor.states)
        state = monitor.state("local")
    here = set(read_snapshot(Path("/")).devices)
    assert state.state == OK and not state.since_boot and 0.1 < state.interval_s < 1.0
    assert {row.kernel_name or row.device for row in state.rows} <= here and len(state.rows) > 0
    assert state.facts  # the queue facts of the whole devices, read from /sys


def test_every_node_is_sampled_by_a_coroutine_on_the_ssh_loop_not_a_thread_of_its_own(
    netns_cluster: NetnsCluster,
) -> None:
    nodes = load_cluster(netns_cluster.cluster_file).nodes
    before = {t.ident for t in threading.enumerate()}
    callers: set[str] = set()
    monitor = ClusterMonitor(nodes, 0.2)
    monitor.on_sample = lambda name: callers.add(threading.current_thread().name)
    with monitor:
        wait_for(lambda: all(s.seq >= 5 for s in monitor.states().values()), 30, monitor.states)
        during = [t for t in threading.enumerate() if t.ident not in before]
        states = monitor.states()
    # every change published from the SSH loop's one thread; the only threads that may come are
    # that loop's (the first SSH use), the loop's default executor (asyncio_N: getaddrinfo for a
    # first connection; a pool of at most cpu+4, whatever the number of nodes) and the monitor's
    # one for the sysfs facts' files
    assert callers == {"racperf-ssh"}
    assert not [t.name for t in during if t.name.startswith("cluster-")]
    names = {t.name for t in during if not t.name.startswith("asyncio_")}
    assert names <= {"racperf-ssh", "racperf-sysfs_0"}, [t.name for t in during]
    assert len(during) - len(names) <= (os.cpu_count() or 1) + 4, [t.name for t in during]
    assert all(s.state == OK and not s.since_boot and 0.1 < s.interval_s < 0.5 for s in states.values()), states


def test_a_stop_right_after_the_start_ends_every_nodes_coroutine_at_once() -> None:
    # port 9 on 127.0.0.1: refused at once, so the node waits in its backoff (30 s) when stopped
    monitor = ClusterMonitor([Node("a", "127.0.0.1", port=9), Node("b", "127.0.0.1", port=9)], 0.5)
    started = time.monotonic()
    monitor.start()
    monitor.stop(timeout_s=5.0)
    assert time.monotonic() - started < 1.0
    monitor.start()
    wait_for(lambda: monitor.state("a").state == UNREACHABLE, 10, monitor.states)
    stopping = time.monotonic()
    monitor.stop(timeout_s=5.0)
    assert time.monotonic() - stopping < 1.0  # the backoff's wait ends with the stop
    assert monitor.state("a").reason.startswith("refused: ") and monitor.state("a").retry_at > time.time()
