"""A sweep: fio walked up in load, one recorded run per point, the points linked in one run
group, stopped by the rule asked (vdbench's stopcurve), the curves and their knee in the
group's result.

- :class:`SweepPlan` is what to walk: the base fio config, the iodepths and numjobs, how long
  a point runs, the stop rule, the nodes. Its curves: with several iodepths, one curve per
  numjobs value walking the iodepths up (with one iodepth, one per iodepth walking the
  numjobs up); every point runs at once on every node named.
- :func:`run_sweep` runs it: each point through :func:`run_groups.launch_group` into the
  sweep's group (so every point is a normal run, planned and judged by the write guard on
  its node, with its own supervisor and store record), waits for it, reads its result as a
  load point, hands it on, and ends a curve by the stop rule; the group's result is the
  curves (:mod:`racperf_tui.tools.fio.sweep_curves`), written after every point so the
  curve builds in the store as it does on the screen.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.remote.cluster import Node, node_from_spec_dict, node_spec
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.orchestration.run_groups import launch_group, stop_group
from racperf_tui.orchestration.runs import prepare_run, wait_for_run
from racperf_tui.orchestration.sweep_point import PLAN_KEY
from racperf_tui.tools.fio.config import FioConfig, as_int, hard_limit
from racperf_tui.tools.fio.load_points import LoadPoint, points_of
from racperf_tui.tools.fio.sweep_curves import Curve, best_under, curve_along, stop_reason

#: engines that do one I/O at a time per job: iodepth changes nothing there
SYNC_ENGINES = frozenset({"psync", "sync", "pvsync", "pvsync2", "vsync", "mmap"})
#: what the sweep sets on each point; the base config may not set them another way
_SWEPT_OPTIONS = ("iodepth", "numjobs", "runtime", "time_based")


class SweepRefused(ValueError):
    """A sweep that cannot be run as asked (the message says what to change)."""


@dataclass(frozen=True)
class SweepPlan:
    """What a sweep walks. ``config`` is fio's (``--set``), without iodepth and numjobs."""

    config: dict[str, Any]
    iodepths: tuple[int, ...]
    numjobs: tuple[int, ...] = (1,)
    point_seconds: int = 10
    stop_p99_ms: float | None = None
    stop_knee: bool = False
    nodes: tuple[Node, ...] = ()
    target: str | None = None

    @property
    def varying(self) -> str:
        return "iodepth" if len(self.iodepths) > 1 or len(self.numjobs) == 1 else "numjobs"

    @property
    def stop_p99_us(self) -> float | None:
        return None if self.stop_p99_ms is None else self.stop_p99_ms * 1000.0

    def curves(self) -> list[list[tuple[int, int]]]:
        """Each curve's (iodepth, numjobs) in walking order."""
        if self.varying == "iodepth":
            return [[(d, j) for d in self.iodepths] for j in self.numjobs]
        return [[(d, j) for j in self.numjobs] for d in self.iodepths]

    def point_config(self, iodepth: int, numjobs: int) -> dict[str, Any]:
        return {
            **self.config,
            "iodepth": iodepth,
            "numjobs": numjobs,
            "runtime_s": self.point_seconds,
            "time_based": True,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "iodepth": list(self.iodepths),
            "numjobs": list(self.numjobs),
            "point_seconds": self.point_seconds,
            "stop_p99_ms": self.stop_p99_ms,
            "stop_knee": self.stop_knee,
            "varying": self.varying,
        }

    def check(self) -> None:
        """SweepRefused when the plan cannot measure what it says (checked before anything)."""
        if not self.iodepths or not self.numjobs:
            raise SweepRefused("a sweep needs at least one iodepth and one numjobs")
        if any(d < 1 or d > 65536 for d in self.iodepths) or any(j < 1 or j > 4096 for j in self.numjobs):
            raise SweepRefused("iodepth must be 1 to 65536 and numjobs 1 to 4096")
        if len(self.iodepths) * len(self.numjobs) < 2:
            raise SweepRefused("a sweep needs at least two points: give several --iodepth or --numjobs values")
        if not 1 <= self.point_seconds <= 86400:
            raise SweepRefused(f"--point-seconds must be 1 to 86400, got {self.point_seconds}")
        if self.stop_p99_ms is not None and not self.stop_p99_ms > 0:
            raise SweepRefused(f"--stop-p99-ms must be above 0, got {self.stop_p99_ms:g}")
        base = FioConfig.from_dict(self.config)
        if base.custom or base.job_file:
            raise SweepRefused(
                "a sweep sets iodepth, numjobs and the runtime on each point: give the job with "
                "--set (rw, bs, ioengine, size...), not as a job file or fio arguments alone"
            )
        for arg in base.extra_args:
            key = arg.lstrip("-").split("=", 1)[0].replace("-", "_").lower()
            if arg.startswith("-") and key in _SWEPT_OPTIONS:
                raise SweepRefused(f"extra_args: {arg} would override what the sweep sets on each point")
        if max(self.iodepths) > 1 and str(base.ioengine) in SYNC_ENGINES:
            raise SweepRefused(
                f"ioengine {base.ioengine} does one I/O at a time per job, so iodepth changes nothing: "
                "--set ioengine=libaio (or io_uring), or sweep --numjobs"
            )


