"""A recorded run group played back through its live view (``p`` on a group in the Runs tab,
``racperf replay --group ID``): the group view itself, fed by the live path's own GroupWatch
reading the group's recording as it stood at the timeline's moment (ui/replay_data.py)
instead of the store; going back reads it again from the start."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding

from racperf_tui.core.playback import PlaybackClock
from racperf_tui.ui.replay_data import GroupRecording, GroupRecordingLoaded, RecordingWatch, group_recording
from racperf_tui.ui.screens.group_view import GroupView
from racperf_tui.ui.screens.replay_view import timeline_action
from racperf_tui.ui.shown import markup
from racperf_tui.ui.store_watcher import GroupWatch, store_watcher
from racperf_tui.ui.widgets.header_clock import SecondClockHeader
from racperf_tui.ui.widgets.timeline_bar import TIMELINE_BINDINGS, TimelineBar


class GroupReplayView(GroupView):
    """A run group as recorded, on a timeline (see the module doc)."""

    HELP_TITLE = "Run group replay"

    BINDINGS = [*TIMELINE_BINDINGS, Binding("s", "stop", "Stop", show=False, tooltip="(a replay: nothing runs)")]

    def __init__(
        self, data_dir: Any, group_id: int, speed: float = 1.0, play: bool = True, header: bool = False
    ) -> None:
        super().__init__(data_dir, group_id, title=f"replay of group {group_id}")
        self.speed = speed
        self.play = play
        self.header = header
        self.recording: GroupRecording | None = None
        self.group_watch: GroupWatch | None = None
        self._at_s = -1.0

    def compose(self) -> ComposeResult:
        if self.header:
            yield SecondClockHeader(show_clock=False)
        yield from super().compose()
        yield TimelineBar()

    def on_mount(self) -> None:
        # the group view's own layout, not its subscription: the recording is read once
        self._layout_columns()
        store_watcher(self.app, self.data_dir).watch(RecordingWatch(self, 0.0, read=group_recording(self.group_id)))

    def on_group_recording_loaded(self, message: GroupRecordingLoaded) -> None:
        if message.recording is None:
            self._show_status(f"[$error]{markup(message.error)}[/]")
            self.notify(message.error, severity="error")
            return
        self.recording = message.recording
        frames = message.recording.frames
        clock = PlaybackClock(frames, speed=self.speed, playing=self.play and len(frames) > 1)
        self.query_one(TimelineBar).start(clock)

    def on_timeline_bar_moved(self, message: TimelineBar.Moved) -> None:
        recording = self.recording
        assert recording is not None
        if self.group_watch is None or message.at_s < self._at_s:
            self.group_watch = GroupWatch(self, 0.0, group_id=self.group_id)
        self._at_s = message.at_s
        recording.until = recording.started_at + message.at_s
        update = self.group_watch.read(recording)
        if update is not None:
            self.post_message(update)

    def now(self) -> float:
        return self.recording.until if self.recording is not None else super().now()

    def action_timeline(self, action: str) -> None:
        timeline_action(self, self.query_one(TimelineBar), action)

    def action_stop(self) -> None:
        self.notify("a replay: nothing runs")
