"""A run's target devices' iostat over the run, kept with it (a report shows it after the fact).

The supervisor samples the devices a run reaches every second (orchestration/
saturation_watch.py for a local run, orchestration/node_iostat.py for a run on another node)
and appends one JSON line per interval to the run's raw output stream :data:`IOSTAT_STREAM`::

    {"t": 1764650000.5, "interval_s": 1.0, "devices": {"sdb": {"r/s": 10458.0, ..., "%util": 99.1}}}

``t`` is the interval's end (epoch seconds); the figures are iostat -x's (core/disks/
iostat_math.py, sysstat's semantics) under its column names, rounded to 2 decimals. A raw
stream, not a table: the store's schema stays as it is, and a run recorded before this had
none (its report says so).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeGuard

from racperf_tui.core.disks.iostat_math import IostatRow

#: the raw output stream of a run that holds its devices' iostat, a JSON line per interval
IOSTAT_STREAM = "iostat"
#: the columns kept (what a report and a DBA read: the merges and svctm are left out)
KEPT_COLUMNS = ("r/s", "w/s", "rkB/s", "wkB/s", "avgrq-sz", "avgqu-sz", "await", "r_await", "w_await", "%util")


@dataclass(frozen=True, slots=True)
class IostatInterval:
    """One recorded interval: its end (epoch s), its length, each device's figures."""

    t: float
    interval_s: float
    devices: dict[str, dict[str, float]]


def iostat_line(wall_time: float, interval_s: float, rows: Iterable[IostatRow], devices: Iterable[str]) -> str:
    """The record of one interval of ``devices`` (kernel or display names), '' when none of
    them is in ``rows``."""
    wanted = set(devices)
    found: dict[str, dict[str, float]] = {}
    for row in rows:
        name = row.kernel_name or row.device
        if name not in wanted and row.device not in wanted:
            continue
        figures = row.as_dict()
        found[name] = {key: float(figures[key]) for key in KEPT_COLUMNS}
    if not found:
        return ""
    return json.dumps({"t": round(wall_time, 3), "interval_s": round(interval_s, 3), "devices": found}) + "\n"


def recorded_iostat(stream_text: str) -> list[IostatInterval]:
    """The intervals of a run's ``iostat`` stream, in order; a line that is not one is
    skipped (a record cut by a kill says what it had up to there)."""
    intervals = []
    for line in stream_text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or not isinstance(record.get("devices"), dict):
            continue
        t, interval = record.get("t"), record.get("interval_s")
        if not _finite(t) or not _finite(interval):
            continue
        devices = {
            str(name): {str(k): float(v) for k, v in figures.items() if _finite(v)}
            for name, figures in record["devices"].items()
            if isinstance(figures, dict)
        }
        intervals.append(IostatInterval(float(t), float(interval), devices))
    return intervals


def _finite(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
