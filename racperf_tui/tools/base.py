"""What every tool module provides, so hosts, the supervisor and the UI can treat tools alike.

A tool module exposes a module-level ``TOOL`` object satisfying :class:`Tool`, and a
``parse_output(text: str) -> dict`` function used by ``racperf parse TOOL FILE``. A tool with
two ends (a server and a client: iperf3, probe, oratcptest, netperf) also exposes ``PAIR``, a
:class:`PairSpec` that :mod:`racperf_tui.orchestration.pair_runs` reads to run both ends.

Helpers shared by the tool modules live here too: :class:`ModuleTool` (a ``TOOL`` made of a
module's own functions), :class:`OptionsConfig` (validated dataclass configs) and
:func:`program_output` (what a program says about its version).
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from racperf_tui.core.tool import ClientAdapter, PairMode, PairSpec, ProgramField, StreamParser, Tool, ToolDescription

__all__ = [
    "ClientAdapter",
    "ModuleTool",
    "OptionsConfig",
    "PairMode",
    "PairSpec",
    "ProgramField",
    "RUN_LEVEL_KEYS",
    "StreamParser",
    "Tool",
    "program_output",
]

#: Keys the run machinery adds to a config (not options of any tool): tools accept and ignore them.
RUN_LEVEL_KEYS = frozenset({"peer_run_id", "target", "label"})


# --------------------------------------------------------------------------- shared helpers


@dataclass(frozen=True)
class ModuleTool:
    """A :class:`Tool` whose methods are the tool module's own functions.

    For modules written as functions (``build_argv(config)``, ``parse_result(output)`` ...),
    so the module is usable as is and ``TOOL`` adds nothing but the attributes the supervisor
    reads (``install_hint``, ``merge_stderr``, ``stop_grace_s``).
    """

    name: str
    build_argv: Callable[[Mapping[str, Any]], list[str]]
    stream_parser: Callable[[Mapping[str, Any]], StreamParser]
    parse_result: Callable[[str], dict[str, Any]]
    succeeded: Callable[[Mapping[str, Any] | None, int], tuple[bool, str]]
    hard_limit_s: Callable[[Mapping[str, Any]], float]
    tool_version: Callable[[list[str]], str | None]
    install_hint: str
    #: whether stderr is read as part of the output the parsers see
    merge_stderr: bool = False
    #: seconds between SIGTERM and SIGKILL when a run is stopped
    stop_grace_s: float = 3.0
    #: the tool's options and metrics (racperf_tui.core.tool)
    description: ToolDescription | None = None


class OptionsConfig:
    """Base of a tool's config dataclass: built from a mapping, normalised, validated.

    Subclasses are dataclasses naming their tool in ``tool_name`` and providing
    ``_normalise()`` (friendly spellings -> canonical values) and ``validate()``.
    """

    tool_name: ClassVar[str] = "tool"

    @classmethod
    def from_mapping(cls, config: Mapping[str, Any]) -> Any:
        """Build and validate; ValueError names the option and what is wrong."""
        known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(config) - known - RUN_LEVEL_KEYS)
        if unknown:
            raise ValueError(
                f"{cls.tool_name}: unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        self = cls(**{k: v for k, v in config.items() if k in known})
        self._normalise()
        self.validate()
        return self

    def to_mapping(self) -> dict[str, Any]:
        """The config as a plain dict (what the store records)."""
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    def _normalise(self) -> None:
        """Accept friendly spellings (overridden by each tool)."""

    def validate(self) -> None:
        """Check every option; ValueError says which and why (overridden by each tool)."""


def program_output(argv: list[str], timeout_s: float = 5.0) -> str | None:
    """stdout + stderr of a short informational command (``netperf -V``, ``java -version``);
    None when it cannot run or hangs."""
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, errors="replace", timeout=timeout_s, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout + proc.stderr
