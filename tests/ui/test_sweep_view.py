"""A fio sweep in the UI (issue 18, "the finder"): started from New run (its form, the write
guard's verdict on its first point), walked by a detached driver that outlives the UI, shown
in its own view (the point running live, the target's device beside the charts, a row per
point, the knee), opened again from the Runs tab once it ended. Real fio on a temp file, three
2 s points; the snapshot is of a stored, deterministic sweep."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, OptionList, Select, Static

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.disks.block_devices import block_devices_of
from racperf_tui.core.store import Store
from racperf_tui.orchestration.sweep_driver import driver_alive
from racperf_tui.ui.dialogs.confirm_destructive import ConfirmDestructive
from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog
from racperf_tui.ui.screens.sweep_form import SweepForm
from racperf_tui.ui.screens.sweep_view import SweepView
from racperf_tui.ui.screens.tool_picker import SWEEP_CHOICE, ToolPicker
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from tests.helpers import needs_fio
from tests.helpers.loopdev import loop_device, needs_loop, sha256_of
from tests.helpers.pilot_apps import RunsApp, ScreenApp, refusal_shown, wait_until
from tests.helpers.sweep_seed import seed_finished_sweep

SIZE = (100, 30)


async def _fill_the_form(pilot: Any, app: RunsApp, target: Path) -> SweepForm:
    await pilot.press("n")
    await wait_until(pilot, lambda: isinstance(app.screen, ToolPicker), 10, "the tool picker")
    tools = app.screen.query_one(OptionList)
    tools.highlighted = tools.get_option_index(SWEEP_CHOICE)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, SweepForm), 10, "the sweep form")
    form: SweepForm = app.screen  # type: ignore[assignment]
    for name, value in (
        ("target", str(target)),
        ("options", "rw=randread bs=4k ioengine=libaio size=8M"),
        ("iodepth", "1,4,16"),
        ("seconds", "2"),
    ):
        form.query_one(f"#field-{name}", Input).value = value
    form.query_one("#field-stop", Select).value = "knee"
    await pilot.pause()
    return form


@needs_fio
async def test_a_sweep_from_new_run_builds_live_outlives_the_ui_and_opens_from_the_runs_tab(
    data_dir: Path, tmp_path: Path
) -> None:
    target = tmp_path / "sweep.dat"
    app = RunsApp(data_dir)
    statuses: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        form = await _fill_the_form(pilot, app, target)
        preview = str(form.query_one("#preview", Static).render())
        assert preview.startswith("3 points in 1 curve(s) of iodepth, at most 6 s of fio"), preview
        # a refusal is said in the form before anything starts: iodepth is the sweep's to set
        form.query_one("#field-options", Input).value = "rw=randread iodepth=8"
        await pilot.pause()
        assert "--set iodepth: the sweep sets it on each point" in str(
            form.query_one("#form-general-error", Static).render()
        )
        assert form.query_one("#launch").disabled
        form.query_one("#field-options", Input).value = "rw=randread bs=4k ioengine=libaio size=8M"
        await pilot.pause()
        await pilot.click("#launch")

        def opened() -> bool:
            if isinstance(app.screen, ConfirmDialog):  # a kernel without the protections: yes
                app.screen.dismiss(True)
            return isinstance(app.screen, SweepView)

        await wait_until(pilot, opened, 30, "the sweep view")
        view: SweepView = app.screen  # type: ignore[assignment]
        group_id = view.group_id

        def second_point_running() -> bool:
            statuses.append(str(view.query_one("#sweep-status", Static).render()))
            snapshot = view.snapshot
            return snapshot is not None and snapshot.current is not None and len(snapshot.runs) >= 2

        await wait_until(pilot, second_point_running, 60, "the second point")
        # the point running, live: its load, then its figures from its samples (the second
        # point's, or on a loaded machine the third's: points are 2 s)
        points_seen: list[int] = []

        def live_figures() -> bool:
            statuses.append(str(view.query_one("#sweep-status", Static).render()))
            points_seen.append(len(view.snapshot.runs) if view.snapshot is not None else 0)
            return " IOPS, " in statuses[-1]

        await wait_until(pilot, live_figures, 10, "the live figures of the point running")
        point = points_seen[-1]
        assert point in (2, 3), points_seen
        assert f"point {point} of 3: iodepth {(1, 4, 16)[point - 1]}, numjobs 1" in statuses[-1], statuses[-1]
        # the first point's row, and the target's devices beside the charts, sampled here
        assert view._points_shown[0][:2] == ("1", "1") and float(view._points_shown[0][2].replace(",", "")) > 0
        devices = view.snapshot.devices if view.snapshot else ()
        assert {row.kernel_name or row.device for row in devices} <= set(block_devices_of(target)) and devices
        assert block_devices_of(target)[0] in str(view.query_one("#sweep-devices", Static).render())
    # the UI has gone: the driver walks on to the end and records it
    deadline = time.monotonic() + 60
    while driver_alive(data_dir, group_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    with Store.open(data_dir) as store:
        result = store.group_result(group_id)
        runs = store.group_runs(group_id)
    assert result is not None and result["finished"] and result["ended"] is None, result
    assert [point["iodepth"] for point in result["curves"][0]["points"]] == [1, 4, 16]
    assert [run.state for run in runs] == [RunState.SUCCEEDED] * 3
    # opened again from the Runs tab: the ended sweep, every point, how it ended
    app = RunsApp(data_dir)
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(RunsPanel)
        await wait_until(pilot, lambda: f"g{group_id}" in panel._rows_shown, 10, "the sweep's row")
        assert str(panel.shown_cell(f"g{group_id}", "target")).endswith("/sweep.dat (sweep, 3 pts)")
        panel.query_one(DataTable).move_cursor(row=0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SweepView), 10, "the sweep view")
        view = app.screen  # type: ignore[assignment]
        await wait_until(pilot, lambda: len(view._points_shown) == 3, 10, "the three points")
        status = str(view.query_one("#sweep-status", Static).render())
        assert status == "ended after 3 of 3 points: every point ran", status
        iops = [float(row[2].replace(",", "")) for row in view._points_shown]
        assert [row[0] for row in view._points_shown] == ["1", "4", "16"] and min(iops) > 0
        knee = result["curves"][0]["knee"]
        marked = [row[0] for row in view._points_shown if row[7] == "◀ knee"]
        assert marked == ([] if knee is None else [str(knee["iodepth"])])


def test_the_sweep_view_at_80x24_snapshot(snap_compare: Any, data_dir: Path) -> None:
    group = seed_finished_sweep(data_dir)

    async def loaded(pilot: Any) -> None:
        view: SweepView = pilot.app.screen
        await wait_until(pilot, lambda: len(view._points_shown) == 6, 10, "the points")
        await pilot.pause()

    assert snap_compare(ScreenApp(lambda: SweepView(data_dir, group)), terminal_size=(80, 24), run_before=loaded)


async def test_a_sweep_whose_driver_is_gone_says_so_and_keeps_its_points(data_dir: Path) -> None:
    """Its driver killed (-9, a reboot) between two points: the result is not final and
    nothing runs; the view says no further point starts, and `s` has nothing to stop."""
    group = seed_finished_sweep(data_dir)
    with Store.open(data_dir) as store:
        result = store.group_result(group)
        assert result is not None
        store.set_group_result(group, {**result, "finished": False})
    app = ScreenApp(lambda: SweepView(data_dir, group))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SweepView), 5, "the sweep view")
        view: SweepView = app.screen  # type: ignore[assignment]
        await wait_until(pilot, lambda: len(view._points_shown) == 6, 10, "the points")
        status = str(view.query_one("#sweep-status", Static).render())
        assert status == (
            "the sweep's driver is gone (killed, or the machine restarted): 6 of 6 points kept, no further point starts"
        )
        assert view.snapshot is not None and not view.snapshot.walking
        await pilot.press("s")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmDialog)  # nothing to stop: said, not asked


@pytest.mark.slow  # a loop device and mkfs
@needs_loop
async def test_the_write_guard_judges_the_sweep_s_first_point_before_anything_starts(
    data_dir: Path, tmp_path: Path
) -> None:
    with loop_device(tmp_path / "fs.img", 32) as fs:
        subprocess.run(["mkfs.ext4", "-q", "-F", fs.path], check=True, capture_output=True)
        before = sha256_of(fs.path)
        app = RunsApp(data_dir)
        async with app.run_test(size=SIZE) as pilot:
            form = await _fill_the_form(pilot, app, Path(fs.path))
            form.query_one("#field-options", Input).value = "rw=randwrite bs=4k ioengine=libaio"
            await pilot.pause()
            await pilot.click("#launch")
            await wait_until(pilot, lambda: refusal_shown(app), 20, "the guard's refusal")
            refusal: ConfirmDestructive = app.screen  # type: ignore[assignment]
            assert refusal.verdict.target == fs.path
            assert any("ext2/3/4" in reason for reason in refusal.verdict.reasons)
            await pilot.press("escape")
            await wait_until(pilot, lambda: app.screen is form, 10, "back on the form")
            said = form.query_one("#form-general-error", Static)
            await wait_until(pilot, lambda: "refusal stands" in str(said.render()), 10, "not started")
        assert sha256_of(fs.path) == before
    with Store.open(data_dir) as store:
        assert store.list_groups() == [] and store.list_runs() == []
