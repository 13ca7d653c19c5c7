"""What reading a saved iostat output produces: reports, and problems named by file and line."""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from typing import NamedTuple

from racperf_tui.core.disks.iostat_math import COLUMNS

#: a row's figures as JSON members, one %-format for all 13 (a call per figure costs 3x)
_MEMBERS = [f", {json.dumps(key)}: %.2f".replace("%util", "%%util") for key in COLUMNS]
_JSON_FIGURES = "".join(_MEMBERS)
#: ... with the figure at index i null: a layout lacks the same one in every row (svctm in 12.x)
_ONE_NULL = tuple(
    "".join(member.replace("%.2f", "null") if i == index else member for i, member in enumerate(_MEMBERS))
    for index in range(len(_MEMBERS))
)
_NAN = float("nan")


class HistoryRow(NamedTuple):
    """One device in one report, in racperf's column set (iostat_math.COLUMNS order).

    A figure the file does not carry and cannot be derived from what it carries is None
    (e.g. svctm from sysstat 12, r_await from sysstat 8): nothing is invented. A NamedTuple:
    an archive makes millions.
    """

    device: str
    values: tuple[float | None, ...]

    def json_text(self, extra: str = "") -> str:
        """:meth:`as_dict` as strict JSON, written directly (json.dumps of a dict per row
        costs 5x: an archive has millions); ``extra`` is more members (', "k": v')."""
        values = self.values
        form = _JSON_FIGURES
        if None in values:
            index = values.index(None)
            if None in values[index + 1 :]:
                values = tuple(_NAN if value is None else value for value in values)
            else:
                form, values = _ONE_NULL[index], values[:index] + values[index + 1 :]
        figures = form % values  # 2 decimals, as as_dict's round(value, 2)
        if "nan" in figures or "inf" in figures:  # none, or not finite: null (no key holds these)
            figures = figures.replace("-inf", "null").replace("inf", "null").replace("nan", "null")
        return f'{{"device": {json.dumps(self.device)}{figures}{extra}}}'

    def as_dict(self) -> dict[str, float | str | None]:
        out: dict[str, float | str | None] = {"device": self.device}
        for key, value in zip(COLUMNS, self.values):
            out[key] = None if value is None else round(value, 2)
        return out


@dataclass
class HistoryReport:
    """One iostat report as the file has it.

    ``time`` is the report's own time (its ``-t`` line, or its snapshot marker's time plus
    the interval times its index), None when the file says nothing of it. ``interval_s`` is
    None for a since-boot report (the file does not say how long the node had been up) and
    where no two times are known. ``since_boot`` marks the first report of each iostat
    invocation (a banner or a snapshot marker starts one).
    """

    source: str
    line: int
    host: str
    time: dt.datetime | None
    interval_s: float | None
    since_boot: bool
    rows: list[HistoryRow] = field(default_factory=list)

    def json_text(self, extras: list[str] | None = None) -> str:
        """:meth:`as_dict` as one line of strict JSON (the same text strict_json.dumps makes);
        ``extras``: more members for each row (', "saturation": {...}')."""
        head = json.dumps(self.head_dict(), allow_nan=False)
        rows = ", ".join(
            row.json_text(extras[index] if extras is not None else "") for index, row in enumerate(self.rows)
        )
        return f'{head[:-1]}, "devices": [{rows}]}}'

    def head_dict(self) -> dict[str, object]:
        interval = self.interval_s if self.interval_s is not None and math.isfinite(self.interval_s) else None
        return {
            "time": None if self.time is None else self.time.isoformat(timespec="seconds"),
            "host": self.host,
            "interval_s": None if interval is None else round(interval, 2),
            "since_boot": self.since_boot,
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "time": None if self.time is None else self.time.isoformat(timespec="seconds"),
            "host": self.host,
            "interval_s": None if self.interval_s is None else round(self.interval_s, 2),
            "since_boot": self.since_boot,
            "devices": [row.as_dict() for row in self.rows],
        }


@dataclass(frozen=True)
class Problem:
    """A line or a file that was not read: where, and why. Reading goes on after it."""

    source: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.message}" if self.line else f"{self.source}: {self.message}"
