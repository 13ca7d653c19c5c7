"""Benchmark: reading plus computing a 2,000-device /proc/diskstats, per sample.

Target (issue 2): <= 2 ms per sample. Generates a 2,000-device root (1,000 disks with one
partition each, 20-field lines, realistic counter sizes) under a temp dir, then, for several
shares of devices whose counters change between samples, rewrites the file (not timed) and
times ``IostatSampler.sample()`` (read /proc/diskstats + /proc/uptime, parse, compute every
row: -p ALL, so all 2,000 rows). Prints the median per sample.

    .venv/bin/python tests/bench/bench_iostat_read.py [--samples N] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from racperf_tui.core.iostat import IostatSampler

N_DEVICES = 2000


def make_devices(rng: random.Random) -> list[list]:
    devices = []
    for i in range(N_DEVICES // 2):
        name = f"sd{chr(97 + i // 676)}{chr(97 + i // 26 % 26)}{chr(97 + i % 26)}"
        for suffix, minor in (("", 0), ("1", 1)):
            stats = [rng.randrange(10**5, 10**9) for _ in range(17)]
            stats[8] = rng.randrange(0, 4)  # in flight
            devices.append([8 + i // 16, (i % 16) * 16 + minor, name + suffix, stats])
    return devices


def write(root: Path, devices: list[list], uptime_cs: int) -> None:
    (root / "proc/uptime").write_text(f"{uptime_cs // 100}.{uptime_cs % 100:02d} 1.00\n")
    (root / "proc/diskstats").write_text("".join(
        f"{major:4d} {minor:7d} {name} {' '.join(map(str, stats))}\n"
        for major, minor, name, stats in devices))


def bench(changed_share: float, samples: int, rng: random.Random) -> tuple[float, float]:
    """Median (wall, CPU) ms per sample when `changed_share` of the devices did I/O in the
    interval. CPU time (this process only) is the steadier figure on a shared machine."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "proc").mkdir()
        block = root / "sys/block"
        devices = make_devices(rng)
        for _, _, name, _ in devices:
            if not name.endswith("1"):
                (block / name).mkdir(parents=True)
        uptime = 10_000_000
        write(root, devices, uptime)
        sampler = IostatSampler([root], partitions=True)
        sampler.sample()
        times, cpu_times = [], []
        for _ in range(samples):
            uptime += 100
            for device in rng.sample(devices, int(len(devices) * changed_share)):
                stats = device[3]
                for i in (0, 1, 2, 3, 4, 6, 7, 9, 10):
                    stats[i] += rng.randrange(1, 500)
            write(root, devices, uptime)
            start, start_cpu = time.perf_counter(), time.process_time()
            report = sampler.sample()
            cpu_times.append((time.process_time() - start_cpu) * 1000)
            times.append((time.perf_counter() - start) * 1000)
            assert len(report.rows) == N_DEVICES and not report.errors
        return statistics.median(times), statistics.median(cpu_times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(1)
    results = {}
    for share in (0.0, 0.05, 0.25, 1.0):
        wall, cpu = bench(share, args.samples, rng)
        results[f"{int(share * 100)}%_changed"] = {"wall_ms": round(wall, 3), "cpu_ms": round(cpu, 3)}
    if args.json:
        print(json.dumps({"bench": "iostat_read_2000_devices_ms_per_sample", **results}))
    else:
        print(f"read + compute, {N_DEVICES} devices (-p ALL, all rows), median per sample "
              "(target <= 2 ms):")
        for key, value in results.items():
            print(f"  {key:>13}: wall {value['wall_ms']:7.3f} ms   CPU {value['cpu_ms']:7.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
