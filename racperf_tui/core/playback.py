"""The playback clock of a recorded series: a replayed run (or two, in lock-step) and an
iostat archive (``racperf --from``) move through their frames by it.

A frame is one moment the recording has something new at (a run's sample, an archive's
report), in seconds from the recording's start; the clock says which frame is shown. It
plays (the wall clock times the speed moves it on), pauses, steps one frame back or forth,
jumps to a time. Pure: the view that owns it calls :meth:`PlaybackClock.advance` with the
wall time that passed and redraws when the frame changed.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

#: the speeds ``faster`` / ``slower`` step through
SPEEDS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)

_DURATION = re.compile(r"^\+?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s?)?$")
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}(?:\.\d+)?))?$")


class PositionError(ValueError):
    """A time to jump to that cannot be read; its text says what is accepted."""


def frames_of(times: Iterable[float]) -> tuple[float, ...]:
    """The frames of several series played together (lock-step): every moment any of them
    has something new at, once each, in order."""
    return tuple(sorted(set(times)))


@dataclass
class PlaybackClock:
    """Which frame of a recording is shown (see the module doc).

    ``frames`` are seconds from the start of the recording (a run's start: its samples' own
    times; an archive's first report), ascending; ``origin`` the wall-clock time of that
    start when the recording has one (an archive's), so a time of day can be jumped to.
    """

    frames: tuple[float, ...]
    speed: float = 1.0
    playing: bool = False
    origin: dt.datetime | None = None
    index: int = 0
    #: where the playing clock is between two frames (seconds from the start)
    _position_s: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        if not self.frames:
            raise ValueError("a recording with no frames cannot be played")
        if self.speed <= 0:
            raise ValueError(f"playback speed must be > 0, got {self.speed:g}")
        if any(b < a for a, b in zip(self.frames, self.frames[1:])):
            raise ValueError("a recording's frames must be in time order")
        self.index = min(max(self.index, 0), len(self.frames) - 1)
        self._position_s = self.frames[self.index]

    # ---- where it is -----------------------------------------------------------------------
    @property
    def at_s(self) -> float:
        """The shown frame's time, seconds from the start."""
        return self.frames[self.index]

    @property
    def duration_s(self) -> float:
        return self.frames[-1] - self.frames[0]

    @property
    def at_end(self) -> bool:
        return self.index == len(self.frames) - 1

    @property
    def at_start(self) -> bool:
        return self.index == 0

    def wall_time(self) -> dt.datetime | None:
        """The shown frame's wall-clock time, when the recording has an origin."""
        return None if self.origin is None else self.origin + dt.timedelta(seconds=self.at_s)

    # ---- moving ----------------------------------------------------------------------------
    def _go(self, index: int) -> bool:
        index = min(max(index, 0), len(self.frames) - 1)
        changed = index != self.index
        self.index = index
        self._position_s = self.frames[index]
        return changed

    def step(self, frames: int) -> bool:
        """One (or more) frames back (negative) or forth; stepping pauses. True: it moved."""
        self.playing = False
        return self._go(self.index + frames)

    def jump_to(self, at_s: float) -> bool:
        """The last frame at or before ``at_s`` (the first frame before it). True: it moved."""
        return self._go(bisect.bisect_right(self.frames, at_s) - 1)

    def jump_to_text(self, text: str) -> bool:
        """Jump to a time as typed (:func:`parse_position`)."""
        return self.jump_to(parse_position(text, self.origin))

    def play(self) -> None:
        """Play on; at the end, from the start again."""
        if self.at_end:
            self._go(0)
        self.playing = True

    def pause(self) -> None:
        self.playing = False

    def toggle(self) -> None:
        if self.playing:
            self.pause()
        else:
            self.play()

    def faster(self, steps: int = 1) -> float:
        """The next speed of :data:`SPEEDS` up (``steps`` < 0: down); the new speed."""
        nearest = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i] - self.speed))
        self.speed = SPEEDS[min(max(nearest + steps, 0), len(SPEEDS) - 1)]
        return self.speed

    def advance(self, wall_s: float) -> bool:
        """``wall_s`` seconds of wall time passed: while playing, the position moves on by
        that times the speed, to the last frame it reached; at the end it stops. True: the
        frame changed."""
        if not self.playing or wall_s <= 0:
            return False
        self._position_s += wall_s * self.speed
        index = bisect.bisect_right(self.frames, self._position_s) - 1
        changed = index != self.index
        self.index = min(max(index, 0), len(self.frames) - 1)
        if self.at_end:
            self.playing = False
        return changed


def parse_position(text: str, origin: dt.datetime | None = None) -> float:
    """A time typed to jump to, as seconds from the start of the recording:

    - a time from the start: ``90``, ``90s``, ``1m30s``, ``1h2m``, ``+45``;
    - with an ``origin`` (an archive), a time of day ``HH:MM[:SS]`` (its first occurrence at
      or after the start: a night's archive passes midnight) or a date and time
      ``YYYY-MM-DD HH:MM[:SS]`` (ISO 8601).
    """
    typed = text.strip().lower().replace(" ", "") if not re.search(r"\d-\d", text) else text.strip()
    clock = _CLOCK.match(typed)
    if clock and origin is not None:
        hour, minute, second = int(clock[1]), int(clock[2]), float(clock[3] or 0)
        if hour > 23 or minute > 59 or second >= 60:
            raise PositionError(f"{text!r}: no such time of day")
        day_s = hour * 3600 + minute * 60 + second
        origin_day_s = origin.hour * 3600 + origin.minute * 60 + origin.second + origin.microsecond / 1e6
        return (day_s - origin_day_s) % 86400
    if clock:
        # without an origin a clock reading is a time from the start (1:30 = 90 s)
        parts = [float(part) for part in clock.groups() if part is not None]
        return sum(part * 60**power for power, part in enumerate(reversed(parts)))
    if origin is not None and re.match(r"^\d{4}-\d{2}-\d{2}", typed):
        try:
            when = dt.datetime.fromisoformat(typed)
        except ValueError as error:
            raise PositionError(f"{text!r}: {error}") from None
        if (when.tzinfo is None) != (origin.tzinfo is None):
            when = when.replace(tzinfo=origin.tzinfo)
        return (when - origin).total_seconds()
    duration = _DURATION.match(typed)
    if typed and duration and any(duration.groups()):
        hours_text, minutes_text, seconds_text = duration.groups()
        return int(hours_text or 0) * 3600 + int(minutes_text or 0) * 60 + float(seconds_text or 0)
    accepted = "a time from the start (90, 90s, 1m30s, 1:30)"
    if origin is not None:
        accepted += ", a time of day (02:00, 02:00:30) or a date and time (2026-12-01 02:00)"
    raise PositionError(f"{text!r}: not a time; give {accepted}")
