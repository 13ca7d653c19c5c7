"""Issue 21: "this host" as the server with a node as the client gave the client 127.0.0.1 and
"Connection refused". A node of a network namespace (its own sshd, reached on its public
address): the server here is given the address this host logs into the node from, iperf3's
pair runs across, and a port none was given for is one free here (pair_runs.pair_ports, the
Network tab's rule too)."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.remote.cluster import LOCAL, Node, load_cluster, server_address
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import pair_ports
from tests.helpers.cluster_helpers import isolated_home, racperf, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.netns_helpers import NetnsCluster, netns_cluster_factory  # noqa: F401 (fixture)


def test_a_port_given_to_one_end_is_the_servers_and_none_is_a_free_one() -> None:
    assert pair_ports({}, {"port": 5555})[0]["port"] == 5555
    assert pair_ports({"port": 6000}, {"port": 5555})[0]["port"] == 6000
    assert pair_ports({}, {})[0]["port"] == 0  # picked where the server runs, never a fixed 5201


def test_this_host_and_its_own_node_are_one_address() -> None:
    here = Node("rac1", "local", interconnect="192.168.10.1")
    rac2 = Node("rac2", "10.0.0.12", interconnect="192.168.10.2")
    assert server_address(here, rac2) == "192.168.10.1"
    assert server_address(rac2, here) == "192.168.10.2"
    assert server_address(LOCAL, LOCAL) == "127.0.0.1"


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_an_iperf3_server_here_and_its_client_on_a_node(
    netns_cluster_factory,  # noqa: F811
    tmp_path: Path,
    isolated_home: Path,  # noqa: F811
    remote_runs: Path,  # noqa: F811
) -> None:
    cluster: NetnsCluster = netns_cluster_factory(1)
    n1 = cluster.nodes[0]
    # n1 as the cluster file names it, this host in no entry of its own (the setup)
    node = load_cluster(cluster.cluster_file, required=True).node(n1.name)
    assert node.host == n1.address
    address = server_address(LOCAL, node)
    # the root namespace's end of the public bridge: where the node's sshd sees us from
    assert ipaddress.ip_address(address) in cluster.public_net and address != n1.address
    data = tmp_path / "data"
    done = racperf(
        "pair", "iperf3", "--client-node", "n1", "--cluster", str(cluster.cluster_file), "--data-dir", str(data),
        "--server", f"bind={address}", "--set", "duration_s=2", "--set", "interval_s=0.5",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    head = json.loads(done.stdout.splitlines()[0])
    with Store.open(data) as store:
        client = store.get_run(head["client_run_id"])
        server = store.get_run(head["server_run_id"])
        samples = [s.metrics for _seq, s in store.samples(client.id)]
    assert client.config["host"] == address and client.host == "n1"
    assert client.state is RunState.SUCCEEDED, client.message
    assert server.state is RunState.SUCCEEDED, server.message
    assert head["port"] and head["port"] != 5201 and server.config["port"] == head["port"]
    assert len(samples) >= 3 and all(m["throughput_mbit_s"] > 0 for m in samples[:-1]), samples
