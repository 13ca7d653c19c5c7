"""The view of a run group (one tool on several nodes at once): a live row per node and the
TOTAL, each with its IOPS, MiB/s, progress and a sparkline of its last intervals; a node that
failed says why under the table.

Everything comes from the store watcher's :class:`GroupUpdate` (ui/store_watcher.py); the
total is orchestration/run_groups.py's (IOPS and bandwidth summed per wall-clock second while
it runs, the nodes' results added up once it ended), never added up here. Enter on a node
opens that node's run in the normal run view (its result once it ended); ``s`` stops every
node's run at once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Label

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.units import format_duration
from racperf_tui.orchestration.run_groups import group_state, stop_group
from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog
from racperf_tui.ui.messages import GroupSnapshot, GroupUpdate
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.shown import markup, plain
from racperf_tui.ui.store_watcher import store_watcher
from racperf_tui.ui.widgets.fast_sparkline import BARS
from racperf_tui.ui.widgets.metric_sparkline import format_value

#: the key of the total's row (a node's row is keyed by its node name, which cannot be this)
TOTAL_ROW = "\0total"
#: how many intervals a row's sparkline draws at least (it takes the width the others leave)
SPARK_WIDTH = 12
#: the columns before the sparkline's: (key, header, width)
COLUMNS = (
    ("node", "node", 10),
    ("run", "run", 4),
    ("state", "state", 11),
    ("iops", "IOPS", 7),
    ("mib_s", "MiB/s", 7),
    ("progress", "done", 4),
)
#: cells of padding DataTable puts around every column, and room for its scrollbar
COLUMN_PADDING, SCROLLBAR = 2, 2


def spark_text(values: Sequence[float], width: int = 24) -> str:
    """The last ``width`` values as block characters, scaled to their maximum ('' without)."""
    shown = list(values)[-width:]
    top = max(shown, default=0.0)
    if top <= 0:
        return BARS[0] * len(shown)
    return "".join(BARS[min(len(BARS) - 1, int(value / top * (len(BARS) - 1) + 0.5))] for value in shown)


class GroupView(RacperfScreen[None]):
    """A run group live: a row per node and the total (see the module doc)."""

    HELP_TITLE = "Run group"

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back to the runs list (the runs go on)"),
        Binding("enter", "open_node", "Open node's run", tooltip="The highlighted node's run view"),
        Binding("s", "stop", "Stop group", tooltip="Stop every node's run (asks first)"),
    ]

    def __init__(self, data_dir: Any, group_id: int, title: str = "") -> None:
        super().__init__()
        self.data_dir = data_dir
        self.group_id = group_id
        self.group_title = title or f"group {group_id}"
        self.snapshot: GroupSnapshot | None = None
        self._rows_shown: dict[str, tuple[Any, ...]] = {}
        self._status_shown: str | None = None
        #: the sparkline column's width the table was built with
        self.spark_width = 0

    def compose(self) -> ComposeResult:
        yield Label(self.group_title, id="group-title", markup=False)
        yield Label("waiting for the nodes' first samples...", id="group-status")
        yield DataTable(id="group-nodes", cursor_type="row")
        yield Label("", id="group-message")
        yield Footer()

    def on_mount(self) -> None:
        self._layout_columns()
        store_watcher(self.app, self.data_dir).watch_group(self, self.group_id)
        self.query_one(DataTable).focus()

    def on_resize(self) -> None:
        if self._layout_columns() and self.snapshot is not None:
            self.on_group_update(GroupUpdate(self.snapshot))

    def _layout_columns(self) -> bool:
        """The sparkline takes the width the other columns leave: rebuild the columns when
        it changed (True: the rows must be added again)."""
        fixed = sum(width for _, _, width in COLUMNS) + COLUMN_PADDING * (len(COLUMNS) + 1) + SCROLLBAR
        spark = max(SPARK_WIDTH, (self.size.width or 80) - fixed)
        if spark == self.spark_width:
            return False
        self.spark_width = spark
        table = self.query_one(DataTable)
        table.clear(columns=True)
        self._rows_shown = {}
        for key, header, width in COLUMNS:
            table.add_column(header, key=key, width=width)
        table.add_column("IOPS, last intervals", key="trend", width=spark)
        return True

    def on_unmount(self) -> None:
        store_watcher(self.app, self.data_dir).unwatch(self)

    def on_group_update(self, message: GroupUpdate) -> None:
        snapshot = message.snapshot
        if snapshot.group_id != self.group_id or (snapshot is self.snapshot and self._rows_shown):
            return
        if snapshot.error:
            self._show_status(f"[$error]{markup(snapshot.error)}[/]")
            return
        self.snapshot = snapshot
        rows: dict[str, tuple[Any, ...]] = {}
        for run in snapshot.runs:
            series = snapshot.node_series.get(run.host, {})
            # an ended node shows its result, as the TOTAL then adds them up (its last interval
            # beside a TOTAL of results read as a wrong sum); none recorded (lost): "-"
            final = snapshot.node_finals.get(run.host) if run.state.finished else None
            rows[run.host] = self._cells(plain(run.host), str(run.id), run.state, series, final=final)
        states = [run.state for run in snapshot.runs]
        live = any(not state.finished for state in states)
        if snapshot.runs:
            # once ended, the TOTAL is the nodes' results added up, not the last (partial) second
            final = None if live else snapshot.final_total
            rows[TOTAL_ROW] = self._cells(
                "TOTAL", "", group_state(states), snapshot.total_series, bold=True, final=final
            )
        self._apply_rows(rows)
        started = min((run.started_at for run in snapshot.runs), default=None)
        ended = [run.ended_at for run in snapshot.runs if run.ended_at is not None]
        parts = [f"{len(snapshot.runs)} nodes", "[$success]running[/]" if live else "ended"]
        if started is not None:
            until = max(ended) if ended and not live else self.now()
            parts.append(f"elapsed {format_duration(until - started)}")
        parts.append(f"{snapshot.intervals} s counted")
        if snapshot.start_skew_s is not None:
            parts.append(f"start skew {snapshot.start_skew_s:.2f} s")
        self._show_status("  ".join(parts))
        note = markup(snapshot.group.message or "" if snapshot.group is not None else "")
        for run in snapshot.runs:
            if run.state in (RunState.FAILED, RunState.INTERRUPTED) or (run.state.finished and run.exit_status):
                why = run.message or f"exit status {run.exit_status}"
                note += f"\n[$error]{markup(run.host)} {run.state.value}:[/] {markup(why)}"
        how = "the nodes' results added up" if not live else "the nodes' figures in the same wall-clock second"
        self.query_one("#group-message", Label).update(
            note.lstrip("\n") + f"\nTOTAL: {how}; enter: the node's run view"
        )

    def _cells(
        self,
        name: str,
        run: str,
        state: RunState | None,
        series: Any,
        *,
        bold: bool = False,
        final: Any = None,
    ) -> tuple[Any, ...]:
        """A row's cells; ``final``: the figures to show instead of the last interval's (an
        ended node's result, the ended group's total of results: ``iops``, ``mib_s``; "-"
        where it has none)."""
        iops = series.get("iops") or ()
        mib = series.get("mib_s") or ()
        shown_iops = iops[-1:] if final is None else tuple(v for v in (final.get("iops"),) if v is not None)
        shown_mib = mib[-1:] if final is None else tuple(v for v in (final.get("mib_s"),) if v is not None)
        progress = series.get("progress_pct") or ()
        style = "bold" if bold else ""
        return (
            Text(name, style=style, no_wrap=True, overflow="ellipsis"),
            run,
            Text(
                ("● " if state is not None and not state.finished else "") + (state.value if state else "?"),
                style=style,
            ),
            Text(format_value(shown_iops[-1]) if shown_iops else "-", style=style),
            Text(format_value(shown_mib[-1]) if shown_mib else "-", style=style),
            f"{progress[-1]:.0f}%" if progress else "-",
            spark_text(iops, self.spark_width),
        )

    def _apply_rows(self, rows: dict[str, tuple[Any, ...]]) -> None:
        """Change only the cells that changed; rebuild when the set of nodes did."""
        table = self.query_one(DataTable)
        if list(rows) != list(self._rows_shown):
            selected = self._selected_key()
            table.clear()
            for key, cells in rows.items():
                table.add_row(*cells, key=key)
            if selected is not None and selected in rows:
                table.move_cursor(row=list(rows).index(selected))
        else:
            column_keys = [column.key for column in table.ordered_columns]
            for key, cells in rows.items():
                for column_key, before, after in zip(column_keys, self._rows_shown[key], cells):
                    if before != after:
                        table.update_cell(key, column_key, after)
        self._rows_shown = rows

    def now(self) -> float:
        """The time a running group's elapsed runs to (a replay's: the moment it shows)."""
        return time.time()

    def _show_status(self, text: str) -> None:
        if text != self._status_shown:
            self._status_shown = text
            self.query_one("#group-status", Label).update(text)

    def _selected_key(self) -> str | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        try:
            return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        except Exception:
            return None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_node()

    def action_open_node(self) -> None:
        """The highlighted node's run: live while it runs, else its result."""
        key = self._selected_key()
        if self.snapshot is None or key is None:
            return
        if key == TOTAL_ROW:
            self.notify("the total is this view: pick a node's row for its own run view")
            return
        run = next((run for run in self.snapshot.runs if run.host == key), None)
        if run is None:
            return
        if run.state.finished:
            self.app.push_screen(ResultView(self.data_dir, run.id))
        else:
            title = f"run {run.id}: {plain(run.tool)} on {plain(run.host)}, group {self.group_id}"
            self.app.push_screen(RunView(self.data_dir, run.id, title=title, tool=run.tool))

    def action_stop(self) -> None:
        if self.snapshot is not None and all(run.state.finished for run in self.snapshot.runs):
            self.notify(f"group {self.group_id} has ended")
            return
        confirm_and_stop_group(self.app, self.data_dir, self.group_id)

    def action_close(self) -> None:
        self.dismiss()


def confirm_and_stop_group(app: Any, data_dir: Any, group_id: int) -> None:
    """Ask, then stop every node's run of the group in a thread (each writes its report)."""

    def stop() -> None:
        try:
            states = stop_group(group_id, resolve_data_dir(data_dir))
        except Exception as error:
            app.call_from_thread(app.notify, f"cannot stop group {group_id}: {error}", severity="error")
            return
        said = ", ".join(f"{node} {state.value}" for node, state in states.items())
        app.call_from_thread(app.notify, f"group {group_id}: {said}")

    def answered(yes: bool | None) -> None:
        if yes:
            app.run_worker(stop, thread=True, group="stop-runs")

    app.push_screen(
        ConfirmDialog(
            f"Stop group {group_id} on every node? Each tool writes its report, then exits.", yes_label="Stop group"
        ),
        answered,
    )
