"""DBA_RSRC_IO_CALIBRATE as SQL*Plus (or racperf's python-oracledb session) prints it, read by
its header, whatever columns were selected and in whatever order.

- Columns: START_TIME, END_TIME, MAX_IOPS, MAX_MBPS, MAX_PMBPS, LATENCY, NUM_PHYSICAL_DISKS
  (or the alias DISKS), ADDITIONAL_INFO (18c and later); any subset, any order, headings in
  any case. Lines before the header (a ``SQL>`` or ``USER@db>`` prompt, the echoed query
  with its line numbers) are not the header: a header holds nothing but these names.
- Layout: the dashes under the header give the columns' places; a row that fits them is read
  by place (a NULL is blank there), else by its tokens (a published copy whose spaces were
  collapsed). A record wider than LINESIZE is wrapped by SQL*Plus over several lines, its
  header and dashes too (``LATENCY DISKS`` under the first line): each header line's columns
  are read from the matching line of the record. The python-oracledb session prints the
  names and values joined by one space, without dashes.
- Numbers as SQL*Plus prints them: ``10.868`` (19c's latency), ``.5``, ``1.3E+04``.
- Times: as TO_CHAR printed them (kept as printed in ``start_time``/``end_time``) and, when
  the form is known, ``start_iso``/``end_iso``: ``YYYY-MM-DD HH24:MI:SS`` (racperf's own
  query), ``DD-MON-YYYY``, ``DD-MON-RR`` (NLS default: 00-49 the 2000s), the TIMESTAMP
  default ``04-SEP-22 05.53.24.000000 PM``, and ``DD-MON-YYY``: a three-digit year (``026``,
  the last three digits, as the query in Oracle's own examples prints it) is read as the
  2000s and said so in a warning. Months in English; another language is named, not guessed.
- ``no rows selected``: said (no calibration has completed in this database).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

#: heading -> result key
COLUMNS: dict[str, str] = {
    "START_TIME": "start_time",
    "END_TIME": "end_time",
    "MAX_IOPS": "max_iops",
    "MAX_MBPS": "max_mbps",
    "MAX_PMBPS": "max_pmbps",
    "LATENCY": "latency_ms",
    "NUM_PHYSICAL_DISKS": "num_physical_disks",
    "DISKS": "num_physical_disks",
    "ADDITIONAL_INFO": "additional_info",
}
_TIMES = frozenset(("START_TIME", "END_TIME"))
_TEXT = frozenset(("ADDITIONAL_INFO",))
_FIGURES = frozenset(("MAX_IOPS", "MAX_MBPS", "MAX_PMBPS", "LATENCY"))

#: a figure as SQL*Plus prints it (NUMWIDTH at most 50 wide: longer is no figure)
_NUMBER_RE = re.compile(r"^(?=.{1,50}$)-?(?:\d+(?:\.\d*)?|\.\d+)(?:[Ee][+-]?\d{1,3})?$")
_DATE_RE = re.compile(r"^(?:\d{4}-\d{2}-\d{2}|\d{1,2}-[A-Za-z]{3,9}-\d{2,4})$")
_CLOCK_RE = re.compile(r"^\d{1,2}[:.]\d{2}[:.]\d{2}(?:\.\d{1,9})?$")
_DASHES_RE = re.compile(r"^-+(?: +-+)*$")
_FEEDBACK_RE = re.compile(r"^\d+ rows? selected\.?$", re.IGNORECASE)
_NO_ROWS_RE = re.compile(r"^\s*no rows selected\s*$", re.IGNORECASE | re.MULTILINE)
_MONTHS = {m: i for i, m in enumerate("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split(), 1)}
_DMY_RE = re.compile(
    r"^(?P<day>\d{1,2})-(?P<month>[A-Za-z]{3,9})-(?P<year>\d{2,4}) (?P<h>\d{1,2})[:.](?P<m>\d{2})[:.](?P<s>\d{2})"
    r"(?:\.\d{1,9})?(?: (?P<ampm>AM|PM))?$",
    re.IGNORECASE,
)


@dataclass
class CalibrationTable:
    """What the table said: the result's keys, and warnings (line N: what)."""

    figures: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    no_rows: bool = False


@dataclass(frozen=True)
class _Part:
    """One header line of a (possibly wrapped) record: its columns and their places."""

    names: tuple[str, ...]
    spans: tuple[tuple[int, int], ...] | None  # from the dashes; None without them


def _heading_names(line: str) -> tuple[str, ...] | None:
    names = tuple(token.upper() for token in line.split())
    return names if names and all(name in COLUMNS for name in names) else None


def _spans(dashes: str) -> tuple[tuple[int, int], ...]:
    return tuple((m.start(), m.end()) for m in re.finditer(r"-+", dashes))


def _valid(name: str, text: str) -> bool:
    if name in _TEXT:
        return True
    if not text:
        return True  # NULL
    if name in _TIMES:
        return _read_time(text.split()) is not None
    return _NUMBER_RE.match(text) is not None


def _read_time(tokens: list[str]) -> tuple[str, int] | None:
    """(the time as printed, tokens used) from the head of ``tokens``; None if no date there."""
    if not tokens or not _DATE_RE.match(tokens[0]):
        return None
    used = 1
    if used < len(tokens) and _CLOCK_RE.match(tokens[used]):
        used += 1
        if used < len(tokens) and tokens[used].upper() in ("AM", "PM"):
            used += 1
    return " ".join(tokens[:used]), used


