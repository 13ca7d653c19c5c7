"""The modules the dashboard imports when they are first used, not at start: the one place
that imports by name (``importlib``), so the start to the first paint of the Disks table
loads only what that paint needs (README Performance, issue 8).

- ``cluster_view``: the Cluster tab and its monitor (asyncssh), made only when there is a
  cluster file.
- ``network_panel``: the Network tab, mounted when the tab is first opened (its list of pair
  tools imports every tool module; its port checks, psutil).
- ``plotext``: the charts' plotter; its import builds its documentation (0.28 s of a 0.39 s
  import at load ~1), so it waits for the first chart (a result view's, the load-latency
  screen's).
- ``report_export``: ``e``, a run's report (Jinja2 and pygal), written when first asked for.
- ``run_view``, ``result_view``, ``group_view``, ``sweep_view``, ``tool_picker``,
  ``compare_view``, ``replay_view``, ``group_replay_view``, ``pair_replay_view``: the screens
  the Runs tab opens (a run live, its result, a run group, a sweep, New run with every tool's
  form, the marked runs compared, a replay), imported when first opened.

A caller names the module here, ``deferred("NAME")``; tests/test_layering.py counts each call
as an import of the caller's (the ui import-cycle check sees it) and asserts in a fresh
interpreter that ``import racperf_tui.ui.app`` loads none of them.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

#: name -> the module it imports on first use
DEFERRED_MODULES: dict[str, str] = {
    "cluster_view": "racperf_tui.ui.tabs.cluster_panel",
    "compare_view": "racperf_tui.ui.screens.compare_view",
    "group_replay_view": "racperf_tui.ui.screens.group_replay_view",
    "group_view": "racperf_tui.ui.screens.group_view",
    "network_panel": "racperf_tui.ui.tabs.network_panel",
    "pair_replay_view": "racperf_tui.ui.screens.pair_replay_view",
    "plotext": "plotext",
    "replay_view": "racperf_tui.ui.screens.replay_view",
    "report_export": "racperf_tui.ui.report_export",
    "result_view": "racperf_tui.ui.screens.result_view",
    "run_view": "racperf_tui.ui.screens.run_view",
    "sweep_view": "racperf_tui.ui.screens.sweep_view",
    "tool_picker": "racperf_tui.ui.screens.tool_picker",
}


def deferred(name: str) -> ModuleType:
    """The module registered as ``name``, imported on the first call (then Python's cache)."""
    return importlib.import_module(DEFERRED_MODULES[name])


def deferred_if_loaded(name: str) -> ModuleType | None:
    """The module registered as ``name`` if something imported it already, else None (never
    imports: nothing of a module not loaded can be on screen)."""
    return sys.modules.get(DEFERRED_MODULES[name])
