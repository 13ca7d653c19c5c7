"""The interconnect matrix as a view of its own: a grid of the nodes (rows send, columns
receive), each cell the pair's verdict, its throughput and the 8 KiB round trip's p50 / p99
(or netperf's own, of its RR test: "netperf" after them; with LOSS and MTU! when the path check
found them), and under it each pair's line as
``racperf matrix`` prints it. Opened from the Network tab (ctrl+o) or the Cluster tab (m).

It follows the newest matrix in the store (orchestration/matrix_store.py, read in a worker
thread every POLL_S): one started here (``s``: ``racperf matrix probe`` on the cluster file's
nodes, a process of its own, so closing the view or the dashboard does not stop it) or one
running in another terminal with the same data dir. A pair running now is marked, with its
throughput so far.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Label, Static

from racperf_tui.core.net_guidance import LOSS_WARNING_PCT, format_rate
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.orchestration.interconnect_matrix import PairMeasurement
from racperf_tui.orchestration.matrix_store import MatrixSnapshot, latest_matrix, start_matrix
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.shown import plain

#: seconds between two reads of the store
POLL_S = 1.0
#: the tool a matrix started here runs (python3 on the nodes is all it needs)
START_TOOL = "probe"
#: a cell's lines: verdict, throughput, round trip
CELL_HEIGHT = 3
LEVEL_STYLES = {"good": "green", "warning": "yellow", "bad": "bold red"}


def cell_text(measured: PairMeasurement | None, running: bool) -> Text:
    """A grid cell: the verdict's level (or running / failed) with STALL, LOSS and MTU!
    marks, the throughput (or the latency), the round trip p50/p99 (the 8 KiB requests', or the
    tool's own: "netperf" after them)."""
    if measured is None:
        return Text("running..." if running else "-", style="dim" if not running else "cyan")
    if measured.verdict is None and measured.error is None:
        figure = format_rate(measured.mbit_s) if measured.mbit_s is not None else ""
        return Text(f"running\n{figure}".rstrip(), style="cyan")
    if measured.verdict is None:
        return Text("FAILED\n" + (measured.error or "")[:40], style="bold red")
    marks = []
    if any(d.kind == "stall" for d in measured.drops):
        marks.append("STALL")
    if measured.loss_pct is not None and measured.loss_pct >= LOSS_WARNING_PCT:
        marks.append(f"LOSS {measured.loss_pct:.0f}%" if measured.loss_pct >= 10 else f"LOSS {measured.loss_pct:.1f}%")
    if measured.mtu is not None and (measured.mtu.arrived is False or measured.mtu.mismatch):
        marks.append("MTU!")
    head = measured.verdict.level.upper() if measured.verdict.level == "bad" else measured.verdict.level
    text = Text(head, style=LEVEL_STYLES.get(measured.verdict.level, ""))
    if marks:
        text.append(" " + " ".join(marks), style="bold red")
    if measured.mbit_s is not None:
        text.append(f"\n{format_rate(measured.mbit_s)}")
    elif measured.latency_ms is not None:
        text.append(f"\n{measured.latency_ms:.3f} ms")
    if measured.latency_p50_ms is not None and measured.latency_p99_ms is not None:
        text.append(f"\n{measured.round_trip_cell()}")
    return text


class MatrixView(RacperfScreen[None]):
    """The newest interconnect matrix of the store, live (see the module doc)."""

    HELP_TITLE = "Interconnect matrix"

    DEFAULT_CSS = """
    MatrixView #matrix-grid { height: auto; max-height: 70%; }
    MatrixView #matrix-lines-box { height: 1fr; }
    """

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back (a running matrix goes on)"),
        Binding("s", "start", "Start matrix", tooltip=f"racperf matrix {START_TOOL} on the cluster file's nodes"),
    ]

    def __init__(self, data_dir: str | None, cluster_file: str | Path | None) -> None:
        super().__init__()
        self.data_dir = Path(resolve_data_dir(data_dir))
        self.cluster_file = cluster_file
        self.snapshot: MatrixSnapshot | None = None
        self.started: subprocess.Popen[str] | None = None
        self._shown: tuple[Any, ...] = ()
        self._status_shown = ""

    def compose(self) -> ComposeResult:
        yield Label("Interconnect matrix: rows send, columns receive", id="matrix-title")
        yield Label("reading the store...", id="matrix-status")
        yield DataTable(id="matrix-grid", cursor_type="cell", zebra_stripes=False)
        with VerticalScroll(id="matrix-lines-box"):
            yield Static("", id="matrix-lines", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(POLL_S, self._poll)
        self._poll()
        self.query_one(DataTable).focus()

    def _poll(self) -> None:
        self.run_worker(self._read, thread=True, exclusive=True, group="matrix-read")

    def _read(self) -> None:
        snapshot = latest_matrix(self.data_dir)
        self.app.call_from_thread(self.show_snapshot, snapshot)

    def show_snapshot(self, snapshot: MatrixSnapshot | None) -> None:
        self.snapshot = snapshot
        status = self._start_status()
        if snapshot is None:
            self._status(status or "no matrix in the store yet: s starts one")
            return
        pairs = snapshot.pairs
        key = (snapshot.matrix_id, snapshot.running, tuple(sorted((k, v.line()) for k, v in pairs.items())))
        state = "running" if snapshot.running else "finished"
        # a pair still running is in ``pairs`` too (its figure so far): not yet measured
        done = sum(1 for pair in pairs.values() if pair.verdict is not None or pair.error is not None)
        head = f"matrix {snapshot.matrix_id} ({snapshot.tool}): {state}, {done} pair{'s' if done != 1 else ''} measured"
        if snapshot.running:
            source, target, kind = snapshot.running
            head += f"; now {source} -> {target}" + (" (path check)" if kind == "path" else "")
        self._status(head + (f"; {status}" if status else ""))
        if key == self._shown:
            return
        self._shown = key
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_column("from \\ to", key="source")
        for name in snapshot.nodes:
            table.add_column(plain(name), key=name)
        for source in snapshot.nodes:
            cells: list[Any] = [Text(plain(source), style="bold")]
            for target in snapshot.nodes:
                running = snapshot.running is not None and snapshot.running[:2] == (source, target)
                cells.append("-" if source == target else cell_text(pairs.get((source, target)), running))
            table.add_row(*cells, key=source, height=CELL_HEIGHT)
        lines = [plain(pairs[(s, t)].line()) for s in snapshot.nodes for t in snapshot.nodes if (s, t) in pairs]
        self.query_one("#matrix-lines", Static).update("\n".join(lines))

    def _status(self, text: str) -> None:
        """The status line, redrawn only when its words changed (each second's read)."""
        if text != self._status_shown:
            self._status_shown = text
            self.query_one("#matrix-status", Label).update(text)

    def _start_status(self) -> str:
        """What became of a matrix started here: "" while it runs or once it ended well."""
        if self.started is None or self.started.poll() is None:
            return ""
        if self.started.returncode in (0, 1):  # 1: a pair could not be measured (its line says why)
            return ""
        said = self.started.stderr.read() if self.started.stderr else ""
        return f"racperf matrix exited {self.started.returncode}: {said.strip()[:200]}"

    def action_start(self) -> None:
        if self.started is not None and self.started.poll() is None:
            self.notify("a matrix started here is still running", timeout=5)
            return
        if self.cluster_file is None:
            self.notify("no cluster file: start racperf with --cluster FILE", severity="error", timeout=8)
            return
        try:
            self.started = start_matrix(START_TOOL, self.cluster_file, self.data_dir)
        except OSError as exc:
            self.notify(f"cannot start racperf matrix: {exc}", severity="error", timeout=8)
            return
        self.notify(f"racperf matrix {START_TOOL} started (pid {self.started.pid})", timeout=5)

    def action_close(self) -> None:
        self.app.pop_screen()
