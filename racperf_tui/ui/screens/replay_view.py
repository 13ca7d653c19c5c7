"""A recorded run played back through its live view, or two side by side in lock-step
(``racperf replay ID [ID]``, ``p`` in the Runs tab).

Each run is drawn by the live view's own body (run_view.LiveRunBody: sparklines, status,
progress, saturation, the tool's live panels: ORION's matrix too) from the LiveRunState the
live path would have built at that moment (ui/replay_data.py); one playback clock
(core/playback.py, in the TimelineBar) moves both runs, each showing what it had recorded
that many seconds after its start.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer

from racperf_tui.core.playback import PlaybackClock, frames_of
from racperf_tui.ui.dialogs.jump_dialog import JumpDialog
from racperf_tui.ui.messages import LiveRunState
from racperf_tui.ui.replay_data import RecordingLoaded, RecordingWatch, RunReplay, run_recording
from racperf_tui.ui.runs_data import where_it_ran
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.screens.run_view import LiveRunBody
from racperf_tui.ui.shown import plain
from racperf_tui.ui.store_watcher import store_watcher
from racperf_tui.ui.widgets.header_clock import SecondClockHeader
from racperf_tui.ui.widgets.timeline_bar import TIMELINE_BINDINGS, TimelineBar

#: what the jump question accepts on a run's timeline
JUMP_HINT = "seconds from the start: 90, 1m30s, 1:30"


def timeline_action(screen: Screen[Any], bar: TimelineBar, action: str) -> None:
    """A timeline key on a replay screen: ``jump`` asks the time, the others move the clock."""
    if action == "jump":
        screen.app.push_screen(JumpDialog(bar.jump, JUMP_HINT))
    else:
        bar.act(action)


class ReplayView(RacperfScreen[None]):
    """One or two recorded runs, played back (see the module doc)."""

    HELP_TITLE = "Replay"

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back (the recording is unchanged)"),
        *TIMELINE_BINDINGS,
        Binding("enter,v", "result", "Result", show=False, tooltip="The (first) run's result"),
    ]

    def __init__(
        self, data_dir: Any, run_ids: list[int], speed: float = 1.0, play: bool = True, header: bool = False
    ) -> None:
        """``header``: the app's header on top (``racperf replay``, where this is the app)."""
        super().__init__()
        self.header = header
        if not 1 <= len(run_ids) <= 2:
            raise ValueError("a replay shows one run, or two side by side")
        self.data_dir = data_dir
        self.run_ids = list(run_ids)
        self.speed = speed
        self.play = play
        self.bodies = [LiveRunBody(f"replay of run {run_id}") for run_id in run_ids]
        if len(self.bodies) == 2:
            self.bodies[1].add_class("-second")
        self.replays: dict[int, RunReplay] = {}
        #: the runs that cannot be replayed (no run, no samples): said in their place
        self.unplayable: set[int] = set()
        #: what each body shows now (tests compare it with the store's samples)
        self.shown: list[LiveRunState | None] = [None] * len(run_ids)
        self.error = ""

    @property
    def bar(self) -> TimelineBar:
        return self.query_one(TimelineBar)

    def compose(self) -> ComposeResult:
        if self.header:
            yield SecondClockHeader(show_clock=False)
        with Horizontal(id="replay-bodies"):
            yield from self.bodies
        yield TimelineBar()
        yield Footer()

    def on_mount(self) -> None:
        watcher = store_watcher(self.app, self.data_dir)
        for run_id in dict.fromkeys(self.run_ids):
            watcher.watch(RecordingWatch(self, 0.0, read=run_recording(run_id)))

    def on_unmount(self) -> None:
        store_watcher(self.app, self.data_dir).unwatch(self)

    def on_recording_loaded(self, message: RecordingLoaded) -> None:
        if message.recording is None:
            # said in its place; the other run (a pair's server end records no samples) plays
            self.error = message.error
            self.unplayable.add(message.run_id)
            for run_id, body in zip(self.run_ids, self.bodies):
                if run_id == message.run_id:
                    body.show_status(f"[$error]{plain(message.error)}[/]")
            self.notify(message.error, severity="error")
            self._start_when_read()
            return
        self.replays[message.run_id] = RunReplay(message.recording)
        run = message.recording.run
        for run_id, body in zip(self.run_ids, self.bodies):
            if run_id == run.id:
                body.set_title(f"replay of run {run.id}: {run.tool} {where_it_ran(run)}")
        self._start_when_read()

    def _start_when_read(self) -> None:
        """Once every run was read: the clock over the frames of those that can be played."""
        if self.replays and len(self.replays) + len(self.unplayable) == len(set(self.run_ids)):
            frames = frames_of(t for replay in self.replays.values() for t in replay.recording.frames)
            self.bar.start(PlaybackClock(frames, speed=self.speed, playing=self.play and len(frames) > 1))

    def on_timeline_bar_moved(self, message: TimelineBar.Moved) -> None:
        for index, (run_id, body) in enumerate(zip(self.run_ids, self.bodies)):
            if run_id not in self.replays:
                continue
            live = self.replays[run_id].state_at(message.at_s)
            self.shown[index] = live
            body.show_live(live)

    def action_timeline(self, action: str) -> None:
        timeline_action(self, self.bar, action)

    def action_close(self) -> None:
        self.dismiss()

    def action_result(self) -> None:
        self.app.switch_screen(ResultView(self.data_dir, self.run_ids[0]))
