"""A server on one node, its client on another (``racperf pair --server-node A --client-node
B``), each node a real OpenSSH sshd of its own; the client's default server address is the
server node's interconnect address (127.0.0.2 here: the nodes' SSH is 127.0.0.1 on two
ports, their interconnects 127.0.0.2 and 127.0.0.3)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.sshd_helpers import Sshd, _free_port, sshd_available, start_sshd

# real benchmarks over real sshd for seconds each: left out of make test-fast
pytestmark = [pytest.mark.usefixtures("isolated_home", "remote_runs"), pytest.mark.slow]


@pytest.fixture
def second_sshd(tmp_path: Path):
    ok, why = sshd_available()
    if not ok:
        pytest.skip(why)
    server = start_sshd(tmp_path / "sshd2")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def two_nodes(sshd: Sshd, second_sshd: Sshd, tmp_path: Path) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text(
        node_table("rac1", sshd, interconnect="127.0.0.2") + node_table("rac2", second_sshd, interconnect="127.0.0.3")
    )
    return path


def pair(tool: str, cluster: Path, data: Path, *args: str):
    done = racperf(
        "pair", tool, "--server-node", "rac1", "--client-node", "rac2", "--cluster", str(cluster),
        "--data-dir", str(data), *args,
    )  # fmt: skip
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return done, lines


def check_ends(data: Path, lines: list[dict], metric: str) -> list[float]:
    head = lines[0]
    assert head["type"] == "pair"
    results = {line["role"]: line for line in lines if line["type"] == "result"}
    assert results["client"]["state"] == "succeeded", results
    with Store.open(data) as store:
        server = store.get_run(head["server_run_id"])
        client = store.get_run(head["client_run_id"])
        values = [s.metrics[metric] for _seq, s in store.samples(client.id) if metric in s.metrics]
    assert (server.host, client.host) == ("rac1", "rac2")
    assert server.config["host_spec"]["name"] == "rac1" and client.config["host_spec"]["name"] == "rac2"
    assert client.config["host"] == "127.0.0.2"  # rac1's interconnect address, by default
    assert server.state.finished and client.state is RunState.SUCCEEDED
    return values


def test_iperf3_server_on_one_node_client_on_another(two_nodes: Path, tmp_path: Path) -> None:
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    data = tmp_path / "data"
    done, lines = pair("iperf3", two_nodes, data, "--server", f"port={_free_port()}", "--set", "duration_s=2")
    assert done.returncode == 0, done.stderr
    values = check_ends(data, lines, "throughput_mbit_s")
    assert len(values) >= 2 and min(values) > 100  # loopback: Gbit/s
    samples = [line for line in lines if line["type"] == "sample"]
    assert len(samples) == len(values)


def test_probe_server_on_one_node_client_on_another(two_nodes: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    done, lines = pair(
        "probe", two_nodes, data, "--server", "port=0", "--set", "duration_s=2", "--set", "interval_s=0.5"
    )
    assert done.returncode == 0, done.stderr
    values = check_ends(data, lines, "throughput_mib_s")
    assert len(values) >= 3 and min(values) > 1
    assert lines[0]["port"] > 0  # the port the server on rac1 picked and said


def test_a_dead_server_node_stops_the_pair_before_anything_runs(sshd: Sshd, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd, port=_free_port()) + node_table("rac2", sshd))
    done, lines = pair("iperf3", cluster, tmp_path / "data", "--set", "duration_s=1")
    assert done.returncode == 3 and lines == []
    assert done.stderr.strip() == (
        f"racperf pair iperf3: node rac1: {sshd.user}@127.0.0.1:{cluster.read_text().split('port = ')[1].split()[0]}: "
        "cannot connect: Connection refused"
    )
