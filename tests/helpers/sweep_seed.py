"""A finished fio sweep stored with fixed points, as the sweep view's tests and
scripts/screenshots.py seed it."""

from __future__ import annotations

from pathlib import Path

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.remote.cluster import LOCAL
from racperf_tui.core.store import Store
from racperf_tui.orchestration.sweep import SweepOutcome, SweepPlan, plan_record
from racperf_tui.tools.fio.load_points import LoadPoint
from racperf_tui.tools.fio.sweep_curves import curve_along

#: the sweep's IOPS per iodepth: they flatten from iodepth 8 (the knee)
SWEEP_IOPS = {1: 4000.0, 2: 7800.0, 4: 14500.0, 8: 21000.0, 16: 22000.0, 32: 22400.0}


def seed_finished_sweep(data_dir: Path) -> int:
    """A sweep that ended, with the fixed points of :data:`SWEEP_IOPS`; its group id."""
    plan = SweepPlan(
        config={"target": "/dev/sdz", "rw": "randread", "bs": "8k", "ioengine": "libaio"},
        iodepths=tuple(SWEEP_IOPS),
        point_seconds=10,
        stop_knee=True,
        nodes=(LOCAL,),
        target="/dev/sdz",
    )
    with Store.open(data_dir) as store:
        group = store.create_group("fio", plan_record(plan), ["local"])
        points = []
        for depth, value in SWEEP_IOPS.items():
            run = store.create_run("fio", "local", "/dev/sdz", plan.point_config(depth, 1), ["fio"], None, group)
            store.set_state(run, RunState.SUCCEEDED, exit_status=0)
            latency = depth / value * 1e6
            points.append(
                LoadPoint("randread", "8k", depth, 1, value, value * 8, latency, latency * 0.8, latency * 3, run_id=run)
            )
        outcome = SweepOutcome(group, plan, finished=True)
        outcome.curves.append(
            curve_along(points, "iodepth", None, "2 points past the knee (iodepth 8, numjobs 1) without a 10 % gain")
        )
        store.set_group_result(group, outcome.result())
    return group
