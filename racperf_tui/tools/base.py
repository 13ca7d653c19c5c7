"""The helpers tool modules share; the contract itself is :mod:`racperf_tui.core.contract.tool`.

A tool module exposes a module-level ``TOOL`` object satisfying
:class:`racperf_tui.core.contract.tool.Tool`, and a ``parse_output(text: str) -> dict`` function used by
``racperf parse TOOL FILE``. A tool with two ends (a server and a client: iperf3, probe,
oratcptest, netperf) also exposes ``PAIR``, a :class:`racperf_tui.core.contract.tool.PairSpec` that
:mod:`racperf_tui.orchestration.pair_runs` reads to run both ends.

Here: :class:`ModuleTool` (a ``TOOL`` made of a module's own functions), :class:`OptionsConfig`
(validated dataclass configs), the option checks every tool validates with
(:func:`option_whole_number`, :func:`option_number`, :func:`check_range`, :func:`check_choice`)
and :func:`program_output` (what a program says about its version, asked on the run's host).

Side effects happen where the run runs: a tool's ``prepare(config, planned, host)`` and its
``tool_version(argv, host)`` get the run's host (:class:`racperf_tui.core.contract.hosts.Host`) and ask
it (``host.run_briefly``, ``host.which``, ``host.put_files``), never this machine, what is
installed there.

One validation style for every tool: a bad option raises ValueError
``"TOOL: OPTION must be ..., got VALUE"`` at the first problem, naming the option (the form
shows the message under that option's field). fio alone collects every problem of its form
(``FioConfig.validate() -> ["OPTION: ...", ...]``): its preset form marks all of them at once.
"""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeGuard

from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.contract.tool import StreamParser, ToolDescription
from racperf_tui.core.guard.program_vetting import vet_program

if TYPE_CHECKING:  # the Host protocol is a type here: its module (process, guard) is not needed
    from racperf_tui.core.contract.hosts import Host

__all__ = [
    "ModuleTool",
    "OptionsConfig",
    "RUN_LEVEL_KEYS",
    "check_range",
    "option_number",
    "check_choice",
    "on_another_node",
    "program_output",
    "run_briefly",
    "option_whole_number",
]

#: Keys the run machinery adds to a config (not options of any tool): tools accept and ignore them.
#: keys of a run's config that are the run machinery's, not the tool's (``host_spec``: the
#: node it runs on, core/remote/cluster.py)
RUN_LEVEL_KEYS = frozenset({"peer_run_id", "target", "label", "host_spec"})


# --------------------------------------------------------------------------- shared helpers


@dataclass(frozen=True)
class ModuleTool:
    """A :class:`racperf_tui.core.contract.tool.Tool` whose methods are the tool module's own functions.

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
    #: ``tool_version(argv, host)``: the version of what runs, asked on the run's host
    tool_version: Callable[[list[str], Host], str | None]
    install_hint: str
    #: whether stderr is read as part of the output the parsers see
    merge_stderr: bool = False
    #: seconds between SIGTERM and SIGKILL when a run is stopped
    stop_grace_s: float = 3.0
    #: the tool's options and metrics (racperf_tui.core.contract.tool)
    description: ToolDescription | None = None
    #: ``invocation(config, run_dir, host)``: a plan that asks the run's host what its build
    #: can do (None: an Invocation of ``build_argv``)
    invocation: Callable[[Mapping[str, Any], str | None, Host | None], Invocation] | None = None


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


def _unset(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def option_number(tool: str, key: str, value: Any) -> float | None:
    """An option's number (``5``, ``"0.5"``); None when unset (None or blank). ValueError
    ``"TOOL: KEY must be a number, got VALUE"`` for anything else (a bool, ``"ten"``, inf)."""
    if _unset(value):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{tool}: {key} must be a number, got {value!r}")
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{tool}: {key} must be a number, got {value!r}") from None
    if not math.isfinite(result):
        raise ValueError(f"{tool}: {key} must be a number, got {value!r}")
    return result


def option_whole_number(tool: str, key: str, value: Any) -> int | None:
    """An option's whole number (``5``, ``"5"``, ``5.0``); None when unset. ValueError
    ``"TOOL: KEY must be a whole number, got VALUE"`` for anything else (``2.5`` too)."""
    try:
        result = option_number(tool, key, value)
    except ValueError:
        raise ValueError(f"{tool}: {key} must be a whole number, got {value!r}") from None
    if result is None:
        return None
    if result != int(result):
        raise ValueError(f"{tool}: {key} must be a whole number, got {value!r}")
    return int(result)


def check_range(tool: str, key: str, value: float, low: float, high: float, unit: str = "") -> None:
    """ValueError ``"TOOL: KEY must be LOW to HIGH UNIT, got VALUE"`` unless low <= value <= high."""
    if not low <= value <= high:
        unit_text = f" {unit}" if unit else ""
        raise ValueError(f"{tool}: {key} must be {low:g} to {high:g}{unit_text}, got {value:g}")


def check_choice(tool: str, key: str, value: Any, choices: tuple[str, ...]) -> None:
    """ValueError ``"TOOL: KEY must be one of A, B, got VALUE"`` unless value is a choice."""
    if value not in choices:
        raise ValueError(f"{tool}: {key} must be one of {', '.join(choices)}, got {value!r}")


def run_briefly(
    argv: list[str], timeout_s: float, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> subprocess.CompletedProcess[str]:
    """A short command a tool asks something of (a version, fio's option table or its reading
    of a job): no stdin, output captured as text (undecodable bytes replaced). OSError and
    subprocess.TimeoutExpired as subprocess.run raises them: each caller says what failed.
    The program is vetted first (UntrustedPath, a ValueError, names it, its owner and mode)."""
    vet_program(argv[0], "a program racperf asks while planning")
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout_s,
        stdin=subprocess.DEVNULL,
        env=None if env is None else dict(env),
        cwd=cwd,
    )


def on_another_node(host: Host | None) -> TypeGuard[Host]:
    """Whether ``host`` is another node (None, and LocalHost, are this machine)."""
    return host is not None and bool(getattr(host, "remote", False))


def program_output(
    argv: list[str], timeout_s: float = 5.0, host: Host | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """stdout + stderr of a short informational command (``netperf -V``, ``java -version``)
    on ``host`` (this machine when None), ``env`` added; None when it cannot run or hangs."""
    try:
        if host is not None:
            return host.run_briefly(argv, timeout_s, env=env).text
        proc = run_briefly(argv, timeout_s, None if env is None else {**os.environ, **env})
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    return proc.stdout + proc.stderr
