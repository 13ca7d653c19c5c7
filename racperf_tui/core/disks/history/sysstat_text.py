"""``iostat -x`` text, line by line, into reports: any sysstat generation (columns.py), with
or without ``-t`` time lines, avg-cpu blocks, partitions, decimal commas, and the snapshot
markers of OSWatcher (``zzz ***<date>``) and ExaWatcher (``zzz <date> Count:N``).

One pass, constant state: a report is yielded when its block ends, so memory holds one
report whatever the file's size. A line that fits nothing known is yielded as a Problem
(file and line) and skipped; the reports around it are kept.

Times: a report's own ``-t`` line when it has one; else, inside an OSWatcher snapshot, the
marker's time plus ``snapshot_interval_s`` times the report's index (OSWatcher runs
``iostat -x[k] 1 3``: 1 s); else (plain iostat without -t) None: the file does not say.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Iterable, Iterator

from racperf_tui.core.disks.history.columns import ColumnSet, UnknownHeader, column_set
from racperf_tui.core.disks.history.report import HistoryReport, HistoryRow, Problem
from racperf_tui.core.disks.history.timestamps import (
    MarkerError,
    TimeOfDay,
    parse_banner,
    parse_marker,
    parse_time_line,
)

#: The interval of the iostat OSWatcher runs per snapshot (``iostat -x[k] 1 3``).
OSWATCHER_INTERVAL_S = 1.0

#: Lines OSWatcher and ExaWatcher write around the iostat output that carry no figures.
_IGNORED_PREFIXES = ("Linux OSW ", "SNAP_INTERVAL", "CPU_CORES", "VCPUS", "OSWBB_ARCHIVE_DEST", "#")


class _State:
    """What the reader knows at a line (one per file)."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.day: dt.date | None = None  # the banner's or the marker's date (for Time: lines)
        self.marker: dt.datetime | None = None
        self.exawatcher = False
        self.invocation_started = False
        self.index = 0  # reports since the banner or marker
        self.pending: dt.datetime | TimeOfDay | None = None
        self.last_time: dt.datetime | None = None


def _report_time(state: _State, snapshot_interval_s: float) -> dt.datetime | None:
    pending = state.pending
    state.pending = None
    if isinstance(pending, dt.datetime):
        return pending
    if isinstance(pending, TimeOfDay):
        day = state.last_time.date() if state.last_time is not None else state.day
        if day is None:
            return None
        when = dt.datetime.combine(day, pending.time, tzinfo=state.marker.tzinfo if state.marker else None)
        if state.last_time is not None and _before(when, state.last_time):
            when += dt.timedelta(days=1)  # past midnight
        return when
    if state.marker is not None and (state.index == 0 or not state.exawatcher):
        return state.marker + dt.timedelta(seconds=snapshot_interval_s * state.index)
    return None


def _before(a: dt.datetime, b: dt.datetime) -> bool:
    try:
        return a < b
    except TypeError:  # one with a zone, one without: not comparable, not reordered
        return False


def _interval(state: _State, when: dt.datetime | None, since_boot: bool, snapshot_interval_s: float) -> float | None:
    if since_boot:
        return None  # the time since boot: the file does not say it
    if when is not None and state.last_time is not None:
        try:
            return (when - state.last_time).total_seconds()
        except TypeError:
            return None
    if state.marker is not None and not state.exawatcher:
        return snapshot_interval_s
    return None


#: Distinct headers kept made (a file has one or two; more are made again).
_KNOWN_HEADERS_MAX = 64

#: Device lines parsed at once (a report of 100,000 devices is parsed in slices of these).
_BLOCK_LINES = 4096

_new_tuple = tuple.__new__
_ROW_TYPES = itertools.repeat(HistoryRow)


#: Lines that end a device block (and are read as what they are).
_BLOCK_ENDS = ("Device", "avg-cpu:", "zzz", "Time:", "Linux ")


def _block_rows(
    source: str, first_number: int, lines: list[str], columns: ColumnSet, needed: tuple[int, ...]
) -> tuple[list[HistoryRow], list[Problem]]:
    """A block of device lines -> rows, parsed column by column (the fast path); a block with a
    malformed line is read again line by line, naming that line."""
    width = len(columns.names) + 1
    joined = "\n".join(lines)
    tokens = (joined.replace(",", ".") if "," in joined else joined).split()
    count = len(lines)

    def parse(index: int) -> list[float]:
        texts = tokens[index + 1 :: width]
        if texts.count("0.00") == count:
            # a column all zero (discards, flushes, idle devices: most of an archive) is
            # seen by a C scan instead of a float() per figure
            return [0.0] * count
        figures = list(map(float, texts))
        if not math.isfinite(sum(figures)):
            raise ValueError("not a finite number")
        return figures

    if len(tokens) == width * count:
        try:
            converted = columns.convert({i: parse(i) for i in needed}, count, parse)
            # tuple.__new__ in C: NamedTuple's own __new__ is Python, 10 % of a block's cost
            return list(map(_new_tuple, _ROW_TYPES, zip(tokens[0::width], converted))), []
        except ValueError:
            pass  # read again line by line below, to name the line
    if count == 1:
        return [], [Problem(source, first_number, f"malformed device line: {lines[0][:120]!r}")]
    rows: list[HistoryRow] = []
    problems: list[Problem] = []
    for offset, line in enumerate(lines):
        more_rows, more_problems = _block_rows(source, first_number + offset, [line], columns, needed)
        rows += more_rows
        problems += more_problems
    return rows, problems


