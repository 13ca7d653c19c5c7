"""The result of a finished run: the tables its tool lays out, its samples in charts.

Nothing here knows a tool: the tables are the description's ``result_sections(result)`` (each
names its tab: Summary, Percentiles, Details...; units and formats are its columns'
MetricSpecs), the charts its ``charts()`` (one unit per axis), the notes its
``result_notes()``. The run is read once by the store watcher, off the event loop.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Label, Static, TabbedContent, TabPane

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.tool import ResultTable, ToolDescription
from racperf_tui.core.store import RunRecord
from racperf_tui.core.units import format_duration
from racperf_tui.ui.deferred import deferred
from racperf_tui.ui.messages import RunResultLoaded
from racperf_tui.ui.runs_data import description_of, where_it_ran
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.shown import markup
from racperf_tui.ui.store_watcher import store_watcher
from racperf_tui.ui.tool_panels.result_panels import result_panels
from racperf_tui.ui.widgets.chart import Chart, Series

#: charts at most (iperf3 records up to eight quantities)
MAX_CHARTS = 6
#: the tabs every result has, and where the sections' own tabs go: before Charts, Details last
CHARTS_TAB, DETAILS_TAB = "Charts", "Details"


def tab_id(name: str) -> str:
    return "tab-" + "".join(c if c.isalnum() else "-" for c in name.lower())


class ResultView(RacperfScreen[None]):
    """Tabs: the tool's sections (Summary, Percentiles...), Charts, Details (the tool's
    detail tables and the command line)."""

    HELP_TITLE = "Run result"

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back to the runs list"),
        Binding("left", "previous_tab", "Prev tab", show=False, tooltip="Previous tab (Summary, Charts, Details...)"),
        Binding("right", "next_tab", "Next tab", show=False, tooltip="Next tab"),
        # over a focused table's own page keys: a tab taller than the screen scrolls as a page,
        # and a table taller than its box takes the focus (Tab) to move through its rows
        Binding("pagedown", "scroll_page(1)", "Scroll", key_display="PgUp/PgDn", priority=True),
        Binding("pageup", "scroll_page(-1)", "Scroll up", show=False, priority=True),
        Binding("tab", "app.focus_next", "Next table", tooltip="Focus the next table (then ↑↓ move through its rows)"),
        Binding(
            "e", "export_report", "Report", show=False, tooltip="Write this run's report (HTML, data dir's reports/)"
        ),
    ]

    def __init__(self, data_dir: Any, run_id: Any) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.run_id = run_id
        self.run: RunRecord | None = None
        self.description = ToolDescription()
        self.result: Mapping[str, Any] | None = None
        self.samples: tuple[Sample, ...] = ()
        self.safety: Mapping[str, Any] | None = None
        self.sections: list[ResultTable] = []
        self.load_error = ""
        #: the run was read (the tabs are there)
        self.loaded = False

    # ---- load (the watcher's thread) ------------------------------------------------------
    def on_mount(self) -> None:
        store_watcher(self.app, self.data_dir).load_result(self, self.run_id)

    async def on_run_result_loaded(self, message: RunResultLoaded) -> None:
        """Read once: a finished run no longer changes."""
        if message.run_id != self.run_id:
            return
        self.run, self.result, self.samples = message.run, message.result, message.samples
        self.safety = message.safety
        self.load_error = message.error
        if self.run is not None:
            self.description = description_of(self.run.tool)
            self.sections = self.description.result_sections(self.result)
        self.query_one("#result-title", Label).update(self._title_text())
        await self.query_one("#result-loading").remove()
        await self.mount(self._tabbed(), before=self.query_one(Footer))
        self._draw_charts()
        self.loaded = True

    # ---- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Label(self._title_text(), id="result-title")
        yield Static("reading the run...", id="result-loading")
        yield Footer()

    def _tabbed(self) -> TabbedContent:
        """A tab per section tab of the tool's, then Charts and Details."""
        tabs = self._tabs()
        panes = []
        for tab in tabs:
            if tab == CHARTS_TAB:
                # filled once mounted: a chart draws itself once it has a size
                panes.append(TabPane(tab, VerticalScroll(id="charts"), id=tab_id(tab)))
                continue
            widgets: list[Widget] = []
            if tab == tabs[0]:
                widgets.append(Static(self._message_text(), id="result-message"))
            for table in self.sections:
                if table.tab == tab:
                    widgets += _table_widgets(table)
            if tab == DETAILS_TAB:
                widgets.append(Label("Command line", classes="section"))
                widgets.append(Static(self._command_text(), id="result-command", markup=False))
                if self.safety:
                    widgets.append(Label("Targets and protections", classes="section"))
                    widgets.append(Static(self._safety_text(), id="result-safety", markup=False))
            scroll = VerticalScroll(*widgets, id="details" if tab == DETAILS_TAB else None)
            panes.append(TabPane(tab, scroll, id=tab_id(tab)))
        tabbed = TabbedContent(initial=tab_id(tabs[0]))
        for pane in panes:
            tabbed.compose_add_child(pane)  # as composing it with its panes inside would
        return tabbed

    def _tabs(self) -> list[str]:
        named = [t.tab for t in self.sections if t.tab not in (CHARTS_TAB, DETAILS_TAB)]
        return [*dict.fromkeys(named or ["Summary"]), CHARTS_TAB, DETAILS_TAB]

    # ---- header ----------------------------------------------------------------------------
    def _title_text(self) -> str:
        if self.load_error:
            return f"[$error]{markup(self.load_error)}[/]"
        run = self.run
        if run is None:
            return f"run {self.run_id}"
        started = datetime.fromtimestamp(run.started_at).strftime("%Y-%m-%d %H:%M:%S")
        version = f" {run.tool_version}" if run.tool_version else ""
        return (
            f"[b]run {run.id}[/b]  {markup(run.tool)}{markup(version)} {markup(where_it_ran(run))}  "
            f"[b]{run.state.value}[/b]  started {started}  "
            f"took {format_duration(run.duration_s)}"
            # a run refused before its tool started (or lost with its node) has no exit status
            + (f"  exit {run.exit_status}" if run.exit_status is not None else "")
        )

    def _message_text(self) -> str:
        if self.load_error or self.run is None:
            return ""
        parts = [markup(self.run.message)] if self.run.message else []
        parts += [markup(note) for note in self.description.result_notes(self.result)]
        if self.result is None:
            parts.append("no parsed result for this run (see its raw output with 'racperf runs show')")
        return "\n".join(parts)

    def _command_text(self) -> str:
        if self.run is None:
            return ""
        return shlex.join(str(a) for a in (self.run.argv or [])) or "-"

    def _safety_text(self) -> str:
        """The targets the write guard judged and the protections in force where it ran (on
        another node: what that node's net reported)."""
        safety = self.safety or {}
        lines = [
            f"{t.get('access', '?'):<5} {t.get('path', '?')}  ({t.get('origin', '')})"
            for t in safety.get("targets", [])
            if isinstance(t, Mapping)
        ]
        lines += [
            f"OVERRIDDEN by the user: {o.get('path', '?')}: {'; '.join(map(str, o.get('reasons', [])))}"
            for o in safety.get("overridden", [])
            if isinstance(o, Mapping)
        ]
        lines += [f"- {p}" for p in safety.get("protections", [])]
        return "\n".join(lines) or "-"

    # ---- charts ----------------------------------------------------------------------------
    def _draw_charts(self) -> None:
        charts = result_panels(self.description, self.result)  # the tool's own first (ORION's matrices)
        for title, y_label, series in self._chart_specs():
            chart = Chart(title, y_label=y_label)
            chart.plot(series)  # drawn once it has a size
            charts.append(chart)
        if charts:
            self.query_one("#charts", VerticalScroll).mount_all(charts)

    def _chart_specs(self) -> list[tuple[str, str, list[Series]]]:
        """(title, y axis label, lines) per chart, as the tool's description groups its
        metrics (one unit per chart); metrics that stayed 0 (the idle direction) are left out."""
        samples = self.samples
        nonzero = [
            key
            for key in dict.fromkeys(k for s in samples for k in s.metrics)
            if any(s.metrics.get(key) for s in samples)
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
                points = [(s.t, spec.shown(value)) for s in samples if (value := s.metrics.get(spec.key)) is not None]
                lines.append(Series(spec.label, [p[0] for p in points], [p[1] for p in points]))
            specs.append((title, unit or labels[0], lines))
        return specs

    # ---- actions ---------------------------------------------------------------------------
    def action_close(self) -> None:
        self.dismiss()

    def action_export_report(self) -> None:
        deferred("report_export").write_report(self, self.data_dir, [int(self.run_id)])

    def _switch_tab(self, step: int) -> None:
        tabs = self.query(TabbedContent)
        if not tabs:
            return
        ids = [pane.id for pane in tabs.first().query(TabPane)]
        if tabs.first().active in ids:
            tabs.first().active = ids[(ids.index(tabs.first().active) + step) % len(ids)] or ""

    def action_scroll_page(self, step: int) -> None:
        """Scroll the shown tab's page by a screenful."""
        tabs = self.query(TabbedContent)
        if not tabs:
            return
        pane = tabs.first().query(f"#{tabs.first().active}")
        scrolls = pane.first().query(VerticalScroll) if pane else None
        if not scrolls:
            return
        if step > 0:
            scrolls.first().scroll_page_down(animate=False)
        else:
            scrolls.first().scroll_page_up(animate=False)

    def action_next_tab(self) -> None:
        self._switch_tab(1)

    def action_previous_tab(self) -> None:
        self._switch_tab(-1)


def _table_widgets(table: ResultTable) -> list[Widget]:
    """A section: its title, then its table (empty tables are left out, but for the summary)."""
    if not table.rows and table.key not in ("summary", "percentiles"):
        return []
    data: DataTable[Any] = DataTable(cursor_type="row", id=f"table-{table.key}" if table.key else None)
    data.add_columns(*table.labels, *(spec.heading for spec in table.columns))
    for cells in table.cells():
        data.add_row(*cells)
    return [Label(table.title, classes="section", id=f"label-{table.key}" if table.key else None), data]
