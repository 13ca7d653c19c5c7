"""What ORION is doing right now, measured: the LUNs' devices, their load in diskstats, the
data point running and the figures of each data point once it is done. No textual here: the
live panel (ui/tool_panels/orion_live_panel.py) shows what this module computes.

ORION prints nothing while it runs, so the data point comes from the clock (the stream
parser's ``data_point`` of ``data_points``, read off the planned schedule) and is checked
against what the disks see. The stream parser (tools/orion/stream.py) feeds the model the diskstats
its ``diskstats`` companion reads on ORION's host every second, and records :func:`recorded`
in each answer's sample: the live panel draws from the run's samples, never from the disks.

Little's law: the requests in flight are the request rate times the time each spends in
flight (IOPS x await); times the average request size, the bytes in flight. ORION keeps
``small`` I/Os of ``size_small`` KB and ``large`` of ``size_large`` KB outstanding, so the
bytes in flight divided by the planned I/O size are its outstanding I/Os whatever the block
layer split or merged (a 1 MB I/O is two 512 KB requests on most disks).

Which devices: a LUN's own block device (``dm-3`` for ``/dev/mapper/data1``, ``sdb1``,
``loop4``; a file LUN's file system device) is where ORION's I/O is counted once; the devices
below it (a partition's disk, the paths under a dm-multipath or md device, recursively) see
the same I/O again and are shown beside it, never added to it. sysfs is walked by
core/disks/block_devices.py, under a root directory, so recorded sysfs trees replay exactly.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from racperf_tui.core.disks.block_devices import devices_below, is_block_name, name_of_devno
from racperf_tui.core.disks.diskstats import DiskSnapshot
from racperf_tui.core.disks.iostat_sampler import IostatRow, compute_row

#: the measured outstanding load agrees with the planned point when within this fraction
AGREEMENT = 0.5


# --------------------------------------------------------------------------- devices


@dataclass(frozen=True)
class LunDevices:
    """A LUN and the kernel names of the block devices its I/O reaches."""

    lun: str
    #: the LUN's own device (diskstats name), where its I/O is counted once; None if unknown
    device: str | None
    #: the devices below it: a partition's disk, the slaves of dm / md, recursively
    below: tuple[str, ...] = ()
    #: why ``device`` is None
    problem: str = ""

    @property
    def all(self) -> tuple[str, ...]:
        return ((self.device,) if self.device else ()) + self.below


def _own_device(lun: str, root: Path) -> tuple[str | None, str]:
    """(the diskstats name of the LUN's device, '' or why not found)."""
    path = os.path.join(root, lun.lstrip("/"))
    # /dev/sdb, /dev/dm-3, /dev/mapper/x -> ../dm-3: the name the path leads to (also in a
    # recorded root, which holds links but no device nodes)
    leads_to = os.path.basename(os.path.realpath(path))
    if is_block_name(leads_to, root):
        return leads_to.replace("!", "/"), ""
    try:
        st = os.stat(path)
    except OSError as exc:
        return None, f"{lun}: {exc.strerror or exc}"
    if stat.S_ISBLK(st.st_mode):
        number = st.st_rdev
    elif stat.S_ISREG(st.st_mode):
        number = st.st_dev  # a file LUN: the device of the file system holding it
    else:
        return None, f"{lun}: neither a block device nor a file"
    name = name_of_devno(os.major(number), os.minor(number), root)
    if name is None:
        return None, f"{lun}: device {os.major(number)}:{os.minor(number)} has no sysfs entry (no diskstats)"
    return name, ""


def lun_devices(lun: str, root: str | os.PathLike[str] = "/") -> LunDevices:
    """The block devices of one LUN path, read under ``root`` (see the module docstring)."""
    root_path = Path(root)
    device, problem = _own_device(lun, root_path)
    if device is None:
        return LunDevices(lun, None, (), problem)
    return LunDevices(lun, device, tuple(devices_below(device, root_path)))


def luns_of(config: Mapping[str, Any]) -> list[str]:
    """The LUNs of an ORION run's config (one or many ``lun``)."""
    luns = config.get("lun") or []
    if isinstance(luns, str):
        luns = [luns]
    return [str(lun) for lun in luns if str(lun).strip()]


# --------------------------------------------------------------------------- load figures


@dataclass(frozen=True)
class LoadFigures:
    """The LUNs' load over one window of diskstats (their own devices, summed)."""

    seconds: float
    iops: float
    mbps: float  # MB/s as ORION counts them: 1,048,576 bytes
    await_ms: float
    #: avgqu-sz summed: the kernel's own time-weighted queue (a cross-check of Little's law)
    avgqu_sz: float
    #: requests in flight by Little's law: IOPS x await
    requests_in_flight: float
    #: KiB in flight: requests in flight x their average size
    kib_in_flight: float


def window_figures(start: DiskSnapshot, end: DiskSnapshot, devices: Sequence[str]) -> LoadFigures | None:
    """The load of ``devices`` between two snapshots (None without time or counters between)."""
    interval_cs = end.uptime_cs - start.uptime_cs
    if interval_cs <= 0:
        return None
    rows = [
        compute_row(name, end.devices[name], start.devices[name], interval_cs)
        for name in dict.fromkeys(devices)
        if name in start.devices and name in end.devices
    ]
    if not rows:
        return None
    return combine(rows, interval_cs / 100.0)


def combine(rows: Sequence[IostatRow], seconds: float) -> LoadFigures:
    """Rows of the LUNs' own devices -> one load: rates and queues add, await is per I/O."""
    iops = sum(r.r_s + r.w_s for r in rows)
    in_flight = sum((r.r_s + r.w_s) * r.await_ms / 1000.0 for r in rows)
    kib = sum((r.r_s + r.w_s) * r.await_ms / 1000.0 * r.avgrq_sz / 2.0 for r in rows)
    return LoadFigures(
        seconds=seconds,
        iops=iops,
        mbps=sum(r.rkb_s + r.wkb_s for r in rows) / 1024.0,
        await_ms=in_flight / iops * 1000.0 if iops else 0.0,
        avgqu_sz=sum(r.avgqu_sz for r in rows),
        requests_in_flight=in_flight,
        kib_in_flight=kib,
    )


@dataclass(frozen=True)
class PointFigures:
    """One data point's figures from diskstats, over the window it ran (by the schedule)."""

    number: int
    small: int
    large: int
    figures: LoadFigures


@dataclass(frozen=True)
class Outstanding:
    """The outstanding load measured now, in ORION's I/Os, beside the planned point's."""

    small: float | None  # None at a point with both kinds (the split is not measurable)
    large: float | None
    kib: float
    planned_kib: float
    #: the measured load agrees with the planned point (within AGREEMENT)
    agrees: bool
    #: the number of the neighbouring data point whose load fits better, when it does not
    fits_point: int | None = None


# --------------------------------------------------------------------------- the model


@dataclass
class OrionLiveModel:
    """Progress samples and diskstats snapshots of one ORION run -> what the panel shows.

    Call :meth:`observe` with each new snapshot and the data point the progress says is
    running; a point's window is its first to its last snapshot, closed when the next point
    starts (its figures then go to ``completed``) or at :meth:`finish`.
    """

    luns: Sequence[LunDevices]
    #: the planned matrix, (small, large) per data point in ORION's order (orion.stream.live_model)
    points: list[tuple[int, int]] = field(default_factory=list)
    size_small: int = 8
    size_large: int = 1024
    #: ORION keeps num_streamIO I/Os outstanding per sequential large stream
    large_ios_per_stream: int = 1
    completed: list[PointFigures] = field(default_factory=list)
    #: the last interval's figures of the LUNs' own devices, and the rows of every device shown
    current: LoadFigures | None = None
    rows: dict[str, IostatRow] = field(default_factory=dict)
    point: int = 0
    finished: bool = False
    _previous: DiskSnapshot | None = None
    _window_start: DiskSnapshot | None = None
    _window_point: int = 0

    @property
    def devices(self) -> list[str]:
        """The LUNs' own devices: where ORION's I/O is counted once."""
        return list(dict.fromkeys(lun.device for lun in self.luns if lun.device))

    @property
    def shown_devices(self) -> list[str]:
        """Every device of the LUNs, each LUN's own first then those below it."""
        return list(dict.fromkeys(name for lun in self.luns for name in lun.all))

    def loads_of(self, number: int) -> tuple[int, int] | None:
        """(small, large) of data point ``number`` (1-based) in the planned matrix."""
        return self.points[number - 1] if 1 <= number <= len(self.points) else None

    def observe(self, snapshot: DiskSnapshot, point: int | None) -> None:
        """A new snapshot, and the data point the progress says runs now (None: not yet)."""
        last = self._previous
        if last is not None and snapshot.uptime_cs > last.uptime_cs:
            interval_cs = snapshot.uptime_cs - last.uptime_cs
            self.rows = {
                name: compute_row(name, snapshot.devices[name], last.devices[name], interval_cs)
                for name in self.shown_devices
                if name in snapshot.devices and name in last.devices
            }
            self.current = window_figures(last, snapshot, self.devices)
        self._previous = snapshot
        self.point = int(point or 0)
        # the interval just measured belongs to the point its load fits (the clock's, unless
        # a neighbour fits the disks' load better): each window is the intervals of one point
        found = self.outstanding()
        measured = found.fits_point if found is not None and found.fits_point is not None else self.point
        if measured != self._window_point:
            if last is not None:
                self._close_window(last)
            self._window_start, self._window_point = last or snapshot, measured
        elif self._window_start is None:
            self._window_start = last or snapshot

    def finish(self) -> None:
        """The run ended: the last point's window closes at the last snapshot."""
        if self._previous is not None:
            self._close_window(self._previous)
            self._window_start, self._window_point = None, 0
        self.finished = True

    def _close_window(self, end: DiskSnapshot) -> None:
        loads = self.loads_of(self._window_point)
        if self._window_start is None or loads is None or loads == (0, 0):
            return
        figures = window_figures(self._window_start, end, self.devices)
        if figures is None or figures.seconds < 0.5:
            return
        # a point seen twice (its load fitted a neighbour for a second): its longest window
        done = PointFigures(self._window_point, loads[0], loads[1], figures)
        for index, other in enumerate(self.completed):
            if other.number == done.number:
                if figures.seconds > other.figures.seconds:
                    self.completed[index] = done
                return
        self.completed.append(done)
        self.completed.sort(key=lambda p: p.number)

    def planned_kib(self, small: int, large: int) -> float:
        return float(small * self.size_small + large * self.large_ios_per_stream * self.size_large)

    def outstanding(self) -> Outstanding | None:
        """The outstanding I/O measured over the last interval, against the planned point."""
        loads = self.loads_of(self.point)
        if self.current is None or loads is None:
            return None
        small, large = loads
        kib = self.current.kib_in_flight
        planned = self.planned_kib(small, large)
        agrees = abs(kib - planned) <= AGREEMENT * planned if planned else kib < self.size_small
        fits: int | None = None
        if not agrees:
            near = range(max(1, self.point - 2), min(len(self.points), self.point + 2) + 1)
            best = min(near, key=lambda n: abs(self.planned_kib(*self.points[n - 1]) - kib))
            if best != self.point:
                fits = best
        return Outstanding(
            small=kib / self.size_small if large == 0 else None,
            large=kib / (self.size_large * self.large_ios_per_stream) if small == 0 and large else None,
            kib=kib,
            planned_kib=planned,
            agrees=agrees,
            fits_point=fits,
        )

    def _outstanding_text(self, kib: float, small: int, large: int) -> str:
        """The KiB in flight said in ORION's I/Os of a point with these loads."""
        if large == 0:
            return f"about {kib / self.size_small:.0f} small I/Os outstanding (planned {small})"
        streams = self.large_ios_per_stream
        if small == 0:
            return f"about {kib / (self.size_large * streams):.0f} large I/Os outstanding (planned {large * streams})"
        planned = self.planned_kib(small, large)
        return f"about {kib / 1024:.1f} MiB in flight (planned {planned / 1024:.1f} MiB)"

    def headline(self) -> str:
        """ "data point 5 of 21 (small 10, large 0), about 10 small I/Os outstanding (planned
        10)"; when the disks' load fits a neighbouring point better, that point and its load."""
        if self.finished:
            return f"ORION finished: {len(self.completed)} of {len(self.points)} data points measured in diskstats"
        if not self.point or not self.points:
            return "waiting for ORION's first data point"
        small, large = self.loads_of(self.point) or (0, 0)
        text = f"data point {self.point} of {len(self.points)} (small {small}, large {large})"
        found = self.outstanding()
        if found is None:
            return text + ", measuring the load"
        if found.fits_point is not None:
            fit_small, fit_large = self.points[found.fits_point - 1]
            return (
                f"{text} by the clock; the disks' load fits data point {found.fits_point} (small {fit_small}, "
                f"large {fit_large}): {self._outstanding_text(found.kib, fit_small, fit_large)}"
            )
        return f"{text}, {self._outstanding_text(found.kib, small, large)}"


# --------------------------------------------------------------------------- the record

#: the key of a sample's ``extra`` that carries :func:`recorded`
RECORD_KEY = "orion_live"
#: the values of a recorded point, in order: its number and loads, then its LoadFigures
POINT_FIELDS = ("number", "small", "large", *LoadFigures.__dataclass_fields__)


def _rounded(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in values.items()}


def recorded(model: OrionLiveModel, names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What the model says now, as JSON for a sample's ``extra`` (kept in the store): the
    headline and its data point, the outstanding estimate, the rows of the LUNs' devices
    (``names``: dm-N -> its device-mapper name, shown beside it) and every completed point's
    figures, so the newest sample alone draws the whole panel."""
    names = names or {}
    small, large = model.loads_of(model.point) or (None, None)
    found = model.outstanding() if not model.finished else None
    rows = []
    for lun in model.luns:
        for index, device in enumerate(lun.all):
            row = model.rows.get(device)
            if row is None:
                continue
            shown = f"{device} ({names[device]})" if device in names else device
            rows.append(
                {
                    **_rounded(row._asdict()),
                    "shown": shown if index == 0 else f"  {shown}",
                    "lun": lun.lun if index == 0 else "below",
                }
            )
    return {
        "headline": model.headline(),
        "data_point": model.point,
        "data_points": len(model.points),
        "small": small,
        "large": large,
        "outstanding": _rounded(asdict(found)) if found is not None else None,
        "finished": model.finished,
        "rows": rows,
        # every completed point in each sample (the newest alone draws the charts), so a
        # row of values under one list of names: a third of the size of a dict per point
        "point_fields": list(POINT_FIELDS),
        "points": [
            [p.number, p.small, p.large, *(round(getattr(p.figures, name), 3) for name in POINT_FIELDS[3:])]
            for p in model.completed
        ],
        "problems": [lun.problem for lun in model.luns if lun.problem],
    }


def recorded_rows(record: Mapping[str, Any]) -> list[tuple[str, str, IostatRow]]:
    """(device as shown, its LUN or "below", its row) of a :func:`recorded` dict."""
    found = []
    for row in record.get("rows") or []:
        try:
            fields = {name: row[name] for name in IostatRow._fields if name in row}
            found.append((str(row["shown"]), str(row["lun"]), IostatRow(**fields)))
        except (KeyError, TypeError):
            continue  # a row of another racperf's record: left out, not a crash
    return found


def recorded_points(record: Mapping[str, Any]) -> list[PointFigures]:
    """The completed points of a :func:`recorded` dict."""
    names = record.get("point_fields") or POINT_FIELDS
    found = []
    for values in record.get("points") or []:
        try:
            point = dict(zip(names, values, strict=True))
            figures = LoadFigures(**{name: float(point[name]) for name in POINT_FIELDS[3:]})
            found.append(PointFigures(int(point["number"]), int(point["small"]), int(point["large"]), figures))
        except (KeyError, TypeError, ValueError):
            continue  # a point of another racperf's record: left out, not a crash
    return found


__all__ = [
    "LoadFigures",
    "LunDevices",
    "OrionLiveModel",
    "Outstanding",
    "PointFigures",
    "RECORD_KEY",
    "combine",
    "lun_devices",
    "luns_of",
    "recorded",
    "recorded_points",
    "recorded_rows",
    "window_figures",
]
