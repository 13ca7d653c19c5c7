"""``racperf --from PATH...``: the Disks tab on an iostat archive (iostat -x / sar -d text,
OSWatcher, ExaWatcher; core/disks/history) with a timeline, and its hosts side by side as
the Cluster tab shows live nodes. Read only, and said so in the header: nothing is started,
neither /proc nor sysfs is read for the disks, and no benchmark can be launched (this app
has no Runs tab, no Network tab, no store).
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import ItemGrid, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from racperf_tui.core.disks.history.playback import ArchivePlayback
from racperf_tui.core.playback import PlaybackClock
from racperf_tui.orchestration.cluster_monitor import OK, NodeState
from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.dialogs.jump_dialog import JumpDialog
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.screens.help import HelpScreen
from racperf_tui.ui.tabs.archive_panel import ArchiveDisksPanel, report_time
from racperf_tui.ui.widgets.cluster_node_card import NodeCard
from racperf_tui.ui.widgets.header_clock import SecondClockHeader
from racperf_tui.ui.widgets.timeline_bar import TIMELINE_BINDINGS, TimelineBar

#: what the jump question accepts on an archive's timeline
JUMP_HINT = "a time of day 02:00, a date and time 2026-12-01 02:00, or from the start 1h30m"


class ArchiveApp(App[int]):
    """An archive played back (see the module doc)."""

    CSS_PATH = APP_CSS_PATH
    TITLE = "racperf"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", tooltip="Help: this list of keys"),
        *TIMELINE_BINDINGS,
        Binding("1", "show_tab('disks')", "Disks", show=False, tooltip="Disks tab (one host)"),
        Binding("2", "show_tab('hosts')", "Hosts", show=False, tooltip="Hosts tab (every host side by side)"),
    ]

    def __init__(self, playback: ArchivePlayback, source: str, speed: float = 1.0, play: bool = False) -> None:
        super().__init__()
        if not playback.frames:
            raise ValueError("the archive holds no report")
        self.playback = playback
        self.speed = speed
        self.play = play
        self.sub_title = f"read-only archive (no benchmark, nothing started, no /proc read): {source}"

    def get_default_screen(self) -> Screen:
        # a toast leaves the terminal at its timeout (ui/screen_base.py)
        return RacperfScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield SecondClockHeader(show_clock=False)
        with TabbedContent(initial="disks"):
            with TabPane("Disks [1]", id="disks"):
                yield ArchiveDisksPanel(self.playback, id="archive-disks")
            if len(self.playback.hosts) > 1:
                with TabPane("Hosts [2]", id="hosts"), VerticalScroll(id="archive-hosts"):
                    with ItemGrid(id="cluster-nodes", min_column_width=38):
                        for index, host in enumerate(self.playback.hosts):
                            yield NodeCard(host, id=f"host-{index}")
        yield TimelineBar()
        yield Footer()

    def on_mount(self) -> None:
        playback = self.playback
        self.query_one(TimelineBar).start(
            PlaybackClock(playback.frames, speed=self.speed, playing=self.play, origin=playback.origin)
        )
        if playback.problems:
            first = playback.problems[0]
            more = f" (and {len(playback.problems) - 1} more)" if len(playback.problems) > 1 else ""
            self.notify(f"not read: {first}{more}", severity="warning", timeout=10)

    def on_timeline_bar_moved(self, message: TimelineBar.Moved) -> None:
        self.playback.show_until(message.at_s)
        self.query_one(ArchiveDisksPanel).sample_now()
        for index, (host, series) in enumerate(self.playback.hosts.items()):
            cards = self.query(f"#host-{index}").results(NodeCard)
            report = series.current
            for card in cards:
                state = NodeState(
                    host,
                    "",
                    OK,
                    rows=tuple(report.rows) if report is not None else (),
                    since_boot=report.since_boot if report is not None else False,
                    interval_s=report.interval_s if report is not None else 0.0,
                    seq=series.fed,
                    hostname=report_time(report.wall_time) if report is not None else "no report yet",
                )
                card.show(state, series.model)

    def action_timeline(self, action: str) -> None:
        bar = self.query_one(TimelineBar)
        if action == "jump":
            self.push_screen(JumpDialog(bar.jump, JUMP_HINT))
        else:
            bar.act(action)

    def action_show_tab(self, tab: str) -> None:
        if tab == "hosts" and len(self.playback.hosts) < 2:
            self.notify("the archive holds one host")
            return
        self.query_one(TabbedContent).active = tab

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen.active_bindings))
