"""The path's loss and MTU check in the interconnect verdict (net_guidance.path_verdict), and
what the matrix says of them (its line, its cell, its JSON)."""

from __future__ import annotations

from racperf_tui.core.net_guidance import MtuFinding, Verdict, path_verdict
from racperf_tui.core.remote.cluster import Node
from racperf_tui.orchestration.interconnect_matrix import PairMeasurement, matrix_table

FAST = Verdict("good", "measured 9.40 Gbit/s: meets 10 GbE guidance")
JUMBO_LOST = MtuFinding(
    9000, 1500, 8972, False, "a 8972-byte don't-fragment datagram (MTU 9000) was never answered in 3 tries"
)


def test_no_loss_and_a_clean_mtu_leave_the_verdict_alone() -> None:
    clean = MtuFinding(9000, 9000, 8972, True, "got through")
    assert path_verdict(FAST, 0.0, clean) == FAST
    assert path_verdict(FAST, 0.09, None) == FAST  # under LOSS_WARNING_PCT


def test_loss_warns_from_a_tenth_of_a_percent_and_is_bad_from_one() -> None:
    assert path_verdict(FAST, 0.1) == Verdict("warning", f"{FAST.text}; 0.10 % of UDP requests LOST")
    assert path_verdict(FAST, 1.0).level == "bad"


def test_a_dropped_jumbo_frame_is_bad_and_a_mismatch_that_got_through_a_warning() -> None:
    assert path_verdict(FAST, 0.0, JUMBO_LOST) == Verdict("bad", f"{FAST.text}; {JUMBO_LOST.note}")
    through = MtuFinding(1500, 9000, 1472, True, "got through; MTU MISMATCH")
    assert through.mismatch and path_verdict(FAST, None, through).level == "warning"


def test_an_mtu_finding_from_a_result_and_back_to_json() -> None:
    result = {"mtu_local": 9000, "mtu_remote": 1500, "df_probe_bytes": 8972, "df_probe_ok": False, "mtu_note": "x"}
    found = MtuFinding.from_result(result)
    assert found == MtuFinding(9000, 1500, 8972, False, "x")
    assert found.to_json() == {
        "local": 9000, "remote": 1500, "probe_bytes": 8972, "arrived": False, "mismatch": True, "note": "x",
    }  # fmt: skip
    assert MtuFinding.from_result({"messages": 3}) is None and MtuFinding.from_result(None) is None


def test_the_matrix_says_the_round_trip_the_loss_and_the_mtu() -> None:
    nodes = [Node("n1", "10.0.0.1", interconnect="192.168.0.1"), Node("n2", "10.0.0.2", interconnect="192.168.0.2")]
    jumbo = PairMeasurement(
        "n1", "n2", "192.168.0.2", mbit_s=0.0, verdict=path_verdict(Verdict("bad", "measured 0 Mbit/s"), 100.0,
        JUMBO_LOST), latency_p50_ms=None, latency_p99_ms=None, loss_pct=100.0, mtu=JUMBO_LOST,
    )  # fmt: skip
    steady = PairMeasurement(
        "n2", "n1", "192.168.0.1", mbit_s=940.0, verdict=Verdict("warning", "meets 1 GbE"), latency_p50_ms=0.214,
        latency_p99_ms=0.481, loss_pct=0.0, mtu=MtuFinding(1500, 1500, 1472, True, "got through"),
    )  # fmt: skip
    assert jumbo.line() == (
        "n1 -> n2 (192.168.0.2): 0.00 Mbit/s, lost 100.00 %, MTU 9000 DROPPED, bad: measured 0 Mbit/s; 100.00 % of "
        f"UDP requests LOST; {JUMBO_LOST.note}"
    )
    assert steady.line() == (
        "n2 -> n1 (192.168.0.1): 940 Mbit/s, 8 KiB round trip p50 0.214 / p99 0.481 ms, lost 0.00 %, MTU 1500 ok, "
        "warning: meets 1 GbE"
    )
    assert matrix_table(nodes, [jumbo, steady]).splitlines() == [
        "from \\ to  n1                       n2",
        "n1         -                        0.00 Mbit/s LOSS 100.0% MTU!",
        "n2         940 Mbit/s 0.21/0.48 ms  -",
    ]
    said = steady.to_json()
    assert (said["latency_p50_ms"], said["latency_p99_ms"], said["loss_pct"]) == (0.214, 0.481, 0.0)
    assert said["mtu"]["arrived"] is True and said["path_error"] is None
