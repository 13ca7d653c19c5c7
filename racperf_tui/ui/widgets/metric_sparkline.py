"""A labelled sparkline with its current value: one metric of a live run on one line."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, Sparkline

from racperf_tui.core.units import LARGER_TIME_UNIT
from racperf_tui.ui.widgets.fast_sparkline import FastSparkline

#: how many intervals a sparkline keeps unless told otherwise (2 minutes at 1 s)
DEFAULT_HISTORY = 120


def format_value(value: float | None, unit: str = "") -> str:
    """A compact, fixed-ish width rendering of a metric value: a time in the next larger unit
    from 10 000 on, anything else with k/M suffixes above 10 000."""
    if value is None:
        return "-"
    while unit in LARGER_TIME_UNIT and abs(value) >= 10_000:
        value, unit = value / 1000, LARGER_TIME_UNIT[unit]
    magnitude = abs(value)
    if magnitude >= 10_000_000:
        text = f"{value / 1_000_000:.1f}M"
    elif magnitude >= 10_000:
        text = f"{value / 1_000:.1f}k"
    elif magnitude >= 100 or value == int(value):
        text = f"{value:.0f}"
    else:
        text = f"{value:.2f}"
    return f"{text} {unit}".rstrip()


class MetricSparkline(Horizontal):
    """``label ▁▂▅▇ value unit``.

    One history per series: values pushed one by one (``push``) live in the sparkline's own
    bounded deque; a series kept elsewhere (the live run poller's, handed over in each
    LiveRunState) is shown as given by ``set_series``, not copied into a second history.
    Every change hands the Sparkline a NEW list, because its ``data`` is a reactive compared
    by identity/equality, and mutating the list it holds would not repaint it.

    Every part has a fixed size (one line; label and value a fixed width), so a new value
    only repaints the parts whose content changed, never relayouts the screen: a layout pass
    per sample was most of the live view's CPU.
    """

    DEFAULT_CSS = """
    MetricSparkline {
        height: 1;
        width: 1fr;
    }
    MetricSparkline > .metric-label {
        width: 18;
        padding-right: 1;
        height: 1;
        color: $text-muted;
    }
    MetricSparkline > Sparkline {
        width: 1fr;
        height: 1;
        margin-right: 1;
    }
    MetricSparkline > .metric-value {
        width: 14;
        height: 1;
        text-align: right;
    }
    """

    def __init__(
        self,
        label: str,
        unit: str = "",
        history: int = DEFAULT_HISTORY,
        *,
        divisor: float = 1.0,
        formatter: Callable[[float | None], str] | None = None,
        floor: float | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """``divisor`` converts the values to the unit shown (1024 for KiB/s shown as MiB/s);
        the deque keeps the values as given. ``formatter`` (a metric description's own, which
        knows its unit and divisor) replaces both for the value text. ``floor``: what the lowest
        bar stands for (0: bars from zero; None: from the lowest value; say which in the label)."""
        super().__init__(id=id, classes=classes)
        self.label = label
        self.unit = unit
        self.divisor = divisor
        self.formatter = formatter
        self.history = history
        self.floor = floor
        #: the values shown, oldest first: the pushed ones, or the series given to set_series
        self.values: Sequence[float] = deque(maxlen=history)
        self.current: float | None = None
        #: the value text shown, so an unchanged value does not repaint the label
        self._value_text_shown: str | None = None

    def compose(self) -> ComposeResult:
        yield Label(self.label, classes="metric-label")
        sparkline = FastSparkline([], summary_function=max)
        sparkline.floor = self.floor
        yield sparkline
        yield Label("-", classes="metric-value")

    def push(self, value: float) -> None:
        """Append one interval's value and repaint."""
        if not isinstance(self.values, deque):
            self.values = deque(self.values, maxlen=self.history)
        self.values.append(float(value))
        self.current = float(value)
        self._repaint()

    def extend(self, values: Sequence[float]) -> None:
        """Append several intervals' values and repaint once (a replay drawing a recording
        again from its start: a repaint per value was most of its time)."""
        if not values:
            return
        if not isinstance(self.values, deque):
            self.values = deque(self.values, maxlen=self.history)
        self.values.extend(float(value) for value in values)
        self.current = float(values[-1])
        self._repaint()

    def set_series(self, values: Sequence[float], current: float | None = None) -> None:
        """Show a series whose history is kept elsewhere (a poller's snapshot, which its owner
        never changes after handing it over), as given, and repaint."""
        self.values = values
        if current is None and self.values:
            current = self.values[-1]
        self.current = current
        self._repaint()

    def _repaint(self) -> None:
        if not self.is_mounted:
            return
        # a given list is shown as it is: it is new with each snapshot (see the class doc)
        data = self.values if isinstance(self.values, list) else list(self.values)
        if not any(data):
            # Sparkline draws a lone value as a full bar: a first 0 (no writes in a read run)
            # would look like the maximum; all zeros are drawn as the empty (lowest) line
            data = []
        # the reactive repaints only when the list differs from the one it holds
        self.query_one(Sparkline).data = data
        if self.formatter is not None:
            value_text = self.formatter(self.current)
        else:
            value_text = format_value(None if self.current is None else self.current / self.divisor, self.unit)
        if value_text != self._value_text_shown:
            self._value_text_shown = value_text
            # the label's size is fixed in CSS: a repaint of it suffices, no layout pass
            self.query_one(".metric-value", Label).update(value_text, layout=False)

    def on_mount(self) -> None:
        # after the first refresh: a value set while the widget was being mounted (a view
        # that rebuilds its sparklines for the first sample) was lost to the label's mount
        self.call_after_refresh(self._repaint_anew)

    def _repaint_anew(self) -> None:
        if not self.query(Sparkline):
            return  # removed before that refresh (a view rebuilt its sparklines)
        self._value_text_shown = None
        self._repaint()