def _by_place(line: str, part: _Part) -> dict[str, str] | None:
    spans = part.spans
    if spans is None or len(spans) != len(part.names):
        return None
    values: dict[str, str] = {}
    for index, (name, (start, end)) in enumerate(zip(part.names, spans)):
        last = index == len(spans) - 1
        if last:
            end = max(end, len(line))
        if start > 0 and line[start - 1 : start] not in ("", " "):
            return None  # a value runs across a column's edge: the row is not in place
        text = line[start:end].strip()
        if not _valid(name, text):
            return None
        values[name] = text
    return values


def _by_tokens(line: str, part: _Part) -> dict[str, str] | None:
    tokens = line.split()
    values: dict[str, str] = {}
    names = part.names
    for index, name in enumerate(names):
        if name in _TIMES:
            found = _read_time(tokens)
            if found is None:
                return None
            values[name], used = found
            tokens = tokens[used:]
        elif name in _TEXT:
            # free text: what the columns after it do not need (one token each)
            keep = len(names) - index - 1
            take = max(0, len(tokens) - keep)
            values[name], tokens = " ".join(tokens[:take]), tokens[take:]
        else:
            if not tokens or not _NUMBER_RE.match(tokens[0]):
                return None
            values[name], tokens = tokens[0], tokens[1:]
    return values if not tokens else None


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def _iso(printed: str) -> tuple[str | None, str]:
    """(ISO 8601 of a printed time or None, a warning or '')."""
    try:
        return dt.datetime.strptime(printed, "%Y-%m-%d %H:%M:%S").isoformat(), ""
    except ValueError:
        pass
    match = _DMY_RE.match(printed)
    if match is None:
        return None, f"{printed!r}: a time form racperf does not know: kept as printed"
    month = _MONTHS.get(match["month"].upper()[:3]) if match["month"].isascii() else None
    if month is None or len(match["month"]) != 3:
        return None, f"{printed!r}: month {match['month']!r} is not English (NLS_DATE_LANGUAGE): kept as printed"
    year_text, warning = match["year"], ""
    year = int(year_text)
    if len(year_text) == 3:
        year += 2000
        warning = (
            f"{printed!r} has a three-digit year (TO_CHAR 'DD-MON-YYY' prints the last three digits "
            f"of the year): read as {year}; racperf's own query asks for YYYY-MM-DD"
        )
    elif len(year_text) == 2:
        year += 2000 if year < 50 else 1900  # RR
    hour = int(match["h"])
    if match["ampm"]:
        hour = hour % 12 + (12 if match["ampm"].upper() == "PM" else 0)
    try:
        when = dt.datetime(year, month, int(match["day"]), hour, int(match["m"]), int(match["s"]))
    except ValueError as exc:
        return None, f"{printed!r}: not a time ({exc}): kept as printed"
    return when.isoformat(), warning


def _store(table: CalibrationTable, values: dict[str, str], number: int) -> None:
    for name, text in values.items():
        key = COLUMNS[name]
        if not text:
            continue  # NULL
        if name in _TIMES:
            table.figures[key] = text
            iso, warning = _iso(text)
            if iso is not None:
                table.figures[key.replace("_time", "_iso")] = iso
            if warning:
                table.warnings.append(f"line {number}: {name} {warning}")
        elif name in _TEXT:
            table.figures[key] = text
        else:
            table.figures[key] = _number(text)


def read_table(lines: list[str]) -> CalibrationTable:
    """The last DBA_RSRC_IO_CALIBRATE row of the output (the view holds one), read by header."""
    table = CalibrationTable(no_rows=any(_NO_ROWS_RE.match(line) for line in lines))
    index = 0
    while index < len(lines):
        if _heading_names(lines[index]) is None:
            index += 1
            continue
        parts, after = _header(lines, index)
        if not any(_FIGURES.intersection(part.names) for part in parts):
            index += 1  # START_TIME alone says nothing of the calibration
            continue
        index = _rows(lines, after, parts, table)
    return table


def _header(lines: list[str], index: int) -> tuple[list[_Part], int]:
    """The header's parts (one per wrapped line) and the index after it."""
    parts: list[_Part] = []
    seen: set[str] = set()
    while index < len(lines):
        names = _heading_names(lines[index])
        if names is None or seen.intersection(names):
            break
        dashes = lines[index + 1].rstrip() if index + 1 < len(lines) else ""
        has_dashes = _DASHES_RE.match(dashes) is not None
        parts.append(_Part(names, _spans(dashes) if has_dashes else None))
        seen.update(names)
        index += 2 if has_dashes else 1
        if not has_dashes:
            break  # the python-oracledb session: one header line, no wrapping
    return parts, index


def _rows(lines: list[str], index: int, parts: list[_Part], table: CalibrationTable) -> int:
    """Read records of len(parts) lines each until a line is none; the index after them."""
    while True:
        if len(parts) > 1:
            while index < len(lines) and not lines[index].strip():
                index += 1  # SQL*Plus separates wrapped records by a blank line
        record: dict[str, str] = {}
        start = index
        for part in parts:
            line = lines[index].rstrip() if index < len(lines) else ""
            values = (_by_place(line, part) or _by_tokens(line, part)) if line.strip() else None
            if values is None:
                if record or _looks_like_a_row(line):
                    table.warnings.append(
                        f"line {index + 1}: a DBA_RSRC_IO_CALIBRATE row that does not fit its header "
                        f"({' '.join(part.names)}): skipped"
                    )
                return index
            record.update(values)
            index += 1
        _store(table, record, start + 1)


def _looks_like_a_row(line: str) -> bool:
    """A line under the header that starts with a digit (a figure or a date), not SQL*Plus'
    feedback ("1 row selected."): a row that did not fit, worth naming."""
    stripped = line.strip()
    return bool(stripped[:1].isdigit() or stripped[:2] in (".5", "-.") or stripped[:1] == "-") and not (
        _FEEDBACK_RE.match(stripped)
    )
