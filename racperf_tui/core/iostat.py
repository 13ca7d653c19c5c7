"""Pure math: two disk snapshots -> one iostat -x row per device (sysstat semantics).

INTERFACE STUB (owned by the iostat helper; keep the names, fill the bodies).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from racperf_tui.core.diskstats import DiskSnapshot

#: The column set of `racperf iostat -x` and the keys of --json rows, in order.
COLUMNS: tuple[str, ...] = (
    "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "avgrq-sz", "avgqu-sz",
    "await", "r_await", "w_await", "svctm", "%util",
)


@dataclass(slots=True)
class IostatRow:
    """One device over one interval. Times in ms, sizes in 512-byte sectors, rates per second."""

    device: str  # display name (dm names mapped when asked)
    r_s: float
    w_s: float
    rkb_s: float
    wkb_s: float
    rrqm_s: float
    wrqm_s: float
    avgrq_sz: float
    avgqu_sz: float
    await_ms: float
    r_await_ms: float
    w_await_ms: float
    svctm_ms: float
    util_pct: float
    is_partition: bool = False

    def as_dict(self) -> dict[str, float | str]:
        """{"device": ..., "r/s": ..., ...} keyed by COLUMNS."""
        raise NotImplementedError


@dataclass(slots=True)
class IostatReport:
    """One report: the rows of every device for one interval."""

    wall_time: float
    interval_s: float
    rows: list[IostatRow]
    errors: list[str]


class IostatSampler:
    """Keeps the previous snapshot and turns each new one into a report.

    ``roots``: None for the live system; a list of root dirs replays one per sample (the
    last one is re-read when exhausted, so a root kept updated by something else works live).
    """

    def __init__(self, roots: list[Path] | None = None, *, partitions: bool = False,
                 dm_names: bool = False, devices: list[str] | None = None,
                 skip_idle: bool = False) -> None:
        raise NotImplementedError

    def sample(self) -> IostatReport:
        """Read the next snapshot; the first report covers the time since boot."""
        raise NotImplementedError
