"""What a tool asks a host to run: the contract between tools and the run machinery.

A tool turns a config into an :class:`Invocation`; the orchestration (core.runs, the
supervisor) judges its :attr:`Invocation.targets` with the write guard
(:mod:`racperf_tui.core.target_guard`), writes its files, and runs its argv. Tools never call
the guard themselves, so every tool that names its targets is guarded the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

READ = "read"
WRITE = "write"


@dataclass(frozen=True)
class Target:
    """A path the benchmark will open: ``access`` is "read" or "write" (trim and delete count
    as write); ``origin`` says which part of the config makes it a target, for messages."""

    path: str
    access: str
    origin: str = ""


@dataclass(frozen=True)
class Invocation:
    """A planned command: argv, the files to write into the run's directory before it starts
    (name -> text), every target it will touch, the wall-clock limit, and notes for the user."""

    argv: list[str]
    files: dict[str, str] = field(default_factory=dict)
    targets: tuple[Target, ...] = ()
    hard_limit_s: float | None = None
    notes: tuple[str, ...] = ()
    #: the tool's own plan, handed back to its ``prepare`` (opaque to the machinery)
    detail: Any = None


class ToolNotFound(FileNotFoundError):
    """The tool's executable is not installed; the message carries the install hint."""
