"""Regenerate the README's screenshots (SVG) from the real app on a replayed root.

    .venv/bin/python scripts/screenshots.py

Writes into screenshots/: dashboard.svg (the Disks tab, a RAC-like host with one saturated
LUN), orion-result.svg and orion-matrices.svg (ORION's result view of the 19c sample: Summary,
Details), orion-live.svg (ORION's live panel half-way through a matrix), compare.svg (two fio
runs side by side), sweep.svg (a sweep's load-latency curve and its knee), fio-live.svg (fio's
live view 40 s into a run), replay.svg (two recorded runs replayed side by side), network.svg
(the Network tab after a real probe pair on 127.0.0.1) and cluster.svg (the Cluster tab on two
network-namespace nodes, a LUN saturated by both together: root only, else left as it is).
The runs are seeded in a throwaway store the way the tests seed them (tests/helpers).
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
from textual.widgets import Input, TabbedContent  # noqa: E402

from racperf_tui.core.remote import ssh  # noqa: E402
from racperf_tui.core.remote.cluster import load_cluster  # noqa: E402
from racperf_tui.core.store import Store  # noqa: E402
from racperf_tui.orchestration.cluster_monitor import ClusterMonitor  # noqa: E402
from racperf_tui.orchestration.pair_runs import finish_pair  # noqa: E402
from racperf_tui.ui.app import RacperfApp  # noqa: E402
from racperf_tui.ui.screens.compare_view import CompareView  # noqa: E402
from racperf_tui.ui.screens.replay_view import ReplayView  # noqa: E402
from racperf_tui.ui.screens.result_view import ResultView  # noqa: E402
from racperf_tui.ui.screens.run_view import RunView  # noqa: E402
from racperf_tui.ui.screens.sweep_view import SweepView  # noqa: E402
from racperf_tui.ui.tabs.cluster_panel import ClusterPanel  # noqa: E402
from racperf_tui.ui.tabs.iostat_panel import IostatPanel  # noqa: E402
from racperf_tui.ui.tabs.network_panel import NetworkPanel  # noqa: E402
from racperf_tui.ui.widgets.cluster_luns import SharedLunTable  # noqa: E402
from tests.helpers.cluster_panel import PanelApp as ClusterPanelApp  # noqa: E402
from tests.helpers.cluster_panel import until  # noqa: E402
from tests.helpers.cluster_trees import SharedLunTrees  # noqa: E402
from tests.helpers.dashboard_root import DiskLoad, DiskSpec, ReplayRoot  # noqa: E402
from tests.helpers.netns_helpers import netns_available, start_netns_cluster  # noqa: E402
from tests.helpers.orion_seed import OrionLivePanelApp, sample_19c_result, store_orion_run  # noqa: E402
from tests.helpers.pilot_apps import ScreenApp, wait_until  # noqa: E402
from tests.helpers.result_view_run import RESULT, STARTED_AT, seed_finished_run, seed_running_run  # noqa: E402
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


async def fio_live(out: Path) -> None:
    """fio's live view of a run 40 s in (its samples seeded: no fio runs)."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        run_id = seed_running_run(data, 40)

        async def loaded(pilot: Any) -> None:
            await wait_until(
                pilot, lambda: getattr(pilot.app.screen, "live", None) is not None, 10, "the run's samples"
            )
            await wait_until(pilot, lambda: pilot.app.screen.live.samples_seen == 40, 10, "every sample")

        await screen_shot(out, lambda: RunView(data, run_id, tool="fio"), loaded, (120, 32))


