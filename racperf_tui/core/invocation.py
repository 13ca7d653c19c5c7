"""What a tool asks a host to run: the contract between tools and the run machinery.

A tool turns a config into an :class:`Invocation`; the orchestration (orchestration.runs, the
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
    """A planned command.

    ``argv``; ``env``: variables added to the host's environment (ORACLE_HOME, LD_LIBRARY_PATH);
    ``cwd``: where it runs, relative to the run's directory ("." is the run's directory itself;
    None: where racperf was started, so relative paths the user typed mean what they meant);
    ``stdin``: text fed to its standard input (a SQL script), else /dev/null; ``files``: files to
    write into the run's directory before it starts (name -> text: a job file, a .lun file);
    ``result_files``: glob patterns, relative to where it runs, of files it writes that the run
    keeps (ORION's summary and matrices); ``targets``: every path it will read or write (what
    the write guard judges); ``hard_limit_s``: its wall-clock limit; ``notes`` for the user.
    """

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    stdin: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    result_files: tuple[str, ...] = ()
    targets: tuple[Target, ...] = ()
    hard_limit_s: float | None = None
    notes: tuple[str, ...] = ()
    #: the tool's own plan, handed back to its ``prepare`` (opaque to the machinery)
    detail: Any = None


class ToolNotFound(FileNotFoundError):
    """The tool's executable is not installed; the message carries the install hint."""
