"""The benchmark tools: a package per tool with role modules inside (fio/, orion/, netperf/,
probe/, calibrate_io/), a module for a small one (iperf3, oratcptest). Each describes itself
(options, metrics: core.contract.tool), plans a run (config -> argv or an Invocation with its
targets; what depends on the node is asked of the host it is handed, never this machine), and
parses its output (a stream parser for live Samples, a result parser for the whole output).
Tools know nothing of SSH, orchestration or the UI, and no tool imports another's modules; what
they share is base.py and figures.py.

Tools are found by entry points in the ``racperf.tools`` group (``name = "package.module"``):
racperf's own tools register there like any other package's, so a tool can live in a package of
its own. The module must have ``TOOL`` (racperf_tui.core.contract.tool.Tool) and ``parse_output``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from types import ModuleType

from racperf_tui.core.contract.tool import ToolDescription

ENTRY_POINT_GROUP = "racperf.tools"

#: racperf's own tools, also registered as entry points; used when the package's metadata is
#: not installed (running from a source tree)
BUILTIN_TOOLS: dict[str, str] = {
    # in the order the New run picker lists them: storage first, fio at the top
    "fio": "racperf_tui.tools.fio",
    "fio_cs": "racperf_tui.tools.fio.client_server",
    "orion": "racperf_tui.tools.orion",
    "calibrate_io": "racperf_tui.tools.calibrate_io",
    "probe": "racperf_tui.tools.probe",
    "iperf3": "racperf_tui.tools.iperf3",
    "oratcptest": "racperf_tui.tools.oratcptest",
    "netperf": "racperf_tui.tools.netperf",
}


def tool_modules() -> dict[str, str]:
    """Every tool name -> its module, from the ``racperf.tools`` entry points (read each call:
    a package installed meanwhile is seen)."""
    found = dict(BUILTIN_TOOLS)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(entry.name, entry.value.split(":", 1)[0])
    return found


def load_tool(name: str) -> ModuleType:
    """Import the module of tool ``name``; KeyError names the known tools.

    A dotted name (``tests.fakes.faketool``) is imported as a module path as is (tests use it)."""
    modules = tool_modules()
    if "." in name and name not in modules:
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            raise KeyError(f"cannot import tool module {name!r}: {exc}") from None
    if name not in modules:
        raise KeyError(f"unknown tool {name!r}; known: {', '.join(sorted(modules))}")
    try:
        return importlib.import_module(modules[name])
    except ImportError as exc:
        raise KeyError(f"tool {name!r}: cannot import {modules[name]}: {exc}") from None


def tool_description(name: str) -> ToolDescription:
    """The tool's description (options, metrics); a bare one for a tool that declares none."""
    module = load_tool(name)
    tool = getattr(module, "TOOL", None)
    description = getattr(tool, "description", None)
    if isinstance(description, ToolDescription):
        return description
    # a tool that declares nothing: every key accepted, raw arguments passed as extra_args
    return ToolDescription(
        name=getattr(tool, "name", name),
        takes_raw_args=True,
        install_hint=getattr(tool, "install_hint", "") or getattr(module, "install_hint", ""),
    )
