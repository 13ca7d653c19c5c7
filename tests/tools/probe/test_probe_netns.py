"""The probe's UDP mode across network namespaces (tests/helpers/netns_helpers.py): the MTU
check against a real mismatch (``ip link set mtu 9000`` on one node's interconnect, 1500 on
the other's) and the loss of a real lossy link (tbf with a small queue: this kernel has no
netem), the figures asserted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from racperf_tui.tools import probe
from racperf_tui.tools.probe import parse_output
from tests.helpers.netns_helpers import NetnsCluster, NetnsNode


def udp_test(server: NetnsNode, client: NetnsNode, *options: str) -> tuple[dict, dict]:
    """A probe server on ``server``'s interconnect address, the UDP client on ``client``:
    (the client's result, the server's connection) as the parsers read them."""
    started = server.popen(
        ["python3", "-u", str(probe.PROBE_SERVER_PATH), "--bind", server.interconnect, "--port", "0", "--once"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert started.stdout is not None
        ready = probe.READY_PATTERN.search(started.stdout.readline())
        assert ready, "the probe server did not start"
        done = client.run(
            ["python3", "-u", str(probe.PROBE_CLIENT_PATH), server.interconnect, "--port", ready.group("port"),
             "--mode", "UDP", "--length", "8K", *options],
        )  # fmt: skip
        served_text = started.communicate(timeout=20)[0]
    finally:
        if started.poll() is None:
            started.kill()
            started.wait()
    served = parse_output(ready.string + served_text)["connections"]
    return parse_output(done.stdout), served[0] if served else {}


@pytest.mark.timeout(120)
def test_an_mtu_mismatch_is_named_and_jumbo_requests_are_lost(netns_cluster_factory, tmp_path: Path) -> None:
    """n1 at MTU 9000, n2 at 1500 (its switch port too): n1's 8 KiB datagrams leave whole and
    die at n2's port (every request lost, the don't-fragment probe too), n2's are fragmented
    to 1500 and arrive; both ends name the mismatch."""
    cluster: NetnsCluster = netns_cluster_factory(2, with_sshd=False)
    n1, n2 = cluster.nodes
    n1.set_interconnect_mtu(9000)
    jumbo, _ = udp_test(n2, n1, "--duration", "2", "--interval", "1")
    assert jumbo["mtu_local"] == 9000 and jumbo["mtu_remote"] == 1500, jumbo
    assert jumbo["df_probe_bytes"] == 8972 and jumbo["df_probe_ok"] is False, jumbo
    assert jumbo["mtu_note"] == (
        "a 8972-byte don't-fragment datagram (MTU 9000) was never answered in 3 tries: the path drops 9000-byte "
        "frames; MTU MISMATCH: 9000 here, 1500 at the server: frames larger than 1500 bytes are dropped on the "
        "way to the smaller end"
    )
    assert jumbo["messages"] == 0 and jumbo["datagrams_lost"] > 0 and jumbo["loss_pct"] == 100.0, jumbo
    assert all(s["loss_pct"] == 100.0 for s in jumbo["samples"][:-1]), jumbo["samples"]
    small, served = udp_test(n1, n2, "--duration", "2", "--interval", "1")
    assert small["mtu_local"] == 1500 and small["mtu_remote"] == 9000, small
    assert small["df_probe_bytes"] == 1472 and small["df_probe_ok"] is True, small
    assert "got through; MTU MISMATCH: 1500 here, 9000 at the server" in small["mtu_note"], small
    assert small["loss_pct"] == 0.0 and small["messages"] > 100, small
    assert 0 < small["latency_p50_ms"] <= small["latency_p99_ms"], small
    # the server answered every request counted, and perhaps the one in flight at the end
    assert small["messages"] <= served["messages"] <= small["messages"] + 1, (served, small)


@pytest.mark.timeout(120)
def test_a_lossy_link_loses_what_the_queue_cannot_hold(netns_cluster_factory, tmp_path: Path) -> None:
    """n1's egress at 20 Mbit/s with 16 KiB of queue: 16 requests of 8 KiB in flight overflow
    it; what is lost never reached the server (the answers come back on an unshaped link)."""
    cluster: NetnsCluster = netns_cluster_factory(2, with_sshd=False)
    n1, n2 = cluster.nodes
    n1.shape("20mbit", burst="16kb", limit="16kb")
    lossy, served = udp_test(n2, n1, "--duration", "2", "--interval", "1", "--num-conn", "16")
    assert lossy["error"] is None, lossy
    lost, answered = lossy["datagrams_lost"], lossy["messages"]
    assert lost > 0 and answered > 0, lossy
    assert lossy["loss_pct"] == pytest.approx(100.0 * lost / (lost + answered), abs=1e-3)
    assert 5.0 < lossy["loss_pct"] < 95.0, lossy
    assert any(s["loss_pct"] > 5.0 for s in lossy["samples"]), lossy["samples"]
    # 20 Mbit/s is 2.4 MiB/s at most; what was answered is under it
    assert lossy["avg_throughput_mib_s"] < 20e6 / 8 / 2**20 * 1.05, lossy
    # at most the 16 in flight at the end reached the server unanswered
    assert answered <= served["messages"] <= answered + 16, (served, lossy)
    assert lossy["df_probe_ok"] is True and lossy["mtu_local"] == lossy["mtu_remote"] == 1500
