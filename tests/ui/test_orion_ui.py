"""ORION in the UI: its generated form (several LUNs in one field, -write through the write
guard), the live view against the emulator on loop devices (the data point and the outstanding
I/O measured in diskstats), the result view's charts and heat table, and a snapshot of the live
panel of a run in progress (a recorded model: deterministic)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import Footer, Input, Select, Static

import racperf_tui.ui
from racperf_tui.core import settings
from racperf_tui.core.disks.diskstats import DiskSnapshot
from racperf_tui.core.store import Store
from racperf_tui.orchestration.runs import launch_run
from racperf_tui.tools import orion
from racperf_tui.tools.orion.live import LunDevices
from racperf_tui.tools.orion.oracle_home import SETTING_ORACLE_HOME
from racperf_tui.tools.orion.stream import live_model
from racperf_tui.ui.dialogs.confirm_destructive import ConfirmDestructive
from racperf_tui.ui.screens.replay_view import ReplayView
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.screens.tool_form import ToolForm
from racperf_tui.ui.tool_panels.orion_charts import HeatTable, heat_table, is_detailed, matrix_series, result_widgets
from racperf_tui.ui.tool_panels.orion_live_panel import OrionLivePanel, rows_table, view_of
from racperf_tui.ui.widgets.chart import Chart
from racperf_tui.ui.widgets.device_suggester import DeviceSuggester, device_paths
from tests.helpers import FAKES, FIXTURES
from tests.helpers.loopdev import loop_device, needs_loop
from tests.helpers.loopdev import sha256_of as _sha
from tests.helpers.orion_seed import OrionLivePanelApp, device_counters, recorded_live_model
from tests.helpers.pilot_apps import refusal_shown

S112 = FIXTURES / "orion" / "11.2.0.4-advanced-stdout.txt"


@pytest.fixture
def oracle_home(tmp_path: Path) -> Path:
    home = tmp_path / "oracle_home"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    shutil.copy(FAKES / "orion", home / "bin" / "orion")
    os.chmod(home / "bin" / "orion", 0o755)
    return home


class OneScreenApp(App[None]):
    CSS_PATH = str(Path(racperf_tui.ui.__file__).parent / "app.tcss")

    def __init__(self, screen: Any = None, widget: Any = None) -> None:
        super().__init__()
        self.first_screen = screen
        self.widget = widget

    def compose(self) -> ComposeResult:
        if self.widget is not None:
            yield self.widget
        yield Footer()

    def on_mount(self) -> None:
        if self.first_screen is not None:
            self.push_screen(self.first_screen)


async def wait_until(pilot: Any, predicate: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout_s} s waiting for {what}"
        await pilot.pause(0.05)


def _text(widget: Any) -> str:
    return str(widget.render())


# --------------------------------------------------------------------------- the form


@pytest.mark.slow  # loop devices, mkfs and the write guard: seconds
@needs_loop
async def test_the_form_takes_several_luns_and_write_goes_through_the_guard(
    tmp_path: Path, data_dir: Path, oracle_home: Path
) -> None:
    with loop_device(tmp_path / "fs.img", 32) as fs, loop_device(tmp_path / "blank.img", 32) as blank:
        subprocess.run(["mkfs.ext4", "-q", "-F", fs.path], check=True, capture_output=True)
        before = _sha(fs.path), _sha(blank.path)
        app = OneScreenApp(ToolForm("orion", data_dir))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "the ORION form")
            form: ToolForm = app.screen  # type: ignore[assignment]
            assert form.query_one("#field-run", Select).value == "simple"
            assert form.query_one("#field-testname", Input).value == "orion"
            form.query_one("#field-run", Select).value = "advanced"
            # the LUN field suggests the devices racperf sees: right arrow takes one
            lun_field = form.query_one("#field-lun", Input)
            lun_field.focus()
            lun_field.value = f"{fs.path} {blank.path[:-1]}"
            lun_field.cursor_position = len(lun_field.value)
            await wait_until(pilot, lambda: bool(lun_field._suggestion), 10, "a device suggested")
            suggested = lun_field._suggestion
            # the first device whose path goes on from what was typed (/dev/loop1 before /dev/loop12),
            # not the LUN already in the field
            typed = blank.path[:-1]
            first = next(p for p in device_paths() if p.startswith(typed) and p not in (typed, fs.path))
            assert suggested == f"{fs.path} {first}"
            await pilot.press("right")
            assert lun_field.value == suggested
            lun_field.value = f"{fs.path} {blank.path}"
            form.query_one("#field-write", Input).value = "30"
            form.query_one("#field-oracle_home", Input).value = str(oracle_home)
            await wait_until(pilot, lambda: "-write 30" in _text(form.query_one("#preview")), 10, "the preview")
            assert form.config["lun"] == [fs.path, blank.path]  # one field, two LUNs
            assert f"{oracle_home}/bin/orion -run advanced -testname orion -write 30" in _text(
                form.query_one("#preview")
            )
            # the tool's own check, under the field it names
            form.query_one("#field-write", Input).value = "130"
            await wait_until(pilot, lambda: "write" in form.errors, 10, "write=130 refused")
            assert "0 to 100" in _text(form.query_one("#error-write"))
            form.query_one("#field-write", Input).value = "30"
            await wait_until(pilot, lambda: not form.errors, 10, "write=30 again")
            await pilot.press("ctrl+l")
            # the ext4 LUN is refused, alone: its name must be typed to override
            await wait_until(pilot, lambda: refusal_shown(app), 20, "the guard's refusal")
            refusal: ConfirmDestructive = app.screen  # type: ignore[assignment]
            assert refusal.verdict.target == fs.path and refusal.device_name == fs.name
            assert any("ext2/3/4" in reason for reason in refusal.verdict.reasons)
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, "back on the form")
            await wait_until(
                pilot,
                lambda: "refusal stands" in _text(form.query_one("#form-general-error")),
                10,
                "not started",
            )
        assert (_sha(fs.path), _sha(blank.path)) == before
        with Store.open(data_dir) as store:
            assert store.list_runs() == []
        # a launch from the form remembers the ORACLE_HOME typed (as `racperf run` does, as
        # the form says): the next form's run finds bin/orion without it
        assert settings.get(SETTING_ORACLE_HOME, None, data_dir=data_dir) == str(oracle_home)


# --------------------------------------------------------------------------- the live view


def _filled_loop_image(path: Path, size_mib: int) -> Path:
    """An image of real data: reads of a sparse one never reach a disk, so nothing queues."""
    with open(path, "wb") as handle:
        for _ in range(size_mib):
            handle.write(os.urandom(1 << 20))
    return path


@pytest.mark.slow  # a real run of the emulator
@needs_loop
async def test_the_live_view_shows_the_point_and_its_outstanding_ios(
    tmp_path: Path, data_dir: Path, oracle_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """4 emulator threads of 256 KB reads on a loop device that reads its file with O_DIRECT:
    the outstanding I/O by Little's law is about 4 (the emulator's Python between two I/Os
    is small against a 256 KB read). Measured by the run's diskstats companion and kept with
    the run's samples: a view opened after the run draws the same point."""
    monkeypatch.setenv("RACPERF_FAKE_ORION_POINT_S", "6")
    image = _filled_loop_image(tmp_path / "lun.img", 48)
    attach = subprocess.run(
        ["losetup", "--find", "--show", "--direct-io=on", str(image)], capture_output=True, text=True, check=True
    )
    lun = attach.stdout.strip()
    try:
        config = {
            "run": "advanced",
            "lun": [lun],
            "matrix": "point",
            "num_small": 4,
            "num_large": 0,
            "size_small": 256,
            "duration": 6,
            "cache_size": 0,
            "hugenotneeded": True,
            "oracle_home": str(oracle_home),
        }
        run_id = launch_run("orion", config, data_dir=data_dir)
        app = OneScreenApp(RunView(str(data_dir), run_id, tool="orion"))
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, RunView), 10, "the live view")
            panel = app.screen.query_one(OrionLivePanel)

            def measured() -> bool:
                return panel.view is not None and "small I/Os outstanding" in panel.view.headline

            await wait_until(pilot, measured, 30, "the outstanding I/O measured")
            assert panel.view is not None
            headline = panel.view.headline
            assert headline.startswith("data point 1 of 1 (small 4, large 0), about ")
            outstanding = float(headline.split("about ")[1].split()[0])
            # 4 threads; the first second measured may be the point's ramp, and a loaded
            # machine (load 11 here) runs them less often: the point's window is checked below
            assert 0 < outstanding <= 5, headline
            assert headline.endswith("small I/Os outstanding (planned 4)")
            rows = panel.view.rows if panel.view else ()
            assert rows and rows[0][0] == os.path.basename(lun) and rows[0][1] == lun
            assert rows[0][2].r_s > 0 and rows[0][2].avgrq_sz == pytest.approx(512, rel=0.05)  # 256 KB
            # the progress bar and ETA come from ORION's progress samples
            view: RunView = app.screen  # type: ignore[assignment]
            assert view.live is not None and view.live.progress_pct is not None and view.live.progress_pct > 0
            # the sparklines are the LUN's load over time, from the recorded samples: no clock
            assert list(view.sparklines) == ["lun_iops", "lun_mbps", "lun_await_ms", "lun_avgqu_sz"]
            await wait_until(pilot, lambda: len(view.sparklines["lun_iops"].values) >= 2, 10, "LUN IOPS over time")
            assert max(view.sparklines["lun_iops"].values) > 0 and max(view.sparklines["lun_avgqu_sz"].values) > 0
            await wait_until(pilot, lambda: view.live is not None and view.live.state == "succeeded", 60, "the end")
            await wait_until(pilot, lambda: panel.view is not None and "finished" in panel.view.headline, 10, "done")
            assert panel.view is not None and panel.view.headline.startswith("ORION finished: 1 of 1 data points")
            (point,) = panel.view.points
            assert (point.small, point.large) == (4, 0) and point.figures.iops > 0
            # 4 threads planned; on a loaded machine (load 20) they run less often and the
            # window measured 1.7 to 2.0 in flight: about the plan, never the 0 or the 119 of
            # the issue
            assert 1.5 <= point.figures.kib_in_flight / 256 <= 5
            await pilot.press("enter")
            await wait_until(pilot, lambda: isinstance(app.screen, ResultView), 10, "the result view")
            charts = [c for c in app.screen.query(Chart) if c.title == "IOPS against small load"]
            assert charts and charts[0].series[0].xs == [4.0] and charts[0].series[0].ys[0] > 0
        # recorded, not just shown: the store's samples carry the point's figures, about one
        # diskstats answer a second over ORION's 6 s point
        with Store.open(data_dir) as store:
            records = [s.extra["orion_live"] for _, s in store.samples(run_id) if "orion_live" in s.extra]
        assert len(records) >= 4, records
        last = records[-1]
        assert last["finished"] and last["headline"] == "ORION finished: 1 of 1 data points measured in diskstats"
        (values,) = last["points"]
        stored = dict(zip(last["point_fields"], values))
        assert (stored["number"], stored["small"], stored["large"]) == (1, 4, 0)
        assert stored["iops"] == pytest.approx(point.figures.iops, abs=0.001)
        assert stored["kib_in_flight"] == pytest.approx(point.figures.kib_in_flight, abs=0.001)
        assert stored["seconds"] >= 3.0 and stored["iops"] * 256 / 1024 == pytest.approx(stored["mbps"], rel=0.01)
        running = [r for r in records if r["outstanding"] is not None]
        assert running and all(r["data_point"] == 1 and r["small"] == 4 for r in running)
        assert all(1.0 <= r["outstanding"]["small"] <= 6.0 for r in running[1:]), running
        # a view opened after the run (the UI closed and reopened) draws it from the store
        again = OneScreenApp(RunView(str(data_dir), run_id, tool="orion"))
        async with again.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(again.screen, RunView), 10, "the reopened view")
            reopened = again.screen.query_one(OrionLivePanel)
            await wait_until(pilot, lambda: reopened.view is not None, 10, "the reopened panel")
            assert reopened.view is not None and reopened.view.points == (point,)
            assert reopened.view.headline.startswith("ORION finished: 1 of 1 data points")
        # replayed (racperf replay): ORION's panel at each step draws that step's record
        with Store.open(data_dir) as store:
            samples = [s for _, s in store.samples(run_id)]
        replay = OneScreenApp(ReplayView(str(data_dir), [run_id], play=False))
        async with replay.run_test(size=(100, 30)) as pilot:
            view = replay.screen
            assert isinstance(view, ReplayView)
            await wait_until(pilot, lambda: view.shown[0] is not None and view.bodies[0].panels, 10, "the replay")
            middle = next(i for i, s in enumerate(samples) if (s.extra.get("orion_live") or {}).get("outstanding"))
            for _ in range(middle):
                await pilot.press("full_stop")
            await pilot.pause()
            replayed = view.bodies[0].query_one(OrionLivePanel)
            assert replayed.view is not None
            assert replayed.view.headline == samples[middle].extra["orion_live"]["headline"]
            await pilot.press("end")
            await pilot.pause()
            assert replayed.view.points == (point,)
            assert replayed.view.headline.startswith("ORION finished: 1 of 1 data points")
    finally:
        subprocess.run(["losetup", "-d", lun], capture_output=True)


