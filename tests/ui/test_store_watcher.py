"""No store read on the event loop: the whole dashboard (runs list, result view, live view,
network panel with a real probe pair) under a Store that records the thread of every call.

The Store is the real one; each of its methods is wrapped to note the calling thread and then
do what it does. The event loop runs on the main thread, so a call recorded there is a read
that could stall the UI behind SQLite's busy timeout.
"""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input

from racperf_tui.orchestration.pair_runs import finish_pair
from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.store_watcher import store_watcher
from racperf_tui.ui.tabs.network_panel import NetworkPanel
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from tests.helpers.pilot_apps import wait_until
from tests.helpers.result_view_run import seed_finished_run
from tests.helpers.store_calls import store_calls  # noqa: F401 (the fixture)


async def test_no_store_read_happens_on_the_event_loop(data_dir: Path, store_calls: list[Any]) -> None:  # noqa: F811

    finished_id = seed_finished_run(data_dir)
    store_calls.clear()  # the seeding is the test's own, on this thread
    app = RacperfApp(data_dir=str(data_dir), clock=False)
    pair = None
    async with app.run_test(size=(140, 40)) as pilot:
        main = threading.current_thread()
        runs = app.query_one(RunsPanel)
        await pilot.press("2")
        await wait_until(pilot, lambda: finished_id in runs.runs, 10, "the runs list")
        assert (
            runs.snapshot.figures[finished_id] == "1435 IOPS"
        )  # 1003.5 + 431.2  # read by the watcher: fio's headline
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView) and app.screen.loaded, 10, "the result view")
        summary = app.screen.query_one("#table-summary", DataTable)
        assert summary.row_count == 2
        await pilot.press("escape")
        # a real probe pair from the Network tab: both ends recorded, watched live
        await pilot.press("3")
        net = app.query_one(NetworkPanel)
        # 8 s: the client must still run when the Runs tab opens it (at 4 s a loaded run had
        # ended by then, and an ended run opens its result view, not the live one)
        net.query_one("#net-duration", Input).value = "8"
        net.query_one("#net-interval", Input).value = "0.25"
        await pilot.pause()
        net.action_start_pair()
        try:
            await wait_until(pilot, lambda: len(net.throughput_intervals) >= 2, 30, "the pair's samples")
            pair = net.pair
            assert pair is not None
            # its client run, live, from the Runs tab
            await pilot.press("2")
            await wait_until(pilot, lambda: pair.client_run_id in runs.runs, 10, "the client in the list")
            runs.open_run(pair.client_run_id)
            await wait_until(
                pilot,
                lambda: (
                    isinstance(app.screen, RunView) and app.screen.live is not None and app.screen.live.samples_seen
                ),
                20,
                "the live view's samples",
            )
            view = app.screen
            assert isinstance(view, RunView) and view.live is not None
            assert view.live.run is not None and view.live.run.id == pair.client_run_id  # the core's RunRecord
            assert view.live.samples and view.live.samples[-1].metrics  # and its Samples
            await wait_until(pilot, lambda: net.final_throughput_mbit_s is not None, 30, "the pair's end")
            ui_calls = list(store_calls)  # what follows is the test's own clean-up
        finally:
            if net.pair is not None:
                finish_pair(net.pair, data_dir, grace_s=5)
        watcher = store_watcher(app, str(data_dir))
        watcher_thread = watcher.thread
    on_loop = Counter(name for name, thread in ui_calls if thread is main)
    assert not on_loop, f"store calls on the event loop: {dict(on_loop)}"
    by_watcher = Counter(name for name, thread in ui_calls if thread is watcher_thread)
    # the watcher did the reading: the list, the result, the live run, the pair
    assert by_watcher["list_runs"] >= 2 and by_watcher["result"] >= 1
    assert by_watcher["samples"] >= 5 and by_watcher["get_run"] >= 3
    assert watcher_thread is not None and watcher_thread is not main
