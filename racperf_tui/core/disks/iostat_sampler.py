"""The iostat sampler: reads /proc/diskstats and /proc/uptime under a root each sample,
keeps the previous snapshot (sysstat's two alternating slots per device), the interval from
the uptime, which devices a report shows (sysstat's selection rules) and the sysfs facts
behind them, and turns each new snapshot into a report with core/disks/iostat_math.py.

The figures are those of sysstat 12.6's ``iostat -x`` (core/disks/iostat_math.py says how).
``IostatRow``, ``IostatReport`` and ``COLUMNS`` are iostat_math's, importable from here too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import numpy as np

from racperf_tui.core.disks.diskstats import (
    DeviceCounters,
    DiskSnapshot,
    DiskstatsColumns,
    QueueFacts,
    RawSample,
    classify_partitions,
    parse_diskstats,
    parse_diskstats_columns,
    partitions_of,
    read_queue_facts,
    read_raw,
    snapshot_from_raw,
    whole_devices_with_stats,
)
from racperf_tui.core.disks.diskstats import (
    dm_names as read_dm_names,
)
from racperf_tui.core.disks.iostat_math import (
    COLUMNS,
    ZERO_COUNTERS,
    IostatReport,
    IostatRow,
    column_figures,
    compute_row,
)

__all__ = ["COLUMNS", "IostatReport", "IostatRow", "IostatSampler", "compute_row", "normalize_device_name"]

_NO_DM_NAMES: dict[str, str] = {}


@dataclass(slots=True, eq=False)
class _ColumnView:
    """The devices a report shows, in display order, as columns of a DiskstatsColumns:
    built once for a device list, partition map, dm names and options, reused after."""

    key: tuple[object, ...]
    names_list: list[str]  # the DiskstatsColumns.names it was built for
    names: list[str]  # kernel names of the shown devices, display order
    index: np.ndarray  # their columns
    identity: bool  # index is 0..n-1: no gather needed
    display: np.ndarray  # object arrays and lists of the same: display names, ...
    display_list: list[str]
    partition: np.ndarray  # ... is_partition flags, ...
    partition_list: list[bool]
    kernel: np.ndarray  # ... kernel names
    selected: frozenset[str]


def normalize_device_name(name: str, root: Path = Path("/")) -> str:
    """'/dev/sdb' -> 'sdb'; '/dev/mapper/vg-lv' (a link to ../dm-3 under ROOT) -> 'dm-3'."""
    if name.startswith("/dev/"):
        path = os.path.join(root, name.lstrip("/"))
        if os.path.islink(path):
            return os.path.basename(os.readlink(path))
        return name[len("/dev/") :]
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

    Speed: a sample whose devices are the previous sample's takes the column path (about
    1 ms for 2,000 devices, rows made on first access); the first sample, one after a
    device appeared or vanished, and any file the column parser declines go line by line
    (about 10 us a device), each path leaving the other the state it needs.
    """

    #: How often (s) sysfs-derived facts (partition map, dm names) are re-read live.
    SYSFS_REFRESH_S = 30.0
    #: How long queue facts are cached (s).
    QUEUE_FACTS_TTL_S = 60.0

    def __init__(
        self,
        roots: list[Path] | None = None,
        *,
        partitions: bool = False,
        dm_names: bool = False,
        devices: list[str] | None = None,
        skip_idle: bool = False,
        partitions_of: list[str] | None = None,
        use_columns: bool = True,
    ) -> None:
        """``use_columns=False``: never the column path (numpy), only the line-by-line one
        (the reference the column path is tested against)."""
        self.use_columns = use_columns
        #: Samples taken by the column path so far (the others went line by line).
        self.column_samples = 0
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
        self._dm_map_root: Path | None = None
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
        # The column path (see _rows_from_columns): the last parse, the view it was shown
        # through, the rows and figures of that view, and what the line path needs to take
        # over (the last two column samples).
        self._last_columns: DiskstatsColumns | None = None
        self._view: _ColumnView | None = None
        # The last rows made for the view, and their figures (NaN: none).
        self._row_cache: tuple[_ColumnView, list[IostatRow | None], np.ndarray] | None = None
        self._stub_devices: tuple[list[str] | None, dict[str, DeviceCounters]] = (None, {})
        self._last_selection: frozenset[str] | None = None
        self._columns_run: tuple[_ColumnView, DiskstatsColumns, DiskstatsColumns, int] | None = None

    # -- sysfs-derived facts, cached -----------------------------------------------------

    def _is_partition_map(self, devices: Mapping[str, object], root: Path) -> dict[str, bool]:
        now = time.monotonic()
        stale = root != self._partition_cache_root or (
            self._live and now - self._partition_cache_time > self.SYSFS_REFRESH_S
        )
        if stale or not devices.keys() <= self._partition_cache.keys():
            fresh = classify_partitions(list(devices), root)
            if fresh != self._partition_cache:
                # A new object only when it differs: rows kept between samples stay valid.
                self._partition_cache = fresh
            self._listable = whole_devices_with_stats(root)
            self._partition_cache_root = root
            self._partition_cache_time = now
            self._selection_cache = None
        return self._partition_cache

    def _dm_display_map(self, root: Path) -> dict[str, str]:
        """dm-N -> name of ROOT, re-read for each new root (a replay) and every
        SYSFS_REFRESH_S seconds (the live system, or one root kept updated: the same few
        reads of sys/block and dev/mapper every sample were a tenth of a sample's cost)."""
        now = time.monotonic()
        if root != self._dm_map_root or now - self._dm_map_time > self.SYSFS_REFRESH_S:
            fresh = read_dm_names(root)
            if fresh != self._dm_map:
                self._dm_map = fresh
            self._dm_map_time = now
            self._dm_map_root = root
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
        is_part = self._is_partition_map(devices, root)
        cache = self._selection_cache
        if cache is not None and cache[0] == devices.keys():
            names = cache[1]
        else:
            names = []
            if not self._listed and not self._partitions_of or self._all_whole:
                listable = self._listable
                names.extend(n for n in devices if not is_part.get(n, False) and (listable is None or n in listable))
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

    def sample(self, raw: RawSample | None = None) -> IostatReport:
        """Read the next snapshot; the first report covers the time since boot. ``raw``: the
        files as already read elsewhere (another node's, over SSH), laid out under the root
        for everything else (sysfs): not written to disk and read back every sample."""
        root = self._next_root()
        self._current_root = root
        if raw is None:
            raw = read_raw(root)
        # The previous sample's columns, whichever root it came from (sysstat's slots do
        # not care either; the parse only reuses what it re-checks).
        last_columns = self._last_columns
        columns = (
            parse_diskstats_columns(raw.diskstats, last_columns)
            if raw.diskstats is not None and self.use_columns
            else None
        )
        self._last_columns = columns
        curr = self._n_samples & 1
        self._n_samples += 1

        # Interval in centiseconds from /proc/uptime, as sysstat's get_interval().
        since_boot = False
        notes: list[str] = []  # reported after the files' own errors
        if self._prev_uptime_cs is None:
            since_boot = True
            itv = raw.uptime_cs
        elif raw.uptime_cs == 0 and self._prev_wall is not None:
            # No uptime (unreadable): fall back on the wall clock.
            itv = round((raw.wall_time - self._prev_wall) * 100)
        elif raw.uptime_cs < self._prev_uptime_cs:
            # Another boot (or another host's snapshot): a fresh since-boot report.
            since_boot = True
            itv = raw.uptime_cs
            notes.append(
                f"{root}/proc/uptime: uptime went backwards "
                f"({self._prev_uptime_cs / 100:.2f} -> {raw.uptime_cs / 100:.2f} s):"
                " reporting since boot"
            )
        else:
            itv = raw.uptime_cs - self._prev_uptime_cs
        if itv <= 0:
            itv = 1
        self._prev_uptime_cs = raw.uptime_cs
        self._prev_wall = raw.wall_time

        if columns is not None and last_columns is not None and not since_boot and columns.names is last_columns.names:
            make_rows = self._rows_from_columns(columns, last_columns, root, itv, curr)
            if make_rows is not None:
                self.column_samples += 1
                return IostatReport(raw.wall_time, itv / 100.0, None, raw.errors + notes, False, root, make_rows)
        return self._sample_lines(raw, curr, itv, since_boot, notes)

    # -- the steady state: whole columns at once ---------------------------------------------

    def _partition_map_stale(self, root: Path) -> bool:
        """Would _is_partition_map re-read sysfs now (other than for unknown devices)?"""
        return root != self._partition_cache_root or (
            self._live and time.monotonic() - self._partition_cache_time > self.SYSFS_REFRESH_S
        )

    def _column_view(self, columns: DiskstatsColumns, root: Path) -> _ColumnView | None:
        """Which columns the report shows, in which order, under which names (cached)."""
        names = columns.names
        view = self._view
        if view is not None and view.names_list is names and not self._partition_map_stale(root):
            is_part = self._partition_cache
        else:
            if self._stub_devices[0] is not names:
                self._stub_devices = (names, dict.fromkeys(names, ZERO_COUNTERS))
            is_part = self._is_partition_map(self._stub_devices[1], root)
        dm_map = self._dm_display_map(root) if self.dm_names else _NO_DM_NAMES
        # The sysfs facts are new objects only when they changed (see _is_partition_map).
        key = (
            id(names),
            id(is_part),
            None if self.partitions else id(self._listable),
            id(dm_map),
            self.partitions,
            root,
        )
        if view is not None and view.key == key:
            return view
        stub = self._stub_devices[1] if self._stub_devices[0] is names else dict.fromkeys(names, ZERO_COUNTERS)
        if self.partitions:
            if not stub.keys() <= self._order.keys():
                return None  # a device not seen before: the line path orders it
            shown = [n for n in self._order if n in stub]
        else:
            selected = self._selected(DiskSnapshot(0.0, 0.0, stub, root=root), root)
            shown = list(selected)
            is_part = self._partition_cache
            key = (id(names), id(is_part), id(self._listable), id(dm_map), self.partitions, root)
        position = dict(zip(names, range(len(names))))
        index = np.array([position[n] for n in shown], dtype=np.intp)
        display = [dm_map.get(n, n) for n in shown]
        partition = [is_part.get(n, False) for n in shown]
        identity = bool(len(index) == len(names) and (index == np.arange(len(names))).all())
        view = _ColumnView(
            key,
            names,
            shown,
            index,
            identity,
            np.array(display, dtype=object),
            display,
            np.array(partition, dtype=object),
            partition,
            np.array(shown, dtype=object),
            frozenset(shown),
        )
        self._view = view
        self._row_cache = None
        return view

    def _rows_from_columns(
        self,
        columns: DiskstatsColumns,
        previous: DiskstatsColumns,
        root: Path,
        itv: int,
        parity: int,
    ) -> Callable[[], list[IostatRow]] | None:
        """The figures of a sample whose devices are those of the previous sample, all
        counters at once with numpy (compute_row's formulas and operation order, element by
        element, so every double is the same), and a function making its rows. None when
        the line path must take this sample."""
        view = self._column_view(columns, root)
        if view is None or not (view.selected is self._last_selection or view.selected == self._last_selection):
            return None  # other devices than last time: their slots are the line path's
        if view.identity:
            cur, prev = columns.counters, previous.counters
        else:
            cur, prev = columns.counters[:, view.index], previous.counters[:, view.index]
        values, visible, odd = column_figures(cur, prev, itv, unfiltered=self.unfiltered, skip_idle=self.skip_idle)
        odd &= visible
        odd_rows: dict[int, IostatRow] = {}
        if odd.any():
            for j in np.flatnonzero(odd).tolist():
                line = int(view.index[j])
                odd_rows[j] = compute_row(
                    view.display_list[j],
                    columns.device_counters(line),
                    previous.device_counters(line),
                    itv,
                    view.partition_list[j],
                )
        self._last_selection = view.selected
        self._last_snapshot = None  # the line path cannot reuse lines it did not parse
        self._columns_run = (view, columns, previous, parity)
        return lambda: self._make_rows(view, values, visible, odd, odd_rows)

    def _make_rows(
        self,
        view: _ColumnView,
        values: np.ndarray,
        visible: np.ndarray,
        odd: np.ndarray,
        odd_rows: dict[int, IostatRow],
    ) -> list[IostatRow]:
        """The IostatRow objects of one column sample (``values``: its figures, COLUMNS by
        shown device). A device whose figures equal those of the last rows built for the
        same view gets that row object again: only changed devices cost Python objects."""
        n_rows = len(view.names)
        cache = self._row_cache
        if cache is None or cache[0] is not view:
            cache = (view, [None] * n_rows, np.full((len(COLUMNS), n_rows), np.nan))
            if view is self._view:
                self._row_cache = cache
        _, rows, cached_values = cache
        # NaN (odd rows, never built) equals nothing: those are always rebuilt.
        need = visible & ~(values == cached_values).all(axis=0)
        if odd_rows:
            need &= ~odd
            for j, row in odd_rows.items():
                rows[j] = row
            cached_values[:, odd] = np.nan
        todo = np.flatnonzero(need)
        if len(todo) == n_rows:
            rows = list(
                map(
                    tuple.__new__,
                    repeat(IostatRow, n_rows),
                    zip(view.display_list, *values.tolist(), view.partition_list, view.names),
                )
            )
            cached_values[...] = values
            if cache is self._row_cache:
                self._row_cache = (view, rows, cached_values)
        elif len(todo):
            fresh = map(
                tuple.__new__,
                repeat(IostatRow, len(todo)),
                zip(
                    view.display[todo].tolist(),
                    *values[:, todo].tolist(),
                    view.partition[todo].tolist(),
                    view.kernel[todo].tolist(),
                ),
            )
            for j, row in zip(todo.tolist(), fresh):
                rows[j] = row
            cached_values[:, todo] = values[:, todo]
        if visible.all():
            return rows.copy()  # type: ignore[return-value]
        return [rows[j] for j in np.flatnonzero(visible).tolist()]  # type: ignore[misc]

    def _store_columns_run(self) -> None:
        """Give the line path the slots a run of column samples would have left (sysstat's
        two alternating slots hold the last two samples of every shown device)."""
        view, last, before, parity = self._columns_run  # type: ignore[misc]
        self._columns_run = None
        for columns, slot in ((before, parity ^ 1), (last, parity)):
            devices, _, _ = parse_diskstats(columns.data.decode("ascii"))
            self._slots[slot].update((n, devices[n]) for n in view.names if n in devices)
        self._rows_key = ()  # recompute every row once

    # -- any input: line by line ---------------------------------------------------------

    def _sample_lines(self, raw: RawSample, curr: int, itv: int, since_boot: bool, notes: list[str]) -> IostatReport:
        """A sample through DeviceCounters (first sample, devices that changed, odd lines)."""
        root = raw.root
        if self._columns_run is not None:
            self._store_columns_run()
        previous = self._last_snapshot if self._last_snapshot is not None and self._last_snapshot.root == root else None
        snapshot = snapshot_from_raw(raw, previous)
        self._last_snapshot = snapshot
        errors = snapshot.errors + notes
        self._view = None

        selected = self._selected(snapshot, root)
        current, before = self._slots[curr], self._slots[curr ^ 1]
        is_part = self._is_partition_map(snapshot.devices, root) if self.partitions else self._partition_cache
        dm_map = self._dm_display_map(root) if self.dm_names else _NO_DM_NAMES
        rows_map = self._rows
        rows_key = (id(dm_map), id(is_part))
        incremental = (
            not since_boot
            and snapshot.changed is not None
            and rows_key == self._rows_key
            and self._selected_before == selected.keys()
        )
        self._rows_key = rows_key
        ordered: Iterable[str] = self._order if self.partitions else selected
        order_grew = False
        if incremental:
            # Same devices as last time. A line unchanged over the last two samples left
            # the same counters object in both slots and an all-zero row: only what moved
            # now or last time is stored and recomputed (the slots stay as sysstat's).
            changed = snapshot.changed if selected is snapshot.devices else snapshot.changed & selected.keys()  # type: ignore[operator]
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
                row = (
                    None
                    if skip_idle
                    else IostatRow(
                        dm_map.get(name, name),
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        0.0,
                        is_part.get(name, False),
                        name,
                    )
                )
                busy.discard(name)
                rows_map[name] = row
                continue
            elif skip_idle and (
                ioi.rd_ios == ioj.rd_ios
                and ioi.wr_ios == ioj.wr_ios
                and ioi.dc_ios == ioj.dc_ios
                and ioi.fl_ios == ioj.fl_ios
            ):
                row = None
            else:
                row = compute_row(dm_map.get(name, name), ioi, ioj, itv, is_part.get(name, False))
            rows_map[name] = row
            if row is None:
                busy.discard(name)
            else:
                busy.add(name)
        rows = self._assemble(ordered, incremental and not order_grew, todo)
        self._last_selection = frozenset(selected)
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
