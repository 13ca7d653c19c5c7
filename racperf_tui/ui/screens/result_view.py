"""The result of a finished run: fio's summary in tables, its samples in charts."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Label, Static, TabbedContent, TabPane

from racperf_tui.core.store import RunRecord
from racperf_tui.core.tool import ToolDescription
from racperf_tui.ui.runs_data import description_of, format_duration, open_store
from racperf_tui.ui.shown import markup
from racperf_tui.ui.widgets.chart import Chart, Series
from racperf_tui.ui.widgets.tool_panels import result_panels

DIRECTIONS = ("read", "write", "trim")
LATENCY_KINDS = (("slat_us", "slat"), ("clat_us", "clat"), ("lat_us", "lat"))
#: job keys already shown in their own tables
_SHOWN_JOB_KEYS = {"name", "read", "write", "trim", "sync", "error", "job_options", "job options"}
#: fio's three I/O depth histograms, shown side by side
_DEPTH_KEYS = (("iodepth_pct", "depth"), ("iodepth_submit_pct", "submit"), ("iodepth_complete_pct", "complete"))
_JOB_BLOCK_TITLES = {
    "cpu": "CPU",
    "lat_dist_pct": "latency distribution (% of I/Os <= µs)",
    "issued": "I/Os issued",
    "options": "job options",
}
#: per-direction blocks shown under Details (fio's bandwidth and IOPS statistics)
_DIRECTION_DETAIL_KEYS = ("bw_stats_kib_s", "iops_stats")
#: charts at most (iperf3 records up to eight quantities)
MAX_CHARTS = 6


def _num(value: Any, digits: int = 1) -> str:
    """A number with fixed decimals (integers stay integers); '-' when absent."""
    if value is None or value == "":
        return "-"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    try:
        return f"{float(value):.{digits}f}"
    except (TypeError, ValueError):
        return str(value)


def _active(direction: Mapping[str, Any] | None) -> bool:
    """Did the job do any I/O in this direction? (fio reports every direction, mostly zeros)."""
    if not direction:
        return False
    return bool(direction.get("iops") or direction.get("io_kib") or direction.get("bw_kib_s"))


class ResultView(Screen[None]):
    """Tabs: Summary (IOPS, bandwidth, latency), Percentiles, Charts, Details (CPU, depths,
    latency distribution, disk util, command line)."""

    DEFAULT_CSS = """
    ResultView {
        layout: vertical;
        overflow: hidden;
    }
    ResultView > TabbedContent {
        height: 1fr;
    }
    ResultView TabPane {
        height: 1fr;
        padding: 0;
    }
    ResultView #result-title {
        width: 100%;
        height: auto;
        background: $boost;
        padding: 0 1;
    }
    ResultView DataTable {
        height: auto;
        max-height: 16;
        margin-bottom: 1;
    }
    /* fio's 17 percentiles (to 99.99) and their header: 16 lines stopped at 99.90 */
    ResultView #table-percentiles {
        max-height: 100%;
        margin-bottom: 0;
    }
    ResultView .section {
        text-style: bold;
        color: $accent;
        height: 1;
    }
    ResultView #result-message {
        height: auto;
        color: $warning;
    }
    """

    HELP_TITLE = "Run result"

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back to the runs list"),
        Binding(
            "left",
            "previous_tab",
            "Prev tab",
            show=False,
            tooltip="Previous tab (Summary, Percentiles, Charts, Details)",
        ),
        Binding("right", "next_tab", "Next tab", show=False, tooltip="Next tab"),
    ]

    def __init__(self, data_dir: Any, run_id: Any) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.run_id = run_id
        self.run: RunRecord | None = None
        self.description = ToolDescription()
        self.result: dict[str, Any] | None = None
        self.samples: list[tuple[float, dict[str, float]]] = []
        self.load_error = ""
        self._load()

    def _load(self) -> None:
        """Read run, result and samples once: a finished run no longer changes."""
        try:
            store = open_store(self.data_dir)
        except Exception as error:
            self.load_error = f"cannot open the run store: {error}"
            return
        try:
            self.run = store.get_run(self.run_id)
            self.description = description_of(self.run.tool)
            self.result = store.result(self.run_id)
            self.samples = [(sample.t, sample.metrics) for _seq, sample in store.samples(self.run_id, after_seq=0)]
        except KeyError:
            self.load_error = f"no run {self.run_id} in the store"
        finally:
            store.close()

    # ---- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Label(self._title_text(), id="result-title")
        with TabbedContent(initial="tab-summary"):
            with TabPane("Summary", id="tab-summary"):
                with VerticalScroll():
                    yield Static(self._message_text(), id="result-message")
                    # a network tool's result is a list of figures: no IOPS, no µs latency table
                    fio_shaped = self.result is None or bool(self._jobs())
                    yield Label("IOPS and bandwidth" if fio_shaped else "Result", classes="section")
                    yield DataTable(id="table-summary", cursor_type="row")
                    yield Label("Latency (µs)", classes="section", id="label-latency")
                    yield DataTable(id="table-latency", cursor_type="row")
            with TabPane("Percentiles", id="tab-percentiles"):
                with VerticalScroll():
                    yield Label("Completion latency percentiles (µs)", classes="section")
                    yield DataTable(id="table-percentiles", cursor_type="row")
            with TabPane("Charts", id="tab-charts"):
                # filled on mount: fio's two charts, or one per unit of another tool's samples
                yield VerticalScroll(id="charts")
            with TabPane("Details", id="tab-details"):
                with VerticalScroll(id="details"):
                    yield Label("Disk utilisation", classes="section")
                    yield DataTable(id="table-disk-util", cursor_type="row")
                    yield Label("Command line", classes="section")
                    yield Static(self._command_text(), id="result-command", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        if self.result is not None and not self._jobs():
            self.query_one("#label-latency", Label).display = False
            self.query_one("#table-latency", DataTable).display = False
        self._fill_summary()
        self._fill_latency()
        self._fill_percentiles()
        self._fill_disk_util()
        self._mount_job_details()
        self._draw_charts()

    # ---- header ----------------------------------------------------------------------------
    def _title_text(self) -> str:
        if self.load_error:
            return f"[red]{self.load_error}[/red]"
        run = self.run
        started = datetime.fromtimestamp(run.started_at).strftime("%Y-%m-%d %H:%M:%S")
        version = f" {run.tool_version}" if run.tool_version else ""
        return (
            f"[b]run {run.id}[/b]  {markup(run.tool)}{markup(version)} on {markup(run.target or '-')}  "
            f"[b]{run.state.value}[/b]  started {started}  "
            f"took {format_duration(run.duration_s)}  exit {run.exit_status}"
        )

    def _message_text(self) -> str:
        if self.load_error:
            return ""
        parts = []
        if self.run.message:
            parts.append(markup(self.run.message))
        for job in self._jobs():
            if job.get("error"):
                parts.append(f"job {markup(job.get('name', '?'))}: error {markup(job['error'])}")
        messages = (self.result or {}).get("messages")
        if isinstance(messages, list):  # fio's lines; the probe's "messages" is a count
            parts.extend(str(m) for m in messages[:5])
        if self.result is None:
            parts.append("no parsed result for this run (see its raw output with 'racperf runs show')")
        return "\n".join(parts)

    def _command_text(self) -> str:
        if self.run is None:
            return ""
        return shlex.join(str(a) for a in (self.run.argv or [])) or "-"

    # ---- tables ----------------------------------------------------------------------------
    def _jobs(self) -> list[dict[str, Any]]:
        jobs = (self.result or {}).get("jobs")
        return [job for job in jobs if isinstance(job, dict)] if isinstance(jobs, list) else []

    def _fill_summary(self) -> None:
        table = self.query_one("#table-summary", DataTable)
        if self.result is not None and not self._jobs():
            # no per-job result: the tool's figures (its description's labels and units first)
            table.add_columns("", "value")
            for label, value in self.description.result_rows(self.result):
                table.add_row(label, value)
            return
        table.add_columns("job", "dir", "IOPS", "BW MiB/s", "BW KiB/s", "I/O MiB", "runtime s")
        for job in self._jobs():
            for direction in DIRECTIONS:
                figures = job.get(direction)
                if not _active(figures):
                    continue
                table.add_row(
                    str(job.get("name", "?")),
                    direction,
                    _num(figures.get("iops")),
                    _num((figures.get("bw_kib_s") or 0) / 1024, 2),
                    _num(figures.get("bw_kib_s"), 0),
                    _num((figures.get("io_kib") or 0) / 1024, 1),
                    _num((figures.get("runtime_ms") or 0) / 1000, 1),
                    key=f"{job.get('name')}:{direction}",
                )

    def _fill_latency(self) -> None:
        table = self.query_one("#table-latency", DataTable)
        table.add_columns("job", "dir", "kind", "min", "avg", "max", "stdev")
        for job in self._jobs():
            for direction in DIRECTIONS:
                figures = job.get(direction)
                if not _active(figures):
                    continue
                for key, kind in LATENCY_KINDS:
                    lat = figures.get(key) or {}
                    if not lat:
                        continue
                    table.add_row(
                        str(job.get("name", "?")),
                        direction,
                        kind,
                        _num(lat.get("min")),
                        _num(lat.get("mean")),
                        _num(lat.get("max")),
                        _num(lat.get("stdev")),
                    )

    def _fill_percentiles(self) -> None:
        table = self.query_one("#table-percentiles", DataTable)
        columns: list[tuple[str, Mapping[str, Any]]] = []
        for job in self._jobs():
            for direction in DIRECTIONS:
                figures = job.get(direction)
                if _active(figures):
                    percentiles = (figures.get("clat_us") or {}).get("percentiles") or {}
                    if percentiles:
                        columns.append((f"{job.get('name', '?')} {direction}", percentiles))
        table.add_column("pct")
        for name, _ in columns:
            table.add_column(name)
        keys = sorted({k for _, p in columns for k in p}, key=lambda k: float(k))
        for key in keys:
            table.add_row(key, *(_num(p.get(key)) for _, p in columns))

    def _fill_disk_util(self) -> None:
        table = self.query_one("#table-disk-util", DataTable)
        table.add_columns("device", "read ios", "write ios", "util %")
        for disk in (self.result or {}).get("disk_util") or []:
            table.add_row(
                str(disk.get("name", "?")),
                _num(disk.get("read_ios"), 0),
                _num(disk.get("write_ios"), 0),
                _num(disk.get("util_pct"), 2),
            )

    def _mount_job_details(self) -> None:
        """CPU, I/O depths, latency distribution...: whatever else each job carries, as tables.

        fio's summary has many small blocks; showing every block the parser kept (a dict of
        figures, or a dict of such dicts) keeps this view complete without naming them all.
        """
        details = self.query_one("#details", VerticalScroll)
        widgets = []
        for job in self._jobs():
            name = job.get("name", "?")
            depths = {label: job[key] for key, label in _DEPTH_KEYS if isinstance(job.get(key), Mapping)}
            if depths:
                widgets.append(Label(f"{name}: I/O depths (% of I/Os)", classes="section"))
                widgets.append(_depth_table(depths))
            for key, value in job.items():
                if key in _SHOWN_JOB_KEYS or key in dict(_DEPTH_KEYS) or not isinstance(value, Mapping) or not value:
                    continue
                title = _JOB_BLOCK_TITLES.get(key, key.replace("_", " "))
                widgets.append(Label(f"{name}: {title}", classes="section"))
                widgets.append(_latency_distribution_table(value) if key == "lat_dist_pct" else _mapping_table(value))
            for direction in DIRECTIONS:
                figures = job.get(direction)
                if not _active(figures):
                    continue
                stats = {
                    key.replace("_", " "): figures[key]
                    for key in _DIRECTION_DETAIL_KEYS
                    if isinstance(figures.get(key), Mapping) and figures[key]
                }
                if stats:
                    widgets.append(
                        Label(f"{job.get('name', '?')}: {direction} bandwidth / IOPS statistics", classes="section")
                    )
                    widgets.append(_mapping_table(stats))
        for key, value in (self.result or {}).items():
            if key in ("jobs", "disk_util", "tool", "samples") or not isinstance(value, Mapping) or not value:
                continue
            widgets.append(Label(key.replace("_", " "), classes="section"))
            widgets.append(_mapping_table(value))
        if widgets:
            details.mount_all(widgets, before=0)

    # ---- charts ----------------------------------------------------------------------------
    def _draw_charts(self) -> None:
        charts = result_panels(self.description, self.result)  # the tool's own first (ORION's matrices)
        for title, y_label, series in self._chart_specs():
            chart = Chart(title, y_label=y_label)
            chart.plot(series)  # drawn once it has a size
            charts.append(chart)
        self.query_one("#charts", VerticalScroll).mount_all(charts)

    def _chart_specs(self) -> list[tuple[str, str, list[Series]]]:
        """(title, y axis label, lines) per chart, as the tool's description groups its
        metrics (one unit per chart); metrics that stayed 0 (the idle direction) are left out."""
        nonzero = [
            key
            for key in dict.fromkeys(k for _, m in self.samples for k in m)
            if any(m.get(key) for _, m in self.samples)
        ]
        specs = []
        for unit, group in self.description.charts(nonzero)[:MAX_CHARTS]:
            labels = [spec.label for spec in group]
            # one line: named by its label; several (read and write...): by their unit, the
            # legend names them
            title = (
                f"{labels[0]} per interval" + (f" ({unit})" if unit else "")
                if len(group) == 1
                else f"{unit or ', '.join(labels)} per interval"
            )
            lines = []
            for spec in group:
                points = [(t, spec.shown(m[spec.key])) for t, m in self.samples if m.get(spec.key) is not None]
                lines.append(Series(spec.label, [p[0] for p in points], [p[1] for p in points]))
            specs.append((title, unit or labels[0], lines))
        return specs

    # ---- actions ---------------------------------------------------------------------------
    def action_close(self) -> None:
        self.dismiss()

    def _switch_tab(self, step: int) -> None:
        tabs = self.query_one(TabbedContent)
        ids = [pane.id for pane in tabs.query(TabPane)]
        if tabs.active in ids:
            tabs.active = ids[(ids.index(tabs.active) + step) % len(ids)]

    def action_next_tab(self) -> None:
        self._switch_tab(1)

    def action_previous_tab(self) -> None:
        self._switch_tab(-1)


def _mapping_table(value: Mapping[str, Any]) -> DataTable[Any]:
    """A dict of figures as a key/value table; a dict of dicts as a grid (rows x columns)."""
    table: DataTable[Any] = DataTable(cursor_type="row")
    nested = {k: v for k, v in value.items() if isinstance(v, Mapping)}
    if nested:
        columns = sorted({c for v in nested.values() for c in v}, key=_sort_key)
        table.add_column("")
        for column in columns:
            table.add_column(str(column))
        for key, row in nested.items():
            table.add_row(str(key), *(_num(row.get(c), 2) for c in columns))
    else:
        table.add_columns("", "value")
        for key, figure in value.items():
            table.add_row(str(key), _num(figure, 2) if isinstance(figure, (int, float)) else str(figure))
    return table


def _is_zero(figure: Any) -> bool:
    """A figure that reads as 0 (a number or numeric text); anything else counts as non-zero."""
    try:
        return float(figure) == 0.0
    except (TypeError, ValueError):
        return False


def _latency_distribution_table(dist: Mapping[str, Any]) -> DataTable[Any]:
    """fio's latency buckets that hold I/Os, then one row standing for all the empty ones.

    fio has 32 buckets (2 ns to >= 2 s) and a run fills a handful; its own text report leaves
    the empty ones out too. Figures are shown as fio gave them: fio reports a bucket holding
    under 0.01 % of the I/Os as 0.01, never as 0, so only truly empty buckets are folded.
    """
    table: DataTable[Any] = DataTable(cursor_type="row")
    table.add_columns("", "value")
    empty_buckets = 0
    for bound, figure in dist.items():
        if _is_zero(figure):
            empty_buckets += 1
        else:
            table.add_row(str(bound), _num(figure, 2))
    if empty_buckets:
        table.add_row("others" if table.row_count else "all", "0")  # exactly 0: no rounding hides I/Os
    return table


def _depth_table(depths: Mapping[str, Mapping[str, Any]]) -> DataTable[Any]:
    """Depth buckets as rows, the histograms (depth, submit, complete) as columns."""
    table: DataTable[Any] = DataTable(cursor_type="row")
    table.add_column("bucket")
    for label in depths:
        table.add_column(label)
    buckets = sorted({b for histogram in depths.values() for b in histogram}, key=_sort_key)
    for bucket in buckets:
        table.add_row(str(bucket), *(_num(h.get(bucket), 1) for h in depths.values()))
    return table


def _sort_key(text: Any) -> tuple[int, float, str]:
    """Numeric keys (fio's '1', '2', '>=64' buckets) in numeric order, others after."""
    cleaned = str(text).lstrip("<>=")
    try:
        return (0, float(cleaned), str(text))
    except ValueError:
        return (1, 0.0, str(text))
