"""Stalls and dips of a test's intervals (core/net_guidance.py): the rule, and the verdict that
says them with when and how long."""

from __future__ import annotations

import time

from racperf_tui.core.net_guidance import IntervalRate, interconnect_verdict, throughput_drops


def seconds(*rates: float, length_s: float = 1.0) -> list[IntervalRate]:
    return [IntervalRate(k * length_s, (k + 1) * length_s, rate) for k, rate in enumerate(rates)]


def test_the_issues_pair_a_stall_the_median_hid() -> None:
    """Issue 21: 8 s of 25 at 0 Mbit/s, the median 551 Mbit/s "succeeded ok"."""
    rates = [551.0] * 6 + [0.0] * 8 + [548.0] * 11
    drops = throughput_drops(seconds(*rates))
    assert [(d.kind, d.start_s, d.end_s, d.intervals, d.lowest_mbit_s) for d in drops] == [("stall", 6.0, 14.0, 8, 0.0)]
    verdict = interconnect_verdict(551.0, drops)
    assert verdict.level == "bad"
    assert verdict.text == (
        "measured 551 Mbit/s: below 1 GbE guidance, too slow for a RAC interconnect; "
        "but the link STALLED for 8.0 s at 6.0-14.0 s: 8 intervals at ~0 (0.00 Mbit/s at most)"
    )


def test_a_dip_is_a_warning_on_a_good_link_and_named_with_its_share() -> None:
    drops = throughput_drops(seconds(9400, 9410, 3000, 2800, 9390, 9405))
    assert [(d.kind, d.start_s, d.end_s, d.intervals) for d in drops] == [("dip", 2.0, 4.0, 2)]
    verdict = interconnect_verdict(9400.0, drops)
    assert verdict.level == "warning"
    assert verdict.text.endswith(
        "but the link dipped to 2.80 Gbit/s (30% of the median) for 2.0 s at 2.0-4.0 s: 2 intervals"
    )


def test_thresholds_five_and_fifty_percent_of_the_median() -> None:
    # median 1000: 50 is a stall (<= 5 %), 51 a dip, 499 a dip, 500 no drop
    drops = throughput_drops(seconds(1000, 1000, 1000, 50, 1000, 51, 1000, 499, 1000, 500, 1000))
    assert [(d.kind, d.start_s) for d in drops] == [("stall", 3.0), ("dip", 5.0), ("dip", 7.0)]


def test_a_steady_link_and_a_last_sliver_have_no_drop() -> None:
    assert throughput_drops(seconds(940, 938, 941, 939)) == []
    # iperf3's last 0.04 s interval at 0 is not judged
    sliver = [*seconds(940, 938, 941), IntervalRate(3.0, 3.04, 0.0)]
    assert throughput_drops(sliver) == []
    assert throughput_drops([]) == []


def test_a_whole_test_at_zero_is_one_stall() -> None:
    drops = throughput_drops(seconds(0, 0, 0))
    assert [(d.kind, d.length_s) for d in drops] == [("stall", 3.0)]


def test_the_clock_time_of_a_drop() -> None:
    started = time.mktime((2026, 12, 2, 2, 41, 10, 0, 0, -1))
    drops = throughput_drops(seconds(900, 900, 0, 0, 900))
    assert "at 2.0-4.0 s (02:41:12-02:41:14)" in interconnect_verdict(900.0, drops, started).text
    assert drops[0].to_json() == {
        "kind": "stall", "start_s": 2.0, "end_s": 4.0, "length_s": 2.0, "intervals": 2, "lowest_mbit_s": 0.0,
    }  # fmt: skip
