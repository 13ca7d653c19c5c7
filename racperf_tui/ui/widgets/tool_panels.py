"""The panels a tool's description names (``ToolDescription.live_panels`` / ``result_panels``):
the UI's widgets a view adds for that tool's runs, by name, so no view names a tool and no
tool imports the UI. A name not here is left out (a newer tool on an older racperf)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from textual.widget import Widget

from racperf_tui.core.tool import ToolDescription
from racperf_tui.ui.widgets.orion_charts import result_widgets
from racperf_tui.ui.widgets.orion_live_panel import OrionLivePanel

#: name -> (data dir, run id) -> the widgets the live view mounts below the tool's sparklines
LIVE_PANELS: dict[str, Callable[[Any, Any], list[Widget]]] = {
    "orion_points": lambda data_dir, run_id: [OrionLivePanel(data_dir, run_id)],
}
#: name -> the run's result -> the widgets the result view puts first in its Charts tab
RESULT_PANELS: dict[str, Callable[[Mapping[str, Any] | None], list[Widget]]] = {
    "orion_matrix": result_widgets,
}


def live_panels(description: ToolDescription, data_dir: Any, run_id: Any) -> list[Widget]:
    """The live view's extra widgets for a run of this tool."""
    return [w for name in description.live_panels if name in LIVE_PANELS for w in LIVE_PANELS[name](data_dir, run_id)]


def result_panels(description: ToolDescription, result: Mapping[str, Any] | None) -> list[Widget]:
    """The result view's extra widgets for a run of this tool with this result."""
    return [w for name in description.result_panels if name in RESULT_PANELS for w in RESULT_PANELS[name](result)]
