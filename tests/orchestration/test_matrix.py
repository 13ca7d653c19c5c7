"""``racperf matrix``: every node to every other over the interconnect, in network namespaces
each with its own sshd (tests/netns_helpers.py). n1's interconnect egress is shaped to
1 Gbit/s, n2's and n3's to 300 Mbit/s, so each pair's figure and verdict are known: what n1
sends meets 1 GbE guidance, what n2 and n3 send is below it."""

from __future__ import annotations

import json
import shutil

import pytest

from racperf_tui.core.store import Store
from tests.helpers.cluster_helpers import isolated_home, racperf, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.netns_helpers import NetnsCluster

pytestmark = [
    pytest.mark.usefixtures("isolated_home", "remote_runs"),
    pytest.mark.slow,  # six shaped iperf3 pairs: a minute or more
    pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed"),
]


@pytest.mark.timeout(300)  # racperf's own limit below: a loaded machine takes 2 min for the six pairs
def test_every_pair_measured_with_its_verdict(netns_cluster: NetnsCluster, tmp_path) -> None:
    n1, n2, n3 = netns_cluster.nodes
    n1.shape("1gbit", burst="256kb", latency="50ms")
    n2.shape("300mbit", burst="128kb", latency="50ms")
    n3.shape("300mbit", burst="128kb", latency="50ms")
    data = tmp_path / "data"
    # three seconds a pair: two with half-second intervals measured 815 Mbit/s on the 1 Gbit
    # link of a machine running three test workers (TCP's ramp is a larger share of a short run)
    done = racperf(
        "matrix", "iperf3", "--cluster", str(netns_cluster.cluster_file), "--duration", "3", "--json",
        "--data-dir", str(data), timeout_s=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {(row["source"], row["target"]): row for row in map(json.loads, done.stdout.splitlines())}
    assert sorted(rows) == [("n1", "n2"), ("n1", "n3"), ("n2", "n1"), ("n2", "n3"), ("n3", "n1"), ("n3", "n2")]
    for (source, target), row in rows.items():
        assert row["address"] == netns_cluster.node(target).interconnect
        assert row["samples"] >= 3
        if source == "n1":
            assert 850 < row["mbit_s"] < 1050, row
            assert row["level"] == "warning" and "meets 1 GbE guidance" in row["verdict"]
        else:
            assert 250 < row["mbit_s"] < 320, row
            assert row["level"] == "bad" and "below 1 GbE guidance" in row["verdict"]
    with Store.open(data) as store:
        runs = store.list_runs()
    assert len(runs) == 12  # a server and a client run per pair, recorded like any
    hosts = {(r.host, r.config.get("role")) for r in runs}
    assert hosts == {(n, role) for n in ("n1", "n2", "n3") for role in ("server", "client")}


def test_a_dead_node_is_a_failed_pair_and_the_others_go_on(netns_cluster: NetnsCluster, tmp_path) -> None:
    netns_cluster.node("n3").stop_sshd()
    done = racperf(
        "matrix", "--cluster", str(netns_cluster.cluster_file), "--duration", "1", "--data-dir",
        str(tmp_path / "data"), timeout_s=300,
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    pairs = [line for line in lines if " -> " in line]
    assert len(pairs) == 6
    for line in pairs:
        if "n3" in line.split(":")[0]:
            assert "not measured: node n3:" in line and "Connection refused" in line, line
        else:
            assert "Gbit/s" in line or "Mbit/s" in line, line
    table = lines[lines.index("") + 1 :]
    assert table[0].split() == ["from", "\\", "to", "n1", "n2", "n3"]
    assert table[3].split()[1:] == ["failed", "failed", "-"]
