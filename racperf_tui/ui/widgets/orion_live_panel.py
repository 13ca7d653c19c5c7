"""ORION's live panel in the run view: the data point running with its measured outstanding
I/O, the iostat rows of the LUNs' devices (dm-N and the sdX paths below), and the charts of
IOPS, MB/s and latency against load filled point by point as the points complete.

The run view hands it the run's latest state (``show_live``: the store watcher's
LiveRunState, read off the event loop); a worker thread of its own reads the LUNs'
diskstats once a second (never the store); the inference is tools/orion_live.py's
(headless, unit-tested); this widget posts and shows one immutable :class:`OrionLiveView`
per second.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static
from textual.worker import get_current_worker

from racperf_tui.core.diskstats import dm_names, read_snapshot
from racperf_tui.core.iostat import IostatRow
from racperf_tui.tools.orion_live import OrionLiveModel, PointFigures, lun_devices, luns_of
from racperf_tui.ui.messages import LiveRunState
from racperf_tui.ui.runs_data import LIVE_STATES
from racperf_tui.ui.shown import plain
from racperf_tui.ui.widgets.chart import Chart
from racperf_tui.ui.widgets.orion_charts import live_point_series


@dataclass(frozen=True)
class OrionLiveView:
    """What the panel shows at one moment (built on the worker thread, never changed)."""

    headline: str
    #: (device as shown, its LUN or the device it is below, its iostat row over the last second)
    rows: tuple[tuple[str, str, IostatRow], ...] = ()
    points: tuple[PointFigures, ...] = ()
    problems: tuple[str, ...] = ()


def view_of(model: OrionLiveModel, names: dict[str, str] | None = None) -> OrionLiveView:
    """The panel's view of a model; ``names``: dm-N -> its device-mapper name."""
    names = names or {}
    rows = []
    for lun in model.luns:
        for index, device in enumerate(lun.all):
            row = model.rows.get(device)
            if row is None:
                continue
            shown = f"{device} ({names[device]})" if device in names else device
            rows.append((shown if index == 0 else f"  {shown}", lun.lun if index == 0 else "below", row))
    problems = tuple(lun.problem for lun in model.luns if lun.problem)
    return OrionLiveView(model.headline(), tuple(rows), tuple(model.completed), problems)


def rows_table(view: OrionLiveView) -> Table:
    """The LUNs' iostat rows: their own device first, the devices below indented."""
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for name, justify in (
        ("device", "left"),
        ("LUN", "left"),
        ("r/s", "right"),
        ("w/s", "right"),
        ("MB/s", "right"),
        ("await", "right"),
        ("aqu-sz", "right"),
        ("%util", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for shown, lun, row in view.rows:
        table.add_row(
            Text(plain(shown)),  # Text, not str: a cell given as str is read as markup
            Text(plain(lun)),
            f"{row.r_s:,.0f}",
            f"{row.w_s:,.0f}",
            f"{(row.rkb_s + row.wkb_s) / 1024:,.1f}",
            f"{row.await_ms:.2f}",
            f"{row.avgqu_sz:.2f}",
            f"{row.util_pct:.0f}",
            style="bold" if not shown.startswith(" ") else "",
        )
    return table


@dataclass
class OrionLiveChanged(Message):
    """The panel's latest view; a newer one replaces one still queued."""

    view: OrionLiveView

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, OrionLiveChanged)


class OrionLivePanel(Vertical):
    """The live panel of an ORION run (see the module docstring). ``root``: where diskstats
    and sysfs are read (a recorded tree in tests); ``follow=False``: only :meth:`show`."""

    DEFAULT_CSS = """
    OrionLivePanel {
        height: 2fr;
        padding: 0 1;
    }
    OrionLivePanel > #orion-headline {
        height: auto;
        text-style: bold;
        color: $accent;
    }
    OrionLivePanel > #orion-devices {
        height: auto;
        max-height: 8;
    }
    OrionLivePanel > #orion-charts {
        height: 1fr;
        min-height: 8;
    }
    OrionLivePanel Chart {
        height: 1fr;
        width: 1fr;
    }
    """

    def __init__(
        self,
        *,
        root: str | Path = "/",
        interval_s: float = 1.0,
        follow: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.root = Path(root)
        self.interval_s = interval_s
        self.follow = follow
        self.view: OrionLiveView | None = None
        self._charted = -1
        #: what the worker reads of the run, set from show_live on the event loop (plain
        #: values: a torn read between two of them costs one second's point at most)
        self._config: dict[str, Any] | None = None
        self._point = 0
        self._state = "?"

    def compose(self) -> ComposeResult:
        yield Static("ORION: waiting for the first data point", id="orion-headline", markup=False)
        yield Static("", id="orion-devices")
        with Horizontal(id="orion-charts"):
            yield Chart("IOPS by small load", x_label="small load", y_label="IOPS", id="orion-chart-iops")
            yield Chart("MB/s by large load", x_label="large load", y_label="MB/s", id="orion-chart-mbps")
            yield Chart("latency ms by small load", x_label="small load", y_label="ms", id="orion-chart-lat")

    def show_live(self, live: LiveRunState) -> None:
        """The run's latest state from the run view: its config (the LUNs), the data point of
        its newest progress sample, its state; the first one starts the diskstats worker."""
        for sample in live.samples:
            value = sample.metrics.get("data_point")
            if isinstance(value, (int, float)) and sample.extra.get("phase") != "done":
                self._point = int(value)
        self._state = live.state
        if self._config is None and live.run is not None:
            self._config = dict(live.run.config)
            if self.follow:
                self.watch_disks()

    @work(thread=True, exclusive=True, group="orion-live")
    def watch_disks(self) -> None:
        """Once a second: a diskstats snapshot into the model at the run's data point, until
        the run ends (then its last point's window closes)."""
        worker = get_current_worker()
        try:
            config = self._config or {}
            luns = [lun_devices(lun, self.root) for lun in luns_of(config)]
            model = OrionLiveModel(config, luns)
            names = dm_names(self.root)
            while not worker.is_cancelled:
                state = self._state
                model.observe(read_snapshot(self.root), self._point)
                ended = state not in LIVE_STATES and state != "?"
                if ended:
                    model.finish()
                self.post_message(OrionLiveChanged(view_of(model, names)))
                if ended:
                    return
                time.sleep(self.interval_s)
        except Exception as error:  # an unreadable /proc, a LUN gone: say so, keep the view
            self.post_message(OrionLiveChanged(OrionLiveView(f"ORION live panel: {error}")))

    def on_orion_live_changed(self, message: OrionLiveChanged) -> None:
        message.stop()
        self.show(message.view)

    def show(self, view: OrionLiveView) -> None:
        """Paint a view: the headline and rows each second, the charts when a point completed."""
        self.view = view
        headline = plain(view.headline) + "".join(f"\n{plain(problem)}" for problem in view.problems)
        self.query_one("#orion-headline", Static).update(headline)
        self.query_one("#orion-devices", Static).update(rows_table(view) if view.rows else "")
        if len(view.points) != self._charted:
            self._charted = len(view.points)
            iops, mbps, latency = live_point_series(view.points)
            self.query_one("#orion-chart-iops", Chart).plot(iops)
            self.query_one("#orion-chart-mbps", Chart).plot(mbps)
            self.query_one("#orion-chart-lat", Chart).plot(latency)
