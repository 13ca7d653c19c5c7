"""The Runs panel end to end: real fio on temp files, real detached supervisors, a real store.

Every test that starts a run stops it (and its supervisor) in a finally.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.widgets import Button, Checkbox, DataTable, Input, Label, Select, Static

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.disks.block_devices import block_devices_of
from racperf_tui.core.disks.saturation import SaturationRules
from racperf_tui.core.guard.safety import check_write_target
from racperf_tui.core.store import Store
from racperf_tui.tools.fio.result import parse_output
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.dialogs.confirm_destructive import ConfirmDestructive
from racperf_tui.ui.dialogs.quit_dialog import QuitDialog
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.screens.tool_form import ToolForm
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline
from tests.helpers import FIXTURES, needs_fio
from tests.helpers.loopdev import loop_device, make_sparse_image, needs_loop, write_at
from tests.helpers.pilot_apps import RunsApp, refusal_shown, wait_until
from tests.helpers.result_view_run import RESULT, ResultViewApp, loaded, seed_finished_run

SIZE = (80, 24)


async def listed(pilot: Any, app: App[Any]) -> None:
    """Until the runs list shows what the store watcher read (its first list, or why not)."""
    panel = app.query_one(RunsPanel)
    await wait_until(pilot, lambda: panel._hint_shown is not None, 10, "the runs list")
    await pilot.pause()
    await pilot.pause(0.1)  # and its layout (a hint of several lines)


def stop_everything(data_dir: Path) -> None:
    """Stop every run the store knows as unfinished, then kill whatever is left of them.

    A clean stop first (SIGTERM to the supervisor, which stops fio, which stops its workers):
    fio's job processes call setsid(), so after a SIGKILL of the supervisor a killpg of the
    benchmark's group misses them. Then every process still naming the store's directory (the
    supervisor's --data-dir, fio's job file in the run's directory) is killed.
    """
    from racperf_tui.orchestration.runs import stop_run

    with Store.open(data_dir) as store:
        runs = store.list_runs()
    for run in runs:
        if not run.state.finished:
            try:
                stop_run(run.id, data_dir, grace_s=10)
            except Exception:
                pass
    # by this store's directory, not the runs' targets: a loop device's name is reused by the
    # other test worker, whose processes name it too (fio runs a job file from the run's directory)
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if proc.pid != os.getpid() and str(data_dir) in cmdline:
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


def fill(form: ToolForm, name: str, value: str) -> None:
    form.query_one(f"#field-{name}", Input).value = value


# ---- form ------------------------------------------------------------------------------------
@needs_fio
async def test_form_validates_bs_and_previews_the_exact_command(runs_data_dir: Path, tmp_path: Path) -> None:
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")  # the New run picker: fio is first
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
        form: ToolForm = app.screen  # type: ignore[assignment]
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


async def test_form_without_fio_says_how_to_install_it(
    runs_data_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")  # the New run picker: fio is first
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
        form = app.screen
        message = str(form.query_one("#tool-missing", Static).render())
        assert "apt-get install fio" in message and "dnf install fio" in message
        assert form.query_one("#launch", Button).disabled
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ToolForm), 10, "the form to close")
        assert app.query_one(RunsPanel).is_mounted  # the rest keeps working


# ---- launch, live view, result view ----------------------------------------------------------
@needs_fio
async def test_launch_from_form_live_samples_then_result(runs_data_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "fio-ui.dat"
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")  # the New run picker: fio is first
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        await pilot.pause()
        assert form.description.preset("8k-randread").label.startswith("8k random read")  # type: ignore[union-attr]
        form.query_one("#preset", Select).value = "8k-randread"
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

        # the sparklines are made from the first live update (the metrics the samples carry)
        await wait_until(
            pilot,
            lambda: "read_iops" in view.sparklines and (view.sparklines["read_iops"].current or 0) > 0,
            15,
            "a live read IOPS value",
        )
        spark = view.sparklines["read_iops"]
        assert spark.unit == "IOPS" and list(spark.values) and max(spark.values) > 0
        await wait_until(
            pilot, lambda: view.live is not None and view.live.state == "succeeded", 20, "the run to succeed"
        )
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
        await loaded(pilot)
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
        detail_rows = [
            table.get_row_at(i) for table in view.query("#details DataTable") for i in range(table.row_count)
        ]
        assert ["ctx", str(RESULT["jobs"][0]["cpu"]["ctx"])] in detail_rows
        assert ["250", "60.10"] in detail_rows  # latency distribution: 60.1 % of I/Os <= 250 µs
        assert ["4", "0.0", "100.0", "100.0"] in detail_rows  # I/O depths: depth, submit, complete


def _latency_distribution_rows(view: ResultView) -> list[list[str]]:
    """The rows of the Details table under the first 'latency distribution' title."""
    widgets = list(view.query_one("#details").children)
    title_at = next(
        i for i, w in enumerate(widgets) if isinstance(w, Label) and "latency distribution" in str(w.render())
    )
    table = widgets[title_at + 1]
    assert isinstance(table, DataTable)
    return [table.get_row_at(i) for i in range(table.row_count)]


async def test_result_view_latency_distribution_shows_only_non_zero_buckets(data_dir: Path) -> None:
    """fio has 32 buckets, most empty: the non-zero ones as fio gave them (its 0.01 for
    'under 0.01 %' included), in fio's order, then one row for the empty ones."""
    run_id = seed_finished_run(data_dir)
    stored = RESULT["jobs"][0]["lat_dist_pct"]
    assert len(stored) == 32 and sum(1 for pct in stored.values() if pct == 0) == 26
    # a real fio 3.33 json+ report: unrounded figures, 23 empty buckets
    raw = json.loads((FIXTURES / "fio" / "fio-3.33-randread.jsonplus.json").read_text())
    with Store.open(data_dir) as store:
        real_id = store.create_run("fio", "local", "/var/tmp/f", {}, ["fio"], "fio-3.33")
        store.set_result(real_id, parse_output(json.dumps(raw)))
        store.set_state(real_id, RunState.SUCCEEDED, exit_status=0)
    real_buckets = [
        ("latency_us", "50", "50"),
        ("latency_us", "100", "100"),
        ("latency_us", "250", "250"),
        ("latency_us", "500", "500"),
        ("latency_us", "750", "750"),
        ("latency_us", "1000", "1000"),
        ("latency_ms", "2", "2000"),
        ("latency_ms", "4", "4000"),
        ("latency_ms", "10", "10000"),
    ]
    real_expected = [[bound, f"{raw['jobs'][0][unit][key]:.2f}"] for unit, key, bound in real_buckets]
    assert real_expected[:2] == [["50", "7.83"], ["100", "90.37"]]  # read off fio's JSON
    for shown_id, expected in [
        (
            run_id,
            [
                ["50", "0.01"],
                ["100", "2.50"],
                ["250", "60.10"],
                ["500", "30.20"],
                ["1000", "7.20"],
                ["2000", "0.01"],
                ["others", "0"],
            ],
        ),
        (real_id, real_expected + [["others", "0"]]),
    ]:
        app = ResultViewApp(data_dir, shown_id)
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot)
            assert _latency_distribution_rows(app.screen) == expected


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
            await pilot.press("n", "enter")  # the New run picker: fio is first
            await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
            form: ToolForm = app.screen  # type: ignore[assignment]
            await pilot.pause()
            form.query_one("#preset", Select).value = "8k-randwrite"
            await pilot.pause()
            fill(form, "target", loop.path)
            fill(form, "size", "8M")
            fill(form, "runtime_s", "1")
            fill(form, "ramp_time_s", "0")
            await pilot.pause()
            assert not form.errors, form.errors
            await pilot.click("#launch")
            await wait_until(pilot, lambda: refusal_shown(app), 10, "the refusal")
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
            await wait_until(
                pilot,
                lambda: (
                    app.screen.live is not None  # type: ignore[attr-defined]
                    and app.screen.live.state not in ("pending", "running")
                ),
                20,
                "the run's end",
            )
        with Store.open(runs_data_dir) as store:
            run = store.get_run(run_id)
        assert run.state is RunState.SUCCEEDED, (run.state, run.message)
        # the override names this device only; it is no blanket "destructive"
        assert run.config.get("destructive_targets") == [loop.path] and not run.config.get("destructive")


