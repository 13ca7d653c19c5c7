"""The result view's Details tab shows what the supervisor recorded of the run's targets and
the protections in force where it ran (for a run on a node: what the node's net reported)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Static

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.ui.screens.result_view import ResultView
from tests.helpers.pilot_apps import wait_until
from tests.helpers.result_view_run import ResultViewApp

SAFETY = {
    "targets": [{"path": "/data/f.fio", "access": "read", "origin": "command-line job 'r' (rw=read)"}],
    "overridden": [],
    "device_nodes": [],
    "protections": [
        "every target checked by the write guard (mounts, swap, holders, open files, signatures) on rac1",
        "write watch on the node (every process of the run, by device number) (rac1)",
        "device jail not active on the node: the device jail needs root (rac1)",
    ],
}


def recorded_run(data: Path, safety: dict[str, Any] | None) -> int:
    with Store.open(data) as store:
        run_id = store.create_run(
            "fio", "rac1", "/data/f.fio", {"target": "/data/f.fio"}, ["fio", "job.fio"], "fio-3.33"
        )
        if safety is not None:
            store.add_raw(run_id, json.dumps(safety), "safety")
        store.set_state(run_id, RunState.SUCCEEDED, exit_status=0, message="ok")
    return run_id


async def test_the_details_tab_shows_the_targets_and_the_nodes_protections(tmp_path: Path) -> None:
    run_id = recorded_run(tmp_path / "data", SAFETY)
    app = ResultViewApp(tmp_path / "data", run_id)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView) and app.screen.loaded, 10, "the run")
        text = str(app.screen.query_one("#result-safety", Static).render())
        title = str(app.screen.query_one("#result-title").render())
    assert "fio fio-3.33 on /data/f.fio at rac1 " in title
    assert text.splitlines() == [
        "read  /data/f.fio  (command-line job 'r' (rw=read))",
        *(f"- {p}" for p in SAFETY["protections"]),
    ]


async def test_a_run_without_targets_has_no_safety_section(tmp_path: Path) -> None:
    run_id = recorded_run(tmp_path / "data", None)
    app = ResultViewApp(tmp_path / "data", run_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView) and app.screen.loaded, 10, "the run")
        assert not app.screen.query("#result-safety")


async def _title(data: Path, run_id: int) -> str:
    app = ResultViewApp(data, run_id)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView) and app.screen.loaded, 10, "the run")
        return str(app.screen.query_one("#result-title").render())


async def test_a_run_that_never_exited_says_no_exit_status(tmp_path: Path) -> None:
    """tmux, 200x60: a group's node refused at layout (its fio never started) read "took 3.5s
    exit None" in its result view's title."""
    with Store.open(tmp_path / "data") as store:
        never = store.create_run("fio", "n2", "/tmp/f", {}, ["fio", "job.fio"], None)
        store.set_state(never, RunState.FAILED, message="target: cannot lay out /tmp/f on n2: File exists")
        exited = store.create_run("fio", "n1", "/tmp/f", {}, ["fio", "job.fio"], None)
        store.set_state(exited, RunState.FAILED, exit_status=1, message="fio failed")
    titles = [await _title(tmp_path / "data", run_id) for run_id in (never, exited)]
    assert "exit" not in titles[0] and "None" not in titles[0], titles[0]
    assert titles[1].endswith("exit 1"), titles[1]
