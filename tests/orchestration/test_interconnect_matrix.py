"""A request/response pair's own round trips in the matrix (issue 21): netperf's TCP_RR and
UDP_RR report the p50 / p99 of their transactions in omni output; path_figures takes them,
through the quantities the tool declares, as the probe's UDP requests' are taken, and says
whose they are. Real netperf 2.7.1 outputs (tests/fixtures/netperf), parsed by the tool."""

from __future__ import annotations

import pytest

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.net_guidance import MtuFinding, Verdict
from racperf_tui.orchestration.interconnect_matrix import PairMeasurement, judged, path_figures, with_path
from racperf_tui.tools import tool_description
from racperf_tui.tools.netperf.result import parse_output
from tests.helpers import FIXTURES

NETPERF = tool_description("netperf")
PROBE = tool_description("probe")


def netperf_result(name: str) -> dict:
    return parse_output((FIXTURES / "netperf" / name).read_text())


@pytest.mark.parametrize("name", ["netperf_tcp_rr_omni_k.txt", "netperf_tcp_rr_omni_o.txt"])
def test_an_rr_tests_own_percentiles_are_its_round_trip(name: str) -> None:
    result = netperf_result(name)
    said = path_figures(NETPERF, result)
    # P50_LATENCY=113 / P99_LATENCY=457 (-k), 111 / 440 (-o): whole microseconds
    expected = (0.113, 0.457) if name.endswith("_k.txt") else (0.111, 0.440)
    assert (said["latency_p50_ms"], said["latency_p99_ms"]) == pytest.approx(expected, abs=1e-9)
    assert said["round_trip_by"] == "netperf"
    assert said["mtu"] is None and said["loss_pct"] is None


@pytest.mark.parametrize(
    "name",
    [
        "netperf_tcp_stream_omni_k.txt",  # P99_LATENCY=83: the send calls', no round trip
        "netperf_udp_rr_P1.txt",  # classic output: a rate, no percentiles
        "netperf_tcp_rr_P1.txt",
    ],
)
def test_no_round_trip_without_an_rr_tests_percentiles(name: str) -> None:
    said = path_figures(NETPERF, netperf_result(name))
    assert said["latency_p50_ms"] is None and said["latency_p99_ms"] is None and said["round_trip_by"] is None


def test_the_probes_sync_percentiles_are_still_no_round_trip() -> None:
    # a SYNC test's 1 MiB messages (no path checked, no transaction rate)
    sync = {"avg_throughput_mib_s": 100.0, "latency_p50_ms": 9.0, "latency_p99_ms": 12.0}
    assert path_figures(PROBE, sync)["latency_p50_ms"] is None
    udp = {**sync, "mtu_local": 1500, "mtu_remote": 1500, "df_probe_bytes": 1472, "df_probe_ok": True}
    said = path_figures(PROBE, udp)
    assert (said["latency_p50_ms"], said["latency_p99_ms"], said["round_trip_by"]) == (9.0, 12.0, None)


def rr_pair() -> PairMeasurement:
    """A TCP_RR pair judged as the matrix judges it: its interim rates, its omni result."""
    result = netperf_result("netperf_tcp_rr_omni_k.txt")
    samples = [Sample(float(t), {"trans_per_s": rate}, {}) for t, rate in ((1, 7655.83), (2, 8188.18), (3, 8789.02))]
    base = PairMeasurement("n1", "n2", "192.168.0.2", client_run_id=7)
    return judged(base, NETPERF, RunState.SUCCEEDED, None, 0.0, samples, result)


def test_the_matrix_says_they_are_netperfs_own() -> None:
    pair = rr_pair()
    assert pair.latency_ms == pytest.approx(1000 / 8188.18)
    assert pair.line() == (
        "n1 -> n2 (192.168.0.2): latency 0.122 ms, netperf's own round trip p50 0.113 / p99 0.457 ms, "
        "warning: measures latency, not throughput: no interconnect throughput verdict"
    )
    assert pair.cell() == "0.122 ms 0.11/0.46 ms netperf"
    said = pair.to_json()
    assert (said["latency_p50_ms"], said["latency_p99_ms"], said["round_trip_by"]) == (0.113, 0.457, "netperf")


def test_its_path_check_adds_loss_and_mtu_and_leaves_its_round_trip() -> None:
    check = PairMeasurement(
        "n1", "n2", "192.168.0.2", latency_ms=0.2, verdict=Verdict("warning", "x"), latency_p50_ms=0.214,
        latency_p99_ms=0.481, loss_pct=0.0, mtu=MtuFinding(9000, 9000, 8972, True, "got through"),
        client_run_id=8,
    )  # fmt: skip
    pair = with_path(rr_pair(), check)
    assert (pair.latency_p50_ms, pair.latency_p99_ms, pair.round_trip_by) == (0.113, 0.457, "netperf")
    assert pair.loss_pct == 0.0 and pair.mtu == check.mtu and pair.path_client_run_id == 8
    assert "netperf's own round trip p50 0.113 / p99 0.457 ms, lost 0.00 %, MTU 9000 ok" in pair.line()
    # a pair without round trips of its own takes the check's 8 KiB requests'
    stream = PairMeasurement("n1", "n2", "192.168.0.2", mbit_s=9400.0, verdict=Verdict("good", "meets 10 GbE"))
    checked = with_path(stream, check)
    assert (checked.latency_p50_ms, checked.latency_p99_ms, checked.round_trip_by) == (0.214, 0.481, None)
    assert "8 KiB round trip p50 0.214 / p99 0.481 ms" in checked.line()
