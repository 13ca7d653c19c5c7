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


def heading_lines(title: str, labels: Sequence[str], width: int) -> list[tuple[str, list[int]]]:
    """The title and the legend's entries (``▬ label``) in lines of at most ``width`` cells,
    an entry never split across lines (one wider than the width alone on its line, cut at
    the edge): per line, its title part and the indexes of its entries."""
    lines: list[tuple[str, list[int]]] = [(" " + title, [])]
    used = len(lines[0][0])
    for index, label in enumerate(labels):
        entry = 2 + 2 + len(label)  # the gap, "▬ ", the label
        if lines[-1][1] or lines[-1][0].strip():
            if used + entry > width:
                lines.append(("", []))
                used = 1 - 2  # a continuation starts one cell in, without the gap
        lines[-1][1].append(index)
        used += entry
    return lines


def render_chart(
    series: Sequence[Series], width: int, height: int, title: str = "", x_label: str = "", y_label: str = ""
) -> str:
    """The chart as a string with ANSI colours, ``height`` lines of ``width`` cells.

    The legend goes in the heading above the plot, on as many lines as its entries need
    (plotext's own legend box would hide the first seconds of the data; a heading wider than
    the chart lost its last entries at 80 columns). plotext keeps one global figure; the UI
    draws charts one at a time on its own thread, so clearing and rebuilding it here is safe.
    """
    figure = deferred("plotext").figure
    figure.clear()
    drawn = [one for one in series if one.xs]
    if not drawn:
        return f" {title}:\n no samples"
    labels = [one.label for one in drawn]
    heading = heading_lines(title, labels, width)
    # plotext drops a title wider than the plot: the heading is drawn here, above it
    figure.plot_size(max(width, 20), max(height - len(heading), 5))
    figure.theme("simple")
    figure.legend(False)
    for one in drawn:
        signal = figure.signal(list(one.xs), list(one.ys))
        signal.lines()
        figure.draw(signal)
    if x_label:
        figure.label(x_label, axis="x")
    if y_label:
        figure.label(y_label, axis="y")

    def entry(index: int) -> str:
        color = SIGNAL_COLORS[index % len(SIGNAL_COLORS)]
        return f"\x1b[38;5;{color}m▬ {labels[index]}\x1b[0m"

    text = [
        (start + "  " if start.strip() and indexes else start or " ") + "  ".join(entry(i) for i in indexes)
        for start, indexes in heading
    ]
    return "\n".join(text) + "\n" + figure.build().string()


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
