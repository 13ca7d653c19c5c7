"""The timeline of a playback (a replayed run, an iostat archive): one line that says where
the playback clock (core/playback.py) is, whether it plays and how fast, and moves it.

The bar owns the clock and its tick: while playing, a timer advances the clock by the wall
time that passed; each time the shown frame changes the bar posts :class:`TimelineBar.Moved`
and the screen draws that frame. The keys are the screen's (:data:`TIMELINE_BINDINGS`), so
they reach the bar wherever the focus is on that screen, and never while a text field of a
dialog has it (the jump dialog is a modal screen of its own).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

from racperf_tui.core.playback import PlaybackClock, PositionError
from racperf_tui.core.units import format_duration

#: how often a playing clock is advanced (a frame is drawn only when it changed)
TICK_S = 0.1

#: the keys of every playback screen; each action is the screen's ``timeline_*``, which
#: hands it to its bar (:meth:`TimelineBar.act`)
TIMELINE_BINDINGS = [
    Binding("space", "timeline('toggle')", "Play/pause", tooltip="Play / pause the playback"),
    Binding("comma,left", "timeline('back')", "Step back", key_display=",", tooltip="One interval back (pauses)"),
    Binding("full_stop,right", "timeline('forth')", "Step", key_display=".", tooltip="One interval on (pauses)"),
    Binding("g", "timeline('jump')", "Jump", tooltip="Jump to a time (from the start, or a time of day)"),
    Binding("left_square_bracket", "timeline('slower')", "Slower", show=False, tooltip="Slower playback"),
    Binding("right_square_bracket", "timeline('faster')", "Faster", show=False, tooltip="Faster playback"),
    Binding("home", "timeline('start')", "Start", show=False, tooltip="The first interval"),
    Binding("end", "timeline('end')", "End", show=False, tooltip="The last interval"),
]


def clock_text(clock: PlaybackClock) -> str:
    """Where the clock is, as the bar and the tests read it: the frame's wall-clock time
    when the recording has one, else its time from the start."""
    when = clock.wall_time()
    if when is not None:
        return when.isoformat(sep=" ", timespec="seconds")
    return format_duration(clock.at_s)


class TimelineBar(Widget):
    """One line: state, speed, where, how far, a bar of the whole recording."""

    DEFAULT_CSS = """
    TimelineBar {
        height: 1;
        width: 1fr;
        background: $boost;
        padding: 0 1;
    }
    """

    @dataclass
    class Moved(Message):
        """The shown frame changed: draw the recording at ``at_s`` (seconds from its start)."""

        bar: TimelineBar
        index: int
        at_s: float

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock: PlaybackClock | None = None
        self._timer: Timer | None = None
        self._ticked_at = time.monotonic()

    def start(self, clock: PlaybackClock) -> None:
        """Play back by ``clock`` (its frame is drawn at once: a Moved is posted)."""
        self.clock = clock
        self._ticked_at = time.monotonic()
        if self._timer is None:
            self._timer = self.set_interval(TICK_S, self._tick)
        self._moved()

    def _tick(self) -> None:
        now = time.monotonic()
        wall_s, self._ticked_at = now - self._ticked_at, now
        if self.clock is not None and self.clock.playing:
            if self.clock.advance(wall_s):
                self._moved()
            else:
                self.refresh()

    def _moved(self) -> None:
        assert self.clock is not None
        self.refresh()
        self.post_message(self.Moved(self, self.clock.index, self.clock.at_s))

    def act(self, action: str) -> None:
        """A timeline key: toggle, back, forth, slower, faster, start, end (jump: the screen's)."""
        clock = self.clock
        if clock is None:
            self.notify("the recording is still being read")
            return
        self._ticked_at = time.monotonic()
        if action == "toggle":
            restarted = clock.at_end and not clock.playing
            clock.toggle()
            moved = restarted and len(clock.frames) > 1
        elif action in ("back", "forth", "start", "end"):
            frames = {"back": -1, "forth": 1, "start": -len(clock.frames), "end": len(clock.frames)}[action]
            moved = clock.step(frames)
        else:
            clock.faster(1 if action == "faster" else -1)
            moved = False
        if moved:
            self._moved()
        else:
            self.refresh()

    def jump(self, text: str) -> str:
        """Jump to a typed time; '' or why it cannot be read."""
        if self.clock is None:
            return "the recording is still being read"
        try:
            moved = self.clock.jump_to_text(text)
        except PositionError as error:
            return str(error)
        self.clock.pause()
        if moved:
            self._moved()
        else:
            self.refresh()
        return ""

    def render(self) -> Text:
        clock = self.clock
        if clock is None:
            return Text("reading the recording...")
        state = "▶" if clock.playing else "⏸"
        where = clock_text(clock)
        total = format_duration(clock.frames[-1]) if clock.origin is None else format_duration(clock.duration_s)
        head = f"{state} {clock.speed:g}x  {where}"
        tail = f"  {clock.index + 1}/{len(clock.frames)}  of {total}  "
        width = self.content_region.width or 80
        room = width - len(head) - len(tail)
        if room < 8:
            return Text((head + tail).rstrip()[:width])
        span = clock.duration_s or 1.0
        filled = round((clock.at_s - clock.frames[0]) / span * (room - 1))
        bar = "━" * filled + "●" + "─" * (room - 1 - filled)
        return Text(head + tail + bar)
