"""Regenerate the README's screenshots (SVG) from the real app on a replayed root.

    .venv/bin/python scripts/screenshots.py

Writes screenshots/dashboard.svg (the Disks tab, a RAC-like host with one saturated LUN).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from dashboard_root import DiskLoad, DiskSpec, ReplayRoot  # noqa: E402

from racperf_tui.ui.app import RacperfApp  # noqa: E402
from racperf_tui.ui.tabs.iostat_panel import IostatPanel  # noqa: E402

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


def main() -> None:
    out_dir = REPO / "screenshots"
    out_dir.mkdir(exist_ok=True)
    asyncio.run(dashboard(out_dir / "dashboard.svg"))
    print(f"wrote {out_dir / 'dashboard.svg'}")


if __name__ == "__main__":
    main()
