"""The Runs panel: every recorded run, live ones highlighted; launch, open and stop runs.

The store is the source of truth: the store watcher (ui/store_watcher.py, a worker thread)
re-reads the list every second and posts it, so a run launched by an earlier racperf (left
running when it quit) shows up here, live, and can be stopped. Nothing here reads the store.

A run group (one tool on several nodes: orchestration/run_groups.py) is one row, ``g`` and
its id, its nodes in the target column: enter opens the group view (a row per node and the
total; a node's own run view from there), ``s`` stops every node's run.

Marks, compare, labels and deletion (their own methods, at the end of the class): space marks
a run (a first column, there while runs are marked: ``✓``, ``B`` the baseline; marks are kept
by run id, so they outlive every repaint), ``c`` compares the marked runs
(screens/compare_view.py), ``b`` makes the highlighted marked run the baseline, ``l`` / ``a``
set a run's label / note, ``d`` deletes the marked runs (or the highlighted one) after a
confirmation, ``/`` filters the list by tool, node and label (ui/runs_filter.py; the line
above the list says what is shown).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.contract.tool import ROLE_OPTION, is_pair_end
from racperf_tui.core.remote.cluster import LOCAL_NODE
from racperf_tui.core.store import RunRecord
from racperf_tui.core.units import format_duration
from racperf_tui.orchestration.run_groups import group_state
from racperf_tui.orchestration.saturation_watch import load_of
from racperf_tui.ui.deferred import deferred, deferred_if_loaded
from racperf_tui.ui.dialogs.text_prompt import TextPrompt
from racperf_tui.ui.messages import RunLaunched, RunsSnapshot, RunsUpdate, SweepLaunched
from racperf_tui.ui.run_actions import confirm_and_stop
from racperf_tui.ui.run_edits import ask_words, confirm_and_delete
from racperf_tui.ui.runs_data import where_it_ran
from racperf_tui.ui.runs_filter import FilterError, RunsFilter
from racperf_tui.ui.shown import markup, plain
from racperf_tui.ui.store_watcher import RunsWatch, store_watcher
from racperf_tui.ui.tabs.iostat_panel import IostatPanel
from racperf_tui.ui.widgets.metric_sparkline import format_value

#: the run states drawn in a colour of the theme (RunsTable's component classes, in app.tcss)
STYLED_STATES = (RunState.RUNNING, RunState.PENDING, RunState.FAILED, RunState.STOPPED, RunState.INTERRUPTED)


#: the columns, in order: (key, header, width); tool and target (None) share what the others
#: leave of the row, started is STARTED_WIDTHS wide; node is 9: "local srv" whole (at 8 a pair
#: on this host read "…cal srv")
COLUMNS = (
    ("id", "id", 4),
    ("tool", "tool", None),
    ("target", "target", None),
    ("node", "node", 9),
    ("state", "state", 11),
    ("started", "started", 0),
    ("duration", "dur", 6),
    ("figure", "figure", 11),
)
#: the marks' column, first, there only while a run is marked (its room is the target's otherwise)
MARK_COLUMN = ("mark", "", 1)
COLUMN_WIDTHS = {key: width for key, _header, width in COLUMNS if width}
#: the node column's place in a row, and the width from which it is always shown (narrower,
#: only while a listed run ran on another node or is an end of a pair: at 80 columns it
#: would take the tool's and the target's room for "local" on every row)
NODE_COLUMN = [key for key, _header, _width in COLUMNS].index("node")
NODE_COLUMN_ALWAYS_FROM = 100
#: the started column: "11-30 02:33", and from WIDE_TABLE cells on "2025-11-30 02:33:20"
STARTED_WIDTHS = (11, 19)
WIDE_TABLE = 120
#: cells of padding DataTable puts around every column (cell_padding 1 on each side)
COLUMN_PADDING = 2
#: kept free for the vertical scrollbar once the list is longer than the table is high
SCROLLBAR_WIDTH = 2
#: the tool column fits the longest tool name listed, within these bounds (the rest is the target's)
TOOL_WIDTH = (4, 12)
TARGET_MIN_WIDTH = 8


class RunsTable(DataTable):
    """The runs list. Home / End go to the first / last run: DataTable's own Home and End
    move a row cursor nowhere (they go to the first / last column), so after Home the
    highlighted run, the one ``s`` stops, was still the old one. Enter opens the run."""

    HELP_TITLE = "Runs list"

    #: a run's id and state in the colour of its state (the theme's: app.tcss)
    COMPONENT_CLASSES = {f"runs-table--{state.value}" for state in STYLED_STATES}

    def state_style(self, state: RunState | None) -> Style:
        """The Rich style of a run state's cells ('' for a plain one)."""
        if state not in STYLED_STATES:
            return Style()
        return self.get_component_rich_style(f"runs-table--{state.value}", partial=True)

    BINDINGS = [
        # DataTable's enter (select the row, which opens the run), declared again for the help
        Binding(
            "enter",
            "select_cursor",
            "Open run",
            show=False,
            tooltip="Open the highlighted run: live while it runs, else its result",
        ),
        Binding("home", "scroll_top", "First run", show=False, tooltip="First (newest) run"),
        Binding("end", "scroll_bottom", "Last run", show=False, tooltip="Last (oldest) run"),
    ]


