"""From a tool and a config to a judged Invocation: the one path every run takes, in the
launcher (to refuse before anything is recorded) and again in the supervisor (right before the
start, so what runs is judged against the system as it is then).

A tool with ``invocation(config, run_dir)`` plans itself (fio); one with only
``build_argv(config)`` gets an Invocation without targets. Every target goes through the write
guard (:func:`racperf_tui.core.guard.target_guard.judge`); a refusal is a :class:`PlanRefused`
(a ValueError) whose message names every target and reason.

A target on another machine (``Target.node``: the address a tool's config names, fio's client
mode's servers) is judged on that node: the cluster file's node with that address (host,
interconnect or public; the file the config's ``cluster_file`` names, else the default one),
this machine for a loopback address no node claims (a run on another node: a loopback
address is always that node, whatever node claims it). An address no node has blocks its targets:
racperf judges nothing it cannot look at.
"""

from __future__ import annotations

import inspect
import ipaddress
import os
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from racperf_tui.core.contract.hosts import Host, working_directory
from racperf_tui.core.contract.invocation import WRITE, Invocation, Target, ToolNotFound
from racperf_tui.core.contract.tool import ACCESSES, HOME, RUNS, WRITES, ToolDescription, ToolOption
from racperf_tui.core.guard.devjail import KernelNet, kernel_net
from racperf_tui.core.guard.program_vetting import LOCAL_VETTER, UntrustedPath, Vetter
from racperf_tui.core.guard.target_guard import GuardVerdict, judge, overrides_from_config
from racperf_tui.core.remote.cluster import LOCAL, ClusterFileError, Node, host_for, load_cluster
from racperf_tui.core.remote.node_vetting import NodeVetter

#: the directories of an Oracle home whose code a tool runs (sqlplus, orion and their libraries)
ORACLE_HOME_CODE = ("bin", "lib")
#: the config key naming the cluster file whose nodes a target's ``node`` address is looked up in
CLUSTER_FILE_KEY = "cluster_file"


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


@dataclass(frozen=True)
class LocalNet:
    """The kernel's net for a run on this machine: ``writable``, what the jail binds writable
    (the cleared write targets on this machine, the run's directory and working directory),
    and what the kernel will and will not enforce."""

    writable: list[str]
    net: KernelNet


