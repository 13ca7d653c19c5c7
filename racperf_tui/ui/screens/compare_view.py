"""The runs marked in the Runs tab, side by side (orchestration/compare.py): a Figures tab
(each declared figure with its unit, every run's value, its difference from the baseline,
better or worse, ``*`` past the runs' own noise; then each criterion's pass or fail per run
when a criteria file is named) and a Charts tab (every run's per-interval IOPS, bandwidth and
latency overlaid, one unit per chart).

Keys: ``b`` makes the next run the baseline, ``k`` names the criteria file (remembered in
settings.json), left / right switch the tabs, escape goes back. The store is read in a worker
thread (ui/compare_data.py), again after each change.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Label, Static, TabbedContent, TabPane

from racperf_tui.core.criteria import CriteriaError
from racperf_tui.orchestration.compare import Comparison, unfinished
from racperf_tui.ui.compare_data import (
    CompareData,
    load_comparison,
    read_criteria,
    remember_criteria_file,
    remembered_criteria_file,
)
from racperf_tui.ui.dialogs.text_prompt import TextPrompt
from racperf_tui.ui.runs_data import where_it_ran
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.shown import markup, plain
from racperf_tui.ui.widgets.chart import Chart

#: the outcome of a criterion as the criteria table colours it
OUTCOME_STYLES = {"pass": "bold green", "fail": "bold red", "n/a": "yellow"}


class CompareView(RacperfScreen[int | None]):
    """The comparison of ``run_ids``; dismissed with the baseline's id (the Runs tab keeps it)."""

    HELP_TITLE = "Compare runs"

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back to the runs list"),
        Binding("b", "next_baseline", "Baseline", tooltip="Make the next run the baseline the others are compared to"),
        Binding("k", "criteria_file", "Criteria", tooltip="Name the acceptance criteria file (remembered)"),
        Binding("left", "previous_tab", "Prev tab", show=False, tooltip="Previous tab (Figures, Charts)"),
        Binding("right", "next_tab", "Next tab", show=False, tooltip="Next tab"),
    ]

    def __init__(self, data_dir: Any, run_ids: list[int], baseline: int | None = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.run_ids = list(run_ids)
        self.baseline = baseline if baseline in self.run_ids else self.run_ids[0]
        self.criteria_file: str | None = None
        self.data = CompareData()
        #: how many loads were shown (a test waits for the next one)
        self.loads = 0

    def compose(self) -> ComposeResult:
        yield Static(f"comparing runs {', '.join(map(str, self.run_ids))}...", id="compare-title")
        with TabbedContent(id="compare-tabs"):
            with TabPane("Figures", id="tab-figures"):
                with VerticalScroll():
                    # what sets the runs apart may be many lines: it scrolls with the figures
                    yield Static("", id="compare-differs")
                    yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
                    yield Static("", id="compare-footnote")
                    yield Label("Criteria", classes="section", id="criteria-label")
                    yield DataTable(id="criteria-table", cursor_type="row")
            with TabPane("Charts", id="tab-charts"):
                yield VerticalScroll(id="compare-charts")
        yield Footer()

    def on_mount(self) -> None:
        self.criteria_file = remembered_criteria_file(self.data_dir)
        self.reload()

    # ---- load (a worker thread) ------------------------------------------------------------
    def reload(self) -> None:
        ids, baseline, criteria = list(self.run_ids), self.baseline, self.criteria_file

        def load() -> None:
            data = load_comparison(self.data_dir, ids, baseline, criteria)
            self.app.call_from_thread(self.show, data)

        self.run_worker(load, thread=True, group="compare", exclusive=True)

    def show(self, data: CompareData) -> None:
        self.data = data
        self.query_one("#compare-title", Static).update(self._title_text())
        comparison = data.comparison
        self.query_one("#compare-differs", Static).update(self._differs_text(comparison))
        self._fill_figures(comparison)
        self._fill_criteria(comparison)
        self.run_worker(self._draw_charts(), group="compare-charts", exclusive=True)

    # ---- the figures ---------------------------------------------------------------------------
    def _title_text(self) -> str:
        if self.data.error:
            return f"[$error]cannot compare: {markup(self.data.error)}[/]"
        comparison = self.data.comparison
        if comparison is None:
            return ""
        base = comparison.runs[comparison.baseline]
        criteria = f"  criteria: {markup(self.criteria_file)}" if self.criteria_file else "  k: criteria file"
        going = [f"#{run.id}" for run in unfinished(comparison)]
        if going:
            criteria += f"  [$warning]{', '.join(going)} still going: compared as far as it went[/]"
        return (
            f"[b]{len(comparison.runs)} run{'s' if len(comparison.runs) > 1 else ''}[/b],"
            f" baseline [b]#{base.id}[/b] {markup(base.tool)} "
            f"{markup(where_it_ran(base))}{criteria}"
        )

    def _differs_text(self, comparison: Comparison | None) -> str:
        if comparison is None:
            return ""
        lines = [
            f"{', '.join(f'#{run.id}' + (f' [{plain(run.label)}]' if run.label else '') for run in comparison.runs)}"
        ]
        for key, values in comparison.differs.items():
            shown = " | ".join("-" if v is None else plain(v) for v in values)
            lines.append(f"differ in {plain(key)}: {shown}")
        if len(lines) == 1 and len(comparison.runs) > 1:
            lines.append("same tool, node, target and settings")
        return "\n".join(markup(line) for line in lines)

    def _fill_figures(self, comparison: Comparison | None) -> None:
        table = self.query_one("#compare-table", DataTable)
        table.clear(columns=True)
        if comparison is None:
            return
        base = comparison.baseline
        table.add_column("figure", key="figure")
        table.add_column("unit", key="unit")
        for i, run in enumerate(comparison.runs):
            table.add_column(f"#{run.id}" + (" (base)" if i == base else ""), key=str(run.id))
        for row in comparison.rows:
            cells: list[Any] = [row.spec.label, row.spec.unit]
            for i in range(len(comparison.runs)):
                text = row.cell(i, base)
                style = ""
                if i != base and row.significant[i]:
                    style = "bold green" if text.rstrip("*").endswith("better") else "bold red"
                cells.append(Text(text, style=style))
            table.add_row(*cells, key=row.spec.key)
        noted = any(s for row in comparison.rows for s in row.significant)
        self.query_one("#compare-footnote", Static).update(
            "* larger than twice the runs' own interval-to-interval noise" if noted else ""
        )

    def _fill_criteria(self, comparison: Comparison | None) -> None:
        table = self.query_one("#criteria-table", DataTable)
        table.clear(columns=True)
        label = self.query_one("#criteria-label", Label)
        verdicts = comparison.verdicts if comparison is not None else []
        table.display = bool(verdicts)
        if not verdicts or comparison is None:
            if self.data.criteria_error:
                label.update(f"[$error]Criteria: {markup(self.data.criteria_error)}[/]")
            else:
                label.update("Criteria: none named (k: name a criteria file)" if comparison is not None else "")
            return
        label.update(f"Criteria ({markup(self.criteria_file or '')})")
        table.add_column("criterion", key="criterion")
        for run in comparison.runs:
            table.add_column(f"#{run.id}", key=str(run.id))
        for k, first in enumerate(verdicts[0]):
            cells: list[Any] = [plain(first.criterion.text)]
            for run_verdicts in verdicts:
                judged = run_verdicts[k]
                # the figures in the order the criterion names them (its text is the row's)
                figures = "; ".join("-" if v is None else f"{v:,.1f}" for v in judged.figures.values())
                cells.append(Text(f"{judged.outcome.upper()} {figures}", style=OUTCOME_STYLES[judged.outcome]))
            table.add_row(*cells)

    # ---- the charts ----------------------------------------------------------------------------
    async def _draw_charts(self) -> None:
        scroll = self.query_one("#compare-charts", VerticalScroll)
        await scroll.remove_children()
        charts = []
        for found in self.data.charts:
            chart = Chart(found.title, y_label=found.unit)
            chart.plot(found.series)  # drawn once it has a size
            charts.append(chart)
        if charts:
            await scroll.mount_all(charts)
        elif self.data.comparison is not None:
            await scroll.mount(Static("no per-interval samples in these runs"))
        self.loads += 1

    # ---- actions -------------------------------------------------------------------------------
    def action_close(self) -> None:
        self.dismiss(self.baseline)

    def action_next_baseline(self) -> None:
        self.baseline = self.run_ids[(self.run_ids.index(self.baseline) + 1) % len(self.run_ids)]
        self.notify(f"baseline: run {self.baseline}", timeout=2)
        self.reload()

    def action_criteria_file(self) -> None:
        def check(text: str) -> str | None:
            if not text.strip():
                return None
            try:
                read_criteria(text.strip())
            except CriteriaError as exc:
                return str(exc)
            return None

        def answered(text: str | None) -> None:
            if text is None:
                return
            try:
                self.criteria_file = remember_criteria_file(self.data_dir, text.strip() or None)
            except (CriteriaError, OSError, ValueError) as exc:
                self.notify(f"criteria file not remembered: {exc}", severity="error")
                return
            self.reload()

        self.app.push_screen(
            TextPrompt(
                "Acceptance criteria file (one criterion a line: read_iops >= 20000 at read_clat_p99_us <= 5000)",
                self.criteria_file or "",
                placeholder="/path/to/signoff.criteria",
                hint="enter: use it (remembered)   escape: cancel   an empty field: no criteria",
                check=check,
            ),
            answered,
        )

    def _switch_tab(self, step: int) -> None:
        tabs = self.query_one(TabbedContent)
        ids = [pane.id for pane in tabs.query(TabPane)]
        if tabs.active in ids:
            tabs.active = ids[(ids.index(tabs.active) + step) % len(ids)] or ""

    def action_next_tab(self) -> None:
        self._switch_tab(1)

    def action_previous_tab(self) -> None:
        self._switch_tab(-1)
