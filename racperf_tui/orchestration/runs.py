"""Starting, stopping and following runs: the API the UI and the CLI use.

- :func:`launch_run` records a run and starts a DETACHED supervisor for it (its own session,
  stdin/stdout/stderr off the terminal, reparented away from the caller): the run goes on and
  keeps recording when the UI quits, crashes or its terminal hangs up.
- :func:`stop_run` stops it from any process (SIGTERM to the supervisor, which stops the
  benchmark's group cleanly; SIGKILL of both after a grace period).
- :func:`follow_run` (alias :func:`attach`) yields a run's samples live from the store.
- :func:`run_foreground` runs the same supervisor in this process (``racperf run``).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.core.guard.isolated_python import FIXED_CWD, isolated_env, isolated_module_argv, vetted_roots
from racperf_tui.core.paths import log_dir, resolve_data_dir
from racperf_tui.core.process import start_detached
from racperf_tui.core.remote.cluster import HOST_SPEC_KEY, LOCAL, Node, host_for, node_spec
from racperf_tui.core.remote.ssh_target import SshError, one_line
from racperf_tui.core.store import RunRecord, Store, supervisor_alive
from racperf_tui.orchestration.run_plan import absolute_paths, judge_run
from racperf_tui.orchestration.supervisor import Supervisor
from racperf_tui.tools import load_tool

__all__ = [
    "ToolNotFound",
    "launch_run",
    "stop_run",
    "follow_run",
    "attach",
    "run_foreground",
    "wait_for_run",
]

#: how long the detaching supervisor may take to report its pid
_LAUNCH_TIMEOUT_S = 30.0


def prepare_run(tool: str, config: dict[str, Any], node: Node) -> tuple[dict[str, Any], list[str]]:
    """Plan and judge on the node before anything is recorded: ValueError when the tool or
    the write guard refuses (run_plan.PlanRefused), ToolNotFound when its executable is
    missing there, KeyError for an unknown tool, SshError (an OSError) when the node cannot
    be reached. The supervisor plans and judges again right before the start. Returns the
    config to record (a remote node's ``host_spec`` in it, so the supervisor rebuilds the
    host; on this machine, relative paths made absolute: the supervisor runs in a fixed
    directory) and the planned argv."""
    module = load_tool(tool)
    config = dict(config)
    config.pop(HOST_SPEC_KEY, None)
    if node.is_local:
        config = absolute_paths(module, config, os.getcwd())
    else:
        config[HOST_SPEC_KEY] = node_spec(node)
    try:
        judged = judge_run(module, tool, config, host=host_for(node))
    except SshError as exc:  # which node, and why, in one line (a list of nodes shows it so)
        raise SshError(f"node {node.name}: {one_line(exc)}") from None
    return config, list(judged.invocation.argv)


def launch_run(
    tool: str,
    config: dict[str, Any],
    *,
    data_dir: Path,
    target: str | None = None,
    node: Node = LOCAL,
    group_id: int | None = None,
) -> int:
    """Record a run of ``tool`` with ``config`` and start its detached supervisor; return the
    run id once the run is recorded and its supervisor pid is known.

    ``node``: where it runs (this machine by default); the store's host column is its name.
    ``group_id``: the run group (orchestration/run_groups.py) it is one node's run of.

    Raises ValueError (bad config, from the tool's ``build_argv``; a target the node's write
    guard refuses), ToolNotFound (executable missing there; message has the install hint),
    KeyError (unknown tool), SshError (an OSError: the node cannot be reached, the message
    says why), RuntimeError when the supervisor could not be started. ``target`` defaults to
    ``config["target"]``.
    """
    config, argv = prepare_run(tool, config, node)
    # the supervisor imports this tool as we did, from a vetted root, never from a cwd
    roots = vetted_roots([load_tool(tool)])
    data_dir = resolve_data_dir(data_dir)  # absolute (the supervisor runs in FIXED_CWD), private
    with Store.open(data_dir) as store:
        run_id = store.create_run(
            tool, node.name, target if target is not None else config.get("target"), config, argv, None, group_id
        )
        log_path = log_dir(data_dir) / f"run-{run_id}.log"
        command = isolated_module_argv(
            "racperf_tui.orchestration.supervisor",
            "--data-dir",
            str(data_dir),
            "--run-id",
            str(run_id),
            "--detach",
            "--log",
            str(log_path),
            roots=roots,
        )
        pid, problem = start_detached(command, FIXED_CWD, isolated_env(), _LAUNCH_TIMEOUT_S)
        if pid is None:
            store.set_state(run_id, RunState.FAILED, message=f"could not start the supervisor: {problem}")
            raise RuntimeError(f"run {run_id}: could not start the supervisor: {problem}")
        store.set_supervisor_pid(run_id, pid)
    return run_id


def wait_for_run(run_id: int, data_dir: Path, timeout_s: float, poll_s: float = 0.05) -> RunRecord:
    """Poll until the run is finished (or its supervisor vanished) or ``timeout_s`` passed;
    return its latest record."""
    deadline = time.monotonic() + timeout_s
    with Store.open(Path(data_dir)) as store:
        while True:
            record = store.get_run(run_id)
            if record.state.finished:
                return record
            if time.monotonic() >= deadline:
                return record
            if record.supervisor_pid is not None and not supervisor_alive(
                record.supervisor_pid, record.supervisor_started_at
            ):
                store.mark_interrupted_runs()
                return store.get_run(run_id)
            time.sleep(poll_s)


def stop_run(run_id: int, data_dir: Path, grace_s: float = 15.0) -> RunState:
    """Stop a run from any process and return its final state.

    Sends SIGTERM to its supervisor, which sends SIGTERM to the benchmark's group (fio writes
    its final report), SIGKILL after the tool's grace, parses and records the result. If the
    run is not finished after ``grace_s``, SIGKILL goes to the supervisor and to the
    benchmark's group and the run is recorded STOPPED. An already finished run is returned
    as is; one whose supervisor vanished becomes INTERRUPTED. Returns once the supervisor
    process has exited too (up to 5 s more). Blocking: call it from a worker thread in a UI.
    """
    data_dir = Path(data_dir)
    with Store.open(data_dir) as store:
        store.mark_interrupted_runs()
        record = store.get_run(run_id)
        if record.state.finished:
            return record.state
        pid = record.supervisor_pid
        if pid is None:
            store.set_state(run_id, RunState.STOPPED, message="stopped before its supervisor started")
            return RunState.STOPPED
        if supervisor_alive(pid, record.supervisor_started_at):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    record = wait_for_run(run_id, data_dir, grace_s)
    if record.state.finished:
        # the state is recorded just before the supervisor exits: let it finish exiting
        deadline = time.monotonic() + 5.0
        while (
            record.supervisor_pid is not None
            and time.monotonic() < deadline
            and supervisor_alive(record.supervisor_pid, record.supervisor_started_at)
        ):
            time.sleep(0.02)
        return record.state
    with Store.open(data_dir) as store:
        record = store.get_run(run_id)
        if supervisor_alive(record.supervisor_pid or -1, record.supervisor_started_at):
            try:
                os.kill(record.supervisor_pid or -1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if record.benchmark_pgid:
            try:
                os.killpg(record.benchmark_pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        store.set_state(
            run_id, RunState.STOPPED, message=f"stopped: supervisor did not finish within {grace_s:g} s and was killed"
        )
        return RunState.STOPPED


def follow_run(run_id: int, data_dir: Path, after_seq: int = 0, poll_s: float = 0.1) -> Iterator[tuple[int, Sample]]:
    """Yield (seq, Sample) of a run as they are recorded, from ``after_seq`` on, until the run
    is finished (or its supervisor vanished). For a UI, polling ``Store.samples(run_id,
    after_seq)`` from a timer does the same without a thread."""
    with Store.open(Path(data_dir)) as store:
        last = after_seq
        while True:
            record = store.get_run(run_id)
            for seq, sample in store.samples(run_id, last):
                last = seq
                yield seq, sample
            if record.state.finished:
                for seq, sample in store.samples(run_id, last):
                    last = seq
                    yield seq, sample
                return
            if record.supervisor_pid is not None and not supervisor_alive(
                record.supervisor_pid, record.supervisor_started_at
            ):
                store.mark_interrupted_runs()
                continue
            time.sleep(poll_s)


#: the same thing under the name the UI plan uses
attach = follow_run


def run_foreground(
    tool: str,
    config: dict[str, Any],
    data_dir: Path,
    on_sample: Callable[[Sample], None] | None = None,
    *,
    target: str | None = None,
    node: Node = LOCAL,
    on_start: Callable[[int], None] | None = None,
) -> RunRecord:
    """Run ``tool`` in this process under the same supervisor code and record it; each Sample
    goes to the store, then to ``on_sample``. SIGTERM / SIGINT / SIGHUP stop the run cleanly
    (when called from the main thread). ``on_start(run_id)`` is called once recorded.

    Raises like :func:`launch_run` before anything runs (ValueError, ToolNotFound, KeyError).
    A command-line process may call ``process.set_child_subreaper()`` first so the benchmark's
    orphans are reaped by it; a long-lived process (the UI, a test runner) should not.
    """
    config, argv = prepare_run(tool, config, node)
    with Store.open(Path(data_dir)) as store:
        store.mark_interrupted_runs()
        run_id = store.create_run(
            tool, node.name, target if target is not None else config.get("target"), config, argv, None
        )
        store.set_supervisor_pid(run_id, os.getpid())
        if on_start is not None:
            on_start(run_id)
        return Supervisor(store, run_id, on_sample=on_sample, log=_stderr_log(run_id)).run()


def _stderr_log(run_id: int) -> Callable[[str], None]:
    """The foreground supervisor's diagnostics on stderr, which may be a terminal that hung up:
    a line that cannot be written (EIO) is dropped, never raised into the run's bookkeeping."""

    def log(message: str) -> None:
        try:
            sys.stderr.write(f"racperf supervisor run {run_id}: {message}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass

    return log