class RunsPanel(Vertical):
    """The runs list and its keys: n new run (any tool), enter open, s stop, r refresh."""

    HELP_TITLE = "Runs"

    BINDINGS = [
        Binding("n", "new_run", "New run", tooltip="New run: pick a tool, then its form and command preview"),
        Binding(
            "enter",
            "open_run",
            "Open run",
            show=False,
            tooltip="Open the highlighted run: live while it runs, else its result",
        ),
        Binding("s", "stop_run", "Stop run", tooltip="Stop the highlighted run (asks first)"),
        Binding("r", "refresh", "Refresh", tooltip="Re-read the runs now (every second anyway)"),
        Binding("space", "toggle_mark", "Mark", tooltip="Mark or unmark the highlighted run (to compare or delete)"),
        Binding("c", "compare", "Compare", tooltip="Compare the marked runs: figures, differences, criteria, charts"),
        Binding("b", "set_baseline", "Baseline", show=False, tooltip="Make the highlighted marked run the baseline"),
        Binding("l", "label", "Label", show=False, tooltip="Label the highlighted run (a short name to filter by)"),
        Binding("a", "note", "Note", show=False, tooltip="Write a note on the highlighted run"),
        Binding(
            "d", "delete_runs", "Delete", show=False, tooltip="Delete the marked runs, or the highlighted one (asks)"
        ),
        Binding(
            "slash", "filter", "Filter", tooltip="Show only runs of a tool, node or label (tool:fio node:rac1 label:x)"
        ),
        Binding(
            "p", "replay_run", "Replay", show=False, tooltip="Play the highlighted ended run (or group) back as it ran"
        ),
        Binding(
            "e", "export_report", "Report", show=False, tooltip="The marked runs' report, or the highlighted one's"
        ),
    ]

    def __init__(self, data_dir: str | None = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.runs: dict[int, RunRecord] = {}
        #: the watcher's latest runs list (figures and devices included)
        self.snapshot = RunsSnapshot()
        self._watch: RunsWatch | None = None
        self._benchmark_devices: list[str] = []
        self._benchmark_load = ""
        self.interrupted_on_start: list[int] = []
        #: the first list came (the notes on runs from an earlier session are said once)
        self._first_list = True
        #: the cells on screen per run key, to update only what changed
        self._rows_shown: dict[str, tuple[Any, ...]] = {}
        self._hint_shown: str | None = None
        #: the run whose view was set aside for another tab: it comes back with the Runs tab
        self._run_set_aside: int | None = None
        #: the group whose view was set aside for another tab
        self._group_set_aside: int | None = None
        #: (tool, target, started) column widths the table was built with
        self._widths: tuple[int, int, int] | None = None
        #: the marked runs' ids, in the order they were marked
        self.marks: list[int] = []
        #: the table has the marks' column
        self._marks_column = False
        #: the baseline of a compare (one of the marks; None: the first marked)
        self.baseline: int | None = None
        self.runs_filter = RunsFilter()
        #: the node column is shown (NODE_COLUMN_ALWAYS_FROM), and was when the table was built
        self._node_column = True
        self._node_column_built: bool | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="runs-status")
        yield RunsTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="runs-hint")

    def on_mount(self) -> None:
        self._layout_columns()
        self._watch = store_watcher(self.app, self.data_dir).watch_runs(self)

    def on_runs_update(self, message: RunsUpdate) -> None:
        """The watcher's latest list: repaint it (and say, the first time, what an earlier
        session left)."""
        snapshot = message.snapshot
        if snapshot.error:
            # the whole message (which file, why, what to do) wraps: cut at 80 columns it
            # named neither the file nor the reason
            hint = snapshot.error
            if hint != self._hint_shown:
                self._hint_shown = hint
                self.query_one("#runs-hint", Static).update(f"[$error]{markup(hint)}[/]")
            return
        self.snapshot = snapshot
        self.refresh_runs()
        if self._first_list:
            self._first_list = False
            self.interrupted_on_start = list(snapshot.interrupted_on_start)
            live = [run for run in snapshot.runs if not run.state.finished]
            if live:
                names = ", ".join(f"{run.id} ({run.tool})" for run in live[:5])
                self.notify(
                    f"still running from an earlier session: run {names}. Runs tab [2], enter to watch live.",
                    timeout=8,
                )
            if self.interrupted_on_start:
                self.notify(
                    "marked interrupted (their supervisor is gone): run "
                    + ", ".join(str(r) for r in self.interrupted_on_start),
                    severity="warning",
                    timeout=8,
                )

    def on_resize(self) -> None:
        """Tool and target take the width there is: rebuild the columns when it changed."""
        if self._column_widths(self._tools_listed()) != self._widths or self._wants_node_column() != self._node_column:
            self.refresh_runs()

    def _tools_listed(self) -> list[str]:
        return sorted({run.tool for run in self.runs.values()})

    def _column_widths(self, tools: list[str]) -> tuple[int, int, int]:
        """(tool, target, started) widths for the panel's width and the tools listed."""
        width = self.size.width or 80
        started = STARTED_WIDTHS[width >= WIDE_TABLE]
        columns = self._columns()
        fixed = sum(w for _, _, w in columns if w) + started
        # with a scrollbar the columns must leave it room, or the figure goes off screen
        scrollbar = SCROLLBAR_WIDTH if len(self.runs) + 1 > self.query_one(DataTable).size.height else 0
        room = width - scrollbar - fixed - COLUMN_PADDING * len(columns)
        low, high = TOOL_WIDTH
        tool = min(max([low, *(len(name) for name in tools)]), high, max(low, room - TARGET_MIN_WIDTH))
        # below its minimum the target gives way, never the row: at 80 columns with the marks'
        # column a target kept at 8 pushed the figure 3 cells off screen ("356 Mbit/")
        return tool, max(room - tool, 1), started

    def _layout_columns(self) -> bool:
        """(Re)build the columns when their widths change; True when they did (the rows
        must be added again)."""
        widths = self._column_widths(self._tools_listed())
        if (
            widths == self._widths
            and self._marks_column == bool(self.marks)
            and self._node_column == self._node_column_built
        ):
            return False
        self._widths, self._marks_column, self._node_column_built = widths, bool(self.marks), self._node_column
        computed = dict(zip(("tool", "target", "started"), widths))
        table = self.query_one(DataTable)
        table.clear(columns=True)
        self._rows_shown = {}
        for key, header, width in self._columns():
            table.add_column(header, key=key, width=width or computed[key])
        return True

    def on_show(self) -> None:
        """Switching to the Runs tab puts the keys (n, enter, s, r) on the runs list at once,
        or brings back the run view set aside for another tab."""
        self.query_one(DataTable).focus()
        if self._group_set_aside is not None:
            group_id, self._group_set_aside = self._group_set_aside, None
            self.open_group(group_id)
        if self._run_set_aside is not None:
            run_id, self._run_set_aside = self._run_set_aside, None
            self.open_run(run_id)  # live again, or its result if it ended meanwhile

    def set_views_aside(self) -> bool:
        """Close the run views on top of the dashboard (the runs go on: they are the store's),
        remembering the top one's run for the Runs tab; False when the screen on top is
        something else (a dialog, the form), which keeps its keys."""
        groups = (deferred("group_view").GroupView, *_sweep_views())
        views = (deferred("run_view").RunView, deferred("result_view").ResultView, *groups)
        if not isinstance(self.app.screen, views):
            return False
        screen = self.app.screen
        self._run_set_aside = screen.run_id if not isinstance(screen, groups) else None
        while isinstance(self.app.screen, views):
            if isinstance(self.app.screen, groups):
                self._group_set_aside = self.app.screen.group_id
            self.app.pop_screen()
        return True

    def on_unmount(self) -> None:
        store_watcher(self.app, self.data_dir).unwatch(self)

    # ---- the list ---------------------------------------------------------------------------
    def refresh_runs(self) -> None:
        """Repaint the table from the latest list (newest first), keeping the cursor on its run."""
        selected = self.selected_key()  # before a new layout clears the table
        runs = list(self.snapshot.runs)
        self.runs = {run.id: run for run in runs}
        self._forget_gone_marks()
        self._node_column = self._wants_node_column()
        self._layout_columns()  # a new tool's name may widen the tool column
        tool_width, target_width, started_width = self._widths or self._column_widths([])
        table = self.query_one(RunsTable)
        rows: dict[str, tuple[Any, ...]] = {}
        groups = _groups_of(runs)
        for run in self._shown_runs(runs):
            if run.group_id is not None:
                if f"g{run.group_id}" not in rows:
                    members = groups[run.group_id]
                    rows[f"g{run.group_id}"] = self._group_cells(run.group_id, members, table, tool_width, target_width)
                continue
            live = not run.state.finished
            style = table.state_style(run.state)
            rows[str(run.id)] = (
                *self._mark_cells(run.id),
                Text(str(run.id), style=style),
                Text(run.tool, overflow="ellipsis", no_wrap=True) if len(run.tool) > tool_width else run.tool,
                self._target_cell(run, target_width),
                _node_cell(run),
                Text(("● " if live else "") + run.state.value, style=style),
                _started_text(run.started_at, wide=started_width == STARTED_WIDTHS[1]),
                format_duration(run.duration_s),
                self.snapshot.figures.get(run.id, ""),
            )
        if not self._node_column:
            at = NODE_COLUMN + len(self._mark_cells(None))  # after the marks' cell while runs are marked
            rows = {key: cells[:at] + cells[at + 1 :] for key, cells in rows.items()}
        self._apply_rows(rows, selected)
        self._show_status(len(rows))
        hint = (
            "no runs yet: press n to start one (fio, the network tools...)"
            if not runs
            else "enter: open the run (live view while running, else its result)"
        )
        if hint != self._hint_shown:
            # an unchanged Static.update still re-lays out the panel: about 0.5 % CPU a second
            self._hint_shown = hint
            self.query_one("#runs-hint", Static).update(hint)
        self._tell_disks_panel(list(self.snapshot.devices), self._live_load())

    def _columns(self) -> tuple[tuple[str, str, int | None], ...]:
        """The marks' column first while runs are marked; the node column when it is shown."""
        shown = COLUMNS if self._node_column else tuple(c for c in COLUMNS if c[0] != "node")
        return (MARK_COLUMN, *shown) if self.marks else shown

    def _wants_node_column(self) -> bool:
        """Wide enough, or a listed run that ran elsewhere or is a pair's end."""
        if (self.size.width or 80) >= NODE_COLUMN_ALWAYS_FROM:
            return True
        return any(
            (run.host or "local") != "local" or str(run.config.get(ROLE_OPTION)) in PAIR_END_MARKS
            for run in self.snapshot.runs
        )

    def _group_cells(
        self, group_id: int, members: list[RunRecord], table: RunsTable, tool_width: int, target_width: int
    ) -> tuple[Any, ...]:
        """A group's row: its id as ``gN``, the tool, its nodes, the state of the group
        (running while a node runs, else the worst node's), the earliest start, the longest
        run, how many nodes still run."""
        live = [run for run in members if not run.state.finished]
        state = group_state([run.state for run in members])
        # a node lost while the others still run: said on the list, not only in the group view
        # (tmux: "● running" for 40 s beside a failed n2)
        ended_badly = [run for run in members if run.state in (RunState.FAILED, RunState.INTERRUPTED)]
        state_text = ("● " if live else "") + (state.value if state else "?")
        if live and ended_badly:
            state, state_text = ended_badly[0].state, f"● {len(ended_badly)} {ended_badly[0].state.value}"
        style = table.state_style(state)
        tool = members[0].tool
        order = {name: index for index, name in enumerate(self.snapshot.group_nodes.get(group_id, ()))}
        in_order = sorted(members, key=lambda run: (order.get(run.host, len(order)), run.id))
        nodes = ", ".join(plain(run.host) for run in in_order)
        started = min(run.started_at for run in members)
        return (
            *self._mark_cells(None),
            Text(f"g{group_id}", style=style),
            Text(tool, overflow="ellipsis", no_wrap=True) if len(tool) > tool_width else tool,
            Text(_short_target(self._group_target(group_id, members, nodes), target_width), no_wrap=True),
            Text(_group_nodes_cell(nodes, len(members)), no_wrap=True, overflow="ellipsis"),
            Text(state_text, style=style, no_wrap=True, overflow="ellipsis"),
            _started_text(started, wide=self._widths is not None and self._widths[2] == STARTED_WIDTHS[1]),
            format_duration(max(run.duration_s for run in members)),
            _group_figure(self.snapshot.group_iops.get(group_id), len(live), len(members)),
        )

    def _group_target(self, group_id: int, members: list[RunRecord], nodes: str) -> str:
        """A group's target cell: its nodes; a sweep's: its target, nodes and points so far."""
        if group_id in self.snapshot.sweeps:
            hosts = ", ".join(dict.fromkeys(plain(run.host) for run in members))
            points = len(members) // max(1, len(self.snapshot.group_nodes.get(group_id, ())) or 1)
            where = f" on {hosts}" if hosts != LOCAL_NODE else ""
            # cut from the left like any target: what it is stays at the end
            return f"{plain(members[0].target or '?')} (sweep{where}, {points} pt{'s' if points != 1 else ''})"
        targets = dict.fromkeys(plain(run.target) for run in members if run.target)
        # the node column names the nodes: the target cell says what they benchmark
        return next(iter(targets)) if len(targets) == 1 else f"{len(targets) or '?'} targets"

    def shown_cell(self, key: str, column: str) -> Any:
        """The cell shown in row ``key`` (a run id, or gN for a group) and ``column`` (a
        COLUMNS key), whichever columns are shown."""
        return self._rows_shown[key][[c[0] for c in self._columns()].index(column)]

    def _apply_rows(self, rows: dict[str, tuple[Any, ...]], selected: int | str | None) -> None:
        """Change only the cells that changed; rebuild only when the set or order of runs (or
        the columns) did, keeping the cursor on the ``selected`` run."""
        table = self.query_one(DataTable)
        if list(rows) != list(self._rows_shown):
            table.clear()
            for key, cells in rows.items():
                table.add_row(*cells, key=key)
            if selected is not None and str(selected) in table.rows:
                table.move_cursor(row=table.get_row_index(str(selected)))
        else:
            column_keys = [column.key for column in table.ordered_columns]
            for key, cells in rows.items():
                old = self._rows_shown[key]
                for column_key, before, after in zip(column_keys, old, cells):
                    if before != after:
                        table.update_cell(key, column_key, after)
        self._rows_shown = rows

    def _live_load(self) -> str:
        """The running benchmarks' load, said with each saturation episode that begins on the
        Disks tab: 'run 12 iodepth 32 x 1 job: <its latest figure>'."""
        parts = []
        for run in self.snapshot.runs:
            if run.state.finished or not run.target:
                continue
            config = load_of(run.config, None)
            figure = self.snapshot.figures.get(run.id, "")
            parts.append(f"run {run.id}" + (f" {config}" if config else "") + (f": {figure}" if figure else ""))
        return "; ".join(parts)

    def _tell_disks_panel(self, devices: list[str], load: str = "") -> None:
        """The Disks panel filters on the devices running benchmarks touch (the watcher found
        them in sysfs), and says their load with each saturation episode that begins."""
        if (devices, load) == (self._benchmark_devices, self._benchmark_load):
            return
        self._benchmark_devices, self._benchmark_load = devices, load
        for panel in self.app.query(IostatPanel):  # none when the panel is mounted alone
            panel.set_benchmark_devices(set(devices), load)

    def selected_key(self) -> str | None:
        """The row key under the cursor: a run's id, or ``gN`` for a run group."""
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        except Exception:
            return None
        return key.value

    def selected_run_id(self) -> int | None:
        """The id of the run under the cursor, if any (None on a group's row)."""
        key = self.selected_key()
        return int(key) if key is not None and key.isdigit() else None

    def selected_group_id(self) -> int | None:
        """The id of the run group under the cursor, if any."""
        key = self.selected_key()
        return int(key[1:]) if key is not None and key.startswith("g") and key[1:].isdigit() else None

    # ---- actions ----------------------------------------------------------------------------
    def action_refresh(self) -> None:
        self.reread()

    def reread(self) -> None:
        """Ask the watcher for the list now (after a launch, a stop, a closed view)."""
        if self._watch is not None:
            store_watcher(self.app, self.data_dir).poke(self._watch)

    def action_new_run(self) -> None:
        """The tool picker, then the chosen tool's form; a launched run opens live."""

        def launched(run_id: Any) -> None:
            if isinstance(run_id, SweepLaunched):
                self.reread()
                self.open_sweep(run_id.group_id)
            elif isinstance(run_id, str) and run_id.startswith("g"):  # a run group (the nodes field)
                self.reread()
                self.open_group(int(run_id[1:]))
            elif run_id is not None:
                self.reread()
                self.open_run(run_id, live=True)

        def picked(tool: str | None) -> None:
            if tool is not None:
                self.app.push_screen(deferred("tool_picker").form_for(tool, self.data_dir), launched)

        self.app.push_screen(deferred("tool_picker").ToolPicker(), picked)

    def on_run_launched(self, message: RunLaunched) -> None:
        self.reread()
        self.open_run(message.run_id, live=True)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if key is not None and key.startswith("g"):
            self.open_group(int(key[1:]))
        elif key is not None:
            self.open_run(int(key))

    def action_open_run(self) -> None:
        group_id = self.selected_group_id()
        if group_id is not None:
            self.open_group(group_id)
            return
        run_id = self.selected_run_id()
        if run_id is not None:
            self.open_run(run_id)

    def open_group(self, group_id: int) -> None:
        """The group view: a row per node and the total, each node's run view from there; a
        sweep's group: the sweep view."""
        if group_id in self.snapshot.sweeps:
            self.open_sweep(group_id)
            return
        members = [run for run in self.runs.values() if run.group_id == group_id]
        title = f"group {group_id}: {plain(members[0].tool)} on {len(members)} nodes" if members else ""
        self.app.push_screen(
            deferred("group_view").GroupView(self.data_dir, group_id, title=title), lambda _: self.reread()
        )

    def open_sweep(self, group_id: int) -> None:
        """The sweep view: its curve building, the point running, the knee (running or ended)."""
        self.app.push_screen(deferred("sweep_view").SweepView(self.data_dir, group_id), lambda _: self.reread())

    def open_run(self, run_id: int, live: bool = False) -> None:
        """The live view of a running run (or of one just ``live``-launched, not listed yet),
        the result view of a finished one (it says so when there is no such run)."""
        run = self.runs.get(run_id)
        title = f"run {run_id}: {plain(run.tool)} {plain(where_it_ran(run))}" if run is not None else ""
        if (run is not None and not run.state.finished) or (run is None and live):
            tool = run.tool if run is not None else ""
            run_view = deferred("run_view").RunView(self.data_dir, run_id, title=title, tool=tool)
            self.app.push_screen(run_view, lambda _: self.reread())
        else:
            self.app.push_screen(deferred("result_view").ResultView(self.data_dir, run_id), lambda _: self.reread())

    def action_replay_run(self) -> None:
        """The highlighted ended run (or run group) played back through its live view
        (screens/replay_view, screens/group_replay_view); either end of a network pair through
        the Network tab's display (screens/pair_replay_view: a server end records no samples,
        the pair is found from it)."""
        group_id = self.selected_group_id()
        if group_id is not None:
            replay = deferred("group_replay_view").GroupReplayView(self.data_dir, group_id)
            self.app.push_screen(replay, lambda _: self.reread())
            return
        run = self.runs.get(self.selected_run_id() or -1)
        if run is None or not run.state.finished:
            self.notify("replay: highlight a run that has ended" if run is None else "it is still running: enter")
            return
        if is_pair_end(run.config):
            replay = deferred("pair_replay_view").PairReplayView(self.data_dir, run.id)
        else:
            replay = deferred("replay_view").ReplayView(self.data_dir, [run.id])
        self.app.push_screen(replay, lambda _: self.reread())

    def action_export_report(self) -> None:
        """The marked runs' report (the baseline first, as the compare screen has them), else
        the highlighted run's."""
        run_id = self.selected_run_id()
        ids = self._marked_in_order() or ([run_id] if run_id is not None else [])
        if ids:
            deferred("report_export").write_report(self, self.data_dir, ids)

    def _marked_in_order(self) -> list[int]:
        baseline = self._baseline_id()
        return [baseline, *(run_id for run_id in self.marks if run_id != baseline)] if baseline is not None else []

    def action_stop_run(self) -> None:
        group_id = self.selected_group_id()
        if group_id is not None:
            members = [run for run in self.runs.values() if run.group_id == group_id]
            if all(run.state.finished for run in members):
                self.notify(f"group {group_id} is not running", severity="warning")
                return
            deferred("group_view").confirm_and_stop_group(self.app, self.data_dir, group_id)
            return
        run_id = self.selected_run_id()
        if run_id is None:
            return
        run = self.runs.get(run_id)
        if run is None or run.state.finished:
            self.notify(f"run {run_id} is not running", severity="warning")
            return
        confirm_and_stop(self.app, self.data_dir, run_id, after=self.reread)

    # ---- marks, compare, labels, delete, filter ----------------------------------------------
    def _shown_runs(self, runs: list[RunRecord]) -> list[RunRecord]:
        """The runs the filter lets through (a group's row: when one of its runs does)."""
        if not self.runs_filter.active:
            return runs
        groups = {run.group_id for run in runs if run.group_id is not None and self.runs_filter.matches(run)}
        return [run for run in runs if self.runs_filter.matches(run) or run.group_id in groups]

    def _forget_gone_marks(self) -> None:
        """Marks of runs no longer in the store (deleted) are dropped."""
        self.marks = [run_id for run_id in self.marks if run_id in self.runs]
        if self.baseline not in self.marks:
            self.baseline = None

    def _target_cell(self, run: RunRecord, width: int) -> Text:
        """The target, after the run's label when it has one (the label first: it is what
        the DBA named the run by; the target keeps its end)."""
        target = plain(run.target) if run.target else None
        if not run.label:
            return Text(_short_target(target, width), no_wrap=True)
        label = plain(run.label)
        if len(label) > width:
            label = label[: max(width - 1, 1)] + "…"
        rest = width - len(label) - 1
        if rest < 3:  # a narrow column (the node column shown at 80): the label alone
            return Text(label, style="bold", no_wrap=True)
        cell = Text.assemble((label, "bold"), " ", no_wrap=True)
        cell.append(_short_target(target, rest))
        return cell

    def _mark_cells(self, run_id: int | None) -> tuple[Text | str, ...]:
        """The row's cell in the marks' column (none while no run is marked)."""
        if not self.marks:
            return ()
        if run_id not in self.marks:
            return ("",)
        return (Text("B", style="bold reverse") if run_id == self._baseline_id() else Text("✓", style="bold"),)

    def _baseline_id(self) -> int | None:
        return self.baseline if self.baseline in self.marks else (self.marks[0] if self.marks else None)

    def _show_status(self, rows_shown: int) -> None:
        """The line above the list: the filter in force (and how many rows it shows) and the
        marks; hidden while there is neither."""
        parts = []
        if self.runs_filter.active:
            parts.append(
                f"[b]filter[/b] {markup(self.runs_filter.describe())}: {rows_shown} of {len(self.runs)} runs"
                " shown (/ to change)"
            )
        if self.marks:
            parts.append(
                f"[b]marked[/b] {', '.join(map(str, self.marks))}, baseline {self._baseline_id()}"
                " (c compare, b baseline, d delete)"
            )
        status = self.query_one("#runs-status", Static)
        status.display = bool(parts)
        status.update("  ·  ".join(parts))

    def _repaint_marks(self) -> None:
        """Only the marks changed: repaint their column without waiting for the watcher (the
        whole list when the column comes or goes)."""
        if self._marks_column != bool(self.marks):
            self.refresh_runs()
            return
        table = self.query_one(DataTable)
        for key in list(self._rows_shown):
            if key.isdigit() and self.marks:
                cells = self._rows_shown[key]
                (mark,) = self._mark_cells(int(key))
                if cells[0] != mark:
                    table.update_cell(key, "mark", mark)
                    self._rows_shown[key] = (mark, *cells[1:])
        self._show_status(len(self._rows_shown))

    def action_toggle_mark(self) -> None:
        run_id = self.selected_run_id()
        if run_id is None:
            if self.selected_group_id() is not None:
                self.notify("a group is marked run by run: open it (enter) for its nodes' runs", timeout=4)
            return
        if run_id in self.marks:
            self.marks.remove(run_id)
        else:
            self.marks.append(run_id)
        self._repaint_marks()
        table = self.query_one(DataTable)
        if table.cursor_row < table.row_count - 1:
            table.move_cursor(row=table.cursor_row + 1)  # as a file manager's mark: on to the next

    def action_set_baseline(self) -> None:
        run_id = self.selected_run_id()
        if run_id is None or run_id not in self.marks:
            self.notify("the baseline is one of the marked runs: mark it first (space)", severity="warning")
            return
        self.baseline = run_id
        self._repaint_marks()

    def action_compare(self) -> None:
        compare_view = deferred("compare_view")
        if len(self.marks) < 2 and not (self.marks and compare_view.remembered_criteria_file(self.data_dir)):
            self.notify(
                "mark two runs or more with space to compare them (one is judged alone once a criteria file is named)",
                severity="warning",
                timeout=5,
            )
            return

        def closed(baseline: int | None) -> None:
            if baseline in self.marks:
                self.baseline = baseline
                self._repaint_marks()

        self.app.push_screen(compare_view.CompareView(self.data_dir, self.marks, self._baseline_id()), closed)

    def _selected_run(self) -> RunRecord | None:
        run_id = self.selected_run_id()
        run = self.runs.get(run_id) if run_id is not None else None
        if run is None:
            self.notify("highlight a run (a group's runs are in its view: enter)", severity="warning")
        return run

    def action_label(self) -> None:
        run = self._selected_run()
        if run is not None:
            ask_words(self.app, self.data_dir, run, "label", self.reread)

    def action_note(self) -> None:
        run = self._selected_run()
        if run is not None:
            ask_words(self.app, self.data_dir, run, "note", self.reread)

    def action_delete_runs(self) -> None:
        ids = list(self.marks)
        if not ids:
            run = self._selected_run()
            if run is None:
                return
            ids = [run.id]

        def deleted(gone: list[int]) -> None:
            self.marks = [run_id for run_id in self.marks if run_id not in gone]
            self.reread()

        confirm_and_delete(self.app, self.data_dir, ids, deleted)

    def action_filter(self) -> None:
        def check(text: str) -> str | None:
            try:
                RunsFilter.parse(text)
            except FilterError as exc:
                return str(exc)
            return None

        def answered(text: str | None) -> None:
            if text is not None:
                self.runs_filter = RunsFilter.parse(text)
                self.refresh_runs()

        self.app.push_screen(
            TextPrompt(
                "Show only the runs of: tool:NAME node:NAME label:TEXT, or a word any of them contains",
                self.runs_filter.describe(),
                placeholder="tool:fio label:signoff",
                hint="enter: filter   escape: cancel   an empty field shows every run",
                check=check,
            ),
            answered,
        )


