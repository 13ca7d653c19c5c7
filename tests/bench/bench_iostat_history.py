"""Benchmark: reading saved iostat text (``racperf iostat --from``), MB of text per second.

Target (issue 20): at least 50 MB/s, in bounded memory. Writes an OSWatcher-like hourly file
(``zzz`` markers, banner, avg-cpu blocks, iostat -x reports of sysstat 12.x's 22 columns for
``--devices`` devices) of about ``--mb`` MB, plain and gzip, then times read_history over
each, consuming every report (rows converted to racperf's column set) without keeping them,
and prints MB/s of uncompressed text (wall clock, and per CPU second: on a shared machine
the wall clock counts other processes' time) and the peak resident memory growth.

With ``--files N`` the archive is a directory of N hourly files of one host (OSWatcher's
``oswiostat/racnode1_iostat_YY.MM.DD.HH00.dat[.gz]``), ``--mb`` in all. With ``--command``
the command itself is measured too, in a child process whose CPU time and peak RSS come from
its rusage: ``racperf iostat --from DIR --json`` (every report printed, to /dev/null) and
``racperf iostat --from DIR --summary`` (every device judged: the saturation rule, the
percentiles, the hours). ``--mb 2000 --files 20 --command`` is the issue's 2 GB directory.

    .venv/bin/python tests/bench/bench_iostat_history.py [--mb 100] [--devices 64] [--files 1]
        [--command] [--only plain|gzip] [--json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport

HEADER = (
    "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await"
    " wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util"
)


FIRST_HOUR = dt.datetime(2020, 6, 1, 10, 0)


def write_archive(path: Path, megabytes: float, devices: int, start: dt.datetime = FIRST_HOUR) -> int:
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


def write_directory(root: Path, megabytes: float, devices: int, files: int, packed: bool) -> int:
    """An OSWatcher directory of ``files`` hourly files (gzip-compressed with ``packed``); text bytes."""
    folder = root / "oswiostat"
    folder.mkdir(parents=True)
    total = 0
    for hour in range(files):
        start = FIRST_HOUR + dt.timedelta(hours=hour)
        plain = folder / f"racnode1_iostat_{start:%y.%m.%d.%H}00.dat"
        total += write_archive(plain, megabytes / files, devices, start)
        if packed:
            with open(plain, "rb") as src, gzip.open(plain.with_suffix(".dat.gz"), "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst)
            plain.unlink()
    return total


def time_command(path: Path, *options: str) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS kB) of ``racperf iostat --from PATH OPTIONS``, output discarded."""
    argv = [sys.executable, "-m", "racperf_tui.cli", "iostat", *options, "--from", str(path)]
    began = time.perf_counter()
    with open(os.devnull, "w") as sink:
        child = subprocess.Popen(argv, stdout=sink, stderr=subprocess.PIPE)
        _pid, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - began
    if child.returncode != 0:
        said = child.stderr.read().decode() if child.stderr else ""
        raise SystemExit(f"{' '.join(argv)}: exit {child.returncode}: {said}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


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
    parser.add_argument("--files", type=int, default=1, help="hourly files of a directory archive (1: one file)")
    parser.add_argument("--command", action="store_true", help="also time racperf iostat --from --json / --summary")
    parser.add_argument("--only", choices=("plain", "gzip"), default=None, help="one of the two archives")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for label in [args.only] if args.only else ["plain", "gzip"]:
            root = Path(tmp) / label
            if args.files > 1:
                size = write_directory(root, args.mb, args.devices, args.files, packed=label == "gzip")
                path = root
            else:
                root.mkdir()
                path = root / "racnode1_iostat_20.06.01.1000.dat"
                size = write_archive(path, args.mb, args.devices)
                if label == "gzip":
                    with open(path, "rb") as src, gzip.open(path.with_suffix(".dat.gz"), "wb", compresslevel=6) as dst:
                        shutil.copyfileobj(src, dst)
                    path.unlink()
                    path = path.with_suffix(".dat.gz")
            elapsed, cpu, reports, grown_kb = time_read(path)
            measured = [("read_history", elapsed, cpu, f"peak RSS growth {grown_kb / 1024:.1f} MB", reports)]
            if args.command:
                for mode in ("--json", "--summary"):
                    wall, child_cpu, peak_kb = time_command(path, mode)
                    measured.append((f"iostat {mode}", wall, child_cpu, f"peak RSS {peak_kb / 1024:.1f} MB", reports))
            for what, wall, used, memory, count in measured:
                results.append(
                    {
                        "file": label,
                        "what": what,
                        "text_mb": round(size / 1e6, 1),
                        "seconds": round(wall, 2),
                        "mb_per_s": round(size / 1e6 / wall, 1),
                        "mb_per_cpu_s": round(size / 1e6 / used, 1),
                        "reports": count,
                        "memory": memory,
                    }
                )
    if args.json:
        print(json.dumps(results))
    else:
        for r in results:
            print(
                f"{r['file']:>5} {r['what']:<16}: {r['text_mb']} MB of text, {r['reports']} reports in "
                f"{r['seconds']} s = "
                f"{r['mb_per_s']} MB/s ({r['mb_per_cpu_s']} MB per CPU second); {r['memory']}"
            )


if __name__ == "__main__":
    main()
