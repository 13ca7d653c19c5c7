"""One device's load-latency curve, live: its recent (avgqu-sz, IOPS, await) points from the
Disks tab's history, IOPS and await each plotted against the queue. While ORION or fio climbs
its loads the curve forms: IOPS rising with the queue, then flat (the knee) while await goes
on rising."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Static

from racperf_tui.ui.deferred import deferred
from racperf_tui.ui.screen_base import RacperfModalScreen

#: the history keys the points come from (iostat_model's SPARK_METRICS)
LOAD_KEY, IOPS_KEY, AWAIT_KEY = "avgqu-sz", "IOPS", "await"


def load_points(history: Mapping[str, Sequence[float]], last: int = 240) -> list[tuple[float, float, float]]:
    """The last ``last`` (avgqu-sz, IOPS, await) points of a device's history, aligned from the
    newest (the three series grow together; a shorter one bounds them), idle intervals left out."""
    series = [list(history.get(key) or ()) for key in (LOAD_KEY, IOPS_KEY, AWAIT_KEY)]
    count = min(min(len(s) for s in series), last)
    points = zip(*(s[len(s) - count :] for s in series), strict=True) if count else iter(())
    return [(load, iops, wait) for load, iops, wait in points if iops > 0]


def render_scatter(xs: Sequence[float], ys: Sequence[float], width: int, height: int, title: str, y_label: str) -> str:
    """A scatter of ``ys`` against the queue (plotext, ANSI colours), newest points last."""
    if not xs:
        return f" {title}: no I/O yet"
    figure = deferred("plotext").figure
    figure.clear()
    figure.plot_size(max(width, 20), max(height - 1, 5))
    figure.theme("simple")
    # a signal without lines() is its points alone: a scatter
    figure.draw(figure.signal(list(xs), list(ys), marker="dot"))
    figure.label("avgqu-sz", axis="x")
    figure.label(y_label, axis="y")
    return f" {title}\n" + figure.build().string()


class ScatterChart(Static):
    """A plotext scatter redrawn to its size."""

    DEFAULT_CSS = """
    ScatterChart {
        width: 1fr;
        height: 1fr;
    }
    """

    def __init__(self, title: str, y_label: str, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.title = title
        self.y_label = y_label
        self.xs: list[float] = []
        self.ys: list[float] = []

    def plot(self, xs: Sequence[float], ys: Sequence[float]) -> None:
        self.xs, self.ys = list(xs), list(ys)
        self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        width, height = self.content_size.width, self.content_size.height
        if width > 0 and height > 0:
            text = render_scatter(self.xs, self.ys, width, height, self.title, self.y_label)
            self.update(Text.from_ansi(text, no_wrap=True))


class LoadLatencyScreen(RacperfModalScreen[None]):
    """A device's load-latency curve, redrawn once a second from a history it reads (the Disks
    tab's model, which its own sampler keeps updating)."""

    DEFAULT_CSS = """
    LoadLatencyScreen {
        align: center middle;
    }
    LoadLatencyScreen > Vertical {
        width: 95%;
        height: 90%;
        border: round $accent;
        background: $surface;
    }
    LoadLatencyScreen #load-latency-title {
        height: 1;
        text-style: bold;
        padding: 0 1;
    }
    """

    BINDINGS = [Binding("escape,l,q", "close", "Close", tooltip="Back to the Disks tab")]

    def __init__(self, device: str, history_of: Any, interval_s: float = 1.0) -> None:
        """``history_of()``: the device's history now (a mapping of series), None once gone."""
        super().__init__()
        self.device = device
        self.history_of = history_of
        self.interval_s = interval_s
        self.points: list[tuple[float, float, float]] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"{self.device}: load and latency, one point per interval", id="load-latency-title")
            with Horizontal():
                yield ScatterChart("IOPS against the queue", "IOPS", id="load-latency-iops")
                yield ScatterChart("await (ms) against the queue", "ms", id="load-latency-await")

    def on_mount(self) -> None:
        self.refresh_points()
        self.set_interval(self.interval_s, self.refresh_points)

    def refresh_points(self) -> None:
        history = self.history_of()
        title = self.query_one("#load-latency-title", Label)
        if history is None:
            title.update(f"{self.device}: gone (no longer in /proc/diskstats)")
            return
        points = load_points(history)
        if points == self.points:
            return
        self.points = points
        title.update(f"{self.device}: load and latency, {len(points)} intervals with I/O (esc: back)")
        loads = [p[0] for p in points]
        self.query_one("#load-latency-iops", ScatterChart).plot(loads, [p[1] for p in points])
        self.query_one("#load-latency-await", ScatterChart).plot(loads, [p[2] for p in points])

    def action_close(self) -> None:
        self.dismiss()
