"""A recorded run played back through its live view (``racperf replay``, ``p`` in the Runs tab);
a run group through its group view; a network pair through the Network tab's live display.

The store watcher's thread reads the recording once (:class:`RecordingWatch`: the run, every
sample, its saturation episodes); the replay then builds, for the frame the playback clock
(core/playback.py) shows, the very :class:`LiveRunState` the live path would have built at
that moment: the samples recorded up to it are fed to the live path's own
:class:`LivePoller` (its ``take``), the run shown as running until its last sample, its
clock at the run's start plus the frame's time. The view draws it as it draws a live run.

A group (:class:`GroupRecording`) and a pair (:class:`PairRecording`) are read the same way
and stand in for the store at a moment: the live path's own GroupWatch / PairReader reads them.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from textual.message import Message

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.tool import ToolDescription
from racperf_tui.core.disks.saturation import EPISODES_STREAM, FOREIGN_IO_STREAM, episodes_text, recorded_episodes
from racperf_tui.core.playback import frames_of
from racperf_tui.core.store import GroupNotFound, GroupRecord, RunRecord, Store
from racperf_tui.orchestration.pair_runs import recorded_pair
from racperf_tui.ui.messages import LiveRunState, PairSnapshot
from racperf_tui.ui.runs_data import LivePoller, description_of
from racperf_tui.ui.store_watcher import PairReader, Watch

T = TypeVar("T")


@dataclass(frozen=True)
class Recording:
    """One recorded run as a replay needs it (read once, off the event loop)."""

    run: RunRecord
    samples: tuple[Sample, ...]
    description: ToolDescription
    episodes: tuple[dict[str, Any], ...] = ()
    #: what foreign I/O the run's LUN carried (said at its end, as live)
    foreign: tuple[str, ...] = ()

    @property
    def frames(self) -> tuple[float, ...]:
        """The moments the live view changed: each sample's time from the run's start."""
        return tuple(sample.t for sample in self.samples)


@dataclass
class RecordingLoaded(Message):
    """A recording read for a replay (or why it cannot be replayed)."""

    run_id: int
    recording: Recording | None
    error: str = ""


def read_recording(store: Store, run_id: int) -> Recording:
    """The run's recording; ValueError naming what is missing (no run, no samples, still going)."""
    try:
        run = store.get_run(run_id)
    except KeyError:
        raise ValueError(f"no run {run_id} in the store") from None
    if not run.state.finished:
        raise ValueError(f"run {run_id} is still {run.state.value}: watch it live (enter in the Runs tab)")
    samples = tuple(sample for _seq, sample in store.samples(run_id, after_seq=0))
    if not samples:
        raise ValueError(f"run {run_id} ({run.tool}, {run.state.value}) recorded no samples: nothing to replay")
    return Recording(
        run,
        samples,
        description_of(run.tool),
        tuple(recorded_episodes(store.raw_output(run_id, EPISODES_STREAM))),
        tuple(store.raw_output(run_id, FOREIGN_IO_STREAM).strip().splitlines()),
    )


@dataclass
class RecordingWatch(Watch):
    """Reads one recording on the store watcher's thread (``read``) and posts it, once."""

    read: Callable[[Store], Message] | None = None
    interval_s: float = 0.0

    def poll(self, store: Store) -> Message | None:
        self.done = True
        return None if self.read is None else self.read(store)


def run_recording(run_id: int) -> Callable[[Store], Message]:
    """What a RecordingWatch reads for a run's replay: its recording, or why there is none."""
    return _loading(lambda store: read_recording(store, run_id), lambda found, why: RecordingLoaded(run_id, found, why))


def _loading(read: Callable[[Store], T], loaded: Callable[[T | None, str], Message]) -> Callable[[Store], Message]:
    """``read`` as a message: what it read, or (None, why) when it says what is missing."""

    def reading(store: Store) -> Message:
        try:
            return loaded(read(store), "")
        except ValueError as error:
            return loaded(None, str(error))

    return reading


