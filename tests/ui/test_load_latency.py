"""A device's load-latency curve (ui/screens/load_latency.py): `l` on the Disks tab's cursor
device, its (avgqu-sz, IOPS, await) points from the panel's history as a load climbs, read by
the real sampler from a replayed root, and the curve growing while the screen is open."""

from __future__ import annotations

from pathlib import Path

import pytest

from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.screens.load_latency import LoadLatencyScreen, ScatterChart, load_points, render_scatter
from racperf_tui.ui.tabs.iostat_panel import IostatPanel
from tests.helpers.dashboard_root import DiskLoad, DiskSpec, ReplayRoot


def climbing(step: int) -> DiskLoad:
    """A disk under a climbing load: IOPS rise with the queue to a knee at 4, then stay flat
    while await goes on rising (Little's law: avgqu-sz = IOPS x await)."""
    queue = float(step)
    iops = 1000 * min(step, 4)
    return DiskLoad(read_iops=iops, await_ms=queue / iops * 1000, util_pct=min(100.0, 25.0 * step), avgqu_sz=queue)


def test_points_are_aligned_from_the_newest_and_idle_intervals_left_out() -> None:
    history = {"avgqu-sz": [9.0, 1.0, 0.0, 2.0], "IOPS": [5.0, 100.0, 0.0, 180.0], "await": [1.0, 1.0, 0.0, 1.1]}
    assert load_points(history) == [(9.0, 5.0, 1.0), (1.0, 100.0, 1.0), (2.0, 180.0, 1.1)]
    history["avgqu-sz"] = history["avgqu-sz"][1:]  # a shorter series bounds the others
    assert load_points(history) == [(1.0, 100.0, 1.0), (2.0, 180.0, 1.1)]
    assert load_points({}) == [] and load_points(history, last=1) == [(2.0, 180.0, 1.1)]
    assert render_scatter([], [], 40, 10, "IOPS", "IOPS") == " IOPS: no I/O yet"


async def test_l_shows_the_cursor_device_s_curve_forming(tmp_path: Path, data_dir: Path) -> None:
    root = ReplayRoot(tmp_path / "root", [DiskSpec("sdb", 8, 16, queue_depth=32)])
    app = RacperfApp(roots=[str(root.path)], interval_s=10, clock=False)
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(IostatPanel)
        for step in range(1, 7):
            root.tick({"sdb": climbing(step)})
            panel.sample_now()
        await pilot.pause()
        assert panel.table.cursor_device == "sdb"
        await pilot.press("l")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LoadLatencyScreen) and screen.device == "sdb"
        # one point per climbing second (the app's first sample, since boot, is no point)
        loads = [p[0] for p in screen.points]
        assert loads == pytest.approx([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], abs=0.01)
        assert [round(p[1]) for p in screen.points] == [1000, 2000, 3000, 4000, 4000, 4000]
        assert [p[2] for p in screen.points] == pytest.approx([1.0, 1.0, 1.0, 1.0, 1.25, 1.5], abs=0.01)
        iops_chart = screen.query_one("#load-latency-iops", ScatterChart)
        assert iops_chart.xs == loads and "IOPS against the queue" in str(iops_chart.render())
        # the panel samples on; the open screen's curve grows at its next refresh
        root.tick({"sdb": climbing(8)})
        panel.sample_now()
        screen.refresh_points()
        assert screen.points[-1][0] == pytest.approx(8.0, abs=0.01) and len(screen.points) == 7
        assert "7 intervals with I/O" in str(screen.query_one("#load-latency-title").render())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, LoadLatencyScreen)
