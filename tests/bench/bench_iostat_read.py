"""Benchmark: reading plus computing a 2,000-device /proc/diskstats, per sample.

Target (issue 2): <= 2 ms per sample. Generates a 2,000-device root (1,000 disks with one
partition each, 20-field lines, realistic counter sizes) under a temp dir, then, for several
shares of devices whose counters change between samples, rewrites the file (not timed) and
times ``IostatSampler.sample()`` (read /proc/diskstats + /proc/uptime, parse, compute every
figure of every device: -p ALL, so all 2,000 rows). Prints the median per sample of:

- ``lines``: the line-by-line path alone (``use_columns=False``: the code before numpy);
- ``sample``: the sampler as used (the column path: whole file at once with numpy);
- ``+rows``: the same plus building every IostatRow object (``report.rows``, made on first
  access: what a consumer that reads every row pays in total).

"100%+1 longer": one counter gains a digit every sample (~1 a second on a big busy host:
counters crossing 10**k, 32-bit ticks wrapping), so that line's fields and every later
line's offsets move: the column path lays out that line again and shifts the others.
"100%+50 longer": 50 lines a sample, beyond the 16 it shifts: the whole file is laid out
again (the column path's worst case).

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

from racperf_tui.core.disks.iostat_sampler import IostatSampler

N_DEVICES = 2000
#: (label, share of devices whose counters move, lines whose length grows each sample)
CASES = (
    ("0%", 0.0, 0),
    ("5%", 0.05, 0),
    ("25%", 0.25, 0),
    ("100%", 1.0, 0),
    ("100%+1 longer", 1.0, 1),
    ("100%+50 longer", 1.0, 50),
)


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
    (root / "proc/diskstats").write_text(
        "".join(f"{major:4d} {minor:7d} {name} {' '.join(map(str, stats))}\n" for major, minor, name, stats in devices)
    )


def bench(
    changed_share: float, longer_lines: int, samples: int, rng: random.Random, use_columns: bool, touch_rows: bool
) -> tuple[float, float]:
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
        sampler = IostatSampler([root], partitions=True, use_columns=use_columns)
        sampler.sample()
        times, cpu_times = [], []
        for _ in range(samples):
            uptime += 100
            for device in rng.sample(devices, int(len(devices) * changed_share)):
                stats = device[3]
                for i in (0, 1, 2, 3, 4, 6, 7, 9, 10):
                    stats[i] += rng.randrange(1, 500)
            for device in rng.sample(devices, longer_lines):
                device[3][2] *= 10  # rd_sectors: one more digit
            write(root, devices, uptime)
            start, start_cpu = time.perf_counter(), time.process_time()
            report = sampler.sample()
            if touch_rows:
                report.rows  # noqa: B018  (made on first access)
            cpu_times.append((time.process_time() - start_cpu) * 1000)
            times.append((time.perf_counter() - start) * 1000)
            assert len(report.rows) == N_DEVICES and not report.errors
        if use_columns:
            assert sampler.column_samples == samples  # the path measured is the one meant
        return statistics.median(times), statistics.median(cpu_times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    for label, share, longer in CASES:
        figures: dict[str, float] = {}
        for mode, use_columns, touch in (("lines", False, False), ("sample", True, False), ("+rows", True, True)):
            samples = args.samples if use_columns else max(args.samples // 3, 5)
            wall, cpu = bench(share, longer, samples, random.Random(1), use_columns, touch)
            figures[f"{mode}_wall_ms"] = round(wall, 3)
            figures[f"{mode}_cpu_ms"] = round(cpu, 3)
        results[f"{label}_changed"] = figures
    if args.json:
        print(json.dumps({"bench": "iostat_read_2000_devices_ms_per_sample", **results}))
        return 0
    print(f"read + compute, {N_DEVICES} devices (-p ALL, all rows), median ms per sample, wall / CPU (target <= 2 ms):")
    print(f"  {'changed':>14} | {'lines (before)':>15} | {'sample':>13} | {'sample+rows':>13}")
    for key, f in results.items():
        print(
            f"  {key.removesuffix('_changed'):>14}"
            f" | {f['lines_wall_ms']:6.2f} / {f['lines_cpu_ms']:6.2f}"
            f" | {f['sample_wall_ms']:5.2f} / {f['sample_cpu_ms']:5.2f}"
            f" | {f['+rows_wall_ms']:5.2f} / {f['+rows_cpu_ms']:5.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
