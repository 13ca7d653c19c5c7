"""ORION as tests and scripts/screenshots.py seed it: the 19c sample's result parsed as a run's
stdout and result files are, stored as a finished run; and a recorded live model (a basic
matrix on 2 disks, half-way) in an app that shows ORION's live panel alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Footer, Static

import racperf_tui.ui
from racperf_tui.core.contract.events import RunState
from racperf_tui.core.disks.diskstats import DeviceCounters, DiskSnapshot
from racperf_tui.core.store import Store
from racperf_tui.tools import orion
from racperf_tui.tools.orion.live import LunDevices, OrionLiveModel
from racperf_tui.tools.orion.stream import live_model
from racperf_tui.ui.tool_panels.orion_live_panel import OrionLivePanel, view_of
from tests.helpers import FIXTURES

#: ORION 19c's output (tests/fixtures/orion/README.md says how it was reconstructed)
SAMPLE_19C = FIXTURES / "orion" / "reconstructed-19c"


def sample_19c_result() -> dict[str, Any]:
    """The 19c sample parsed as a run's stdout and result files are."""
    files = {p.name: p.read_text() for p in SAMPLE_19C.glob("o19_*")}
    return orion.parse_result_files((SAMPLE_19C / "o19-stdout.txt").read_text(), files)


def store_orion_run(data: Path, result: dict[str, Any]) -> int:
    """``result`` as a finished ORION run of ``data``'s store; its id."""
    with Store.open(data) as store:
        run_id = store.create_run("orion", "local", None, {"run": "simple"}, ["orion", "-run", "simple"], "19.3")
        store.set_result(run_id, result)
        store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
    return run_id


def device_counters(name: str, ios: int, kib_each: int, ticks_ms: int, busy_ms: int) -> DeviceCounters:
    """A device (253:3) that read ``ios`` I/Os of ``kib_each`` KiB, in diskstats' counters."""
    return DeviceCounters(253, 3, name, ios, 0, ios * kib_each * 2, ticks_ms, 0, 0, 0, 0, 0, busy_ms, ticks_ms)


def recorded_live_model() -> OrionLiveModel:
    """A basic matrix on 2 disks, five small points done, the sixth running at 5 outstanding."""
    luns = [LunDevices("/dev/mapper/data1", "dm-3", ("sdb", "sdc"))]
    model = live_model({"run": "advanced", "lun": ["/dev/mapper/data1"], "num_disks": 2, "duration": 3}, luns)
    ios = ticks = 0
    at = busy = 1000.0

    def snap() -> DiskSnapshot:
        # the two paths share the dm device's I/O and its queue
        share = {"dm-3": 1, "sdb": 2, "sdc": 2}
        devices = {
            name: device_counters(name, ios // share[name], 8, ticks // share[name], int(busy * 1000))
            for name in luns[0].all
        }
        return DiskSnapshot(at, at, devices, uptime_cs=int(at * 100))

    model.observe(snap(), 1)
    for number in range(2, 8):
        small = number - 1
        for _ in range(3):
            at += 1.0
            rate = 800 * small / (1 + 0.1 * small)  # IOPS flatten as the load grows
            ios += int(rate)
            ticks += int(small * 1000)
            busy += min(0.97, 0.3 * small)
            model.observe(snap(), number)
    return model


class OrionLivePanelApp(App[None]):
    """ORION's live panel alone, showing :func:`recorded_live_model` (dm-3 named data1)."""

    CSS_PATH = str(Path(racperf_tui.ui.__file__).parent / "app.tcss")

    def compose(self) -> ComposeResult:
        yield Static("run 7: orion on /dev/mapper/data1", id="title")
        yield OrionLivePanel()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(OrionLivePanel).show(view_of(recorded_live_model(), {"dm-3": "data1"}))
