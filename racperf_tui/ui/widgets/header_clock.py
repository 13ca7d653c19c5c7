"""Textual's Header with a clock that ticks on the wall-clock second.

Textual's HeaderClock repaints every second counted from its mount: its display lags the
real second by up to a second, and its repaint falls at another moment than the Disks
panel's samples, two screen updates a second where one would do. This clock repaints just
after each second turns, on a :class:`~racperf_tui.ui.phase_timer.PhaseTimer` as the panel
samples, so both land in one screen update.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.events import Mount
from textual.widgets import Header
from textual.widgets._header import HeaderClock, HeaderClockSpace, HeaderIcon, HeaderTitle

from racperf_tui.ui.phase_timer import PhaseTimer


class SecondClock(HeaderClock):
    """HeaderClock, refreshed just after each wall-clock second turns."""

    _ticks: PhaseTimer | None = None

    def _on_mount(self, event: Mount) -> None:
        event.prevent_default()  # not HeaderClock's own timer, counted from the mount
        self._ticks = PhaseTimer(1.0, self.refresh, on_error=self.app._handle_exception)

    def _on_unmount(self) -> None:
        if self._ticks is not None:
            self._ticks.stop()


class SecondClockHeader(Header):
    """Header whose clock is a :class:`SecondClock`."""

    def compose(self) -> ComposeResult:
        yield HeaderIcon().data_bind(Header.icon)
        yield HeaderTitle()
        yield (SecondClock().data_bind(Header.time_format) if self._show_clock else HeaderClockSpace())
