"""The live view of a fio client/server run says that fio's client mode gives no live figures
(fio issue 712) instead of empty charts: from the tool's description (``live_note``), whether
the view knew the tool when it opened or learns it from the run; other tools show no note."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from racperf_tui.core.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.tools.fio_client_server import LIVE_NOTE
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.screens.run_view import RunView


class ViewApp(App[None]):
    CSS_PATH = APP_CSS_PATH

    def __init__(self, data_dir: Path, run_id: int, tool: str) -> None:
        super().__init__()
        self.data_dir, self.run_id, self.tool = data_dir, run_id, tool

    def compose(self) -> ComposeResult:
        yield Static("")

    def on_mount(self) -> None:
        self.push_screen(RunView(self.data_dir, self.run_id, tool=self.tool))


async def wait_until(pilot: Any, predicate: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout_s} s waiting for {what}"
        await pilot.pause(0.05)


@pytest.mark.parametrize("opened_with_tool", [True, False])
async def test_the_run_view_says_there_are_no_live_figures(data_dir: Path, opened_with_tool: bool) -> None:
    with Store.open(data_dir) as store:
        run_id = store.create_run("fio_cs", "local", None, {"servers": ["127.0.0.1:8765"]}, ["fio"], None)
        store.set_state(run_id, RunState.RUNNING)
    app = ViewApp(data_dir, run_id, "fio_cs" if opened_with_tool else "")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "the run view")
        view = app.screen
        assert isinstance(view, RunView)
        await wait_until(pilot, lambda: view.live is not None and view.live.tool == "fio_cs", 5, "the first update")
        await pilot.pause()
        note = view.query_one("#run-live-note", Static)
        assert note.display and str(note.render()) == LIVE_NOTE
        assert view.sparklines == {}  # no empty charts
        assert note.region.height >= 1  # laid out on the screen, not only in the tree


async def test_a_tool_with_live_figures_shows_no_note(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        run_id = store.create_run("fio", "local", None, {}, ["fio"], None)
        store.set_state(run_id, RunState.RUNNING)
        store.add_sample(run_id, Sample(1.0, {"read_iops": 100.0}, {}))
    app = ViewApp(data_dir, run_id, "")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "the run view")
        view = app.screen
        assert isinstance(view, RunView)
        await wait_until(pilot, lambda: view.live is not None and view.live.samples_seen == 1, 5, "the sample")
        await pilot.pause()
        assert not view.query_one("#run-live-note", Static).display
        assert "read_iops" in view.sparklines
