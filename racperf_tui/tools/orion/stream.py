"""ORION's live stream. ORION prints its banner, the test name, one estimate ("Calibration will take approximately N
minutes.", 11.1: "Test will take approximately N minutes") and then nothing until the results:
the stream parser turns the estimate into a planned-duration sample and then, every
:data:`PROGRESS_INTERVAL_S`, a progress sample (in ``extra``: ``planned_s``, ``elapsed_s``,
``progress_pct``, ``eta_s``, the clock's ``data_point`` of ``data_points`` and its Small/Large
loads), from the planned matrix (:func:`~racperf_tui.tools.orion.matrix.planned_matrix`). The
supervisor calls the parser's ``tick()``. The samples' metrics are the LUNs' measured load
(``lun_iops``, ``lun_mbps``, ``lun_await_ms``, ``lun_avgqu_sz``), in the samples of the
diskstats companion's answers: the tool declares only these, so they are the live view's
sparklines; the clock's figures stay in the metrics too (``racperf run orion``'s JSON lines
print the metrics), undeclared.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import diskstats_companion
from racperf_tui.core.disks.block_devices import dm_names
from racperf_tui.core.disks.diskstats import DiskSnapshot, snapshot_from_text
from racperf_tui.tools.orion.config import OrionConfig, orion_config
from racperf_tui.tools.orion.live import RECORD_KEY, LunDevices, OrionLiveModel, lun_devices, recorded
from racperf_tui.tools.orion.matrix import (
    ORION_ESTIMATE_EXTRA_S,
    DataPoint,
    planned_duration_s,
    planned_matrix,
    schedule,
)
from racperf_tui.tools.orion.result import (
    ESTIMATE_RE,
    MAX_IOPS_RE,
    MAX_MBPS_RE,
    MIN_LAT_RE,
    STAMP_RE,
    VERSION_RE,
    failure,
)

#: one progress sample this often while ORION is silent
PROGRESS_INTERVAL_S = 1.0


#: read on ORION's own host (the supervisor runs a companion where the benchmark runs, local or
#: over SSH) once a second: the uptime on the first line, then the diskstats
DISKSTATS_COMPANION = diskstats_companion("diskstats", first_after_s=0.5)


def live_model(config: Mapping[str, Any] | OrionConfig, luns: list[LunDevices]) -> OrionLiveModel:
    """The live model of a run (tools/orion/live.py) with its planned matrix and I/O sizes."""
    try:
        cfg = orion_config(config)
        points = planned_matrix(cfg)
        size_small = int(cfg.effective("size_small") or 8)
        size_large = int(cfg.effective("size_large") or 1024)
        streams = int(cfg.num_streamIO or 4) if cfg.effective("type") == "seq" else 1
        lengths = [point.length_s for point in schedule(cfg)]
    except ValueError:
        points, size_small, size_large, streams, lengths = [], 8, 1024, 1, []
    return OrionLiveModel(luns, points, size_small, size_large, streams, lengths)


class OrionStreamParser:
    """ORION's stdout -> a planned-duration sample, then progress samples over time.

    ORION says only how long it will take, so progress is time: ``planned_s`` is the larger of
    ORION's own estimate and :func:`~racperf_tui.tools.orion.matrix.planned_duration_s` (ORION
    leaves out cache warming);
    ``progress_pct`` = elapsed / planned (held below 100 until the results are printed), and
    the data point running is read off the planned schedule from the time ORION printed its
    estimate, right before its first point (an estimate: ORION does not say).
    ``tick()`` (called by the supervisor while ORION is silent) gives one sample per
    :data:`PROGRESS_INTERVAL_S`. ``clock`` is injectable for tests.

    Each answer of the :data:`DISKSTATS_COMPANION` (the LUNs' diskstats read on ORION's host)
    goes into an :class:`~racperf_tui.tools.orion.live.OrionLiveModel` at the data point
    running, and its sample (a progress sample) carries the model's inference in
    ``extra["orion_live"]`` (:func:`~racperf_tui.tools.orion.live.recorded`): kept in the store
    with the run, so a live view opened at any time draws every point done so far. The LUNs'
    devices are resolved once, at the first answer, in sysfs under ``root`` (racperf's own
    host: on another node the LUN -> device names are this host's, see docs/ORION.md).
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        clock: Any = time.monotonic,
        interval_s: float = PROGRESS_INTERVAL_S,
        root: str | os.PathLike[str] = "/",
    ) -> None:
        self._clock = clock
        self._started = clock()
        #: seconds after the start at which ORION printed its estimate, right before its first
        #: data point: the schedule is read from there (on a node ORION starts seconds after
        #: the supervisor, and a schedule read from the supervisor's start runs ahead of it)
        self._points_from = 0.0
        self._interval_s = interval_s
        self._last_tick: float | None = None
        self._planned_model_s: float | None = None
        self._schedule: list[DataPoint] = []
        self._config: Mapping[str, Any] = dict(config or {})
        self._root = Path(root)
        self._live: OrionLiveModel | None = None
        self._dm_names: dict[str, str] = {}
        self._last_snapshot: DiskSnapshot | None = None
        try:
            cfg = orion_config(config or {})
            self._schedule = schedule(cfg)
            self._planned_model_s = planned_duration_s(cfg)
            self._luns = list(cfg.lun)
        except ValueError:
            self._luns = []
        self.planned_s: float | None = None
        self.orion_estimate_s: float | None = None
        self.done = False
        self.failed: str | None = None
        self.version: str | None = None
        self.testname: str | None = None

    def _elapsed(self) -> float:
        return max(0.0, self._clock() - self._started)

    def _point(self, elapsed: float) -> tuple[int, DataPoint | None]:
        """(1-based data point, the point) at ``elapsed`` on the schedule. ORION's estimate is
        its data points' time plus one minute: only when that part is longer than the model's
        (ORION steps loads the model does not know) is the schedule stretched to it."""
        if not self._schedule or not self.planned_s:
            return 0, None
        model_total = sum(p.length_s for p in self._schedule) or 1.0
        points_s = (self.orion_estimate_s or 0.0) - ORION_ESTIMATE_EXTRA_S
        at = max(0.0, elapsed - self._points_from) * model_total / max(model_total, points_s)
        for index, point in enumerate(self._schedule):
            if at < point.start_s + point.length_s:
                return index + 1, point
        return len(self._schedule), self._schedule[-1]

    def _sample(self, elapsed: float, phase: str) -> Sample:
        planned = float(self.planned_s or 0.0)
        if phase == "done":
            progress, eta = 100.0, 0.0
        else:
            progress = min(99.9, 100.0 * elapsed / planned) if planned else 0.0
            eta = max(0.0, planned - elapsed)
        number, point = self._point(elapsed) if phase != "done" else (len(self._schedule), None)
        # the clock's figures: the progress bar and ETA read progress_pct and eta_s
        # (runs_data.LivePoller); no sparklines of them
        extra: dict[str, Any] = {
            "phase": phase,
            "estimated": phase != "done",
            "planned_s": round(planned, 3),
            "elapsed_s": round(elapsed, 3),
            "progress_pct": round(progress, 2),
            "eta_s": round(eta, 3),
        }
        if self._schedule:
            extra["data_point"], extra["data_points"] = number, len(self._schedule)
        if point is not None:
            extra["small"], extra["large"] = point.small, point.large
        if self.orion_estimate_s is not None:
            extra["orion_estimate_s"] = self.orion_estimate_s
        if self._planned_model_s is not None:
            extra["planned_model_s"] = round(self._planned_model_s, 3)
        if self.testname:
            extra["testname"] = self.testname
        # the clock's figures stay in the metrics too: `racperf run orion`'s JSON lines print
        # only the metrics (its progress); the tool declares only the LUNs' load, so the live
        # view's sparklines are those
        metrics: dict[str, float] = {
            key: float(extra[key])
            for key in ("planned_s", "elapsed_s", "progress_pct", "eta_s", "data_point", "data_points")
            if key in extra
        }
        return Sample(t=elapsed, metrics=metrics, extra=extra)

    def feed(self, line: str) -> list[Sample]:
        if self.failed or self.done:
            return []
        if self.version is None:
            match = VERSION_RE.search(line)
            if match:
                self.version = match[1]
                return []
        if self.testname is None:
            stamp = STAMP_RE.match(line)
            if stamp:
                self.testname = stamp["name"]
                return []
        problem = failure(line)
        if problem:
            self.failed = problem
            return []
        match = ESTIMATE_RE.search(line)
        if match and self.planned_s is None:
            self.orion_estimate_s = float(match["n"]) * 60
            self.planned_s = max(self.orion_estimate_s, self._planned_model_s or 0.0)
            elapsed = self._elapsed()
            self._last_tick = elapsed
            self._points_from = elapsed
            return [self._sample(elapsed, "planned")]
        if self.planned_s is not None and (
            MAX_MBPS_RE.search(line) or MAX_IOPS_RE.search(line) or MIN_LAT_RE.search(line)
        ):
            self.done = True
            sample = self._sample(self._elapsed(), "done")
            if self._live is not None:
                self._live.finish()  # the last point's window closes at the last answer
                sample.extra[RECORD_KEY] = recorded(self._live, self._dm_names)
            return [sample]
        return []

    def companion_output(self, name: str, output: str, exit_status: int) -> list[Sample]:
        """An answer of the diskstats companion: the LUNs' load into the live model at the
        data point running now; a progress sample carrying the model's inference."""
        if name != DISKSTATS_COMPANION.name or self.failed or self.done:
            return []
        if self._live is None:
            self._live = live_model(self._config, [lun_devices(lun, self._root) for lun in self._luns])
            self._dm_names = dm_names(self._root)
        snapshot = snapshot_from_text(output, time.time(), "companion diskstats", self._last_snapshot)
        if not snapshot.uptime_cs or not snapshot.devices:
            # a failed read (cat missing, /proc unreadable): the model keeps its last state,
            # the record says why once in the run's raw output (companion:diskstats)
            return []
        self._last_snapshot = snapshot
        elapsed = self._elapsed()
        number = self._point(elapsed)[0] if self.planned_s else 0
        self._live.observe(snapshot, number)
        self._last_tick = elapsed  # this sample is the second's progress sample too
        sample = self._sample(elapsed, "running")
        sample.extra[RECORD_KEY] = recorded(self._live, self._dm_names)
        # the Disks tab's `b` filter shows these while the run goes (ui/store_watcher.py)
        sample.extra["devices"] = self._live.shown_devices
        if self._live.point:  # the point measured in the LUNs' load, not the clock's
            sample.extra["data_point"] = self._live.point
            sample.extra["small"], sample.extra["large"] = self._live.loads_of(self._live.point) or (0, 0)
        current = self._live.current
        if current is not None:
            sample.metrics.update(
                lun_iops=round(current.iops, 3),
                lun_mbps=round(current.mbps, 3),
                lun_await_ms=round(current.await_ms, 3),
                lun_avgqu_sz=round(current.avgqu_sz, 3),
            )
        return [sample]

    def tick(self) -> list[Sample]:
        """A progress sample when PROGRESS_INTERVAL_S has passed since the last one."""
        if self.failed or self.done:
            return []
        elapsed = self._elapsed()
        if self.planned_s is None:
            # no estimate line after a while (a format racperf does not know): the model's
            if self._planned_model_s is None or elapsed < 10.0:
                return []
            self.planned_s = self._planned_model_s
        if self._last_tick is not None and elapsed - self._last_tick < self._interval_s:
            return []
        self._last_tick = elapsed
        return [self._sample(elapsed, "running")]

    def finish(self) -> list[Sample]:
        """ORION ended without its results (stopped, failed): the points measured so far are
        closed and recorded, the last one's window at the last answer."""
        if self.done or self._live is None or self._live.finished:
            return []
        self._live.finish(stopped=True)
        sample = self._sample(self._elapsed(), "ended")
        sample.extra[RECORD_KEY] = recorded(self._live, self._dm_names)
        return [sample]

    def result_warnings(self) -> list[str]:
        """What the run's result and message must carry beside ORION's figures: each data
        point measured with foreign load on the LUNs (tools/orion/live.py)."""
        return self._live.foreign_warnings() if self._live is not None else []


def stream_parser(config: Mapping[str, Any]) -> OrionStreamParser:
    return OrionStreamParser(config)
