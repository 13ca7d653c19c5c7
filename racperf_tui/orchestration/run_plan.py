"""From a tool and a config to a judged Invocation: the one path every run takes, in the
launcher (to refuse before anything is recorded) and again in the supervisor (right before the
start, so what runs is judged against the system as it is then).

A tool with ``invocation(config, run_dir)`` plans itself (fio); one with only
``build_argv(config)`` gets an Invocation without targets. Every target goes through the write
guard (:func:`racperf_tui.core.target_guard.judge`); a refusal is a :class:`PlanRefused`
(a ValueError) whose message names every target and reason.
"""

from __future__ import annotations

import inspect
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from racperf_tui.core.hosts import Host
from racperf_tui.core.invocation import Invocation, ToolNotFound
from racperf_tui.core.target_guard import GuardVerdict, judge, overrides_from_config


class PlanRefused(ValueError):
    """The config's plan is refused: bad options, or targets the write guard refuses."""

    def __init__(self, message: str, guard: GuardVerdict | None = None) -> None:
        super().__init__(message)
        self.guard = guard


@dataclass(frozen=True)
class JudgedRun:
    """An Invocation the guard cleared, and the guard's verdict (devices cleared, overrides)."""

    invocation: Invocation
    guard: GuardVerdict


def takes_host(method: Any, positional: int) -> bool:
    """Whether ``method`` takes the run's host as its ``positional``-th argument (a tool written
    before hosts were passed, e.g. ``prepare(config, planned)``, does not)."""
    try:
        parameters = list(inspect.signature(method).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return True
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return len([p for p in parameters if p.kind in kinds]) >= positional


def install_hint(module: ModuleType) -> str | None:
    """The tool's install hint (module ``install_hint`` or ``TOOL.install_hint``), if any."""
    return getattr(module, "install_hint", None) or getattr(getattr(module, "TOOL", None), "install_hint", None)


def check_executable(argv: list[str], module: ModuleType, tool_name: str, host: Host | None = None) -> None:
    """Raise :class:`ToolNotFound` naming the tool and how to install it when ``argv[0]``
    cannot be found (on ``host``: this machine by default)."""
    exe = argv[0]
    found = (host.which(exe) if host is not None else shutil.which(exe)) is not None
    if not found:
        hint = install_hint(module)
        where = f" on {host.name}" if host is not None and host.name != "local" else ""
        raise ToolNotFound(f"{tool_name}: {exe!r} not found on PATH{where}" + (f"; install it: {hint}" if hint else ""))


def plan_invocation(
    module: ModuleType,
    tool_name: str,
    config: Mapping[str, Any],
    run_dir: str | None = None,
    host: Host | None = None,
) -> Invocation:
    """The tool's Invocation for ``config`` (ValueError when the tool refuses the config,
    ToolNotFound when its program is missing)."""
    tool = module.TOOL
    planner = getattr(tool, "invocation", None)
    if callable(planner) and host is not None and takes_host(planner, 3):
        # the host's own programs plan the run (fio: the node's fio reads the job)
        planned = planner(config, run_dir, host)
    elif callable(planner):
        planned = planner(config, run_dir)
    else:
        planned = Invocation(argv=tool.build_argv(config), hard_limit_s=float(tool.hard_limit_s(config)))
    check_executable(planned.argv, module, tool_name, host)
    return planned


def judge_run(
    module: ModuleType,
    tool_name: str,
    config: Mapping[str, Any],
    run_dir: str | None = None,
    host: Host | None = None,
) -> JudgedRun:
    """Plan and judge on ``host`` (this machine by default): PlanRefused unless every target
    is cleared or overridden by that host's write guard."""
    planned = plan_invocation(module, tool_name, config, run_dir, host)
    override = overrides_from_config(dict(config))
    verdict = host.judge_targets(planned.targets, override) if host is not None else judge(planned.targets, override)
    if not verdict.allowed:
        raise PlanRefused(f"{tool_name}: " + verdict.message(), verdict)
    return JudgedRun(planned, verdict)
