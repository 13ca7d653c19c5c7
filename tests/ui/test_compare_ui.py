"""The Runs tab's marks, compare screen, labels, notes, filter and delete, driven by Pilot on a
real store: two real fio runs capped at 500 and 1,000 IOPS (recorded once for the module by
``racperf run``), copied for each test that changes them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.orchestration.compare import compare_runs
from racperf_tui.tools.fio import result_figures
from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog
from racperf_tui.ui.dialogs.text_prompt import TextPrompt
from racperf_tui.ui.screens.compare_view import CompareView
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from racperf_tui.ui.widgets.chart import Chart
from tests.helpers import needs_fio, racperf_cmd
from tests.helpers.pilot_apps import RunsApp, wait_until

pytestmark = needs_fio  # every test reads the module's fio runs

SIZE = (80, 24)


@pytest.fixture(scope="module")
def fio_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 1 capped at 500 IOPS, run 2 at 1,000: 4 s of 4k random reads each."""
    data = tmp_path_factory.mktemp("compare-ui") / "data"
    target = data.parent / "f.dat"
    for rate in (500, 1000):
        done = subprocess.run(
            [*racperf_cmd(), "run", "--data-dir", str(data), "fio", "--", "--name=cmp", f"--filename={target}"]
            + ["--size=8m", "--rw=randread", "--bs=4k", "--ioengine=psync", f"--rate_iops={rate}"]
            + ["--runtime=4", "--time_based"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
    return data


@pytest.fixture
def runs_copy(fio_runs: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(fio_runs, tmp_path / "data"))


async def listed(pilot: Any, app: RunsApp, rows: int) -> RunsPanel:
    panel = app.query_one(RunsPanel)
    await wait_until(pilot, lambda: app.query_one(DataTable).row_count == rows, 10, f"{rows} runs listed")
    await pilot.pause()
    return panel


async def answer(pilot: Any, app: RunsApp, key: str, text: str) -> None:
    """Press ``key``, type ``text`` in the prompt it opens, enter."""
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt), 5, f"the prompt of {key}")
    app.screen.query_one(Input).value = text
    await pilot.press("enter")


def row_text(table: DataTable[Any], row: int) -> str:
    return table.render_line(row + 1).text  # line 0 is the header


def cells(table: DataTable[Any], key: str) -> list[str]:
    return [str(cell) for cell in table.get_row(key)]


