"""Benchmark: reading saved iostat text (``racperf iostat --from``), MB of text per second.

Target (issue 20): at least 50 MB/s, in bounded memory. Writes an OSWatcher-like hourly file
(``zzz`` markers, banner, avg-cpu blocks, iostat -x reports of sysstat 12.x's 22 columns for
``--devices`` devices) of about ``--mb`` MB, plain and gzip, then times read_history over
each, consuming every report (rows converted to racperf's column set) without keeping them,
and prints MB/s of uncompressed text (wall clock, and per CPU second: on a shared machine
the wall clock counts other processes' time) and the peak resident memory growth.

    .venv/bin/python tests/bench/bench_iostat_history.py [--mb 100] [--devices 64] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport

HEADER = (
    "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await"
    " wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util"
)


def write_archive(path: Path, megabytes: float, devices: int) -> int:
    start = dt.datetime(2020, 6, 1, 10, 0)
    rows = [
        f"sd{i:<13} {6.9 + i:7.2f} {222.14 * i:9.2f}     0.39   5.38   12.58    32.21    1.69     57.08     1.36"
        "  44.55    9.61    33.71    0.00      0.00     0.00   0.00    0.00     0.00    0.00    0.00    0.10   0.46"
        for i in range(devices)
    ]
    report = "\n".join(
        [
            "avg-cpu:  %user   %nice %system %iowait  %steal   %idle",
            "  1.49 39.91 1.67 0.94 0.00 56.00",
            "",
            HEADER,
            *rows,
            "",
            "",
        ]
    )
    written = 0
    snapshot = 0
    with open(path, "w") as out:
        out.write("Linux OSW v8.1.2\nSNAP_INTERVAL 30\n")
        while written < megabytes * 1e6:
            when = start + dt.timedelta(seconds=30 * snapshot)
            head = (
                f"zzz ***{when:%a %b} {when.day:2d} {when:%H:%M:%S} UTC {when:%Y}\n"
                f"Linux 5.4.17 (racnode1) \t{when:%m/%d/%Y} \t_x86_64_\t(16 CPU)\n\n"
            )
            block = head + report * 3
            out.write(block)
            written += len(block)
            snapshot += 1
    return path.stat().st_size


def time_read(path: Path) -> tuple[float, float, int, int]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began, cpu_began = time.perf_counter(), time.process_time()
    reports = rows = 0
    for item in read_history([path]):
        if isinstance(item, HistoryReport):
            reports += 1
            rows += len(item.rows)
        else:
            raise SystemExit(f"unexpected problem: {item}")
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu_began
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    return elapsed, cpu, reports, max(grown_kb, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--devices", type=int, default=64)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "racnode1_iostat_20.06.01.1000.dat"
        size = write_archive(plain, args.mb, args.devices)
        packed = plain.with_suffix(".dat.gz")
        with open(plain, "rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        for label, path in (("plain", plain), ("gzip", packed)):
            elapsed, cpu, reports, grown_kb = time_read(path)
            results.append(
                {
                    "file": label,
                    "text_mb": round(size / 1e6, 1),
                    "seconds": round(elapsed, 2),
                    "mb_per_s": round(size / 1e6 / elapsed, 1),
                    "mb_per_cpu_s": round(size / 1e6 / cpu, 1),
                    "reports": reports,
                    "rss_growth_mb": round(grown_kb / 1024, 1),
                }
            )
    if args.json:
        print(json.dumps(results))
    else:
        for r in results:
            print(
                f"{r['file']:>5}: {r['text_mb']} MB of text, {r['reports']} reports in {r['seconds']} s = "
                f"{r['mb_per_s']} MB/s ({r['mb_per_cpu_s']} MB per CPU second); peak RSS growth {r['rss_growth_mb']} MB"
            )


if __name__ == "__main__":
    main()
