"""A finished fio run at fixed times, seeded in a store, and an app showing just its result
view: what the result view's snapshots (tests/test_runs_ui_snapshot.py) and behaviour tests
(tests/test_runs_ui.py) both look at."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.screens.result_view import ResultView

#: a fixed moment (2025-11-30 02:33:20 UTC) so the header reads the same everywhere
STARTED_AT = 1764470000.0


def _latency(mean_us: float) -> dict[str, Any]:
    return {
        "min": mean_us / 4,
        "max": mean_us * 10,
        "mean": mean_us,
        "stdev": mean_us / 3,
        "percentiles": {"1.00": mean_us / 3, "50.00": mean_us, "99.00": mean_us * 4, "99.90": mean_us * 8},
    }


#: fio's 32 latency buckets (<= µs) as fio 3.x reports them: mostly empty, and a bucket
#: holding under 0.01 % of the I/Os reported as 0.01 (so the sum exceeds 100 a little)
LAT_DIST_PCT: dict[str, float] = {
    "0.002": 0.0,
    "0.004": 0.0,
    "0.01": 0.0,
    "0.02": 0.0,
    "0.05": 0.0,
    "0.1": 0.0,
    "0.25": 0.0,
    "0.5": 0.0,
    "0.75": 0.0,
    "1": 0.0,
    "2": 0.0,
    "4": 0.0,
    "10": 0.0,
    "20": 0.0,
    "50": 0.01,
    "100": 2.5,
    "250": 60.1,
    "500": 30.2,
    "750": 0.0,
    "1000": 7.2,
    "2000": 0.01,
    "4000": 0.0,
    "10000": 0.0,
    "20000": 0.0,
    "50000": 0.0,
    "100000": 0.0,
    "250000": 0.0,
    "500000": 0.0,
    "750000": 0.0,
    "1000000": 0.0,
    "2000000": 0.0,
    ">=2000000": 0.0,
}

#: the stored result: the shape tools/fio/__init__.py produces
RESULT: dict[str, Any] = {
    "tool": "fio",
    "version": "fio-3.33",
    "jobs": [
        {
            "name": "oltp",
            "read": {
                "iops": 1003.5,
                "bw_kib_s": 8028.0,
                "io_kib": 80280,
                "runtime_ms": 10000,
                "clat_us": _latency(210.0),
                "lat_us": _latency(215.0),
                "slat_us": {"min": 1, "max": 20, "mean": 4.5, "stdev": 1.2},
            },
            "write": {
                "iops": 431.2,
                "bw_kib_s": 3449.6,
                "io_kib": 34496,
                "runtime_ms": 10000,
                "clat_us": _latency(310.0),
                "lat_us": _latency(315.0),
                "slat_us": {"min": 1, "max": 25, "mean": 5.5, "stdev": 1.5},
            },
            "cpu": {"usr_pct": 3.1, "sys_pct": 9.8, "ctx": 14400, "majf": 0, "minf": 42},
            "iodepth_pct": {"1": 100.0, "2": 0.0, "4": 0.0, ">=64": 0.0},
            "iodepth_submit_pct": {"0": 0.0, "4": 100.0, ">=64": 0.0},
            "iodepth_complete_pct": {"0": 0.0, "4": 100.0, ">=64": 0.0},
            "lat_dist_pct": LAT_DIST_PCT,
        }
    ],
    "disk_util": [{"name": "sda", "read_ios": 10035, "write_ios": 4312, "util_pct": 87.5}],
}


def fio_sample(i: int) -> Sample:
    """fio's ``i``-th interval (second ``i``) of an 8k random read/write job: IOPS wander
    around 1,000 read and 430 written."""
    return Sample(
        t=float(i),
        metrics={
            "read_iops": 1000 + 100 * math.sin(i),
            "write_iops": 430 + 40 * math.cos(i),
            "read_bw_kib_s": 8000.0 + i,
            "write_bw_kib_s": 3440.0,
            "read_clat_p50_us": 200.0 + i,
            "read_clat_p99_us": 900.0 + 10 * i,
            "read_clat_p99.9_us": 2000.0,
            "write_clat_p50_us": 300.0,
            "write_clat_p99_us": 1200.0,
            "write_clat_p99.9_us": 2500.0,
        },
    )


def _create_fio_run(store: Store, runtime: dict[str, int]) -> int:
    """The 8k random read/write job's run record (``runtime``: its config's time key)."""
    return store.create_run(
        "fio",
        "local",
        "/tmp/racperf/fio-scratch.dat",
        {"rw": "randrw", "bs": "8k", **runtime},
        ["fio", "--name=oltp", "--rw=randrw", "--bs=8k", "--output-format=json+"],
        "fio-3.33",
    )


def seed_running_run(data_dir: Path, seconds: int) -> int:
    """An fio run of 60 s still running, ``seconds`` of :func:`fio_sample` in; returns its id."""
    with Store.open(data_dir) as store:
        run_id = _create_fio_run(store, {"runtime_s": 60})
        store.set_state(run_id, RunState.RUNNING)
        for i in range(1, seconds + 1):
            store.add_sample(run_id, fio_sample(i))
        # started as long ago as its samples say: the elapsed time and the ETA agree with them
        store._write("UPDATE runs SET started_at = ? WHERE id = ?", (time.time() - seconds, run_id))
    return run_id


def seed_finished_run(data_dir: Path) -> int:
    """One succeeded fio run with 10 samples and RESULT, at fixed times; returns its id."""
    with Store.open(data_dir) as store:
        run_id = _create_fio_run(store, {"runtime": 10})
        for i in range(1, 11):
            store.add_sample(run_id, fio_sample(i))
        store.set_result(run_id, RESULT)
        store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
        # the store stamps real times; pin them so the header is reproducible
        store._write(
            "UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?", (STARTED_AT, STARTED_AT + 11.0, run_id)
        )
    return run_id


class ResultViewApp(App[None]):
    """Just the result view of one run."""

    CSS_PATH = APP_CSS_PATH  # the app's layout of its screens and panels

    def __init__(self, data_dir: Path, run_id: int) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        yield Static("")

    def on_mount(self) -> None:
        self.push_screen(ResultView(self.data_dir, self.run_id))


async def loaded(pilot: Any) -> None:
    """Until the result view has its run (the store watcher reads it off the event loop)."""
    deadline = time.monotonic() + 10
    while not (isinstance(pilot.app.screen, ResultView) and pilot.app.screen.loaded):
        assert time.monotonic() < deadline, "the result view never got its run"
        await pilot.pause(0.05)
    await pilot.pause()
