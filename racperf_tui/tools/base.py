"""What every tool module provides, so hosts, the supervisor and the UI can treat tools alike.

A tool module exposes a module-level ``TOOL`` object satisfying :class:`Tool`, and a
``parse_output(text: str) -> dict`` function used by ``racperf parse TOOL FILE``.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

from racperf_tui.core.events import Sample


class StreamParser(Protocol):
    """Turns a tool's output, line by line, into Samples (stateful: one per run)."""

    def feed(self, line: str) -> list[Sample]:
        """Consume one complete output line (no trailing newline); return new Samples."""
        ...

    def finish(self) -> list[Sample]:
        """End of output: return any Samples still buffered."""
        ...


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