async def replay(out: Path) -> None:
    """Two recorded fio runs replayed side by side in lock-step, paused at the 6th second."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        first, second = seed_finished_run(data), seed_finished_run(data)

        async def stepped(pilot: Any) -> None:
            await wait_until(pilot, lambda: pilot.app.screen.shown[0] is not None, 10, "the first frame")
            for _ in range(5):
                await pilot.press("full_stop")
            await wait_until(pilot, lambda: pilot.app.screen.shown[0].samples_seen == 6, 10, "the 6th second")

        await screen_shot(out, lambda: ReplayView(data, [first, second], play=False), stepped, (140, 36))


async def network(out: Path) -> None:
    """The Network tab after a real probe pair on 127.0.0.1 (2 s, a sample every 0.25 s)."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        os.environ["RACPERF_DATA_DIR"] = str(data)
        root = ReplayRoot(Path(tmp) / "root", DISKS)
        app = RacperfApp(roots=[str(root.path)], interval_s=10, clock=False)
        async with app.run_test(size=(132, 36)) as pilot:
            await pilot.press("3")
            panel = app.query_one(NetworkPanel)
            panel.query_one("#net-duration", Input).value = "2"
            panel.query_one("#net-interval", Input).value = "0.25"
            await pilot.pause()
            panel.action_start_pair()
            try:
                await wait_until(pilot, lambda: panel.final_throughput_mbit_s is not None, 30, "the pair's result")
            finally:
                if panel.pair is not None:
                    finish_pair(panel.pair, data, grace_s=5)
            await pilot.pause()
            out.write_text(app.export_screenshot(title="racperf"))


async def cluster(out: Path) -> None:
    """The Cluster tab on two nodes (network namespaces with their own sshd: root only): one LUN
    seen from both, saturated by the two together though by neither alone (the replayed trees
    of the Cluster tab's test)."""
    ok, why = netns_available()
    if not ok:
        print(f"cluster.svg not regenerated: {why}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        # the nodes' host keys and the cluster's settings go to a throwaway home, as in the tests
        saved = {key: os.environ.get(key) for key in ("HOME", "XDG_CONFIG_HOME", "SSH_AUTH_SOCK")}
        os.environ.update(HOME=str(Path(tmp) / "home"), XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        os.environ.pop("SSH_AUTH_SOCK", None)
        (Path(tmp) / "home").mkdir()
        nodes = start_netns_cluster(Path(tmp) / "netns", 2)
        try:
            lun = SharedLunTrees(Path(tmp))
            steady, pushed = {"n1": (1000, 8.0), "n2": (1000, 8.0)}, {"n1": (1500, 16.0), "n2": (500, 16.0)}
            lun.step(steady)
            monitor = ClusterMonitor(load_cluster(nodes.cluster_file).nodes, 0.25, remote_roots=lun.roots())
            panel = ClusterPanel(nodes.cluster_file, 0.25, monitor=monitor)
            app = ClusterPanelApp(panel)
            async with app.run_test(size=(132, 36)) as pilot:
                table = panel.query_one(SharedLunTable)
                for load in [steady] * 4 + [pushed] * 8:
                    seqs = {n: monitor.state(n).seq for n in ("n1", "n2")}
                    lun.step(load)
                    await until(pilot, lambda seqs=seqs: all(monitor.state(n).seq > seqs[n] for n in seqs), 20)
                    await pilot.pause(0.3)
                    if load is pushed and table.groups and table.groups[0].saturated:
                        break
                await pilot.pause()
                out.write_text(app.export_screenshot(title="racperf"))
        finally:
            nodes.stop()
            ssh.close_all()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


def main() -> None:
    out_dir = REPO / "screenshots"
    out_dir.mkdir(exist_ok=True)
    names = (
        "dashboard.svg",
        "orion-result.svg",
        "orion-matrices.svg",
        "compare.svg",
        "sweep.svg",
        "orion-live.svg",
        "fio-live.svg",
        "replay.svg",
        "network.svg",
        "cluster.svg",
    )
    before = {name: (out_dir / name).stat().st_mtime_ns if (out_dir / name).exists() else None for name in names}
    asyncio.run(dashboard(out_dir / names[0]))
    asyncio.run(orion_result(out_dir / names[1], out_dir / names[2]))
    asyncio.run(compare(out_dir / names[3]))
    asyncio.run(sweep(out_dir / names[4]))
    asyncio.run(orion_live(out_dir / names[5]))
    asyncio.run(fio_live(out_dir / names[6]))
    asyncio.run(replay(out_dir / names[7]))
    asyncio.run(network(out_dir / names[8]))
    asyncio.run(cluster(out_dir / names[9]))
    for name in names:
        if (out_dir / name).exists() and (out_dir / name).stat().st_mtime_ns != before[name]:
            print(f"wrote {out_dir / name}")


if __name__ == "__main__":
    main()
