"""Pure math: two disk snapshots -> one iostat -x row per device (sysstat semantics).

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

Where sysstat would print garbage we do not (see ``baseline``): a device whose 64-bit
counters decrease without looking like sysstat's "removed then inserted again" case is also
treated as re-registered, and an uptime that goes backwards (another boot) starts a new
since-boot report. Both print ~1.8e19-based or 0.00 figures in sysstat.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from racperf_tui.core.diskstats import (
    DeviceCounters,
    DiskSnapshot,
    QueueFacts,
    classify_partitions,
    dm_names as read_dm_names,
    partitions_of,
    read_queue_facts,
    read_snapshot,
    whole_devices_with_stats,
)

#: The column set of `racperf iostat -x` and the keys of --json rows, in order.
COLUMNS: tuple[str, ...] = (
    "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "avgrq-sz", "avgqu-sz",
    "await", "r_await", "w_await", "svctm", "%util",
)

_TICKS_MASK = 0xFFFFFFFF
_WRAP32 = 1 << 32

_NO_DM_NAMES: dict[str, str] = {}

#: All-zero counters: the "previous" sample of a new or re-registered device.
ZERO_COUNTERS = DeviceCounters(0, 0, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)


@dataclass(slots=True)
class IostatRow:
    """One device over one interval. Times in ms, sizes in 512-byte sectors, rates per second.

    Rows of idle devices may be shared between reports: treat rows as read-only.
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
        return (self.r_s, self.w_s, self.rkb_s, self.wkb_s, self.rrqm_s, self.wrqm_s,
                self.avgrq_sz, self.avgqu_sz, self.await_ms, self.r_await_ms,
                self.w_await_ms, self.svctm_ms, self.util_pct)

    def as_dict(self) -> dict[str, float | str]:
        """{"device": ..., "r/s": ..., ...} keyed by COLUMNS (figures rounded as printed)."""
        out: dict[str, float | str] = {"device": self.device}
        for key, value in zip(COLUMNS, self.values()):
            out[key] = round(value, 2)
        return out


@dataclass(slots=True)
class IostatReport:
    """One report: the rows of every device for one interval."""

    wall_time: float
    interval_s: float
    rows: list[IostatRow]
    errors: list[str]
    since_boot: bool = False  # the first report, or the first after uptime went backwards
    root: Path = Path("/")


def compute_row(device: str, ioi: DeviceCounters, ioj: DeviceCounters, itv_cs: int,
                is_partition: bool = False) -> IostatRow:
    """One iostat -x row from current counters ``ioi``, previous ``ioj`` and the interval
    in centiseconds (sysstat's write_ext_stat + compute_ext_disk_stats, same operation order
    so the doubles, and hence the printed digits, are identical).

    A device whose counters went backwards is taken as re-registered (see ``baseline``).
    """
    itv = itv_cs if itv_cs > 0 else 1
    # Unpacking once is much cheaper than ~40 NamedTuple attribute reads (hot path).
    (_, _, name, rd_ios, rd_mrg, rd_sect, rd_ticks, wr_ios, wr_mrg, wr_sect, wr_ticks, _,
     tot_ticks, rq_ticks, dc_ios, _, dc_sect, dc_ticks, fl_ios, _, _) = ioi
    (_, _, _, p_rd_ios, p_rd_mrg, p_rd_sect, p_rd_ticks, p_wr_ios, p_wr_mrg, p_wr_sect,
     p_wr_ticks, _, p_tot_ticks, p_rq_ticks, p_dc_ios, _, p_dc_sect, p_dc_ticks, p_fl_ios, _,
     _) = ioj
    d_rd_ios = rd_ios - p_rd_ios
    d_wr_ios = wr_ios - p_wr_ios
    d_dc_ios = dc_ios - p_dc_ios
    d_rd_sect = rd_sect - p_rd_sect
    d_wr_sect = wr_sect - p_wr_sect
    d_dc_sect = dc_sect - p_dc_sect
    d_rd_mrg = rd_mrg - p_rd_mrg
    d_wr_mrg = wr_mrg - p_wr_mrg
    if (d_rd_ios < 0 or d_wr_ios < 0 or d_dc_ios < 0 or d_rd_sect < 0 or d_wr_sect < 0
            or d_dc_sect < 0 or d_rd_mrg < 0 or d_wr_mrg < 0 or fl_ios < p_fl_ios):
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
        await_ms = ((d_rd_ticks + d_wr_ticks + ((dc_ticks - p_dc_ticks) & _TICKS_MASK))
                    & _TICKS_MASK) / d_nr_ios
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
    if ((ioi.rd_ios + ioi.wr_ios + ioi.dc_ios + ioi.fl_ios)
            < (ioj.rd_ios + ioj.wr_ios + ioj.dc_ios + ioj.fl_ios)
            and (not ioj.rd_sectors or ioi.rd_sectors < ioj.rd_sectors)
            and (not ioj.wr_sectors or ioi.wr_sectors < ioj.wr_sectors)
            and (not ioj.dc_sectors or ioi.dc_sectors < ioj.dc_sectors)):
        return ZERO_COUNTERS
    for cur, prev in ((ioi.rd_ios, ioj.rd_ios), (ioi.wr_ios, ioj.wr_ios),
                      (ioi.dc_ios, ioj.dc_ios), (ioi.rd_sectors, ioj.rd_sectors),
                      (ioi.wr_sectors, ioj.wr_sectors), (ioi.dc_sectors, ioj.dc_sectors),
                      (ioi.rd_merges, ioj.rd_merges), (ioi.wr_merges, ioj.wr_merges)):
        if cur < prev and not _plausible_wrap32(cur, prev):
            return ZERO_COUNTERS
    return ioj


