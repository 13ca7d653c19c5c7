"""A sweep's detached driver (orchestration/sweep_driver.py): the plan read back from the
group's config, and a sweep stopped from another process (the UI's ``s``). Real fio on a temp
file; the walk itself, live and after the UI quit, is tests/ui/test_sweep_view.py's."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from racperf_tui.core.remote.cluster import LOCAL, Node
from racperf_tui.core.store import Store
from racperf_tui.orchestration.sweep import SweepPlan, SweepRefused, plan_of, plan_record
from racperf_tui.orchestration.sweep_driver import driver_alive, launch_sweep, stop_sweep
from tests.helpers import needs_fio


def test_the_plan_comes_back_from_the_group_s_config() -> None:
    node = Node("rac2", "10.0.0.2", user="oracle", port=2222, known_hosts=("/k",))
    plan = SweepPlan(
        config={"target": "/dev/sdz", "rw": "randread", "destructive_targets": ["/dev/sdz"]},
        iodepths=(1, 4, 16),
        numjobs=(1, 2),
        point_seconds=7,
        stop_p99_ms=5.0,
        nodes=(LOCAL, node),
        target="/dev/sdz",
    )
    assert plan_of(plan_record(plan)) == plan
    with pytest.raises(SweepRefused, match="records no sweep plan"):
        plan_of({"target": "/dev/sdz", "sweep": {"iodepth": [1, 2]}})  # a sweep of an older racperf
    with pytest.raises(SweepRefused, match="cannot be read"):
        plan_of({"sweep": {"iodepth": ["x"], "numjobs": [1], "point_seconds": 1, "nodes": []}})


@needs_fio
def test_a_sweep_stopped_from_another_process_ends_at_the_point_running(tmp_path: Path) -> None:
    data = tmp_path / "data"
    plan = SweepPlan(
        config={"target": str(tmp_path / "f"), "size": "8M", "rw": "randread", "ioengine": "libaio"},
        iodepths=(1, 2, 4),
        point_seconds=30,
        nodes=(LOCAL,),
        target=str(tmp_path / "f"),
    )
    group = launch_sweep(plan, data)
    deadline = time.monotonic() + 30
    with Store.open(data) as store:
        while not store.group_runs(group) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert store.group_runs(group), "the first point never started"
    assert driver_alive(data, group)
    started = time.monotonic()
    assert stop_sweep(group, data) == f"sweep g{group} stopped"
    assert time.monotonic() - started < 20  # the 30 s point did not run out
    assert not driver_alive(data, group)
    with Store.open(data) as store:
        result = store.group_result(group)
        runs = store.group_runs(group)
    assert result is not None and result["finished"] and result["ended"] == "stopped", result
    assert len(runs) == 1 and runs[0].state.finished and result["curves"] == []
    # the driver is gone: stopping again stops the group's runs (none running), said so
    assert stop_sweep(group, data) == f"sweep g{group}: no driver walking it; its runs: local stopped"