def _identity_now(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISBLK(st.st_mode) or stat.S_ISCHR(st.st_mode):
        return None  # devices: the jail's /dev and the watch, by device number
    return (st.st_dev, st.st_ino)


def judge_laid_out_files(judged: JudgedRun) -> JudgedRun:
    """After the tool's preparation on this machine (fio lays out its files): each write
    target that is not the file the guard judged (made since, or replaced: racperf's scratch
    file is replaced when short) is judged again, so the jail binds only files the guard judged
    (a link planted at a missing name in another user's directory is refused here, not bound).
    PlanRefused when one is refused."""
    new = [
        t
        for t in judged.invocation.targets
        if t.access == WRITE and not t.node and _identity_now(t.path) not in (None, judged.guard.files.get(t.path))
    ]
    if not new:
        return judged
    again = judge(new, overrides_from_config({}))
    if not again.allowed:
        raise PlanRefused("write guard: " + again.message(), again)
    files = {**judged.guard.files, **again.files}
    return replace(judged, guard=replace(judged.guard, files=files))


def local_kernel_net(judged: JudgedRun, directory: Path) -> LocalNet:
    """What the jail of ``judged`` run in ``directory`` here lets it write, and the protections
    this machine gives it (core/guard/devjail.py :func:`kernel_net`)."""
    invocation = judged.invocation
    writable = [t.path for t in invocation.targets if t.access == WRITE and not t.node]
    writable.append(str(directory))
    cwd = working_directory(invocation, directory)
    if cwd is not None:
        writable.append(str(cwd))
    writable = list(dict.fromkeys(writable))
    return LocalNet(writable, kernel_net(list(invocation.argv), list(judged.guard.device_nodes), writable))


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


def tool_options(module: ModuleType) -> tuple[ToolOption, ...]:
    """The options the tool declares (none for a tool without a description)."""
    description = getattr(getattr(module, "TOOL", None), "description", None)
    return tuple(description.options) if isinstance(description, ToolDescription) else ()


def _is_local(host: Host | None) -> bool:
    return host is None or not bool(getattr(host, "remote", False))


def vetter_for(host: Host | None) -> Vetter:
    """The vetting of programs where the run runs: this machine's, or the node's over SSH."""
    return LOCAL_VETTER if _is_local(host) else NodeVetter(cast(Host, host))


def oracle_home_way_out(refused: UntrustedPath) -> UntrustedPath:
    """A refusal of an Oracle home's code for its owner (``oracle:oinstall`` as usual, racperf
    run as root), with the way out: the rule stays (trusting another user's code as root is
    what the vetting prevents), the home's owner runs racperf instead."""
    if refused.owner is None:
        return refused
    return UntrustedPath(
        f"{refused}. An Oracle home is its owner's: run racperf as {refused.owner} (the owner of "
        f"the Oracle home, who owns the ASM disks anyway, is then trusted), or give a copy of the "
        "home owned by root",
        refused.owner,
    )


def vet_named_programs(module: ModuleType, tool_name: str, config: Mapping[str, Any], vetter: Vetter) -> None:
    """Every program and Oracle home the config names (else the option's default, and here
    $ORACLE_HOME for a home left empty) vetted where the run runs before anything of the tool
    runs, planning included (a ``--version`` asked while planning runs the program):
    UntrustedPath (a ValueError) names the path, its owner and mode. A program that does not
    exist is left to the tool, which says it is missing."""
    options = tool_options(module)
    uses_a_home = any(option.access == HOME for option in options)
    for option in options:
        if option.access not in (RUNS, HOME):
            continue
        value = config.get(option.name) or option.default
        if not value and option.access == HOME and vetter is LOCAL_VETTER:
            value = os.environ.get("ORACLE_HOME", "")
        if not value or not isinstance(value, str):
            continue
        what = f"{tool_name}: {option.name}={value}"
        try:
            if option.access == RUNS:
                vetter.program(value, what)
            else:
                vetter.tree(value, what, ORACLE_HOME_CODE)
        except FileNotFoundError:
            continue
        except UntrustedPath as refused:
            raise oracle_home_way_out(refused) if uses_a_home else refused from None


def vet_planned_code(planned: Invocation, tool_name: str, vetter: Vetter) -> None:
    """The code a planned run loads where it runs, vetted: the program of the run and of each
    companion, the Oracle home its environment names (bin/, lib/) and every directory of its
    LD_LIBRARY_PATH. A directory that does not exist passes: the walk reached a trusted
    directory that lacks it, where nobody else can create it."""
    for argv, env in [(planned.argv, planned.env), *((c.argv, c.env) for c in planned.companions)]:
        if not argv:
            continue
        try:
            vetter.program(argv[0], f"{tool_name}: the program it runs")
        except UntrustedPath as refused:
            raise oracle_home_way_out(refused) if env.get("ORACLE_HOME") else refused from None
    for env in [planned.env, *(c.env for c in planned.companions)]:
        if env.get("ORACLE_HOME"):
            try:
                vetter.tree(env["ORACLE_HOME"], f"{tool_name}: ORACLE_HOME", ORACLE_HOME_CODE)
            except FileNotFoundError:
                pass
            except UntrustedPath as refused:
                raise oracle_home_way_out(refused) from None
        for directory in env.get("LD_LIBRARY_PATH", "").split(os.pathsep):
            if directory.startswith("/"):
                try:
                    vetter.path(directory, f"{tool_name}: LD_LIBRARY_PATH")
                except FileNotFoundError:
                    pass


def written_targets(module: ModuleType, config: Mapping[str, Any]) -> list[Target]:
    """A write Target for every path an option the tool declares WRITES names: judged by the
    write guard whatever the tool's own plan says. ValueError for a relative one (it would be
    relative to the tool's working directory, not to where it was typed)."""
    found = []
    for option in tool_options(module):
        value = config.get(option.name)
        if option.access != WRITES or not value:
            continue
        for path in value if isinstance(value, list) else [value]:
            if not str(path).startswith("/"):
                raise PlanRefused(f"{option.name}: {path} is relative; give an absolute path")
            found.append(Target(str(path), WRITE, origin=f"{option.name}="))
    return found


def absolute_paths(module: ModuleType, config: Mapping[str, Any], cwd: str) -> dict[str, Any]:
    """``config`` with the relative paths its path options name made absolute from ``cwd``
    (the caller's: the supervisor runs elsewhere): every written path; a read path or a
    program given with a slash, or a read path that exists there. A bare name that is not a
    file there stays: a program on PATH, or a word the option takes (oratcptest's RANDOM)."""
    config = dict(config)
    for option in tool_options(module):
        value = config.get(option.name)
        if option.access not in ACCESSES or not isinstance(value, str) or not value or value.startswith(("/", "~")):
            continue
        candidate = os.path.join(cwd, value)
        if option.access == WRITES or "/" in value or (option.access != RUNS and os.path.exists(candidate)):
            config[option.name] = os.path.normpath(candidate)
    return config


def judge_run(
    module: ModuleType,
    tool_name: str,
    config: Mapping[str, Any],
    run_dir: str | None = None,
    host: Host | None = None,
) -> JudgedRun:
    """Vet the programs the config names, plan, and judge on ``host`` (this machine by
    default): PlanRefused unless every target (the tool's, and every path an option declared
    WRITES names) is cleared or overridden by that host's write guard. A value its option's
    kind refuses (a size that is a path...) is refused first (PlanRefused)."""
    description = getattr(getattr(module, "TOOL", None), "description", None)
    if isinstance(description, ToolDescription):
        wrong = description.kind_problems(config)
        if wrong:
            raise PlanRefused(f"{tool_name}: " + "; ".join(wrong))
    vetter = vetter_for(host)
    vet_named_programs(module, tool_name, config, vetter)
    extra_targets = written_targets(module, config)
    planned = plan_invocation(module, tool_name, config, run_dir, host)
    vet_planned_code(planned, tool_name, vetter)
    declared = {(t.path, t.access, t.node) for t in planned.targets}
    missing = tuple(t for t in extra_targets if (t.path, t.access, t.node) not in declared)
    if missing:
        planned = replace(planned, targets=(*planned.targets, *missing))
    override = overrides_from_config(dict(config))
    own = [t for t in planned.targets if not t.node]
    verdict = host.judge_targets(own, override) if host is not None else judge(own, override)
    elsewhere = [t for t in planned.targets if t.node]
    if elsewhere:
        verdict = _with_verdicts_elsewhere(verdict, elsewhere, override, config.get(CLUSTER_FILE_KEY), host)
    if not verdict.allowed:
        raise PlanRefused(f"{tool_name}: " + verdict.message(), verdict)
    return JudgedRun(planned, verdict)


def _is_loopback(address: str) -> bool:
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def node_with_address(address: str, cluster_file: object = None) -> Node:
    """The node a server address is on: the cluster file's node whose host, interconnect or
    public address it is, else this machine for a loopback address. ClusterFileError names the
    address and the file when no node has it."""
    cluster = load_cluster(str(cluster_file) if cluster_file else None)
    wanted = address.strip("[]").lower()
    for node in cluster.nodes:
        if wanted in {(a or "").lower() for a in (node.host, node.interconnect, node.public)}:
            return node
    if _is_loopback(address):
        return LOCAL
    where = str(cluster.path) if cluster.path else "the cluster file (there is none)"
    raise ClusterFileError(
        f"no node of {where} has the address {address} (host, interconnect or public): racperf cannot "
        "judge the targets there; add the node to the cluster file"
    )


def _with_verdicts_elsewhere(
    verdict: GuardVerdict,
    targets: Sequence[Target],
    override: bool | set[str],
    cluster_file: object,
    host: Host | None,
) -> GuardVerdict:
    """``verdict`` (the run's own host's) with every other node's verdict on its targets (a
    loopback address no node claims is the run's host: this machine, or the node the run is
    on). Only
    the own host's device nodes stay in ``device_nodes``: the jail and the write watch are the
    run's host's, and another node's paths mean nothing here."""
    by_address: dict[str, list[Target]] = {}
    for target in targets:
        by_address.setdefault(target.node, []).append(target)
    remote_run = host is not None and bool(getattr(host, "remote", False))
    for address, group in by_address.items():
        if remote_run and _is_loopback(address):
            # the client connects from the run's node: its loopback is that node, whatever
            # node of the cluster file claims the address (one entered as 127.0.0.1)
            node = LOCAL
        else:
            try:
                node = node_with_address(address, cluster_file)
            except ClusterFileError as exc:
                verdict.blocked += [f"{t.path} ({t.origin}): {exc}" for t in group]
                continue
        on_host = host if node.is_local and host is not None else None
        where = on_host.name if on_host is not None else node.name
        # the refusal says where the path was judged, not only whose server opens it
        group = [replace(t, origin=f"{t.origin}, judged on {where}") for t in group]
        if on_host is not None:
            answer = on_host.judge_targets(group, override)
        elif node.is_local:
            answer = judge(group, override)
        else:
            answer = host_for(node).judge_targets(group, override)
        verdict.refused += answer.refused
        verdict.blocked += answer.blocked
        verdict.overridden += answer.overridden
    return verdict
