"""Run every benchmark script in turn (``make bench``); each prints its own small table.

The figures in README's Performance section come from these runs, on a machine with nothing
else running: the CPU and observer-effect figures are meaningless on a loaded one.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

#: script and arguments, in the order the README lists them
BENCHMARKS: list[tuple[str, list[str]]] = [
    ("bench_iostat_read.py", []),
    ("bench_dashboard_cpu.py", ["--seconds", "60", "--rounds", "3"]),
    ("bench_dashboard_cpu.py", ["--case", "hard", "--seconds", "60", "--rounds", "3"]),
    ("bench_dashboard_startup.py", ["--runs", "7"]),
    ("bench_dashboard_memory.py", ["--seconds", "600"]),
    ("bench_supervisor.py", []),
    ("bench_fio_observer.py", ["--pairs", "7"]),
    ("bench_fio_latency.py", []),
    ("bench_probe_vs_iperf3.py", []),
    ("bench_cluster_monitor.py", ["--nodes", "16", "--seconds", "60"]),
]


def main() -> int:
    failed = []
    for script, args in BENCHMARKS:
        print(f"\n=== {script} {' '.join(args)}", flush=True)
        if subprocess.run([sys.executable, str(HERE / script), *args]).returncode != 0:
            failed.append(script)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
