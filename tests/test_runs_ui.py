"""The Runs panel end to end: real fio on temp files, real detached supervisors, a real store.

Every test that starts a run stops it (and its supervisor) in a finally.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Iterator

import psutil
import pytest
from textual.app import App, ComposeResult
from textual.widgets import Button, DataTable, Footer, Input, Label, Select, Static

from racperf_tui.core.events import RunState
from racperf_tui.core.safety import check_write_target
from racperf_tui.core.store import Store
from racperf_tui.ui.runs_data import block_devices_of
from racperf_tui.ui.screens.confirm_destructive import ConfirmDestructive
from racperf_tui.ui.screens.fio_form import FioForm
from racperf_tui.ui.screens.quit_dialog import QuitDialog
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.screens.runs_panel import RunsPanel, ask_before_quit
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline

from conftest import needs_fio
from loopdev import loop_device, make_sparse_image, needs_loop, write_at
from test_runs_ui_snapshot import RESULT, ResultViewApp, seed_finished_run

SIZE = (80, 24)


class RunsApp(App[None]):
    """The Runs panel alone, with the dashboard's quit behaviour (the Disks panel is not ours)."""

    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir

    def compose(self) -> ComposeResult:
        yield RunsPanel(data_dir=str(self.data_dir))
        yield Footer()

    async def action_quit(self) -> None:
        ask_before_quit(self)


async def wait_until(pilot: Any, predicate: Any, timeout_s: float, what: str) -> None:
    """Let the app run until ``predicate()`` holds; fail naming ``what`` after ``timeout_s``."""
    import time

    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await pilot.pause(0.05)


def stop_everything(data_dir: Path) -> None:
    """Stop every run the store knows as unfinished, then kill whatever is left of them.

    A clean stop first (SIGTERM to the supervisor, which stops fio, which stops its workers):
    fio's job processes call setsid(), so after a SIGKILL of the supervisor a killpg of the
    benchmark's group misses them. Then every process still naming a run's target is killed.
    """
    from racperf_tui.core.runs import stop_run

    with Store.open(data_dir) as store:
        runs = store.list_runs()
    for run in runs:
        if not run.state.finished:
            try:
                stop_run(run.id, data_dir, grace_s=10)
            except Exception:
                pass
    targets = [run.target for run in runs if run.target]
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if proc.pid != os.getpid() and any(target in cmdline for target in targets):
            try:
                proc.kill()
            except psutil.Error:
                pass


@pytest.fixture
def runs_data_dir(data_dir: Path) -> Iterator[Path]:
    """The test's store; any run left running is killed afterwards."""
    try:
        yield data_dir
    finally:
        stop_everything(data_dir)


def fill(form: FioForm, name: str, value: str) -> None:
    form.query_one(f"#field-{name}", Input).value = value


# ---- form ------------------------------------------------------------------------------------
@needs_fio
async def test_form_validates_bs_and_previews_the_exact_command(runs_data_dir: Path, tmp_path: Path) -> None:
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, FioForm), 10, "the fio form")
        form: FioForm = app.screen  # type: ignore[assignment]
        await pilot.pause()
        preview = form.query_one("#preview", Static)
        before = str(preview.render())
        assert "fio" in before and "--bs=" in before
        fill(form, "target", str(tmp_path / "f.dat"))
        fill(form, "bs", "12q")
        await pilot.pause()
        error = str(form.query_one("#error-bs", Label).render())
        assert error, "no message for a bad bs"
        assert form.query_one("#field-bs", Input).has_class("-invalid")
        assert form.query_one("#launch", Button).disabled
        fill(form, "bs", "16k")
        fill(form, "runtime_s", "7")
        await pilot.pause()
        after = str(preview.render())
        assert str(form.query_one("#error-bs", Label).render()) == ""
        assert not form.query_one("#launch", Button).disabled
        assert after != before
        assert "--bs=16k" in after and "--runtime=7" in after and str(tmp_path / "f.dat") in after


async def test_form_without_fio_says_how_to_install_it(runs_data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, FioForm), 10, "the fio form")
        form = app.screen
        message = str(form.query_one("#fio-missing", Static).render())
        assert "apt-get install fio" in message and "dnf install fio" in message
        assert form.query_one("#launch", Button).disabled
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, FioForm), 10, "the form to close")
        assert app.query_one(RunsPanel).is_mounted  # the rest keeps working