@dataclass
class RunReplay:
    """The live states of a recording, frame by frame: going on from the last frame built
    takes only the samples in between; going back builds again from the start."""

    recording: Recording
    _poller: LivePoller | None = None
    _taken: int = 0
    _times: tuple[float, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        self._times = self.recording.frames

    def samples_until(self, at_s: float) -> int:
        """How many samples were recorded at or before ``at_s`` seconds from the start."""
        return bisect.bisect_right(self._times, at_s)

    def state_at(self, at_s: float) -> LiveRunState:
        """The state the live view showed ``at_s`` seconds into the run."""
        recording = self.recording
        count = self.samples_until(at_s)
        if self._poller is None or count < self._taken:
            self._poller, self._taken = LivePoller(None, recording.run.id), 0
        poller = self._poller
        for sample in recording.samples[self._taken : count]:
            poller.take(sample)
        self._taken = count
        run = recording.run
        now = run.started_at + at_s
        ended = count >= len(recording.samples)
        if not ended:
            # live, the run was running then; its end, its message and its exit came later
            run = dataclasses.replace(run, state=RunState.RUNNING, ended_at=None, exit_status=None, message=None)
        shown = [dict(e, until=min(float(e.get("until", now)), now)) for e in recording.episodes]
        saturation = (
            *episodes_text([e for e in shown if float(e.get("since", 0.0)) <= now]),
            *(recording.foreign[-1:] if ended else ()),
        )
        poller.replaying(run, recording.description, saturation)
        return poller.state(now=now)


@dataclass
class GroupRecording:
    """A run group's records as they stood at a moment (``until``, epoch seconds): what the
    live group view's GroupWatch reads (orchestration/run_groups.GroupRecords), so a replayed
    group is drawn by the live path's own code. A node's run shows as running until its last
    sample, each sample from its wall-clock time (its run's start plus its own time)."""

    group: GroupRecord
    runs: tuple[RunRecord, ...]
    recorded: dict[int, tuple[tuple[int, Sample], ...]]
    results: dict[int, dict[str, Any] | None]
    until: float = 0.0

    @property
    def started_at(self) -> float:
        return min(run.started_at for run in self.runs)

    @property
    def frames(self) -> tuple[float, ...]:
        """Every moment a node recorded a sample, in seconds from the first node's start."""
        by_id = {run.id: run for run in self.runs}
        start = self.started_at
        return frames_of(
            by_id[run_id].started_at + sample.t - start
            for run_id, rows in self.recorded.items()
            for _seq, sample in rows
        )

    def _ends_at(self, run: RunRecord) -> float:
        rows = self.recorded.get(run.id, ())
        return run.started_at + rows[-1][1].t if rows else run.started_at

    def mark_interrupted_runs(self) -> list[int]:
        return []

    def get_group(self, group_id: int) -> GroupRecord:
        return self.group

    def group_runs(self, group_id: int) -> list[RunRecord]:
        shown = []
        for run in self.runs:
            if run.started_at > self.until:
                continue
            if self._ends_at(run) > self.until:
                run = dataclasses.replace(run, state=RunState.RUNNING, ended_at=None, exit_status=None, message=None)
            shown.append(run)
        return shown

    def samples(self, run_id: int, after_seq: int = 0) -> list[tuple[int, Sample]]:
        started = next(run.started_at for run in self.runs if run.id == run_id)
        return [(seq, s) for seq, s in self.recorded.get(run_id, ()) if seq > after_seq and started + s.t <= self.until]

    def result(self, run_id: int) -> dict[str, Any] | None:
        return self.results.get(run_id)


def read_group_recording(store: Store, group_id: int) -> GroupRecording:
    """A group's recording; ValueError naming what is missing."""
    try:
        group = store.get_group(group_id)
    except GroupNotFound:
        raise ValueError(f"no run group {group_id} in the store") from None
    runs = tuple(store.group_runs(group_id))
    if not runs:
        raise ValueError(f"run group {group_id} has no runs: nothing to replay")
    going = [run.id for run in runs if not run.state.finished]
    if going:
        raise ValueError(f"run group {group_id} is still running (run {going[0]}): watch it live")
    samples = {run.id: tuple(store.samples(run.id, after_seq=0)) for run in runs}
    if not any(samples.values()):
        raise ValueError(f"run group {group_id}: its runs recorded no samples: nothing to replay")
    return GroupRecording(group, runs, samples, {run.id: store.result(run.id) for run in runs})


@dataclass
class GroupRecordingLoaded(Message):
    """A group's recording read for a replay (or why it cannot be replayed)."""

    group_id: int
    recording: GroupRecording | None
    error: str = ""


def group_recording(group_id: int) -> Callable[[Store], Message]:
    """What a RecordingWatch reads for a group's replay: its recording, or why there is none."""
    return _loading(
        lambda store: read_group_recording(store, group_id),
        lambda found, why: GroupRecordingLoaded(group_id, found, why),
    )


@dataclass(frozen=True)
class PairRecording:
    """A recorded network pair (both ends, the client's samples, both results), read once.

    Its timeline is the client's: seconds from the client run's start (the measurement's),
    a frame at each client sample and, when the server ended later, at the server's end. The
    client is shown running until its last sample, the server until its end (or the client's
    when it recorded none)."""

    server: RunRecord
    client: RunRecord
    samples: tuple[tuple[int, Sample], ...]
    server_result: dict[str, Any] | None
    client_result: dict[str, Any] | None

    @property
    def client_ends_at_s(self) -> float:
        return self.samples[-1][1].t

    @property
    def server_ends_at_s(self) -> float:
        """When the server ended, in seconds from the client's start (the client's end when
        its end is not recorded)."""
        ended_at = self.server.ended_at
        return self.client_ends_at_s if ended_at is None else ended_at - self.client.started_at

    @property
    def frames(self) -> tuple[float, ...]:
        return frames_of([*(sample.t for _seq, sample in self.samples), self.server_ends_at_s])

    def at(self, at_s: float) -> PairMoment:
        """The records as they stood ``at_s`` seconds after the client's start."""
        return PairMoment(self, at_s)


@dataclass(frozen=True)
class PairMoment:
    """A pair's records as the store held them at one moment (``at_s`` from the client's
    start): what the live path's PairReader reads (ui/store_watcher.PairRecords)."""

    recording: PairRecording
    at_s: float

    def get_run(self, run_id: int) -> RunRecord:
        recording = self.recording
        if run_id == recording.client.id:
            run, ends_at_s = recording.client, recording.client_ends_at_s
        elif run_id == recording.server.id:
            run, ends_at_s = recording.server, recording.server_ends_at_s
        else:
            raise KeyError(run_id)
        if self.at_s < ends_at_s:
            # live, the run was running then; its end, its message and its exit came later
            run = dataclasses.replace(run, state=RunState.RUNNING, ended_at=None, exit_status=None, message=None)
        return run

    def samples(self, run_id: int, after_seq: int = 0) -> list[tuple[int, Sample]]:
        if run_id != self.recording.client.id:
            return []
        return [(seq, s) for seq, s in self.recording.samples if seq > after_seq and s.t <= self.at_s]

    def result(self, run_id: int) -> dict[str, Any] | None:
        recording = self.recording
        return {recording.server.id: recording.server_result, recording.client.id: recording.client_result}.get(run_id)


@dataclass
class PairReplay:
    """The snapshots the Network tab got of a recorded pair, frame by frame: going on from
    the last one built reads only the samples in between; going back reads again from the
    start (a new PairReader, as a new live watch would)."""

    recording: PairRecording
    _reader: PairReader | None = None
    _at_s: float = float("-inf")

    def snapshot_at(self, at_s: float) -> PairSnapshot:
        """What the live PairWatch posted ``at_s`` seconds after the client's start."""
        recording = self.recording
        if self._reader is None or at_s < self._at_s:
            self._reader = PairReader(recording.server.id, recording.client.id)
        self._at_s = at_s
        return self._reader.read(recording.at(at_s))


def read_pair_recording(store: Store, run_id: int) -> PairRecording:
    """The recording of the pair ``run_id`` is an end of (either end); ValueError naming what
    is missing (no such pair, an end still going, no client samples)."""
    ends = recorded_pair(store, run_id)
    if ends is None:
        raise ValueError(f"run {run_id} is no end of a recorded pair (no client run names it as its server)")
    server, client = ends
    for role, run in (("server", server), ("client", client)):
        if not run.state.finished:
            raise ValueError(
                f"the pair's {role} (run {run.id}) is still {run.state.value}: watch it live in the Network tab"
            )
    samples = tuple(store.samples(client.id, after_seq=0))
    if not samples:
        raise ValueError(
            f"the pair's client (run {client.id}, {client.tool}, {client.state.value}) recorded no samples: "
            "nothing to replay"
        )
    return PairRecording(server, client, samples, store.result(server.id), store.result(client.id))


@dataclass
class PairRecordingLoaded(Message):
    """A pair's recording read for a replay (or why it cannot be replayed)."""

    run_id: int
    recording: PairRecording | None
    error: str = ""


def pair_recording(run_id: int) -> Callable[[Store], Message]:
    """What a RecordingWatch reads for a pair's replay (from either end): its recording, or
    why there is none."""
    return _loading(
        lambda store: read_pair_recording(store, run_id),
        lambda found, why: PairRecordingLoaded(run_id, found, why),
    )
