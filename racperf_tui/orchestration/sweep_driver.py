"""A sweep that outlives the terminal: its walk (orchestration/sweep.py's :func:`walk_sweep`,
the one ``racperf sweep fio`` runs) in a detached process, as a run's supervisor is.

- :func:`launch_sweep` checks the plan and judges its first point on every node, records the
  sweep's group (:func:`begin_sweep`: a refusal is raised before anything is recorded), then
  starts the driver ``python -I ... -m racperf_tui.orchestration.sweep_driver --data-dir DIR
  --group-id N --detach`` in its own session, in a fixed working directory (as
  :func:`runs.launch_run` starts a supervisor), and returns the group's id. The driver reads
  the plan back from the group's config and writes every point and the group's result to the
  store, where the UI follows it (ui/store_watcher.py).
- The driver's pid and start time are kept in ``logs/sweep-N.pid`` (the store has no column
  for them): :func:`driver_alive` tells a sweep still walking from one whose driver is gone,
  :func:`stop_sweep` stops it (SIGTERM: the driver stops the point running and records the
  result; a driver that is gone: the group's runs are stopped directly).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from pathlib import Path

from racperf_tui.core.guard.isolated_python import FIXED_CWD, isolated_env, isolated_module_argv, vetted_roots
from racperf_tui.core.paths import log_dir, use_data_dir
from racperf_tui.core.process import detach, output_to, start_detached
from racperf_tui.core.store import Store, process_create_time, supervisor_alive
from racperf_tui.orchestration.run_groups import stop_group
from racperf_tui.orchestration.sweep import SweepPlan, SweepRefused, begin_sweep, plan_of, walk_sweep
from racperf_tui.tools import load_tool

#: how long the detaching driver may take to report its pid
_LAUNCH_TIMEOUT_S = 30.0
#: how long :func:`stop_sweep` waits for the driver to record the sweep's end
_STOP_WAIT_S = 30.0


def pid_file(data_dir: Path, group_id: int) -> Path:
    return log_dir(Path(data_dir)) / f"sweep-{group_id}.pid"


def _driver(data_dir: Path, group_id: int) -> tuple[int, float] | None:
    """The driver's (pid, start time) as it recorded them; None when it recorded none."""
    try:
        said = json.loads(pid_file(data_dir, group_id).read_text())
        return int(said["pid"]), float(said["started_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def driver_alive(data_dir: Path, group_id: int) -> bool:
    """Is the sweep's detached driver still walking? (False for a sweep run by ``racperf
    sweep fio`` in a terminal, which keeps no pid file.)"""
    driver = _driver(data_dir, group_id)
    return driver is not None and supervisor_alive(*driver)


def launch_sweep(plan: SweepPlan, data_dir: Path) -> int:
    """Record the sweep's group and start its detached driver; the group's id. Raises as
    :func:`begin_sweep` does (nothing recorded), RuntimeError when the driver did not start
    (the group's message says so)."""
    data_dir = Path(data_dir).absolute()  # the driver runs in FIXED_CWD
    group_id = begin_sweep(plan, data_dir)
    log_path = log_dir(data_dir) / f"sweep-{group_id}.log"
    command = isolated_module_argv(
        "racperf_tui.orchestration.sweep_driver",
        "--data-dir",
        str(data_dir),
        "--group-id",
        str(group_id),
        "--detach",
        "--log",
        str(log_path),
        roots=vetted_roots([load_tool("fio")]),
    )
    _pid, problem = start_detached(command, FIXED_CWD, isolated_env(), _LAUNCH_TIMEOUT_S)  # it records its own pid
    if problem:
        with Store.open(data_dir) as store:
            store.set_group_message(group_id, f"sweep: could not start its driver: {problem}")
        raise RuntimeError(f"sweep g{group_id}: could not start its driver: {problem}")
    return group_id


def stop_sweep(group_id: int, data_dir: Path) -> str:
    """Stop a sweep from any process; what was done, in words. Its driver gets SIGTERM (it
    stops the point running and records the sweep's end; waited for); without a driver, the
    group's runs are stopped."""
    data_dir = Path(data_dir)
    driver = _driver(data_dir, group_id)
    if driver is not None and supervisor_alive(*driver):
        try:
            os.kill(driver[0], signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + _STOP_WAIT_S
        while supervisor_alive(*driver) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not supervisor_alive(*driver):
            return f"sweep g{group_id} stopped"
    states = stop_group(group_id, data_dir)
    return f"sweep g{group_id}: no driver walking it; its runs: " + (
        ", ".join(f"{node} {state.value}" for node, state in states.items()) or "none"
    )


def _record_pid(data_dir: Path, group_id: int) -> None:
    pid = os.getpid()
    pid_file(data_dir, group_id).write_text(json.dumps({"pid": pid, "started_at": process_create_time(pid)}))


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m racperf_tui.orchestration.sweep_driver``."""
    parser = argparse.ArgumentParser(
        prog="python -m racperf_tui.orchestration.sweep_driver", description="Walk a recorded sweep's points."
    )
    parser.add_argument("--data-dir", required=True, help="the store's directory")
    parser.add_argument("--group-id", required=True, type=int, help="the sweep's group (begin_sweep)")
    parser.add_argument("--detach", action="store_true", help="fork into the background; print the pid on stdout")
    parser.add_argument("--log", default=None, help="append diagnostics to this file")
    args = parser.parse_args(argv)
    use_data_dir(args.data_dir)  # its nodes' known_hosts, its settings: the UI's
    if args.detach:
        detach()
    output_to(args.log, args.detach)
    data_dir = Path(args.data_dir)
    stopping = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: stopping.set())
    _record_pid(data_dir, args.group_id)
    with Store.open(data_dir) as store:
        try:
            plan = plan_of(store.get_group(args.group_id).config)
        except (SweepRefused, KeyError) as exc:
            store.set_group_message(args.group_id, f"sweep: not walked: {exc}")
            print(f"sweep g{args.group_id}: {exc}", flush=True)
            return 2
    outcome = walk_sweep(plan, data_dir, args.group_id, stopping=stopping)
    print(f"sweep g{args.group_id} ended: {outcome.ended or 'every point ran'}", flush=True)
    return 0 if outcome.ended is None else 1


if __name__ == "__main__":
    raise SystemExit(main())