# ---- launch, live view, result view ----------------------------------------------------------
@needs_fio
async def test_launch_from_form_live_samples_then_result(runs_data_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "fio-ui.dat"
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, FioForm), 10, "the fio form")
        form: FioForm = app.screen  # type: ignore[assignment]
        await pilot.pause()
        randread = next(i for i, (name, _) in enumerate(form.presets) if name.lower().startswith("8k random read"))
        form.query_one("#preset", Select).value = randread
        await pilot.pause()
        fill(form, "target", str(target))
        fill(form, "size", "16M")
        fill(form, "runtime_s", "2")
        fill(form, "ramp_time_s", "0")
        await pilot.pause()
        assert not form.errors, form.errors
        await pilot.click("#launch")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 20, "the live view")
        view: RunView = app.screen  # type: ignore[assignment]
        run_id = view.run_id

        spark = view.query_one("#spark-read_iops", MetricSparkline)
        await wait_until(pilot, lambda: spark.current is not None and spark.current > 0, 15,
                         "a live read IOPS value")
        assert list(spark.values) and max(spark.values) > 0
        await wait_until(pilot, lambda: view.live is not None and view.live.state == "succeeded", 20,
                         "the run to succeed")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView), 10, "the result view")
        result_view: ResultView = app.screen  # type: ignore[assignment]
        with Store.open(runs_data_dir) as store:
            stored = store.result(run_id)
        stored_read = stored["jobs"][0]["read"]
        row = result_view.query_one("#table-summary", DataTable).get_row_at(0)
        assert row[1] == "read"
        assert float(row[2]) == pytest.approx(round(stored_read["iops"], 1))
        assert float(row[2]) > 0


async def test_result_view_tables_show_the_stored_result(data_dir: Path) -> None:
    run_id = seed_finished_run(data_dir)
    app = ResultViewApp(data_dir, run_id)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.screen
        summary = view.query_one("#table-summary", DataTable)
        rows = [summary.get_row_at(i) for i in range(summary.row_count)]
        assert [(r[1], r[2], r[4]) for r in rows] == [("read", "1003.5", "8028"), ("write", "431.2", "3450")]
        latency = view.query_one("#table-latency", DataTable)
        clat_read = latency.get_row_at(1)
        assert clat_read[2:] == ["clat", "52.5", "210.0", "2100.0", "70.0"]
        pct = view.query_one("#table-percentiles", DataTable)
        p99 = next(pct.get_row_at(i) for i in range(pct.row_count) if pct.get_row_at(i)[0] == "99.00")
        assert p99[1:] == ["840.0", "1240.0"]
        util = view.query_one("#table-disk-util", DataTable).get_row_at(0)
        assert util == ["sda", "10035", "4312", "87.50"]
        texts = " ".join(str(label.render()) for label in view.query(".section"))
        assert "CPU" in texts and "I/O depths" in texts and "latency distribution" in texts
        detail_rows = [table.get_row_at(i) for table in view.query("#details DataTable")
                       for i in range(table.row_count)]
        assert ["ctx", str(RESULT["jobs"][0]["cpu"]["ctx"])] in detail_rows
        assert ["250", "60.10"] in detail_rows  # latency distribution: 60.1 % of I/Os <= 250 µs
        assert ["4", "0.0", "100.0", "100.0"] in detail_rows  # I/O depths: depth, submit, complete


# ---- write guard -----------------------------------------------------------------------------
async def _override_flow(pilot: Any, app: App[Any], verdict: Any, right_name: str) -> None:
    """Wrong name: refused, modal stays; right name: accepted."""
    answers: list[bool | None] = []
    app.push_screen(ConfirmDestructive(verdict), answers.append)
    await pilot.pause()
    modal = app.screen
    assert isinstance(modal, ConfirmDestructive)
    shown = " ".join(str(s.render()) for s in modal.query(".reason"))
    for reason in verdict.reasons:
        assert reason in shown
    modal.query_one("#override-name", Input).value = "sda-not-it"
    await pilot.click("#override")
    await pilot.pause()
    assert app.screen is modal and answers == []
    assert "is not" in str(modal.query_one("#override-error", Static).render())
    name_input = modal.query_one("#override-name", Input)
    name_input.value = right_name
    name_input.focus()
    await pilot.press("enter")  # the keyboard path: enter in the name field
    await wait_until(pilot, lambda: answers == [True], 10, "the override to be accepted")


