"""Screenshots of the dashboard on a replayed root (deterministic data, no header clock).

Regenerate after an intended change of the look with
``pytest tests/test_dashboard_snapshot.py --snapshot-update`` and review the SVGs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from racperf_tui.core.disks import saturation
from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.tabs.iostat_panel import IostatPanel
from tests.helpers.dashboard_root import DISKS, LOADS, ReplayRoot


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """'saturated since HH:MM:SS' is the wall clock of the replay: one fixed time on screen."""
    monkeypatch.setattr(saturation, "clock", lambda _wall_time: "04:05:06")


def replayed_app(tmp_path: Path) -> tuple[RacperfApp, object]:
    """The app on a fresh root, and a run_before that plays 4 one-second ticks into it."""
    root = ReplayRoot(tmp_path / "root", DISKS)
    app = RacperfApp(roots=[str(root.path)], interval_s=10, clock=False)

    async def play(pilot: Pilot) -> None:
        panel = app.query_one(IostatPanel)
        for _ in range(4):  # enough samples for the saturation flag and a sparkline
            root.tick(LOADS)
            panel.sample_now()
        await pilot.press("home")  # highlight the top (saturated) device
        await pilot.pause()

    return app, play


def test_dashboard_wide_with_a_saturated_device(snap_compare, tmp_path: Path, data_dir: Path) -> None:
    app, play = replayed_app(tmp_path)
    assert snap_compare(app, terminal_size=(150, 20), run_before=play)


def test_dashboard_at_80x24(snap_compare, tmp_path: Path, data_dir: Path) -> None:
    app, play = replayed_app(tmp_path)
    assert snap_compare(app, terminal_size=(80, 24), run_before=play)
