"""The live view's extension point: extra widgets a tool asks for by name.

A tool's description lists names (``ToolDescription.live_panels``: tools know nothing of the
UI); this table maps each name to a widget class. The run view mounts one of each, under the
sparklines, in the order the tool lists them, and hands every live update to
``show_live(live)``: the whole latest state of the run (its RunRecord, its recent Samples,
the newest sample's extra, progress and ETA), read by the store watcher off the event loop.
A name missing here is left out (a tool of a newer racperf, or a panel not installed).

Adding a panel: a Widget class that is a :class:`LivePanel` (has ``show_live``) in
ui/tool_panels/, one import and one line in LIVE_PANELS below (tests/ui/test_live_panels.py
checks each is one). A tool from a package of its own registers its panels as
``[project.entry-points."racperf.live_panels"] NAME = "package.module:WidgetClass"``.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Protocol, TypeGuard, runtime_checkable

from textual.widget import Widget

from racperf_tui.ui.messages import LiveRunState
from racperf_tui.ui.tool_panels.calibration_devices_panel import CalibrationDevicesPanel
from racperf_tui.ui.tool_panels.orion_live_panel import OrionLivePanel


@runtime_checkable
class LivePanel(Protocol):
    """What the run view asks of a live panel (a Textual widget): the run view narrows each
    panel it mounted to this (``isinstance``), and a class that is not one is not mounted."""

    def show_live(self, live: LiveRunState) -> None:
        """Show the run's latest state (called on the event loop; keep it cheap)."""
        ...


#: panel name (as tools list it) -> its widget class (constructed without arguments), a LivePanel
LIVE_PANELS: dict[str, type[Widget]] = {
    "orion_points": OrionLivePanel,
    "calibration_devices": CalibrationDevicesPanel,
}


#: the entry point group of other packages' panels
ENTRY_POINT_GROUP = "racperf.live_panels"


def panel_class(name: str) -> type[Widget] | None:
    """The widget class of a panel name: racperf's own, else another package's entry point
    (None when there is none, or it does not load: the live view goes on without it)."""
    found: object = LIVE_PANELS.get(name)
    if found is None:
        for point in entry_points(group=ENTRY_POINT_GROUP, name=name):
            try:
                found = point.load()
            except Exception:
                return None
            break
    return found if _is_live_panel_class(found) else None


def _is_live_panel_class(found: object) -> TypeGuard[type[Widget]]:
    """A Widget class whose instances are LivePanels (another package's entry point may name
    anything; a class without ``show_live`` is left out, not called)."""
    return isinstance(found, type) and issubclass(found, Widget) and issubclass(found, LivePanel)


def live_panels_for(names: tuple[str, ...] | list[str]) -> list[Widget]:
    """A new widget for each name there is a panel for, in the tool's order."""
    classes = [panel_class(name) for name in names]
    return [cls() for cls in classes if cls is not None]
