"""The racperf dashboard: one screen, four tabs (Disks, Runs, Network, and Cluster when there
is a cluster file).

Each tab lives in its own module under ui/tabs/ and owns its keys; the app owns only the frame
(tabs, help, quit).
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from racperf_tui.core.remote.cluster import cluster_file_to_watch
from racperf_tui.ui.deferred import deferred
from racperf_tui.ui.run_actions import ask_before_quit
from racperf_tui.ui.screen_base import RegionScreen
from racperf_tui.ui.screens.help import HelpScreen
from racperf_tui.ui.tabs.iostat_panel import IostatPanel
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from racperf_tui.ui.widgets.header_clock import SecondClockHeader

#: the layout of every screen and panel (an app showing one of them alone uses it too)
APP_CSS_PATH = Path(__file__).with_name("app.tcss")


class RacperfApp(App[int]):
    """The dashboard. ``roots`` replays/reads proc+sys under those dirs instead of /."""

    CSS_PATH = APP_CSS_PATH
    TITLE = "racperf"
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="Quit (asks first while runs are running)"),
        # Textual's own ctrl+q, declared here so the help lists it: the one key that quits
        # from inside a text field too (priority), through the same question
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, tooltip="Quit, from anywhere (a text field too)"),
        Binding("question_mark", "help", "Help", tooltip="Help: this list of keys"),
        Binding("1", "show_tab('disks')", "Disks", show=False, tooltip="Disks tab (live iostat)"),
        Binding("2", "show_tab('runs')", "Runs", show=False, tooltip="Runs tab (benchmark runs)"),
        Binding("3", "show_tab('network')", "Network", show=False, tooltip="Network tab (pair tests)"),
        Binding("4", "show_tab('cluster')", "Cluster", show=False, tooltip="Cluster tab (every node's disks)"),
        # the same from anywhere, a text field too (priority: never typed into a field; a
        # digit in a port or a rate field is the field's); the help lists them on one line
        Binding("alt+1,f1", "show_tab('disks')", "Disks", show=False, priority=True, tooltip="Disks tab (live iostat)"),
        Binding("alt+2,f2", "show_tab('runs')", "Runs", show=False, priority=True, tooltip="Runs tab (benchmark runs)"),
        Binding(
            "alt+3,f3", "show_tab('network')", "Network", show=False, priority=True, tooltip="Network tab (pair tests)"
        ),
        Binding(
            "alt+4,f4",
            "show_tab('cluster')",
            "Cluster",
            show=False,
            priority=True,
            tooltip="Cluster tab (every node's disks)",
        ),
    ]

    def __init__(
        self,
        roots: list[str] | None = None,
        interval_s: float = 1.0,
        data_dir: str | None = None,
        clock: bool = True,
        cluster: str | None = None,
    ) -> None:
        """``clock=False`` hides the header clock (deterministic screenshots). ``cluster``: the
        cluster file of the Cluster tab (opened first); None: the default one, if it exists."""
        super().__init__()
        self.clock = clock
        self.roots = [Path(r) for r in roots] if roots else None
        self.interval_s = interval_s
        self.data_dir = data_dir
        self.cluster = cluster
        self.cluster_file = cluster_file_to_watch(cluster)

    def get_default_screen(self) -> Screen:
        # A tick's updates render only the widgets they change (ui/region_compositor.py).
        return RegionScreen(id="_default")

    def compose(self) -> ComposeResult:
        # Its clock ticks with the Disks samples: one screen update a second, not two.
        yield SecondClockHeader(show_clock=self.clock)
        with TabbedContent(initial="disks"):
            with TabPane("Disks [1]", id="disks"):
                yield IostatPanel(roots=self.roots, interval_s=self.interval_s)
            with TabPane("Runs [2]", id="runs"):
                yield RunsPanel(data_dir=self.data_dir)
            # its panel is made when the tab is first opened (_network_panel)
            yield TabPane("Network [3]", id="network")
            if self.cluster_file is not None:
                with TabPane("Cluster [4]", id="cluster"):
                    # its monitor connects at once: asyncssh comes with the tab, never without one
                    cluster_view = deferred("cluster_view")
                    yield cluster_view.ClusterPanel(
                        self.cluster_file, interval_s=self.interval_s, first=bool(self.cluster), data_dir=self.data_dir
                    )
        yield Footer()

    def action_help(self) -> None:
        """Show every key active where the user is (app, screen, focused panel)."""
        if not isinstance(self.screen, HelpScreen):
            tab = self.screen_stack[0].query_one(TabbedContent).active
            self.push_screen(HelpScreen(self.screen.active_bindings, tab=tab))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The Cluster tab's key only where there is a Cluster tab (a cluster file)."""
        if action == "show_tab" and parameters == ("cluster",) and self.cluster_file is None:
            return False
        return True

    def action_show_tab(self, tab: str) -> None:
        """Show a tab, from a run's live or result view too (it is set aside and comes back
        with the Runs tab); a dialog or form keeps the keys until it is closed."""
        dashboard = self.screen_stack[0]
        runs = dashboard.query_one(RunsPanel)
        if self.screen is not dashboard:
            if tab == "runs" or not runs.set_views_aside():
                return
        if tab == "network":
            self._network_panel()
        dashboard.query_one(TabbedContent).active = tab

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A click on the Network tab opens it too."""
        if event.pane.id == "network":
            self._network_panel()

    def _network_panel(self) -> None:
        """Mount the Network tab's panel, once: finding the pair tools imports every tool
        module, which the first paint of the Disks table does not need."""
        if not self.screen_stack:
            return  # a tab activation still queued when the app exits: no dashboard any more
        pane = self.screen_stack[0].query_one("#network", TabPane)
        if not pane.children:
            pane.mount(deferred("network_panel").NetworkPanel(data_dir=self.data_dir, cluster_file=self.cluster_file))

    async def action_quit(self) -> None:
        """Quit; with runs still running, ask whether to stop them or leave them running."""
        await ask_before_quit(self, self.data_dir)
