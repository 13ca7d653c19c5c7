"""``racperf replay ID [ID] [--speed N]``: the replay screen alone (ui/screens/replay_view.py),
under a header that says it is a recording: nothing runs, nothing can be started."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.screens.help import HelpScreen
from racperf_tui.ui.screens.replay_view import ReplayView


class ReplayApp(App[int]):
    """A replay of recorded runs; quits when the replay is closed."""

    CSS_PATH = APP_CSS_PATH
    TITLE = "racperf replay"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", tooltip="Help: this list of keys"),
    ]

    def __init__(self, run_ids: list[int], data_dir: str | None = None, speed: float = 1.0) -> None:
        super().__init__()
        self.run_ids = run_ids
        self.data_dir = data_dir
        self.speed = speed
        runs = f"run {run_ids[0]}" if len(run_ids) == 1 else f"runs {run_ids[0]} and {run_ids[1]}"
        self.sub_title = f"{runs} as recorded: nothing runs"

    def on_mount(self) -> None:
        self.push_screen(ReplayView(self.data_dir, self.run_ids, speed=self.speed, header=True), lambda _: self.exit(0))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen.active_bindings))
