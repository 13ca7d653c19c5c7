"""netperf's live stream: one Sample per interim result (``-D``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.tools.netperf.result import (
    INTERIM_CSV_RE,
    INTERIM_HUMAN_RE,
    KEYVAL_RE,
    interim_figures,
    line_problem,
    sample_from_interim,
)


class NetperfStreamParser:
    """netperf output lines -> one Sample per interim result (-D), in any of the three forms.

    ``t`` is netperf's own clock: the interim's end time minus the start of the first interval.
    Metrics: ``trans_per_s`` (+ ``rt_latency_us`` = 10^6 / rate) for RR, ``throughput_mbit_s``
    for STREAM.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self._origin: float | None = None
        self._kv: dict[int, dict[str, str]] = {}

    def _emit(self, value: float, units: str, interval: float, ending: float) -> list[Sample]:
        sample, self._origin = sample_from_interim(value, units, interval, ending, self._origin)
        metrics: dict[str, float] = {}
        if "trans_per_s" in sample:
            metrics["trans_per_s"] = sample["trans_per_s"]
            if value > 0:
                metrics["rt_latency_us"] = round(1e6 / value, 3)
        elif "throughput_mbit_s" in sample:
            metrics["throughput_mbit_s"] = sample["throughput_mbit_s"]
        else:
            metrics["value"] = value
        return [
            Sample(
                t=sample["t"], metrics=metrics, extra={"interval_s": interval, "ending_epoch": ending, "units": units}
            )
        ]

    def feed(self, line: str) -> list[Sample]:
        """One output line; a Sample when it completes an interim result."""
        if line_problem(line):
            return []
        stripped = line.strip()
        match = INTERIM_HUMAN_RE.match(stripped) or INTERIM_CSV_RE.match(stripped)
        if match:
            figures = interim_figures(match["value"], match["interval"], match["ending"])
            return [] if figures is None else self._emit(figures[0], match["units"], figures[1], figures[2])
        kv = KEYVAL_RE.match(stripped)
        if kv and kv["key"].startswith("NETPERF_") and kv["index"] is not None:
            item = self._kv.setdefault(int(kv["index"]), {})
            item[kv["key"]] = kv["value"]
            if {"NETPERF_INTERIM_RESULT", "NETPERF_INTERVAL", "NETPERF_ENDING"} <= item.keys():
                del self._kv[int(kv["index"])]
                try:
                    figures = interim_figures(
                        item["NETPERF_INTERIM_RESULT"], item["NETPERF_INTERVAL"], item["NETPERF_ENDING"]
                    )
                except ValueError:
                    return []
                if figures is None:
                    return []
                return self._emit(figures[0], item.get("NETPERF_UNITS", ""), figures[1], figures[2])
        return []

    def finish(self) -> list[Sample]:
        """Nothing is buffered beyond an incomplete key/value interim, which is dropped."""
        self._kv.clear()
        return []


def stream_parser(config: Mapping[str, Any]) -> NetperfStreamParser:
    """A fresh live parser for one run."""
    return NetperfStreamParser(config)