# --------------------------------------------------------------------------- results


def test_the_result_matrices_become_lines_and_a_heat_table() -> None:
    result = orion.parse_path(FIXTURES / "orion" / "11.1.0.7")
    iops = result["iops"]
    lines = matrix_series(iops, "small")
    # a line per large load, x the small loads tested at it
    assert [line.label for line in lines] == [f"large={large}" for large in iops["large_loads"]][: len(lines)]
    first = lines[0]
    row = iops["values"][0]
    assert first.ys == [v for v in row if v is not None]
    mbps = matrix_series(result["mbps"], "large")
    assert all(line.label.startswith("small=") for line in mbps)
    latency = matrix_series(result["lat"], "small", 1000.0)
    assert latency[0].ys[0] == pytest.approx(result["lat"]["values"][0][0] / 1000.0)
    detailed = {"small_loads": [1, 2, 3], "large_loads": [0, 1], "values": [[100.0, 200.0, 300.0], [50.0, 150.0, None]]}
    basic = {"small_loads": [1, 2], "large_loads": [0, 1], "values": [[100.0, 200.0], [None, None]]}
    assert is_detailed(detailed) and not is_detailed(basic) and not is_detailed(None)
    table = heat_table(detailed, "IOPS")
    cells = [list(column.cells) for column in table.columns]
    assert [str(c) for c in cells[0]] == ["0", "1"] and [str(c) for c in cells[1]] == ["100", "50"]
    # the smallest value the coldest colour, the largest the hottest, an untested cell dim
    assert str(cells[1][1].style).endswith("on #1f3b73") and str(cells[3][0].style).endswith("on #d9542b")
    assert str(cells[3][1]) == "·" and str(cells[3][1].style) == "dim"