# ---- quit dialog -----------------------------------------------------------------------------
def _launch_background_run(data_dir: Path, target: Path, runtime_s: int = 30) -> int:
    """A real fio run under a detached supervisor, as the form launches it."""
    from racperf_tui.orchestration.runs import launch_run
    from racperf_tui.tools.fio.config import preset_config

    config = preset_config("8k-randread").to_dict()
    config.update(target=str(target), size="16M", runtime_s=runtime_s, time_based=True, ramp_time_s=0)
    return launch_run("fio", config, data_dir=data_dir, target=str(target))


def _supervisor_pid(data_dir: Path, run_id: int) -> int:
    with Store.open(data_dir) as store:
        pid = store.get_run(run_id).supervisor_pid
    assert pid
    return pid


@needs_fio
def supervisor_gone(pid: int, timeout_s: float) -> bool:
    """The supervisor exits once it has recorded the run's end (closing the store, its
    children reaped): a few ms after the state the view shows, more under load."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


async def test_quit_leave_running_keeps_the_supervisor(runs_data_dir: Path, tmp_path: Path) -> None:
    run_id = _launch_background_run(runs_data_dir, tmp_path / "leave.dat")
    pid = _supervisor_pid(runs_data_dir, run_id)
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, app)
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
        await listed(pilot, app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 10, "the live view")
        view: RunView = app.screen  # type: ignore[assignment]
        await wait_until(
            pilot, lambda: view.live is not None and view.live.samples_seen > 0, 10, "samples of the re-attached run"
        )
        await pilot.press("s")
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "ConfirmDialog", 10, "confirm")
        await pilot.press("y")
        await wait_until(
            pilot,
            lambda: view.live is not None and view.live.state not in ("pending", "running"),
            25,
            "the run to stop",
        )
    assert supervisor_gone(pid, 10), f"the supervisor {pid} still runs 10 s after its run ended"


@needs_fio
async def test_quit_stop_runs_stops_the_supervisor(runs_data_dir: Path, tmp_path: Path) -> None:
    run_id = _launch_background_run(runs_data_dir, tmp_path / "stop.dat")
    pid = _supervisor_pid(runs_data_dir, run_id)
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, app)
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), 10, "the quit dialog")
        await pilot.click("#stop")
        await wait_until(pilot, lambda: not app.is_running, 25, "the app to stop the run and exit")
    with Store.open(runs_data_dir) as store:
        run = store.get_run(run_id)
    assert run.state.finished and run.state is not RunState.INTERRUPTED, run.state
    assert supervisor_gone(pid, 10), f"the supervisor {pid} still runs 10 s after its run ended"


@needs_fio
async def test_dashboard_quit_leave_running_and_disks_panel_told_the_devices(
    runs_data_dir: Path, tmp_path: Path
) -> None:
    """The real dashboard: its quit key asks; the Disks panel learns the run's devices."""
    from racperf_tui.ui.app import RacperfApp
    from racperf_tui.ui.tabs.iostat_panel import IostatPanel

    target = tmp_path / "dash.dat"
    run_id = _launch_background_run(runs_data_dir, target)
    pid = _supervisor_pid(runs_data_dir, run_id)
    expected_devices = set(block_devices_of(str(target)))
    app = RacperfApp(data_dir=str(runs_data_dir), clock=False)
    async with app.run_test(size=SIZE) as pilot:
        disks = app.query_one(IostatPanel)
        await wait_until(
            pilot,
            lambda: disks.model.benchmark_devices == expected_devices,
            15,
            f"the Disks panel to be told {expected_devices}",
        )
        # and the run's load, said with each saturation episode that begins there
        await wait_until(
            pilot, lambda: disks.model.load_note.startswith(f"run {run_id} iodepth "), 15, "the run's load"
        )
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
        await listed(pilot, app)
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
        await wait_until(
            pilot,
            lambda: "stopped" in str(app.query_one(DataTable).get_row_at(0)[3]),
            10,
            "the list to show it stopped",
        )


