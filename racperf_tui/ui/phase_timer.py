"""A timer that fires at whole multiples of its interval on the wall clock.

Why not Textual's ``set_interval``: a Textual timer counts its ticks from the moment its task
first runs, so one started at a busy instant (the mount, a sample taken at the same moment)
is late by those milliseconds for good, and two timers of the same interval started apart
stay apart. Each stays cheap on its own, but every separate tick is a screen update of its
own (the compositor's fixed cost, a write to the terminal). The header clock and the Disks
panel both tick on a :class:`PhaseTimer`, on the second, so they share one screen update.

Each tick is re-aimed at the next multiple (``loop.call_later``), so it never drifts and a
late tick does not make the next one late. ``pause``/``resume``/``stop`` behave as a Textual
timer's: a tick missed while paused fires on resume, then the beat goes on in phase.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

#: After the second turns: a clock woken a hair early must not show the old second.
PHASE_OFFSET_S = 0.002


def delay_to_phase(interval_s: float, minimum_s: float = 0.0, now: float | None = None) -> float:
    """Seconds until the wall clock is next a whole multiple of ``interval_s`` (plus
    PHASE_OFFSET_S), at least ``minimum_s`` from now."""
    now = time.time() if now is None else now
    delay = interval_s - (now - PHASE_OFFSET_S) % interval_s
    while delay < minimum_s:
        delay += interval_s
    return delay


class PhaseTimer:
    """Calls ``callback`` at each whole multiple of ``interval_s`` on the wall clock, the first
    at least ``first_after_s`` from now. Created inside the running event loop (a widget's
    handler): the callback runs in that context. Errors go to ``on_error`` (the app's
    exception handler, as a Textual timer's would)."""

    def __init__(
        self,
        interval_s: float,
        callback: Callable[[], object],
        *,
        pause: bool = False,
        first_after_s: float = 0.0,
        on_error: Callable[[Exception], object] | None = None,
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"PhaseTimer: interval must be > 0 s, got {interval_s}")
        self._interval = interval_s
        self._callback = callback
        self._on_error = on_error
        self._paused = pause
        self._missed = False
        self._loop = asyncio.get_running_loop()
        self._handle: asyncio.TimerHandle | None = None
        self._schedule(first_after_s)

    @property
    def interval_s(self) -> float:
        return self._interval

    @property
    def running(self) -> bool:
        """Not stopped (paused or not)."""
        return self._handle is not None

    def _schedule(self, minimum_s: float) -> None:
        self._handle = self._loop.call_later(delay_to_phase(self._interval, minimum_s), self._fire)

    def _fire(self) -> None:
        # The next tick first: a slow callback does not delay it, one that raises does not end it.
        self._schedule(self._interval / 2)
        if self._paused:
            self._missed = True
        else:
            self._call()

    def _call(self) -> None:
        try:
            self._callback()
        except Exception as error:  # noqa: BLE001 - handed on, as Textual's timers do
            if self._on_error is None:
                raise
            self._on_error(error)

    def _call_if_running(self) -> None:
        if self._handle is not None and not self._paused:
            self._call()

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        """Go on; a tick missed while paused fires now (soon), the next ones in phase."""
        if self._paused:
            self._paused = False
            if self._missed and self._handle is not None:
                self._missed = False
                self._loop.call_soon(self._call_if_running)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
