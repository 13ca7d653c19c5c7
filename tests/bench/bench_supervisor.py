"""Benchmarks of the run machinery (not collected by pytest; run by hand or via run_all):

1. line splitting throughput (MB/s) on 100 MB of 120-byte lines, and one 5 MB line;
2. store: committed add_sample() calls per second (each its own durable transaction);
3. latency from the benchmark writing a sample line to (a) the sample committed in the
   store and (b) a reader polling the store every 10 ms seeing it: p50 / p99 / max;
4. the supervisor's CPU use while the benchmark writes 2 000 lines/s, and at one sample a
   second (fio's pace; the window includes the process-tree scans), as % of one core.

Usage: .venv/bin/python tests/bench/bench_supervisor.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])

import psutil  # noqa: E402

from racperf_tui.core.contract.events import RunState, Sample  # noqa: E402
from racperf_tui.core.store import Store  # noqa: E402
from racperf_tui.core.textio.lines import LineSplitter  # noqa: E402
from racperf_tui.orchestration.runs import launch_run, run_foreground, wait_for_run  # noqa: E402

FAKE_TOOL = "tests.fakes.faketool"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def bench_splitter() -> dict[str, float]:
    line = b"x" * 119 + b"\n"
    data = line * (100 * 1024 * 1024 // len(line))
    splitter = LineSplitter()
    started = time.perf_counter()
    count = 0
    for i in range(0, len(data), 256 * 1024):
        count += len(splitter.feed(data[i : i + 256 * 1024]))
    elapsed = time.perf_counter() - started
    assert count == len(data) // len(line)
    big = b"y" * (5 * 1024 * 1024) + b"\n"
    splitter = LineSplitter()
    started = time.perf_counter()
    for i in range(0, len(big), 64 * 1024):
        splitter.feed(big[i : i + 64 * 1024])
    big_s = time.perf_counter() - started
    return {"splitter_mb_s": len(data) / 1e6 / elapsed, "five_mb_line_ms": big_s * 1000}


def bench_store(data_dir: Path) -> dict[str, float]:
    with Store.open(data_dir) as store:
        run_id = store.create_run("bench", "local", None, {}, [], None)
        metrics = {f"m{i}_iops": float(i) for i in range(16)}
        n = 2000
        started = time.perf_counter()
        for i in range(n):
            store.add_sample(run_id, Sample(t=float(i), metrics=metrics))
        elapsed = time.perf_counter() - started
        started = time.perf_counter()
        polled = store.samples(run_id, after_seq=n - 1)
        poll_ms = (time.perf_counter() - started) * 1000
        assert len(polled) == 1
    return {"add_sample_per_s": n / elapsed, "poll_last_of_2000_ms": poll_ms}


def bench_latency(data_dir: Path) -> dict[str, float]:
    committed: list[float] = []
    seen: list[float] = []
    stop = threading.Event()

    def reader() -> None:
        last = 0
        with Store.open(data_dir) as store:
            while not stop.is_set():
                runs = store.list_runs(limit=1)
                if runs:
                    for seq, sample in store.samples(runs[0].id, last):
                        last = seq
                        seen.append(time.time() - sample.extra["sent"])
                time.sleep(0.01)

    thread = threading.Thread(target=reader)
    thread.start()
    record = run_foreground(
        FAKE_TOOL,
        {"extra_args": ["--samples", "300", "--interval", "0.01", "--stamp"]},
        data_dir,
        lambda s: committed.append(time.time() - s.extra["sent"]),
    )
    time.sleep(0.1)
    stop.set()
    thread.join()
    assert record.state is RunState.SUCCEEDED and len(committed) == 300
    return {
        "commit_p50_ms": statistics.median(committed) * 1000,
        "commit_p99_ms": pct(committed, 99) * 1000,
        "reader_p50_ms": statistics.median(seen) * 1000,
        "reader_p99_ms": pct(seen, 99) * 1000,
        "reader_max_ms": max(seen) * 1000,
        "reader_samples": float(len(seen)),
    }


def bench_supervisor_cpu(data_dir: Path) -> dict[str, float]:
    # 200 samples/s, each after 9 filler lines: 2 000 lines/s, ~200 KB/s, for 3 s
    run_id = launch_run(
        FAKE_TOOL, {"extra_args": ["--samples", "600", "--interval", "0.005", "--filler", "9"]}, data_dir=data_dir
    )
    with Store.open(data_dir) as store:
        pid = store.get_run(run_id).supervisor_pid
    sup = psutil.Process(pid)
    time.sleep(0.5)  # past interpreter start-up
    cpu0, t0 = sum(sup.cpu_times()[:2]), time.monotonic()
    time.sleep(2.0)
    cpu1, t1 = sum(sup.cpu_times()[:2]), time.monotonic()
    record = wait_for_run(run_id, data_dir, 30)
    assert record.state is RunState.SUCCEEDED, record.message
    lines_per_s = 2000.0
    return {"supervisor_cpu_pct_at_2000_lines_s": 100 * (cpu1 - cpu0) / (t1 - t0), "lines_per_s": lines_per_s}


def bench_supervisor_idle_cpu(data_dir: Path) -> dict[str, float]:
    """A fio-like pace: one sample a second; the window includes the tree scans."""
    run_id = launch_run(FAKE_TOOL, {"extra_args": ["--samples", "8", "--interval", "1.0"]}, data_dir=data_dir)
    with Store.open(data_dir) as store:
        pid = store.get_run(run_id).supervisor_pid
    sup = psutil.Process(pid)
    time.sleep(1.0)
    cpu0, t0 = sum(sup.cpu_times()[:2]), time.monotonic()
    time.sleep(5.0)
    cpu1, t1 = sum(sup.cpu_times()[:2]), time.monotonic()
    record = wait_for_run(run_id, data_dir, 30)
    assert record.state is RunState.SUCCEEDED, record.message
    return {"supervisor_cpu_pct_at_1_sample_s": 100 * (cpu1 - cpu0) / (t1 - t0)}


def main() -> int:
    results: dict[str, float] = {}
    results.update(bench_splitter())
    with tempfile.TemporaryDirectory() as tmp:
        results.update(bench_store(Path(tmp) / "store"))
        results.update(bench_latency(Path(tmp) / "latency"))
        results.update(bench_supervisor_cpu(Path(tmp) / "cpu"))
        results.update(bench_supervisor_idle_cpu(Path(tmp) / "idle"))
    print(json.dumps({k: round(v, 2) for k, v in results.items()}, indent=2))
    print("note: CPU figures are noisy on a shared machine", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
