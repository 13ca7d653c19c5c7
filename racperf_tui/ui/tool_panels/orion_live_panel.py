"""ORION's live panel in the run view: the data point running with its measured outstanding
I/O, the iostat rows of the LUNs' devices (dm-N and the sdX paths below), and the charts of
IOPS, MB/s and latency against load filled point by point as the points complete.

It reads nothing itself: the run's supervisor reads the LUNs' diskstats on ORION's host (the
``diskstats`` companion), ORION's stream parser infers the point and its load
(tools/orion/live.py, headless, unit-tested) and records it in each answer's sample
(``extra["orion_live"]``, kept in the store). The run view hands the panel the run's latest
state (``show_live``: the store watcher's LiveRunState); the panel draws the newest record,
so a view opened half-way, or of a run on another node, shows every point done so far.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from racperf_tui.core.disks.iostat_sampler import IostatRow
from racperf_tui.tools.orion.live import (
    RECORD_KEY,
    OrionLiveModel,
    PointFigures,
    recorded,
    recorded_points,
    recorded_rows,
)
from racperf_tui.ui.messages import LiveRunState
from racperf_tui.ui.shown import plain
from racperf_tui.ui.tool_panels.orion_charts import live_point_series
from racperf_tui.ui.widgets.chart import Chart


@dataclass(frozen=True)
class OrionLiveView:
    """What the panel shows at one moment (built from one recorded sample, never changed)."""

    headline: str
    #: (device as shown, its LUN or the device it is below, its iostat row over the last second)
    rows: tuple[tuple[str, str, IostatRow], ...] = ()
    points: tuple[PointFigures, ...] = ()
    problems: tuple[str, ...] = ()
    #: load on the LUNs that ORION did not issue, over the last second ("" for none)
    foreign: str = ""


def view_of_record(record: Mapping[str, Any]) -> OrionLiveView:
    """The panel's view of a recorded inference (a sample's ``extra["orion_live"]``)."""
    return OrionLiveView(
        str(record.get("headline") or ""),
        tuple(recorded_rows(record)),
        tuple(recorded_points(record)),
        tuple(str(problem) for problem in record.get("problems") or ()),
        str(record.get("foreign") or ""),
    )


def view_of(model: OrionLiveModel, names: dict[str, str] | None = None) -> OrionLiveView:
    """The panel's view of a model (``names``: dm-N -> its device-mapper name), through the
    record the stream parser keeps: what is drawn is what is stored."""
    return view_of_record(recorded(model, names))


def newest_record(live: LiveRunState) -> Mapping[str, Any] | None:
    """The newest recorded inference among the run's samples (progress samples between two
    diskstats answers carry none)."""
    if isinstance(live.extra.get(RECORD_KEY), Mapping):
        return live.extra[RECORD_KEY]
    for sample in reversed(live.samples):
        found = sample.extra.get(RECORD_KEY)
        if isinstance(found, Mapping):
            return found
    return None


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


class OrionLivePanel(Vertical):
    """The live panel of an ORION run (see the module docstring)."""

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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view: OrionLiveView | None = None
        self._charted = -1
        self._shown_record: Mapping[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Static("ORION: waiting for the first data point", id="orion-headline", markup=False)
        yield Static("", id="orion-devices")
        with Horizontal(id="orion-charts"):
            yield Chart("IOPS by small load", x_label="small load", y_label="IOPS", id="orion-chart-iops")
            yield Chart("MB/s by large load", x_label="large load", y_label="MB/s", id="orion-chart-mbps")
            yield Chart("latency ms by small load", x_label="small load", y_label="ms", id="orion-chart-lat")

    def show_live(self, live: LiveRunState) -> None:
        """The run's latest state from the run view: its newest recorded inference, drawn when
        it is a new one (a run of an older racperf, with none, says so once it ended)."""
        record = newest_record(live)
        if record is None:
            if live.ended and self.view is None:
                self.show(OrionLiveView("ORION: no diskstats were recorded with this run"))
            return
        if record == self._shown_record:
            return
        self._shown_record = record
        self.show(view_of_record(record))

    def show(self, view: OrionLiveView) -> None:
        """Paint a view: the headline and rows each second, the charts when a point completed."""
        self.view = view
        said = ([f"! {view.foreign}"] if view.foreign else []) + list(view.problems)
        headline = plain(view.headline) + "".join(f"\n{plain(line)}" for line in said)
        self.query_one("#orion-headline", Static).update(headline)
        self.query_one("#orion-devices", Static).update(rows_table(view) if view.rows else "")
        if len(view.points) != self._charted:
            self._charted = len(view.points)
            iops, mbps, latency = live_point_series(view.points)
            self.query_one("#orion-chart-iops", Chart).plot(iops)
            self.query_one("#orion-chart-mbps", Chart).plot(mbps)
            self.query_one("#orion-chart-lat", Chart).plot(latency)