async def test_marked_runs_compare_with_the_stores_figures_baseline_criteria_and_charts(
    runs_copy: Path, tmp_path: Path
) -> None:
    with Store.open(runs_copy, read_only=True) as store:
        figures = {run_id: result_figures(store.result(run_id)) for run_id in (1, 2)}
        samples = {run_id: store.sample_count(run_id) for run_id in (1, 2)}
    assert figures[1]["read_iops"] == pytest.approx(500, rel=0.03)
    assert figures[2]["read_iops"] == pytest.approx(1000, rel=0.03)
    app = RunsApp(runs_copy)
    async with app.run_test(size=SIZE) as pilot:
        panel = await listed(pilot, app, 2)
        table = app.query_one(DataTable)
        await pilot.press("space", "space")  # run 2 (the newest, first), then run 1
        assert panel.marks == [2, 1]
        assert row_text(table, 0).split()[:2] == ["B", "2"] and row_text(table, 1).split()[:2] == ["✓", "1"]
        status = app.query_one("#runs-status", Static)
        assert status.display and "marked 2, 1, baseline 2" in str(status.render())
        await pilot.press("b")  # the cursor stayed on the last row, run 1: the baseline
        assert panel.baseline == 1 and row_text(table, 1).split()[:2] == ["B", "1"]
        panel.reread()  # the watcher's next list repaints every row: the marks stay
        await pilot.pause(1.2)
        assert row_text(table, 0).split()[:2] == ["✓", "2"] and row_text(table, 1).split()[:2] == ["B", "1"]

        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareView) and app.screen.loads >= 1, 10, "compare")
        view = app.screen
        assert isinstance(view, CompareView)
        figures_table = view.query_one("#compare-table", DataTable)
        assert [str(c.label) for c in figures_table.ordered_columns] == ["figure", "unit", "#2", "#1 (base)"]
        iops = cells(figures_table, "read_iops")
        assert iops[:2] == ["read IOPS", "IOPS"]
        # the cells in full (10,458 not 10.5k), the difference from run 1's, past the noise
        assert iops[3] == f"{round(figures[1]['read_iops']):,}"
        # to 2 decimals as compare keeps it (then 1 on screen: 100.0549 is kept as 100.05 -> 100.0)
        diff = round((figures[2]["read_iops"] - figures[1]["read_iops"]) / figures[1]["read_iops"] * 100, 2)
        assert iops[2] == f"{round(figures[2]['read_iops']):,} {diff:+.1f}% better*"
        assert 94 < diff < 106
        bw = cells(figures_table, "read_bw_kib_s")
        assert bw[1] == "MiB/s" and bw[3] == f"{figures[1]['read_bw_kib_s'] / 1024:.1f}"
        with Store.open(runs_copy, read_only=True) as store:
            comparison = compare_runs(store, [2, 1], baseline=1)
        assert [row.spec.key for row in comparison.rows] == [str(key.value) for key in figures_table.rows]
        assert "differ in rate_iops: 1000 | 500" in str(view.query_one("#compare-differs", Static).render())

        await pilot.press("b")  # the next run (2) the baseline
        await wait_until(pilot, lambda: view.loads >= 2, 10, "the compare with run 2 as baseline")
        assert [str(c.label) for c in figures_table.ordered_columns][2:] == ["#2 (base)", "#1"]
        assert cells(figures_table, "read_iops")[3].startswith(f"{round(figures[1]['read_iops']):,} -")

        criteria = tmp_path / "signoff.criteria"
        criteria.write_text("read_iops >= 750 at read_clat_p99_us <= 1e9\n")
        await pilot.press("k")
        await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt), 5, "the criteria prompt")
        app.screen.query_one(Input).value = str(tmp_path / "missing.criteria")
        await pilot.press("enter")
        error = app.screen.query_one("#prompt-error", Static)
        assert "missing.criteria: cannot read the criteria" in str(error.render())
        app.screen.query_one(Input).value = str(criteria)
        await pilot.press("enter")
        await wait_until(pilot, lambda: view.loads >= 3, 10, "the compare with criteria")
        verdicts = view.query_one("#criteria-table", DataTable)
        row = [str(c) for c in verdicts.get_row_at(0)]
        assert row[0] == "read_iops >= 750 at read_clat_p99_us <= 1e9"
        assert row[1] == f"PASS {figures[2]['read_iops']:,.1f}; {figures[2]['read_clat_p99_us']:,.1f}"
        assert row[2].startswith(f"FAIL {figures[1]['read_iops']:,.1f};")
        assert (runs_copy / "settings.json").read_text().count(str(criteria)) == 1

        await pilot.press("right")
        await pilot.pause(0.3)
        charts = list(view.query(Chart))
        assert [chart.title for chart in charts][:2] == [
            "read IOPS per interval (IOPS)",
            "read BW per interval (MiB/s)",
        ]
        lines = {series.label: series for series in charts[0].series}
        assert set(lines) == {"#1", "#2"}
        assert (len(lines["#1"].ys), len(lines["#2"].ys)) == (samples[1], samples[2])
        middle = sorted(lines["#2"].ys)[len(lines["#2"].ys) // 2]
        assert middle == pytest.approx(1000, rel=0.05)

        await pilot.press("escape")
        assert not isinstance(app.screen, CompareView)
        assert panel.baseline == 2  # kept from the compare screen


async def test_label_note_filter_and_delete_with_its_confirmation(runs_copy: Path) -> None:
    """Runs recorded by fio (the module's); a third still going (this test's process its
    supervisor): delete refuses it and asks nothing."""
    with Store.open(runs_copy) as store:
        going = store.create_run("orion", "rac1", None, {}, [], None)
        store.set_supervisor_pid(going, os.getpid())
        store.set_state(going, RunState.RUNNING)
    app = RunsApp(runs_copy)
    async with app.run_test(size=SIZE) as pilot:
        panel = await listed(pilot, app, 3)
        table = app.query_one(DataTable)
        await pilot.press("down")  # run 2
        await answer(pilot, app, "l", "bad\x1b")
        assert "one line of printable text" in str(app.screen.query_one("#prompt-error", Static).render())
        app.screen.query_one(Input).value = "signoff"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "signoff" in row_text(table, 1), 10, "the label in the list")
        await answer(pilot, app, "a", "after the HBA firmware update")
        await wait_until(pilot, lambda: panel.runs[2].note is not None, 10, "the note stored")
        with Store.open(runs_copy, read_only=True) as store:
            assert (store.get_run(2).label, store.get_run(2).note) == ("signoff", "after the HBA firmware update")

        await answer(pilot, app, "slash", "host:x")
        assert "'host' is not a filter" in str(app.screen.query_one("#prompt-error", Static).render())
        app.screen.query_one(Input).value = "tool:fio"
        await pilot.press("enter")
        await pilot.pause()
        assert table.row_count == 2
        assert "filter tool:fio: 2 of 3 runs shown" in str(app.query_one("#runs-status", Static).render())
        await answer(pilot, app, "slash", "label:sign")
        await pilot.pause()
        assert table.row_count == 1 and row_text(table, 0).split()[0] == "2"

        await answer(pilot, app, "slash", "")
        await pilot.pause()
        assert table.row_count == 3 and not app.query_one("#runs-status", Static).display

        await pilot.press("home", "d")  # the running run, highlighted: refused, nothing asked
        await wait_until(
            pilot,
            lambda: len(app._notifications) > 0 and "still going" in str(list(app._notifications)[-1].message),
            10,
            "the refusal",
        )
        assert not isinstance(app.screen, ConfirmDialog)

        await pilot.press("down", "space", "space")  # runs 2 and 1 marked
        assert panel.marks == [2, 1]
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog), 10, "the delete confirmation")
        question = str(app.screen.query_one(Static).render())
        assert "Delete 2 runs?" in question and "run 2 [signoff] (fio on" in question
        assert f"its run directory {runs_copy / 'runs' / '1'}" in question.replace("\n", "")
        await pilot.press("y")
        await wait_until(pilot, lambda: table.row_count == 1, 10, "the runs deleted")
        assert panel.marks == [] and not (runs_copy / "runs" / "1").exists()
        with Store.open(runs_copy, read_only=True) as store:
            assert [run.id for run in store.list_runs()] == [going]
            assert store.samples(1) == [] and store.result(2) is None
