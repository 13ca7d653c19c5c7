"""Line charts drawn by plotext into a Static, re-drawn to the widget's size."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from racperf_tui.ui.deferred import deferred


@dataclass(frozen=True, slots=True)
class Series:
    """One line of a chart: x values (seconds), y values, legend label."""

    label: str
    xs: Sequence[float]
    ys: Sequence[float]


#: the 256-colour palette plotext's "simple" theme gives successive signals
SIGNAL_COLORS = (12, 10, 9, 14, 13, 11)


def render_chart(
    series: Sequence[Series], width: int, height: int, title: str = "", x_label: str = "", y_label: str = ""
) -> str:
    """The chart as a string with ANSI colours, ``height`` lines of ``width`` cells.

    The legend goes in the title line (plotext's own legend box would hide the first
    seconds of the data). plotext keeps one global figure; the UI draws charts one at a
    time on its own thread, so clearing and rebuilding it here is safe.
    """
    figure = deferred("plotext").figure
    figure.clear()
    # one line is kept for the title + legend, drawn here: plotext drops a title wider than
    # the plot, and its legend box would hide the first seconds of the data
    figure.plot_size(max(width, 20), max(height - 1, 5))
    figure.theme("simple")
    figure.legend(False)
    legend: list[str] = []
    for one in series:
        if not one.xs:
            continue
        signal = figure.signal(list(one.xs), list(one.ys))
        signal.lines()
        figure.draw(signal)
        color = SIGNAL_COLORS[len(legend) % len(SIGNAL_COLORS)]
        legend.append(f"\x1b[38;5;{color}m▬ {one.label}\x1b[0m")
    drawn = bool(legend)
    heading = " " + title + ("  " + "  ".join(legend) if legend else "")
    if x_label:
        figure.label(x_label, axis="x")
    if y_label:
        figure.label(y_label, axis="y")
    if not drawn:
        return f" {title}:\n no samples"
    return heading + "\n" + figure.build().string()


class Chart(Static):
    """A plotext line chart; call :meth:`plot` with the series, it redraws on resize."""

    DEFAULT_CSS = """
    Chart {
        height: 14;
        width: 1fr;
        /* a title wider than a narrow chart is cut, never wrapped: a wrapped one pushed the
           x axis's label off the chart (ORION's live charts at 80x24) */
        text-wrap: nowrap;
        text-overflow: clip;
    }
    """

    def __init__(
        self,
        title: str = "",
        x_label: str = "t (s)",
        y_label: str = "",
        *,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__("", id=id, classes=classes)
        self.title = title
        self.x_label = x_label
        self.y_label = y_label
        self.series: list[Series] = []

    def plot(self, series: Sequence[Series]) -> None:
        """Set the lines to draw and redraw."""
        self.series = list(series)
        self._redraw()

    def on_resize(self, event: Resize) -> None:
        self._redraw()

    def _redraw(self) -> None:
        width, height = self.content_size.width, self.content_size.height
        if width <= 0 or height <= 0:
            return
        text = render_chart(self.series, width, height, self.title, self.x_label, self.y_label)
        self.update(Text.from_ansi(text, no_wrap=True))
