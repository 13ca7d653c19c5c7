"""What ORION is doing right now, measured: the LUNs' devices, their load in diskstats, the
data point running and the figures of each data point once it is done. No textual here: the
live panel (ui/tool_panels/orion_live_panel.py) shows what this module computes.

ORION prints nothing while it runs, so each data point's window is found in the LUNs' load
(:class:`OrionLiveModel`): the schedule (ORION's estimate line and the planned matrix) says
where the first point starts and how long each lasts; each visible change in the load
re-anchors it. Load beyond what ORION's planned outstanding I/O explains is foreign
(:class:`ForeignLoad`): said live, and kept in the run's result and message. The stream
parser (tools/orion/stream.py) feeds the model the diskstats
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

import math
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
    """One data point's figures from diskstats, over the window it ran (see OrionLiveModel)."""

    number: int
    small: int
    large: int
    figures: LoadFigures
    #: the run stopped in this point: its figures are of the part that ran
    partial: bool = False


@dataclass(frozen=True)
class Outstanding:
    """The outstanding load measured now, in ORION's I/Os, beside the planned point's."""

    small: float | None  # None at a point with both kinds (the split is not measurable)
    large: float | None
    kib: float
    planned_kib: float
    #: the measured load agrees with the planned point (within AGREEMENT)
    agrees: bool


@dataclass(frozen=True)
class ForeignLoad:
    """I/O on the LUNs that ORION's planned outstanding load does not explain (Little's law:
    what is in flight beyond the plan), over ``seconds`` of data point ``number``. The load
    beyond the plan is taken to share the LUNs' await with ORION's, so its IOPS are the
    LUNs' IOPS in the proportion of the KiB in flight beyond the plan."""

    number: int
    small: int
    large: int
    iops: float
    requests: float
    seconds: float

    def text(self) -> str:
        return (
            f"the LUN carried I/O ORION did not issue: about {self.iops:,.0f} IOPS / "
            f"{self.requests:,.0f} outstanding beyond the plan"
        )

    def warning(self) -> str:
        return (
            f"data point {self.number} (small {self.small}, large {self.large}): {self.text()} "
            f"for {self.seconds:.0f} s; its figures are depressed by it"
        )


#: a window's load changed visibly when two intervals in a row are this factor above (or
#: below) its mean so far in KiB in flight, or REQUEST_SIZE_FACTOR in request size (small
#: I/O to large): a busy host's per-second figures of one point vary by half as much
CHANGE_FACTOR = 1.5
REQUEST_SIZE_FACTOR = 2.0
#: a visible change within this fraction of a point's planned length (at least
#: NEAR_MIN_S) of where the schedule puts its end is its end, and re-anchors the schedule;
#: one as near its start re-anchors its start (the previous point ran longer); elsewhere a
#: change is the point's own noise (a busy host's per-second figures vary by half)
NEAR = 0.25
NEAR_MIN_S = 1.5
#: the LUNs carry foreign load when what is in flight exceeds the plan by more than
#: the plan itself, and by more than this many small I/Os (noise of a light point)
FOREIGN_FACTOR = 2.0
FOREIGN_MIN_SMALL_IOS = 4
#: a point's foreign load goes into the run's warnings after this many seconds of it
FOREIGN_MIN_S = 2.0


def _seconds(start: DiskSnapshot, end: DiskSnapshot) -> float:
    return (end.uptime_cs - start.uptime_cs) / 100.0


def _request_kib(figures: LoadFigures) -> float:
    return figures.mbps * 1024.0 / figures.iops if figures.iops else 0.0


def _direction(base: LoadFigures, now: LoadFigures, floor_kib: float) -> int:
    """+1 / -1 when ``now`` is visibly above / below ``base`` (KiB in flight, or the request
    size), else 0."""
    for before, after, factor, floor in (
        (base.kib_in_flight, now.kib_in_flight, CHANGE_FACTOR, floor_kib),
        (_request_kib(base), _request_kib(now), REQUEST_SIZE_FACTOR, 1.0),
    ):
        if max(before, after) < floor:
            continue
        if after > factor * before + floor / 4:
            return 1
        if before > factor * after + floor / 4:
            return -1
    return 0


# --------------------------------------------------------------------------- the model


