"""The write guard applied to a plan: every target of an Invocation, for every tool.

Each write target goes through :func:`racperf_tui.core.guard.safety.check_write_target` (block
devices, character devices, regular files: mounts, swap, holders, open file descriptors,
signatures); each read target through :func:`racperf_tui.core.guard.safety.check_read_target` (a
path under /dev that does not exist is refused: fio would create a regular file in devtmpfs
and benchmark memory).

An override (the typed device name in the UI, ``--destructive`` headless) lifts the refusal of
a named write target only. It never lifts a missing device, and nothing here concerns options
that run commands: those are refused by the tool's plan and no override reaches them.

The judgement reads ``root``'s proc/ and sys/ and asks a ``system`` the rest (core/guard/openfds.py):
this machine by default; another node's gathered facts for the SSH host (core/remote/node_facts.py),
whose ``unchecked`` sentences (facts the node would not give) refuse every write target.
"""

from __future__ import annotations

import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from racperf_tui.core.contract.invocation import WRITE, Target
from racperf_tui.core.guard.openfds import System, live_system
from racperf_tui.core.guard.safety import SafetyVerdict, check_read_target, check_write_target


@dataclass
class GuardVerdict:
    """The guard's answer for a whole plan.

    ``refused``: write targets the guard refuses and the override may lift, with the verdict;
    ``blocked``: reasons no override lifts (a missing device); ``overridden``: refused targets
    the override lifted; ``device_nodes``: the device nodes the plan may open (cleared or
    overridden), for the device jail and the write watch.
    """

    refused: list[tuple[Target, SafetyVerdict]] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    overridden: list[tuple[Target, SafetyVerdict]] = field(default_factory=list)
    device_nodes: list[str] = field(default_factory=list)
    #: the write target files cleared (or overridden) as the guard judged them, path ->
    #: (st_dev, st_ino): the jail binds those very files writable, and refuses to run when a
    #: path leads to another file by then (core/guard/devjail.py)
    files: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def allowed(self) -> bool:
        return not self.refused and not self.blocked

    def message(self) -> str:
        """Every reason, one per line, for a headless error."""
        lines = list(self.blocked)
        for target, verdict in self.refused:
            lines.append(f"refusing to write to {target.path} ({target.origin}):")
            lines += [f"  - {reason}" for reason in verdict.reasons]
        if self.refused:
            lines.append("  (to override for these devices: type the device name in the UI, or pass --destructive)")
        return "\n".join(lines)


def _is_device(path: str, system: System) -> bool:
    try:
        mode = system.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISBLK(mode) or stat.S_ISCHR(mode)


def overrides_from_config(config: dict[str, object]) -> bool | set[str]:
    """The run-level override keys of a config: ``destructive: true`` (headless, every named
    target) or ``destructive_targets: [paths]`` (the UI: the devices the user typed)."""
    if config.get("destructive") is True:
        return True
    named = config.get("destructive_targets")
    if isinstance(named, (list, tuple)):
        return {str(p) for p in named}
    return set()


def judge(
    targets: Iterable[Target],
    override: bool | set[str] = False,
    *,
    root: Path = Path("/"),
    system: System | None = None,
    unchecked: Sequence[str] = (),
) -> GuardVerdict:
    """Judge every target; ``override`` is True (all named write targets) or the set of paths
    the user confirmed by typing the device name. ``unchecked``: sentences naming what could
    not be checked, added to every write target's reasons (never allow blind)."""
    system = system or live_system()
    verdict = GuardVerdict()
    seen: set[tuple[str, str]] = set()
    for target in targets:
        key = (target.path, target.access)
        if key in seen:
            continue
        seen.add(key)
        if target.access == WRITE:
            answer = check_write_target(target.path, root=root, system=system)
            if unchecked and system.lexists(target.path):  # a new file: nothing there to destroy
                reasons = answer.reasons + list(unchecked)
                answer = replace(answer, allowed=False, reasons=reasons)
        else:
            answer = check_read_target(target.path, system=system)
        if not answer.allowed and not system.lexists(target.path):
            # nothing there to protect and nothing to override: a typo in a device name
            verdict.blocked += [f"{target.path} ({target.origin}): {reason}" for reason in answer.reasons]
            continue
        if not answer.allowed:
            lifted = override is True or (
                isinstance(override, set)
                and (
                    target.path in override
                    or system.realpath(target.path) in override
                    or (answer.kernel_name is not None and answer.kernel_name in override)
                )
            )
            (verdict.overridden if lifted else verdict.refused).append((target, answer))
            if not lifted:
                continue
        if target.access == WRITE and answer.identity is not None:
            verdict.files[target.path] = answer.identity
        if _is_device(target.path, system) and target.path not in verdict.device_nodes:
            verdict.device_nodes.append(target.path)
    return verdict
