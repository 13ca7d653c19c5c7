"""A sweep, live or ended (its own view, from New run or a sweep group's row in the Runs tab):
the curve building point by point (IOPS and MiB/s against the load, p99 and p50 against
IOPS, plotext), the point running now with its live figures, the target devices' avgqu-sz,
await and %util beside the charts, the knee marked once found, why the sweep stopped, and a
row per point so far.

Everything comes from the store watcher's :class:`SweepUpdate` (ui/store_watcher.py): the
group's result is what the sweep's detached driver (orchestration/sweep_driver.py) writes after
every point, read back as curves (tools/fio/sweep_curves.py), so the view shows the same curve,
knee and stop reason as ``racperf sweep fio``. ``s`` stops the sweep (its driver stops the point
running); enter on a point opens that point's run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Label, Static

from racperf_tui.core.disks.iostat_math import IostatRow
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.orchestration.sweep_driver import stop_sweep
from racperf_tui.orchestration.sweep_point import PLAN_KEY
from racperf_tui.tools.fio.load_points import LoadPoint, LoadPointError, live_figures
from racperf_tui.tools.fio.sweep_charts import iops_chart, latency_chart
from racperf_tui.tools.fio.sweep_curves import KNEE_GAIN_TEXT, Curve, curve_from_json
from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog
from racperf_tui.ui.messages import SweepSnapshot, SweepUpdate
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.shown import markup
from racperf_tui.ui.store_watcher import store_watcher

#: the points table's columns: (key, header, width)
POINT_COLUMNS = (
    ("iodepth", "iodepth", 7),
    ("numjobs", "jobs", 4),
    ("iops", "IOPS", 9),
    ("mib_s", "MiB/s", 8),
    ("mean", "mean ms", 8),
    ("p99", "p99 ms", 8),
    ("flight", "in flight", 9),
    ("knee", "", 6),
)


def ms(value_us: float | None) -> str:
    return "-" if value_us is None else f"{value_us / 1000:.3f}"


def curves_of_result(result: Mapping[str, Any] | None) -> tuple[list[Curve], str]:
    """The curves a sweep's result holds so far, and why some could not be read ('' if none)."""
    curves: list[Curve] = []
    for data in (result or {}).get("curves") or []:
        try:
            curves.append(curve_from_json(data))
        except LoadPointError as exc:
            return curves, str(exc)
    return curves, ""


def describe_point(point: LoadPoint) -> str:
    return (
        f"iodepth {point.iodepth}, numjobs {point.numjobs}: {point.iops:,.0f} IOPS, "
        f"mean {ms(point.lat_mean_us)} ms, p99 {ms(point.lat_p99_us)} ms"
    )


def plan_words(walk: Mapping[str, Any]) -> str:
    """The sweep's plan in a line: its loads, a point's seconds, its stop rule."""
    depths = ",".join(str(d) for d in walk.get("iodepth") or [])
    jobs = ",".join(str(j) for j in walk.get("numjobs") or [])
    if walk.get("stop_p99_ms") is not None:
        stop = f"stop at p99 over {float(walk['stop_p99_ms']):g} ms"
    elif walk.get("stop_knee"):
        stop = "stop 2 points past the knee"
    else:
        stop = "every point runs"
    return f"iodepth {depths} x numjobs {jobs}, {walk.get('point_seconds', '?')} s a point, {stop}"


def device_lines(rows: tuple[IostatRow, ...], live: bool = True) -> str:
    """The target devices' latest interval: avgqu-sz, await (ms) and %util, a line each
    (``live`` False: the last second sampled while the sweep walked)."""
    if not rows:
        return "devices: none sampled\n(a sweep on another node,\nor not walking)"
    lines = [f"{'device':<8} {'qu-sz':>5} {'await':>6} {'util':>5}"]
    for row in rows:
        lines.append(f"{row.device[:8]:<8} {row.avgqu_sz:>5.1f} {row.await_ms:>6.2f} {row.util_pct:>4.0f}%")
    return "\n".join([*lines, "(await in ms, last second)" if live else "(await in ms, as it ended)"])


