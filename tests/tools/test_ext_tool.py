"""A tool from a package outside racperf_tui (tests/fixtures/ext_tool: a module and its
dist-info with a ``racperf.tools`` entry point), seen everywhere a tool is, with no file of
racperf naming it: ``racperf run --help``, ``racperf run demo --help``, a headless run, the
New run picker and the form generated from its options, the live view in its unit, the
result view with its figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList, Static

import racperf_tui.ui
from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.tools import tool_modules
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.screens.tool_form import ToolForm
from racperf_tui.ui.screens.tool_picker import ToolPicker
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from racperf_tui.ui.widgets.chart import Chart
from tests.helpers import FIXTURES
from tests.helpers.pilot_apps import RunsApp, wait_until

EXT_TOOL = FIXTURES / "ext_tool"


@pytest.fixture
def ext_tool(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The fixture package on sys.path (importlib.metadata finds its entry point) and on the
    PYTHONPATH of the commands and supervisors started; returns that environment."""
    monkeypatch.syspath_prepend(str(EXT_TOOL))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(EXT_TOOL), os.environ.get("PYTHONPATH")])))
    assert tool_modules()["demo"] == "racperf_ext_demo"
    return env


def racperf(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "racperf_tui", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_racperf_run_lists_describes_and_runs_the_external_tool(ext_tool: dict[str, str], data_dir: Path) -> None:
    assert "demo" in racperf(ext_tool, "run", "--help").stdout
    described = racperf(ext_tool, "run", "demo", "--help").stdout
    assert "demo options (--set KEY=VALUE):" in described and "ops (int, default 3)" in described
    done = racperf(
        ext_tool,
        "run",
        "demo",
        "--data-dir",
        str(data_dir),
        "--set",
        "ops=4",
        "--set",
        "interval_s=0.05",
        "--set",
        "rate=50",
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["metrics"]["ops_rate"] for line in lines if line["type"] == "sample"] == [50.0, 55.0, 60.0, 65.0]
    assert lines[-1]["state"] == "succeeded" and lines[-1]["result"]["mean_ops_rate"] == pytest.approx(57.5)
    refused = racperf(ext_tool, "run", "demo", "--data-dir", str(data_dir), "--set", "ops=0")
    assert refused.returncode == 2 and "ops" in refused.stderr


async def test_the_ui_picks_forms_watches_and_shows_the_external_tool(ext_tool: dict[str, str], data_dir: Path) -> None:
    app = RunsApp(data_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolPicker), 10, "the New run picker")
        tools = app.screen.query_one(OptionList)
        listed = [tools.get_option_at_index(i).id for i in range(tools.option_count)]
        assert "demo" in listed and "fio" in listed and "probe" in listed
        assert "a demo benchmark from a package of its own" in str(tools.get_option("demo").prompt)
        tools.highlighted = listed.index("demo")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the demo's form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        # a field per option, its default filled in
        assert form.query_one("#field-ops", Input).value == "3"
        assert form.query_one("#field-interval_s", Input).value == "0.2"
        await wait_until(pilot, lambda: "$ " in str(form.query_one("#preview", Static).render()), 10, "a preview")
        # the tool's own validation, under the field it names
        form.query_one("#field-ops", Input).value = "0"
        await wait_until(pilot, lambda: "ops" in form.errors, 10, "the tool's refusal of ops=0")
        assert "1 to 100" in str(form.query_one("#error-ops").render())
        form.query_one("#field-ops", Input).value = "6"
        form.query_one("#field-interval_s", Input).value = "0.3"
        await wait_until(
            pilot,
            lambda: not form.errors and "0.3" in str(form.query_one("#preview", Static).render()),
            10,
            "the corrected preview",
        )
        preview = str(form.query_one("#preview", Static).render())
        assert "-c" in preview and " 6 1000.0 0.3" in preview
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 20, "the live view")
        view: RunView = app.screen  # type: ignore[assignment]
        await wait_until(pilot, lambda: view.live is not None and view.live.samples_seen >= 2, 20, "live samples")
        await pilot.pause(0.1)
        spark = view.sparklines["ops_rate"]
        assert (spark.label, spark.unit) == ("demo rate", "ops/s")
        assert str(spark.query_one(".metric-value").render()).endswith("ops/s")
        await wait_until(pilot, lambda: view.live is not None and view.live.state == "succeeded", 20, "the end")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView), 10, "the result view")
        summary = app.screen.query_one("#table-summary", DataTable)
        rows = {str(summary.get_row_at(i)[0]): str(summary.get_row_at(i)[1]) for i in range(summary.row_count)}
        assert rows["mean rate"] == "1,250.0 ops/s" and rows["intervals"] == "6"
        await pilot.press("right")  # Charts: the demo's rate on an axis of its own unit
        await pilot.pause()
        charts = list(app.screen.query(Chart))
        assert [(c.y_label, [s.label for s in c.series]) for c in charts] == [("ops/s", ["demo rate"])]
        assert list(charts[0].series[0].ys) == [1000.0, 1100.0, 1200.0, 1300.0, 1400.0, 1500.0]
        await pilot.press("escape")
        table = app.query_one(RunsPanel).query_one(DataTable)
        # the list re-reads the store every second: its row catches up with the run's end
        await wait_until(
            pilot, lambda: "1250 ops/s" in [str(cell) for cell in table.get_row_at(0)], 10, "the runs list's figure"
        )
    with Store.open(data_dir) as store:
        (run,) = store.list_runs()
        assert run.tool == "demo" and run.state is RunState.SUCCEEDED and run.config == {"ops": 6, "interval_s": 0.3}


def test_no_file_of_racperf_names_the_external_tool() -> None:
    """The four views above show the demo from its description alone: racperf's own files
    (its package and its pyproject) never name it."""
    root = Path(racperf_tui.ui.__file__).parents[2]
    files = [*sorted((root / "racperf_tui").rglob("*.py")), *(root / "racperf_tui").rglob("*.tcss")]
    files.append(root / "pyproject.toml")
    naming = [str(f) for f in files if "racperf_ext_demo" in f.read_text() or '"demo"' in f.read_text()]
    assert len(files) > 50 and naming == []
