"""``racperf replay ID [ID] [--speed N]``: the replay screen alone (ui/screens/replay_view.py;
a network pair's ends: ui/screens/pair_replay_view.py; a run group: group_replay_view.py),
under a header that says it is a recording: nothing runs, nothing can be started."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.screens.group_replay_view import GroupReplayView
from racperf_tui.ui.screens.help import HelpScreen
from racperf_tui.ui.screens.pair_replay_view import PairReplayView
from racperf_tui.ui.screens.replay_view import ReplayView


class ReplayApp(App[int]):
    """A replay of recorded runs; quits when the replay is closed."""

    CSS_PATH = APP_CSS_PATH
    TITLE = "racperf replay"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", tooltip="Help: this list of keys"),
    ]

    def __init__(
        self,
        run_ids: list[int],
        data_dir: str | None = None,
        speed: float = 1.0,
        group_id: int | None = None,
        pair: bool = False,
    ) -> None:
        """``group_id``: a run group's replay instead of ``run_ids``; ``pair``: ``run_ids`` are
        a network pair's server and client, played through the Network tab's display."""
        super().__init__()
        self.group_id = group_id
        self.run_ids = run_ids
        self.data_dir = data_dir
        self.speed = speed
        self.pair = pair
        if group_id is not None:
            runs = f"run group {group_id}"
        elif pair:
            runs = f"the pair of runs {run_ids[0]} and {run_ids[-1]}"
        else:
            runs = f"run {run_ids[0]}" if len(run_ids) == 1 else f"runs {run_ids[0]} and {run_ids[1]}"
        self.sub_title = f"{runs} as recorded: nothing runs"

    def get_default_screen(self) -> Screen:
        # under the replay: a toast shown here leaves at its timeout too (ui/screen_base.py)
        return RacperfScreen(id="_default")

    def on_mount(self) -> None:
        if self.group_id is not None:
            replay: Screen[None] = GroupReplayView(self.data_dir, self.group_id, speed=self.speed, header=True)
        elif self.pair:
            replay = PairReplayView(self.data_dir, self.run_ids[-1], speed=self.speed, header=True)
        else:
            replay = ReplayView(self.data_dir, self.run_ids, speed=self.speed, header=True)
        self.push_screen(replay, lambda _: self.exit(0))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen.active_bindings))
