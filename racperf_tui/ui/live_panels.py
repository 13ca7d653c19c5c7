"""The live view's extension point: extra widgets a tool asks for by name.

A tool's description lists names (``ToolDescription.live_panels``: tools know nothing of the
UI); this table maps each name to a widget class. The run view mounts one of each, under the
sparklines, in the order the tool lists them, and hands every live update to
``show_live(live)``: the whole latest state of the run (its RunRecord, its recent Samples,
the newest sample's extra, progress and ETA), read by the store watcher off the event loop.
A name missing here is left out (a tool of a newer racperf, or a panel not installed).

Adding a panel: a widget module under ui/widgets/ whose class has ``show_live``, one import
and one line in LIVE_PANELS below.
"""

from __future__ import annotations

from typing import Protocol

from textual.widget import Widget

from racperf_tui.ui.messages import LiveRunState


class LivePanel(Protocol):
    """What the run view asks of a live panel (a Textual widget)."""

    def show_live(self, live: LiveRunState) -> None:
        """Show the run's latest state (called on the event loop; keep it cheap)."""
        ...


#: panel name (as tools list it) -> its widget class (constructed without arguments)
LIVE_PANELS: dict[str, type[Widget]] = {}


def live_panels_for(names: tuple[str, ...] | list[str]) -> list[Widget]:
    """A new widget for each name there is a panel for, in the tool's order."""
    return [LIVE_PANELS[name]() for name in names if name in LIVE_PANELS]
