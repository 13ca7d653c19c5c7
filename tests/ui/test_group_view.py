"""A run group in the UI: one row in the runs list (``gN``, its nodes), the group view with a
live row per node and the TOTAL (the n-th samples' IOPS summed, by orchestration/run_groups),
a node's own run view from there. The group is recorded in a real store as the launcher
records one (runs with its group_id); samples are added while the view is open."""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import DataTable, Label

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.ui.screens.group_view import TOTAL_ROW, GroupView, spark_text
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from tests.helpers.pilot_apps import RunsApp, wait_until


def _sample(read_iops: float, t: float = 1.0) -> Sample:
    return Sample(t, {"read_iops": read_iops, "write_iops": 0.0, "read_bw_kib_s": read_iops * 8.0}, {"interval_s": 1})


def _group(store: Store) -> tuple[int, dict[str, int]]:
    group = store.create_group("fio", {"extra_args": ["--rw=randread"]}, ["rac1", "rac2"])
    # recorded in the other order (launches end in any order): the rows follow the nodes'
    runs = {
        name: store.create_run("fio", name, "/u02/x", {}, ["fio"], None, group_id=group) for name in ("rac2", "rac1")
    }
    for run_id in runs.values():
        store.set_state(run_id, RunState.RUNNING)
    # both nodes' benchmarks started at the same whole second: their n-th samples cover the
    # same wall-clock second (the group's total adds up seconds, orchestration/group_alignment.py)
    whole = float(int(time.time()))
    store._write("UPDATE runs SET started_at = ? WHERE group_id = ?", (whole, group))
    store.set_group_message(group, "started on rac1, rac2")
    return group, runs


def test_spark_text_scales_to_the_maximum() -> None:
    assert spark_text([0.0, 50.0, 100.0]) == "▁▅█"
    assert spark_text([0.0, 0.0]) == "▁▁" and spark_text([]) == ""
    assert len(spark_text(list(range(100)), 24)) == 24


async def test_a_group_is_one_row_and_its_view_shows_each_node_and_the_total(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        alone = store.create_run("fio", "local", "/tmp/a", {}, ["fio"], None)
        store.set_state(alone, RunState.SUCCEEDED, exit_status=0)
        group, runs = _group(store)
    app = RunsApp(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: f"g{group}" in panel._rows_shown, 10, "the group's row")
        assert list(panel._rows_shown) == [f"g{group}", str(alone)]  # the nodes' runs are not rows
        cells = panel._rows_shown[f"g{group}"]
        key = f"g{group}"
        assert str(cells[0]) == key and str(panel.shown_cell(key, "target")) == "/u02/x"
        assert str(panel.shown_cell(key, "node")) == "rac1,rac2"  # the node column is 9 wide ("local srv")
        assert "running" in str(panel.shown_cell(key, "state")) and panel.shown_cell(key, "figure") == "2/2 live"
        table = panel.query_one(DataTable)
        table.move_cursor(row=0)
        assert panel.selected_group_id() == group and panel.selected_run_id() is None
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, GroupView), 5, "the group view")
        view = app.screen
        assert isinstance(view, GroupView)
        with Store.open(data_dir) as store:
            store.add_sample(runs["rac1"], _sample(1000.0))
            store.add_sample(runs["rac2"], _sample(3000.0))
            store.add_sample(runs["rac1"], _sample(2000.0, t=2))  # rac1's second: no total yet

        def both_seen() -> bool:
            return view.snapshot is not None and len(view.snapshot.node_series.get("rac1", {}).get("iops", ())) == 2

        await wait_until(pilot, both_seen, 5, "the samples")
        snapshot = view.snapshot
        assert snapshot is not None and snapshot.intervals == 1
        assert snapshot.total_series["iops"] == (4000.0,)
        assert snapshot.node_series["rac2"]["iops"] == (3000.0,)
        assert snapshot.total_series["mib_s"] == (4000.0 * 8 / 1024,)
        assert list(view._rows_shown) == ["rac1", "rac2", TOTAL_ROW]
        assert str(view._rows_shown[TOTAL_ROW][3]) == "4000" and str(view._rows_shown["rac1"][3]) == "2000"
        with Store.open(data_dir) as store:
            store.add_sample(runs["rac2"], _sample(1000.0, t=2))
        await wait_until(pilot, lambda: view.snapshot is not None and view.snapshot.intervals == 2, 5, "interval 2")
        assert view.snapshot.total_series["iops"] == (4000.0, 3000.0)
        # a node's own run view
        view.query_one(DataTable).move_cursor(row=1)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "rac2's run view")
        assert app.screen.run_id == runs["rac2"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, GroupView), 5, "back to the group")
        with Store.open(data_dir) as store:
            for name, iops in (("rac1", 1800.0), ("rac2", 2900.0)):
                store.set_result(runs[name], {"jobs": [{"read": {"iops": iops, "bw_kib_s": iops * 8.0}}]})
            store.set_state(runs["rac1"], RunState.SUCCEEDED, exit_status=0)
            store.set_state(runs["rac2"], RunState.FAILED, exit_status=1, message="fio: verify failed at 4096")
        await wait_until(
            pilot, lambda: str(view._rows_shown.get(TOTAL_ROW, ("",) * 3)[2]) == "failed", 5, "the group's end"
        )
        # ended: the TOTAL is the nodes' results added up, not the last second's 3000
        assert str(view._rows_shown[TOTAL_ROW][3]) == "4700"
        # and each node's row its result, which add up to it (tmux: n1 21.8k, its last
        # interval, over a TOTAL of 22.4k, its result, with the other node failed)
        assert [str(view._rows_shown[node][3]) for node in ("rac1", "rac2")] == ["1800", "2900"]
        said = str(view.query_one("#group-message", Label).render())
        assert "rac2 failed: fio: verify failed at 4096" in said and "the nodes' results added up" in said, said
        await pilot.press("escape")
        await wait_until(pilot, lambda: "failed" in str(panel.shown_cell(f"g{group}", "state")), 5, "the list's end")
        assert panel.shown_cell(f"g{group}", "figure") == "4700 IOPS"


