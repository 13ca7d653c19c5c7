"""Sizes, times and rates: one reading of what a user types, one conversion of what tools print.

Sizes are 1024-based, as fio (kb_base=1024), oratcptest ("1 Mbyte = 1024x1024 bytes") and the
probe count them: ``512``, ``8k``, ``8K``, ``1M``, ``1MiB``, ``1 Mbyte``, ``2g``. Times are
seconds unless a unit says otherwise: ``60``, ``500ms``, ``5s``, ``2m``, ``1h``, ``1d``,
``30 seconds``. Rates: ``*_mbit_s`` is 10^6 bit/s, ``*_mib_s`` 2^20 bytes/s.
"""

from __future__ import annotations

import math
import re
from typing import Any

MIB = 1024 * 1024
#: MiB/s -> Mbit/s (10^6 bit/s)
MIB_S_TO_MBIT_S = MIB * 8 / 1e6
#: Mbit/s -> MiB/s: the divisor of a MetricSpec that stores MiB/s and shows Mbit/s
MIB_S_PER_MBIT_S = 1.0 / MIB_S_TO_MBIT_S
#: a declared rate unit (a MetricSpec's ``unit``) -> how many Mbit/s one of it is
MBIT_S_PER_RATE_UNIT: dict[str, float] = {
    "Mbit/s": 1.0,
    "Gbit/s": 1000.0,
    "kbit/s": 0.001,
    "MiB/s": MIB_S_TO_MBIT_S,
    "GiB/s": MIB_S_TO_MBIT_S * 1024,
}
#: a declared time unit (a latency MetricSpec's ``unit``) -> how many ms one of it is
MS_PER_TIME_UNIT: dict[str, float] = {"ms": 1.0, "µs": 0.001, "us": 0.001, "s": 1000.0}

_NUMBER_UNIT_RE = re.compile(r"^(?P<num>\d{1,30}(?:\.\d{1,30})?)\s*(?P<unit>[A-Za-z]{0,8})$")
SIZE_UNITS_BYTES: dict[str, int] = {
    "": 1,
    "b": 1,
    "byte": 1,
    "bytes": 1,
    **{f"{p}{s}": 1024 ** (i + 1) for i, p in enumerate("kmgtpe") for s in ("", "b", "ib", "byte", "bytes")},
}
TIME_UNITS_S: dict[str, float] = {
    "": 1.0,
    "s": 1.0,
    "sec": 1.0,
    "secs": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "us": 1e-6,
    "usec": 1e-6,
    "ms": 1e-3,
    "msec": 1e-3,
    "m": 60.0,
    "min": 60.0,
    "mins": 60.0,
    "minute": 60.0,
    "minutes": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "hours": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
}


def size_bytes(value: Any, what: str = "size") -> int:
    """A size (int, or text with an optional 1024-based unit) -> bytes; ValueError naming
    ``what`` when it is not one, is fractional in bytes, or does not fit a finite number."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: {value!r} is not a size")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value != int(value) or value < 0:
            raise ValueError(f"{what}: {value!r} is not a whole number of bytes")
        return int(value)
    match = _NUMBER_UNIT_RE.match(str(value).strip())
    unit = match["unit"].lower() if match else None
    if match is None or unit not in SIZE_UNITS_BYTES:
        raise ValueError(f"{what}: {str(value)[:40]!r} is not a size like 512, 8k, 1M or 2g (1024-based)")
    size = float(match["num"]) * SIZE_UNITS_BYTES[unit]
    if not math.isfinite(size) or size != int(size):
        raise ValueError(f"{what}: {str(value)[:40]!r} does not come to whole bytes")
    return int(size)


def maybe_size_bytes(value: Any) -> int | None:
    """:func:`size_bytes`, or None for what is not a size (a percentage, a typo)."""
    try:
        return size_bytes(value)
    except ValueError:
        return None


def duration_s(value: Any, what: str = "time") -> float:
    """A time (a number of seconds, or text with a unit) -> seconds; ValueError naming ``what``."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: {value!r} is not a time")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{what}: {value!r} is not a time")
        return float(value)
    match = _NUMBER_UNIT_RE.match(str(value).strip())
    unit = match["unit"].lower() if match else None
    if match is None or unit not in TIME_UNITS_S:
        raise ValueError(f"{what}: {str(value)[:40]!r} is not a time like 30, 500ms, 30s, 2m or 1h")
    return float(match["num"]) * TIME_UNITS_S[unit]


def maybe_duration_s(value: Any) -> float | None:
    """:func:`duration_s`, or None for what is not a time."""
    try:
        return duration_s(value)
    except ValueError:
        return None


def mib_s_to_mbit_s(mib_s: float) -> float:
    return mib_s * MIB_S_TO_MBIT_S


def mbit_s_to_mib_s(mbit_s: float) -> float:
    return mbit_s / MIB_S_TO_MBIT_S


# ---- the units tools declare their figures in (MetricSpec.unit), and how they compare
#: a throughput unit -> how many Mbit/s (10^6 bit/s) one of it is
MBIT_S_PER_UNIT: dict[str, float] = {
    "Mbit/s": 1.0,
    "Gbit/s": 1000.0,
    "kbit/s": 0.001,
    "MiB/s": MIB_S_TO_MBIT_S,
    "GiB/s": MIB_S_TO_MBIT_S * 1024,
}
#: a time unit -> how many ms one of it is
MS_PER_UNIT: dict[str, float] = {"ms": 1.0, "µs": 0.001, "us": 0.001, "s": 1000.0}
#: a time unit -> the next larger one, 1000 times it: a latency reads in the unit that keeps it
#: under 10 000 ("22.2 ms", never "22.2k µs")
LARGER_TIME_UNIT: dict[str, str] = {"ns": "µs", "µs": "ms", "us": "ms", "ms": "s"}
#: a rate or size unit -> (the next larger one, how many of this make one of it), for compact figures
LARGER_UNIT: dict[str, tuple[str, float]] = {
    "Mbit/s": ("Gbit/s", 1000.0),
    "KiB/s": ("MiB/s", 1024.0),
    "MiB/s": ("GiB/s", 1024.0),
    "KiB": ("MiB", 1024.0),
    "MiB": ("GiB", 1024.0),
}


def format_duration(seconds: float | None) -> str:
    """How long something ran, as a DBA reads it: ``12.3s`` under a minute, ``4m05s`` under an
    hour, then ``1h02m``; ``-`` when unknown (None or negative)."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "-"
    if round(seconds, 1) < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
