"""The live iostat panel: iostat -x figures, queue facts, sparklines and saturation flags.

Data comes from the headless core (``IostatSampler``, whose ``queue_facts`` reads sysfs with
``read_queue_facts``); the panel only
decides when to sample, what to show and how. Live and ``--root DIR`` use the same path: the
sampler re-reads the last root on every tick, so a root kept updated by something else is live.
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.markup import escape
from textual.widgets import Input, Static

from racperf_tui.core.disks.diskstats import QueueFacts, printable_name
from racperf_tui.core.disks.iostat_model import (
    INTERVALS_S,
    SORT_KEYS,
    SPARK_METRICS,
    AwaitThresholds,
    IostatModel,
)
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from racperf_tui.core.disks.saturation import SaturationRules
from racperf_tui.ui.phase_timer import PhaseTimer
from racperf_tui.ui.screens.load_latency import LoadLatencyScreen
from racperf_tui.ui.widgets.iostat_table import IostatTable

#: A report over no more than this (uptime unchanged, clamped to one tick) is no sample.
MIN_REPORT_INTERVAL_S = 0.01

#: Queue facts change rarely (an admin switching the scheduler): re-read them this often.
FACTS_REFRESH_S = 30.0


#: Lines under the table that list the flagged devices at least (the last says how many
#: more); up to half the panel's height when their reasons need them.
ALERT_LINES = 4
#: below this width the detail line is two, whatever the device (facts, then its figures
#: against the rules: at 80 columns they do not fit together), so its height does not change
#: with the cursor (a re-layout and the table's rows rebuilt at every move)
DETAIL_TWO_LINES_BELOW = 100

#: where a queue limit comes from, in the few letters a narrow detail line has
_SHORT_SOURCES = {"SCSI queue_depth": "qd", "nr_requests": "nr"}


def first_line(text: str, width: int) -> str:
    """The words of ``text`` that fit in ``width`` cells, as a word-wrapped line shows them
    (a first word longer than the width is cut): the detail and alert lines do not wrap
    (app.tcss), so the panel cuts them itself, once per new text."""
    if len(text) <= width:
        return text
    cut = text.rfind(" ", 0, width + 1)
    return text[:width] if cut <= 0 else text[:cut].rstrip()


def alert_lines(texts: list[str], labels: list[str], width: int, budget: int) -> list[str]:
    """The flagged devices' lines in at most ``budget`` lines of ``width``: each text whole
    (wrapped, its continuation indented) when they all fit; else one line each, cut at a
    word; else the first ones and '+N more: names' on the last line."""
    wrapped = [textwrap.wrap(text, width, subsequent_indent="   ") or [""] for text in texts]
    if sum(len(lines) for lines in wrapped) <= budget:
        return [line for lines in wrapped for line in lines]
    if len(texts) <= budget:
        return [first_line(text, width) for text in texts]
    shown = budget - 1
    more = f" ! +{len(texts) - shown} more: {', '.join(labels[shown:])}"
    return [first_line(text, width) for text in texts[:shown]] + [first_line(more, width)]


class IostatPanel(Vertical):
    """The Disks tab. ``roots``: None for the live system, else replayed/updated root dirs."""

    HELP_TITLE = "Disks (iostat)"

    BINDINGS = [
        Binding("space", "toggle_pause", "Pause", tooltip="Pause / resume sampling"),
        # Not in the footer (80 columns must still show q and ?); the status line shows the
        # interval and the help screen these keys.
        Binding("minus", "interval(-1)", "Faster", show=False, tooltip="Shorter refresh interval (0.5 1 2 3 5 10 s)"),
        Binding(
            "plus,equals_sign",
            "interval(1)",
            "Slower",
            show=False,
            tooltip="Longer refresh interval (0.5 1 2 3 5 10 s)",
        ),
        Binding("s", "cycle_sort", "Sort", tooltip="Sort by %util, await, avgqu-sz, name"),
        Binding("m", "cycle_metric", "Spark", tooltip="Sparkline shows %util, await, avgqu-sz, IOPS, MB/s"),
        Binding("p", "toggle_partitions", "Parts", tooltip="Whole disks only / with partitions"),
        Binding("slash", "edit_pattern", "Filter", tooltip="Filter by device name (glob sd* or substring)"),
        Binding(
            "b",
            "toggle_benchmark_only",
            "Bench devs",
            show=False,
            tooltip="Only the devices a running benchmark touches",
        ),
        Binding(
            "c",
            "toggle_columns",
            "All columns",
            show=False,
            tooltip="Fit the columns to the width / all columns, scroll with left/right",
        ),
        Binding(
            "l", "load_latency", "Load curve", show=False, tooltip="The cursor device's IOPS and await against avgqu-sz"
        ),
        Binding(
            "escape",
            "clear_filters",
            "Clear filters",
            show=False,
            tooltip="Clear the name filter and the benchmark filter",
        ),
    ]

    def __init__(
        self,
        roots: list[Path] | None = None,
        interval_s: float = 1.0,
        *,
        thresholds: AwaitThresholds | None = None,
        rules: SaturationRules | None = None,
        sampler: IostatSampler | None = None,
        id: str | None = None,
    ) -> None:
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
        if self.model.rules_error:
            self.error_text = "; ".join(e for e in (self.error_text, self.model.rules_error) if e)
        self.paused = False
        self.hidden = False  # behind another tab: no sampling (on_hide)
        self._config_error = self.error_text
        self._facts_read_at = time.monotonic()
        self._last_report_at = time.monotonic()  # of the last report that covered real time
        self.samples_taken = 0  # timer ticks that read a report (tests read it)
        # The first report after a shorter interval still spans the old one: not worth a note.
        self._quiet_until_sample = 0
        self._timer: PhaseTimer | None = None
        self._texts: dict[str, str] = {}
        self._detail_for: tuple[str | None, int] | None = None  # (cursor device, model tick)

    # ---- widgets -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # Kept: a query per use (several per tick) costs more than the rest of a status line.
        self._table = IostatTable(self.thresholds, id="iostat-table")
        self._lines = {
            selector: Static(classes=selector[1:]) for selector in (".iostat-status", ".iostat-detail", ".iostat-alert")
        }
        yield self._lines[".iostat-status"]
        yield self._table
        yield Input(placeholder="device name: glob (sd*) or substring; Enter applies, Esc cancels", id="iostat-pattern")
        yield self._lines[".iostat-detail"]
        yield self._lines[".iostat-alert"]

    @property
    def table(self) -> IostatTable:
        return self._table

    def on_mount(self) -> None:
        self._lines[".iostat-alert"].tooltip = self._rules_text()
        self.sample_now()
        self.table.focus()
        self._start_timer()

    def on_show(self) -> None:
        """Back on the Disks tab, the keys work at once: the tab switch left the focus on a
        widget of the hidden tab (or none), and the panel's keys only reach it when the focus
        is inside it. An open name filter keeps the focus it had. Sampling resumes: a sample
        at once (over the time away, as after a pause), then in phase."""
        self.hidden = False
        if self._timer is not None and not self.paused:
            self._timer.resume()
        pattern_input = self.query_one("#iostat-pattern", Input)
        (pattern_input if pattern_input.has_class("-visible") else self.table).focus()

    def on_hide(self) -> None:
        """Behind another tab the panel takes no samples: nothing of it is seen, and its
        sampling and table behind the Cluster tab were a fifth of the app's CPU there (16
        nodes). The sparklines' history has a gap for the time away."""
        self.hidden = True
        if self._timer is not None:
            self._timer.pause()

    def _start_timer(self) -> None:
        """Sample every interval, at whole multiples of it on the wall clock: in phase with
        the header clock, so both share one screen update. The first sample comes half an
        interval to one and a half after now."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = PhaseTimer(
            self.interval_s,
            self.sample_now,
            pause=self.paused or self.hidden,
            first_after_s=self.interval_s / 2,
            on_error=self.app._handle_exception,
        )

    def on_unmount(self) -> None:
        if self._timer is not None:
            self._timer.stop()

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
        now = time.monotonic()
        self.samples_taken += 1
        if not report.since_boot and report.interval_s <= MIN_REPORT_INTERVAL_S and not report.errors:
            # A --root whose updater has not written since the last sample: same uptime, so a
            # row of zeros over a clamped 0.01 s. Skip it; the next report covers the whole
            # interval from the last real one (the sampler's base is unchanged counters).
            self._show_status()
            return
        self._last_report_at = now
        # The first report averages since boot: shown at once, but it is no sample of "now".
        self.model.update(report, record_history=not report.since_boot)
        if now - self._facts_read_at >= FACTS_REFRESH_S:
            self._facts_read_at = now
            self.model.refresh_facts()
        self._show()

    # ---- showing -------------------------------------------------------------------------
    def _set_text(self, selector: str, text: str) -> None:
        """Update a one-line Static only when its text changed (a re-layout costs CPU)."""
        before = self._texts.get(selector)
        if before != text:
            self._texts[selector] = text
            # The same number of lines: a repaint is enough, no re-layout of the screen (the
            # alert lists one line per flagged device, so its height follows them).
            same_height = before is not None and before.count("\n") == text.count("\n")
            self._lines[selector].update(text, layout=not same_height)

    def _show(self) -> None:
        self.table.update_rows(self.model.visible())
        self._show_status()
        self._show_detail()

    def _line_width(self) -> int:
        """Cells a one-line Static of the panel can show (80 before the first layout)."""
        return self.size.width or 80

    @staticmethod
    def _fit(parts: list[tuple[str, str]], width: int, separator: str = " │ ") -> str:
        """Join (long, short) texts; switch to the short forms, first first, until it fits.

        Leading markup (the PAUSED marker) is not counted, so the width check is on cells.
        """
        chosen = [long for long, _short in parts]
        for index in range(len(parts) + 1):
            plain = " " + separator.join(chosen)
            cells = len(plain.replace("[b reverse]", "").replace("[b]", "").replace("[/]", ""))
            if cells <= width or index == len(parts):
                break
            chosen[index] = parts[index][1]
        return " " + separator.join(chosen)

    def _show_status(self) -> None:
        model = self.model
        shown = len(self.table.states)
        parts: list[tuple[str, str]] = []
        if self.paused:
            # First: a marker cut off at the right edge of an 80-column terminal is no marker.
            parts.append(("[b reverse] PAUSED [/]", "[b reverse] PAUSED [/]"))
        report = model.last_report
        if report is not None and report.since_boot:
            # The first report averages everything since boot, not the last second: a device
            # busy at night would look busy now. Said until the first real interval is in.
            parts.append(("[b]averages since boot[/]", "[b]since boot[/]"))
        parts.append((f"every {self.interval_s:g} s (-/+)", f"{self.interval_s:g} s"))
        if (
            report is not None
            and not report.since_boot
            and self.samples_taken > self._quiet_until_sample
            and report.interval_s > 1.25 * self.interval_s
        ):
            # After a pause (or a stalled host) the rates average the real interval: say so.
            parts.append((f"last report over {report.interval_s:.1f} s", f"over {report.interval_s:.1f} s"))
        stale_s = time.monotonic() - self._last_report_at
        if report is not None and not self.paused and stale_s > 2 * self.interval_s + 0.5:
            # The root's updater stopped (or lags): the figures on screen are old.
            parts.append((f"[b]root unchanged for {stale_s:.0f} s[/]", f"[b]stale {stale_s:.0f} s[/]"))
        parts += [
            (f"{shown}/{len(model.devices)} devices", f"{shown}/{len(model.devices)}"),
            (f"sort {model.sort_key}", f"↓{model.sort_key}"),
            (f"spark {self.table.spark_metric}", f"~{self.table.spark_metric}"),
            ("with partitions", "+parts") if model.show_partitions else ("whole disks", "disks"),
        ]
        if self.table.all_columns:
            parts.append(("all columns (←/→ scroll)", "all cols"))
        if model.name_pattern:
            parts.append((escape(f"name {model.name_pattern!r}"), escape(repr(model.name_pattern))))
        if model.benchmark_only:
            parts.append(
                (f"benchmark devices ({len(model.benchmark_devices)})", f"bench ({len(model.benchmark_devices)})")
            )
        self._set_text(".iostat-status", self._fit(parts, self._line_width()))

    def on_resize(self, event: events.Resize) -> None:
        if self.model.last_report is not None:
            self._show_status()
            self._show_detail()

    def _saturation_facts(self, state, long: bool = True) -> str:
        """Where the cursor device stands against the saturation rules, in its own figures.

        Shown for every device, so a busy device that is not flagged says why not (a loop
        device at iodepth 32 has no SCSI queue_depth: its depth is nr_requests, 128).
        """
        row = state.row
        depth, source = state.queue_limit, state.queue_limit_source
        if not long:
            source = _SHORT_SOURCES.get(
                source, "paths" if source.startswith("its ") else "hwq x nr" if "hardware queues" in source else source
            )
        queue = (
            f"avgqu-sz {row.avgqu_sz:.1f}/{depth} {source}"
            if depth
            else f"avgqu-sz {row.avgqu_sz:.1f} ({source or 'no queue limit'})"
        )
        judge = state.judge
        base = judge.baseline_ms() if judge is not None else None
        own = f" (low-load {base:.2f})" if base is not None else ""
        return f"{state.level} · %util {row.util_pct:.0f} · {queue} · await {row.await_ms:.2f} ms{own}"

    def _show_detail(self) -> None:
        model = self.model
        self._detail_for = (self.table.cursor_device, model.tick)
        state = model.devices.get(self.table.cursor_device or "")
        if state is None:
            if not model.devices:
                detail = [" no devices"]
            elif model.benchmark_only and not model.benchmark_devices:
                detail = [" no benchmark is running, so no benchmark devices (b shows all again)"]
            else:
                detail = [" no device matches the filters (Esc clears them)"]
        else:
            facts = state.facts
            if facts is None:
                facts_parts = [("queue facts unknown", "facts unknown")]
            else:
                rot = {None: "-", True: "yes", False: "no"}[facts.rotational]
                qd = facts.queue_depth if facts.queue_depth is not None else "-"
                nr = facts.nr_requests if facts.nr_requests is not None else "-"
                facts_parts = [
                    (f"queue_depth {qd} · nr_requests {nr}", f"qd {qd} nr {nr}"),
                    (f"scheduler {facts.scheduler or '-'} · rotational {rot}", f"{facts.scheduler or '-'} rot {rot}"),
                ]
            long_facts = " · ".join(long for long, _ in facts_parts)
            short_facts = " ".join(short for _, short in facts_parts)
            evaluation = self._saturation_facts(state)
            short_evaluation = self._saturation_facts(state, long=False)
            # The figures against the saturation rules matter more than long fact labels.
            name = printable_name(state.name)
            width = self._line_width()
            detail = self._detail_lines(name, (long_facts, short_facts), (evaluation, short_evaluation), width)
        if self._line_width() < DETAIL_TWO_LINES_BELOW:
            detail = [*detail, ""][:2]
        self._set_text(".iostat-detail", escape("\n".join(first_line(line, self._line_width()) for line in detail)))
        alert = self._lines[".iostat-alert"]
        flagged = model.flagged()
        width = self._line_width()
        if self.error_text:
            text = f" [red]{escape(self.error_text)}[/]"
        elif flagged:
            # Every flagged device at once, the worst first, each reason whole where the
            # lines allow (up to half the panel's height)
            budget = max(ALERT_LINES, (self.size.height or 24) // 2)
            texts = [f" ! {state.flag_text()}" for state in flagged]
            text = escape("\n".join(alert_lines(texts, [state.label for state in flagged], width, budget)))
        else:
            rules = model.rules
            text = f" no saturation ({rules.describe()})"
            if len(text) > width:
                text = f" no saturation ({rules.short()})"
            text = escape(first_line(text, width))
        alert.set_class(bool(flagged) and not self.error_text, "-saturated")
        self._set_text(".iostat-alert", text)

    @staticmethod
    def _detail_lines(name: str, facts: tuple[str, str], evaluation: tuple[str, str], width: int) -> list[str]:
        """The cursor device's facts and its figures against the saturation rules, (long,
        short) each: on one line when they fit, else (and always below DETAIL_TWO_LINES_BELOW
        columns) the figures on a second line (at 80 columns they were dropped for the facts)."""
        long_facts, short_facts = facts
        long_evaluation, short_evaluation = evaluation
        for line in (
            ()
            if width < DETAIL_TWO_LINES_BELOW
            else (
                f" {name}: {long_facts} │ {long_evaluation}",
                f" {name}: {short_facts} │ {long_evaluation}",
                f" {name}: {short_facts} │ {short_evaluation}",
            )
        ):
            if len(line) <= width:
                return [line]
        facts_line = f" {name}: {long_facts}"
        if len(facts_line) > width:
            facts_line = f" {name}: {short_facts}"
        evaluation_line = f"   {long_evaluation}"
        if len(evaluation_line) > width:
            evaluation_line = f"   {short_evaluation}"
        return [facts_line, evaluation_line]

    def _rules_text(self) -> str:
        rules, th = self.model.rules, self.thresholds
        return (
            f"Saturation: {rules.describe()}. The queue limit is SCSI queue_depth, else nr_requests "
            f"(NVMe: hardware queues x nr_requests; dm/md: the paths or members below). Thresholds: "
            f"RACPERF_SATURATION=busy=..,queueing=..,full=..,samples=..,knee=..,flat=..,floor=..,release=.. "
            f"await colours: green < "
            f"{th.warn_ms:g} ms, amber up to {th.crit_ms:g} ms, red above (RACPERF_AWAIT_MS=WARN,CRIT)."
        )

    def on_iostat_table_cursor_moved(self, message: IostatTable.CursorMoved) -> None:
        # A new busiest device moves the cursor on most ticks: the tick itself already
        # showed its details (same device, same sample), so do not build them twice.
        if self._detail_for != (self.table.cursor_device, self.model.tick):
            self._show_detail()

    # ---- API for other panels ------------------------------------------------------------
    def set_benchmark_devices(self, names: set[str], load: str = "") -> None:
        """The devices a running benchmark touches; the 'b' filter shows only these. ``load``:
        the running benchmarks' load, kept with each saturation episode that begins."""
        self.model.set_benchmark_devices(names)
        self.model.load_note = load
        if self.is_mounted:
            self._show()

    # ---- actions -------------------------------------------------------------------------
    def action_load_latency(self) -> None:
        """The cursor device's load-latency curve, live (ui/screens/load_latency.py)."""
        device = self.table.cursor_device
        if device is None:
            self.notify("no device under the cursor")
            return
        state_of = self.model.devices.get
        self.app.push_screen(LoadLatencyScreen(device, lambda: s.history if (s := state_of(device)) else None))

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        if self._timer is not None:
            if self.paused:
                self._timer.pause()
            elif not self.hidden:
                self._timer.resume()
        self._show_status()

    def action_interval(self, step: int) -> None:
        """Step through INTERVALS_S from the current interval (or the nearest one)."""
        nearest = min(range(len(INTERVALS_S)), key=lambda i: abs(INTERVALS_S[i] - self.interval_s))
        index = min(max(nearest + step, 0), len(INTERVALS_S) - 1)
        if INTERVALS_S[index] != self.interval_s:
            self.interval_s = INTERVALS_S[index]
            self._quiet_until_sample = self.samples_taken + 1
            self._start_timer()
        self._show_status()

    def action_cycle_sort(self) -> None:
        keys = list(SORT_KEYS)
        self.model.sort_key = keys[(keys.index(self.model.sort_key) + 1) % len(keys)]
        # A new order: show the new top device's details, with the top row in view.
        self.table.cursor_follows_top = True
        self.table.scroll_to(y=0, animate=False)
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
        self._show_status()

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