async def test_a_detailed_result_shows_its_heat_tables() -> None:
    detailed = {"small_loads": [1, 2, 3], "large_loads": [0, 1, 2], "values": [[1.0, 2.0, 3.0]] * 3}
    result = {"tool": "orion", "iops": detailed, "mbps": detailed, "lat": {**detailed, "unit": "us"}}

    class Tables(App[None]):
        def compose(self) -> ComposeResult:
            yield from result_widgets(result)

    app = Tables()
    async with app.run_test(size=(100, 60)):
        assert len(app.query(HeatTable)) == 3 and len(app.query(Chart)) == 3


# --------------------------------------------------------------------------- snapshot


def test_the_live_panel_of_a_run_in_progress_snapshot(snap_compare: Any) -> None:
    assert snap_compare(OrionLivePanelApp(), terminal_size=(100, 30))


def test_the_recorded_model_reads_as_the_snapshot_shows() -> None:
    view = view_of(recorded_live_model(), {"dm-3": "data1"})
    assert view.headline == "data point 7 of 15 (small 6, large 0), about 6.0 small I/Os outstanding (planned 6)"
    assert [row[0] for row in view.rows] == ["dm-3 (data1)", "  sdb", "  sdc"]
    assert [p.small for p in view.points] == [1, 2, 3, 4, 5]


