"""A recorded network pair played back through the Network tab's live display (``p`` on
either end of a pair in the Runs tab, ``racperf replay ID`` with ID a pair's end): both ends'
state lines, the throughput and latency sparklines, the interconnect and Data Guard verdicts
(stalls, dips, loss, MTU, round trip p50/p99) as the DBA saw them while the pair ran.

The store watcher's thread reads the pair once (ui/replay_data.PairRecording, found from
either end: a server records no samples, its client names it); at each frame of the playback
clock (in the TimelineBar) the live path's own PairReader builds the snapshot the Network
tab got at that moment, and the display (widgets/pair_live_display.py) draws it as live.
Going back draws again from the start. ``r`` asks the redo rate the Data Guard verdict is
judged against (the Network tab's Redo field) and judges again.
"""

from __future__ import annotations

import time
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Static

from racperf_tui.core.playback import PlaybackClock
from racperf_tui.ui.dialogs.text_prompt import TextPrompt
from racperf_tui.ui.messages import PairSnapshot
from racperf_tui.ui.replay_data import PairRecordingLoaded, PairReplay, RecordingWatch, pair_recording
from racperf_tui.ui.runs_data import where_it_ran
from racperf_tui.ui.screen_base import RacperfScreen
from racperf_tui.ui.screens.replay_view import timeline_action
from racperf_tui.ui.screens.result_view import ResultView
from racperf_tui.ui.shown import markup, plain
from racperf_tui.ui.store_watcher import store_watcher
from racperf_tui.ui.widgets.header_clock import SecondClockHeader
from racperf_tui.ui.widgets.pair_live_display import PairLiveDisplay, pair_mode_of
from racperf_tui.ui.widgets.timeline_bar import TIMELINE_BINDINGS, TimelineBar

#: the Data Guard line before a redo rate is given (the Network tab's says its field)
NO_REDO_TEXT = "Data Guard: give a redo rate (MB/s) with r"


def redo_rate_problem(text: str) -> str | None:
    """Why ``text`` is no redo rate in MB/s (None: it is one, or blank to clear it)."""
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return f"redo rate: {text!r} is not a number of MB/s"
    if not value >= 0 or value == float("inf"):
        return f"redo rate: must be a finite number of MB/s, at least 0, not {text}"
    return None


class PairReplayView(RacperfScreen[None]):
    """A recorded pair, played back (see the module doc)."""

    HELP_TITLE = "Pair replay"

    BINDINGS = [
        Binding("escape,q", "close", "Back", tooltip="Back (the recording is unchanged)"),
        *TIMELINE_BINDINGS,
        Binding("r", "redo_rate", "Redo", tooltip="The redo rate (MB/s) the Data Guard verdict is judged against"),
        Binding("enter,v", "result", "Result", show=False, tooltip="The client run's result"),
    ]

    def __init__(
        self,
        data_dir: Any,
        run_id: int,
        speed: float = 1.0,
        play: bool = True,
        header: bool = False,
        redo_mb_s: float | None = None,
    ) -> None:
        """``run_id``: either end of the pair; ``header``: the app's header on top
        (``racperf replay``, where this is the app)."""
        super().__init__()
        self.data_dir = data_dir
        self.run_id = run_id
        self.speed = speed
        self.play = play
        self.header = header
        #: the redo rate the Data Guard verdict is judged against (None: not given)
        self.redo_mb_s = redo_mb_s
        self.pair_display = PairLiveDisplay(
            redo_rate=lambda: self.redo_mb_s, no_redo_text=NO_REDO_TEXT, id="pair-replay-display"
        )
        self.replay: PairReplay | None = None
        #: what the display shows now (tests compare it with the store)
        self.shown: PairSnapshot | None = None
        self.error = ""
        self._mode = ""
        self._at_s = float("-inf")

    @property
    def bar(self) -> TimelineBar:
        return self.query_one(TimelineBar)

    def compose(self) -> ComposeResult:
        if self.header:
            yield SecondClockHeader(show_clock=False)
        yield Static(f"replay of the pair of run {self.run_id}: reading it...", id="pair-replay-title")
        yield self.pair_display
        yield TimelineBar()
        yield Footer()

    def on_mount(self) -> None:
        store_watcher(self.app, self.data_dir).watch(RecordingWatch(self, 0.0, read=pair_recording(self.run_id)))

    def on_unmount(self) -> None:
        store_watcher(self.app, self.data_dir).unwatch(self)

    def on_pair_recording_loaded(self, message: PairRecordingLoaded) -> None:
        recording = message.recording
        title = self.query_one("#pair-replay-title", Static)
        if recording is None:
            self.error = message.error
            title.update(f"[$error]{markup(message.error)}[/]")
            self.notify(message.error, severity="error")
            return
        server, client = recording.server, recording.client
        self._mode = pair_mode_of(client.tool, client.config)
        mode = f" {plain(self._mode)}" if self._mode else ""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(client.started_at))
        title.update(
            f"replay of the {plain(client.tool)}{mode} pair of {when}: server run #{server.id} "
            f"{plain(where_it_ran(server))}, client run #{client.id} {plain(where_it_ran(client))}"
        )
        self.replay = PairReplay(recording)
        frames = recording.frames
        self.bar.start(PlaybackClock(frames, speed=self.speed, playing=self.play and len(frames) > 1))

    def on_timeline_bar_moved(self, message: TimelineBar.Moved) -> None:
        replay = self.replay
        assert replay is not None
        display = self.pair_display
        if message.at_s < self._at_s or self.shown is None:
            # from the start again, as the live tab drew it: empty sparklines, no verdict yet
            display.reset()
            display.watch_pair(replay.recording.client.tool, self._mode)
        self._at_s = message.at_s
        snapshot = self.shown = replay.snapshot_at(message.at_s)
        display.show_pair(snapshot)
        if snapshot.client.state.finished and not display.ended:
            display.judge_end(snapshot)

    def action_timeline(self, action: str) -> None:
        timeline_action(self, self.bar, action)

    def action_redo_rate(self) -> None:
        """Ask the redo rate (blank: none) and judge the Data Guard verdict again."""
        current = "" if self.redo_mb_s is None else f"{self.redo_mb_s:g}"

        def answered(text: str | None) -> None:
            if text is None:
                return
            self.redo_mb_s = float(text) if text.strip() else None
            self.pair_display.update_verdicts()

        prompt = TextPrompt(
            "Redo rate in MB/s the Data Guard verdict is judged against (the primary's peak redo)",
            current,
            hint="enter: judge again   escape: cancel   empty: no redo rate",
            placeholder="e.g. 50",
            check=redo_rate_problem,
        )
        self.app.push_screen(prompt, answered)

    def action_close(self) -> None:
        self.dismiss()

    def action_result(self) -> None:
        if self.replay is not None:
            self.app.switch_screen(ResultView(self.data_dir, self.replay.recording.client.id))
