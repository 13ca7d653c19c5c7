"""The live iostat panel: iostat -x figures, queue facts, sparklines and saturation flags.

Data comes from the headless core (``IostatSampler``, whose ``queue_facts`` reads sysfs with
``read_queue_facts``); the panel only
decides when to sample, what to show and how. Live and ``--root DIR`` use the same path: the
sampler re-reads the last root on every tick, so a root kept updated by something else is live.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.markup import escape
from textual.timer import Timer
from textual.widgets import Input, Static

from racperf_tui.core.diskstats import QueueFacts
from racperf_tui.core.iostat import IostatSampler
from racperf_tui.ui.widgets.iostat_model import (
    INTERVALS_S,
    SORT_KEYS,
    SPARK_METRICS,
    AwaitThresholds,
    IostatModel,
    SaturationRules,
)
from racperf_tui.ui.widgets.iostat_table import IostatTable

#: Queue facts change rarely (an admin switching the scheduler): re-read them this often.
FACTS_REFRESH_S = 30.0


class IostatPanel(Vertical):
    """The Disks tab. ``roots``: None for the live system, else replayed/updated root dirs."""

    HELP_TITLE = "Disks (iostat)"

    BINDINGS = [
        Binding("space", "toggle_pause", "Pause", tooltip="Pause / resume sampling"),
        # Not in the footer (80 columns must still show q and ?); the status line shows the
        # interval and the help screen these keys.
        Binding("minus", "interval(-1)", "Faster", show=False,
                tooltip="Shorter refresh interval (0.5 1 2 3 5 10 s)"),
        Binding("plus,equals_sign", "interval(1)", "Slower", show=False,
                tooltip="Longer refresh interval (0.5 1 2 3 5 10 s)"),
        Binding("s", "cycle_sort", "Sort", tooltip="Sort by %util, await, avgqu-sz, name"),
        Binding("m", "cycle_metric", "Spark",
                tooltip="Sparkline shows %util, await, avgqu-sz, IOPS, MB/s"),
        Binding("p", "toggle_partitions", "Parts", tooltip="Whole disks only / with partitions"),
        Binding("slash", "edit_pattern", "Filter",
                tooltip="Filter by device name (glob sd* or substring)"),
        Binding("b", "toggle_benchmark_only", "Bench devs", show=False,
                tooltip="Only the devices a running benchmark touches"),
        Binding("c", "toggle_columns", "All columns", show=False,
                tooltip="Fit the columns to the width / all columns, scroll with left/right"),
        Binding("escape", "clear_filters", "Clear filters", show=False,
                tooltip="Clear the name filter and the benchmark filter"),
    ]

    def __init__(self, roots: list[Path] | None = None, interval_s: float = 1.0, *,
                 thresholds: AwaitThresholds | None = None, rules: SaturationRules | None = None,
                 sampler: IostatSampler | None = None, id: str | None = None) -> None:
        """``thresholds`` default to ``$RACPERF_AWAIT_MS`` ("WARN,CRIT") or 5/10 ms."""
        super().__init__(id=id)
        self.roots = [Path(r) for r in roots] if roots else None
        if interval_s <= 0:
            raise ValueError(f"iostat panel: interval must be > 0 s, got {interval_s}")
        self.interval_s = float(interval_s)
        self.error_text = ""
        try:
            self.thresholds = thresholds or AwaitThresholds.from_env()
        except ValueError as exc:  # a typo in the environment must not stop the dashboard
            self.thresholds = AwaitThresholds()
            self.error_text = f"{exc}; using 5,10"
        # Partitions are always sampled and filtered here, so toggling them needs no new sampler.
        self.sampler = sampler or IostatSampler(roots=self.roots, partitions=True, dm_names=True)
        self.model = IostatModel(rules, facts_of=self._read_facts)
        self.paused = False
        self._config_error = self.error_text
        self._facts_read_at = time.monotonic()
        self._timer: Timer | None = None
        self._texts: dict[str, str] = {}

    # ---- widgets -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static(classes="iostat-status")
        yield IostatTable(self.thresholds, id="iostat-table")
        yield Input(placeholder="device name: glob (sd*) or substring; Enter applies, Esc cancels",
                    id="iostat-pattern")
        yield Static(classes="iostat-detail")
        yield Static(classes="iostat-alert")

    @property
    def table(self) -> IostatTable:
        return self.query_one(IostatTable)

    def on_mount(self) -> None:
        self.query_one(".iostat-alert", Static).tooltip = self._rules_text()
        self.sample_now()
        self.table.focus()
        self._start_timer()

    def _start_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_interval(self.interval_s, self.sample_now, pause=self.paused)

    # ---- sampling ------------------------------------------------------------------------
    def _read_facts(self, kernel_name: str) -> QueueFacts | None:
        """sysfs queue facts of the root being sampled (the sampler caches them)."""
        try:
            return self.sampler.queue_facts(kernel_name)
        except (OSError, ValueError):
            return None

    def sample_now(self) -> None:
        """Take one sample and show it (the timer calls this; tests call it directly)."""
        try:
            report = self.sampler.sample()
        except Exception as exc:  # noqa: BLE001 - a live monitor reports and keeps running
            self.error_text = f"cannot sample: {type(exc).__name__}: {exc}"
            self._show()
            return
        self.error_text = report.errors[0] if report.errors else self._config_error
        # The first report averages since boot: shown at once, but it is no sample of "now".
        self.model.update(report, record_history=not report.since_boot)
        now = time.monotonic()
        if now - self._facts_read_at >= FACTS_REFRESH_S:
            self._facts_read_at = now
            self.model.refresh_facts()
        self._show()

    # ---- showing -------------------------------------------------------------------------
    def _set_text(self, selector: str, text: str) -> None:
        """Update a one-line Static only when its text changed (a re-layout costs CPU)."""
        if self._texts.get(selector) != text:
            self._texts[selector] = text
            # Fixed one-line widgets: a repaint is enough, no re-layout of the screen.
            self.query_one(selector, Static).update(text, layout=False)

    def _show(self) -> None:
        self.table.update_rows(self.model.visible())
        self._show_status()
        self._show_detail()

    def _show_status(self) -> None:
        model = self.model
        shown = len(self.table.states)
        parts = [f"every {self.interval_s:g} s (-/+)", f"{shown}/{len(model.devices)} devices",
                 f"sort {model.sort_key}", f"spark {self.table.spark_metric}",
                 "with partitions" if model.show_partitions else "whole disks"]
        if model.name_pattern:
            parts.append(escape(f"name {model.name_pattern!r}"))
        if model.benchmark_only:
            parts.append(f"benchmark devices ({len(model.benchmark_devices)})")
        if self.paused:
            parts.append("[b reverse] PAUSED [/]")
        self._set_text(".iostat-status", " " + " │ ".join(parts))

    def _show_detail(self) -> None:
        model = self.model
        state = model.devices.get(self.table.cursor_device or "")
        if state is None:
            detail = " no device matches the filters" if model.devices else " no devices"
        else:
            facts = state.facts
            if facts is None:
                facts_text = "queue facts unknown"
            else:
                rot = {None: "-", True: "yes", False: "no"}[facts.rotational]
                facts_text = (f"queue_depth {facts.queue_depth if facts.queue_depth is not None else '-'}"
                              f" · nr_requests {facts.nr_requests if facts.nr_requests is not None else '-'}"
                              f" · scheduler {facts.scheduler or '-'} · rotational {rot}")
            detail = f" {state.name}: {facts_text}"
        self._set_text(".iostat-detail", escape(detail))
        alert = self.query_one(".iostat-alert", Static)
        saturated = model.saturated()
        if self.error_text:
            text = f" [red]{escape(self.error_text)}[/]"
        elif saturated:
            first = next((s for s in saturated if s.name == self.table.cursor_device), saturated[0])
            others = [s.name for s in saturated if s is not first]
            also = f" (+{', '.join(others)})" if others else ""
            text = escape(f" ! SATURATED {first.name}{also}: {first.saturation_reason}")
        else:
            rules = model.rules
            text = (f" no saturation (flag ! = %util >= {rules.util_pct:g} with avgqu-sz near queue depth,"
                    f" or await >= {rules.await_over_svctm:g}x svctm, {rules.consecutive} samples in a row)")
        alert.set_class(bool(saturated) and not self.error_text, "-saturated")
        self._set_text(".iostat-alert", text)

    def _rules_text(self) -> str:
        rules, th = self.model.rules, self.thresholds
        return (f"A device is flagged saturated when, for {rules.consecutive} samples in a row, either "
                f"%util >= {rules.util_pct:g} and avgqu-sz >= {rules.queue_near_frac:g} x its queue depth "
                f"(SCSI queue_depth, else nr_requests): the device is full; or await >= "
                f"{rules.await_over_svctm:g} x svctm (and >= {rules.await_min_ms:g} ms): requests wait in the "
                f"queue, not in service. await colours: green < {th.warn_ms:g} ms, amber up to "
                f"{th.crit_ms:g} ms, red above (RACPERF_AWAIT_MS=WARN,CRIT).")

    def on_iostat_table_cursor_moved(self, message: IostatTable.CursorMoved) -> None:
        self._show_detail()

    # ---- API for other panels ------------------------------------------------------------
    def set_benchmark_devices(self, names: set[str]) -> None:
        """The devices a running benchmark touches; the 'b' filter shows only these."""
        self.model.set_benchmark_devices(names)
        if self.is_mounted:
            self._show()

    # ---- actions -------------------------------------------------------------------------
    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        if self._timer is not None:
            if self.paused:
                self._timer.pause()
            else:
                self._timer.resume()
        self._show_status()

    def action_interval(self, step: int) -> None:
        """Step through INTERVALS_S from the current interval (or the nearest one)."""
        nearest = min(range(len(INTERVALS_S)), key=lambda i: abs(INTERVALS_S[i] - self.interval_s))
        index = min(max(nearest + step, 0), len(INTERVALS_S) - 1)
        if INTERVALS_S[index] != self.interval_s:
            self.interval_s = INTERVALS_S[index]
            self._start_timer()
        self._show_status()

    def action_cycle_sort(self) -> None:
        keys = list(SORT_KEYS)
        self.model.sort_key = keys[(keys.index(self.model.sort_key) + 1) % len(keys)]
        self._show()

    def action_cycle_metric(self) -> None:
        metrics = list(SPARK_METRICS)
        table = self.table
        table.spark_metric = metrics[(metrics.index(table.spark_metric) + 1) % len(metrics)]
        table.rerender()
        self._show_status()

    def action_toggle_partitions(self) -> None:
        self.model.show_partitions = not self.model.show_partitions
        self._show()

    def action_toggle_benchmark_only(self) -> None:
        self.model.benchmark_only = not self.model.benchmark_only
        self._show()

    def action_toggle_columns(self) -> None:
        self.table.all_columns = not self.table.all_columns
        self.table.rerender()

    def action_clear_filters(self) -> None:
        self.model.name_pattern = ""
        self.model.benchmark_only = False
        self._show()

    def action_edit_pattern(self) -> None:
        pattern_input = self.query_one("#iostat-pattern", Input)
        pattern_input.value = self.model.name_pattern
        pattern_input.add_class("-visible")
        pattern_input.focus()

    def set_name_pattern(self, pattern: str) -> None:
        """Show only devices matching ``pattern`` (glob if it has * ? [, else substring)."""
        self.model.name_pattern = pattern.strip()
        self._show()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.set_name_pattern(event.value)
        self._close_pattern()

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.query_one("#iostat-pattern", Input).has_focus:
            event.stop()
            self._close_pattern()

    def _close_pattern(self) -> None:
        self.query_one("#iostat-pattern", Input).remove_class("-visible")
        self.table.focus()
