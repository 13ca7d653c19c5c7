"""A figure of any pair tool, read from the metrics its description declares as a throughput or
a latency, in their declared units (no key is named by a view)."""

from __future__ import annotations

import pytest

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.quantities import (
    latency_ms,
    result_throughput_mbit_s,
    throughput_intervals,
    throughput_mbit_s,
)
from racperf_tui.core.net_guidance import IntervalRate
from racperf_tui.core.units import MBIT_S_PER_RATE_UNIT, MIB_S_TO_MBIT_S
from racperf_tui.tools import tool_description


def test_units_of_every_tool_become_mbit_s_and_ms() -> None:
    probe, iperf3, oratcptest, netperf = (tool_description(t) for t in ("probe", "iperf3", "oratcptest", "netperf"))
    assert throughput_mbit_s(oratcptest, {"throughput_mib_s": 100.0}) == pytest.approx(838.8608)
    assert throughput_mbit_s(oratcptest, {"throughput_mbit_s": 100.0}) is None  # oratcptest never says it
    assert throughput_mbit_s(probe, {"throughput_mbit_s": 940.0, "throughput_mib_s": 1}) == 940.0
    assert throughput_mbit_s(probe, {"throughput_mib_s": 1.0}) == pytest.approx(8.388608)
    assert throughput_mbit_s(netperf, {"throughput_mbit_s": 11863.19}) == 11863.19
    assert throughput_mbit_s(netperf, {"trans_per_s": 8064.58}) is None  # an RR test: no throughput
    assert latency_ms(netperf, {"trans_per_s": 20000.0}) == pytest.approx(0.05)
    assert latency_ms(netperf, {"rt_latency_us": 50.0, "trans_per_s": 1.0}) == pytest.approx(0.05)
    assert latency_ms(oratcptest, {"throughput_mib_s": 90.17, "latency_ms": 11.09}) == 11.09
    assert latency_ms(probe, {"throughput_mbit_s": 1.0}) is None
    # iperf3's jitter is in ms but measures no latency
    assert latency_ms(iperf3, {"jitter_ms": 0.2}) is None
    assert throughput_mbit_s(iperf3, {"throughput_mbit_s": "941"}) is None  # text is no figure
    assert result_throughput_mbit_s(iperf3, {"received_mbit_s": 9400.0, "sent_mbit_s": 9500.0}) == 9400.0
    assert result_throughput_mbit_s(probe, {"avg_throughput_mib_s": 10.0}) == pytest.approx(83.88608)
    assert result_throughput_mbit_s(oratcptest, {"avg_throughput_mib_s": 10.0}) == pytest.approx(83.88608)
    assert result_throughput_mbit_s(netperf, {"throughput_mbit_s": 941.5}) == 941.5
    assert result_throughput_mbit_s(probe, None) is None


def test_every_declared_throughput_unit_is_one_the_table_converts() -> None:
    """A tool declaring a rate unit the table lacks would drop out of the matrix silently."""
    for name in ("probe", "iperf3", "oratcptest", "netperf"):
        description = tool_description(name)
        for spec in (*description.metrics, *description.results):
            if spec.quantity == "throughput":
                assert spec.unit in MBIT_S_PER_RATE_UNIT, (name, spec.key, spec.unit)
    assert MBIT_S_PER_RATE_UNIT["MiB/s"] == MIB_S_TO_MBIT_S == 8.388608


def test_samples_become_intervals_of_the_test() -> None:
    iperf3, probe, netperf = (tool_description(t) for t in ("iperf3", "probe", "netperf"))
    samples = [
        Sample(1.0, {"throughput_mbit_s": 940.0}, {"interval_start_s": 0.0}),
        Sample(2.0, {"throughput_mbit_s": 0.0}, {"interval_start_s": 1.0}),
        Sample(2.5, {"retransmits": 3}),  # no throughput: no interval
    ]
    assert throughput_intervals(iperf3, samples) == [IntervalRate(0.0, 1.0, 940.0), IntervalRate(1.0, 2.0, 0.0)]
    # the probe's lines carry no start: the previous end
    probe_samples = [Sample(0.5, {"throughput_mib_s": 100.0}), Sample(1.0, {"throughput_mib_s": 50.0})]
    assert throughput_intervals(probe, probe_samples) == [
        IntervalRate(0.0, 0.5, pytest.approx(838.8608)),
        IntervalRate(0.5, 1.0, pytest.approx(419.4304)),
    ]
    # netperf says how long its interim interval was
    netperf_samples = [Sample(2.0, {"throughput_mbit_s": 11863.19}, {"interval_s": 1.004})]
    assert throughput_intervals(netperf, netperf_samples) == [IntervalRate(pytest.approx(0.996), 2.0, 11863.19)]