async def test_destructive_modal_for_a_file_with_an_asm_header(tmp_path: Path, data_dir: Path) -> None:
    asm_file = make_sparse_image(tmp_path / "asm_disk1", 4)
    write_at(asm_file, 32, b"ORCLDISK")
    verdict = check_write_target(str(asm_file))
    assert not verdict.allowed and verdict.reasons
    app = RunsApp(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await _override_flow(pilot, app, verdict, str(asm_file))


@needs_loop
@needs_fio
async def test_form_refuses_ext4_loop_device_until_its_name_is_typed(runs_data_dir: Path, tmp_path: Path) -> None:
    image = make_sparse_image(tmp_path / "ext4.img", 64)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    with loop_device(image) as loop:
        assert block_devices_of(loop.path) == [loop.name]  # what the Disks panel is told
        app = RunsApp(runs_data_dir)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await wait_until(pilot, lambda: isinstance(app.screen, FioForm), 10, "the fio form")
            form: FioForm = app.screen  # type: ignore[assignment]
            await pilot.pause()
            randwrite = next(i for i, (name, _) in enumerate(form.presets) if name.lower().startswith("8k random write"))
            form.query_one("#preset", Select).value = randwrite
            await pilot.pause()
            fill(form, "target", loop.path)
            fill(form, "size", "8M")
            fill(form, "runtime_s", "1")
            fill(form, "ramp_time_s", "0")
            await pilot.pause()
            assert not form.errors, form.errors
            await pilot.click("#launch")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDestructive), 10, "the refusal")
            modal: ConfirmDestructive = app.screen  # type: ignore[assignment]
            assert any("ext2/3/4" in reason for reason in modal.verdict.reasons), modal.verdict.reasons
            modal.query_one("#override-name", Input).value = "loop"
            await pilot.click("#override")
            await pilot.pause()
            assert app.screen is modal
            await pilot.pause(0.25)  # a Button ignores clicks during its 0.2 s press effect
            modal.query_one("#override-name", Input).value = loop.name
            await pilot.click("#override")
            await wait_until(pilot, lambda: isinstance(app.screen, RunView), 20, "the live view")
            run_id = app.screen.run_id  # type: ignore[attr-defined]
            await wait_until(pilot, lambda: app.screen.live is not None  # type: ignore[attr-defined]
                             and app.screen.live.state not in ("pending", "running"), 20, "the run's end")
        with Store.open(runs_data_dir) as store:
            run = store.get_run(run_id)
        assert run.state is RunState.SUCCEEDED, (run.state, run.message)


# ---- quit dialog -----------------------------------------------------------------------------
def _launch_background_run(data_dir: Path, target: Path, runtime_s: int = 30) -> int:
    """A real fio run under a detached supervisor, as the form launches it."""
    from racperf_tui.core.runs import launch_run
    from racperf_tui.ui.screens.fio_form import config_dict, fio_module, preset_items

    fio = fio_module()
    name, preset = next((n, c) for n, c in preset_items(fio) if n.lower().startswith("8k random read"))
    config = config_dict(preset)
    config.update(target=str(target), size="16M", runtime_s=runtime_s, time_based=True, ramp_time_s=0)
    return launch_run("fio", config, data_dir=data_dir, target=str(target))


def _supervisor_pid(data_dir: Path, run_id: int) -> int:
    with Store.open(data_dir) as store:
        pid = store.get_run(run_id).supervisor_pid
    assert pid
    return pid


