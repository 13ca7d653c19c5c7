"""``e`` in the Runs tab and the result view: the report of a run written from the dashboard,
HTML into the data dir's ``reports/`` (the dashboard's working directory is wherever it was
started; the data dir is where the runs are), and a notification saying where.

Written by a thread worker with its own read-only store connection: the report reads every
sample and draws its charts, which the event loop must not wait for. Imported on first use
(ui/deferred.py): the dashboard starts without Jinja2 and pygal.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.widget import Widget

from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.store import RunNotFound, Store, StoreError
from racperf_tui.reporting.contents import ReportRefused
from racperf_tui.reporting.render import ReportError, default_report_name
from racperf_tui.reporting.render import write_report as write_report_file

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
            with Store.open(directory, read_only=True) as store:
                report = write_report_file(store, ids, path)
        except RunNotFound as exc:
            app.call_from_thread(app.notify, f"report: no run {exc.args[0]}", severity="error")
            return
        except (ReportRefused, ReportError, StoreError, OSError) as exc:
            app.call_from_thread(app.notify, f"report: {exc}", severity="error", timeout=10)
            return
        going = " (still running: as far as it went)" if any(run.unfinished for run in report.runs) else ""
        app.call_from_thread(app.notify, f"report written{going}: {path}", timeout=15)

    widget.run_worker(work, thread=True, group="report", exit_on_error=False)
