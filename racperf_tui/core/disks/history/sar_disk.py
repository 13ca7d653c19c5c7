"""``sar -d`` text (every sysstat generation) into reports.

sar prints one line per device per interval, each starting with the interval's end time:
``10:10:01 AM  dev8-0  tps  rd_sec/s  wr_sec/s  avgrq-sz  avgqu-sz  await  svctm  %util``
(9.x-11.x; rkB/s wkB/s with newer ones and ``-p`` names), ``tps rkB/s wkB/s dkB/s areq-sz
aqu-sz await %util`` (12.x, kB request sizes, no svctm; DEV last in some layouts). sar has no
r/s, w/s, merges or per-direction awaits: those are None. ``Average:`` lines are sar's own
summary (not reports); ``LINUX RESTART`` starts anew. A report's interval is from the
previous time on the same day (the header's time for the first one); times are dated by the
banner, the next day past midnight.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable, Iterator

from racperf_tui.core.disks.history.report import HistoryReport, HistoryRow, Problem
from racperf_tui.core.disks.history.timestamps import parse_banner

_TIME = re.compile(r"^(\d\d):(\d\d):(\d\d)(?: ([AP]M))?\s")
#: Where each figure of racperf's column set comes from in sar's columns: (column, factor).
_SOURCES: dict[str, tuple[tuple[str, float], ...]] = {
    "rkB/s": (("rkB/s", 1.0), ("rd_sec/s", 0.5)),
    "wkB/s": (("wkB/s", 1.0), ("wr_sec/s", 0.5)),
    "avgrq-sz": (("avgrq-sz", 1.0), ("areq-sz", 2.0)),
    "avgqu-sz": (("avgqu-sz", 1.0), ("aqu-sz", 1.0)),
    "await": (("await", 1.0),),
    "svctm": (("svctm", 1.0),),
    "%util": (("%util", 1.0),),
}
KNOWN_SAR_COLUMNS = frozenset(
    "DEV tps rd_sec/s wr_sec/s rkB/s wkB/s dkB/s areq-sz avgrq-sz aqu-sz avgqu-sz await svctm %util".split()
)
#: racperf's column set, in iostat_math.COLUMNS order, as (name or None for absent).
_ORDER = ("r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "avgrq-sz", "avgqu-sz", "await")
_ORDER_TAIL = ("r_await", "w_await", "svctm", "%util")


def is_sar_header(line: str) -> bool:
    """A sar -d header: a time, then DEV among the column names."""
    return _TIME.match(line) is not None and " DEV" in f" {line} " and "tps" in line.split()


def _clock(match: re.Match[str]) -> dt.time:
    hour = int(match.group(1))
    if match.group(4) is not None:
        hour = hour % 12 + (12 if match.group(4) == "PM" else 0)
    return dt.time(hour, int(match.group(2)), int(match.group(3)))


class _Layout:
    """One header's columns: where DEV is and how to make racperf's figures."""

    def __init__(self, names: list[str]) -> None:
        unknown = [n for n in names if n not in KNOWN_SAR_COLUMNS]
        if unknown or "DEV" not in names:
            raise ValueError(f"unknown sar -d column(s) {' '.join(unknown) or '(no DEV)'}")
        self.width = len(names)
        self.dev = names.index("DEV")
        index = {n: i for i, n in enumerate(names)}
        self.sources: dict[str, tuple[int, float] | None] = {}
        for figure, candidates in _SOURCES.items():
            self.sources[figure] = next(((index[c], f) for c, f in candidates if c in index), None)

    def row(self, fields: list[str]) -> HistoryRow:
        values = [float(f.replace(",", ".")) if i != self.dev else 0.0 for i, f in enumerate(fields)]
        if not math.isfinite(sum(values)):
            raise ValueError("not a finite number")

        def figure(name: str) -> float | None:
            source = self.sources.get(name)
            return None if source is None else values[source[0]] * source[1]

        out = [figure(n) for n in _ORDER] + [figure(n) for n in _ORDER_TAIL]
        return HistoryRow(fields[self.dev], tuple(out))


def read_sar_disk(
    source: str, lines: Iterable[str], host: str = "", devices: frozenset[str] | None = None
) -> Iterator[HistoryReport | Problem]:
    """Reports and problems of one ``sar -d`` file, in file order."""
    day: dt.date | None = None
    layout: _Layout | None = None
    report: HistoryReport | None = None
    report_clock = ""
    last: dt.datetime | None = None
    for number, text in enumerate(lines, 1):
        stripped = text.strip()
        if not stripped or stripped.startswith("Average:"):
            continue
        banner = parse_banner(stripped)
        if banner is not None and not _TIME.match(stripped):
            host, day, last = banner.host, banner.date, None
            continue
        match = _TIME.match(stripped + " ")
        if match is None:
            yield Problem(source, number, f"line not understood: {text[:120]!r}")
            continue
        fields = stripped[match.end() :].split() if match.end() <= len(stripped) else []
        when = dt.datetime.combine(day, _clock(match)) if day is not None else None
        if when is not None and last is not None and when < last:
            when += dt.timedelta(days=1)
            day = when.date()
        if "DEV" in fields:
            if report is not None:
                yield report
                report = None
            try:
                layout = _Layout(fields)
            except ValueError as exc:
                layout = None
                yield Problem(source, number, f"{exc}; its lines are skipped")
            last = when
            continue
        if fields == ["LINUX", "RESTART"] or (fields and fields[0] == "LINUX"):
            if report is not None:
                yield report
                report = None
            last = None
            continue
        if layout is None:
            continue
        if report is None or match.group(0) != report_clock:
            if report is not None:
                yield report
            interval = (when - last).total_seconds() if when is not None and last is not None else None
            report = HistoryReport(source, number, host, when, interval, False)
            report_clock = match.group(0)
            last = when
        if len(fields) != layout.width:
            yield Problem(source, number, f"malformed device line: {text[:120]!r}")
            continue
        try:
            row = layout.row(fields)
        except ValueError:
            yield Problem(source, number, f"malformed device line: {text[:120]!r}")
            continue
        if devices is None or row.device in devices:
            report.rows.append(row)
    if report is not None:
        yield report
