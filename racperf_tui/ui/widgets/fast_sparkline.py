"""Textual's Sparkline, drawn cell for cell the same, at a fraction of the CPU.

Textual's renderer computes every bar from scratch: a Fraction per bucket bound, a blended
Color and a new Style per bar, and one Segment per bar that every later stage (base style,
line splitting, compositor) handles again. With ten sparklines repainted once a second in the
live run view, that was most of its CPU once the layout passes were gone. This one summarises
each bucket once, bounds the buckets with integer arithmetic, reuses one Style per colour and
joins neighbouring bars of the same style into one Segment; the cells (character and style)
are identical to Textual's (tests/test_fast_sparkline.py compares them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.color import Color, ColorTriplet
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from textual.app import RenderResult as TextualRenderResult
from textual.reactive import Reactive
from textual.widgets import Sparkline

#: the eight bar heights, lowest first (as Textual draws them)
BARS = "▁▂▃▄▅▆▇█"

#: (red, green, blue) -> the Style of a bar of that colour, shared by every sparkline
_STYLE_BY_RGB: dict[tuple[int, int, int], Style] = {}

#: more distinct colours than this and the cache starts over (a gradient has at most 256 * 3)
_STYLE_CACHE_MAX = 4096


def _style_of_rgb(red: int, green: int, blue: int) -> Style:
    """The Style Textual would build for this colour (``Style.from_color(Color.from_rgb())``)."""
    key = (red, green, blue)
    style = _STYLE_BY_RGB.get(key)
    if style is None:
        if len(_STYLE_BY_RGB) >= _STYLE_CACHE_MAX:
            _STYLE_BY_RGB.clear()
        style = Style.from_color(Color.from_triplet(ColorTriplet(red, green, blue)))
        _STYLE_BY_RGB[key] = style
    return style


class FastSparklineRenderable:
    """The same bars as ``textual.renderables.sparkline.Sparkline``, computed once per bucket."""

    def __init__(
        self,
        data: Sequence[float],
        *,
        width: int | None,
        height: int | None,
        min_color: Color,
        max_color: Color,
        summary_function: Callable[[Sequence[float]], float],
        floor: float | None = None,
    ) -> None:
        """``floor``: the value the lowest bar stands for when no value is below it (None:
        the lowest value, Textual's scale)."""
        self.data = data
        self.floor = floor
        self.width = width
        self.height = height
        self.min_color = min_color
        self.max_color = max_color
        self.summary_function = summary_function

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = self.width or options.max_width
        height = self.height or 1
        data = list(self.data)
        if not data:
            for _ in range(height - 1):
                yield Segment.line()
            yield Segment(BARS[0] * width, Style.from_color(self.min_color))
            return
        if len(data) == 1:
            max_style = Style.from_color(self.max_color)
            for line_no in range(height):
                yield Segment("█" * width, max_style)
                if line_no < height - 1:
                    yield Segment.line()
            return

        bar_line_segments = len(BARS)
        bar_segments = bar_line_segments * height - 1
        minimum, maximum = min(data), max(data)
        if self.floor is not None:
            minimum = min(minimum, self.floor)
        extent = maximum - minimum or 1

        # Textual's buckets: bounds int(Fraction(n, width) * k) == n * k // width, empty ones dropped
        count = len(data)
        summaries: list[float] = []
        for bucket_no in range(width):
            partition = data[count * bucket_no // width : count * (bucket_no + 1) // width]
            if partition:
                summaries.append(self.summary_function(partition))
        # each bar's bucket, stepped with the same float arithmetic as Textual's
        bar_buckets: list[int] = []
        bucket_index = 0.0
        step = len(summaries) / width
        for _ in range(width):
            bar_buckets.append(int(bucket_index))
            bucket_index += step

        ratios = [(summary - minimum) / extent for summary in summaries]
        bar_indexes = [int(ratio * bar_segments) for ratio in ratios]
        styles = self._bucket_styles(ratios)

        for line_no in reversed(range(height)):
            low = line_no * bar_line_segments
            high = (line_no + 1) * bar_line_segments
            run_text = ""
            run_style: Style | None = None
            for bucket in bar_buckets:
                bar_index = bar_indexes[bucket]
                if bar_index < low:
                    bar, style = " ", None
                else:
                    bar = "█" if bar_index >= high else BARS[bar_index % bar_line_segments]
                    style = styles[bucket]
                if style is run_style:
                    run_text += bar
                    continue
                if run_text:
                    yield Segment(run_text, run_style)
                run_text, run_style = bar, style
            if run_text:
                yield Segment(run_text, run_style)
            if line_no > 0:
                yield Segment.line()

    def _bucket_styles(self, ratios: list[float]) -> list[Style]:
        """Each bucket's bar colour: Textual's ``blend_colors`` (truncated to int per channel)."""
        low, high = self.min_color.triplet, self.max_color.triplet
        if low is None or high is None:
            # blend_colors gives the max colour when either colour is not RGB
            max_style = Style.from_color(self.max_color)
            return [max_style] * len(ratios)
        red1, green1, blue1 = low
        red2, green2, blue2 = high
        return [
            _style_of_rgb(
                int(red1 + (red2 - red1) * ratio),
                int(green1 + (green2 - green1) * ratio),
                int(blue1 + (blue2 - blue1) * ratio),
            )
            for ratio in ratios
        ]

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.width or options.max_width, self.height or 1)


class FastSparkline(Sparkline):
    """A drop-in ``Sparkline`` (same CSS, component classes and reactives) with the cheaper renderer."""

    #: bars carry no links: skip the per-render link styling pass (same cells either way)
    auto_links: Reactive[bool] = Reactive(False)
    #: the value the lowest bar stands for (None: the lowest value; 0: a steady series is
    #: drawn as the steady level it is, not min-to-max noise)
    floor: float | None = None

    def render(self) -> TextualRenderResult:
        """The colours exactly as ``Sparkline.render`` picks them, drawn by the cheaper renderer."""
        data = self.data or []
        _, base = self.background_colors
        min_color = base + (
            self.get_component_styles("sparkline--min-color").color if self.min_color is None else self.min_color
        )
        max_color = base + (
            self.get_component_styles("sparkline--max-color").color if self.max_color is None else self.max_color
        )
        return FastSparklineRenderable(
            data,
            width=self.size.width,
            height=self.size.height,
            min_color=min_color.rich_color,
            max_color=max_color.rich_color,
            summary_function=self.summary_function,
            floor=self.floor,
        )