def base_config(config: Mapping[str, Any], given: Iterable[str]) -> dict[str, Any]:
    """fio's config for a sweep's points from the settings given (``given``: the keys the user
    set): SweepRefused for one the sweep sets on each point (``--iodepth``, ``--numjobs``,
    ``--point-seconds``), the defaults of those left out."""
    for key in ("iodepth", "numjobs", "runtime_s", "time_based"):
        if key in given:
            raise SweepRefused(f"--set {key}: the sweep sets it on each point (--iodepth, --numjobs, --point-seconds)")
    return {k: v for k, v in config.items() if k not in ("iodepth", "numjobs", "runtime_s", "time_based")}


@dataclass
class SweepOutcome:
    """What a sweep did: its group, its curves (each with why it stopped), why the whole
    sweep ended early (a refused or failed point, a stop), and its result for the store."""

    group_id: int
    plan: SweepPlan
    curves: list[Curve] = field(default_factory=list)
    ended: str | None = None
    left_out: dict[str, str] = field(default_factory=dict)
    #: the walk is over (the result is final; while False, the last curve is still building)
    finished: bool = False

    def result(self) -> dict[str, Any]:
        """The group's result: the curves with their knees, and the sweep's headline (of the
        curves' knees the one with the most IOPS, its latency; the highest IOPS of any point
        whose p99 is under the ceiling)."""
        knees = [curve.knee for curve in self.curves if curve.knee is not None]
        every_point = [point for curve in self.curves for point in curve.points]
        best = best_under(every_point, self.plan.stop_p99_us)
        knee = max(knees, key=lambda p: p.iops, default=None)
        return {
            "sweep": self.plan.to_json(),
            "curves": [curve.to_json() for curve in self.curves],
            "knee": None if knee is None else knee.to_json(),
            "knee_lat_mean_us": None if knee is None else knee.lat_mean_us,
            "knee_lat_p99_us": None if knee is None else knee.lat_p99_us,
            "ceiling_p99_us": self.plan.stop_p99_us,
            "best_under_ceiling": None if best is None else best.to_json(),
            "ended": self.ended,
            "left_out": dict(self.left_out),
            "finished": self.finished,
        }


def _combined(points: Sequence[LoadPoint], run_ids: Sequence[int]) -> LoadPoint:
    """One point of several nodes run at once: IOPS and bandwidth added, latency the mean of
    the nodes' weighted by their IOPS (so Little's law adds up the nodes' outstanding I/O)."""
    if len(points) == 1:
        return points[0].with_run(run_ids[0])
    iops = sum(p.iops for p in points)

    def weighted(values: list[tuple[float | None, float]]) -> float | None:
        known = [(v, w) for v, w in values if v is not None]
        mass = sum(w for _, w in known)
        return sum(v * w for v, w in known) / mass if mass > 0 else None

    first = points[0]
    return LoadPoint(
        rw=first.rw,
        bs=first.bs,
        iodepth=first.iodepth,
        numjobs=first.numjobs,
        iops=iops,
        bw_kib_s=sum(p.bw_kib_s for p in points),
        lat_mean_us=weighted([(p.lat_mean_us, p.iops) for p in points]),
        lat_p50_us=weighted([(p.lat_p50_us, p.iops) for p in points]),
        lat_p99_us=weighted([(p.lat_p99_us, p.iops) for p in points]),
        percentiles_from="weighted over nodes",
        nodes=len(points),
        extra={"run_ids": list(run_ids)},
    )