async def test_quit_without_running_runs_exits_at_once(data_dir: Path) -> None:
    seed_finished_run(data_dir)
    app = RunsApp(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, app)
        assert app.query_one(DataTable).row_count == 1
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, 10, "the app to exit")


def test_live_update_replaces_only_a_queued_update_of_the_same_run() -> None:
    from racperf_tui.ui.messages import LiveRunState, RunLiveUpdate, RunsChanged

    older = RunLiveUpdate(LiveRunState(run_id=1, state=RunState.RUNNING, samples_seen=3))
    newer = RunLiveUpdate(LiveRunState(run_id=1, state=RunState.RUNNING, samples_seen=4))
    other_run = RunLiveUpdate(LiveRunState(run_id=2, state=RunState.RUNNING))
    assert older.can_replace(newer)
    assert not older.can_replace(other_run)
    assert not older.can_replace(RunsChanged())


@needs_fio
async def test_form_empty_number_field_says_what_it_needs(runs_data_dir: Path) -> None:
    """A cleared runtime said "None is not a whole number of seconds"; shift+tab from the
    target stopped on an invisible scroll area before reaching the preset."""
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")  # the New run picker: fio is first
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        await pilot.pause()
        assert app.focused is form.query_one("#field-target", Input)
        await pilot.press("shift+tab")
        assert app.focused is form.query_one("#preset", Select)
        fill(form, "runtime_s", "")
        fill(form, "iodepth", "")
        fill(form, "bs", "")
        await pilot.pause()
        runtime_error = str(form.query_one("#error-runtime_s", Label).render())
        assert runtime_error == "empty: needs a whole number of seconds (0 to 604800)"
        assert str(form.query_one("#error-iodepth", Label).render()) == "empty: needs a whole number from 1 to 65536"
        assert str(form.query_one("#error-bs", Label).render()) == "empty: needs a size like 4k, 8k, 1m"
        assert "None" not in str(form.query_one("#form-general-error", Static).render())
        assert form.query_one("#launch", Button).disabled


def test_stopped_run_progress_is_how_far_it_got_not_fios_final_100(data_dir: Path) -> None:
    """fio's report after SIGTERM says progress 100 % / ETA 0; the live view showed a full bar
    for a 60 s run stopped after a moment."""
    from racperf_tui.core.contract.events import RunState, Sample
    from racperf_tui.core.store import Store
    from racperf_tui.ui.runs_data import LivePoller

    with Store.open(data_dir) as store:
        ids = []
        for final_state in (RunState.STOPPED, RunState.SUCCEEDED):
            run_id = store.create_run("fio", "local", "/tmp/x", {"runtime_s": 60, "time_based": True}, ["fio"], None)
            store.set_state(run_id, RunState.RUNNING)
            store.add_sample(run_id, Sample(1.0, {"read_iops": 10.0}, {"progress_pct": 1.7, "eta_s": 59.0}))
            store.add_sample(run_id, Sample(1.4, {"read_iops": 9.0}, {"progress_pct": 100.0, "eta_s": 0.0}))
            store.set_state(run_id, final_state)
            ids.append(run_id)
    stopped, succeeded = (LivePoller(data_dir, run_id) for run_id in ids)
    try:
        live = stopped.poll()
        assert live.state == "stopped"
        assert live.progress_pct is not None and live.progress_pct < 10.0
        assert live.eta_s is None
        assert succeeded.poll().progress_pct == 100.0
    finally:
        stopped.close()
        succeeded.close()


