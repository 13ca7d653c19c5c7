"""``racperf report ID... [-o FILE.html | FILE.md] [--criteria FILE] [--data-dir DIR]``: one
file of the runs that a vendor or a change board reads without racperf (docs/REPORT.md).

HTML (the default, ``racperf-report-ID.html`` in the current directory): one self-contained
file, inline CSS and SVG charts, a Content-Security-Policy that loads nothing. Markdown: its
tables, and its charts as SVG files in ``FILE-charts/`` beside it.

Exit status: 0 written (its path printed); 1 no run with an id given, or no store; 2 the store
or the criteria file cannot be used, a run cannot be reported (failed, or no figure yet), the
output cannot be written; 5 written, and a criterion did not pass.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from racperf_tui.core.criteria import CriteriaError, Criterion, load_criteria
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.store import NoStore, RunNotFound, Store, StoreError
from racperf_tui.reporting.contents import ReportRefused
from racperf_tui.reporting.render import ReportError, default_report_name, report_kind, write_report

#: written, and a criterion did not pass in every run (as ``racperf runs compare``)
EXIT_CRITERIA_NOT_MET = 5


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "One file of recorded runs for a vendor or a sign-off: the verdict, each run's figures, "
        "percentiles and charts, its devices' iostat, the comparison, and the test conditions."
    )
    parser.add_argument("run_ids", type=int, nargs="+", metavar="ID", help="the runs ('racperf runs' lists them)")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default=None,
        help="FILE.html (self-contained) or FILE.md (charts beside it); default racperf-report-ID.html here",
    )
    parser.add_argument("--criteria", metavar="FILE", default=None, help="acceptance criteria, pass or fail per run")
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="where runs are stored (default $RACPERF_DATA_DIR or ~/.local/share/racperf)",
    )


def run(args: argparse.Namespace) -> int:
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


def _say(what: object, status: int) -> int:
    print(f"racperf report: {what}", file=sys.stderr)
    return status