def _point_of(runs: Sequence[RunRecord], results: Sequence[dict[str, Any] | None]) -> LoadPoint | str:
    """The point the runs measured, or why there is none."""
    points: list[LoadPoint] = []
    for run, result in zip(runs, results):
        if run.state is not RunState.SUCCEEDED:
            return f"run {run.id} on {run.host} {run.state.value}: {run.message or 'no message'}"
        found = points_of(result or {}, f"run {run.id}")
        if len(found) != 1:
            return f"run {run.id} on {run.host}: {len(found)} load points in its result, expected one"
        points.append(found[0])
    return _combined(points, [run.id for run in runs])


def plan_record(plan: SweepPlan) -> dict[str, Any]:
    """The sweep group's config: fio's, and under :data:`PLAN_KEY` the walk with its target and
    nodes (what a detached driver reads back to run it: :func:`plan_of`)."""
    walk = {**plan.to_json(), "target": plan.target, "nodes": [node_spec(node) for node in plan.nodes]}
    return {**plan.config, PLAN_KEY: walk}


def plan_of(config: Mapping[str, Any]) -> SweepPlan:
    """The plan a sweep group's config records; SweepRefused when it records none (an older
    sweep's has neither its target nor its nodes)."""
    walk = config.get(PLAN_KEY)
    if not isinstance(walk, dict) or "nodes" not in walk:
        raise SweepRefused("the group records no sweep plan to run (not a sweep, or one from an older racperf)")
    try:
        return SweepPlan(
            config={k: v for k, v in config.items() if k != PLAN_KEY},
            iodepths=tuple(int(d) for d in walk["iodepth"]),
            numjobs=tuple(int(j) for j in walk["numjobs"]),
            point_seconds=int(walk["point_seconds"]),
            stop_p99_ms=None if walk.get("stop_p99_ms") is None else float(walk["stop_p99_ms"]),
            stop_knee=bool(walk.get("stop_knee")),
            nodes=tuple(node_from_spec_dict(spec) for spec in walk["nodes"]),
            target=walk.get("target"),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SweepRefused(f"the group's sweep plan cannot be read: {exc}") from None


def begin_sweep(plan: SweepPlan, data_dir: Path) -> int:
    """Check the plan, plan and judge its first point on every node, then record the sweep's
    group (its config: :func:`plan_record`); its id. Raises as :func:`run_sweep` does, before
    anything is recorded."""
    plan.check()
    first_load = plan.curves()[0][0]
    for node in plan.nodes:  # refused anywhere: said before a group is recorded
        prepare_run("fio", plan.point_config(*first_load), node)
    with Store.open(Path(data_dir)) as store:
        group_id = store.create_group("fio", plan_record(plan), [node.name for node in plan.nodes])
        store.set_group_message(group_id, "sweep: starting its first point")
    return group_id


def run_sweep(
    plan: SweepPlan,
    data_dir: Path,
    *,
    on_start: Callable[[int], None] | None = None,
    on_point: Callable[[LoadPoint, Curve], None] | None = None,
    on_curve: Callable[[Curve], None] | None = None,
    stopping: threading.Event | None = None,
) -> SweepOutcome:
    """Run the sweep (see the module doc); blocks until it ends. ``on_start(group_id)`` once
    the group is recorded; ``on_point(point, curve so far)`` as each point finishes;
    ``on_curve(curve)`` as each curve ends. ``stopping`` set (a signal): the point running is
    stopped and the sweep ends there. Raises SweepRefused, ValueError (the first point refused
    on a node: nothing was started), ToolNotFound, SshError (a node not reached), StoreError before
    anything ran (the first point is planned and judged on every node before the group is
    recorded); later refusals end the sweep with the reason in ``ended``."""
    group_id = begin_sweep(plan, data_dir)
    if on_start is not None:
        on_start(group_id)
    return walk_sweep(plan, data_dir, group_id, on_point=on_point, on_curve=on_curve, stopping=stopping)


def walk_sweep(
    plan: SweepPlan,
    data_dir: Path,
    group_id: int,
    *,
    on_point: Callable[[LoadPoint, Curve], None] | None = None,
    on_curve: Callable[[Curve], None] | None = None,
    stopping: threading.Event | None = None,
) -> SweepOutcome:
    """Walk a sweep whose group :func:`begin_sweep` recorded: the loop of :func:`run_sweep`,
    shared by ``racperf sweep fio`` and the UI's detached driver (orchestration/sweep_driver.py)."""
    data_dir = Path(data_dir)
    stopping = stopping or threading.Event()
    outcome = SweepOutcome(group_id, plan)
    try:
        for walk in plan.curves():
            points: list[LoadPoint] = []
            stopped: str | None = None
            for iodepth, numjobs in walk:
                if stopping.is_set():
                    outcome.ended = "stopped"
                    break
                found = _run_point(plan, data_dir, group_id, iodepth, numjobs, stopping, outcome)
                if isinstance(found, str):
                    outcome.ended = found
                    break
                points.append(found)
                curve = curve_along(points, plan.varying, plan.stop_p99_us)
                _record(data_dir, group_id, outcome, curve)  # the curve builds in the store too
                if on_point is not None:
                    on_point(found, curve)
                stopped = stop_reason(points, plan.stop_p99_us, plan.stop_knee)
                if stopped is not None:
                    break
            if points:
                curve = curve_along(points, plan.varying, plan.stop_p99_us, stopped)
                outcome.curves.append(curve)
                if on_curve is not None:
                    on_curve(curve)
            if outcome.ended is not None:
                break
    finally:
        outcome.finished = True
        _record(data_dir, group_id, outcome)
    return outcome


def _record(data_dir: Path, group_id: int, outcome: SweepOutcome, building: Curve | None = None) -> None:
    """The group's result and message as they stand, with the curve still being walked."""
    now = SweepOutcome(outcome.group_id, outcome.plan, [*outcome.curves, *([building] if building else [])])
    now.ended, now.left_out, now.finished = outcome.ended, outcome.left_out, outcome.finished
    with Store.open(data_dir) as store:
        store.set_group_result(group_id, now.result())
        store.set_group_message(group_id, _message(now))


def _message(outcome: SweepOutcome) -> str:
    count = sum(len(curve.points) for curve in outcome.curves)
    text = f"sweep: {count} point{'s' if count != 1 else ''} in {len(outcome.curves)} curve(s)"
    return text + (f"; ended: {outcome.ended}" if outcome.ended else "")


def _run_point(
    plan: SweepPlan,
    data_dir: Path,
    group_id: int,
    iodepth: int,
    numjobs: int,
    stopping: threading.Event,
    outcome: SweepOutcome,
) -> LoadPoint | str:
    """One point on every node at once; its load point, or why the sweep ends here."""
    config = plan.point_config(iodepth, numjobs)
    try:
        started = launch_group(
            "fio", config, list(plan.nodes), data_dir=data_dir, target=plan.target, group_id=group_id
        )
    except (ValueError, KeyError, OSError, RuntimeError) as exc:
        return f"iodepth {iodepth}, numjobs {numjobs}: {exc.args[0] if isinstance(exc, KeyError) else exc}"
    outcome.left_out.update(started.left_out)
    if started.left_out:
        return f"iodepth {iodepth}, numjobs {numjobs}: not started on " + ", ".join(started.left_out)
    limit = hard_limit(float(plan.point_seconds + (as_int(plan.config.get("ramp_time_s")) or 0)))
    records: list[RunRecord] = []
    for run_id in started.runs.values():
        while True:
            record = wait_for_run(run_id, data_dir, 0.5)
            if record.state.finished:
                break
            if stopping.is_set():
                stop_group(group_id, data_dir)
            elif record.started_at + limit < time.time():  # the supervisor's own limit failed
                stop_group(group_id, data_dir)
        records.append(record)
    if stopping.is_set():
        return "stopped"
    with Store.open(data_dir) as store:
        results = [store.result(record.id) for record in records]
    return _point_of(records, results)