async def test_dialogs_show_their_keys_and_fit_80_columns() -> None:
    """Under a dialog the footer shows the screen below's keys ('s Stop run'), so the
    dialog's own keys are in its button labels; all buttons inside the dialog at 80x24."""
    from textual.app import App

    from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog

    app = App()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(QuitDialog(["3"]))
        await pilot.pause()
        labels = [str(b.label) for b in app.screen.query(Button)]
        assert labels == ["Stop runs (s)", "Leave running (l)", "Cancel (esc)"]
        box = app.screen.query_one("Vertical").region
        for button in app.screen.query(Button):
            assert box.contains_region(button.region), f"{button.label} outside the dialog"
        await pilot.press("l")
        await pilot.pause()
        app.push_screen(ConfirmDialog("Stop run 3?", yes_label="Stop run"))
        await pilot.pause()
        assert [str(b.label) for b in app.screen.query(Button)] == ["Stop run (y)", "No (n)"]


async def test_sparkline_of_zeros_is_drawn_low_not_full() -> None:
    """The first sample of a read-only run has write IOPS 0: it was drawn as a full bar."""
    from textual.app import App
    from textual.widgets import Sparkline

    from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline

    class SparkApp(App[None]):
        def compose(self) -> ComposeResult:
            yield MetricSparkline("write IOPS", id="spark")

    app = SparkApp()
    async with app.run_test(size=(60, 3)) as pilot:
        metric = app.query_one(MetricSparkline)
        metric.push(0.0)
        await pilot.pause()
        line = metric.query_one(Sparkline).render_line(0).text
        assert line and "█" not in line
        assert str(metric.query_one(".metric-value", Label).render()) == "0"
        metric.push(5.0)
        await pilot.pause()
        line = metric.query_one(Sparkline).render_line(0).text
        assert line.startswith("▁") and line.endswith("█")


