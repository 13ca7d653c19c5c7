"""What reading a saved iostat output produces: reports, and problems named by file and line."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import NamedTuple

from racperf_tui.core.disks.iostat_math import COLUMNS


class HistoryRow(NamedTuple):
    """One device in one report, in racperf's column set (iostat_math.COLUMNS order).

    A figure the file does not carry and cannot be derived from what it carries is None
    (e.g. svctm from sysstat 12, r_await from sysstat 8): nothing is invented. A NamedTuple:
    an archive makes millions.
    """

    device: str
    values: tuple[float | None, ...]

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
