"""The dates and times saved iostat outputs carry, in the forms sysstat, OSWatcher and
ExaWatcher print them. Strict: a form not listed is None (the caller names the line), never a
guess (``01/06/2020`` is January 6 as sysstat prints it in C and en_US; a date in another
locale is reported, not reinterpreted).

- banner: ``Linux 3.10.0 (host) \\t06/01/20 \\t_x86_64_\\t(16 CPU)`` (date MM/DD/YY,
  MM/DD/YYYY, or YYYY-MM-DD with S_TIME_FORMAT=ISO);
- ``iostat -t`` lines: ``06/01/20 10:00:00`` (C), ``06/01/2020 10:00:00 AM`` (en_US),
  ``2020-06-01T10:00:00+0000`` (ISO), ``Time: 10:00:00 AM`` (sysstat 7-8, no date);
- OSWatcher ``zzz ***Mon Jun  1 10:00:00 UTC 2020`` (English ``date``; UTC/GMT aware, any
  other zone name kept as the node's local time), ExaWatcher ``zzz <06/01/2020 10:00:00> Count:720``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import NamedTuple

_BANNER = re.compile(r"^(\S+) (\S+) \((\S+)\)\s+(\S+)")
_MDY = re.compile(r"^(\d\d)/(\d\d)/(\d\d|\d{4})$")
_YMD = re.compile(r"^(\d{4})-(\d\d)-(\d\d)$")
_TIME_OF_DAY = r"(\d\d):(\d\d):(\d\d)(?: ?([AP]M))?"
_T_LINE_MDY = re.compile(r"^(\d\d)/(\d\d)/(\d\d|\d{4}) " + _TIME_OF_DAY + r"$")
_T_LINE_ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)([+-]\d{4}|Z)?$")
_T_LINE_TIME_ONLY = re.compile(r"^Time: " + _TIME_OF_DAY + r"$")
_ZZZ_OSW = re.compile(r"^zzz \*\*\*(\w+) +(\w+) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?: (\S+))? (\d{4})\s*$")
_ZZZ_EXA = re.compile(r"^zzz <(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d)>(?: +Count:(\d+))?\s*$")
_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
_WEEKDAYS = frozenset("Mon Tue Wed Thu Fri Sat Sun".split())
_UTC_NAMES = frozenset({"UTC", "GMT", "Z"})


class Banner(NamedTuple):
    host: str
    date: dt.date | None  # None: a date form not known (named by the caller)
    date_text: str


class TimeOfDay(NamedTuple):
    """A ``Time:`` line's time without a date (sysstat 7-8's ``-t``)."""

    time: dt.time


def _year(text: str) -> int:
    # sysstat's %y: 2000-2068 / 1969-1999 as POSIX strptime reads two digits
    return int(text) + (2000 if int(text) < 69 else 1900) if len(text) == 2 else int(text)


def _hour(hour: str, meridiem: str | None) -> int:
    h = int(hour)
    if meridiem is None:
        return h
    if not 1 <= h <= 12:
        raise ValueError(f"hour {h} with {meridiem}")
    return h % 12 + (12 if meridiem == "PM" else 0)


def parse_banner(line: str) -> Banner | None:
    """sysstat's first line, or None when the line is not one."""
    match = _BANNER.match(line)
    if match is None or match.group(2) == "OSW":
        return None
    date_text = match.group(4)
    return Banner(match.group(3), parse_date(date_text), date_text)


def parse_date(text: str) -> dt.date | None:
    try:
        if m := _MDY.match(text):
            return dt.date(_year(m.group(3)), int(m.group(1)), int(m.group(2)))
        if m := _YMD.match(text):
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None
    return None


def parse_time_line(line: str) -> dt.datetime | TimeOfDay | None:
    """An ``iostat -t`` line, or None when the line is not one (or names an impossible date)."""
    try:
        if m := _T_LINE_MDY.match(line):
            hour = _hour(m.group(4), m.group(7))
            return dt.datetime(
                _year(m.group(3)), int(m.group(1)), int(m.group(2)), hour, int(m.group(5)), int(m.group(6))
            )
        if m := _T_LINE_ISO.match(line):
            y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
            when = dt.datetime(y, mo, d, h, mi, sec)
            zone = m.group(7)
            if zone is None:
                return when
            if zone == "Z":
                return when.replace(tzinfo=dt.UTC)
            offset = dt.timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5]))
            return when.replace(tzinfo=dt.timezone(offset if zone[0] == "+" else -offset))
        if m := _T_LINE_TIME_ONLY.match(line):
            return TimeOfDay(dt.time(_hour(m.group(1), m.group(4)), int(m.group(2)), int(m.group(3))))
    except ValueError:
        return None
    return None


class Marker(NamedTuple):
    """A snapshot marker: its time, and whether it is ExaWatcher's form."""

    time: dt.datetime
    exawatcher: bool


class MarkerError(ValueError):
    """A ``zzz`` line in a form not known (another locale's ``date``): the message says so."""


def _clock(m: re.Match[str], first: int) -> tuple[int, int, int]:
    """Hours, minutes, seconds from three consecutive groups."""
    return int(m.group(first)), int(m.group(first + 1)), int(m.group(first + 2))


def parse_marker(line: str) -> Marker:
    """A ``zzz`` line (the caller checked the prefix)."""
    if m := _ZZZ_EXA.match(line):
        try:
            when = dt.datetime(int(m.group(3)), int(m.group(1)), int(m.group(2)), *_clock(m, 4))
        except ValueError as exc:
            raise MarkerError(f"impossible date in snapshot marker: {exc}") from None
        return Marker(when, exawatcher=True)
    m = _ZZZ_OSW.match(line)
    if m is None or m.group(1) not in _WEEKDAYS or m.group(2) not in _MONTHS:
        raise MarkerError(
            "snapshot marker not in the English `date` form (zzz ***Mon Jun  1 10:00:00 UTC 2020); "
            "a date in another locale is not guessed"
        )
    try:
        when = dt.datetime(int(m.group(8)), _MONTHS[m.group(2)], int(m.group(3)), *_clock(m, 4))
    except ValueError as exc:
        raise MarkerError(f"impossible date in snapshot marker: {exc}") from None
    if m.group(7) in _UTC_NAMES:
        when = when.replace(tzinfo=dt.UTC)
    return Marker(when, exawatcher=False)