async def test_broken_store_message_is_whole_at_80_columns(data_dir: Path) -> None:
    """Cut to one line at 80 columns it read "cannot open the run store: cannot use the run
    store": neither the file nor the reason."""
    (data_dir / "runs.sqlite3").write_bytes(b"this is not sqlite" * 100)
    app = RunsApp(data_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await listed(pilot, app)
        hint = app.query_one("#runs-hint", Static)
        # the message arrives from the store watcher; its wrapped layout comes a turn later
        await wait_until(pilot, lambda: hint.region.height >= 3, 5, "the whole message")
        lines = [hint.render_line(y).text.strip() for y in range(hint.region.height)]
        shown = " ".join(lines)
        assert hint.region.height >= 3 and hint.region.bottom <= 24
        assert str(data_dir / "runs.sqlite3").replace(" ", "") in shown.replace(" ", "")
        assert "file is not a database" in shown and "move it aside" in shown
        assert "sqlite3 FILE .recover" in shown.replace("  ", " ")


def test_runs_list_figure_of_network_runs_is_their_rate_not_0_iops() -> None:
    """A probe / iperf3 run showed "0 IOPS" in the runs list. The figure is the tool
    description's headline, in its declared unit."""
    from racperf_tui.ui.runs_data import description_of

    fio, probe, iperf3, netperf = (description_of(t) for t in ("fio", "probe", "iperf3", "netperf"))
    assert fio.sample_headline({"read_iops": 16021.2, "write_iops": 6000.0}) == "22.0k IOPS"
    assert (
        probe.sample_headline({"throughput_mib_s": 3334.0, "throughput_mbit_s": 27967.5, "latency_ms": 0.3})
        == "28.0 Gbit/s"
    )
    assert iperf3.sample_headline({"throughput_mbit_s": 940.4}) == "940 Mbit/s"
    assert (
        probe.sample_headline({"throughput_mib_s": 0.0, "throughput_mbit_s": 0.0, "latency_ms": 0.018}) == "0.018 ms"
    )  # probe RTT
    assert netperf.sample_headline({"trans_per_s": 20345.0}) == "20k trans/s"  # TCP_RR, 11 cells
    assert iperf3.headline({"received_mbit_s": 18200.0, "sent_mbit_s": 18300.0}) == "18.2 Gbit/s"
    assert probe.headline({"avg_throughput_mib_s": 100.0}) == "839 Mbit/s"
    assert fio.headline({"jobs": [{"read": {"iops": 100.0}, "write": {"iops": 50.0}}]}) == "150 IOPS"
    assert probe.headline({"role": "server", "connections": 1}) == ""
    assert description_of("no-such-tool").headline({"x": 1.0}) == ""
    assert all(
        len(f) <= 11
        for f in (iperf3.sample_headline({"throughput_mbit_s": 99999.0}), netperf.sample_headline({"trans_per_s": 1e7}))
    )


async def test_result_view_of_a_real_probe_run_does_not_crash_the_app(data_dir: Path) -> None:
    """Enter on a finished probe run in the Runs list killed the whole dashboard: the probe's
    result has "messages" as a count, and the view sliced it like fio's message list."""
    import time as clock

    from racperf_tui.core.contract.events import RunState
    from racperf_tui.orchestration.pair_runs import finish_pair, launch_pair

    pair = launch_pair(
        "probe",
        {"bind": "127.0.0.1", "port": 0},
        {"host": "127.0.0.1", "port": 0, "duration_s": 1.5, "interval_s": 0.5, "mode": "ASYNC"},
        data_dir=data_dir,
    )
    try:
        deadline = clock.monotonic() + 20
        with Store.open(data_dir) as store:
            while not store.get_run(pair.client_run_id).state.finished:
                assert clock.monotonic() < deadline, "the probe client did not finish"
                clock.sleep(0.1)
            assert store.get_run(pair.client_run_id).state is RunState.SUCCEEDED
            result = store.result(pair.client_run_id)
    finally:
        finish_pair(pair, data_dir, grace_s=5)
    assert isinstance(result["messages"], int) and result["avg_throughput_mib_s"] > 0
    app = ResultViewApp(data_dir, pair.client_run_id)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        view = app.screen
        summary = view.query_one("#table-summary", DataTable)
        rows = {summary.get_row_at(i)[0]: summary.get_row_at(i)[1] for i in range(summary.row_count)}
        assert rows["mode"] == "ASYNC"
        # the probe's description: the throughput, stored in MiB/s, shown in Mbit/s
        number, unit = str(rows["throughput"]).split()
        assert unit == "Mbit/s"
        assert float(number.replace(",", "")) == pytest.approx(result["avg_throughput_mib_s"] * 8.388608, abs=0.1)
        assert "avg_throughput_mib_s" not in rows
        sections = [str(label.render()) for label in view.query(".section") if label.display]
        assert "Result" in sections and "Latency (µs)" not in sections and "IOPS and bandwidth" not in sections


async def test_live_view_of_a_probe_run_shows_its_own_metrics(data_dir: Path) -> None:
    """Opening a running probe run showed fio's ten sparklines, all '-', and ETA '-'."""
    from racperf_tui.orchestration.pair_runs import finish_pair, launch_pair, stop_pair

    class LiveApp(App[None]):
        CSS_PATH = APP_CSS_PATH  # the app's layout of its screens and panels

        def on_mount(self) -> None:
            self.push_screen(RunView(str(data_dir), pair.client_run_id))

    pair = launch_pair(
        "probe",
        {"bind": "127.0.0.1", "port": 0},
        {"host": "127.0.0.1", "port": 0, "duration_s": 20, "interval_s": 0.25, "mode": "SYNC", "length": 65536},
        data_dir=data_dir,
    )
    try:
        app = LiveApp()
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(
                pilot,
                lambda: (
                    isinstance(app.screen, RunView)
                    and app.screen.live is not None
                    and app.screen.live.samples_seen >= 3
                ),
                20,
                "live probe samples",
            )
            await pilot.pause(0.3)
            view: RunView = app.screen  # type: ignore[assignment]
            # the probe's live metrics (its MiB/s twin of the Mbit/s figure is no sparkline)
            assert [spec.key for spec in view.metrics] == ["throughput_mbit_s", "latency_ms"]
            sparklines = list(view.query(MetricSparkline))
            assert [(s.label, s.unit) for s in sparklines] == [("throughput", "Mbit/s"), ("latency", "ms")]
            throughput, latency = sparklines
            assert len(throughput.values) >= 3 and all(v > 0 for v in throughput.values)
            assert throughput.current == view.live.current["throughput_mbit_s"]
            assert 0 < latency.current < 1000
            assert view.live.progress_pct is not None and 0 < view.live.progress_pct < 100
            assert view.live.eta_s is not None and 0 < view.live.eta_s < 20
    finally:
        stop_pair(pair, data_dir)
        finish_pair(pair, data_dir, grace_s=5)


def test_live_poller_skips_work_until_another_connection_commits(data_dir: Path) -> None:
    """An idle poll returns the same state object (no queries, no series copies); a sample
    committed by the supervisor's connection is seen on the next poll."""
    import time as _time

    from racperf_tui.core.contract.events import Sample
    from racperf_tui.ui.runs_data import LivePoller

    with Store.open(data_dir) as writer:
        run_id = writer.create_run("fio", "local", "/tmp/x", {}, ["fio"], "fio-3.33")
        writer.set_state(run_id, RunState.RUNNING)
        writer.add_sample(run_id, Sample(t=1.0, metrics={"read_iops": 100.0}))
        poller = LivePoller(data_dir, run_id)
        try:
            first = poller.poll()
            assert first.samples_seen == 1 and first.series["read_iops"] == [100.0]
            assert poller.poll() is first  # nothing committed since: no work
            writer.add_sample(run_id, Sample(t=2.0, metrics={"read_iops": 250.0}))
            second = poller.poll()
            assert second is not first
            assert second.samples_seen == 2 and second.series["read_iops"] == [100.0, 250.0]
            poller._last_state_at = _time.monotonic() - 1.5  # a second later: rebuilt for the clock
            assert poller.poll() is not second
        finally:
            poller.close()


def _seed_runs(data_dir: Path, runs: list[tuple[str, str]]) -> list[int]:
    """Finished runs (tool, target) at fixed moments a day apart; returns their ids."""
    ids = []
    with Store.open(data_dir) as store:
        for index, (tool, target) in enumerate(runs):
            run_id = store.create_run(tool, "local", target, {}, [tool], None)
            store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
            started = 1764470000.0 + 86400 * index  # 2025-11-30 02:33:20 UTC, then a day later each
            store._write("UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?", (started, started + 61.0, run_id))
            ids.append(run_id)
    return ids


def _row_line(table: DataTable[Any], row: int) -> str:
    """The text of one row of the list as painted (the header is line 0)."""
    return table.render_line(row + 1).text


async def test_home_and_end_move_the_runs_cursor(data_dir: Path) -> None:
    """Home left the cursor where it was, so s then stopped the previously highlighted run."""
    ids = _seed_runs(data_dir, [("fio", "/tmp/a.dat"), ("fio", "/tmp/b.dat"), ("fio", "/tmp/c.dat")])
    app = RunsApp(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await listed(pilot, app)
        panel = app.query_one(RunsPanel)
        table = app.query_one(DataTable)
        await pilot.press("down", "down")
        assert table.cursor_row == 2 and panel.selected_run_id() == ids[0]
        await pilot.press("home")
        assert table.cursor_row == 0 and panel.selected_run_id() == ids[2]
        await pilot.press("end")
        assert table.cursor_row == 2 and panel.selected_run_id() == ids[0]
        await pilot.resize_terminal(200, 24)  # new column widths rebuild the list: same run
        await pilot.pause()
        assert panel.selected_run_id() == ids[0]


@pytest.mark.parametrize("columns", [80, 200])
async def test_runs_list_shows_the_date_and_gives_tool_and_target_the_room(
    data_dir: Path,
    utc: None,
    columns: int,
) -> None:
    """At any width the target was cut to 15 cells and the tool to 5 ("oratc"), and a run of
    yesterday at 02:33 read like one of today."""
    long_target = "/u01/app/oracle/oradata/RACDB/datafile/racperf-scratch.dat"
    _seed_runs(data_dir, [("fio", long_target), ("oratcptest", "racnode2-priv")])
    app = RunsApp(data_dir)
    async with app.run_test(size=(columns, 24)) as pilot:
        await listed(pilot, app)
        table = app.query_one(DataTable)
        newest, oldest = _row_line(table, 0), _row_line(table, 1)
        assert len(newest.rstrip()) <= columns
        if columns == 80:
            # 80 = 4+11+11+6+11 (id, state, started, dur, figure) + 7 x 2 padding + tool 10 + target 13
            assert newest.split() == ["2", "oratcptest", "racnode2-priv", "succeeded", "12-01", "02:33", "1m01s"]
            assert oldest.split() == ["1", "fio", "…-scratch.dat", "succeeded", "11-30", "02:33", "1m01s"]
        else:
            assert newest.split() == [
                "2",
                "oratcptest",
                "racnode2-priv",
                "local",
                "succeeded",
                "2025-12-01",
                "02:33:20",
                "1m01s",
            ]
            assert oldest.split() == ["1", "fio", long_target, "local", "succeeded", "2025-11-30", "02:33:20", "1m01s"]
        assert newest.index("succeeded") == oldest.index("succeeded")  # the columns line up


@pytest.mark.parametrize("columns", [80, 200])
async def test_the_node_column_names_where_each_run_ran_and_a_pairs_ends(
    data_dir: Path, utc: None, columns: int
) -> None:
    """Issue 21: the Runs tab had no node column. A pair's server here and client on rac2
    (marked srv and cli: "local srv" whole, not "…cal srv"), fio on a node with a long name
    (its end kept), fio here."""
    with Store.open(data_dir) as store:
        server = store.create_run("iperf3", "local", None, {"role": "server"}, ["iperf3"], None)
        client = store.create_run("iperf3", "rac2", "10.0.0.11", {"role": "client", "peer_run_id": server}, [], None)
        remote = store.create_run("fio", "rac-db-node-01", "/tmp/f", {}, ["fio"], None)
        here = store.create_run("fio", "local", "/tmp/g", {}, ["fio"], None)
        for run_id in (server, client, remote, here):
            store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
    app = RunsApp(data_dir)
    async with app.run_test(size=(columns, 24)) as pilot:
        await listed(pilot, app)
        table = app.query_one(DataTable)
        lines = [_row_line(table, row) for row in range(4)]
        assert all(len(line.rstrip()) <= columns for line in lines)
        nodes = [line.split()[3:5] for line in lines]
        assert nodes[0][0] == "local" and nodes[1][0] == "…-node-01"
        assert nodes[2] == ["rac2", "cli"] and nodes[3] == ["local", "srv"]
        # the column lines up and the state follows it
        assert len({line.index("succeeded") for line in lines}) == 1


async def test_percentiles_tab_shows_fios_whole_list_to_99_99(data_dir: Path) -> None:
    """The table was 16 lines high and stopped at 99.90 (99.95 and 99.99 scrolled away),
    with the rest of the tab empty."""
    raw = json.loads((FIXTURES / "fio" / "fio-3.33-randread.jsonplus.json").read_text())
    with Store.open(data_dir) as store:
        run_id = store.create_run("fio", "local", "/var/tmp/f", {}, ["fio"], "fio-3.33")
        store.set_result(run_id, parse_output(json.dumps(raw)))
        store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
    clat_ns = raw["jobs"][0]["read"]["clat_ns"]["percentile"]
    assert clat_ns["99.950000"] == 2007040 and clat_ns["99.990000"] == 4947968  # read off fio's JSON
    app = ResultViewApp(data_dir, run_id)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("right")
        await pilot.pause()
        screen = [line.text for line in app.screen._compositor.render_strips()]
        table = app.screen.query_one("#table-percentiles", DataTable)
        assert table.row_count == 17 and table.max_scroll_y == 0
        assert screen[-3].rstrip() == " 99.95  2007.0" and screen[-2].rstrip() == " 99.99  4948.0"
        assert screen[-4].rstrip() == " 99.90  1089.5"


async def test_result_charts_of_a_network_run_have_one_unit_per_axis(data_dir: Path) -> None:
    """A probe result drew its MiB/s and Mbit/s rates (and nothing else) on one axis labelled
    IOPS: each chart now holds one unit, labelled with it."""
    from racperf_tui.core.contract.events import Sample
    from racperf_tui.ui.widgets.chart import Chart

    with Store.open(data_dir) as store:
        run_id = store.create_run("probe", "local", "127.0.0.1", {"role": "client"}, ["probe"], None)
        for i in range(1, 9):
            mib_s = 1000.0 + 50 * i
            store.add_sample(
                run_id,
                Sample(
                    t=0.5 * i,
                    metrics={
                        "throughput_mib_s": mib_s,
                        "throughput_mbit_s": mib_s * 8.388608,
                        "latency_ms": 0.3 + 0.01 * i,
                    },
                ),
            )
        store.set_result(
            run_id, {"tool": "probe", "role": "client", "mode": "SYNC", "avg_throughput_mib_s": 1200.0, "messages": 99}
        )
        store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
    app = ResultViewApp(data_dir, run_id)
    async with app.run_test(size=(80, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("right")  # a probe result has no percentiles: Summary, Charts, Details
        await pilot.pause()
        charts = list(app.screen.query(Chart))
        assert [(c.title, c.y_label, [s.label for s in c.series]) for c in charts] == [
            ("throughput per interval (Mbit/s)", "Mbit/s", ["throughput"]),
            ("latency per interval (ms)", "ms", ["latency"]),
        ]
        assert list(charts[0].series[0].ys) == [(1000.0 + 50 * i) * 8.388608 for i in range(1, 9)]
        screen = "\n".join(line.text for line in app.screen._compositor.render_strips())
        assert "IOPS" not in screen and "\nMbit/s " in screen and "\nms " in screen


@needs_fio
async def test_form_checkboxes_are_empty_when_unchecked(runs_data_dir: Path) -> None:
    """The form's time_based / direct / group_reporting boxes showed an X unchecked too."""
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")  # the New run picker: fio is first
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        await pilot.pause()
        direct = form.query_one("#field-direct", Checkbox)
        assert direct.value is True and direct.render_line(0).text.rstrip() == "▐X▌"
        direct.value = False
        await pilot.pause()
        assert direct.render_line(0).text.rstrip() == "▐ ▌"
        assert "--direct=0" in str(form.query_one("#preview", Static).render())


@needs_fio
@pytest.mark.parametrize("columns", [80, 200])
async def test_form_target_and_extra_args_get_the_rows_width(runs_data_dir: Path, tmp_path: Path, columns: int) -> None:
    """The text fields were 1fr beside a 2fr error column, empty or not (30 cells in the
    form's 110): a datafile path or the extra arguments were cut. A field is as wide as its
    row now, less the width of its error while it has one."""
    target = tmp_path / "oradata" / "RACDB" / "datafile" / "racperf-scratch-01.dat"
    target.parent.mkdir(parents=True)
    extra = "--rate_iops=500 --percentile_list=50:99:99.9:99.99 --lat_percentiles=1"
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=(columns, 40)) as pilot:
        await pilot.press("n", "enter")  # the New run picker: fio is first
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the fio form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        await pilot.pause()
        fill(form, "target", str(target))
        fill(form, "extra_args", extra)
        await pilot.pause()
        # the form is min(columns, 160) wide: its border 2, the fields' scroll area 1 less,
        # the row's margin 1, the label 17, the empty error's padding 1
        width = min(columns, 160) - 2 - 1 - 1 - 17 - 1
        for name, value in (("target", str(target)), ("extra_args", extra)):
            field = form.query_one(f"#field-{name}", Input)
            field.cursor_position = 0
            await pilot.pause()
            assert str(form.query_one(f"#error-{name}", Label).render()) == ""
            assert field.region.width == width
            if len(value) < width:
                assert field.render_line(0).text.rstrip() == value


async def test_help_lists_racperfs_own_keys_with_sentences(data_dir: Path) -> None:
    """The help listed Textual's internals under their class names ("RunsPanel", "DataTable":
    Cursor up, Page down, Top; "Screen": Focus Next; the palette) beside racperf's keys."""
    from racperf_tui.ui.app import RacperfApp
    from racperf_tui.ui.screens.help import HelpScreen

    app = RacperfApp(data_dir=str(data_dir), clock=False)
    async with app.run_test(size=(100, 50)) as pilot:
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        box = app.screen.query_one("VerticalScroll")
        inside = slice(box.region.x + 2, box.region.right - 2)  # within the border and padding
        lines = [
            line.text[inside].rstrip()
            for line in app.screen._compositor.render_strips()[box.region.y + 1 : box.region.bottom - 1]
        ]
        shown_lines = [line for line in lines if line]
        rule_at = next(i for i, line in enumerate(shown_lines) if line.startswith("Disks: "))
        # the saturation rule, word for word the one the Disks panel applies
        assert " ".join(shown_lines[rule_at:]) == "Disks: " + SaturationRules().describe()
        rows = [
            ("Runs list", None),
            ("home", "First (newest) run"),
            ("end", "Last (oldest) run"),
            ("⏎", "Open the highlighted run: live while it runs, else its result"),
            ("Runs", None),
            ("n", "New run: pick a tool, then its form and command preview"),
            ("s", "Stop the highlighted run (asks first)"),
            ("r", "Re-read the runs now (every second anyway)"),
            ("space", "Mark or unmark the highlighted run (to compare or delete)"),
            ("c", "Compare the marked runs: figures, differences, criteria, charts"),
            ("b", "Make the highlighted marked run the baseline"),
            ("l", "Label the highlighted run (a short name to filter by)"),
            ("a", "Write a note on the highlighted run"),
            ("d", "Delete the marked runs, or the highlighted one (asks)"),
            ("/", "Show only runs of a tool, node or label (tool:fio node:rac1 label:x)"),
            ("p", "Play the highlighted ended run (or group) back as it ran"),
            ("e", "The marked runs' report, or the highlighted one's"),
            ("Everywhere", None),
            ("^q", "Quit, from anywhere (a text field too)"),
            ("q", "Quit (asks first while runs are running)"),
            ("?", "Help: this list of keys"),
            ("1 alt+1 f1", "Disks tab (live iostat)"),
            ("2 alt+2 f2", "Runs tab (benchmark runs)"),
            ("3 alt+3 f3", "Network tab (pair tests)"),
        ]
        # a tab's keys from anywhere (alt+N, fN: priority, never typed into a field) share
        # the digit's line
        expected = [title if what is None else f"{title.rjust(10)}  {what}" for title, what in rows]
        assert shown_lines[:rule_at] == [
            "Keys (escape closes)",
            *expected,
            "In a text field, digits and letters are typed:",
            "Esc leaves it, then 1 2 3 4 switch tabs and q quits;",
            "F1..F4 (alt+1..4) switch tabs and ctrl+q quit from anywhere.",
        ]


async def test_the_tabs_stay_reachable_from_a_run_view(data_dir: Path) -> None:
    """With a run's view open, 1 and 3 did nothing visible (the tabs switched under the view)
    and the Disks tab could not be seen during a run: they show the tab now, and the Runs
    tab brings the view back."""
    from textual.widgets import TabbedContent

    from racperf_tui.ui.app import RacperfApp

    finished_id = seed_finished_run(data_dir)
    app = RacperfApp(data_dir=str(data_dir), clock=False)
    async with app.run_test(size=SIZE) as pilot:
        tabs = app.query_one(TabbedContent)
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView), 10, "the result view")
        await pilot.press("1")
        await pilot.pause()
        assert app.screen is app.screen_stack[0] and len(app.screen_stack) == 1
        assert tabs.active == "disks"
        await pilot.press("2")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView), 10, "the result view back")
        assert app.screen.run_id == finished_id  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.pause()
        # a running run (no supervisor: recorded after the panel's start-up check)
        with Store.open(data_dir) as store:
            live_id = store.create_run("fio", "local", "/tmp/live.dat", {"runtime_s": 600}, ["fio"], None)
            store.set_state(live_id, RunState.RUNNING)
        panel = app.query_one(RunsPanel)
        panel.reread()  # the store watcher reads it now
        await wait_until(pilot, lambda: live_id in panel.runs, 10, "the run in the list")
        panel.open_run(live_id)
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 10, "the live view")
        await pilot.press("3")
        await pilot.pause()
        assert len(app.screen_stack) == 1 and tabs.active == "network"
        await pilot.press("2")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 10, "the live view back")
        assert app.screen.run_id == live_id  # type: ignore[attr-defined]
        await pilot.press("2")  # the Runs tab's own view: stays
        await pilot.pause()
        assert isinstance(app.screen, RunView)
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.screen_stack) == 1 and tabs.active == "runs"


