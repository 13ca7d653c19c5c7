"""The dashboard's iostat panel driven with Pilot, on a replayed root read by the real sampler.

The root is rewritten between ticks (tests/helpers/dashboard_root.py) and the panel sampled by hand,
so every figure on screen is known; the panel's timer runs at 10 s and never fires mid-test
(except in the pause test, which wants it to).
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import TabbedContent, TabPane

from racperf_tui.core.disks.iostat_model import (
    SPARK_METRICS,
    AwaitThresholds,
    IostatModel,
    format_number,
    sparkline,
)
from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.screens.help import HelpScreen
from racperf_tui.ui.tabs.iostat_panel import IostatPanel, alert_lines, first_line
from racperf_tui.ui.tabs.network_panel import NetworkPanel
from racperf_tui.ui.widgets.iostat_table import STYLE_LEVEL, IostatTable
from tests.helpers.dashboard_root import DISKS, LOADS, DiskLoad, ReplayRoot


@pytest.fixture
def root(tmp_path: Path, data_dir: Path) -> ReplayRoot:
    """The replayed root; ``data_dir`` keeps the app (and a racperf child) off the user's runs."""
    return ReplayRoot(tmp_path / "root", DISKS)


def make_app(root: ReplayRoot) -> RacperfApp:
    return RacperfApp(roots=[str(root.path)], interval_s=10, clock=False)


def advance(panel: IostatPanel, root: ReplayRoot, seconds: int, loads: dict[str, DiskLoad] = LOADS) -> None:
    """``seconds`` one-second ticks: rewrite the root, then sample, as a live host would."""
    for _ in range(seconds):
        root.tick(loads)
        panel.sample_now()


def shown(panel: IostatPanel) -> list[str]:
    return [state.name for state in panel.table.states]


def line_text(table: IostatTable, device: str) -> str:
    """The rendered text of ``device``'s line (the whole virtual width)."""
    return table._strips[[s.name for s in table.states].index(device)].text


