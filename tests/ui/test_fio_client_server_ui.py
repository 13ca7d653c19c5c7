"""The live view of a fio client/server run says that fio's client mode gives no live figures
(fio issue 712) instead of empty charts: from the tool's description (``live_note``), whether
the view knew the tool when it opened or learns it from the run; other tools show no note."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.tools.fio.client_server import LIVE_NOTE
from racperf_tui.ui.screens.run_view import RunView
from tests.helpers.pilot_apps import ScreenApp, wait_until


@pytest.mark.parametrize("opened_with_tool", [True, False])
async def test_the_run_view_says_there_are_no_live_figures(data_dir: Path, opened_with_tool: bool) -> None:
    with Store.open(data_dir) as store:
        run_id = store.create_run("fio_cs", "local", None, {"servers": ["127.0.0.1:8765"]}, ["fio"], None)
        store.set_state(run_id, RunState.RUNNING)
    app = ScreenApp(lambda: RunView(data_dir, run_id, tool="fio_cs" if opened_with_tool else ""))
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
    app = ScreenApp(lambda: RunView(data_dir, run_id, tool=""))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "the run view")
        view = app.screen
        assert isinstance(view, RunView)
        await wait_until(pilot, lambda: view.live is not None and view.live.samples_seen == 1, 5, "the sample")
        await pilot.pause()
        assert not view.query_one("#run-live-note", Static).display
        assert "read_iops" in view.sparklines