def test_a_hostile_lun_name_is_shown_as_it_is() -> None:
    hostile = "/dev/[bold]x\x1b[31m"
    model = live_model({"lun": [hostile]}, [LunDevices(hostile, "sdb")])
    for at, ios in ((1.0, 0), (2.0, 100)):
        model.observe(
            DiskSnapshot(at, at, {"sdb": device_counters("sdb", ios, 8, ios, 500)}, uptime_cs=int(at * 100)), 2
        )
    console = Console(width=120, record=True, color_system=None)
    console.print(rows_table(view_of(model)))
    text = console.export_text()
    assert "/dev/[bold]x\\x1b[31m" in text and "\x1b" not in text


async def test_the_lun_field_suggests_the_devices_racperf_sees(tmp_path: Path) -> None:
    (tmp_path / "dev" / "mapper").mkdir(parents=True)
    for name in ("control", "data1", "data2"):
        (tmp_path / "dev" / "mapper" / name).write_text("")
    classes = tmp_path / "sys" / "class" / "block"
    classes.mkdir(parents=True)
    for name in ("sdb", "sdb1", "sda", "dm-3", "nvme0n1"):
        (classes / name).mkdir()
    for name in ("sda", "sdb", "sdb1", "dm-3"):  # no node for nvme0n1 under this root
        (tmp_path / "dev" / name).write_text("")
    assert device_paths(tmp_path) == [
        "/dev/mapper/data1",
        "/dev/mapper/data2",
        "/dev/dm-3",
        "/dev/sda",
        "/dev/sdb",
        "/dev/sdb1",
    ]
    suggester = DeviceSuggester(tmp_path)
    assert await suggester.get_suggestion("/dev/ma") == "/dev/mapper/data1"
    # the last word is completed, a LUN already in the field is not offered again
    assert await suggester.get_suggestion("/dev/mapper/data1 /dev/mapper/d") == "/dev/mapper/data1 /dev/mapper/data2"
    assert await suggester.get_suggestion("/dev/sdb") == "/dev/sdb1"
    assert await suggester.get_suggestion("/dev/nv") is None and await suggester.get_suggestion("sd") is None


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's Oracle home needs root to make")
@pytest.mark.parametrize(("tool", "fields"), [("orion", {"lun": "/dev/null"}), ("calibrate_io", {"sid": "ORCL"})])
async def test_an_oracle_home_of_another_user_is_refused_with_the_way_out(
    tmp_path: Path, data_dir: Path, oracle_home: Path, tool: str, fields: dict[str, str]
) -> None:
    """Run as root, a home owned by oracle (here nobody) is refused (issue 17's rule, no
    override); the form says whose it is and the way out, as a message, not a traceback."""
    shutil.copy(FAKES / "sqlplus", oracle_home / "bin" / "sqlplus")
    for path in [oracle_home, *oracle_home.rglob("*")]:
        os.chown(path, 65534, 65534)
    app = OneScreenApp(ToolForm(tool, data_dir))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ToolForm), 10, f"the {tool} form")
        form: ToolForm = app.screen  # type: ignore[assignment]
        for name, value in {**fields, "oracle_home": str(oracle_home)}.items():
            form.query_one(f"#field-{name}", Input).value = value
        await wait_until(pilot, lambda: not form.errors, 10, "the form to accept its fields")
        await pilot.press("ctrl+l")
        said = form.query_one("#form-general-error", Static)
        await wait_until(pilot, lambda: "Oracle home is its owner" in _text(said), 20, "the refusal")
        shown = " ".join(_text(said).split())
        assert f"oracle_home={oracle_home}: {oracle_home} (owner nobody, mode drwxr-xr-x) is not owned by root" in shown
        assert "run racperf as nobody (the owner of the Oracle home, who owns the ASM disks anyway" in shown
        assert "Traceback" not in shown and isinstance(app.screen, ToolForm)
