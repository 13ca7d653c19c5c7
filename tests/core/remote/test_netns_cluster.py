"""The namespace cluster fixture (tests/helpers/netns_helpers.py) is real: every node's own sshd
answers at its public address, verified by the shared known_hosts file, inside its own network
namespace; the nodes reach each other over the interconnect the root namespace cannot see; a
tbf-shaped interconnect link measures its rate with iperf3; nothing is left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.cluster import load_cluster
from tests.helpers.netns_helpers import (
    NetnsCluster,
    netns_available,
    start_netns_cluster,
    sweep_stale,
)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    yield
    ssh.close_all()


def _links() -> set[str]:
    out = subprocess.run(["ip", "-j", "link"], capture_output=True, text=True, check=True).stdout
    return {link["ifname"] for link in json.loads(out)}


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def test_every_nodes_sshd_answers_from_its_own_namespace(netns_cluster: NetnsCluster) -> None:
    cluster = load_cluster(netns_cluster.cluster_file)
    assert cluster.names() == ["n1", "n2", "n3"]
    for node, made in zip(cluster.nodes, netns_cluster.nodes):
        assert node.host == made.address and node.interconnect == made.interconnect and node.port == 22
        conn = ssh.connect(node.ssh_target())
        status, out, err = conn.run("ip -4 -o addr show; cat /proc/net/dev")
        assert status == 0, err
        text = out.decode()
        # the node's own interfaces and none of another node's: it is its namespace
        assert f"inet {made.address}/24" in text and f"inet {made.interconnect}/24" in text
        assert "eth0" not in text
        assert all(other.address not in text for other in netns_cluster.nodes if other is not made)


def test_the_interconnect_joins_the_nodes_only(netns_cluster: NetnsCluster) -> None:
    n1, n2 = netns_cluster.nodes[:2]
    conn = ssh.connect(load_cluster(netns_cluster.cluster_file).node("n1").ssh_target())
    # from n1 over the interconnect to n2's sshd
    status, out, _ = conn.run(f"exec 3<>/dev/tcp/{n2.interconnect}/22 2>/dev/null && head -c 7 <&3", timeout_s=10)
    if status != 0:  # no bash /dev/tcp: ask python in the node
        out = n1.run(["python3", "-c", _BANNER, n2.interconnect]).stdout.encode()
    assert out.startswith(b"SSH-2.0")
    # the root namespace has no route to the interconnect of its own: it is not on a bridge here
    routes = subprocess.run(["ip", "-4", "route"], capture_output=True, text=True, check=True).stdout
    assert str(netns_cluster.interconnect_net) not in routes and str(netns_cluster.public_net) in routes


_BANNER = "import socket,sys; print(socket.create_connection((sys.argv[1], 22), timeout=5).recv(7).decode())"


@pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed")
def test_a_tbf_shaped_link_measures_one_gigabit(netns_cluster: NetnsCluster) -> None:
    n1, n2 = netns_cluster.nodes[:2]
    n1.shape("1gbit", burst="256kb", latency="50ms")
    qdisc = n1.run(["tc", "qdisc", "show", "dev", n1.interconnect_dev]).stdout
    assert "tbf" in qdisc and "rate 1Gbit" in qdisc
    server = n2.popen(["iperf3", "-s", "-1", "-B", n2.interconnect], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # wait for the server to listen
            if n2.run(["ss", "-ltnH", "sport = :5201"]).stdout.strip():
                break
            time.sleep(0.05)
        done = n1.run(["iperf3", "-c", n2.interconnect, "-t", "4", "-O", "1", "-J"], timeout=60)
        assert done.returncode == 0, done.stdout[-500:] + done.stderr
        received = json.loads(done.stdout)["end"]["sum_received"]["bits_per_second"]
    finally:
        server.kill()
        server.wait()
    assert abs(received - 1e9) / 1e9 < 0.15, f"{received / 1e9:.3f} Gbit/s"
    n1.unshape()
    assert "tbf" not in n1.run(["tc", "qdisc", "show", "dev", n1.interconnect_dev]).stdout


def test_stop_removes_everything_it_made(tmp_path: Path) -> None:
    ok, why = netns_available()
    if not ok:
        pytest.skip(why)
    cluster = start_netns_cluster(tmp_path / "c", 2)
    made_ns = set(cluster.namespaces())
    made_links = {cluster.bridge, *(n.root_dev for n in cluster.nodes)}
    pids = [n.sshd.pid for n in cluster.nodes if n.sshd is not None]
    assert made_ns <= _namespaces() and made_links <= _links() and len(pids) == 2
    cluster.stop()
    assert not made_ns & _namespaces() and not made_links & _links()
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)
    cluster.stop()  # twice is harmless


def test_what_a_killed_run_left_is_swept(tmp_path: Path) -> None:
    ok, why = netns_available()
    if not ok:
        pytest.skip(why)
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that is gone: a test run killed with -9
    name = f"racperf-{dead.pid}-abcd-n1"
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "link", "add", "rpbabcd", "type", "bridge"], check=True)
    try:
        alive = start_netns_cluster(tmp_path / "c", 1)  # sweeps first; its own run is alive
        try:
            assert name not in _namespaces() and "rpbabcd" not in _links()
            assert set(alive.namespaces()) <= _namespaces()
            assert sweep_stale() == []
        finally:
            alive.stop()
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "link", "del", "rpbabcd"], capture_output=True)