def read_iostat_text(
    source: str,
    lines: Iterable[str],
    host: str = "",
    devices: frozenset[str] | None = None,
    snapshot_interval_s: float = OSWATCHER_INTERVAL_S,
) -> Iterator[HistoryReport | Problem]:
    """Reports and problems of one file's lines (without their terminators), in file order."""
    state = _State(host)
    columns: ColumnSet | None = None
    needed: tuple[int, ...] = ()
    block: list[str] = []
    block_start = 0
    in_block = skipping_block = cpu_figures_next = False
    report: HistoryReport | None = None
    known_headers: dict[str, ColumnSet] = {}
    known_needed: dict[str, tuple[int, ...]] = {}

    def flush_rows() -> Iterator[Problem]:
        nonlocal block
        if report is not None and columns is not None and block:
            rows, problems = _block_rows(source, block_start, block, columns, needed)
            yield from problems
            report.rows += rows if devices is None else [row for row in rows if row.device in devices]
        block = []

    def end_block() -> Iterator[HistoryReport | Problem]:
        nonlocal report
        yield from flush_rows()
        if report is not None:
            yield report
            report = None

    for number, text in enumerate(lines, 1):
        if in_block:
            if not text or text.isspace():
                in_block = skipping_block = False
                yield from end_block()
                continue
            if not (text.startswith(_BLOCK_ENDS) or (text[0].isdigit() and parse_time_line(text.strip()))):
                if not skipping_block:
                    if not block:
                        block_start = number
                    block.append(text)
                    if len(block) >= _BLOCK_LINES:
                        yield from flush_rows()
                continue
            in_block = skipping_block = False
        yield from end_block()
        stripped = text.strip()
        if not stripped:
            continue
        if cpu_figures_next:
            cpu_figures_next = False
            if stripped[0].isdigit():
                continue
        if stripped.startswith(("Device:", "Device ")) or stripped == "Device":
            in_block = True
            if len(known_headers) > _KNOWN_HEADERS_MAX:  # bounded, whatever the file holds
                known_headers.clear()
                known_needed.clear()
            try:
                # OSWatcher repeats a handful of headers a million times: each is made once
                columns = known_headers.get(stripped) or known_headers.setdefault(
                    stripped, column_set(stripped.split()[1:])
                )
            except UnknownHeader as exc:
                yield Problem(source, number, f"{exc}; this report is skipped")
                skipping_block = True
                continue
            needed = known_needed.get(stripped) or known_needed.setdefault(stripped, columns.needed)
            when = _report_time(state, snapshot_interval_s)
            since_boot = state.invocation_started and state.index == 0
            report = HistoryReport(
                source,
                number,
                state.host,
                when,
                _interval(state, when, since_boot, snapshot_interval_s),
                since_boot,
            )
            state.index += 1
            if when is not None:
                state.last_time = when
            continue
        if stripped.startswith("zzz"):
            try:
                marker = parse_marker(stripped)
            except MarkerError as exc:
                yield Problem(source, number, f"{exc}: {stripped[:80]!r}; its reports are timed from the next marker")
                state.marker = None
                state.pending = None
                state.invocation_started = True
                state.index = 0
                continue
            state.marker, state.exawatcher = marker.time, marker.exawatcher
            state.day = marker.time.date()
            state.last_time = None
            state.pending = None
            state.invocation_started = True
            state.index = 0
            continue
        if stripped.startswith("avg-cpu:"):
            cpu_figures_next = True
            continue
        if stripped.startswith(_IGNORED_PREFIXES):
            continue
        time_line = parse_time_line(stripped)
        if time_line is not None:
            state.pending = time_line
            continue
        banner = parse_banner(stripped)
        if banner is not None:
            state.host = banner.host
            if banner.date is None:
                yield Problem(
                    source,
                    number,
                    f"banner date {banner.date_text!r} in a form not known (MM/DD/YY, MM/DD/YYYY, YYYY-MM-DD)",
                )
            if state.marker is None:
                state.day = banner.date
                state.last_time = None
            state.invocation_started = True
            state.index = 0
            continue
        yield Problem(source, number, f"line not understood: {text[:120]!r}")
    yield from end_block()
