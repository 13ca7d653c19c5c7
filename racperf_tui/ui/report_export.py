"""``e`` in the Runs tab (the marked runs, else the highlighted one) and the result view: the
report written from the dashboard, HTML into the data dir's ``reports/`` (the dashboard's
working directory is wherever it was started; the data dir is where the runs are), judged by
the criteria file the compare screen remembers, and a notification saying where.

Written by a thread worker with its own read-only store connection: the report reads every
sample and draws its charts, which the event loop must not wait for. Imported on first use
(ui/deferred.py): the dashboard starts without Jinja2 and pygal.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widget import Widget

from racperf_tui.core.criteria import CriteriaError
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.store import RunNotFound, Store, StoreError
from racperf_tui.reporting.contents import ReportRefused
from racperf_tui.reporting.render import ReportError, default_report_name
from racperf_tui.reporting.render import write_report as write_report_file
from racperf_tui.ui.compare_data import read_criteria, remembered_criteria_file

#: the folder of the data dir the dashboard writes reports into
REPORTS_DIR = "reports"


def write_report(widget: Widget, data_dir: str | None, run_ids: Sequence[int]) -> None:
    """Write the report of ``run_ids`` in the background; the app says where, or why not."""
    app = widget.app
    ids = list(run_ids)

    def work() -> None:
        try:
            directory = resolve_data_dir(data_dir, create=False)
            path = directory / REPORTS_DIR / default_report_name(ids)
            path.parent.mkdir(exist_ok=True)
            remembered = remembered_criteria_file(data_dir)
            criteria = read_criteria(remembered) if remembered else []
            with Store.open(directory, read_only=True) as store:
                report = write_report_file(store, ids, path, criteria)
        except RunNotFound as exc:
            app.call_from_thread(app.notify, f"report: no run {exc.args[0]}", severity="error")
            return
        except (ReportRefused, ReportError, CriteriaError, StoreError, OSError) as exc:
            app.call_from_thread(app.notify, f"report: {exc}", severity="error", timeout=10)
            return
        going = " (still running: as far as it went)" if any(run.unfinished for run in report.runs) else ""
        verdict = f", {report.outcome}" if report.outcome else ""
        app.call_from_thread(app.notify, f"report written{going}{verdict}: {path}", timeout=15)

    widget.run_worker(work, thread=True, group="report", exit_on_error=False)
