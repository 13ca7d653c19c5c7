"""One module per benchmark tool. Each knows its Config -> argv, a stream parser
(output line -> Samples) and a result parser (whole output -> result dict). Tools know
nothing of hosts or the UI."""

from __future__ import annotations

import importlib
from types import ModuleType

#: tool name -> module under racperf_tui.tools
TOOL_MODULES: dict[str, str] = {
    "fio": "racperf_tui.tools.fio",
    "oratcptest": "racperf_tui.tools.oratcptest",
    "netperf": "racperf_tui.tools.netperf",
    "iperf3": "racperf_tui.tools.iperf3",
    "probe": "racperf_tui.tools.probe",
}


def load_tool(name: str) -> ModuleType:
    """Import the module of tool `name`; KeyError names the known tools.

    A dotted name (``tests.fakes.faketool``) is imported as a module path as is: the way
    tests and third parties plug in a tool without registering it here."""
    if "." in name and name not in TOOL_MODULES:
        try:
            return importlib.import_module(name)
        except ImportError as exc:
            raise KeyError(f"cannot import tool module {name!r}: {exc}") from None
    try:
        return importlib.import_module(TOOL_MODULES[name])
    except KeyError:
        raise KeyError(f"unknown tool {name!r}; known: {', '.join(sorted(TOOL_MODULES))}") from None
