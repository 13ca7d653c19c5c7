"""A lean, diffing table for the iostat rows (Line API).

Why not DataTable: with 64 devices at 1 s, rewriting every cell of a DataTable costs about
20 % of a core. Here each row is formatted once into a string key; only rows whose key changed
are rebuilt into a Strip and only their lines are repainted. The device name, saturation flag
and sparkline stay frozen on the left when the figures scroll horizontally.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import FIFOCache
from textual.color import Color
from textual.filter import ANSIToTruecolor, LineFilter
from textual.geometry import Offset, Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style as TextualStyle

from racperf_tui.core.disks.diskstats import QueueFacts
from racperf_tui.core.disks.iostat_math import IostatRow
from racperf_tui.core.disks.iostat_model import (
    SPARK_BLOCKS,
    SPARK_METRICS,
    AwaitThresholds,
    DeviceState,
    format_number,
    sparkline,
)


@dataclass(frozen=True, slots=True)
class Column:
    """One column: header, width in cells, and how narrow terminals rank it.

    Figure columns name the IostatRow attribute they show; fact columns read QueueFacts.
    """

    header: str
    width: int
    priority: int  # lower survives longer when the terminal is narrow
    attr: str  # IostatRow attribute (figures) or QueueFacts attribute (facts)
    kind: str = "num"  # num | await | util | fact


#: Display order = iostat -x order, then the sysfs queue facts.
COLUMNS: tuple[Column, ...] = (
    Column("r/s", 8, 3, "r_s"),
    Column("w/s", 8, 4, "w_s"),
    Column("rkB/s", 9, 5, "rkb_s"),
    Column("wkB/s", 9, 6, "wkb_s"),
    Column("rrqm/s", 7, 15, "rrqm_s"),
    Column("wrqm/s", 7, 16, "wrqm_s"),
    Column("avgrq-sz", 8, 10, "avgrq_sz"),
    Column("avgqu-sz", 8, 2, "avgqu_sz"),
    Column("await", 7, 1, "await_ms", "await"),
    Column("r_await", 7, 8, "r_await_ms", "await"),
    Column("w_await", 7, 9, "w_await_ms", "await"),
    Column("svctm", 6, 7, "svctm_ms"),
    Column("%util", 6, 0, "util_pct", "util"),
    Column("qd", 4, 11, "queue_depth", "fact"),
    Column("nr_rq", 5, 14, "nr_requests", "fact"),
    Column("scheduler", 11, 12, "scheduler", "fact"),
    Column("rot", 3, 13, "rotational", "fact"),
)


def fact_text(facts: QueueFacts | None, column: Column) -> str:
    """A queue fact right-aligned in its column ('-' where sysfs does not say)."""
    value = None if facts is None else getattr(facts, column.attr)
    if value is None:
        text = "-"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    else:
        text = str(value)
    return text[: column.width].rjust(column.width)


MIN_SPARK = 8
_SPARK_LAST = len(SPARK_BLOCKS) - 1
MAX_SPARK = 60

STYLE_HEADER = Style(bold=True, color="bright_white", bgcolor="grey23")
STYLE_NUM = Style()
STYLE_FACT = Style(color="grey62")
STYLE_LEVEL = {"ok": Style(color="green"), "warn": Style(color="#ffaf00"), "crit": Style(color="red", bold=True)}
STYLE_UTIL_HIGH = Style(color="red", bold=True)
STYLE_NAME = Style(bold=True)
STYLE_NAME_SATURATED = Style(bold=True, color="bright_white", bgcolor="red")
STYLE_SPARK = Style(color="cyan")
STYLE_SPARK_SATURATED = Style(color="red")
STYLE_CURSOR = Style(bgcolor="grey35")
#: Every style a row or the header is built with (IostatTable._set_filters converts them).
PAINT_STYLES = (
    STYLE_HEADER,
    STYLE_NUM,
    STYLE_FACT,
    *STYLE_LEVEL.values(),
    STYLE_UTIL_HIGH,
    STYLE_NAME,
    STYLE_NAME_SATURATED,
    STYLE_SPARK,
    STYLE_SPARK_SATURATED,
    STYLE_CURSOR,
)


#: Strip's per-strip caches and their sizes (Textual 8's Strip.__init__).
_STRIP_CACHES = {
    "_divide_cache": 4,
    "_crop_cache": 16,
    "_style_cache": 16,
    "_filter_cache": 4,
    "_line_length_cache": 4,
    "_crop_extend_cache": 4,
    "_offsets_cache": 4,
}


class RowStrip(Strip):
    """A table line: a Strip whose seven per-strip caches are made on first use.

    Strip.__init__ makes them all up front, about half of a row's cost when 64 rows are
    rebuilt every second; a row is painted once or twice and uses one or two of them.
    """

    __slots__ = ()

    def __init__(self, segments: list[Segment], cell_length: int) -> None:  # noqa: PLW0231 - the caches come later
        self._segments = segments
        self._cell_length = cell_length
        self._render_cache = None
        self._link_ids = None
        self._cell_count = None

    def __getattr__(self, name: str) -> FIFOCache:
        size = _STRIP_CACHES.get(name)
        if size is None:
            raise AttributeError(name)
        cache: FIFOCache = FIFOCache(size)
        setattr(self, name, cache)
        return cache


class IostatTable(ScrollView, can_focus=True):
    """Rows of :class:`DeviceState`, one line each, under a fixed header line."""

    HELP_TITLE = "Device table"

    DEFAULT_CSS = """
    IostatTable {
        height: 1fr;
        scrollbar-size: 1 1;
    }
    """

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "cursor(-10)", "Page up", show=False),
        Binding("pagedown", "cursor(10)", "Page down", show=False),
        Binding("home", "cursor(-100000)", "First device", show=False),
        Binding("end", "cursor(100000)", "Last device", show=False),
        Binding("left", "scroll_left", "Scroll left", show=False),
        Binding("right", "scroll_right", "Scroll right", show=False),
    ]

    class CursorMoved(Message):
        """The highlighted device changed (name may be None when the table is empty)."""

        def __init__(self, device: str | None) -> None:
            super().__init__()
            self.device = device

    def __init__(self, thresholds: AwaitThresholds | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.thresholds = thresholds or AwaitThresholds()
        self.spark_metric = "%util"
        self.all_columns = False  # False: drop low-priority columns to fit; True: all, scrolling
        self.cursor_device: str | None = None
        # Until the user moves it, the highlight (and the detail line) follows the top row,
        # the busiest device: a cursor left on whatever topped the since-boot report would
        # describe a device scrolled out of view.
        self.cursor_follows_top = True
        self.states: list[DeviceState] = []
        self._keys: list[tuple] = []  # per displayed row: what its strip was built from
        self._strips: list[Strip] = []
        self._header = Strip([])
        self._layout_key: tuple = ()
        self._columns: tuple[Column, ...] = COLUMNS
        self._figure_columns: tuple[Column, ...] = ()
        self._fact_columns: tuple[Column, ...] = ()
        self._figures_format = ""
        self._figures_width = 0
        self._values_of: Callable[[IostatRow], tuple[float, ...]] | None = None
        self._facts_cache: dict[int, tuple[QueueFacts | None, str]] = {}
        self._runs_cache: dict[tuple, tuple[tuple[int, int, Style], ...]] = {}
        # A device's name and facts Segments (_build_strip), per layout and filters.
        self._head_cache: dict[tuple[str, bool], Segment] = {}
        self._tail_cache: dict[str, tuple[Segment, ...]] = {}
        self._name_width = 8
        self._spark_width = MIN_SPARK
        self._frozen_width = 0
        self._full_width = 0
        self._paint_width = 0
        self._row_pad = 0
        self._column_starts: list[int] = [0]  # cell offset of each column after the frozen part
        self.rebuilt_rows = 0  # rows rebuilt by the last update (the diff at work; tests read it)
        self._plain_painted = False  # painted without the StylesCache since it was cleared
        # The line filters the rows were built for, their styles after those filters, and
        # the filters still to run when painting (see _set_filters).
        self._filters_key: tuple = ()
        self._paint_styles: dict[Style, Style] = {style: style for style in PAINT_STYLES}
        self._paint_filters: tuple = ()
        self._paint_scroll: Offset | None = None  # scroll offset while render_lines runs

    # ---- layout --------------------------------------------------------------------------
    def _layout(self) -> bool:
        """Choose columns and sparkline width for the current size; True when it changed."""
        width = max(self.scrollable_content_region.width, 20)
        longest = max((len(s.name) for s in self.states), default=6)
        name_width = min(max(longest, 6), 20)
        key = (width, name_width, self.all_columns)
        if key == self._layout_key:
            return False
        self._layout_key = key
        self._name_width = name_width
        frozen_base = 1 + name_width + 1 + 1  # flag, name, space, (spark), space
        if self.all_columns:
            columns = COLUMNS
        else:
            budget = width - frozen_base - MIN_SPARK
            kept: set[str] = set()
            # A strict prefix of the priority order: skipping wkB/s to squeeze in the narrower
            # svctm would make columns come and go as a longer device name appears.
            for column in sorted(COLUMNS, key=lambda c: c.priority):
                if budget < column.width + 1:
                    break
                budget -= column.width + 1
                kept.add(column.header)
            columns = tuple(c for c in COLUMNS if c.header in kept)
        figures_width = sum(c.width + 1 for c in columns)
        self._spark_width = max(MIN_SPARK, min(MAX_SPARK, width - frozen_base - figures_width))
        self._columns = columns
        self._figure_columns = tuple(c for c in columns if c.kind != "fact")
        self._fact_columns = tuple(c for c in columns if c.kind == "fact")
        # printf-style: half the cost of str.format for the same digits
        self._figures_format = "".join(f" %{c.width}.2f" for c in self._figure_columns)
        self._figures_width = sum(c.width + 1 for c in self._figure_columns)
        starts, offset = [], 0
        for column in columns:
            starts.append(offset)
            offset += column.width + 1
        self._column_starts = starts
        attrs = [c.attr for c in self._figure_columns]
        if len(attrs) > 1:
            self._values_of = attrgetter(*attrs)
        elif attrs:
            one = attrgetter(attrs[0])
            self._values_of = lambda row: (one(row),)
        else:
            self._values_of = None
        self._facts_cache = {}
        self._runs_cache = {}
        self._head_cache, self._tail_cache = {}, {}
        self._frozen_width = frozen_base + self._spark_width
        # Rows fill the view exactly, so painting needs no crop or padding (no new Strips).
        self._row_pad = max(0, width - self._frozen_width - figures_width)
        self._full_width = self._frozen_width + figures_width + self._row_pad
        self._header = self._build_header()
        return True

    def _build_header(self) -> Strip:
        spark_title = self.spark_metric[: self._spark_width]
        text = " " + "Device".ljust(self._name_width) + " " + spark_title.ljust(self._spark_width) + " "
        text += "".join(" " + c.header.rjust(c.width) for c in self._columns)
        text += " " * self._row_pad
        return Strip([Segment(text, self._paint_style(STYLE_HEADER))], len(text))

    @property
    def visible_headers(self) -> list[str]:
        """The figure columns currently shown (tests and the status line read it)."""
        return [c.header for c in self._columns]

    # ---- rows ----------------------------------------------------------------------------
    def _spark(self, state: DeviceState) -> str:
        """The device's sparkline, extended by one character per sample where possible.

        Recomputing 64 sparklines of 60 cells every second costs more than everything else
        on a row, so the last one is kept and only the new sample's block appended, unless
        the width or the scale (auto-scaled metrics follow their maximum) changed.
        """
        metric, width = self.spark_metric, self._spark_width
        history = state.history[metric]
        scale = SPARK_METRICS[metric][1]
        count = len(history)
        tail_start = max(0, count - width)
        top = scale if scale is not None else max(islice(history, tail_start, None), default=0.0)
        cached = state.spark_cache.get(metric)
        if cached is not None:
            c_width, c_top, c_samples, c_chars = cached
            if c_width == width and c_top == top:
                if c_samples == state.samples:
                    return c_chars.rjust(width)
                if c_samples == state.samples - 1 and count:
                    # sparkline() of the one new value, inline (64 calls a tick)
                    factor = _SPARK_LAST / (top if top > 0 else 1.0)
                    block = SPARK_BLOCKS[min(int(history[-1] * factor + 0.5), _SPARK_LAST)]
                    chars = (c_chars + block)[-width:]
                    state.spark_cache[metric] = (width, top, state.samples, chars)
                    return chars.rjust(width)
        tail = list(islice(history, tail_start, None))  # a fresh list, bounded by the width
        chars = sparkline(tail, len(tail), top or 1.0)
        state.spark_cache[metric] = (width, top, state.samples, chars)
        return chars.rjust(width)

    def _figures_text(self, row: IostatRow) -> str:
        """All shown figures of a row, each ' ' + right-aligned, in one str.format call."""
        columns = self._figure_columns
        if not columns or self._values_of is None:  # a terminal too narrow for any figure
            return ""
        values = self._values_of(row)
        text = self._figures_format % values
        if len(text) != self._figures_width:  # a figure too wide for its column: shorten it
            text = "".join(" " + format_number(v, c.width) for v, c in zip(values, self._figure_columns))
        return text

    def _facts_text(self, facts: QueueFacts | None) -> str:
        # By identity: a device keeps its QueueFacts object until they are read again, and
        # hashing the dataclass's six fields cost more than the look-up.
        cached = self._facts_cache.get(id(facts))
        if cached is not None and cached[0] is facts:
            return cached[1]
        text = "".join(" " + fact_text(facts, c) for c in self._fact_columns)
        if len(self._facts_cache) > 4096:
            self._facts_cache.clear()
        self._facts_cache[id(facts)] = (facts, text)
        return text

    def _row_key(self, state: DeviceState, is_cursor: bool) -> tuple:
        """Everything a row's look depends on, as plain values: equal key, identical line."""
        row = state.row
        level = self.thresholds.level
        styles = (level(row.await_ms), level(row.r_await_ms), level(row.w_await_ms), row.util_pct >= 90)
        return (
            state.label,
            state.flagged,
            self._spark(state),
            self._figures_text(row),
            self._facts_text(state.facts),
            styles,
            is_cursor,
        )

    def _paint_style(self, style: Style) -> Style:
        return self._paint_styles.get(style, style)

    def _set_filters(self, filters: Sequence[LineFilter], background: Color) -> None:
        """Build the rows for these line filters. When they are only ANSI-to-truecolor ones
        (the usual case), the few styles of the table are converted here, once, exactly as
        the filter converts each segment's style, so painting needs no filter pass (a new
        Strip per changed row); any other filter runs at paint time as usual."""
        self._filters_key = (tuple(filters), background)
        mapped: dict[Style, Style] = {}
        truecolor = [f for f in filters if isinstance(f, ANSIToTruecolor)]
        prefilter = bool(filters) and len(truecolor) == len(filters)
        if prefilter:
            rich_background = background.rich_color
            for style in PAINT_STYLES:
                final = style
                for line_filter in truecolor:
                    final = line_filter.truecolor_style(final, rich_background)
                mapped[style] = final
        self._paint_filters = () if prefilter else tuple(filters)
        self._paint_styles = mapped if prefilter else {style: style for style in PAINT_STYLES}
        self._runs_cache = {}
        self._head_cache, self._tail_cache = {}, {}
        self._header = self._build_header()
        self._strips = [self._build_strip(key) for key in self._keys]

    def _figure_runs(self, styles: tuple) -> tuple[tuple[int, int, Style], ...]:
        """(start, end, style) of the figure text's runs of one style, for these style flags
        (await levels, %util high): a few dozen combinations at most, cached per layout."""
        runs = self._runs_cache.get(styles)
        if runs is not None:
            return runs
        await_levels = {"await": styles[0], "r_await": styles[1], "w_await": styles[2]}
        found = []
        # Adjacent cells of one style share a segment: fewer segments, cheaper compositing.
        run_start = 0
        run_style = STYLE_NUM
        offset = 0
        for column in self._figure_columns:
            if column.kind == "await":
                style = STYLE_LEVEL[await_levels[column.header]]
            elif column.kind == "util":
                style = STYLE_UTIL_HIGH if styles[3] else STYLE_NUM
            else:
                style = STYLE_NUM
            if style is not run_style:
                if offset > run_start:
                    found.append((run_start, offset, self._paint_style(run_style)))
                run_start, run_style = offset, style
            offset += column.width + 1
        if offset > run_start:
            found.append((run_start, offset, self._paint_style(run_style)))
        runs = self._runs_cache[styles] = tuple(found)
        return runs

    def _build_strip(self, key: tuple) -> Strip:
        name, saturated, spark, figures, facts, styles, is_cursor = key
        # Few segments per line: each costs the compositor a little on every repaint.
        paint = self._paint_styles.get
        # The name and the facts (with the padding) of a device are the same tick after
        # tick: their Segments (immutable) are kept, per layout and filters.
        heads, tails = self._head_cache, self._tail_cache
        if len(heads) > 4096 or len(tails) > 4096:  # devices come and go (hot-plug): stay bounded
            heads.clear()
            tails.clear()
        head = heads.get((name, saturated))
        if head is None:
            head = heads[(name, saturated)] = Segment(
                ("!" if saturated else " ") + name[: self._name_width].ljust(self._name_width),
                paint(STYLE_NAME_SATURATED if saturated else STYLE_NAME),
            )
        tail = tails.get(facts)
        if tail is None:
            tail = tails[facts] = ((Segment(facts, paint(STYLE_FACT)),) if facts else ()) + (
                (Segment(" " * self._row_pad),) if self._row_pad else ()
            )
        segments = [head, Segment(f" {spark} ", paint(STYLE_SPARK_SATURATED if saturated else STYLE_SPARK))]
        segments += [Segment(figures[start:end], style) for start, end, style in self._figure_runs(styles)]
        segments += tail
        strip = RowStrip(segments, self._full_width)
        return strip.apply_style(self._paint_style(STYLE_CURSOR)) if is_cursor else strip

    def update_rows(self, states: list[DeviceState]) -> None:
        """Show these rows in this order; repaint only the lines that changed."""
        self.states = states
        relayout = self._layout()
        names = [s.name for s in states]
        if self.cursor_device not in names or (self.cursor_follows_top and names[0] != self.cursor_device):
            self.cursor_device = names[0] if names else None
            self.post_message(self.CursorMoved(self.cursor_device))
        if relayout:
            self._keys, self._strips = [], []
            self.refresh()
        self.virtual_size = Size(self._full_width, len(states) + 1)
        rebuilt = 0
        first_dirty = last_dirty = -1
        keys, strips = self._keys, self._strips
        cursor = self.cursor_device
        for index, state in enumerate(states):
            key = self._row_key(state, state.name == cursor)
            if index < len(keys):
                if keys[index] == key:
                    continue
                keys[index] = key
                strips[index] = self._build_strip(key)
            else:
                keys.append(key)
                strips.append(self._build_strip(key))
            rebuilt += 1
            if first_dirty < 0:
                first_dirty = index
            last_dirty = index
        if len(keys) > len(states):
            del keys[len(states) :], strips[len(states) :]
            self.refresh()
        elif rebuilt:
            # One repaint of the span of changed lines (one refresh call per line costs more).
            self.refresh_span(first_dirty + 1, last_dirty + 1)
        self.rebuilt_rows = rebuilt

    def rerender(self) -> None:
        """Rebuild everything (metric, columns or thresholds changed)."""
        self._layout_key = ()
        self.update_rows(self.states)

    def on_resize(self, event: events.Resize) -> None:
        self.rerender()

    # ---- Line API ------------------------------------------------------------------------
    def _plain_styles(self) -> bool:
        """No border, outline, padding, tint, hatch or opacity: what Textual's StylesCache
        would do to a line is then only a pad to the content width and the app's filters."""
        styles = self.styles
        if self.BLANK or self.auto_links and self.hover_style._link_id:
            return False
        if styles.padding != (0, 0, 0, 0) or styles.tint.a or self.opacity != 1.0:
            return False
        if styles.text_opacity != 1.0 or styles.has_rule("hatch") and styles.hatch != "none":
            return False
        return not any(edge for edge, _color in styles.border) and not any(edge for edge, _color in styles.outline)

    def render_lines(self, crop: Region) -> list[Strip]:
        # Geometry once per paint, not per line: Widget.size walks up to the screen each time.
        width = self.size.width
        self._paint_width = width - self.scrollbar_size_vertical
        if not self._plain_styles():
            if self._plain_painted:  # its lines were not kept up to date meanwhile
                self._plain_painted = False
                self._styles_cache.clear()
            return super().render_lines(crop)
        self._plain_painted = True
        # The StylesCache's work for plain styles, without its per-line costs (a style
        # lookup per border edge, a new Strip per line): pad to the content width, apply the
        # app's filters. apply_filter caches on the strip, so a row that did not change
        # costs a dict lookup; only rebuilt rows are filtered again. Same segments out.
        base_background, background = self.background_colors
        pad_style = TextualStyle(background=base_background + background).rich_style
        filters = self.get_line_filters()
        if (tuple(filters), background) != self._filters_key:
            self._set_filters(filters, background)
        filters = self._paint_filters
        render_line = self.render_line
        self._paint_scroll = self.scroll_offset
        strips = []
        for y in crop.line_range:
            strip = render_line(y)
            if strip.cell_length != width:  # rows are built to the width: most need nothing
                strip = strip.adjust_cell_length(width, pad_style)
            for line_filter in filters:
                strip = strip.apply_filter(line_filter, background)
            strips.append(strip)
        self._paint_scroll = None
        x1, x2 = crop.column_span
        if (x1, x2) != (0, width):
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def render_line(self, y: int) -> Strip:
        # (An Offset at 0, 0 is falsy: "or" would read the reactive for every line.)
        scroll_x, scroll_y = self.scroll_offset if self._paint_scroll is None else self._paint_scroll
        width = self._paint_width
        if y == 0:
            strip = self._header
        else:
            index = scroll_y + y - 1
            if index >= len(self._strips):
                return Strip.blank(width)
            strip = self._strips[index]
            if not scroll_x and strip.cell_length == width:
                return strip
        frozen = self._frozen_width
        if scroll_x:
            # Whole columns only: a crop inside a column showed '711.00' of '33711.00' under
            # the r/s header, a figure off by a factor of 50 and nothing on screen saying so.
            scroll_x = bisect_left(self._column_starts, scroll_x)
            scroll_x = self._column_starts[scroll_x] if scroll_x < len(self._column_starts) else self._full_width
        if scroll_x and width > frozen:
            strip = Strip.join(
                [strip.crop(0, frozen), strip.crop(frozen + scroll_x, frozen + scroll_x + width - frozen)]
            )
        return strip.crop(0, width).extend_cell_length(width, self._paint_style(STYLE_HEADER) if y == 0 else None)

    def refresh_span(self, first: int, last: int) -> None:
        """Repaint content lines ``first``..``last`` (1 is the first row) that are in view."""
        scroll_y, height = self.scroll_offset.y, self.size.height
        top = max(first - scroll_y, 1)
        bottom = min(last - scroll_y, height - 1)
        if top <= bottom:
            self.refresh(Region(0, top, self.size.width, bottom - top + 1))

    # ---- cursor --------------------------------------------------------------------------
    def action_cursor(self, step: int) -> None:
        """Move the highlight by ``step`` rows (clamped) and keep it in view."""
        if not self.states:
            return
        names = [s.name for s in self.states]
        index = names.index(self.cursor_device) if self.cursor_device in names else 0
        self.move_cursor_to(min(max(index + step, 0), len(names) - 1))

    def move_cursor_to(self, index: int) -> None:
        """Highlight the row at ``index`` of the displayed rows (it stays there from now on)."""
        self.cursor_follows_top = False
        self.cursor_device = self.states[index].name
        self.update_rows(self.states)
        visible_rows = max(self.size.height - 1, 1)
        if index < self.scroll_offset.y:
            self.scroll_to(y=index, animate=False)
        elif index >= self.scroll_offset.y + visible_rows:
            self.scroll_to(y=index - visible_rows + 1, animate=False)
        self.post_message(self.CursorMoved(self.cursor_device))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y - 1
        if event.y >= 1 and 0 <= index < len(self.states):
            self.move_cursor_to(index)

    def _snapped_scroll_x(self) -> int:
        """The column start the view shows at the current scroll_x (render_line snaps too)."""
        index = bisect_left(self._column_starts, round(self.scroll_x))
        return self._column_starts[index] if index < len(self._column_starts) else self._full_width

    def action_scroll_right(self) -> None:
        """One whole column to the right (a cell at a time took 9 presses per column)."""
        current = self._snapped_scroll_x()
        following = next((start for start in self._column_starts if start > current), None)
        if following is not None:
            self.scroll_to(x=following, animate=False)

    def action_scroll_left(self) -> None:
        """One whole column to the left."""
        current = self._snapped_scroll_x() if self.scroll_x else 0
        previous = [start for start in self._column_starts if start < current]
        self.scroll_to(x=previous[-1] if previous else 0, animate=False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.refresh()

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_x(old_value, new_value)
        self.refresh()
