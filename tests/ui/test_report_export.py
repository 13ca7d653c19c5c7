"""`e` in the result view writes the run's report into the data dir's reports/ and says where."""

from __future__ import annotations

import time
from pathlib import Path

from racperf_tui.core.store import Store
from racperf_tui.reporting.figures import full
from racperf_tui.tools.fio import RESULTS, result_figures
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
