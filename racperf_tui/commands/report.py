"""``racperf report ID... [-o FILE.html | FILE.md] [--criteria FILE] [--data-dir DIR]``: one
file of the runs that a vendor or a change board reads without racperf (docs/REPORT.md).
``racperf report [DEVICE...] --from PATH... [-o FILE]``: the same kind of file of an iostat
archive (OSWatcher, ExaWatcher, sar -d, iostat -x logs), judged as ``iostat --from --summary``.

HTML (the default, ``racperf-report-ID.html`` in the current directory): one self-contained
file, inline CSS and SVG charts, a Content-Security-Policy that loads nothing. Markdown: its
tables, and its charts as SVG files in ``FILE-charts/`` beside it.

Exit status: 0 written (its path printed); 1 no run with an id given, or no store; 2 the store
or the criteria file cannot be used, a run cannot be reported (failed, or no figure yet), the
output cannot be written, an archive path is missing or holds no report; 5 written, and a
criterion did not pass. An archive's report is written with exit 0 even when lines were skipped
(they are listed in it, and on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from racperf_tui.commands.iostat_history import add_from_argument
from racperf_tui.core.criteria import CriteriaError, Criterion, load_criteria
from racperf_tui.core.disks.saturation import SaturationRules
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.store import NoStore, RunNotFound, Store, StoreError
from racperf_tui.reporting.archive_contents import gather_archive
from racperf_tui.reporting.archive_render import default_archive_report_name, write_archive_report
from racperf_tui.reporting.contents import ReportRefused
from racperf_tui.reporting.render import ReportError, check_writable, default_report_name, report_kind, write_report

#: written, and a criterion did not pass in every run (as ``racperf runs compare``)
EXIT_CRITERIA_NOT_MET = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "One file of recorded runs for a vendor or a sign-off: the verdict, each run's figures, "
        "percentiles and charts, its devices' iostat, the comparison, and the test conditions. With "
        "--from PATH: the same of an iostat archive (docs/REPORT.md)."
    )
    parser.add_argument(
        "run_ids",
        nargs="*",
        metavar="ID|DEVICE",
        help="the runs ('racperf runs' lists them); with --from, the devices to report (default all)",
    )
    add_from_argument(parser, "report an iostat archive instead of runs, judged as 'iostat --from --summary'")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default=None,
        help="FILE.html (self-contained) or FILE.md (charts beside it); default racperf-report-ID.html "
        "(racperf-archive-report.html with --from) here",
    )
    parser.add_argument("--criteria", metavar="FILE", default=None, help="acceptance criteria, pass or fail per run")
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="where runs are stored (default $RACPERF_DATA_DIR or ~/.local/share/racperf)",
    )


def run(args: argparse.Namespace) -> int:
    if args.from_paths:
        return _archive_report(args)
    if not args.run_ids:
        return _say("give the ids of runs ('racperf runs' lists them), or --from PATH for an iostat archive", 2)
    if not all(one.isdigit() for one in args.run_ids):
        return _say(f"a run id is a number: {' '.join(a for a in args.run_ids if not a.isdigit())}", 2)
    args.run_ids = [int(one) for one in args.run_ids]
    output = Path(args.output) if args.output else Path(default_report_name(args.run_ids))
    criteria: list[Criterion] = []
    try:
        report_kind(output)
        if args.criteria:
            criteria = load_criteria(args.criteria)
        data_dir = resolve_data_dir(args.data_dir, create=False)
        store = Store.open(data_dir, read_only=True)
    except (CriteriaError, ReportError) as exc:
        return _say(exc, 2)
    except NoStore as exc:
        return _say(exc, 1)
    except (OSError, StoreError) as exc:
        return _say(exc, 2)
    with store:
        try:
            report = write_report(store, args.run_ids, output, criteria)
        except RunNotFound as exc:
            return _say(f"no run with id {exc.args[0]} in {data_dir}", 1)
        except (ReportRefused, ReportError, StoreError) as exc:
            return _say(exc, 2)
    for unfinished in (run for run in report.runs if run.unfinished):
        print(
            f"racperf report: run {unfinished.record.id} is still {unfinished.record.state.value}: "
            "reported as far as it went, and marked so",
            file=sys.stderr,
        )
    print(output)
    return EXIT_CRITERIA_NOT_MET if report.outcome == "FAIL" else 0


def _archive_report(args: argparse.Namespace) -> int:
    if args.criteria:
        return _say("--criteria judges runs; an archive is judged by the saturation rule", 2)
    output = Path(args.output) if args.output else Path(default_archive_report_name())
    devices = frozenset(args.run_ids) if args.run_ids else None
    try:
        report_kind(output)
        check_writable(output)  # before reading what may be gigabytes
        report = gather_archive(list(args.from_paths), devices, SaturationRules.from_env())
        write_archive_report(report, output)
    except (ReportRefused, ReportError, ValueError) as exc:
        return _say(exc, 2)
    for problem in report.problems:
        print(f"racperf report: skipped {problem}", file=sys.stderr)
    print(output)
    return 0


def _say(what: object, status: int) -> int:
    print(f"racperf report: {what}", file=sys.stderr)
    return status