async def test_a_node_lost_mid_run_shows_no_figure_while_the_others_run(data_dir: Path) -> None:
    """A node's run ended without a result (lost before fio reported one): its row shows no
    figure rather than its last interval beside the other nodes' live ones (tmux, 200x60: a
    lost n2's row read its last interval, 11.1k IOPS, for 40 s; a result, when fio left one,
    is shown instead, as the TOTAL adds it up)."""
    with Store.open(data_dir) as store:
        group, runs = _group(store)
        for t in (1, 2):
            store.add_sample(runs["rac1"], _sample(2000.0, t=t))
            store.add_sample(runs["rac2"], _sample(1500.0, t=t))
        store.set_state(runs["rac2"], RunState.FAILED, exit_status=255, message="lost link to rac2")
        store.add_sample(runs["rac1"], _sample(2500.0, t=3))
    app = RunsApp(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: f"g{group}" in panel._rows_shown, 10, "the group's row")
        # the list says the lost node while the group runs on, not "running" alone
        assert str(panel.shown_cell(f"g{group}", "state")) == "● 1 failed"
        panel.open_group(group)
        await wait_until(pilot, lambda: isinstance(app.screen, GroupView), 5, "the group view")
        view = app.screen
        assert isinstance(view, GroupView)
        await wait_until(pilot, lambda: "rac2" in view._rows_shown, 5, "the rows")
        await wait_until(pilot, lambda: str(view._rows_shown["rac1"][3]) == "2500", 5, "rac1's third second")
        rac2 = view._rows_shown["rac2"]
        assert str(rac2[2]) == "failed" and (str(rac2[3]), str(rac2[4])) == ("-", "-"), rac2
        assert rac2[6] == spark_text([1500.0, 1500.0], view.spark_width)  # its history stays drawn
        assert "running" in str(view._rows_shown["rac1"][2])


async def test_a_group_that_ended_unseen_shows_its_nodes_last_figures_added(data_dir: Path) -> None:
    """A list opened after the group ended (no results recorded): its newest samples' IOPS
    added, not an empty figure."""
    with Store.open(data_dir) as store:
        group, runs = _group(store)
        store.add_sample(runs["rac1"], _sample(1500.0))
        store.add_sample(runs["rac1"], _sample(2500.0))
        store.add_sample(runs["rac2"], _sample(700.0))
        store.set_state(runs["rac1"], RunState.SUCCEEDED, exit_status=0)
        store.set_state(runs["rac2"], RunState.FAILED, exit_status=1, message="x")
        assert store.last_sample(runs["rac1"]) is not None and store.last_sample(alone := runs["rac2"]) is not None
        assert store.last_sample(alone)[1].metrics["read_iops"] == 700.0
    app = RunsApp(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: f"g{group}" in panel._rows_shown, 10, "the group's row")
        assert panel.shown_cell(f"g{group}", "figure") == "3200 IOPS"


async def test_a_sweep_group_shows_its_latest_point_not_every_point_added(data_dir: Path) -> None:
    """A sweep's points are runs of one group on the same node, one after another: the row's
    figure is the node's latest point, not the points' IOPS added up."""
    with Store.open(data_dir) as store:
        group = store.create_group("fio", {"rw": "randread", "sweep": {"iodepth": [1, 2, 4]}}, ["local"])
        for iops in (500.0, 1000.0, 2000.0):
            run_id = store.create_run("fio", "local", "/dev/loop3", {}, ["fio"], None, group_id=group)
            store.set_state(run_id, RunState.RUNNING)
            store.add_sample(run_id, _sample(iops))
            store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
    app = RunsApp(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: f"g{group}" in panel._rows_shown, 10, "the sweep's row")
        assert panel.shown_cell(f"g{group}", "figure") == "2000 IOPS"


async def test_the_first_enter_opens_the_run_under_the_cursor(data_dir: Path) -> None:
    """Straight after the view opens (no sample yet): the first enter opens the run under the
    cursor (rac1's, the first row, recorded after rac2's), not the group's oldest run; then
    the cursor moved down, rac2's."""
    with Store.open(data_dir) as store:
        group, runs = _group(store)
    app = RunsApp(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: f"g{group}" in panel._rows_shown, 10, "the group's row")
        panel.open_group(group)
        await wait_until(pilot, lambda: isinstance(app.screen, GroupView), 5, "the group view")
        view = app.screen
        assert isinstance(view, GroupView)
        await wait_until(pilot, lambda: "rac2" in view._rows_shown, 5, "the nodes' rows")
        assert runs["rac1"] > runs["rac2"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "a node's run view")
        assert app.screen.run_id == runs["rac1"]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is view, 5, "back to the group")
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "a node's run view")
        assert app.screen.run_id == runs["rac2"]
