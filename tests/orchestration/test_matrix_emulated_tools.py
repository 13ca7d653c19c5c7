"""racperf matrix with the emulated pair tools (oratcptest, netperf) on network-namespace
nodes: a file of its own beside test_matrix.py so that the two run on both workers (the
suite's --dist loadfile keeps a file on one)."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

import pytest

from racperf_tui.core.units import MIB_S_TO_MBIT_S
from tests.helpers import FAKES
from tests.helpers.cluster_helpers import isolated_home, racperf, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.matrix_runs import matrix
from tests.helpers.netns_helpers import NetnsCluster
from tests.helpers.sshd_helpers import set_node_path

pytestmark = [
    pytest.mark.usefixtures("isolated_home", "remote_runs"),
    pytest.mark.slow,  # pairs of seconds each, one at a time
]
needs_iperf3 = pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed")
#: the emulators' first three interval figures (tests/fakes/oratcptest SYNC_VALUES: MiB/s, ms;
#: tests/fakes/netperf INTERIM: TCP_STREAM Mbit/s, UDP_RR transactions/s; OMNI_UDP_RR: its
#: P50_LATENCY / P99_LATENCY, µs)
ORATCPTEST_SYNC = [(90.170, 11.090), (81.076, 12.334), (102.197, 9.785)]
NETPERF_STREAM = [11863.19, 10404.61, 13285.57]
NETPERF_UDP_RR = 26217.78
NETPERF_UDP_RR_P50_P99_US = (34, 135)


def emulators_on_the_nodes(cluster: NetnsCluster, directory: Path) -> None:
    """Each node's PATH: the emulators as java / netperf / netserver, then the system's."""
    directory.mkdir()
    for name, fake in (("java", "oratcptest"), ("netperf", "netperf"), ("netserver", "netserver")):
        (directory / name).symlink_to(FAKES / fake)
    for node in cluster.nodes:
        assert node.sshd is not None
        set_node_path(node.sshd, directory, "/usr/bin", "/bin")


@pytest.mark.timeout(300)  # a loaded machine: a minute a matrix of two nodes
def test_oratcptest_pairs_read_from_its_mib_s(netns_cluster_factory, tmp_path: Path) -> None:
    """Issue 16: the matrix read ``throughput_mbit_s``, which oratcptest never emits."""
    cluster = netns_cluster_factory(2)
    emulators_on_the_nodes(cluster, tmp_path / "node-bin")
    jar = tmp_path / "oratcptest.jar"
    jar.write_bytes(b"PK\x03\x04")
    rows = matrix(
        cluster, tmp_path / "data", "oratcptest", "--duration", "3", "--set", f"jar_path={jar}", "--server",
        f"jar_path={jar}", "--no-path-check",
    )  # fmt: skip
    assert sorted(rows) == [("n1", "n2"), ("n2", "n1")]
    median_mib_s = statistics.median(t for t, _ in ORATCPTEST_SYNC)  # 90.170 MiB/s
    for (_source, target), row in rows.items():
        assert row["address"] == cluster.node(target).interconnect
        assert row["samples"] == 3, row
        assert row["mbit_s"] == round(median_mib_s * MIB_S_TO_MBIT_S, 1) == 756.4, row
        assert row["latency_ms"] == statistics.median(lat for _, lat in ORATCPTEST_SYNC) == 11.09, row
        assert row["level"] == "bad" and row["verdict"].startswith("measured 756 Mbit/s: below 1 GbE"), row
        assert row["stalls"] == row["dips"] == []


@pytest.mark.timeout(300)  # a loaded machine: a minute a matrix of two nodes
def test_netperf_stream_and_rr_pairs(netns_cluster_factory, tmp_path: Path) -> None:
    cluster = netns_cluster_factory(2)
    emulators_on_the_nodes(cluster, tmp_path / "node-bin")
    rows = matrix(cluster, tmp_path / "stream", "netperf", "--duration", "3", "--no-path-check")
    assert sorted(rows) == [("n1", "n2"), ("n2", "n1")]
    for row in rows.values():
        assert row["samples"] == 3, row
        assert row["mbit_s"] == round(statistics.median(NETPERF_STREAM), 1) == 11863.2, row
        assert row["level"] == "good" and "meets 10 GbE guidance" in row["verdict"], row
        assert row["latency_ms"] is None
    # UDP_RR (in omni output) measures latency only: 1000 / the median transaction rate, no
    # throughput verdict, and netperf's own p50 / p99 of its round trips (issue 21)
    rows = matrix(cluster, tmp_path / "rr", "netperf", "--duration", "3", "--mode", "UDP_RR", "--no-path-check")
    for row in rows.values():
        assert row["samples"] == 3, row
        assert row["mbit_s"] is None
        assert row["latency_ms"] == pytest.approx(1000 / NETPERF_UDP_RR, abs=1e-4), row
        assert row["level"] == "warning" and row["verdict"].startswith("measures latency, not throughput"), row
        p50_us, p99_us = NETPERF_UDP_RR_P50_P99_US
        assert (row["latency_p50_ms"], row["latency_p99_ms"], row["round_trip_by"]) == (
            p50_us / 1000,
            p99_us / 1000,
            "netperf",
        ), row
    # UDP: netperf is on every node, so --udp without a tool is netperf's UDP_STREAM; its loss
    # is what the receiver never counted (the replayed 282154 of 338130 messages)
    rows = matrix(cluster, tmp_path / "udp", "--udp", "--duration", "2", "--no-path-check")
    for row in rows.values():
        assert row["mbit_s"] == 1893.4 and row["loss_pct"] == 16.555, row
        assert row["level"] == "bad" and "16.55 % of UDP requests LOST" in row["verdict"], row