@needs_fio
async def test_quit_leave_running_keeps_the_supervisor(runs_data_dir: Path, tmp_path: Path) -> None:
    run_id = _launch_background_run(runs_data_dir, tmp_path / "leave.dat")
    pid = _supervisor_pid(runs_data_dir, run_id)
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.query_one(DataTable)
        assert "running" in str(table.get_row_at(0)[3]) or "pending" in str(table.get_row_at(0)[3])
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), 10, "the quit dialog")
        await pilot.click("#leave")
        await wait_until(pilot, lambda: not app.is_running, 10, "the app to exit")
    assert psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    with Store.open(runs_data_dir) as store:
        assert store.get_run(run_id).state in (RunState.RUNNING, RunState.PENDING)
    # racperf started again shows it live, and stops it
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 10, "the live view")
        view: RunView = app.screen  # type: ignore[assignment]
        await wait_until(pilot, lambda: view.live is not None and view.live.samples_seen > 0, 10,
                         "samples of the re-attached run")
        await pilot.press("s")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", 10, "confirm")
        await pilot.press("y")
        await wait_until(pilot, lambda: view.live is not None and view.live.state not in ("pending", "running"),
                         25, "the run to stop")
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@needs_fio
async def test_quit_stop_runs_stops_the_supervisor(runs_data_dir: Path, tmp_path: Path) -> None:
    run_id = _launch_background_run(runs_data_dir, tmp_path / "stop.dat")
    pid = _supervisor_pid(runs_data_dir, run_id)
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), 10, "the quit dialog")
        await pilot.click("#stop")
        await wait_until(pilot, lambda: not app.is_running, 25, "the app to stop the run and exit")
    with Store.open(runs_data_dir) as store:
        run = store.get_run(run_id)
    assert run.state.finished and run.state is not RunState.INTERRUPTED, run.state
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@needs_fio
async def test_dashboard_quit_leave_running_and_disks_panel_told_the_devices(runs_data_dir: Path,
                                                                            tmp_path: Path) -> None:
    """The real dashboard: its quit key asks; the Disks panel learns the run's devices."""
    from racperf_tui.ui.app import RacperfApp
    from racperf_tui.ui.widgets.iostat_panel import IostatPanel

    target = tmp_path / "dash.dat"
    run_id = _launch_background_run(runs_data_dir, target)
    pid = _supervisor_pid(runs_data_dir, run_id)
    expected_devices = set(block_devices_of(str(target)))
    app = RacperfApp(data_dir=str(runs_data_dir), clock=False)
    async with app.run_test(size=SIZE) as pilot:
        disks = app.query_one(IostatPanel)
        await wait_until(pilot, lambda: disks.model.benchmark_devices == expected_devices, 15,
                         f"the Disks panel to be told {expected_devices}")
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), 10, "the quit dialog")
        await pilot.press("l")
        await wait_until(pilot, lambda: not app.is_running, 10, "the app to exit")
    assert psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    with Store.open(runs_data_dir) as store:
        assert not store.get_run(run_id).state.finished


@needs_fio
async def test_panel_s_stops_the_selected_run_after_confirmation(runs_data_dir: Path, tmp_path: Path) -> None:
    run_id = _launch_background_run(runs_data_dir, tmp_path / "s.dat")
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        panel = app.query_one(RunsPanel)
        assert panel.selected_run_id() == run_id
        await pilot.press("s")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", 10, "confirm")
        await pilot.press("n")  # refused: nothing stops
        await pilot.pause(0.2)
        with Store.open(runs_data_dir) as store:
            assert not store.get_run(run_id).state.finished
        await pilot.press("s")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", 10, "confirm")
        await pilot.press("y")

        def stopped() -> bool:
            with Store.open(runs_data_dir) as store:
                return store.get_run(run_id).state is RunState.STOPPED
        await wait_until(pilot, stopped, 25, "the run to be STOPPED")
        await wait_until(pilot, lambda: "stopped" in str(app.query_one(DataTable).get_row_at(0)[3]), 10,
                         "the list to show it stopped")


async def test_quit_without_running_runs_exits_at_once(data_dir: Path) -> None:
    seed_finished_run(data_dir)
    app = RunsApp(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.query_one(DataTable).row_count == 1
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, 10, "the app to exit")


def test_live_update_replaces_only_a_queued_update_of_the_same_run() -> None:
    from racperf_tui.ui.messages import LiveRunState, RunLiveUpdate, RunsChanged

    older = RunLiveUpdate(LiveRunState(run_id=1, state="running", samples_seen=3))
    newer = RunLiveUpdate(LiveRunState(run_id=1, state="running", samples_seen=4))
    other_run = RunLiveUpdate(LiveRunState(run_id=2, state="running"))
    assert older.can_replace(newer)
    assert not older.can_replace(other_run)
    assert not older.can_replace(RunsChanged())
