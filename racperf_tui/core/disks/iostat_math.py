"""Pure math: two disk snapshots -> one iostat -x row per device (sysstat semantics).

No reading, no state: core/disks/iostat_sampler.py's IostatSampler reads the files, keeps the previous
snapshot and the intervals, and calls these.

The figures are those of sysstat 12.6's ``iostat -x`` (checked against its binary and its
published test outputs), in the column set of the older sysstat that DBAs know:

- rates are deltas over an interval taken from /proc/uptime in centiseconds, as
  ``S_VALUE(prev, cur, itv) = (cur - prev) / itv * 100``; the first report covers the time
  since boot (previous counters all zero);
- await = (rd_ticks + wr_ticks + dc_ticks) / (rd_ios + wr_ios + dc_ios) deltas: discards
  count, flushes do not (sysstat 12's "origin flush operations are counted as writes");
- avgrq-sz = (rd_sectors + wr_sectors + dc_sectors) / (same I/O count), in 512-byte sectors;
- avgqu-sz = delta rq_ticks / itv / 1000 (sysstat 12's aqu-sz);
- svctm = delta io_ticks / delta I/Os (the formula sysstat used before 12.1.2 removed it);
- %util = delta io_ticks / itv / 10, not capped: sysstat 12.6 prints more than 100 when the
  kernel's io_ticks ran ahead of /proc/uptime (as it does on some kernels);
- tick counters are 32-bit in the kernel and wrap: their deltas are taken modulo 2**32,
  exactly as sysstat's ``unsigned int`` arithmetic does.

Two paths compute the same doubles: line by line (DeviceCounters, ``compute_row``) for
any input, and, in the steady state (same devices as the previous sample, a file as kernels
write it), the column path (``column_figures``): every row computed at once with numpy from
the counters' columns, element by element in compute_row's operation order
(tests/test_iostat_vectorised.py holds them bit-identical, and to sysstat's printed figures).

Where sysstat would print garbage we do not (see ``baseline``): a device whose 64-bit
counters decrease without looking like sysstat's "removed then inserted again" case is also
treated as re-registered, and an uptime that goes backwards (another boot) starts a new
since-boot report. Both print ~1.8e19-based or 0.00 figures in sysstat.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

from racperf_tui.core.disks.diskstats import COLUMN_FIELDS, DeviceCounters

#: The column set of `racperf iostat -x` and the keys of --json rows, in order.
COLUMNS: tuple[str, ...] = (
    "r/s",
    "w/s",
    "rkB/s",
    "wkB/s",
    "rrqm/s",
    "wrqm/s",
    "avgrq-sz",
    "avgqu-sz",
    "await",
    "r_await",
    "w_await",
    "svctm",
    "%util",
)

_TICKS_MASK = 0xFFFFFFFF
_WRAP32 = 1 << 32

#: All-zero counters: the "previous" sample of a new or re-registered device.
ZERO_COUNTERS = DeviceCounters(0, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

# Rows of DiskstatsColumns.counters, by name.
(
    _RD_IOS,
    _RD_MRG,
    _RD_SECT,
    _RD_TICKS,
    _WR_IOS,
    _WR_MRG,
    _WR_SECT,
    _WR_TICKS,
    _TOT_TICKS,
    _RQ_TICKS,
    _DC_IOS,
    _DC_SECT,
    _DC_TICKS,
    _FL_IOS,
) = range(len(COLUMN_FIELDS))
#: Counters whose decrease means a re-registered device or a wrap (compute_row decides).
_MONOTONIC_ROWS = [_RD_IOS, _WR_IOS, _DC_IOS, _RD_SECT, _WR_SECT, _DC_SECT, _RD_MRG, _WR_MRG, _FL_IOS]
#: The per-second rates' counters, in COLUMNS order (r/s w/s rkB/s wkB/s rrqm/s wrqm/s).
_RATE_ROWS = [_RD_IOS, _WR_IOS, _RD_SECT, _WR_SECT, _RD_MRG, _WR_MRG]
#: Beyond this, int -> double is not exact: Python's int / int (correctly rounded) and a
#: float64 division could differ in the last bit, so such rows take compute_row.
_EXACT_FLOAT_INT = 1 << 53


class IostatRow(NamedTuple):
    """One device over one interval. Times in ms, sizes in 512-byte sectors, rates per second.

    A NamedTuple, read-only: thousands are built per sample, and a tuple is the cheapest
    Python object that has named fields. Rows of unchanged devices are shared between
    reports.
    """

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
    kernel_name: str = ""  # the /proc/diskstats name (for sysfs look-ups when device is a dm name)

    def values(self) -> tuple[float, ...]:
        """The figures in COLUMNS order."""
        return self[1:14]

    def as_dict(self) -> dict[str, float | str]:
        """{"device": ..., "r/s": ..., ...} keyed by COLUMNS (figures rounded as printed)."""
        out: dict[str, float | str] = {"device": self.device}
        for key, value in zip(COLUMNS, self.values()):
            out[key] = round(value, 2)
        return out


class IostatReport:
    """One report: the rows of every device for one interval.

    ``rows`` may be made on first access: the sampler's column path computes every figure
    with numpy and builds the Python row objects (about 0.5 us per device whose figures
    changed) only when a consumer asks for them.
    """

    __slots__ = ("wall_time", "interval_s", "_rows", "errors", "since_boot", "root", "_make_rows")

    def __init__(
        self,
        wall_time: float,
        interval_s: float,
        rows: list[IostatRow] | None,
        errors: list[str],
        since_boot: bool = False,
        root: Path = Path("/"),
        make_rows: Callable[[], list[IostatRow]] | None = None,
    ) -> None:
        """``rows``, or None and ``make_rows`` to build them on first access."""
        if rows is None and make_rows is None:
            raise ValueError("IostatReport needs rows or make_rows")
        self.wall_time = wall_time
        self.interval_s = interval_s
        self._rows = rows
        self.errors = errors
        self.since_boot = since_boot  # the first report, or the first after uptime went back
        self.root = root
        self._make_rows = make_rows

    @property
    def rows(self) -> list[IostatRow]:
        """One row per shown device, in display order."""
        if self._rows is None:
            self._rows = self._make_rows()  # type: ignore[misc]
            self._make_rows = None
        return self._rows

    @rows.setter
    def rows(self, rows: list[IostatRow]) -> None:
        self._rows = rows
        self._make_rows = None

    def _key(self) -> tuple[object, ...]:
        return (self.wall_time, self.interval_s, self.rows, self.errors, self.since_boot, self.root)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IostatReport):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def __repr__(self) -> str:
        return (
            f"IostatReport(wall_time={self.wall_time!r}, interval_s={self.interval_s!r}, "
            f"rows=<{len(self.rows)} rows>, errors={self.errors!r}, "
            f"since_boot={self.since_boot!r}, root={self.root!r})"
        )


def compute_row(
    device: str, ioi: DeviceCounters, ioj: DeviceCounters, itv_cs: int, is_partition: bool = False
) -> IostatRow:
    """One iostat -x row from current counters ``ioi``, previous ``ioj`` and the interval
    in centiseconds (sysstat's write_ext_stat + compute_ext_disk_stats, same operation order
    so the doubles, and hence the printed digits, are identical).

    A device whose counters went backwards is taken as re-registered (see ``baseline``).
    """
    itv = itv_cs if itv_cs > 0 else 1
    # Unpacking once is much cheaper than ~40 NamedTuple attribute reads (hot path).
    (
        _,
        _,
        name,
        rd_ios,
        rd_mrg,
        rd_sect,
        rd_ticks,
        wr_ios,
        wr_mrg,
        wr_sect,
        wr_ticks,
        _,
        tot_ticks,
        rq_ticks,
        dc_ios,
        _,
        dc_sect,
        dc_ticks,
        fl_ios,
        _,
        _,
    ) = ioi
    (
        _,
        _,
        _,
        p_rd_ios,
        p_rd_mrg,
        p_rd_sect,
        p_rd_ticks,
        p_wr_ios,
        p_wr_mrg,
        p_wr_sect,
        p_wr_ticks,
        _,
        p_tot_ticks,
        p_rq_ticks,
        p_dc_ios,
        _,
        p_dc_sect,
        p_dc_ticks,
        p_fl_ios,
        _,
        _,
    ) = ioj
    d_rd_ios = rd_ios - p_rd_ios
    d_wr_ios = wr_ios - p_wr_ios
    d_dc_ios = dc_ios - p_dc_ios
    d_rd_sect = rd_sect - p_rd_sect
    d_wr_sect = wr_sect - p_wr_sect
    d_dc_sect = dc_sect - p_dc_sect
    d_rd_mrg = rd_mrg - p_rd_mrg
    d_wr_mrg = wr_mrg - p_wr_mrg
    if (
        d_rd_ios < 0
        or d_wr_ios < 0
        or d_dc_ios < 0
        or d_rd_sect < 0
        or d_wr_sect < 0
        or d_dc_sect < 0
        or d_rd_mrg < 0
        or d_wr_mrg < 0
        or fl_ios < p_fl_ios
    ):
        base = baseline(ioi, ioj)
        if base is not ioj:
            return compute_row(device, ioi, base, itv_cs, is_partition)
        # A 32-bit kernel's unsigned long wrapped (sysstat built for it subtracts mod 2**32).
        d_rd_ios %= _WRAP32
        d_wr_ios %= _WRAP32
        d_dc_ios %= _WRAP32
        d_rd_sect %= _WRAP32
        d_wr_sect %= _WRAP32
        d_dc_sect %= _WRAP32
        d_rd_mrg %= _WRAP32
        d_wr_mrg %= _WRAP32
    d_rd_ticks = (rd_ticks - p_rd_ticks) & _TICKS_MASK
    d_wr_ticks = (wr_ticks - p_wr_ticks) & _TICKS_MASK
    d_tot_ticks = (tot_ticks - p_tot_ticks) & _TICKS_MASK
    d_nr_ios = d_rd_ios + d_wr_ios + d_dc_ios
    if d_nr_ios > 0:
        await_ms = ((d_rd_ticks + d_wr_ticks + ((dc_ticks - p_dc_ticks) & _TICKS_MASK)) & _TICKS_MASK) / d_nr_ios
        avgrq_sz = (d_rd_sect + d_wr_sect + d_dc_sect) / d_nr_ios
        svctm_ms = d_tot_ticks / d_nr_ios
    else:
        await_ms = avgrq_sz = svctm_ms = 0.0
    return IostatRow(
        device,
        d_rd_ios / itv * 100,
        d_wr_ios / itv * 100,
        d_rd_sect / itv * 100 / 2,
        d_wr_sect / itv * 100 / 2,
        d_rd_mrg / itv * 100,
        d_wr_mrg / itv * 100,
        avgrq_sz,
        ((rq_ticks - p_rq_ticks) & _TICKS_MASK) / itv * 100 / 1000.0,
        await_ms,
        d_rd_ticks / d_rd_ios if d_rd_ios else 0.0,
        d_wr_ticks / d_wr_ios if d_wr_ios else 0.0,
        svctm_ms,
        d_tot_ticks / itv * 100 / 10.0,
        is_partition,
        name,
    )


def _plausible_wrap32(cur: int, prev: int) -> bool:
    """A decrease that a 32-bit counter wrapping explains (prev near 2**32, small step)."""
    return prev <= 0xFFFFFFFF and (cur - prev) % _WRAP32 < (1 << 31)


def baseline(ioi: DeviceCounters, ioj: DeviceCounters) -> DeviceCounters:
    """The previous counters to subtract: ``ioj``, or zero for a re-registered device.

    First sysstat's own test ("removed then inserted again": fewer I/Os in total and every
    non-zero sector counter lower). Then, beyond sysstat: any other decrease of a 64-bit
    counter that is not a 32-bit wrap also means a new device, where sysstat would print
    rates near 1.8e19.
    """
    if (
        (ioi.rd_ios + ioi.wr_ios + ioi.dc_ios + ioi.fl_ios) < (ioj.rd_ios + ioj.wr_ios + ioj.dc_ios + ioj.fl_ios)
        and (not ioj.rd_sectors or ioi.rd_sectors < ioj.rd_sectors)
        and (not ioj.wr_sectors or ioi.wr_sectors < ioj.wr_sectors)
        and (not ioj.dc_sectors or ioi.dc_sectors < ioj.dc_sectors)
    ):
        return ZERO_COUNTERS
    for cur, prev in (
        (ioi.rd_ios, ioj.rd_ios),
        (ioi.wr_ios, ioj.wr_ios),
        (ioi.dc_ios, ioj.dc_ios),
        (ioi.rd_sectors, ioj.rd_sectors),
        (ioi.wr_sectors, ioj.wr_sectors),
        (ioi.dc_sectors, ioj.dc_sectors),
        (ioi.rd_merges, ioj.rd_merges),
        (ioi.wr_merges, ioj.wr_merges),
    ):
        if cur < prev and not _plausible_wrap32(cur, prev):
            return ZERO_COUNTERS
    return ioj


class ColumnFigures(NamedTuple):
    """The figures of every device of a column sample."""

    values: np.ndarray  # float64, (len(COLUMNS), devices): each device's figures, COLUMNS order
    visible: np.ndarray  # bool per device: in the report (sysstat's filters)
    odd: np.ndarray  # bool per device: its figures are compute_row's (counters went back, too big)


def column_figures(cur: np.ndarray, prev: np.ndarray, itv: int, *, unfiltered: bool, skip_idle: bool) -> ColumnFigures:
    """compute_row for every device at once: ``cur`` and ``prev`` are the counters
    (COLUMN_FIELDS rows, one column per device, int64) of this sample and the previous one,
    ``itv`` the interval in centiseconds. Each double is compute_row's (same formulas, same
    operation order, element by element), except for the ``odd`` devices, whose values are
    not to be used: their rows are compute_row's own. ``unfiltered``: never-used devices
    are shown too; ``skip_idle`` (-z): devices without I/O in the interval are not."""
    delta = cur - prev
    n_rows = delta.shape[1]
    ios = delta[_RD_IOS] | delta[_WR_IOS] | delta[_DC_IOS] | delta[_FL_IOS]
    visible = np.ones(n_rows, bool) if unfiltered else (cur[_RD_IOS] | cur[_WR_IOS] | cur[_DC_IOS] | cur[_FL_IOS]) != 0
    if skip_idle:
        visible &= ios != 0
    # Counters that went backwards (re-registered device, 32-bit wrap) or too big for
    # exact doubles: those few rows are compute_row's. (Whole-array checks first: the
    # per-device ones are rarely needed.)
    monotonic = delta[_MONOTONIC_ROWS]
    odd = (monotonic < 0).any(axis=0) if int(monotonic.min(initial=0)) < 0 else np.zeros(n_rows, bool)
    if int(cur.max(initial=0)) >= _EXACT_FLOAT_INT // 4:
        odd |= (cur >= _EXACT_FLOAT_INT).any(axis=0) | (
            cur[_RD_SECT] + cur[_WR_SECT] + cur[_DC_SECT] >= _EXACT_FLOAT_INT
        )

    mask32 = 0xFFFFFFFF
    rd_ticks = delta[_RD_TICKS] & mask32
    wr_ticks = delta[_WR_TICKS] & mask32
    tot_ticks = delta[_TOT_TICKS] & mask32
    nr_ios = delta[_RD_IOS] + delta[_WR_IOS] + delta[_DC_IOS]
    values = np.zeros((len(COLUMNS), n_rows))
    rates = values[:6]
    np.divide(delta[_RATE_ROWS], itv, out=rates)  # d / itv * 100 (/ 2 for kB)
    rates *= 100
    rates[2:4] /= 2
    has_ios = nr_ios > 0
    np.divide(delta[_RD_SECT] + delta[_WR_SECT] + delta[_DC_SECT], nr_ios, out=values[6], where=has_ios)
    np.divide(delta[_RQ_TICKS] & mask32, itv, out=values[7])
    values[7] *= 100
    values[7] /= 1000.0
    np.divide((rd_ticks + wr_ticks + (delta[_DC_TICKS] & mask32)) & mask32, nr_ios, out=values[8], where=has_ios)
    np.divide(rd_ticks, delta[_RD_IOS], out=values[9], where=delta[_RD_IOS] > 0)
    np.divide(wr_ticks, delta[_WR_IOS], out=values[10], where=delta[_WR_IOS] > 0)
    np.divide(tot_ticks, nr_ios, out=values[11], where=has_ios)
    np.divide(tot_ticks, itv, out=values[12])
    values[12] *= 100
    values[12] /= 10.0

    return ColumnFigures(values, visible, odd)
