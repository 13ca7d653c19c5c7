"""``racperf iostat --from PATH...``: saved iostat outputs and OSWatcher/ExaWatcher archives
printed as racperf iostat prints the present (core/disks/history reads them)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from racperf_tui.commands.iostat_summary import format_summary_text, summary_dict
from racperf_tui.core.disks.history.judgement import ArchiveJudge, HostClock, verdict_dict
from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport, Problem
from racperf_tui.core.disks.history.summary import ArchiveSummary
from racperf_tui.core.disks.iostat_math import COLUMNS
from racperf_tui.core.disks.saturation import OK, SaturationRules, Verdict
from racperf_tui.core.textio import strict_json

#: the width of each figure column of racperf's iostat layout (live and --from alike)
COLUMN_WIDTHS: tuple[int, ...] = (8, 8, 10, 10, 8, 8, 9, 9, 8, 8, 8, 7, 7)


def add_from_argument(parser: argparse.ArgumentParser, what: str = "read saved outputs instead of /proc") -> None:
    parser.add_argument(
        "--from",
        dest="from_paths",
        metavar="PATH",
        nargs="+",
        action="extend",
        type=Path,
        default=None,
        help=f"{what}: iostat -x or sar -d text of any sysstat "
        "(with or without -t), OSWatcher/ExaWatcher archives (a file, a directory with oswiostat/, "
        ".gz .bz2 .zip .tar.gz); name DEVICEs before --from",
    )


def format_text(
    report: HistoryReport,
    megabytes: bool = False,
    verdicts: list[Verdict] | None = None,
    clock: HostClock | None = None,
) -> str:
    """A report in racperf iostat's layout, under a line with its host and own time; with
    ``verdicts`` (--saturation) a saturation column and a line per device not ok, as live."""
    names = list(COLUMNS)
    scale = [1.0] * len(COLUMNS)
    if megabytes:
        names[2], names[3] = "rMB/s", "wMB/s"
        scale[2] = scale[3] = 1 / 1024
    when = report.time.isoformat(timespec="seconds") if report.time is not None else "(no time in the file)"
    title = f"{report.host or '(host unknown)'}  {when}" + ("  since boot" if report.since_boot else "")
    header = "Device       " + "".join(f"{name:>{w + 1}}" for name, w in zip(names, COLUMN_WIDTHS))
    lines = [title, header + (f" {'saturation':<10}" if verdicts is not None else "")]
    notes: list[str] = []
    for index, row in enumerate(report.rows):
        cells = "".join(
            f" {'-':>{w}}" if value is None else f" {value * s:{w}.2f}"
            for value, s, w in zip(row.values, scale, COLUMN_WIDTHS)
        )
        line = f"{row.device:<13}{cells}"
        if verdicts is not None:
            verdict = verdicts[index]
            line = f"{line} {verdict.level:<10}".rstrip()
            if verdict.level != OK:
                notes.append(f"{'!' if verdict.flagged else ' '} {_flag_text(row.device, verdict, clock)}")
        lines.append(line)
    return "\n".join(lines + notes) + "\n\n"


def _flag_text(device: str, verdict: Verdict, clock: HostClock | None) -> str:
    """live's flag line, with the archive's own time of the level's start (none without times)"""
    began = clock.time_of(verdict.since) if clock is not None else None
    since = f" since {began.isoformat(timespec='seconds')}" if began is not None else ""
    return f"{device} {verdict.level}{since}: {verdict.reason}"


def format_json(report: HistoryReport, verdicts: list[Verdict] | None, clock: HostClock | None) -> str:
    """A report as one JSON line; with verdicts, each device's {"saturation": ...} as live."""
    if verdicts is None or clock is None:
        return report.json_text()
    return report.json_text([f', "saturation": {strict_json.dumps(verdict_dict(v, clock))}' for v in verdicts])


def run_from_history(args: argparse.Namespace) -> int:
    """Every report of the paths, in time order per host; problems on stderr (exit 1)."""
    devices = [a for a in args.args if a != "ALL"]
    numbers = [a for a in devices if a.replace(".", "", 1).isdigit()]
    if numbers:
        print(
            f"racperf iostat: --from reads saved reports: no interval or count ({' '.join(numbers)})", file=sys.stderr
        )
        return 2
    judge: ArchiveJudge | None = None
    if args.saturation or args.summary:
        try:
            judge = ArchiveJudge(SaturationRules.from_env())
        except ValueError as exc:
            print(f"racperf iostat: {exc}", file=sys.stderr)
            return 2
    summary = ArchiveSummary() if args.summary else None
    status = 0
    out = sys.stdout
    for item in read_history(list(args.from_paths), frozenset(devices) if devices else None):
        if isinstance(item, Problem):
            print(f"racperf iostat: {item}", file=sys.stderr)
            status = 1
            continue
        verdicts = judge.judge(item) if judge is not None else None
        if summary is not None and verdicts is not None:
            summary.add(item, verdicts)
            continue
        clock = judge.clock(item.host) if judge is not None else None
        out.write(
            format_json(item, verdicts, clock) + "\n"
            if args.json
            else format_text(item, megabytes=args.m, verdicts=verdicts, clock=clock)
        )
    if summary is not None and judge is not None:
        summary.take_episodes(judge.finish())
        if args.json:
            out.write(strict_json.dumps(summary_dict(summary, judge.rules)) + "\n")
        else:
            out.write(format_summary_text(summary, judge.rules))
    out.flush()
    return status
