"""What every tool module provides, so hosts, the supervisor and the UI can treat tools alike.

A tool module exposes a module-level ``TOOL`` object satisfying :class:`Tool`, and a
``parse_output(text: str) -> dict`` function used by ``racperf parse TOOL FILE``. A tool with
two ends (a server and a client: iperf3, probe, oratcptest, netperf) also exposes ``PAIR``, a
:class:`PairSpec` that :mod:`racperf_tui.core.pair_runs` reads to run both ends.

Helpers shared by the tool modules live here too: :class:`ModuleTool` (a ``TOOL`` made of a
module's own functions), :class:`OptionsConfig` (validated dataclass configs) and
:func:`program_output` (what a program says about its version).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Protocol

from racperf_tui.core.events import Sample
from racperf_tui.core.tool import ToolDescription

#: Keys the run machinery adds to a config (not options of any tool): tools accept and ignore them.
RUN_LEVEL_KEYS = frozenset({"peer_run_id", "target", "label"})


class StreamParser(Protocol):
    """Turns a tool's output, line by line, into Samples (stateful: one per run)."""

    def feed(self, line: str) -> list[Sample]:
        """Consume one complete output line (no trailing newline); return new Samples."""
        ...

    def finish(self) -> list[Sample]:
        """End of output: return any Samples still buffered."""
        ...

    # optional: ``tick() -> list[Sample]``, called by the supervisor every loop (at most every
    # 0.1 s) while the benchmark runs, for a tool that is silent meanwhile (ORION's progress)


class Tool(Protocol):
    """A benchmark tool: Config -> argv, a stream parser, a result parser."""

    name: str

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        """The exact command line for `config` (validated; ValueError says what is wrong)."""
        ...

    def stream_parser(self, config: Mapping[str, Any]) -> StreamParser:
        """A fresh parser for one run's output."""
        ...

    def parse_result(self, output: str) -> dict[str, Any]:
        """The whole output of a finished run -> result dict (see each tool's docs)."""
        ...

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        """Did the run succeed? (ok, reason). Judged by the result, not only the exit status."""
        ...

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        """Wall-clock limit after which the supervisor stops the run."""
        ...


# --------------------------------------------------------------------------- two-ended tools

#: (adapted client config, notes for the user) from a client config
ClientAdapter = Callable[[Mapping[str, Any]], tuple[dict[str, Any], list[str]]]


@dataclass(frozen=True)
class PairSpec:
    """What running a tool's two ends needs to know of the tool (its module's ``PAIR``).

    The server run starts first; the client run starts once a line of the server's output
    matches ``ready_pattern`` (a named group ``port`` there gives the client the port the
    server picked). A line matching ``failure_pattern`` means the server could not listen.
    """

    #: a server output line meaning "listening: the client may start"
    ready_pattern: re.Pattern[str]
    #: a server output line meaning "could not listen" (port taken, bad address)
    failure_pattern: re.Pattern[str] | None
    #: the server's port when its config names none (checked before the start)
    default_port: int
    #: how the user fixes a server that could not listen (ends the failure message)
    failure_hint: str = "use another port"
    #: how long the server may take to say it is listening (a JVM takes longer than iperf3)
    ready_timeout_s: float = 15.0
    #: what the server is called in messages ("netserver"); "" means "the TOOL server"
    server_name: str = ""
    #: adapts the client config to what is installed (drops what the build cannot do), saying so
    adapt_client: ClientAdapter | None = None

    def adapted_client(self, config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """(the client config to run, notes on what was changed and why)."""
        if self.adapt_client is None:
            return dict(config), []
        return self.adapt_client(config)


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
            raise ValueError(f"{cls.tool_name}: unknown option(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(known))}")
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
        proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout + proc.stderr