def _sweep_views() -> tuple[type, ...]:
    """The sweep view's class once it was opened (none of it can be on screen before: its
    charts' plotext is not imported for a tab switch)."""
    module = deferred_if_loaded("sweep_view")
    return (module.SweepView,) if module is not None else ()


def _group_figure(iops: float | None, live: int, nodes: int) -> str:
    """A group's figure: its nodes' IOPS added up, else how many of its nodes still run."""
    if iops is not None:
        return f"{format_value(iops)} IOPS"
    return f"{live}/{nodes} live" if live else ""


#: how a pair's ends are marked in the node column (the role its config names)
PAIR_END_MARKS = {"server": "srv", "client": "cli"}


def _group_nodes_cell(nodes: str, count: int) -> str:
    """A group's nodes by name where they fit the node column, else how many."""
    names = nodes.replace(" ", "")
    return names if len(names) <= COLUMN_WIDTHS["node"] else f"{count} nodes"


def _node_cell(run: RunRecord) -> Text:
    """Where the run ran (``local``: this host) and, for an end of a pair, which end: ``rac1
    srv``, ``rac2 cli``. A long node name keeps its end (names differ at the end: rac-db-01)."""
    role = run.config.get(ROLE_OPTION) if isinstance(run.config, dict) else None
    mark = PAIR_END_MARKS.get(str(role), "")
    room = COLUMN_WIDTHS["node"] - (len(mark) + 1 if mark else 0)
    host = plain(run.host or "local")
    host = host if len(host) <= room else "…" + host[-(room - 1) :]
    return Text(f"{host} {mark}" if mark else host, no_wrap=True)


def _groups_of(runs: list[RunRecord]) -> dict[int, list[RunRecord]]:
    """The runs of each run group listed."""
    groups: dict[int, list[RunRecord]] = {}
    for run in runs:
        if run.group_id is not None:
            groups.setdefault(run.group_id, []).append(run)
    return groups


def _short_target(target: str | None, width: int) -> str:
    """A target cut to ``width`` cells keeps its end (the file or device name, the informative part)."""
    if not target:
        return "-"
    return target if len(target) <= width else "…" + target[-(width - 1) :]


def _started_text(started_at: float | None, wide: bool = False) -> str:
    """When a run started, with its date: a list of yesterday's and today's runs at 02:33
    cannot tell them apart by the time alone. ``wide`` adds the year and the seconds."""
    if not started_at:
        return "-"
    moment = datetime.fromtimestamp(started_at)
    return moment.strftime("%Y-%m-%d %H:%M:%S" if wide else "%m-%d %H:%M")
