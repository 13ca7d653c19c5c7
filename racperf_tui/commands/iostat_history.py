"""``racperf iostat --from PATH...``: saved iostat outputs and OSWatcher/ExaWatcher archives
printed as racperf iostat prints the present (core/disks/history reads them)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport, Problem
from racperf_tui.core.disks.iostat_math import COLUMNS
from racperf_tui.core.textio import strict_json

#: the width of each figure column of racperf's iostat layout (live and --from alike)
COLUMN_WIDTHS: tuple[int, ...] = (8, 8, 10, 10, 8, 8, 9, 9, 8, 8, 8, 7, 7)


def add_from_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="from_paths",
        metavar="PATH",
        nargs="+",
        action="extend",
        type=Path,
        default=None,
        help="read saved outputs instead of /proc: iostat -x or sar -d text of any sysstat "
        "(with or without -t), OSWatcher/ExaWatcher archives (a file, a directory with oswiostat/, "
        ".gz .bz2 .zip .tar.gz); name DEVICEs before --from",
    )


def format_text(report: HistoryReport, megabytes: bool = False) -> str:
    """A report in racperf iostat's layout, under a line with its host and own time."""
    names = list(COLUMNS)
    scale = [1.0] * len(COLUMNS)
    if megabytes:
        names[2], names[3] = "rMB/s", "wMB/s"
        scale[2] = scale[3] = 1 / 1024
    when = report.time.isoformat(timespec="seconds") if report.time is not None else "(no time in the file)"
    title = f"{report.host or '(host unknown)'}  {when}" + ("  since boot" if report.since_boot else "")
    lines = [title, "Device       " + "".join(f"{name:>{w + 1}}" for name, w in zip(names, COLUMN_WIDTHS))]
    for row in report.rows:
        cells = "".join(
            f" {'-':>{w}}" if value is None else f" {value * s:{w}.2f}"
            for value, s, w in zip(row.values, scale, COLUMN_WIDTHS)
        )
        lines.append(f"{row.device:<13}{cells}")
    return "\n".join(lines) + "\n\n"


def run_from_history(args: argparse.Namespace) -> int:
    """Every report of the paths, in time order per host; problems on stderr (exit 1)."""
    devices = [a for a in args.args if a != "ALL"]
    numbers = [a for a in devices if a.replace(".", "", 1).isdigit()]
    if numbers:
        print(
            f"racperf iostat: --from reads saved reports: no interval or count ({' '.join(numbers)})", file=sys.stderr
        )
        return 2
    status = 0
    out = sys.stdout
    for item in read_history(list(args.from_paths), frozenset(devices) if devices else None):
        if isinstance(item, Problem):
            print(f"racperf iostat: {item}", file=sys.stderr)
            status = 1
            continue
        out.write(strict_json.dumps(item.as_dict()) + "\n" if args.json else format_text(item, megabytes=args.m))
    out.flush()
    return status