async def test_hostile_names_are_shown_escaped_and_do_not_break_markup(runs_data_dir: Path) -> None:
    """A target named with markup and an escape sequence: the list, the result view and its
    title show it escaped; nothing crashes on the brackets."""
    hostile = "/u01/x[b]\x1b[2J[/]y.dat"
    with Store.open(runs_data_dir) as store:
        run_id = store.create_run("fio", "local", hostile, {"extra_args": []}, ["fio"], None)
        store.set_state(run_id, RunState.FAILED, message="bad [red]\x1b]0;t\x07")
    app = RunsApp(runs_data_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.5)
        table = app.query_one(DataTable)
        cells = " ".join(str(table.get_cell_at(Coordinate(0, c))) for c in range(len(table.columns)))
        assert "\x1b" not in cells and "\\x1b[2J" in cells
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView), 10, "the result view")
        title = str(app.screen.query_one("#result-title").render())
        assert "\\x1b[2J" in title and "x[b]" in title, title


async def test_marked_runs_leave_the_figure_whole_at_80_columns(data_dir: Path) -> None:
    """tmux, 80x24: with a run marked, the marks' column pushed the row one cell past the
    screen: "356 Mbit/" and "29.5k IOP" (the target kept its minimum, the tool its 4)."""
    with Store.open(data_dir) as store:
        for host, iops in (("n1", 29500.0), ("n2", 22400.0)):
            run_id = store.create_run("fio", host, "/tmp/racperf-scratch-0/fio.scratch", {}, ["fio"], None)
            store.set_result(run_id, {"jobs": [{"read": {"iops": iops, "bw_kib_s": iops * 8.0}}]})
            store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
    app = RunsApp(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(RunsPanel)
        table = panel.query_one(DataTable)
        await wait_until(pilot, lambda: len(panel._rows_shown) == 2, 10, "the runs")
        for marked in (False, True):
            if marked:
                await pilot.press("space")
                await wait_until(pilot, lambda: bool(panel.marks) and len(table.columns) == 9, 5, "the marks' column")
            await pilot.pause()
            used = sum(column.get_render_width(table) for column in table.columns.values())
            assert used <= table.size.width, (marked, used, table.size.width)
            assert [str(panel.shown_cell(key, "figure")) for key in panel._rows_shown] == ["22.4k IOPS", "29.5k IOPS"]
