"""The live view of one run: per-interval sparklines, progress, ETA, job states, and the
tool's own live panels (ui/tool_panels/live_panels.py, named by its description's ``live_panels``).

The store watcher (ui/store_watcher.py, a worker thread) polls the store (one query for
samples after the last seq seen) every ``poll_interval_s`` and posts a :class:`RunLiveUpdate`
carrying the whole latest state when something changed; a newer update replaces the one still
queued, so a busy UI never falls behind.
"""

from __future__ import annotations

import time
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Footer, Label, ProgressBar, Static

from racperf_tui.core.contract.tool import MetricSpec
from racperf_tui.core.units import format_duration
from racperf_tui.ui.messages import LiveRunState, RunLiveUpdate
from racperf_tui.ui.run_actions import confirm_and_stop
from racperf_tui.ui.runs_data import description_of
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.shown import markup
from racperf_tui.ui.store_watcher import store_watcher
from racperf_tui.ui.tool_panels.live_panels import LivePanel, live_panels_for
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline

#: how often the live view reads the store; the sample-to-sparkline target is p99 <= 100 ms
POLL_INTERVAL_S = 0.05


#: The newest saturation episodes the live view lists.
SATURATION_LINES = 3


class RunProgressBar(ProgressBar):
    """A ProgressBar whose once-a-second ETA tick does not repaint it: the run view shows the
    run's own ETA in its status line (``show_eta=False``), and that tick was half of the view's
    repaints during a run."""

    _display_eta: reactive[int | None] = reactive[int | None](None, repaint=False)


class LiveRunBody(Vertical):
    """What the live view shows of one run (title, status, progress, saturation, sparklines,
    the tool's panels, its jobs), drawn from each :class:`LiveRunState` handed to
    :meth:`show_live`: the store watcher's for a live run, a replay's for a recorded one
    (ui/screens/replay_view.py shows two side by side)."""

    def __init__(self, title: str, tool: str = "") -> None:
        super().__init__()
        self.run_title = title
        #: the metrics the sparklines show, as the tool's description gives them
        self.metrics: tuple[MetricSpec, ...] = tuple(description_of(tool).live_metrics()) if tool else ()
        #: metric key -> its sparkline (no widget ids: a rebuild mounts the new ones while the
        #: old ones are still being removed)
        self.sparklines: dict[str, MetricSparkline] = _sparklines(self.metrics)
        #: the tool's own live panels (ui/tool_panels/live_panels.py), once its name is known
        self.tool = tool
        self.panels: list[Widget] = live_panels_for(list(description_of(tool).live_panels)) if tool else []
        #: the texts shown, so an update repaints only what changed
        self._status_shown: str | None = None
        self._jobs_shown: str = ""
        self._saturation_shown: tuple[str, ...] = ()
        self._newest: LiveRunState | None = None

    def compose(self) -> ComposeResult:
        yield Label(self.run_title, id="run-title", markup=False)
        yield Label("waiting for the first sample...", id="run-status")
        with Horizontal(id="run-progress-row"):
            yield RunProgressBar(total=100, show_eta=False, id="run-progress")
        # the target devices' saturation episodes, as the supervisor records them
        saturation = Static("", id="run-saturation", markup=False)
        saturation.display = False
        yield saturation
        with VerticalScroll(id="run-metrics"):
            # a tool without live figures says so instead of showing empty sparklines
            note = Static(self._live_note(), id="run-live-note", markup=False)
            note.display = bool(self._live_note())
            yield note
            yield from self.sparklines.values()
            yield from self.panels
        yield Static("", id="run-jobs")

    def _live_note(self) -> str:
        return description_of(self.tool).live_note if self.tool else ""

    def set_title(self, title: str) -> None:
        self.run_title = title
        self.query_one("#run-title", Label).update(title)

    def show_live(self, live: LiveRunState) -> None:
        """Draw ``live``: only what changed is repainted."""
        self._newest = live
        if live.error:
            self.show_status(f"[$error]{markup(live.error)}[/]")
            return
        self._show_the_tools_metrics(live)
        self._show_the_tools_panels(live)
        for key, sparkline in self.sparklines.items():
            values = live.series.get(key)
            if values is not None:
                sparkline.set_series(values, live.current.get(key))
        state_style = "$success" if live.running else "bold"
        parts = [f"[{state_style}]{live.state_name}[/]", f"elapsed {format_duration(live.elapsed_s)}"]
        if live.running:
            parts.append(f"ETA {format_duration(live.eta_s)}")
        parts.append(f"{live.samples_seen} samples")
        if not live.running:
            parts.append("enter: result")
        self.show_status("  ".join(parts))
        if live.progress_pct is not None:
            self.query_one(ProgressBar).update(progress=live.progress_pct)
        if live.saturation != self._saturation_shown:
            self._saturation_shown = live.saturation
            saturation = self.query_one("#run-saturation", Static)
            saturation.update("\n".join(f"! {line}" for line in live.saturation[-SATURATION_LINES:]))
            saturation.display = bool(live.saturation)
        jobs = f"jobs: {live.job_states}" if live.job_states else ""
        if jobs != self._jobs_shown:
            # the only text here whose height may change (it wraps): this one keeps its layout pass
            self._jobs_shown = jobs
            self.query_one("#run-jobs", Static).update(jobs)

    def show_status(self, text: str) -> None:
        """Repaint the one-line status, only if its text changed; its size is fixed in CSS, so
        no layout pass (one per update was most of this view's CPU during a run)."""
        if text != self._status_shown:
            self._status_shown = text
            self.query_one("#run-status", Label).update(text, layout=False)

    def _show_the_tools_metrics(self, live: LiveRunState) -> None:
        """One sparkline per metric the poller says the run's tool shows (its description's,
        narrowed to those its samples carry once they arrive): rebuilt only when they change."""
        if not live.metrics or live.metrics == self.metrics:
            return
        self.metrics = live.metrics
        container = self.query_one("#run-metrics", VerticalScroll)
        for old in self.sparklines.values():
            old.remove()
        self.sparklines = _sparklines(self.metrics)
        # above the tool's panels
        before = self.panels[0] if self.panels else None
        container.mount_all(list(self.sparklines.values()), before=before)

    def _show_the_tools_panels(self, live: LiveRunState) -> None:
        """The tool's live panels: mounted once its name is known, each given every update."""
        if live.tool and live.tool != self.tool:
            self.tool = live.tool
            note = self.query_one("#run-live-note", Static)
            note.update(self._live_note())
            note.display = bool(self._live_note())
            panels = live_panels_for(list(description_of(live.tool).live_panels))
            if panels:
                self.query_one("#run-metrics", VerticalScroll).mount_all(panels)
                self.panels = panels
                # their own widgets are there once mounted: the newest state is drawn then
                self.call_after_refresh(lambda: self._show_panels(self._newest or live))
                return
        self._show_panels(live)

    def _show_panels(self, live: LiveRunState) -> None:
        for panel in self.panels:
            if isinstance(panel, LivePanel):  # each is (live_panels_for); this tells the type checker
                panel.show_live(live)


