"""One node of the cluster view: its name and state, and its busiest devices.

A card shows what the cluster monitor knows of the node (orchestration/cluster_monitor.py's
NodeState) through the node's own :class:`IostatModel`, so a device's ``!`` is the Disks tab's
saturation flag, by the same rules. A node that is not ok says why (refused, DNS, auth, host
key, timeout, lost link) and when it is tried again; a lost node keeps its last rows, dimmed,
with the time they were sampled.

Devices marked on the card (:meth:`NodeCard.mark`: a CALIBRATE_IO run's datafile LUNs, by
their kernel names on this node) are pinned at the top of its devices, busy or idle, named
``CAL name`` in the card's ``node-card--calibration`` style; the busiest others fill the rest.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.filter import LineFilter
from textual.geometry import Region, Size
from textual.reactive import var
from textual.strip import Strip
from textual.widget import Widget

from racperf_tui.core.disks.iostat_model import DeviceState, IostatModel, format_number
from racperf_tui.core.disks.iostat_sampler import IostatRow
from racperf_tui.orchestration.cluster_monitor import CONNECTING, LOST, OK, RECONNECTING, UNREACHABLE, NodeState
from racperf_tui.ui.shown import plain

STATE_STYLE = {
    OK: ("●", "green"),
    CONNECTING: ("○", "dim"),
    RECONNECTING: ("◌", "yellow"),
    LOST: ("✖", "red"),
    UNREACHABLE: ("✖", "red"),
}
#: the figures after the device name: (heading, width, decimals)
COLUMNS = (("IOPS", 6, 0), ("MB/s", 5, 1), ("await", 5, 2), ("qu", 4, 1), ("%ut", 3, 0))
#: what a marked device's name is preceded by on its line
MARK = "CAL "


def busiest(model: IostatModel, count: int) -> list[DeviceState]:
    """The ``count`` devices to show: the saturated first, then by %util, IOPS, MB/s (whole
    devices only; a device that did nothing this interval is never "busy")."""
    whole = [s for s in model.devices.values() if not s.row.is_partition]

    def load(s: DeviceState) -> tuple[float, ...]:
        r = s.row
        return (1.0 if s.flagged else 0.0, r.util_pct, r.r_s + r.w_s, r.rkb_s + r.wkb_s)

    active = [s for s in whole if s.flagged or s.row.r_s + s.row.w_s > 0 or s.row.util_pct > 0]
    return sorted(active, key=load, reverse=True)[:count]


def device_line(flag: bool, name: str, figures: tuple[float, ...], width: int, mark: Style | None = None) -> Text:
    """``! name  IOPS MB/s await qu %ut`` fitted to ``width`` (the name gives way first);
    ``mark``: a marked device, ``CAL name`` in that style (red still says saturated)."""
    fixed = sum(w + 1 for _h, w, _d in COLUMNS)
    name_width = max(4, width - 1 - fixed)
    line = Text("!" if flag else " ", style="bold red" if flag else "")
    if mark is not None:
        name = MARK + name
    shown = name if len(name) <= name_width else name[: name_width - 1] + "…"
    line.append(shown.ljust(name_width), style="bold red" if flag else (mark or ""))
    for (_heading, w, decimals), value in zip(COLUMNS, figures):
        line.append(" " + format_number(value, w, decimals))
    return line


def figures_of(state: DeviceState) -> tuple[float, ...]:
    return row_figures(state.row)


def row_figures(r: IostatRow) -> tuple[float, ...]:
    return (r.r_s + r.w_s, (r.rkb_s + r.wkb_s) / 1024.0, r.await_ms, r.avgqu_sz, r.util_pct)


def marked_devices(
    state: NodeState, model: IostatModel, marked: Sequence[str]
) -> list[tuple[str, tuple[float, ...], bool]]:
    """(name, figures, saturated) of the marked kernel names this node's last rows have, in
    their order: the model's judgement where it has the device (it is given only the devices
    that did something), the bare row's figures where not (idle)."""
    rows = {row.kernel_name or row.device: row for row in state.rows if not row.is_partition}
    found = []
    for kernel in dict.fromkeys(marked):
        row = rows.get(kernel)
        if row is None:
            continue
        device = model.devices.get(row.device)
        if device is not None:
            found.append((device.name, figures_of(device), device.flagged))
        else:
            found.append((row.device, row_figures(row), False))
    return found


def heading(width: int) -> Text:
    fixed = sum(w + 1 for _h, w, _d in COLUMNS)
    name_width = max(4, width - 1 - fixed)
    text = " " + "device"[:name_width].ljust(name_width) + "".join(" " + h.rjust(w) for h, w, _d in COLUMNS)
    return Text(text, style="dim")


