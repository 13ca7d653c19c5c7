"""What a tool's figures measure, in one unit each: a sample's throughput in Mbit/s (10^6 bit/s)
and latency in ms, a result's throughput in Mbit/s, read from the metrics the tool's description
declares (``MetricSpec.quantity``) in their declared units (core/units.py), never from a key's
name. oratcptest's samples say ``throughput_mib_s`` (MiB/s), iperf3's ``throughput_mbit_s``,
netperf's RR tests a transaction rate: each view that compares tools (the Network tab, the
interconnect matrix) reads them here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.tool import MetricSpec, ToolDescription
from racperf_tui.core.net_guidance import IntervalRate
from racperf_tui.core.units import MBIT_S_PER_RATE_UNIT, MS_PER_TIME_UNIT


def _declared(
    specs: Sequence[MetricSpec], figures: Mapping[str, Any], quantity: str, per_unit: Mapping[str, float]
) -> float | None:
    """The first figure a spec of ``quantity`` declares in a unit of ``per_unit``, converted."""
    for spec in specs:
        value = figures.get(spec.key)
        if spec.quantity == quantity and isinstance(value, (int, float)) and spec.unit in per_unit:
            return float(spec.shown(value)) * per_unit[spec.unit]
    return None


def throughput_mbit_s(description: ToolDescription, metrics: Mapping[str, Any]) -> float | None:
    """A sample's throughput in Mbit/s, from the metric the tool says measures it."""
    return _declared(description.metrics, metrics, "throughput", MBIT_S_PER_RATE_UNIT)


def latency_ms(description: ToolDescription, metrics: Mapping[str, Any]) -> float | None:
    """A sample's latency in ms: the tool's latency metric, else 1000 / its transaction rate
    (netperf's RR tests without a latency figure)."""
    latency = _declared(description.metrics, metrics, "latency", MS_PER_TIME_UNIT)
    if latency is not None:
        return latency
    rate = _declared(description.metrics, metrics, "transaction_rate", {spec.unit: 1.0 for spec in description.metrics})
    return 1000.0 / rate if rate else None


def result_throughput_mbit_s(description: ToolDescription, result: Mapping[str, Any] | None) -> float | None:
    """The final throughput (Mbit/s) of a client result: its first declared result figure that
    measures a throughput (iperf3's: what got through)."""
    if not result:
        return None
    return _declared(description.results, result, "throughput", MBIT_S_PER_RATE_UNIT)


def result_latency_ms(description: ToolDescription, result: Mapping[str, Any] | None, quantity: str) -> float | None:
    """A client result's latency percentile in ms: ``quantity`` "latency_p50" or
    "latency_p99", as the tool declares it (the probe's SYNC and UDP tests, netperf's omni
    output: an RR test's round trips, a STREAM test's send calls)."""
    if not result:
        return None
    return _declared(description.results, result, quantity, MS_PER_TIME_UNIT)


def result_transaction_rate(description: ToolDescription, result: Mapping[str, Any] | None) -> float | None:
    """A client result's rate of transactions (requests answered) a second, in the tool's
    declared unit: a request/response test's (netperf's RR tests), None for any other."""
    if not result:
        return None
    return _declared(description.results, result, "transaction_rate", {spec.unit: 1.0 for spec in description.results})


def result_loss_pct(description: ToolDescription, result: Mapping[str, Any] | None) -> float | None:
    """A client result's loss in % (the probe's UDP requests, netperf's UDP_STREAM datagrams)."""
    if not result:
        return None
    return _declared(description.results, result, "loss", {"%": 1.0})


def throughput_interval(description: ToolDescription, sample: Sample, previous_end_s: float) -> IntervalRate | None:
    """A sample that carries a throughput, as an interval of the test: its ``t`` is the end of
    its interval; its start is the tool's own (iperf3's ``interval_start_s``, netperf's
    ``interval_s`` back from the end), else ``previous_end_s`` (the previous interval's end, 0
    for the first). None for a sample without a throughput."""
    rate = throughput_mbit_s(description, sample.metrics)
    if rate is None:
        return None
    start = sample.extra.get("interval_start_s")
    if not isinstance(start, (int, float)):
        start = sample.t - sample.interval_s if sample.interval_s is not None else previous_end_s
    return IntervalRate(float(start), sample.t, rate)


def throughput_intervals(description: ToolDescription, samples: Iterable[Sample]) -> list[IntervalRate]:
    """The samples that carry a throughput, as intervals of the test (:func:`throughput_interval`)."""
    intervals: list[IntervalRate] = []
    for sample in samples:
        interval = throughput_interval(description, sample, intervals[-1].end_s if intervals else 0.0)
        if interval is not None:
            intervals.append(interval)
    return intervals