def normalize_device_name(name: str, root: Path = Path("/")) -> str:
    """'/dev/sdb' -> 'sdb'; '/dev/mapper/vg-lv' (a link to ../dm-3 under ROOT) -> 'dm-3'."""
    if name.startswith("/dev/"):
        path = os.path.join(root, name.lstrip("/"))
        if os.path.islink(path):
            return os.path.basename(os.readlink(path))
        return name[len("/dev/"):]
    return name


class IostatSampler:
    """Keeps the previous snapshot and turns each new one into a report.

    ``roots``: None for the live system; a list of root dirs replays one per sample (the
    last one is re-read when exhausted, so a root kept updated by something else works live).

    Which devices, as sysstat decides:

    - default: whole devices (those with ROOT/sys/block/NAME), alphabetical, hiding the
      ones that never did an I/O;
    - ``devices``: only these (whole devices or partitions; 'ALL' = every whole device),
      alphabetical, idle ones too;
    - ``partitions=True`` (``-p ALL``): every line of /proc/diskstats in its order, idle too;
    - ``partitions_of=['sda']`` (``-p sda``): these disks and their sysfs partitions;
    - ``skip_idle`` (``-z``): hide devices without I/O during the interval.
    """

    #: How often (s) sysfs-derived facts (partition map, dm names) are re-read live.
    SYSFS_REFRESH_S = 30.0
    #: How long queue facts are cached (s).
    QUEUE_FACTS_TTL_S = 60.0

    def __init__(self, roots: list[Path] | None = None, *, partitions: bool = False,
                 dm_names: bool = False, devices: list[str] | None = None,
                 skip_idle: bool = False, partitions_of: list[str] | None = None) -> None:
        self._roots = [Path(r) for r in roots] if roots else [Path("/")]
        self._live = not roots
        self.partitions = partitions
        self.dm_names = dm_names
        self.skip_idle = skip_idle
        base_root = self._roots[0]
        self._all_whole = False
        self._listed: list[str] = []
        for name in devices or []:
            if name == "ALL":
                self._all_whole = True
            else:
                self._listed.append(normalize_device_name(name, base_root))
        self._partitions_of = [normalize_device_name(n, base_root) for n in partitions_of or []]
        # sysstat shows never-used devices only once a device or -p is named.
        self.unfiltered = bool(devices) or partitions or bool(partitions_of)
        # sysstat keeps two sample slots per device and fills them alternately; a device
        # missing from a sample leaves its slot as it was. Two dicts do the same.
        self._slots: tuple[dict[str, DeviceCounters], dict[str, DeviceCounters]] = ({}, {})
        self._order: dict[str, None] = {}  # first-seen order (the -p ALL display order)
        self._n_samples = 0
        self._prev_uptime_cs: int | None = None
        self._prev_wall: float | None = None
        self._last_snapshot: DiskSnapshot | None = None
        self._current_root = base_root
        self._partition_cache: dict[str, bool] = {}
        self._listable: set[str] | None = None
        self._partition_cache_root: Path | None = None
        self._partition_cache_time = 0.0
        self._selection_cache: tuple[object, list[str]] | None = None
        self._dm_map: dict[str, str] = {}
        self._dm_map_time = -1e9
        self._queue_cache: dict[str, tuple[float, QueueFacts]] = {}
        # The last row of every device (None: hidden), kept between samples so a sample only
        # recomputes the devices whose line changed (and those that were busy last time).
        self._rows: dict[str, IostatRow | None] = {}
        self._busy: set[str] = set()  # devices whose kept row is not all-zero
        self._rows_key: tuple[object, ...] = ()
        self._selected_before: set[str] = set()
        self._changed_last: set[str] = set()
        self._last_rows: list[IostatRow] = []
        self._row_index: dict[str, int] = {}

    # -- sysfs-derived facts, cached -----------------------------------------------------

    def _is_partition_map(self, snapshot: DiskSnapshot, root: Path) -> dict[str, bool]:
        now = time.monotonic()
        stale = (root != self._partition_cache_root
                 or (self._live and now - self._partition_cache_time > self.SYSFS_REFRESH_S))
        if stale or not snapshot.devices.keys() <= self._partition_cache.keys():
            fresh = classify_partitions(list(snapshot.devices), root)
            if fresh != self._partition_cache:
                # A new object only when it differs: rows kept between samples stay valid.
                self._partition_cache = fresh
            self._listable = whole_devices_with_stats(root)
            self._partition_cache_root = root
            self._partition_cache_time = now
            self._selection_cache = None
        return self._partition_cache

    def _dm_display_map(self, root: Path) -> dict[str, str]:
        now = time.monotonic()
        if now - self._dm_map_time > self.SYSFS_REFRESH_S or not self._live:
            fresh = read_dm_names(root)
            if fresh != self._dm_map:
                self._dm_map = fresh
            self._dm_map_time = now
        return self._dm_map

    def queue_facts(self, name: str) -> QueueFacts:
        """Queue facts (queue_depth, nr_requests, scheduler, rotational) of a device by its
        /proc/diskstats name (``row.kernel_name``), read from the current root's sysfs and
        cached for QUEUE_FACTS_TTL_S seconds."""
        now = time.monotonic()
        cached = self._queue_cache.get(name)
        if cached is not None and now - cached[0] < self.QUEUE_FACTS_TTL_S:
            return cached[1]
        facts = read_queue_facts(name, self._current_root)
        self._queue_cache[name] = (now, facts)
        return facts

    # -- sampling ------------------------------------------------------------------------

    def _next_root(self) -> Path:
        index = min(self._n_samples, len(self._roots) - 1)
        return self._roots[index]

    @property
    def replaying(self) -> bool:
        """True while the next sample reads a root not read before (no need to wait)."""
        return not self._live and self._n_samples < len(self._roots)

    def _selected(self, snapshot: DiskSnapshot, root: Path) -> dict[str, DeviceCounters]:
        """The devices whose counters this report takes, sysstat's way (see the class doc)."""
        devices = snapshot.devices
        if self.partitions:
            if not snapshot.basic_lines:
                return devices
            return {n: c for n, c in devices.items() if c.stat_fields != 4}
        is_part = self._is_partition_map(snapshot, root)
        cache = self._selection_cache
        if cache is not None and cache[0] == devices.keys():
            names = cache[1]
        else:
            names = []
            if not self._listed and not self._partitions_of or self._all_whole:
                listable = self._listable
                names.extend(n for n in devices if not is_part.get(n, False)
                             and (listable is None or n in listable))
            for name in self._listed:
                if self.dm_names and name not in devices:
                    for dm, dm_name in self._dm_display_map(root).items():
                        if dm_name == name:
                            name = dm
                            break
                names.append(name)
            for disk in self._partitions_of:
                names.append(disk)
                names.extend(partitions_of(disk, root))
            names = sorted({n for n in names if n in devices and devices[n].stat_fields != 4})
            self._selection_cache = (set(devices), names)
        return {n: devices[n] for n in names}

    def sample(self) -> IostatReport:
        """Read the next snapshot; the first report covers the time since boot."""
        root = self._next_root()
        self._current_root = root
        previous = self._last_snapshot if self._last_snapshot is not None and \
            self._last_snapshot.root == root else None
        snapshot = read_snapshot(root, previous=previous)
        self._last_snapshot = snapshot
        curr = self._n_samples & 1
        self._n_samples += 1

        # Interval in centiseconds from /proc/uptime, as sysstat's get_interval().
        since_boot = False
        errors = list(snapshot.errors)
        if self._prev_uptime_cs is None:
            since_boot = True
            itv = snapshot.uptime_cs
        elif snapshot.uptime_cs == 0 and self._prev_wall is not None:
            # No uptime (unreadable): fall back on the wall clock.
            itv = round((snapshot.wall_time - self._prev_wall) * 100)
        elif snapshot.uptime_cs < self._prev_uptime_cs:
            # Another boot (or another host's snapshot): a fresh since-boot report.
            since_boot = True
            itv = snapshot.uptime_cs
            errors.append(f"{root}/proc/uptime: uptime went backwards "
                          f"({self._prev_uptime_cs / 100:.2f} -> {snapshot.uptime_cs / 100:.2f} s):"
                          " reporting since boot")
        else:
            itv = snapshot.uptime_cs - self._prev_uptime_cs
        if itv <= 0:
            itv = 1
        self._prev_uptime_cs = snapshot.uptime_cs
        self._prev_wall = snapshot.wall_time

        selected = self._selected(snapshot, root)
        current, before = self._slots[curr], self._slots[curr ^ 1]
        is_part = (self._is_partition_map(snapshot, root) if self.partitions
                   else self._partition_cache)
        dm_map = self._dm_display_map(root) if self.dm_names else _NO_DM_NAMES
        rows_map = self._rows
        rows_key = (id(dm_map), id(is_part))
        incremental = (not since_boot and snapshot.changed is not None
                       and rows_key == self._rows_key
                       and self._selected_before == selected.keys())
        self._rows_key = rows_key
        ordered: Iterable[str] = self._order if self.partitions else selected
        order_grew = False
        if incremental:
            # Same devices as last time. A line unchanged over the last two samples left
            # the same counters object in both slots and an all-zero row: only what moved
            # now or last time is stored and recomputed (the slots stay as sysstat's).
            changed = snapshot.changed if selected is snapshot.devices else \
                snapshot.changed & selected.keys()  # type: ignore[operator]
            # What changed last time is still one slot behind: it is stored (and its row
            # recomputed, to zeros) once more.
            todo: Iterable[str] = changed | self._changed_last | self._busy  # type: ignore[operator]
            self._changed_last = changed  # type: ignore[assignment]
            for name in todo:
                counters = selected.get(name)
                if counters is not None:
                    current[name] = counters
        else:
            if since_boot:
                before.clear()
            current.update(selected)
            if self.partitions and not selected.keys() <= self._order.keys():
                self._order.update(dict.fromkeys(selected))  # new devices go last, as sysstat
            self._selected_before = set(selected)
            self._changed_last = self._selected_before
            rows_map.clear()
            self._busy.clear()
            order_grew = True
            todo = selected
        busy = self._busy
        unfiltered = self.unfiltered
        skip_idle = self.skip_idle
        for name in list(todo):
            ioi = selected.get(name)
            if ioi is None:
                rows_map[name] = None
                busy.discard(name)
                continue
            ioj = before.get(name, ZERO_COUNTERS)
            row: IostatRow | None
            if not unfiltered and not (ioi.rd_ios or ioi.wr_ios or ioi.dc_ios or ioi.fl_ios):
                row = None  # never did an I/O: sysstat hides it unless named
            elif ioi is ioj or ioi == ioj:
                row = None if skip_idle else IostatRow(
                    dm_map.get(name, name), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                    0.0, 0.0, 0.0, is_part.get(name, False), name)
                busy.discard(name)
                rows_map[name] = row
                continue
            elif skip_idle and (ioi.rd_ios == ioj.rd_ios and ioi.wr_ios == ioj.wr_ios
                                and ioi.dc_ios == ioj.dc_ios and ioi.fl_ios == ioj.fl_ios):
                row = None
            else:
                row = compute_row(dm_map.get(name, name), ioi, ioj, itv, is_part.get(name, False))
            rows_map[name] = row
            if row is None:
                busy.discard(name)
            else:
                busy.add(name)
        rows = self._assemble(ordered, incremental and not order_grew, todo)
        if since_boot and snapshot.uptime_cs == 0:
            rows = []  # no uptime, no since-boot interval: no figures rather than wrong ones
        return IostatReport(snapshot.wall_time, itv / 100.0, rows, errors, since_boot, root)

    def _assemble(self, ordered: Iterable[str], patchable: bool, todo: Iterable[str]) -> list[IostatRow]:
        """The report's rows in display order. When only rows' contents changed (no device
        appeared, vanished or was hidden), the previous list is copied and patched."""
        rows_map = self._rows
        index = self._row_index
        if patchable:
            rows = self._last_rows.copy()
            for name in todo:
                row = rows_map.get(name)
                position = index.get(name)
                if (row is None) != (position is None):
                    break  # visibility changed: rebuild
                if position is not None:
                    rows[position] = row  # type: ignore[assignment]
            else:
                self._last_rows = rows
                return rows.copy()
        names = [name for name in ordered if rows_map.get(name) is not None]
        rows = list(map(rows_map.__getitem__, names))  # type: ignore[arg-type]
        self._row_index = dict(zip(names, range(len(names))))
        self._last_rows = rows
        return rows.copy()