def age(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


class NodeCard(Widget):
    """A node's card; :meth:`show` gives it the node's state and model."""

    #: lines of a card: title, heading, TOP devices, the saturation line. Fixed, so a new
    #: sample repaints the card alone (16 cards re-laid out every second cost 20 % of a core)
    TOP = 4
    HEIGHT = TOP + 3

    COMPONENT_CLASSES = {"node-card--calibration"}
    #: the kernel names marked on the card (:meth:`mark`)
    marked: var[tuple[str, ...]] = var((), init=False)

    DEFAULT_CSS = """
    NodeCard {
        height: 7;
        padding: 0 1;
        background: $boost;
    }
    NodeCard.-bad {
        background: $error 15%;
    }
    NodeCard > .node-card--calibration {
        color: $accent;
        text-style: bold;
    }
    """

    #: a sample older than this many intervals has its age on the title (a fresh one's age,
    #: 0.0 or 0.1 s, would change the title at every sample: a line to paint on every card)
    STALE_INTERVALS = 1.5

    def __init__(self, name: str, *, interval_s: float = 1.0, id: str | None = None) -> None:
        super().__init__(id=id)
        self.node_name = name
        self.interval_s = interval_s
        self.state: NodeState | None = None
        self.model: IostatModel | None = None
        self._mark_style: Style | None = None
        #: the lines as painted (text and spans) and their strips, for :attr:`_strips_width`
        self._shown: list[tuple[str, tuple[object, ...]]] = []
        self._strips: list[Strip] = []
        self._strips_width = 0
        self._style_kept: tuple[Style, Color, Sequence[LineFilter]] | None = None
        #: lines painted again since mount, and shows that changed no line (tests read them)
        self.lines_repainted = 0
        self.shows_unchanged = 0

    def show(self, state: NodeState, model: IostatModel) -> None:
        """Show the node's new state: only the lines whose text changed are made and
        repainted (an idle node's new sample changes none, a busy one's a few figures)."""
        self.state, self.model = state, model
        bad = state.state in (LOST, UNREACHABLE)
        if bad != self.has_class("-bad"):
            self.set_class(bad, "-bad")  # another background: every line anew
            self._strips_width = 0
            self.refresh()
            return
        self._repaint_changed()

    def mark(self, devices: Sequence[str]) -> None:
        """Pin and mark these devices (kernel names on this node; none: no marks)."""
        self.marked = tuple(devices)

    def watch_marked(self) -> None:
        self._repaint_changed()

    def is_stale(self, now: float) -> bool:
        """The node's last sample is older than STALE_INTERVALS intervals (its age is shown)."""
        state = self.state
        return (
            state is not None
            and state.sampled_at > 0
            and now - state.sampled_at > self.STALE_INTERVALS * self.interval_s
        )

    def refresh_clock(self) -> None:
        """Repaint for the clock (a retry countdown), with the same state."""
        self._repaint_changed()

    def _repaint_changed(self) -> None:
        width = self.outer_size.width
        if not width or width != self._strips_width:
            self._strips_width = 0  # not painted at this width yet: render_lines makes them all
            self.refresh()
            return
        texts = self._texts(width)
        if len(texts) != len(self._strips):  # another height
            self._strips_width = 0
            self.refresh()
            return
        changed = []
        for y, text in enumerate(texts):
            key = _key_of(text)
            if y >= len(self._shown) or key != self._shown[y]:
                changed.append(y)
                self._strips[y] = self._strip(text, width)
                self._shown[y] = key
        if not changed:
            self.shows_unchanged += 1
            return
        self.lines_repainted += len(changed)
        left = self.styles.padding.left
        # regions are of the content (inside the padding); the strips cover the padding too
        self.refresh(*(Region(-left, y, width, 1) for y in changed))

    def notify_style_update(self) -> None:
        """Other colours (a theme, a class): the kept strips are of the old ones."""
        super().notify_style_update()
        self._strips_width = 0
        self._style_kept = None
        self._mark_style = None

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.HEIGHT  # a grid's auto rows ask this, not the style's height

    def render(self) -> Text:
        width = self.content_size.width or 36
        lines = self._lines(width)[: self.HEIGHT]
        for line in lines:  # one line each, whatever a name holds
            line.truncate(width, overflow="ellipsis")
        return Text("\n", no_wrap=True).join(lines)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The card's lines as strips, its padding and background applied here: Textual's
        generic path (content -> visual -> styles cache, per line) cost 4 ms a card, 16 cards
        a second. Same look: the padding, the widget's colours, the app's filters. Kept:
        :meth:`show` remakes only the lines that changed, and the compositor asks more than
        once per update."""
        width = self.outer_size.width  # the crop is of the whole widget, padding included
        if self._strips_width != width:
            texts = self._texts(width)
            self._strips = [self._strip(text, width) for text in texts]
            self._shown = [_key_of(text) for text in texts]
            self._strips_width = width
            self.lines_repainted += len(texts)
        strips = self._strips[crop.y : crop.y + crop.height]
        x1, x2 = crop.column_span
        if (x1, x2) != (0, width):
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def _texts(self, width: int) -> list[Text]:
        """The card's lines at this outer width, as many as its height, cut to fit."""
        left, right = self.styles.padding.left, self.styles.padding.right
        inner = max(1, width - left - right)
        lines = self._lines(inner)[: self.HEIGHT]
        lines += [Text() for _ in range(max(self.HEIGHT, self.outer_size.height) - len(lines))]
        for text in lines:
            text.truncate(inner, overflow="ellipsis", pad=True)
        return lines

    def _strip(self, text: Text, width: int) -> Strip:
        left, right = self.styles.padding.left, self.styles.padding.right
        base, background, filters = self._paint_style()
        segments = [Segment(" " * left, base), *Segment.apply_style(text.render(self.app.console), base)]
        strip = Strip([*segments, Segment(" " * right, base)], width)
        for line_filter in filters:
            strip = strip.apply_filter(line_filter, background)
        return strip

    def _paint_style(self) -> tuple[Style, Color, Sequence[LineFilter]]:
        """The card's style, background and the app's line filters, kept until the styles
        change: Textual works the style out from every ancestor's each time it is asked
        after a refresh (two thirds of a line's cost)."""
        kept = self._style_kept
        if kept is None:
            _base_background, background = self.background_colors
            kept = (self.rich_style, background, self.get_line_filters())
            self._style_kept = kept
        return kept

    def _lines(self, width: int) -> list[Text]:
        state, model = self.state, self.model
        name = plain(self.node_name)
        if state is None or model is None:
            return [Text.assemble(("○ ", "dim"), (name, "bold"), ("  not started", "dim"))]
        glyph, style = STATE_STYLE.get(state.state, ("?", ""))
        now = time.time()
        title = Text.assemble((glyph + " ", style), (name, "bold"), "  ", (state.state, style))
        # what changes with the clock stays on the title line: the card's height does not move
        if state.state == OK and self.is_stale(now):
            title.append(f"  {age(max(0.0, now - state.sampled_at))} ago", style="dim")
        elif state.state != RECONNECTING and state.retry_at > now:
            title.append(f"  retry {age(state.retry_at - now)}", style="dim")
        if state.state != OK and state.sampled_at and state.rows:
            title.append(f"  rows of {time.strftime('%H:%M:%S', time.localtime(state.sampled_at))}", style="dim")
        host = plain(state.hostname or state.spec)
        if len(title) + 2 + len(host) <= width:
            title.append(" " * (width - len(title) - len(host)) + host, style="dim")
        lines = [title]
        if state.state != OK:
            # a reason of several lines (an SSH server's banner, a host key warning) is one
            # paragraph: plain() would show each newline as a literal \n
            why = plain(" ".join(str(state.reason).split())) or "trying"
            for part in textwrap.wrap(why, width, max_lines=2 if state.rows else 3, placeholder=" …"):
                lines.append(Text(part, style=style))
        if not state.rows:
            return lines
        room = self.TOP - (1 if state.since_boot or state.state != OK else 0)
        marked = marked_devices(state, model, self.marked) if self.marked else []
        pinned = marked[:room] if len(marked) <= room else marked[: room - 1]
        left_out = marked[len(pinned) :]
        names = {name for name, _figures, _flagged in marked}
        others = [d for d in busiest(model, room) if d.name not in names][: room - len(pinned) - (1 if left_out else 0)]
        dim = "" if state.state == OK else "dim"
        if state.since_boot:
            lines.append(Text("first sample: averages since boot", style="dim"))
        if pinned or others:
            lines.append(heading(width))
            mark = self._calibration_style()
            shown: list[tuple[str, tuple[float, ...], bool, Style | None]] = [(*p, mark) for p in pinned]
            shown += [(d.name, figures_of(d), d.flagged, None) for d in others]
            for device_name, figures, flagged, device_mark in shown:
                line = device_line(flagged, plain(device_name), figures, width, device_mark)
                if dim:
                    line.stylize(dim)
                lines.append(line)
            if left_out:
                names_left = ", ".join(plain(name) for name, _figures, _flagged in left_out)
                lines.append(Text(f" {MARK}+{len(left_out)}: {names_left}", style=mark))
        else:
            whole = sum(1 for row in state.rows if not row.is_partition)
            lines.append(Text(f"idle ({whole} devices)", style="dim"))
        saturated = model.flagged()
        if saturated:
            first = saturated[0]
            more = f" (+{len(saturated) - 1})" if len(saturated) > 1 else ""
            text = f"! {plain(first.flag_text())}{more}"
            lines.append(Text(text[: 2 * width], style="bold red"))
        return lines

    def _calibration_style(self) -> Style:
        """The marked devices' style (the component class's), kept until the styles change."""
        if self._mark_style is None:
            self._mark_style = self.get_component_rich_style("node-card--calibration", partial=True)
        return self._mark_style


def _key_of(text: Text) -> tuple[str, tuple[object, ...]]:
    """What a line looks like: its characters and styled spans (Rich's Text has no equality)."""
    return text.plain, (text.style, *((span.start, span.end, span.style) for span in text.spans))
