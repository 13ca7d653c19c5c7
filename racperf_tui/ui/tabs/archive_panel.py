"""The Disks tab on an iostat archive (``racperf --from``): the live tab itself (its table,
columns, sparklines, sort, filters, saturation levels and alerts), fed from one host's
reports of the archive (core/disks/history/playback.py) as the playback clock moves instead
of sampling /proc and sysfs on a timer. Its pause and speed keys move the timeline.
"""

from __future__ import annotations

import time

from textual.binding import Binding
from textual.markup import escape

from racperf_tui.core.disks.diskstats import QueueFacts
from racperf_tui.core.disks.history.playback import ArchivePlayback, HostSeries
from racperf_tui.ui.tabs.iostat_panel import IostatPanel
from racperf_tui.ui.widgets.timeline_bar import TimelineBar


def report_time(wall_time: float) -> str:
    """A report's own time as the status line and a host's card show it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(wall_time))


class ArchiveDisksPanel(IostatPanel):
    """The Disks tab showing one host of an archive (``h``: the next host)."""

    HELP_TITLE = "Disks (archive)"

    BINDINGS = [
        # the live tab's keys, said as what they do here
        Binding("space", "toggle_pause", "Play/pause", tooltip="Play / pause the archive"),
        Binding("minus", "interval(-1)", "Slower", show=False, tooltip="Slower playback"),
        Binding("plus,equals_sign", "interval(1)", "Faster", show=False, tooltip="Faster playback"),
        Binding("h", "next_host", "Next host", tooltip="Show the archive's next host"),
    ]

    def __init__(self, playback: ArchivePlayback, host: str | None = None, id: str | None = None) -> None:
        # the sampler the live tab would make is never asked: no /proc, no sysfs (sample_now)
        super().__init__(id=id)
        self.playback = playback
        self.host = host if host is not None else next(iter(playback.hosts))
        self.model = self.series.model

    @property
    def series(self) -> HostSeries:
        return self.playback.hosts[self.host]

    def _start_timer(self) -> None:
        """No sampling timer: the playback clock (the app's TimelineBar) says when to show."""

    def _read_facts(self, kernel_name: str) -> QueueFacts | None:
        return None  # an archive has no queue facts (the judge goes without, as for a node)

    def sample_now(self) -> None:
        """Show the host's model as the playback fed it (core/disks/history/playback.py)."""
        self.model = self.series.model
        self.samples_taken += 1
        self._last_report_at = time.monotonic()
        self.error_text = self._config_error
        self._show()

    def _show_status(self) -> None:
        model, series = self.model, self.series
        report = series.current
        parts: list[tuple[str, str]] = [(f"[b]{escape(self.host)}[/]", f"[b]{escape(self.host[:12])}[/]")]
        if len(self.playback.hosts) > 1:
            number = f"{list(self.playback.hosts).index(self.host) + 1}/{len(self.playback.hosts)}"
            parts.append((f"host {number} (h)", number))
        if report is None:
            parts.append(("no report yet at this time", "no report yet"))
        else:
            when = report_time(report.wall_time)
            parts.append((f"report of {when}", when[11:]))
            if report.since_boot:
                parts.append(("[b]averages since boot[/]", "[b]since boot[/]"))
            elif report.interval_s:
                parts.append((f"over {report.interval_s:g} s", f"{report.interval_s:g} s"))
        shown = len(self.table.states)
        parts += [
            (f"{shown}/{len(model.devices)} devices", f"{shown}/{len(model.devices)}"),
            (f"sort {model.sort_key}", f"↓{model.sort_key}"),
            (f"spark {self.table.spark_metric}", f"~{self.table.spark_metric}"),
            ("with partitions", "+parts") if model.show_partitions else ("whole disks", "disks"),
        ]
        if model.name_pattern:
            parts.append((escape(f"name {model.name_pattern!r}"), escape(repr(model.name_pattern))))
        self._set_text(".iostat-status", self._fit(parts, self._line_width()))

    def action_toggle_pause(self) -> None:
        """Space: play / pause the archive (the live tab's pause of its sampling)."""
        self.app.query_one(TimelineBar).act("toggle")

    def action_interval(self, step: int) -> None:
        """-/+: the playback's speed (the live tab's sampling interval)."""
        self.app.query_one(TimelineBar).act("faster" if step > 0 else "slower")

    def action_next_host(self) -> None:
        hosts = list(self.playback.hosts)
        if len(hosts) < 2:
            self.notify("the archive holds one host")
            return
        self.show_host(hosts[(hosts.index(self.host) + 1) % len(hosts)])

    def show_host(self, host: str) -> None:
        """Show another host of the archive, with this one's sort and filters."""
        before = self.model
        self.host = host
        model = self.series.model
        model.sort_key, model.show_partitions, model.name_pattern = (
            before.sort_key,
            before.show_partitions,
            before.name_pattern,
        )
        self.table.cursor_follows_top = True
        self.sample_now()
