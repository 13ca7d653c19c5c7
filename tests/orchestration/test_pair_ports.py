"""Port 0 for a pair's server that cannot pick a port and say it (iperf3, netperf, oratcptest):
a free port picked on the server's node (issue 10), from the node's own socket tables, as its
kernel would pick (core/ports.free_port_on), the same for ``racperf pair`` and the Network tab
(orchestration/pair_runs.launch_pair). The tables' reading on made-up answers; the node a real
OpenSSH sshd; a headless iperf3 pair with its server on the node given port 0."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from racperf_tui.core.ports import can_bind, free_port_from_tables, free_port_on
from racperf_tui.core.remote.ssh_host import SshHost
from racperf_tui.core.remote.ssh_target import SshTarget
from racperf_tui.core.store import Store
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.sshd_helpers import Sshd

TCP_HEADING = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"


def tables(*, port_range: str = "40000 40003", reserved: str = "", tcp=(), tcp6=(), udp=()) -> str:
    """A node's answer: its range, reserved ports, and a socket table line per local port."""

    def table(name: str, ports) -> str:  # type: ignore[no-untyped-def]
        rows = [f"   {i}: 0100007F:{port:04X} 00000000:0000 0A 00000000:00000000" for i, port in enumerate(ports)]
        return "\n".join([f"== {name}", TCP_HEADING, *rows])

    return "\n".join(
        [
            f"== /proc/sys/net/ipv4/ip_local_port_range\n{port_range}",
            f"== /proc/sys/net/ipv4/ip_local_reserved_ports\n{reserved}",
            table("/proc/net/tcp", tcp),
            table("/proc/net/tcp6", tcp6),
            table("/proc/net/udp", udp),
        ]
    )


def test_the_pick_avoids_every_socket_and_reserved_port_of_the_node() -> None:
    # 40000-40003: 40000 listened on (tcp), 40001 bound in tcp6, 40002 reserved, 40003 UDP
    answer = tables(reserved="40002,6100-6200", tcp=[40000], tcp6=[40001], udp=[40003])
    with pytest.raises(ValueError, match="no port of the range 40000-40003 is free"):
        free_port_from_tables(answer)
    answer = tables(port_range="40000 40004", reserved="40002,6100-6200", tcp=[40000], tcp6=[40001], udp=[40003])
    assert {free_port_from_tables(answer, random.Random(seed)) for seed in range(20)} == {40004}
    # the database's ports are never picked, even in the range
    with pytest.raises(ValueError, match="no port of the range 1521-1522"):
        free_port_from_tables(tables(port_range="1521 1522"))
    # a range the node does not give: Linux's default
    picks = {free_port_from_tables(tables(port_range="junk"), random.Random(seed)) for seed in range(50)}
    assert min(picks) >= 32768 and max(picks) <= 60999 and len(picks) > 40
    # no socket table: the ports in use there are unknown, nothing is guessed
    with pytest.raises(ValueError, match="/proc/net/tcp cannot be read"):
        free_port_from_tables("== /proc/sys/net/ipv4/ip_local_port_range\n40000 40010\n")


@pytest.mark.usefixtures("isolated_home")
def test_a_port_free_on_the_node_is_read_from_its_tables(sshd: Sshd) -> None:
    target = SshTarget(sshd.host, sshd.user, sshd.port, str(sshd.user_key), (str(sshd.known_hosts),))
    host = SshHost(target, name="rac1")
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    picks = [free_port_on(host) for _ in range(3)]
    # the node is this machine: what it picked is in its range and free here
    assert all(low <= port <= high for port in picks)
    assert all(can_bind(port) for port in picks)


@pytest.mark.slow
@pytest.mark.usefixtures("isolated_home", "remote_runs")
def test_racperf_pair_gives_a_server_on_a_node_a_port_free_there(sshd: Sshd, tmp_path: Path) -> None:
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    data = tmp_path / "data"
    done = racperf(
        "pair", "iperf3", "--server-node", "rac1", "--cluster", str(cluster), "--data-dir", str(data),
        "--server", "port=0", "--set", "duration_s=1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    head = json.loads(done.stdout.splitlines()[0])
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    assert low <= head["port"] <= high
    with Store.open(data) as store:
        server, client = store.get_run(head["server_run_id"]), store.get_run(head["client_run_id"])
        samples = [s.metrics["throughput_mbit_s"] for _seq, s in store.samples(client.id)]
    assert server.host == "rac1" and server.config["port"] == client.config["port"] == head["port"]
    assert samples and min(samples) > 100
