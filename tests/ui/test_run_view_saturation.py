"""The live run view lists the run's saturation episodes as the supervisor records them
(the run's ``saturation`` stream), newest last, and shows nothing while there are none."""

from __future__ import annotations

import json
import time
from pathlib import Path

from textual.widgets import Static

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.disks.saturation import EPISODES_STREAM, Episode
from racperf_tui.core.store import Store
from racperf_tui.ui.screens.run_view import RunView
from tests.helpers.pilot_apps import ScreenApp, wait_until


async def test_the_run_view_lists_the_episodes_as_they_are_recorded(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        run_id = store.create_run("fio", "local", "/dev/loop9", {"iodepth": 64}, ["fio"], None)
        store.set_state(run_id, RunState.RUNNING)
        store.add_sample(run_id, Sample(1.0, {"read_iops": 2000.0}, {}))
    app = ScreenApp(lambda: RunView(data_dir, run_id, tool="fio"))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 5, "the run view")
        view = app.screen
        assert isinstance(view, RunView)
        await wait_until(pilot, lambda: view.live is not None and view.live.samples_seen == 1, 5, "the sample")
        await pilot.pause()
        box = view.query_one("#run-saturation", Static)
        assert not box.display
        began = time.time() - 5
        full = Episode(
            "loop9",
            "saturated",
            "queue full: avgqu-sz 15.8 of its limit 16 (nr_requests), %util 100",
            began,
            began + 5,
            "iodepth 64 x 1 job, 2,000 IOPS",
        )
        with Store.open(data_dir) as store:
            store.add_raw(run_id, json.dumps([full.as_dict()]) + "\n", EPISODES_STREAM)
        await wait_until(pilot, lambda: box.display, 5, "the episode")
        await pilot.pause()
        clock = time.strftime("%H:%M:%S", time.localtime(began))
        assert str(box.render()) == (
            f"! loop9 saturated from {clock} for 5 s at iodepth 64 x 1 job, 2,000 IOPS: queue full: avgqu-sz 15.8 of "
            "its limit 16 (nr_requests), %util 100"
        )
        assert box.region.height == 1
