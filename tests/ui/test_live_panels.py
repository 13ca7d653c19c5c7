"""The live view's extension point: a tool names a panel in its description, the run view
mounts it and hands it every update (the run's RunRecord, its recent Samples, the newest
extra), read by the store watcher from a real store."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.tool import MetricSpec, ToolDescription
from racperf_tui.core.store import Store
from racperf_tui.ui import runs_data
from racperf_tui.ui.messages import LiveRunState
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.tool_panels import live_panels
from tests.helpers.pilot_apps import ScreenApp, wait_until


class PointsPanel(Static):
    """A tool's panel: which load point the run is at, from its samples' extra."""

    def __init__(self) -> None:
        super().__init__("no point yet", id="points-panel")
        self.updates: list[LiveRunState] = []

    def show_live(self, live: LiveRunState) -> None:
        self.updates.append(live)
        self.update(f"point {live.extra.get('point', '?')} of {live.run.config['points'] if live.run else '?'}")


@pytest.fixture
def matrix_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool 'matrix' whose description asks for the 'points' panel (and one unknown panel)."""
    description = ToolDescription(
        name="matrix",
        metrics=(MetricSpec("iops", "IOPS", "IOPS", decimals=0, chart="iops"),),
        live_panels=("points", "not-installed"),
    )
    monkeypatch.setitem(runs_data._DESCRIPTIONS, "matrix", description)
    monkeypatch.setitem(live_panels.LIVE_PANELS, "points", PointsPanel)


def _running_matrix_run(data_dir: Path, points: int) -> int:
    """A running run of the 'matrix' tool in the store, as a supervisor leaves it."""
    with Store.open(data_dir) as store:
        run_id = store.create_run("matrix", "local", None, {"points": points}, ["matrix"], None)
        store.set_state(run_id, RunState.RUNNING)
    return run_id


async def _the_run_view(pilot: Pilot[None], app: ScreenApp) -> RunView:
    await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "the run view")
    assert isinstance(app.screen, RunView)
    return app.screen


async def test_a_tools_live_panel_is_mounted_and_gets_every_update(data_dir: Path, matrix_tool: None) -> None:
    run_id = _running_matrix_run(data_dir, points=3)
    app = ScreenApp(lambda: RunView(data_dir, run_id, tool="matrix"))
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _the_run_view(pilot, app)
        (panel,) = view.panels  # the unknown name is left out
        assert isinstance(panel, PointsPanel) and panel.parent is view.query_one("#run-metrics")
        with Store.open(data_dir) as store:
            for point in (1, 2, 3):
                store.add_sample(run_id, Sample(float(point), {"iops": 1000.0 * point}, {"point": point}))
                await wait_until(pilot, lambda p=point: view.live and view.live.samples_seen == p, 5, f"point {point}")
            store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
        await wait_until(pilot, lambda: panel.updates and panel.updates[-1].state == "succeeded", 5, "the end")
        await pilot.pause()
        last = panel.updates[-1]
        assert last.run is not None and last.run.id == run_id and last.run.state is RunState.SUCCEEDED
        assert [s.metrics["iops"] for s in last.samples] == [1000.0, 2000.0, 3000.0]
        assert str(panel.render()) == "point 3 of 3"
        # the sparklines stay above the panel
        children = list(view.query_one("#run-metrics").children)
        assert children.index(panel) == len(children) - 1 and view.sparklines["iops"] in children


class NotAPanel(Static):
    """A widget without ``show_live``: named by a tool (or an entry point), it is no panel."""


def test_only_widgets_that_are_live_panels_are_mounted(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, cls in live_panels.LIVE_PANELS.items():
        assert issubclass(cls, Widget) and issubclass(cls, live_panels.LivePanel), name
    monkeypatch.setitem(live_panels.LIVE_PANELS, "points", PointsPanel)
    monkeypatch.setitem(live_panels.LIVE_PANELS, "no-show-live", NotAPanel)
    assert live_panels.panel_class("points") is PointsPanel
    assert live_panels.panel_class("no-show-live") is None
    (panel,) = live_panels.live_panels_for(["no-show-live", "points", "not-installed"])
    assert isinstance(panel, PointsPanel) and isinstance(panel, live_panels.LivePanel)


async def test_the_live_state_is_the_enum_and_a_series_has_one_history(data_dir: Path, matrix_tool: None) -> None:
    """The run view gets the store's RunState (not its text), and its sparkline shows the
    series the poller snapshotted for that update: no second history of its own."""
    run_id = _running_matrix_run(data_dir, points=2)
    app = ScreenApp(lambda: RunView(data_dir, run_id, tool="matrix"))
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _the_run_view(pilot, app)
        with Store.open(data_dir) as store:
            for point in (1, 2):
                store.add_sample(run_id, Sample(float(point), {"iops": 1000.0 * point}, {"point": point}))
                await wait_until(pilot, lambda p=point: view.live and view.live.samples_seen == p, 5, f"point {point}")
        live = view.live
        assert live is not None and live.state is RunState.RUNNING and live.running and not live.ended
        assert live.series["iops"] == [1000.0, 2000.0]
        assert view.sparklines["iops"].values is live.series["iops"]
        with Store.open(data_dir) as store:
            store.set_state(run_id, RunState.FAILED, exit_status=1)
        await wait_until(pilot, lambda: view.live is not None and view.live.ended, 5, "the end")
        assert view.live.state is RunState.FAILED and view.live.state_name == "failed"
        assert "failed" in str(view.query_one("#run-status").render())