class SweepChart(Static):
    """One of a curve's charts, redrawn to the widget's size."""

    def __init__(self, draw: Callable[[Curve, int, int], str | None], **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.draw = draw
        self.curve: Curve | None = None

    def plot(self, curve: Curve | None) -> None:
        if curve != self.curve:
            self.curve = curve
            self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        width, height = self.content_size.width, self.content_size.height
        if width <= 0 or height <= 0:
            return
        if self.curve is None:
            self.update("no point ended yet")
            return
        text = self.draw(self.curve, width, height)
        self.update(Text.from_ansi(text, no_wrap=True) if text else "no latency percentiles in the points")


class SweepView(RacperfScreen[None]):
    """A sweep live (see the module doc)."""

    HELP_TITLE = "Sweep"

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back to the runs list (the sweep goes on)"),
        Binding("s", "stop", "Stop sweep", tooltip="Stop the sweep: the point running stops, no further point starts"),
        Binding("enter", "open_point", "Open point's run", show=False, tooltip="The highlighted point's run"),
    ]

    def __init__(self, data_dir: Any, group_id: int) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.group_id = group_id
        self.snapshot: SweepSnapshot | None = None
        self.curves: list[Curve] = []
        self._points_shown: list[tuple[str, ...]] = []

    def compose(self) -> ComposeResult:
        yield Label(f"sweep g{self.group_id}", id="sweep-title", markup=False)
        yield Static("reading the sweep...", id="sweep-status")
        with Horizontal(id="sweep-body"):
            # MiB/s on a right axis only where the chart has room for a second axis
            yield SweepChart(
                lambda curve, w, h: iops_chart(curve, w, h, colour=True, mib_s=w >= 50), id="sweep-iops-chart"
            )
            yield SweepChart(lambda curve, w, h: latency_chart(curve, w, h, colour=True), id="sweep-latency-chart")
            yield Static(device_lines(()), id="sweep-devices", markup=False)
        yield Static("", id="sweep-knee")
        yield DataTable(id="sweep-points", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, header, width in POINT_COLUMNS:
            table.add_column(header, key=key, width=width)
        store_watcher(self.app, self.data_dir).watch_sweep(self, self.group_id)
        table.focus()

    def on_unmount(self) -> None:
        store_watcher(self.app, self.data_dir).unwatch(self)

    # ---- updates -----------------------------------------------------------------------------
    def on_sweep_update(self, message: SweepUpdate) -> None:
        snapshot = message.snapshot
        if snapshot.group_id != self.group_id:
            return
        if snapshot.error:
            self.query_one("#sweep-status", Static).update(f"[$error]{markup(snapshot.error)}[/]")
            return
        self.snapshot = snapshot
        self.curves, unreadable = curves_of_result(snapshot.result)
        walk = (snapshot.group.config.get(PLAN_KEY) if snapshot.group else None) or {}
        target = walk.get("target") or (snapshot.group.config.get("target") if snapshot.group else "") or "?"
        nodes = ", ".join(snapshot.group.nodes) if snapshot.group else ""
        self.query_one("#sweep-title", Label).update(
            f"sweep g{self.group_id}: fio {self._kind()} on {target} ({nodes}); {plan_words(walk)}"
        )
        self.query_one("#sweep-status", Static).update(self._status(walk))
        building = self.curves[-1] if self.curves else None
        self.query_one("#sweep-iops-chart", SweepChart).plot(building)
        self.query_one("#sweep-latency-chart", SweepChart).plot(building)
        self.query_one("#sweep-devices", Static).update(device_lines(snapshot.devices, snapshot.walking))
        self.query_one("#sweep-knee", Static).update(self._verdict(unreadable))
        self._show_points()

    def _kind(self) -> str:
        config = self.snapshot.group.config if self.snapshot and self.snapshot.group else {}
        return " ".join(str(config[key]) for key in ("rw", "bs") if config.get(key)) or "job"

    def _planned_points(self, walk: Mapping[str, Any]) -> int:
        return len(walk.get("iodepth") or []) * len(walk.get("numjobs") or [])

    def _status(self, walk: Mapping[str, Any]) -> str:
        """The point running and its live figures, or how the sweep ended."""
        snapshot = self.snapshot
        assert snapshot is not None
        done = sum(len(curve.points) for curve in self.curves)
        planned = self._planned_points(walk)
        result = snapshot.result or {}
        if result.get("finished"):
            ended = result.get("ended")
            how = "every point ran" if not ended and done == planned else ended or "its stop rule was met"
            return f"[b]ended[/b] after {done} of {planned} points: {markup(how)}"
        current = snapshot.current
        if current is not None:
            config = current.config
            figures = live_figures(snapshot.current_metrics)
            live = (
                f"{figures['iops']:,.0f} IOPS, {figures.get('bw_kib_s', 0.0) / 1024:,.1f} MiB/s, "
                f"p50 {ms(figures.get('lat_p50_us'))} ms, p99 {ms(figures.get('lat_p99_us'))} ms"
                if "iops" in figures
                else "waiting for its first sample"
            )
            return (
                f"[$success]●[/] point {done + 1} of {planned}: iodepth {config.get('iodepth')}, "
                f"numjobs {config.get('numjobs', 1)} (run {current.id}): {live}"
            )
        if snapshot.driver_alive:
            return f"[$success]●[/] {done} of {planned} points done; starting the next"
        return (
            f"[$warning]the sweep's driver is gone[/] (killed, or the machine restarted): {done} of {planned} "
            "points kept, no further point starts"
        )

    def _verdict(self, unreadable: str) -> str:
        """The knee (marked), the best point under the ceiling, why each curve stopped, notes."""
        lines: list[str] = []
        for index, curve in enumerate(self.curves):
            fixed = ", ".join(f"{k} {v}" for k, v in curve.fixed.items())
            head = f"curve {index + 1} ({fixed}): " if len(self.curves) > 1 else ""
            knee = curve.knee
            lines.append(
                head
                + (
                    f"[b]knee[/b] at {describe_point(knee)}"
                    if knee is not None
                    else f"no knee yet (the last point still gained {KNEE_GAIN_TEXT} or more)"
                )
            )
            if curve.ceiling_p99_us is not None:
                best = curve.best_under_ceiling
                ceiling = f"{curve.ceiling_p99_us / 1000:g} ms"
                lines.append(
                    f"  best with p99 under {ceiling}: {describe_point(best)}"
                    if best
                    else f"  no point under {ceiling}"
                )
            if curve.stopped:
                lines.append(f"  stopped: {markup(curve.stopped)}")
            lines += [f"  iodepth {p.iodepth}: {markup(p.note)}" for p in curve.points if p.note][-1:]
        if unreadable:
            lines.append(f"[$error]{markup(unreadable)}[/]")
        return "\n".join(lines) or "no point has ended yet"

    def _show_points(self) -> None:
        rows: list[tuple[str, ...]] = []
        for curve in self.curves:
            knee = curve.knee
            for point in curve.points:
                outstanding = point.littles_law_outstanding
                rows.append(
                    (
                        str(point.iodepth),
                        str(point.numjobs),
                        f"{point.iops:,.0f}",
                        f"{point.bw_kib_s / 1024:,.1f}",
                        ms(point.lat_mean_us),
                        ms(point.lat_p99_us),
                        "-" if outstanding is None else f"{outstanding:.1f}/{point.configured_depth}",
                        "◀ knee" if point is knee else "",
                        str(point.run_id if point.run_id is not None else ""),
                    )
                )
        if rows == self._points_shown:
            return
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear()
        for index, row in enumerate(rows):
            table.add_row(*row[:-1], key=f"{index}:{row[-1]}")
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))
        self._points_shown = rows

    # ---- actions -----------------------------------------------------------------------------
    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_point()

    def action_open_point(self) -> None:
        """The highlighted point's run (its result: a point in the table has ended)."""
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or ""
        run_id = key.partition(":")[2]
        if run_id.isdigit():
            self.app.push_screen(ResultView(self.data_dir, int(run_id)))
        else:
            self.notify("this point ran on several nodes: open its runs from the runs list")

    def action_stop(self) -> None:
        if self.snapshot is not None and not self.snapshot.walking:
            self.notify(f"sweep g{self.group_id} has ended")
            return
        app, data_dir, group_id = self.app, self.data_dir, self.group_id

        def stop() -> None:
            try:
                said = stop_sweep(group_id, resolve_data_dir(data_dir))
            except Exception as error:
                app.call_from_thread(app.notify, f"cannot stop sweep g{group_id}: {error}", severity="error")
                return
            app.call_from_thread(app.notify, said)

        def answered(yes: bool | None) -> None:
            if yes:
                app.run_worker(stop, thread=True, group="stop-runs")

        app.push_screen(
            ConfirmDialog(
                f"Stop sweep g{group_id}? The point running writes its report; no further point starts.",
                yes_label="Stop sweep",
            ),
            answered,
        )

    def action_close(self) -> None:
        self.dismiss()
