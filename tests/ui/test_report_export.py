"""`e` in the result view writes the run's report into the data dir's reports/ and says where."""

from __future__ import annotations

import time
from pathlib import Path

from textual.widgets import DataTable

from racperf_tui.core.store import Store
from racperf_tui.reporting.figures import full
from racperf_tui.tools.fio import RESULTS, result_figures
from racperf_tui.ui.compare_data import remember_criteria_file
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from tests.helpers.pilot_apps import RunsApp, wait_until
from tests.helpers.result_view_run import ResultViewApp, loaded, seed_finished_run


async def test_e_writes_the_report_and_says_where(data_dir: Path) -> None:
    run_id = seed_finished_run(data_dir)
    app = ResultViewApp(data_dir, run_id)
    report = data_dir / "reports" / f"racperf-report-{run_id}.html"
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("e")
        deadline = time.monotonic() + 20
        said: list[str] = []
        while not said:
            assert time.monotonic() < deadline, "no notification of the report"
            await pilot.pause(0.05)
            said = [str(n.message) for n in app._notifications]
        assert said == [f"report written: {report}"]
    with Store.open(data_dir, read_only=True) as store:
        figures = result_figures(store.result(run_id))
    read_iops = next(spec for spec in RESULTS if spec.key == "read_iops")
    assert f'data-key="read_iops">{full(read_iops, figures["read_iops"])}<' in report.read_text()


async def test_e_on_marked_runs_writes_their_report_judged_by_the_remembered_criteria(
    data_dir: Path, tmp_path: Path
) -> None:
    first, second = seed_finished_run(data_dir), seed_finished_run(data_dir)
    criteria = tmp_path / "criteria.txt"
    criteria.write_text("read_iops >= 1000000\n")
    remember_criteria_file(data_dir, str(criteria))
    app = RunsApp(data_dir)
    report = data_dir / "reports" / f"racperf-report-{second}-{first}.html"
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: app.query_one(DataTable).row_count == 2, 10, "2 runs listed")
        await pilot.press("space", "space")  # the newest first: its run is the baseline
        assert panel.marks == [second, first]
        await pilot.press("e")
        await wait_until(pilot, lambda: bool(app._notifications), 20, "the report's notification")
        assert [str(n.message) for n in app._notifications] == [f"report written, FAIL: {report}"]
    html = report.read_text()
    assert 'id="comparison-table"' in html and f'id="run-{first}"' in html and f'id="run-{second}"' in html
    assert html.index(f'id="run-{second}"') < html.index(f'id="run-{first}"')
    assert "<code>read_iops &gt;= 1000000</code>" in html
