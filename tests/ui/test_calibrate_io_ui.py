"""CALIBRATE_IO in the UI, through its description only: the generated form (defaults, the
tool's own refusal under its field, the command preview), the live run view while the sqlplus
emulator calibrates (IN PROGRESS from the second session, the elapsed time, the devices in the
samples), and the result view's figures with their units."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, OptionList, Static

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.screens.tool_form import ToolForm
from racperf_tui.ui.screens.tool_picker import ToolPicker
from racperf_tui.ui.tool_panels.calibration_devices_panel import CalibrationDevicesPanel, devices_text
from tests.helpers import FAKES
from tests.helpers.pilot_apps import RunsApp, wait_until


def text_of(widget: Any) -> str:
    return str(widget.render())


async def test_the_form_the_live_view_and_the_result(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dbhome_1"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "sqlplus").symlink_to(FAKES / "sqlplus")
    # the detached supervisor, and so the emulator, inherit these
    monkeypatch.setenv("FAKE_SQLPLUS_CALIBRATE_S", "8")
    monkeypatch.setenv("FAKE_SQLPLUS_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("ORACLE_SID", raising=False)
    monkeypatch.delenv("ORACLE_HOME", raising=False)
    app = RunsApp(data_dir)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolPicker), 10, "the New run picker")
        tools = app.screen.query_one(OptionList)
        listed = [tools.get_option_at_index(i).id for i in range(tools.option_count)]
        assert "Oracle's own I/O calibration" in str(tools.get_option("calibrate_io").prompt)
        tools.highlighted = listed.index("calibrate_io")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the calibrate_io form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        assert form.query_one("#field-max_latency", Input).value == "20"
        assert form.query_one("#field-status_interval_s", Input).value == "5.0"
        assert form.query_one("#field-user", Input).value == "sys"
        form.query_one("#field-sid", Input).value = "ORCL"
        form.query_one("#field-oracle_home", Input).value = str(home)
        form.query_one("#field-max_latency", Input).value = "5"
        await wait_until(pilot, lambda: "max_latency" in form.errors, 10, "the refusal of max_latency=5")
        assert "Oracle refuses less than 10" in text_of(form.query_one("#error-max_latency"))
        form.query_one("#field-max_latency", Input).value = "25"
        form.query_one("#field-status_interval_s", Input).value = "1"
        await wait_until(
            pilot,
            lambda: not form.errors and "$ " in text_of(form.query_one("#preview", Static)),
            10,
            "the preview",
        )
        assert f"{home}/bin/sqlplus -S -L '/ as sysdba'" in text_of(form.query_one("#preview", Static))
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: isinstance(app.screen, RunView), 20, "the live view")
        view: RunView = app.screen  # type: ignore[assignment]
        await wait_until(
            pilot,
            lambda: view.live is not None and "IN PROGRESS, calibrating for" in view.live.job_states,
            30,
            "the second session's IN PROGRESS",
        )
        await pilot.pause(0.1)
        jobs = text_of(view.query_one("#run-jobs", Static))
        assert jobs.startswith("jobs: V$IO_CALIBRATION_STATUS: IN PROGRESS, calibrating for 0m0")
        assert "last calibration 2022-09-04 18:02:55" in jobs
        assert "running" in text_of(view.query_one("#run-status")) and "elapsed " in text_of(
            view.query_one("#run-status")
        )
        spark = view.sparklines["elapsed_s"]
        assert (spark.label, spark.unit) == ("calibrating for", "s")
        assert text_of(spark.query_one(".metric-value")).endswith(" s")
        assert view.live is not None and view.live.current["in_progress"] == 1.0
        # the devices under the data, in the live view (the emulator's /u02 datafiles: this
        # machine has no /u02, so no device, said as such)
        devices = text_of(view.query_one(CalibrationDevicesPanel))
        assert devices.startswith(
            "Devices under 4 datafile(s): none found on this host for /u02/oradata/ORCL/system01.dbf, "
        ), devices
        assert "and 0 more" not in devices and devices.endswith("(a path this host does not have names no device)")
        await wait_until(pilot, lambda: view.live is not None and view.live.state == "succeeded", 40, "the end")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ResultView), 10, "the result view")
        summary = app.screen.query_one("#table-summary", DataTable)
        rows = {str(summary.get_row_at(i)[0]): str(summary.get_row_at(i)[1]) for i in range(summary.row_count)}
        assert rows["max IOPS"] == "13,070 IOPS" and rows["max MB/s"] == "1,200 MB/s"
        assert rows["latency at max IOPS"] == "10.868 ms"
        title = text_of(app.screen.query_one("#result-title"))
        assert " calibrate_io " in title and " on this host " in title and " on -" not in title, title
    with Store.open(data_dir) as store:
        (run,) = store.list_runs()
        assert run.state is RunState.SUCCEEDED and run.config["max_latency"] == 25
        samples = [sample for _, sample in store.samples(run.id)]
    # every sample names the devices to watch (none here: this machine has no /u02)
    assert samples and all(sample.extra["devices"] == [] for sample in samples)


def test_the_devices_panel_names_the_devices_and_where_to_watch_them() -> None:
    said = devices_text(["dm-3", "sdb"], ["+DATA/orcl/system01.dbf"], ["/dev/mapper/asm1"], None)
    assert said.splitlines() == [
        "Devices under 1 datafile(s) and 1 ASM disk(s): dm-3, sdb",
        "  (+DATA/orcl/system01.dbf, /dev/mapper/asm1)",
        "  their live figures: the Disks tab, where b shows only the devices benchmarks touch",
    ]
    on_node = devices_text(["sdc"], [f"/u02/d{i}.dbf" for i in range(6)], [], "rac2")
    assert "on rac2: sdc" in on_node and "and 2 more" in on_node and "rac2's card" in on_node
