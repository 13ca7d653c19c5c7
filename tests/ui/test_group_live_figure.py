"""The Runs tab's live figure of a run group: its nodes' IOPS of the same wall-clock second
(orchestration/group_alignment.py), as the group's TOTAL adds them, never each node's newest
sample added up. Two nodes that started 2.5 s apart, recorded in a real store."""

from __future__ import annotations

import time
from pathlib import Path

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from tests.helpers.pilot_apps import RunsApp, wait_until


def _sample(t: float, read_iops: float) -> Sample:
    return Sample(t, {"read_iops": read_iops, "write_iops": 0.0, "read_bw_kib_s": read_iops * 8.0}, {"interval_s": 1})


def _offset_group(store: Store) -> int:
    """rac1 from second W: 1000·t IOPS for t = 1..6 (up to W+6); rac2 from W+2.5: 10000, 20000
    (W+2.5 to W+4.5). The newest second both cover is [W+3, W+4): rac1 4000, rac2 half of
    10000 and half of 20000 = 15000, so 19000. Their newest samples added up: 26000."""
    group = store.create_group("fio", {"rw": "randread"}, ["rac1", "rac2"])
    runs = {
        name: store.create_run("fio", name, "/u02/x", {}, ["fio"], None, group_id=group) for name in ("rac1", "rac2")
    }
    whole = float(int(time.time()))
    for name, offset in (("rac1", 0.0), ("rac2", 2.5)):
        store.set_state(runs[name], RunState.RUNNING)
        store._write("UPDATE runs SET started_at = ? WHERE id = ?", (whole + offset, runs[name]))
    for t in range(1, 7):
        store.add_sample(runs["rac1"], _sample(t, 1000.0 * t))
    for t in (1, 2):
        store.add_sample(runs["rac2"], _sample(t, 10000.0 * t))
    return group


async def test_a_running_groups_figure_adds_its_nodes_same_second(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        group = _offset_group(store)
    app = RunsApp(data_dir)
    async with app.run_test(size=(120, 24)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: panel.snapshot is not None and group in panel.snapshot.group_iops, 10, "figure")
        assert panel.snapshot is not None
        assert panel.snapshot.group_iops[group] == 19000.0
        assert "19.0k IOPS" in [str(cell) for cell in panel._rows_shown[f"g{group}"]]


async def test_a_group_without_a_complete_second_shows_no_figure(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        group = store.create_group("fio", {"rw": "randread"}, ["rac1", "rac2"])
        runs = [store.create_run("fio", n, "/u02/x", {}, ["fio"], None, group_id=group) for n in ("rac1", "rac2")]
        for run_id in runs:
            store.set_state(run_id, RunState.RUNNING)
        store.add_sample(runs[0], _sample(1, 5000.0))  # rac2 has no sample: no second is complete
    app = RunsApp(data_dir)
    async with app.run_test(size=(120, 24)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: f"g{group}" in panel._rows_shown, 10, "the group's row")
        assert panel.snapshot is not None and group not in panel.snapshot.group_iops
        assert "2/2 live" in [str(cell) for cell in panel._rows_shown[f"g{group}"]]