async def test_figures_from_the_real_sampler_reach_the_table(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(160, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        await pilot.pause()
        row = panel.model.devices["sdb"].row
        assert (row.r_s, row.w_s, row.util_pct) == pytest.approx((500, 500, 100))
        assert row.await_ms == pytest.approx(32) and row.avgqu_sz == pytest.approx(31.5)
        text = line_text(panel.table, "sdb")
        assert "500.00" in text and "100.00" in text and "31.50" in text and "32.00" in text
        # Queue facts from sysfs, in the wide layout's columns and in the detail line.
        assert "mq-deadline" in text and " 32 " in text
        nvme = line_text(panel.table, "nvme0n1")
        assert "1023" in nvme and " none " in nvme and nvme.rstrip().endswith("no")
        assert panel.table.visible_headers[-4:] == ["qd", "nr_rq", "scheduler", "rot"]
        # A figure wider than its column loses decimals, the columns stay aligned.
        advance(panel, root, 1, {"nvme0n1": DiskLoad(read_iops=400_000, sectors_per_io=256, util_pct=100)})
        await pilot.pause()
        nvme = line_text(panel.table, "nvme0n1")
        assert " 51200000 " in nvme and len(nvme) == len(panel.table._header.text)


async def test_interval_keys_step_through_the_list(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        seen = []
        for key in ["minus"] * 6:
            await pilot.press(key)
            seen.append(panel.interval_s)
        assert seen == [5, 3, 2, 1, 0.5, 0.5]
        assert panel._timer is not None and panel._timer._interval == 0.5
        for key in ["plus"] * 6:
            await pilot.press(key)
        assert panel.interval_s == 10 and panel._timer._interval == 10
        assert "every 10 s" in str(panel.query_one(".iostat-status").render())


async def test_sort_key_cycles_util_await_queue_name(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        await pilot.pause()
        assert panel.model.sort_key == "%util"
        assert shown(panel) == ["sdb", "nvme0n1", "sda", "sdc"]
        await pilot.press("s")
        assert panel.model.sort_key == "await" and shown(panel) == ["sdc", "sdb", "nvme0n1", "sda"]
        await pilot.press("s")
        assert panel.model.sort_key == "avgqu-sz" and shown(panel) == ["sdb", "sdc", "nvme0n1", "sda"]
        await pilot.press("s")
        assert panel.model.sort_key == "name" and shown(panel) == ["nvme0n1", "sda", "sdb", "sdc"]
        await pilot.press("s")
        assert panel.model.sort_key == "%util"


async def test_filters_partitions_pattern_benchmark_devices(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        await pilot.press("s", "s", "s")  # by name: the order below is the alphabet
        assert shown(panel) == ["nvme0n1", "sda", "sdb", "sdc"]  # whole disks only
        await pilot.press("p")
        assert shown(panel) == ["nvme0n1", "sda", "sda1", "sdb", "sdc"]
        await pilot.press("slash")
        await pilot.press("s", "d", "?", "enter")  # glob: sd + one character
        assert panel.model.name_pattern == "sd?"
        assert shown(panel) == ["sda", "sdb", "sdc"]
        assert panel.table.has_focus  # Enter gives the keys back to the table
        await pilot.press("slash", "backspace", "backspace", "backspace", "v", "m", "e", "enter")
        assert shown(panel) == ["nvme0n1"]  # substring
        await pilot.press("escape")
        assert panel.model.name_pattern == "" and len(shown(panel)) == 5
        panel.set_name_pattern("sd[bc]")  # brackets: a glob class, not markup
        await pilot.pause()
        assert shown(panel) == ["sdb", "sdc"]
        assert "name 'sd[bc]'" in str(panel.query_one(".iostat-status").render())
        panel.set_name_pattern("")
        panel.set_benchmark_devices({"/dev/sdc", "sda1"})
        await pilot.press("b")
        assert shown(panel) == ["sda1", "sdc"]
        assert "benchmark devices (2)" in str(panel.query_one(".iostat-status").render())
        await pilot.press("b", "p")
        assert shown(panel) == ["nvme0n1", "sda", "sdb", "sdc"]


async def test_pause_stops_sampling_and_resume_restarts(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        await pilot.press(*["minus"] * 5)
        assert panel.interval_s == 0.5
        await pilot.press("space")
        assert panel.paused and "PAUSED" in str(panel.query_one(".iostat-status").render())
        # samples_taken, not model.tick: the root is not rewritten here, and a report over
        # an unchanged uptime is read but not shown.
        ticks = panel.samples_taken
        await pilot.pause(0.8)
        assert panel.samples_taken == ticks
        await pilot.press("space")
        await pilot.pause(0.8)
        assert not panel.paused and panel.samples_taken >= ticks + 1


async def test_saturated_device_is_flagged_and_explained(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        # sdc at low load first: its own await (2 ms) is what its queueing is judged against
        sdc_calm = {**LOADS, "sdc": DiskLoad(read_iops=50, write_iops=50, await_ms=2, util_pct=10, avgqu_sz=0.2)}
        advance(panel, root, 2, sdc_calm)
        await pilot.pause()
        # Two samples are not enough: one burst must not raise the flag.
        assert not panel.model.devices["sdb"].flagged
        advance(panel, root, 1, sdc_calm)
        await pilot.pause()
        sdb, sdc = panel.model.devices["sdb"], panel.model.devices["sdc"]
        assert (sdb.level, sdb.saturation_reason) == (
            "saturated",
            "queue full: avgqu-sz 31.5 of its limit 32 (SCSI queue_depth), %util 100",
        )
        assert sdc.level == "ok"
        advance(panel, root, 3)
        await pilot.pause()
        assert (sdc.level, sdc.saturation_reason) == (
            "queueing",
            "queueing: await 40.00 ms with avgqu-sz 4.0, 20.0x its low-load await 2.00 ms",
        )
        assert not panel.model.devices["sda"].flagged and not panel.model.devices["nvme0n1"].flagged
        assert line_text(panel.table, "sdb").startswith("!sdb")
        assert line_text(panel.table, "sda").startswith(" sda")
        alert = panel.query_one(".iostat-alert")
        assert alert.has_class("-saturated")
        # every flagged device at once, the saturated first, each since when, each reason
        # whole (wrapped: the lines take up to half the panel)
        lines = str(alert.render()).splitlines()
        since = time.strftime("%H:%M:%S", time.localtime(sdb.verdict.since))
        assert lines[:2] == [
            f" ! sdb saturated since {since}: queue full: avgqu-sz 31.5 of its limit 32 (SCSI queue_depth), %util",
            "   100",
        ]
        since = time.strftime("%H:%M:%S", time.localtime(sdc.verdict.since))
        assert lines[2].startswith(f" ! sdc queueing since {since}: queueing: await 40.00 ms")
        assert " ".join(line.strip() for line in lines[2:]).endswith("20.0x its low-load await 2.00 ms")
        assert alert.size.height == len(lines) <= 4
        # The load drops: the flag holds for two samples (no flicker), goes at the third.
        calm = {"sdb": DiskLoad(read_iops=10, await_ms=1, util_pct=5, avgqu_sz=0.01)}
        advance(panel, root, 2, calm)
        await pilot.pause()
        assert panel.model.devices["sdb"].flagged
        advance(panel, root, 1, calm)
        await pilot.pause()
        assert not panel.model.devices["sdb"].flagged
        assert line_text(panel.table, "sdb").startswith(" sdb")


async def test_await_colours_follow_thresholds(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(160, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        await pilot.pause()
        table = panel.table

        def await_style(device: str):
            """Colour of the last cell of the await column (right-aligned under its header)."""
            x = table._header.text.index(" await ") + len(" await") - 1
            position = 0
            for segment in table._strips[[s.name for s in table.states].index(device)]:
                if position <= x < position + len(segment.text):
                    return segment.style.color
                position += len(segment.text)

        def level(name: str):
            """The level's colour as the rows hold it: after the app's truecolor filter."""
            return table._paint_style(STYLE_LEVEL[name]).color

        assert await_style("sda") == level("ok")
        assert await_style("nvme0n1") == level("warn")
        assert await_style("sdc") == level("crit")
        assert len({level("ok"), level("warn"), level("crit")}) == 3
        # Configurable: with 1/50 ms, 32 ms is only amber.
        table.thresholds = AwaitThresholds(1, 50)
        table.rerender()
        assert await_style("sdb") == level("warn") and await_style("sda") == level("warn")


async def test_malformed_line_is_reported_and_the_rest_keeps_going(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        root.extra_lines = ["   8 48 sdd 1 2 three 4"]
        advance(panel, root, 1)
        await pilot.pause()
        alert = str(panel.query_one(".iostat-alert").render())
        assert "proc/diskstats:6:" in alert and "sdd" in alert
        assert shown(panel) == ["sdb", "nvme0n1", "sda", "sdc"]
        assert panel.model.devices["sdb"].row.util_pct == pytest.approx(100)
        root.extra_lines = []
        advance(panel, root, 1)
        await pilot.pause()
        assert "no saturation" in str(panel.query_one(".iostat-alert").render())
        # The file vanishes (a replay being rewritten, a chroot gone): said, and no crash.
        (root.path / "proc" / "diskstats").unlink()
        panel.sample_now()
        await pilot.pause()
        assert "proc/diskstats: cannot read" in str(panel.query_one(".iostat-alert").render())
        assert shown(panel) == []
        advance(panel, root, 1)
        await pilot.pause()
        assert len(shown(panel)) == 4


async def test_bad_await_thresholds_in_env_are_said_not_fatal(root: ReplayRoot, monkeypatch) -> None:
    monkeypatch.setenv("RACPERF_AWAIT_MS", "2;8")
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        await pilot.pause()
        assert panel.thresholds == AwaitThresholds(5, 10)
        assert "RACPERF_AWAIT_MS='2;8'" in str(panel.query_one(".iostat-alert").render())


def test_await_thresholds_from_env() -> None:
    assert AwaitThresholds.from_env({"RACPERF_AWAIT_MS": "2,8"}) == AwaitThresholds(2, 8)
    assert AwaitThresholds.from_env({}) == AwaitThresholds(5, 10)
    with pytest.raises(ValueError, match="RACPERF_AWAIT_MS='fast'"):
        AwaitThresholds.from_env({"RACPERF_AWAIT_MS": "fast"})
    with pytest.raises(ValueError, match="warn"):
        AwaitThresholds(10, 5)


async def test_sparkline_key_cycles_metrics(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        quiet = {"sdb": DiskLoad(read_iops=10, await_ms=1, util_pct=0, avgqu_sz=0)}
        advance(panel, root, 2, quiet)
        advance(panel, root, 2)
        await pilot.pause()
        # %util, fixed 0..100 scale: two idle samples, then two full ones.
        assert line_text(panel.table, "sdb")[: panel.table._frozen_width].rstrip().endswith("▁▁██")
        seen = []
        for _ in range(5):
            await pilot.press("m")
            seen.append(panel.table.spark_metric)
            assert panel.table._header.text.split()[1] == panel.table.spark_metric
        assert seen == ["await", "avgqu-sz", "IOPS", "MB/s", "%util"]
        assert list(panel.model.devices["sdb"].history["IOPS"]) == [10, 10, 1000, 1000]
        # The incrementally extended sparklines equal ones drawn from scratch.
        table = panel.table
        for _ in range(5):
            await pilot.press("m")
            for load in (LOADS, quiet, LOADS):
                advance(panel, root, 1, load)
                for state in table.states:
                    history = list(state.history[table.spark_metric])[-table._spark_width :]
                    scale = SPARK_METRICS[table.spark_metric][1]
                    assert table._spark(state) == sparkline(history, table._spark_width, scale), state.name
        # History is bounded: memory stays flat over a long session.
        assert all(h.maxlen == panel.model.history_len for h in panel.model.devices["sdb"].history.values())


async def test_narrow_terminal_keeps_the_key_figures(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        await pilot.pause()
        headers = panel.table.visible_headers
        for key in ("%util", "await", "avgqu-sz", "r/s", "w/s"):
            assert key in headers
        assert "100.00" in line_text(panel.table, "sdb")
        # Every column on demand, scrolling sideways with the device name frozen.
        await pilot.press("c")
        assert panel.table.visible_headers[-1] == "rot" and panel.table.virtual_size.width > 80
        await pilot.press(*["right"] * 5)
        await pilot.pause()
        assert panel.table.scroll_x > 0
        assert panel.table.render_line(1).text.startswith("!sdb" if panel.model.devices["sdb"].flagged else " sdb")


async def test_unchanged_rows_are_not_rebuilt(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        # the first sample's detail was laid out at the panel's first width (two lines below
        # 100 columns): its re-layout to one line comes first, and is not the cursor's
        await pilot.pause()
        panel.table.update_rows(panel.model.visible())
        assert panel.table.rebuilt_rows == 0
        # The highlight follows the top row (the busiest device) until the user moves it.
        assert panel.table.cursor_device == "sdb" and panel.table.cursor_follows_top
        await pilot.press("down")  # the highlight moves: two rows change
        assert panel.table.rebuilt_rows == 2 and panel.table.cursor_device == "nvme0n1"
        assert not panel.table.cursor_follows_top
        detail = panel.query_one(".iostat-detail")
        # Too long for 100 columns with the figures in full: short labels, the figures still there.
        assert str(detail.render()) == (
            " nvme0n1: qd - nr 1023 none rot no │ ok · %util 50 · avgqu-sz 1.4/1023 nr_requests · await 7.00 ms"
        )
        await pilot.press("home")
        assert panel.table.cursor_device == "sdb"
        # 100 columns: short fact labels, so the figures against the saturation rules fit.
        assert str(detail.render()) == (
            " sdb: qd 32 nr 64 mq-deadline rot no │ ok · %util 100 · avgqu-sz 31.5/32 qd · await 32.00 ms"
        )
        # A quiet sdb drops down the %util order; the user's highlight stays on it.
        advance(panel, root, 1, {**LOADS, "sdb": DiskLoad(read_iops=1, util_pct=1)})
        assert shown(panel)[0] == "nvme0n1" and panel.table.cursor_device == "sdb"
        await pilot.press("s")  # a new order: the highlight follows the top row again
        assert panel.table.cursor_device == shown(panel)[0] == "sdc"


async def test_help_lists_app_and_panel_keys(root: ReplayRoot) -> None:
    app = make_app(root)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = "\n".join(line.text for line in app.screen._compositor.render_strips())
        for words in (
            "Disks (iostat)",
            "Pause / resume sampling",
            "Sort by %util, await",
            "Sparkline shows",
            "Filter by device name",
            "Shorter refresh interval",
            "Device table",
            "Everywhere",
            "Quit",
            "Help",
        ):
            assert words in text, words
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


def test_model_drops_vanished_devices_and_helpers() -> None:
    from racperf_tui.core.disks.iostat_math import IostatReport, IostatRow

    def row(name: str) -> IostatRow:
        return IostatRow(name, *([0.0] * 13))

    model = IostatModel()
    model.update(IostatReport(0.0, 1.0, [row("sda"), row("loop0")], []))
    model.update(IostatReport(1.0, 1.0, [row("sda")], []))
    assert list(model.devices) == ["sda"]
    assert sparkline([0, 50, 100], 5, 100.0) == "  ▁▅█"
    assert sparkline([], 3, None) == "   "
    assert format_number(12.345, 8) == "   12.35"
    assert format_number(1234567.0, 7) == "1234567"
    assert format_number(123456789.0, 7) == "123457k"
    assert format_number(123456789.0, 6) == "  123M"


def test_racperf_root_starts_on_the_dashboard_in_a_pty(root: ReplayRoot) -> None:
    """`racperf --root DIR` under a real terminal: paints the table, then quits on q."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "racperf_tui", "--root", str(root.path)])
    output = b""
    try:
        deadline = time.monotonic() + 20
        while b"nvme0n1" not in output or b"%util" not in output:
            assert time.monotonic() < deadline, output[-500:]
            if select.select([fd], [], [], 0.1)[0]:
                output += os.read(fd, 65536)
        os.write(fd, b"q")
        deadline = time.monotonic() + 10
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            assert time.monotonic() < deadline, "racperf did not quit on q"
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    os.read(fd, 65536)
                except OSError:
                    pass
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)


def test_natural_name_order_and_ties() -> None:
    """Digit runs sort as numbers (loop2 < loop10, nvme0n1 < nvme1n1 < nvme10n1); ties in
    %util keep that order too."""
    from racperf_tui.core.disks.iostat_math import IostatReport, IostatRow
    from racperf_tui.core.disks.iostat_model import natural_key

    names = ["loop10", "sdb", "nvme10n1", "loop2", "sda", "nvme1n1", "sda10", "sda2", "nvme0n1", "dm-10", "dm-3"]
    assert sorted(names, key=natural_key) == [
        "dm-3",
        "dm-10",
        "loop2",
        "loop10",
        "nvme0n1",
        "nvme1n1",
        "nvme10n1",
        "sda",
        "sda2",
        "sda10",
        "sdb",
    ]
    model = IostatModel()
    rows = [
        IostatRow(
            device=name,
            **{
                f: 0.0
                for f in (
                    "r_s",
                    "w_s",
                    "rkb_s",
                    "wkb_s",
                    "rrqm_s",
                    "wrqm_s",
                    "avgrq_sz",
                    "avgqu_sz",
                    "await_ms",
                    "r_await_ms",
                    "w_await_ms",
                    "svctm_ms",
                    "util_pct",
                )
            },
        )
        for name in names
    ]
    model.update(IostatReport(0.0, 1.0, rows, []))
    for sort_key in ("%util", "name"):
        model.sort_key = sort_key
        assert [s.name for s in model.visible()][:4] == ["dm-3", "dm-10", "loop2", "loop10"]


async def test_columns_are_a_priority_prefix_whatever_the_name_width(root: ReplayRoot) -> None:
    """A longer device name drops the lowest-priority columns; it never swaps wkB/s for svctm."""
    from racperf_tui.ui.widgets.iostat_table import COLUMNS

    by_priority = [c.header for c in sorted(COLUMNS, key=lambda c: c.priority)]
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        await pilot.pause()
        before = panel.table.visible_headers
        assert sorted(before, key=by_priority.index) == by_priority[: len(before)]
        panel.model.devices["sdb"].name = "sdb-with-a-long-name"  # as a dm name would be
        panel.table.update_rows(panel.model.visible())
        after = panel.table.visible_headers
        assert len(after) < len(before)
        assert sorted(after, key=by_priority.index) == by_priority[: len(after)]


async def test_pause_at_80_columns_shows_the_marker_and_the_real_interval(root: ReplayRoot) -> None:
    """PAUSED leads the status line (it fell off the right edge at 80 columns); after a
    resume the rates average the real interval from uptime and the status line says how long."""
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(IostatPanel)
        await pilot.press("minus", "minus", "minus", "minus")  # 10 s -> 1 s
        assert panel.interval_s == 1.0
        advance(panel, root, 1)  # the first report after an interval change is not noted
        await pilot.press("p", "space")
        status = str(panel.query_one(".iostat-status").render())
        assert status.startswith("  PAUSED  │ ") and len(status) <= 80 and "1 s" in status
        root.tick(LOADS, seconds=6.0)  # six seconds pass while paused
        await pilot.press("space")
        panel.sample_now()  # what the resumed timer does
        await pilot.pause()
        sdb = panel.model.devices["sdb"].row
        assert (sdb.r_s, sdb.w_s, sdb.util_pct, sdb.avgqu_sz) == (500.0, 500.0, 100.0, 31.5)
        status = str(panel.query_one(".iostat-status").render())
        assert "PAUSED" not in status and "over 6.0 s" in status and len(status) <= 80
        assert len(str(panel.query_one(".iostat-alert").render())) <= 80


async def test_detail_names_the_depth_a_queue_is_judged_against(root: ReplayRoot) -> None:
    """No SCSI queue_depth (loop, NVMe): the figures are judged against nr_requests, and a
    wide terminal shows where the cursor device stands against the saturation rules."""
    app = make_app(root)
    async with app.run_test(size=(200, 40)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        await pilot.pause()
        panel.table.move_cursor_to([s.name for s in panel.table.states].index("nvme0n1"))
        await pilot.pause()
        detail = str(panel.query_one(".iostat-detail").render())
        assert detail == (
            " nvme0n1: queue_depth - · nr_requests 1023 · scheduler none · rotational no │"
            " ok · %util 50 · avgqu-sz 1.4/1023 nr_requests · await 7.00 ms"
        )
        assert panel.table._spark_width >= 50 and panel.table.visible_headers[-1] == "rot"


async def saturated_nvme(pilot, app: RacperfApp, root: ReplayRoot) -> IostatPanel:  # type: ignore[no-untyped-def]
    """The Disks panel after three samples of nvme0n1 full at its nr_requests (1023)."""
    panel = app.query_one(IostatPanel)
    advance(panel, root, 3, {"nvme0n1": DiskLoad(read_iops=100000, await_ms=10, util_pct=100, avgqu_sz=1000)})
    await pilot.pause()
    return panel


async def test_device_without_scsi_queue_depth_is_full_at_nr_requests(root: ReplayRoot) -> None:
    """Like a loop device under fio numjobs=4 iodepth=64 (avgqu-sz 124.7 of nr_requests 128,
    %util 100): flagged full, and the reason names nr_requests, not a SCSI queue depth."""
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        panel = await saturated_nvme(pilot, app, root)
        nvme = panel.model.devices["nvme0n1"]
        assert nvme.level == "saturated"
        assert nvme.saturation_reason == "queue full: avgqu-sz 1000.0 of its limit 1023 (nr_requests), %util 100"
        assert " ! nvme0n1 saturated since " in str(panel.query_one(".iostat-alert").render())


async def test_at_80_columns_the_detail_keeps_the_saturation_figures_on_a_second_line(root: ReplayRoot) -> None:
    """Issue 21: at 80x24 the facts filled the detail line and the cursor device's figures
    against the rules were dropped; now they take a second line, whole, and the flagged
    reason wraps under its device (nothing cut at a word)."""
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await saturated_nvme(pilot, app, root)
        panel.table.move_cursor_to([s.name for s in panel.table.states].index("nvme0n1"))
        await pilot.pause()
        detail = panel.query_one(".iostat-detail")
        assert str(detail.render()).split("\n") == [
            " nvme0n1: queue_depth - · nr_requests 1023 · scheduler none · rotational no",
            "   saturated · %util 100 · avgqu-sz 1000.0/1023 nr_requests · await 10.00 ms",
        ]
        assert detail.region.height == 2
        alert = str(panel.query_one(".iostat-alert").render())
        reason = "queue full: avgqu-sz 1000.0 of its limit 1023 (nr_requests), %util 100"
        assert " ".join(alert.split()).endswith(reason) and max(map(len, alert.split("\n"))) <= 80


async def test_a_root_not_updated_between_samples_shows_no_zero_sample(root: ReplayRoot) -> None:
    """``racperf --root DIR`` whose updater is slower than the panel: a sample of the same
    uptime is skipped (no row of zeros, no 0 in the sparkline); the next one covers the
    whole interval, and a root that stops changing is said to be stale."""
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 2)
        panel.sample_now()  # the updater has not written since the last sample
        await pilot.pause()
        sdb = panel.model.devices["sdb"]
        assert sdb.row.r_s == 500.0 and list(sdb.history["%util"]) == [100.0, 100.0]
        root.tick(LOADS, seconds=2.0)
        panel.sample_now()
        assert sdb.row.r_s == 500.0 and list(sdb.history["%util"]) == [100.0, 100.0, 100.0]
        panel._last_report_at -= 60  # a minute without a new root
        panel.sample_now()
        await pilot.pause()
        assert "root unchanged for 60 s" in str(panel.query_one(".iostat-status").render())


async def test_status_line_reflects_columns_and_benchmark_keys(root: ReplayRoot) -> None:
    """c (all columns) shows in the status line; b with no benchmark running says so instead
    of a bare 'no device matches'; Esc clears it."""
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        status = panel.query_one(".iostat-status")
        await pilot.press("c")
        assert panel.table.all_columns and "all columns (←/→ scroll)" in str(status.render())
        await pilot.press("c")
        assert "all columns" not in str(status.render())
        await pilot.press("b")
        await pilot.pause()
        assert shown(panel) == [] and "benchmark devices (0)" in str(status.render())
        assert "no benchmark is running" in str(panel.query_one(".iostat-detail").render())
        await pilot.press("escape")
        await pilot.pause()
        assert len(shown(panel)) == 4 and "benchmark" not in str(status.render())


async def test_sideways_scroll_never_cuts_a_figure(root: ReplayRoot) -> None:
    """All columns at 80 wide, scrolled right one cell at a time: every line shows whole
    figures under whole headers (a crop inside a column showed 711.00 of 33711.00)."""
    big = {**LOADS, "sdb": DiskLoad(read_iops=33711, write_iops=500, await_ms=1, util_pct=100, avgqu_sz=3)}
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1, big)
        await pilot.press("c")
        table = panel.table
        frozen = table._frozen_width
        for _ in range(12):
            await pilot.press("right")
            await pilot.pause()
            header = table.render_line(0).text[frozen:]
            row = table.render_line(1 + shown(panel).index("sdb")).text[frozen:]
            assert header.startswith(" ") and row.startswith(" "), (table.scroll_x, header, row)
            if "r/s" in header.split():
                assert row.split()[header.split().index("r/s")] == "33711.00"
            if _ == 0:  # one press, one whole column: r/s scrolls out, w/s comes first
                assert header.split()[0] == "w/s" and row.split()[0] == "500.00"
        assert table.scroll_x > 0
        await pilot.press("left")
        assert table.render_line(0).text[frozen:].split()[0] != "r/s"
        await pilot.press(*["left"] * 20)
        assert table.scroll_x == 0 and table.render_line(0).text[frozen:].split()[0] == "r/s"


async def test_disks_keys_work_again_after_another_tab(root: ReplayRoot) -> None:
    """Switching to Runs and back left the focus on the hidden runs list: s, m, space... did
    nothing on the Disks tab and its footer showed only q and ?."""
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        advance(panel, root, 1)
        await pilot.press("2")
        await pilot.pause()
        await pilot.press("1")
        await pilot.pause()
        assert app.focused is panel.table
        await pilot.press("s")
        assert panel.model.sort_key == "await" and shown(panel) == ["sdc", "sdb", "nvme0n1", "sda"]
        # in the open name filter a digit is typed, not taken as a tab key
        await pilot.press("slash")
        await pilot.press("3")
        pattern = panel.query_one("#iostat-pattern")
        assert app.focused is pattern and pattern.value == "3"


async def test_first_frame_says_its_figures_are_since_boot(root: ReplayRoot) -> None:
    """The first report averages since boot (iostat's first report): it looked like 'now'."""
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        await pilot.pause()
        status = str(panel.query_one(".iostat-status").render())
        assert status.startswith(" averages since boot │ every 10 s (-/+) │ ")
        advance(panel, root, 1)
        await pilot.pause()
        status = str(panel.query_one(".iostat-status").render())
        assert "since boot" not in status and status.startswith(" every 10 s (-/+) │ ")
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:  # at 80 columns the marker is kept, short
        await pilot.pause()
        status = str(app.query_one(IostatPanel).query_one(".iostat-status").render())
        assert status.startswith(" since boot │ ")


async def test_network_panel_is_made_when_its_tab_is_first_opened(root: ReplayRoot) -> None:
    """The Network tab's panel (every tool module imported for its pair list) is no part of
    the first paint: it is mounted when the tab is first opened, by its key or a click, once."""
    app = make_app(root)
    async with app.run_test(size=(100, 30)) as pilot:
        assert not app.query(NetworkPanel) and not app.query_one("#network", TabPane).children
        await pilot.click("#--content-tab-network")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "network"
        panel = app.query_one(NetworkPanel)
        assert {"probe", "iperf3"} <= set(panel.tools)  # its pair tools found then
        await pilot.press("escape", "1")
        await pilot.pause()
        await pilot.press("3")
        await pilot.pause()
        assert app.query_one(TabbedContent).active == "network"
        assert list(app.query(NetworkPanel)) == [panel]  # the same one, not a second


def test_the_flagged_devices_reasons_are_whole_where_the_lines_allow() -> None:
    """Every flagged device at once: wrapped whole within the budget; else a line each, cut;
    else the first ones and the others named."""
    reason = "queue full: avgqu-sz 31.0 of its limit 32 (SCSI queue_depth), %util 100"
    texts = [f" ! sd{c} saturated since 06:13:52: {reason}" for c in "abcde"]
    labels = [f"sd{c}" for c in "abcde"]
    whole = alert_lines(texts, labels, 80, 10)
    assert len(whole) == 10 and all(len(line) <= 80 for line in whole)
    assert whole[0] + " " + whole[1].strip() == texts[0] and whole[1].startswith("   queue_depth)")
    assert alert_lines(texts, labels, 80, 5) == [first_line(text, 80) for text in texts]
    cut = alert_lines(texts, labels, 80, 4)
    assert cut[:3] == [first_line(text, 80) for text in texts[:3]] and cut[3] == " ! +2 more: sdd, sde"
    assert alert_lines(texts[:1], labels[:1], 200, 4) == texts[:1]
