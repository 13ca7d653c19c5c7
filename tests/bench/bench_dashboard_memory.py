"""Memory over a long dashboard session: RSS of `racperf` on 64 devices, sampled every 10 s.

    python tests/bench/bench_dashboard_memory.py --seconds 600 --interval 0.5

The dashboard keeps a bounded history per device (240 samples), so RSS must level off once the
history is full (2 minutes at 0.5 s) and stay flat after. Prints RSS over time and the growth
over the second half of the run, which is the figure that says "flat".
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))
from bench_dashboard_cpu import PtyProcess, racperf_argv, synthetic_root  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="session length (default 600)")
    parser.add_argument("--interval", type=float, default=0.5, help="dashboard refresh (default 0.5 s)")
    parser.add_argument("--devices", type=int, default=64)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="racperf-membench-"))
    env = dict(os.environ, RACPERF_DATA_DIR=str(workdir / "data"))
    try:
        with synthetic_root(workdir / "root", args.devices) as names:
            argv = racperf_argv(workdir / "root") + ["--interval", str(args.interval)]
            dashboard = PtyProcess(argv, env=env, size=(200, 80))
            try:
                dashboard.wait_for(names[0].encode(), timeout_s=30)
                process = psutil.Process(dashboard.pid)
                start = time.monotonic()
                points: list[tuple[float, float]] = []
                while (elapsed := time.monotonic() - start) < args.seconds:
                    points.append((elapsed, process.memory_info().rss / 2**20))
                    time.sleep(10)
                points.append((time.monotonic() - start, process.memory_info().rss / 2**20))
            finally:
                dashboard.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"racperf RSS, {args.devices} devices at {args.interval} s ({len(points)} points):")
    for elapsed, rss in points[:: max(1, len(points) // 12)]:
        print(f"  {elapsed:6.0f} s  {rss:7.1f} MiB")
    half = [p for p in points if p[0] >= points[-1][0] / 2]
    growth = half[-1][1] - half[0][1]
    print(
        f"second half: {half[0][1]:.1f} -> {half[-1][1]:.1f} MiB ({growth:+.1f} MiB over "
        f"{half[-1][0] - half[0][0]:.0f} s); peak {max(r for _, r in points):.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