@dataclass
class OrionLiveModel:
    """Diskstats snapshots of one ORION run -> what the panel shows.

    ORION prints nothing between its estimate and its results, so each data point's window
    is found in the LUNs' load, on the schedule: the first window opens at the first I/O
    after the estimate (at the clock's point, or the next point with load: ORION counts a
    (0, 0) point it does not run) and is planned to last its point's length. A visible
    change in the load (two intervals in a row off the window's mean by
    :data:`CHANGE_FACTOR` in KiB in flight, or :data:`REQUEST_SIZE_FACTOR` in request size)
    near that end (:data:`NEAR`) ends it there and re-anchors the schedule; one as near its
    start re-anchors its start; elsewhere a change is noise. With no change near its end, a
    window ends at its planned length. A window under half a point is not a point. Each
    window goes to ``completed`` when it ends, the last at :meth:`finish` (partial when the
    run was stopped, its idle tail left out).
    """

    luns: Sequence[LunDevices]
    #: the planned matrix, (small, large) per data point in ORION's order (orion.stream.live_model)
    points: list[tuple[int, int]] = field(default_factory=list)
    size_small: int = 8
    size_large: int = 1024
    #: ORION keeps num_streamIO I/Os outstanding per sequential large stream
    large_ios_per_stream: int = 1
    #: each point's planned length in seconds (its duration, and cache warming before it)
    lengths: list[float] = field(default_factory=list)
    completed: list[PointFigures] = field(default_factory=list)
    #: the last interval's figures of the LUNs' own devices, and the rows of every device shown
    current: LoadFigures | None = None
    rows: dict[str, IostatRow] = field(default_factory=dict)
    #: the data point whose window is open (0: none yet)
    point: int = 0
    finished: bool = False
    stopped: bool = False
    #: foreign load over the last interval, and the longest episode of it per data point
    foreign: ForeignLoad | None = None
    foreign_by_point: dict[int, ForeignLoad] = field(default_factory=dict)
    _previous: DiskSnapshot | None = None
    _window: list[DiskSnapshot] = field(default_factory=list)
    #: the index in ``_window`` where a change began, and its direction, until confirmed
    _pending: tuple[int, int] | None = None
    #: the last point's window closed: later load is not ORION's
    _past_last: bool = False

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

    def length_of(self, number: int) -> float:
        """Data point ``number``'s planned seconds (60, ORION's default, when unknown)."""
        return self.lengths[number - 1] if 1 <= number <= len(self.lengths) else 60.0

    def _loaded_from(self, number: int) -> int:
        """The first data point from ``number`` on with load (0 past the last)."""
        for candidate in range(max(1, number), len(self.points) + 1):
            if self.points[candidate - 1] != (0, 0):
                return candidate
        return 0

    def observe(self, snapshot: DiskSnapshot, clock_point: int | None) -> None:
        """A new snapshot, and the data point the clock says runs (None or 0: ORION has not
        printed its estimate yet, so the load is not its)."""
        last = self._previous
        interval: LoadFigures | None = None
        if last is not None and snapshot.uptime_cs > last.uptime_cs:
            interval_cs = snapshot.uptime_cs - last.uptime_cs
            self.rows = {
                name: compute_row(name, snapshot.devices[name], last.devices[name], interval_cs)
                for name in self.shown_devices
                if name in snapshot.devices and name in last.devices
            }
            interval = self.current = window_figures(last, snapshot, self.devices)
        self._previous = snapshot
        if not clock_point or interval is None or last is None or self.finished:
            return
        if not self.point:
            if interval.iops > 0 and not self._past_last:
                self._open(self._first_point(int(clock_point), interval), [last, snapshot])
                self._note_foreign(interval)
            return
        if not self._window:  # between two points (the load went idle): the next opens at load
            if interval.iops > 0:
                self._window = [last, snapshot]
                self._note_foreign(interval)
            return
        self._window.append(snapshot)
        self._cut()
        self._note_foreign(interval)

    def _first_point(self, clock_point: int, interval: LoadFigures) -> int:
        """The point the first window opens at: the clock's (or the next with load), or one
        of the two after it when the load fits it far better (in the ratio of KiB in flight
        to the plan): the diskstats answers began late (a node's companion starts seconds
        after ORION), and the clock's schedule is only an estimate."""

        def misfit(number: int) -> float:
            planned = self.planned_kib(*(self.loads_of(number) or (0, 0)))
            return abs(math.log(max(interval.kib_in_flight, 0.1) / planned)) if planned else math.inf

        best = self._loaded_from(clock_point)
        for candidate in (best + 1, best + 2):
            if self._loaded_from(candidate) == candidate and misfit(candidate) < misfit(best) / 2:
                best = candidate
        return best

    def _open(self, number: int, window: list[DiskSnapshot]) -> None:
        self.point, self._window, self._pending = number, window, None

    def _cut(self) -> None:
        """End the open window where the load changed, or by the schedule (class docstring)."""
        window = self._window
        expected = self.length_of(self.point)
        base_end = self._pending[0] if self._pending else len(window) - 2
        base = window_figures(window[0], window[base_end], self.devices) if base_end > 0 else None
        now = window_figures(window[-2], window[-1], self.devices)
        direction = _direction(base, now, self.size_small / 2) if base and now else 0
        near = max(NEAR * expected, NEAR_MIN_S)
        if direction and self._pending and self._pending[1] == direction:
            at = self._pending[0]
            self._pending = None
            idle = now is not None and now.iops <= 0
            into = _seconds(window[0], window[at])
            if abs(into - expected) <= near and into >= expected / 2:
                self._next_point(window, at, idle)
            elif into <= near and into < expected / 2 and not idle:
                # re-anchored: what came before was not this point (the previous one's tail,
                # when the first answers came late it may be this one's, the load says)
                self._window = window[at:]
                if now is not None and len(self.completed) == 0:
                    self.point = self._first_point(self.point, now)
            # else the point's own noise; idle: a pause, or ORION stopped (finish trims it)
            return
        self._pending = (len(window) - 2, direction) if direction else None
        # a change is seen a second after it began (two intervals): the schedule ends the
        # point only once no change came near its end
        if _seconds(window[0], window[-1]) >= expected + near + 1.0:
            self._pending = None
            at = min(range(len(window)), key=lambda i: abs(_seconds(window[0], window[i]) - expected))
            self._next_point(window, at, False)

    def _next_point(self, window: list[DiskSnapshot], at: int, idle: bool) -> None:
        """Close the open point's window at ``at``; the next point's opens there (gone
        idle: when the load comes back)."""
        self._close(window[: at + 1])
        self._open(self._loaded_from(self.point + 1), [] if idle else window[at:])
        if not self.point:  # past the last point: nothing more is ORION's
            self._window, self._past_last = [], True

    def _note_foreign(self, interval: LoadFigures) -> None:
        loads = self.loads_of(self.point)
        self.foreign = None
        if loads is None:
            return
        planned = self.planned_kib(*loads)
        small, large = loads
        planned_request = planned / (small + large * self.large_ios_per_stream) if planned else 0.0
        if _request_kib(interval) > REQUEST_SIZE_FACTOR * planned_request:
            return  # larger I/O than the point's: the next point's load seen early, not foreign
        beyond = interval.kib_in_flight - planned
        if beyond <= max(planned * (FOREIGN_FACTOR - 1), FOREIGN_MIN_SMALL_IOS * self.size_small):
            return
        share = beyond / interval.kib_in_flight
        self.foreign = ForeignLoad(
            self.point, *loads, interval.iops * share, interval.requests_in_flight * share, interval.seconds
        )
        before = self.foreign_by_point.get(self.point)
        if before is None:
            self.foreign_by_point[self.point] = self.foreign
        else:  # the point's figures over every interval of it seen with foreign load
            seconds = before.seconds + interval.seconds
            self.foreign_by_point[self.point] = ForeignLoad(
                self.point,
                *loads,
                (before.iops * before.seconds + self.foreign.iops * interval.seconds) / seconds,
                (before.requests * before.seconds + self.foreign.requests * interval.seconds) / seconds,
                seconds,
            )

    def foreign_warnings(self) -> list[str]:
        """One warning per data point that ran with foreign load for FOREIGN_MIN_S or more."""
        return [
            found.warning() for number, found in sorted(self.foreign_by_point.items()) if found.seconds >= FOREIGN_MIN_S
        ]

    def finish(self, stopped: bool = False) -> None:
        """The run ended: the open window closes at the last snapshot; ``stopped``: ORION
        ended without its results, so that window is a partial point (kept, said so)."""
        # the results came before the last change was confirmed (ORION prints them as its
        # last point ends): a window holding its point and half the next one more is split
        # where a change began near its planned end, else by the schedule
        while self.point and len(self._window) >= 3:
            window, expected = self._window, self.length_of(self.point)
            following = self._loaded_from(self.point + 1)
            if not following or _seconds(window[0], window[-1]) < expected + self.length_of(following) / 2:
                break
            near = max(NEAR * expected, NEAR_MIN_S)
            at = min(range(len(window)), key=lambda i: abs(_seconds(window[0], window[i]) - expected))
            if self._pending and abs(_seconds(window[0], window[self._pending[0]]) - expected) <= near:
                at = self._pending[0]
            self._pending = None
            self._next_point(window, at, False)
        if self.point and len(self._window) >= 2:
            self._close(self._window, partial=stopped)
        self._window, self._pending, self.foreign = [], None, None
        self.finished, self.stopped = True, stopped

    def _close(self, window: list[DiskSnapshot], partial: bool = False) -> None:
        loads = self.loads_of(self.point)
        # idle intervals at the window's end (ORION stopped, or between two points) are no
        # point's load
        while len(window) > 2:
            tail = window_figures(window[-2], window[-1], self.devices)
            if tail is None or tail.iops > 0:
                break
            window = window[:-1]
        figures = window_figures(window[0], window[-1], self.devices) if len(window) >= 2 else None
        if loads is None or figures is None or figures.seconds < 0.5 or figures.iops <= 0:
            return
        done = PointFigures(self.point, loads[0], loads[1], figures, partial)
        self.completed = sorted([p for p in self.completed if p.number != done.number] + [done], key=lambda p: p.number)

    def planned_kib(self, small: int, large: int) -> float:
        return float(small * self.size_small + large * self.large_ios_per_stream * self.size_large)

    def outstanding(self) -> Outstanding | None:
        """The outstanding I/O measured over the last interval, against the open point."""
        loads = self.loads_of(self.point)
        if self.current is None or loads is None:
            return None
        small, large = loads
        kib = self.current.kib_in_flight
        planned = self.planned_kib(small, large)
        agrees = abs(kib - planned) <= AGREEMENT * planned if planned else kib < self.size_small
        return Outstanding(
            small=kib / self.size_small if large == 0 else None,
            large=kib / (self.size_large * self.large_ios_per_stream) if small == 0 and large else None,
            kib=kib,
            planned_kib=planned,
            agrees=agrees,
        )

    def _outstanding_text(self, kib: float, small: int, large: int) -> str:
        """The KiB in flight said in ORION's I/Os of a point with these loads (a tenth below
        10: 0.4 of one I/O is not "0 outstanding" beside thousands of IOPS)."""

        def count(value: float) -> str:
            return f"{value:.1f}" if value < 10 else f"{value:,.0f}"

        if large == 0:
            return f"about {count(kib / self.size_small)} small I/Os outstanding (planned {small})"
        streams = self.large_ios_per_stream
        if small == 0:
            measured = count(kib / (self.size_large * streams))
            return f"about {measured} large I/Os outstanding (planned {large * streams})"
        planned = self.planned_kib(small, large)
        return f"about {kib / 1024:.1f} MiB in flight (planned {planned / 1024:.1f} MiB)"

    def headline(self) -> str:
        """ "data point 5 of 21 (small 10, large 0), about 10 small I/Os outstanding (planned
        10)": the point whose window is open, measured over the last interval."""
        if self.finished:
            text = f"{len(self.completed)} of {len(self.points)} data points measured in diskstats"
            partial = next((p for p in self.completed if p.partial), None)
            if partial is not None:
                planned = self.length_of(partial.number)
                return (
                    f"ORION stopped: {text}, the last (data point {partial.number}, small {partial.small}, "
                    f"large {partial.large}) partly: {partial.figures.seconds:.0f} s of {planned:.0f}"
                )
            return f"ORION {'stopped' if self.stopped else 'finished'}: {text}"
        if (not self.point or not self.points) and self.completed:
            # no point's window open after some were measured: its last point ended (ORION
            # writes its results), or the LUNs idle between two points
            return f"{len(self.completed)} of {len(self.points)} data points measured; no point running now"
        if not self.point or not self.points:
            return "waiting for ORION's first data point"
        small, large = self.loads_of(self.point) or (0, 0)
        text = f"data point {self.point} of {len(self.points)} (small {small}, large {large})"
        found = self.outstanding()
        if found is None:
            return text + ", measuring the load"
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
    foreign = model.foreign.text() if model.foreign is not None else None
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
        "partial": [p.number for p in model.completed if p.partial],
        "foreign": foreign,
        "foreign_warnings": model.foreign_warnings(),
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
    partial = set(record.get("partial") or ())
    found = []
    for values in record.get("points") or []:
        try:
            point = dict(zip(names, values, strict=True))
            figures = LoadFigures(**{name: float(point[name]) for name in POINT_FIELDS[3:]})
            number = int(point["number"])
            found.append(PointFigures(number, int(point["small"]), int(point["large"]), figures, number in partial))
        except (KeyError, TypeError, ValueError):
            continue  # a point of another racperf's record: left out, not a crash
    return found


__all__ = [
    "ForeignLoad",
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
