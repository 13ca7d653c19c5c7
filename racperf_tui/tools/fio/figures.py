"""The figures fio prints, read one way for every output format: numbers and counts with
1000-based suffixes, size units (binary, decimal, and the 1024-based KB of fio before 2.17),
latency buckets, histogram percentiles, and :class:`FioParseError`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from racperf_tui.tools import figures
from racperf_tui.tools.figures import OutputParseError

#: fio's time unit words -> factor to microseconds
TIME_UNIT_TO_US: dict[str, float] = {"nsec": 0.001, "usec": 1.0, "msec": 1000.0, "sec": 1_000_000.0}

#: count suffixes of fio's num2str for non-byte figures (IOPS=18.3k, max=1179.3k)
COUNT_SUFFIX: dict[str, float] = {"": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}

_BINARY_PREFIX_EXP: dict[str, int] = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}

PERCENTILE_KEY_FORMAT = "{:.2f}"


class FioParseError(OutputParseError):
    """Output that is not a fio report, or a report with an impossible figure; the message
    says what was expected and where (``jobs[0].read.iops: -5000.0 is negative``)."""


# ----------------------------------------------------------------------------------------
# units


def parse_count(text: str) -> float:
    """``'18.3k'`` -> 18300.0; fio prints large counts and latencies with 1000-based suffixes."""
    match = re.fullmatch(r"\s*(-?[\d.]+)\s*([kKmMGTP]?)\s*", text)
    if not match:
        raise FioParseError(f"{text[:40]!r} is not a number")
    return read_figure(match.group(1)) * COUNT_SUFFIX[match.group(2)]


def read_figure(text: str | float) -> float:
    """A figure fio printed -> float; FioParseError when no fio prints it ("1.2.3", a
    400-digit number that float() would make inf, a negative one)."""
    number = figures.finite_number(text) if isinstance(text, str) else float(text)
    if number is None or not math.isfinite(number):
        shown = text[:40] + "..." if isinstance(text, str) and len(text) > 40 else text
        raise FioParseError(f"{shown!r} is no figure fio prints")
    return number


def read_count(text: str | int) -> int:
    """A count fio printed -> int (see :func:`read_figure`)."""
    if isinstance(text, int):
        return text
    number = read_figure(text)
    if number != int(number):
        raise FioParseError(f"{text!r} is not a whole number")
    return int(number)


def size_to_kib(value: float, unit: str, legacy: bool = False) -> float:
    """Convert ``value`` in fio's size ``unit`` (KiB, MiB, kB, MB, KB, B, ...) to KiB.

    fio 2.17+ prints binary units (KiB, MiB) and decimal ones (kB, MB: 1000-based). fio
    before 2.17 printed KB/MB/GB but meant 1024-based: pass ``legacy=True`` for those.
    """
    unit = unit.strip()
    if unit.endswith("/s"):
        unit = unit[:-2].strip()
    unit = unit.replace(" ", "")
    if unit in ("", "B"):
        return value / 1024.0
    if not unit.endswith("B"):
        raise FioParseError(f"{unit!r} is not a size unit like KiB, MiB, kB, MB")
    prefix = unit[:-1]
    if prefix.endswith("i"):
        return value * 1024.0 ** _BINARY_PREFIX_EXP[prefix[:-1].upper()] / 1024.0
    exp = _BINARY_PREFIX_EXP.get(prefix.upper())
    if exp is None:
        raise FioParseError(f"{unit!r} is not a size unit like KiB, MiB, kB, MB")
    base = 1024.0 if legacy else 1000.0
    kib = value * base**exp / 1024.0
    if not math.isfinite(kib):
        raise FioParseError(f"{value:g} {unit} is beyond any size")
    return kib


def percentile_key(pct: float) -> str:
    """The result's percentile key: 99.9 -> ``'99.90'``."""
    return PERCENTILE_KEY_FORMAT.format(pct)


def histogram_percentiles(bins: dict[int, int], pcts: Iterable[float]) -> dict[float, float]:
    """Percentiles of a latency histogram, the way fio computes them from its own bins.

    ``bins`` maps a bucket's value (ns, the key fio writes in json+) to its count. For each
    percentile p the value is that of the first bucket where the running count reaches
    p % of the total (fio's calc_clat_percentiles), so the result equals fio's own
    percentiles for the same bins. Empty histogram -> empty dict.
    """
    total = sum(bins.values())
    if total <= 0:
        return {}
    wanted = sorted(pcts)
    out: dict[float, float] = {}
    running = 0
    index = 0
    for value in sorted(bins):
        running += bins[value]
        while index < len(wanted) and running >= total * wanted[index] / 100.0:
            out[wanted[index]] = float(value)
            index += 1
        if index == len(wanted):
            break
    for pct in wanted[index:]:
        out[pct] = float(max(bins))
    return out


#: non-JSON lines kept per output (the rest are only counted)
MAX_MESSAGES = 1000


def bucket_label(bound: str, factor: float) -> str | None:
    """A latency-distribution bucket bound (``'750'``, ``'>=2000'``) in µs as a key; None
    when it is no bound."""
    bound = bound.strip()
    prefix = ""
    if bound.startswith(">="):
        prefix, bound = ">=", bound[2:]
    number = figures.finite_number(bound)
    if number is None:
        return None
    return prefix + shortest_number(number * factor)


def shortest_number(value: float) -> str:
    """Shortest faithful text of a number: 2.0 -> '2', 0.75 -> '0.75'."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text if text else "0"


def version_of(text: str) -> str:
    return text[4:] if text.startswith("fio-") else text


def rw_from_directions(job: dict[str, Any]) -> str:
    has_r, has_w = "read" in job, "write" in job
    return "rw" if has_r and has_w else "write" if has_w else "read" if has_r else ""