class RunView(RacperfScreen[None]):
    """Live figures of one run, read from the store (the source of truth), never from fio."""

    HELP_TITLE = "Live run"

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back to the runs list (the run goes on)"),
        Binding("s", "stop", "Stop run", tooltip="Stop this run (asks first)"),
        Binding("enter,v", "result", "Result", tooltip="The run's result, once it has ended"),
    ]

    def __init__(
        self, data_dir: Any, run_id: Any, title: str = "", poll_interval_s: float = POLL_INTERVAL_S, tool: str = ""
    ) -> None:
        """``tool``: the run's tool when the opener knows it, so its sparklines are there
        before the first poll; else they come with it."""
        super().__init__()
        self.data_dir = data_dir
        self.run_id = run_id
        self.run_title = title or f"run {run_id}"
        self.poll_interval_s = poll_interval_s
        self.live: LiveRunState | None = None
        self.body = LiveRunBody(self.run_title, tool)
        #: monotonic time each update was painted, for the latency benchmark
        self.painted_at_monotonic: float = 0.0

    @property
    def sparklines(self) -> dict[str, MetricSparkline]:
        return self.body.sparklines

    @property
    def panels(self) -> list[Widget]:
        return self.body.panels

    @property
    def metrics(self) -> tuple[MetricSpec, ...]:
        return self.body.metrics

    def compose(self) -> ComposeResult:
        yield self.body
        yield Footer()

    def on_mount(self) -> None:
        store_watcher(self.app, self.data_dir).watch_run(self, self.run_id, self.poll_interval_s)

    def on_unmount(self) -> None:
        store_watcher(self.app, self.data_dir).unwatch(self)

    def on_run_live_update(self, message: RunLiveUpdate) -> None:
        live = message.live
        # ``live is self.live``: Textual hands a message to the handler of every class in the MRO,
        # so a subclass overriding this and calling super() (the benchmarks do) repeats it
        if live.run_id != self.run_id or live is self.live:
            return
        self.live = live
        self.body.show_live(live)
        self.painted_at_monotonic = time.monotonic()

    def action_close(self) -> None:
        self.dismiss()

    def action_stop(self) -> None:
        if self.live is not None and self.live.ended:
            self.notify(f"run {self.run_id} is already {self.live.state_name}")
            return
        confirm_and_stop(self.app, self.data_dir, self.run_id)

    def action_result(self) -> None:
        """Open the result view once the run is finished."""
        if self.live is None or self.live.running:
            self.notify("the run is still running; its result comes when it ends")
            return
        self.app.switch_screen(ResultView(self.data_dir, self.run_id))


def _sparklines(metrics: tuple[MetricSpec, ...]) -> dict[str, MetricSparkline]:
    """A sparkline per metric: its label, its unit, its own format (divisor included)."""
    return {spec.key: MetricSparkline(spec.label, spec.unit, formatter=spec.compact) for spec in metrics}
