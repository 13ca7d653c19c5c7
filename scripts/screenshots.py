"""Regenerate the README's screenshots (SVG) from the real app on a replayed root.

    .venv/bin/python scripts/screenshots.py

Writes into screenshots/: dashboard.svg (the Disks tab, a RAC-like host with one saturated
LUN), orion-result.svg and orion-matrices.svg (ORION's result view of the 19c sample: Summary,
Details), orion-live.svg (ORION's live panel half-way through a matrix), compare.svg (two fio
runs side by side), sweep.svg (a sweep's load-latency curve and its knee). The runs are
seeded in a throwaway store the way the tests seed them.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

sys.path.insert(0, str(REPO))

import copy  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from typing import Any  # noqa: E402

from textual.screen import Screen  # noqa: E402
from textual.widgets import TabbedContent  # noqa: E402

from racperf_tui.core.store import Store  # noqa: E402
from racperf_tui.ui.app import RacperfApp  # noqa: E402
from racperf_tui.ui.screens.compare_view import CompareView  # noqa: E402
from racperf_tui.ui.screens.result_view import ResultView  # noqa: E402
from racperf_tui.ui.screens.sweep_view import SweepView  # noqa: E402
from racperf_tui.ui.tabs.iostat_panel import IostatPanel  # noqa: E402
from tests.helpers.dashboard_root import DiskLoad, DiskSpec, ReplayRoot  # noqa: E402
from tests.helpers.orion_seed import OrionLivePanelApp, sample_19c_result, store_orion_run  # noqa: E402
from tests.helpers.pilot_apps import ScreenApp, wait_until  # noqa: E402
from tests.helpers.result_view_run import RESULT, STARTED_AT, seed_finished_run  # noqa: E402
from tests.helpers.sweep_seed import seed_finished_sweep  # noqa: E402

DISKS = [
    DiskSpec("sda", 8, 0, rotational=True, queue_depth=64),
    DiskSpec("sda1", 8, 1, parent="sda"),
    DiskSpec("sdb", 8, 16, queue_depth=32),
    DiskSpec("sdc", 8, 32, queue_depth=32),
    DiskSpec("sdd", 8, 48, queue_depth=32),
    DiskSpec("sde", 8, 64, queue_depth=32),
    DiskSpec("nvme0n1", 259, 0, queue_depth=None, nr_requests=1023, scheduler="[none] mq-deadline"),
]
LOADS = {
    "sda": DiskLoad(read_iops=12, write_iops=40, await_ms=1.2, util_pct=4, avgqu_sz=0.1),
    "sda1": DiskLoad(read_iops=12, write_iops=40, await_ms=1.2, util_pct=4, avgqu_sz=0.1),
    "sdb": DiskLoad(read_iops=5200, write_iops=2200, sectors_per_io=16, await_ms=4.3, util_pct=100, avgqu_sz=31.6),
    "sdc": DiskLoad(read_iops=900, write_iops=380, sectors_per_io=16, await_ms=7.5, util_pct=71, avgqu_sz=9.6),
    "sdd": DiskLoad(read_iops=880, write_iops=400, sectors_per_io=16, await_ms=2.1, util_pct=48, avgqu_sz=2.7),
    "sde": DiskLoad(read_iops=60, write_iops=600, sectors_per_io=2048, await_ms=14.0, util_pct=63, avgqu_sz=9.2),
    "nvme0n1": DiskLoad(read_iops=31000, sectors_per_io=8, await_ms=0.09, util_pct=55, avgqu_sz=2.8),
}


async def dashboard(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RACPERF_DATA_DIR"] = str(Path(tmp) / "data")
        root = ReplayRoot(Path(tmp) / "root", DISKS)
        app = RacperfApp(roots=[str(root.path)], interval_s=10, clock=False)
        async with app.run_test(size=(132, 24)) as pilot:
            panel = app.query_one(IostatPanel)
            for second in range(24):
                loads = dict(LOADS)
                if second < 12:  # sdb saturates half-way through: the sparkline shows the step
                    loads["sdb"] = DiskLoad(
                        read_iops=2600, write_iops=1100, sectors_per_io=16, await_ms=1.1, util_pct=52, avgqu_sz=4.0
                    )
                root.tick(loads)
                panel.sample_now()
            await pilot.press("home")
            await pilot.pause()
            out.write_text(app.export_screenshot(title="racperf"))


async def screen_shot(
    out: Path, make_screen: Callable[[], Screen[Any]], ready: Callable[[Any], Awaitable[None]], size: tuple[int, int]
) -> None:
    """One screen alone (as the tests show it), once ``ready`` says it has what it shows."""
    app = ScreenApp(make_screen)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await pilot.pause()
        out.write_text(app.export_screenshot(title="racperf"))


async def orion_result(summary: Path, details: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        run_id = store_orion_run(data, sample_19c_result())
        with Store.open(data) as store:  # fixed times (ORION's 9 minutes): the same SVG each time
            store._write(
                "UPDATE runs SET started_at = ?, ended_at = ? WHERE id = ?", (STARTED_AT, STARTED_AT + 540, run_id)
            )

        async def loaded(pilot: Any) -> None:
            await wait_until(
                pilot, lambda: isinstance(pilot.app.screen, ResultView) and pilot.app.screen.loaded, 10, "the run"
            )

        async def on_details(pilot: Any) -> None:
            await loaded(pilot)
            pilot.app.screen.query_one(TabbedContent).active = "tab-details"

        await screen_shot(summary, lambda: ResultView(data, run_id), loaded, (110, 30))
        await screen_shot(details, lambda: ResultView(data, run_id), on_details, (110, 40))


async def orion_live(out: Path) -> None:
    """ORION's live panel, a basic matrix on 2 disks half-way (the recorded model its snapshot
    test draws)."""
    app = OrionLivePanelApp()
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.pause()
        out.write_text(app.export_screenshot(title="racperf"))


async def compare(out: Path) -> None:
    """Two fio runs: the second (after a change) 18 % more IOPS at a lower latency."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        first, second = seed_finished_run(data), seed_finished_run(data)
        faster = copy.deepcopy(RESULT)
        for direction in ("read", "write"):
            side = faster["jobs"][0][direction]
            side["iops"] *= 1.18
            side["bw_kib_s"] *= 1.18
            for key in ("mean", "max"):
                side["clat_us"][key] *= 0.85
            side["clat_us"]["percentiles"] = {k: v * 0.85 for k, v in side["clat_us"]["percentiles"].items()}
        with Store.open(data) as store:
            store.set_result(second, faster)
            store.set_label(second, "after the firmware update")

        async def loaded(pilot: Any) -> None:
            await wait_until(pilot, lambda: getattr(pilot.app.screen, "loads", 0) >= 1, 10, "the comparison")

        await screen_shot(out, lambda: CompareView(data, [first, second]), loaded, (120, 30))


async def sweep(out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        group = seed_finished_sweep(data)

        async def loaded(pilot: Any) -> None:
            await wait_until(pilot, lambda: len(pilot.app.screen._points_shown) == 6, 10, "the points")

        await screen_shot(out, lambda: SweepView(data, group), loaded, (120, 32))


def main() -> None:
    out_dir = REPO / "screenshots"
    out_dir.mkdir(exist_ok=True)
    names = ("dashboard.svg", "orion-result.svg", "orion-matrices.svg", "compare.svg", "sweep.svg", "orion-live.svg")
    asyncio.run(dashboard(out_dir / names[0]))
    asyncio.run(orion_result(out_dir / names[1], out_dir / names[2]))
    asyncio.run(compare(out_dir / names[3]))
    asyncio.run(sweep(out_dir / names[4]))
    asyncio.run(orion_live(out_dir / names[5]))
    for name in names:
        print(f"wrote {out_dir / name}")


if __name__ == "__main__":
    main()
