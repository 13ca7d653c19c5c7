"""Benchmark: from fio writing a status dump to the live view's sparkline holding it.

Target (issue 3): p99 <= 100 ms. Two measurements, both through a headless racperf live view
(RunView) polling the real store; for every sample seq we take the wall time at which the
view handed it to its sparklines:

1. end to end: a real fio job (status dumps every ``--fio-interval`` s) under a real detached
   supervisor; the start is fio's own ``timestamp_ms`` of the dump (kept in ``extra``);
2. the UI's share alone: a writer process commits a sample every ``--interval`` s stamped with
   its wall time.

    .venv/bin/python tests/bench/bench_runs_ui_latency.py [--samples 150] [--interval 0.1]
        [--fio-runtime 12] [--fio-interval 0.1] [--no-fio]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Static

from racperf_tui.core.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.ui.messages import RunLiveUpdate
from racperf_tui.ui.screens.run_view import RunView

WRITER = r"""
import sys, time
from racperf_tui.core.events import Sample
from racperf_tui.core.store import Store
data_dir, run_id, count, interval = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
store = Store.open(data_dir)
next_at = time.monotonic()
for i in range(1, count + 1):
    next_at += interval
    time.sleep(max(0.0, next_at - time.monotonic()))
    store.add_sample(run_id, Sample(t=i * interval, metrics={"read_iops": 1000.0 + i, "write_iops": 500.0},
                                    extra={"written_at": time.time()}))
"""


class TimedRunView(RunView):
    """Records, per sample seq, the wall time its values were handed to the sparklines."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.painted_at: dict[int, float] = {}

    def on_run_live_update(self, message: RunLiveUpdate) -> None:
        super().on_run_live_update(message)
        now = time.time()
        for seq in range(1, message.live.samples_seen + 1):
            self.painted_at.setdefault(seq, now)


class BenchApp(App[None]):
    def __init__(self, data_dir: Path, run_id: int) -> None:
        super().__init__()
        self.view = TimedRunView(data_dir, run_id)

    def compose(self) -> ComposeResult:
        yield Static("bench")

    def on_mount(self) -> None:
        self.push_screen(self.view)


async def measure(data_dir: Path, run_id: int, until: "callable[[], bool]", timeout_s: float) -> dict[int, float]:
    app = BenchApp(data_dir, run_id)
    async with app.run_test(size=(80, 24)) as pilot:
        deadline = time.monotonic() + timeout_s
        while not until() and time.monotonic() < deadline:
            await pilot.pause(0.1)
        await pilot.pause(0.3)
        return dict(app.view.painted_at)


def latencies_ms(data_dir: Path, run_id: int, painted_at: dict[int, float], stamp_key: str) -> list[float]:
    with Store.open(data_dir) as store:
        rows = store.samples(run_id)
    out = []
    for seq, sample in rows:
        if stamp_key == "timestamp_ms_s":  # fio's own wall clock of the dump, in ms
            ms = sample.extra.get("timestamp_ms")
            stamp = None if ms is None else float(ms) / 1000.0
        else:
            stamp = sample.extra.get(stamp_key)
        if stamp is not None and seq in painted_at:
            out.append((painted_at[seq] - float(stamp)) * 1000.0)
    return out


def report(name: str, values: list[float]) -> None:
    if not values:
        print(f"{name}: no samples measured")
        return
    values = sorted(values)
    p = lambda q: values[min(len(values) - 1, int(round(q * (len(values) - 1))))]  # noqa: E731
    print(f"{name}: n={len(values)} median={statistics.median(values):.1f} ms p95={p(0.95):.1f} ms "
          f"p99={p(0.99):.1f} ms max={values[-1]:.1f} ms")


def synthetic(samples: int, interval: float) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        with Store.open(data_dir) as store:
            run_id = store.create_run("fio", "local", "/dev/null", {"runtime": samples * interval}, ["bench"], None)
            store.set_state(run_id, RunState.RUNNING)
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(data_dir), str(run_id), str(samples),
                                   str(interval)])
        try:
            with Store.open(data_dir) as store:
                store.set_supervisor_pid(run_id, writer.pid)
            painted = asyncio.run(measure(data_dir, run_id, lambda: writer.poll() is not None,
                                          samples * interval + 30))
        finally:
            writer.kill()
            writer.wait()
        return latencies_ms(data_dir, run_id, painted, "written_at")


def real_fio(runtime_s: int, interval_s: float) -> list[float]:
    from racperf_tui.core.runs import launch_run, stop_run
    from racperf_tui.tools.fio import preset_config

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        config = preset_config("8k-randread").to_dict()
        config.update(target=str(Path(tmp) / "bench.dat"), size="64M", runtime_s=runtime_s,
                      status_interval_s=interval_s)
        run_id = launch_run("fio", config, data_dir=data_dir)
        try:
            def finished() -> bool:
                with Store.open(data_dir) as store:
                    return store.get_run(run_id).state.finished
            painted = asyncio.run(measure(data_dir, run_id, finished, runtime_s + 60))
        finally:
            stop_run(run_id, data_dir)
        values = latencies_ms(data_dir, run_id, painted, "timestamp_ms_s")
        return values


def _p99(values: list[float]) -> float:
    return sorted(values)[int(round(0.99 * (len(values) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=150)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--fio-runtime", type=int, default=12)
    parser.add_argument("--fio-interval", type=float, default=0.1)
    parser.add_argument("--no-fio", action="store_true")
    args = parser.parse_args()
    print(f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} (shared machine: figures are noisy)")
    ok = True
    if not args.no_fio:
        values = real_fio(args.fio_runtime, args.fio_interval)
        report("fio status dump -> sparkline", values)
        ok = ok and bool(values) and _p99(values) <= 100.0
    values = synthetic(args.samples, args.interval)
    report("store commit -> sparkline", values)
    ok = ok and bool(values) and _p99(values) <= 100.0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
