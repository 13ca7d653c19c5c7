"""Benchmark: the observer effect of racperf on fio.

Target (issue 3): fio's IOPS under racperf with the UI live >= 97 % of fio alone, same job,
runs alternated, median ratio of at least 5 pairs.

- "fio alone": ``fio --output-format=json [--readonly] JOB`` -- plain fio, no status dumps.
- "under racperf": the same JOB started by ``launch_run`` (detached supervisor, json+ status
  dump every second, stream parser, store), shown live by racperf's ``RunView`` in a
  headless Textual app in this process (polling the store every 50 ms and painting the
  sparklines; headless, so no terminal is written to).

The default job is the worst case for an observer: 4k random reads from a file in the page
cache with psync, which keeps fio on the CPU all the time, so any CPU racperf takes shows
as lost IOPS. ``--direct`` reads through O_DIRECT instead (device bound, but noisier here).
Pairs alternate the order (alone first, then racperf first, ...) so drift in the machine's
load cancels out; the median of the per-pair ratios is the figure.

    .venv/bin/python tests/bench/bench_fio_observer.py [--pairs 5] [--runtime 5] [--headless-only]

``--headless-only`` measures racperf without the UI (``racperf run fio`` in the foreground).
It also prints racperf's own CPU (supervisor + UI process, CPU-seconds per second), which is
far less noisy than the IOPS ratio on a shared machine.

Experiments (environment): RACPERF_BENCH_VERBOSE=1 splits that CPU into UI and supervisor;
RACPERF_BENCH_POLL_S=0.25 sets the live view's store poll interval (default 0.05).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from racperf_tui.core.store import Store
from racperf_tui.orchestration.runs import launch_run, stop_run
from racperf_tui.tools.fio import result as fio_result


def job_args(target: Path, runtime_s: int, direct: bool) -> list[str]:
    return [
        "--name=observer",
        f"--filename={target}",
        "--size=64m",
        "--rw=randread",
        "--bs=4k",
        "--ioengine=psync",
        f"--direct={int(direct)}",
        f"--runtime={runtime_s}",
        "--time_based",
    ]


def read_iops(result: dict) -> float:
    return sum(float(job["read"]["iops"]) for job in result["jobs"])


def fio_alone(args: list[str]) -> float:
    done = subprocess.run(
        ["fio", "--output-format=json", "--readonly", *args], capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(f"fio alone failed: {done.stderr.strip()[-300:]}")
    return read_iops(fio_result.parse_output(done.stdout))


def _finished(data_dir: Path, run_id: int) -> bool:
    with Store.open(data_dir) as store:
        return store.get_run(run_id).state.finished


async def _watch_live(data_dir: Path, run_id: int, timeout_s: float) -> int:
    """Show the run in racperf's live view until it ends; return how many updates painted."""
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    from racperf_tui.ui.messages import RunLiveUpdate
    from racperf_tui.ui.screens.run_view import RunView

    class CountingRunView(RunView):
        painted = 0

        def on_run_live_update(self, message: RunLiveUpdate) -> None:
            # Textual calls RunView's handler too (every class in the MRO): no super() here.
            if message.live.samples_seen < 1:
                return  # the app's start-up and first layout are not the observer effect
            self.painted += 1
            if self.painted == 1:  # steady state starts at the first sample painted
                UI_WINDOW["cpu0"], UI_WINDOW["wall0"] = time.process_time(), time.monotonic()
            UI_WINDOW["cpu1"], UI_WINDOW["wall1"] = time.process_time(), time.monotonic()

    class BenchApp(App[None]):
        def __init__(self) -> None:
            super().__init__()
            poll_s = os.environ.get("RACPERF_BENCH_POLL_S")  # experiment: the view's poll interval
            self.view = (
                CountingRunView(data_dir, run_id, poll_interval_s=float(poll_s))
                if poll_s
                else CountingRunView(data_dir, run_id)
            )

        def compose(self) -> ComposeResult:
            yield Static("bench")

        def on_mount(self) -> None:
            self.push_screen(self.view)

    app = BenchApp()
    async with app.run_test(size=(100, 40)) as pilot:
        deadline = time.monotonic() + timeout_s
        # the bench's own checks stay rare (1 s) so they do not count as the UI's cost
        while time.monotonic() < deadline and not await asyncio.to_thread(_finished, data_dir, run_id):
            await asyncio.to_thread(_note_supervisor_cpu, data_dir, run_id)
            await pilot.pause(1.0)
    return app.view.painted


#: process CPU and wall clock at the first and the latest live update of the current run
UI_WINDOW: dict[str, float] = {}

#: run id -> latest CPU seconds (user + system) of its supervisor seen while it ran
SUPERVISOR_CPU_S: dict[int, float] = {}


