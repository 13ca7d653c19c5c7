"""The result view's extension point: extra panels a tool asks for by name
(``ToolDescription.result_panels``), put first in its Charts tab, so no view names a tool and
no tool imports the UI. A name not here is left out (a newer tool on an older racperf).
The live view's counterpart is ui/tool_panels/live_panels.py."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from textual.widget import Widget

from racperf_tui.core.contract.tool import ToolDescription
from racperf_tui.ui.tool_panels.orion_charts import result_widgets

#: name -> the run's result -> the widgets the result view puts first in its Charts tab
RESULT_PANELS: dict[str, Callable[[Mapping[str, Any] | None], list[Widget]]] = {
    "orion_matrix": result_widgets,
}


def result_panels(description: ToolDescription, result: Mapping[str, Any] | None) -> list[Widget]:
    """The result view's extra widgets for a run of this tool with this result."""
    return [w for name in description.result_panels if name in RESULT_PANELS for w in RESULT_PANELS[name](result)]