def _note_supervisor_cpu(data_dir: Path, run_id: int) -> None:
    import psutil

    with Store.open(data_dir) as store:
        pid = store.get_run(run_id).supervisor_pid
    try:
        times = psutil.Process(pid).cpu_times() if pid else None
    except psutil.Error:
        return
    if times is not None:
        SUPERVISOR_CPU_S[run_id] = times.user + times.system


def under_racperf_ui(args: list[str], data_dir: Path, runtime_s: int) -> tuple[float, int, float]:
    """(IOPS, UI updates painted, racperf CPU seconds per second: supervisor over the whole
    run + the UI process from its first live update on, i.e. without its start-up)."""
    wall_before = time.monotonic()
    UI_WINDOW.clear()
    run_id = launch_run("fio", {"extra_args": args}, data_dir=data_dir)
    try:
        painted = asyncio.run(_watch_live(data_dir, run_id, runtime_s + 60))
    finally:
        if not _finished(data_dir, run_id):
            stop_run(run_id, data_dir)
    wall = time.monotonic() - wall_before
    ui_window = UI_WINDOW.get("wall1", 0.0) - UI_WINDOW.get("wall0", 0.0)
    ui_share = (UI_WINDOW["cpu1"] - UI_WINDOW["cpu0"]) / ui_window if ui_window > 0 else 0.0
    with Store.open(data_dir) as store:
        record, result = store.get_run(run_id), store.result(run_id)
    if record.state.value != "succeeded" or result is None:
        raise RuntimeError(f"run {run_id} {record.state.value}: {record.message}")
    sup_share = SUPERVISOR_CPU_S.get(run_id, 0.0) / wall
    if os.environ.get("RACPERF_BENCH_VERBOSE"):
        print(f"  UI process {ui_share:.3f} CPU s/s (steady state), supervisor {sup_share:.3f} CPU s/s")
    return read_iops(result), painted, ui_share + sup_share


def under_racperf_headless(args: list[str], data_dir: Path) -> tuple[float, int]:
    done = subprocess.run(
        [sys.executable, "-m", "racperf_tui", "run", "fio", "--data-dir", str(data_dir), "--", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"racperf run failed: {done.stderr.strip()[-300:]}")
    return read_iops(lines[-1]["result"]), len(lines) - 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=int, default=5, help="seconds per fio run (default 5)")
    parser.add_argument("--direct", action="store_true", help="O_DIRECT reads instead of page-cache reads")
    parser.add_argument("--headless-only", action="store_true", help="racperf run (no UI) instead of the live UI")
    parser.add_argument("--workdir", default=None, help="where the data dir and fio's file go")
    opts = parser.parse_args()
    print(f"cpus={os.cpu_count()} load1={os.getloadavg()[0]:.1f} (shared machine: figures are noisy)")
    with tempfile.TemporaryDirectory(dir=opts.workdir, prefix="racperf-bench-obs-") as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        args = job_args(Path(tmp) / "observer.dat", opts.runtime, opts.direct)
        # The read-only job needs its file laid out (fio --readonly will not extend it).
        with open(Path(tmp) / "observer.dat", "wb") as layout:
            for _ in range(64):
                layout.write(os.urandom(1 << 20))
        fio_alone(job_args(Path(tmp) / "observer.dat", 1, opts.direct))  # warm the cache
        ratios: list[float] = []
        cpu_shares: list[float] = []
        for pair in range(opts.pairs):
            order = ["alone", "racperf"] if pair % 2 == 0 else ["racperf", "alone"]
            got: dict[str, float] = {}
            painted, cpu_share = 0, None
            for which in order:
                if which == "alone":
                    got[which] = fio_alone(args)
                elif opts.headless_only:
                    got[which], painted = under_racperf_headless(args, data_dir)
                else:
                    got[which], painted, cpu_share = under_racperf_ui(args, data_dir, opts.runtime)
                    cpu_shares.append(cpu_share)
            ratio = got["racperf"] / got["alone"]
            ratios.append(ratio)
            what = "samples" if opts.headless_only else f"UI updates, racperf CPU {cpu_share:.3f} s/s"
            print(
                f"pair {pair + 1} ({' then '.join(order)}): alone {got['alone']:.0f} IOPS, "
                f"racperf {got['racperf']:.0f} IOPS ({painted} {what}), ratio {ratio:.3f}"
            )
    median = statistics.median(ratios)
    mode = "headless racperf run" if opts.headless_only else "racperf with the live UI"
    print(
        f"{mode}: median ratio {median:.3f} over {len(ratios)} pairs (min {min(ratios):.3f}, "
        f"max {max(ratios):.3f}); target >= 0.97: {'met' if median >= 0.97 else 'NOT met'}"
    )
    if cpu_shares:
        print(
            f"racperf's own CPU (supervisor + UI process) while fio ran: median "
            f"{statistics.median(cpu_shares):.3f} CPU-seconds per second (of {os.cpu_count()} CPUs)"
        )
    return 0 if median >= 0.97 else 1


if __name__ == "__main__":
    sys.exit(main())
