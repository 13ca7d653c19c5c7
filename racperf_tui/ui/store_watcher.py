"""The one store watcher of a racperf UI: a worker thread that reads the run store (and the
sysfs facts of the runs' targets) and posts replaceable messages to the views that show runs.

Nothing of the runs UI reads the store on the event loop: a view subscribes (the runs list,
a live run, a pair, a finished run's result) and gets messages (ui/messages.py) built from the
core's types. One thread, one SQLite connection, for the whole app; each subscription has its
own pace (a live run 20 times a second, the runs list once a second) and work is skipped
while nothing was committed (``PRAGMA data_version``).
"""

from __future__ import annotations

import json
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import get_current_worker

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.tool import ToolDescription
from racperf_tui.core.disks.block_devices import block_devices_of
from racperf_tui.core.disks.iostat_math import IostatRow
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import LOCAL_NODE
from racperf_tui.core.store import GroupNotFound, RunRecord, Store
from racperf_tui.orchestration.calibration_watch import CalibrationFollower, CalibrationRun
from racperf_tui.orchestration.group_alignment import NodeTimeline
from racperf_tui.orchestration.run_groups import (
    EARLY_ENDS,
    RESULT_FIGURES,
    GroupFollower,
    GroupRecords,
    ended_early,
    headline_figures,
    in_node_order,
    latest_total,
    node_figures,
    ran_share,
    result_figures,
    result_headline,
    start_skew_s,
)
from racperf_tui.orchestration.sweep_driver import driver_alive
from racperf_tui.orchestration.sweep_point import PLAN_KEY, is_sweep
from racperf_tui.ui.messages import (
    CalibrationUpdate,
    GroupSnapshot,
    GroupUpdate,
    LiveRunState,
    PairSnapshot,
    PairUpdate,
    RunLiveUpdate,
    RunResultLoaded,
    RunsSnapshot,
    RunsUpdate,
    SweepSnapshot,
    SweepUpdate,
)
from racperf_tui.ui.runs_data import LivePoller, description_of, open_store

#: how many runs the list shows
RUNS_LISTED = 500
#: the units of a node's final figures (run_groups.RESULT_FIGURES), for a group's IOPS
RESULT_DESCRIPTION = ToolDescription(metrics=RESULT_FIGURES)
#: how many of a live group run's newest samples the runs list keeps for the group's total
#: (the newest complete second is behind the newest sample by the slowest node's delay)
TIMELINE_SPANS_KEPT = 64
#: how long the watcher sleeps with nothing subscribed (a subscription wakes it at once)
IDLE_S = 1.0


@dataclass
class Watch:
    """One subscription: ``poll(store)`` on the watcher's thread every ``interval_s`` returns
    the message to post (or None); True from ``done`` ends the subscription."""

    target: MessagePump
    interval_s: float
    due: float = 0.0
    done: bool = False

    def poll(self, store: Store) -> Message | None:
        raise NotImplementedError


@dataclass
class RunsWatch(Watch):
    """The runs list: the runs, their figures, the devices running runs reach."""

    interval_s: float = 1.0
    _first: bool = True
    _interrupted: tuple[int, ...] = ()
    _version: int | None = None
    _last: RunsSnapshot | None = None
    _live_seq: dict[int, int] = field(default_factory=dict)
    _live_figure: dict[int, str] = field(default_factory=dict)
    _finished_figure: dict[int, str] = field(default_factory=dict)
    #: a group's run id -> its IOPS now (live) or in its result (finished)
    _group_iops: dict[int, float] = field(default_factory=dict)
    #: a running run's devices as its samples name them (``extra["devices"]``: ORION's
    #: LUNs, CALIBRATE_IO's datafiles), its newest sample that names them
    _sample_devices: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: a group's nodes in their order (a group's record does not change)
    _group_nodes: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: the groups that are sweeps (orchestration/sweep.py): their row opens the sweep view
    _sweeps: set[int] = field(default_factory=set)
    #: a group's run seen live -> its samples by wall-clock time, for the group's live total
    _timelines: dict[int, NodeTimeline] = field(default_factory=dict)

    def poll(self, store: Store) -> Message | None:
        if self._first:
            self._first = False
            self._interrupted = tuple(store.mark_interrupted_runs())
        version = store.data_version()
        live_before = self._last is not None and any(not r.state.finished for r in self._last.runs)
        if version == self._version and self._last is not None and not live_before:
            return None  # nothing committed and nothing running: the list cannot have changed
        self._version = version
        runs = store.list_runs(limit=RUNS_LISTED)
        figures: dict[int, str] = {}
        devices: list[str] = []
        for run in runs:
            if run.state.finished:
                self._live_seq.pop(run.id, None)
                self._sample_devices.pop(run.id, None)
                if run.id not in self._finished_figure:
                    result = store.result(run.id)
                    self._finished_figure[run.id] = description_of(run.tool).headline(result)
                    if run.group_id is not None:
                        iops = headline_figures(RESULT_DESCRIPTION, result_figures(result)).get("iops")
                        if iops is None and run.id not in self._group_iops:
                            # no result, and the list never saw it live (opened after, or it
                            # ended between two polls): its newest sample's figure
                            last = store.last_sample(run.id)
                            if last is not None:
                                iops = headline_figures(description_of(run.tool), node_figures(last[1])).get("iops")
                        if iops is not None:
                            self._group_iops[run.id] = iops
                figures[run.id] = self._finished_figure[run.id]
                continue
            new = store.samples(run.id, after_seq=self._live_seq.get(run.id, 0))
            for _seq, sample in new:
                named = sample.extra.get("devices")
                if isinstance(named, list) and run.host == "local":  # a node's names are not this host's
                    self._sample_devices[run.id] = tuple(str(name) for name in named)
            if new:
                seq, sample = new[-1]
                self._live_seq[run.id] = seq
                self._live_figure[run.id] = description_of(run.tool).sample_headline(sample.metrics)
                if run.group_id is not None:
                    iops = headline_figures(description_of(run.tool), node_figures(sample)).get("iops")
                    if iops is not None:
                        self._group_iops[run.id] = iops
            if run.group_id is not None:
                self._follow_timeline(run, [sample for _seq, sample in new])
            figures[run.id] = self._live_figure.get(run.id, "")
            for name in [*block_devices_of(run.target), *self._sample_devices.get(run.id, ())]:
                if name not in devices:
                    devices.append(name)
        group_iops: dict[int, float] = {}
        counted: dict[tuple[int, str], RunRecord] = {}
        for run in runs:  # newest first: a node's latest run of the group (a sweep's point now)
            if run.group_id is not None and run.id in self._group_iops and (run.group_id, run.host) not in counted:
                counted[(run.group_id, run.host)] = run
        longest: dict[int, float] = {}
        for (group_id, _host), run in counted.items():
            longest[group_id] = max(longest.get(group_id, 0.0), run.duration_s)
        for (group_id, _host), run in counted.items():
            # an ended node's whole-run figure counts for the share of the group's time it ran
            share = ran_share(run.duration_s, longest[group_id]) if run.state in EARLY_ENDS else 1.0
            group_iops[group_id] = group_iops.get(group_id, 0.0) + self._group_iops[run.id] * share
        for group_id, iops in self._aligned_group_iops(runs).items():
            if iops is None:
                group_iops.pop(group_id, None)  # no second complete yet: no figure rather than a wrong one
            else:
                group_iops[group_id] = iops
        for run in runs:
            if run.group_id is not None and run.group_id not in self._group_nodes:
                group = store.get_group(run.group_id)
                self._group_nodes[run.group_id] = tuple(group.nodes)
                if is_sweep(group.config):
                    self._sweeps.add(run.group_id)
        snapshot = RunsSnapshot(
            tuple(runs),
            figures,
            tuple(devices),
            self._interrupted,
            group_iops=group_iops,
            group_nodes={run.group_id: self._group_nodes[run.group_id] for run in runs if run.group_id is not None},
            sweeps=frozenset(self._sweeps),
        )
        # a running run's duration moves every second: the list repaints it
        if snapshot == self._last and not any(not r.state.finished for r in runs):
            return None
        self._last = snapshot
        return RunsUpdate(snapshot)

    def _follow_timeline(self, run: RunRecord, samples: list[Sample]) -> None:
        timeline = self._timelines.setdefault(run.id, NodeTimeline(run.started_at))
        for sample in samples:
            timeline.add(sample, node_figures(sample))
        # only the newest complete second is drawn: the spans before it are not needed
        del timeline.spans[:-TIMELINE_SPANS_KEPT]

    def _aligned_group_iops(self, runs: list[RunRecord]) -> dict[int, float | None]:
        """A running group's IOPS: its nodes' figures of the same wall-clock second (the
        newest complete one, orchestration/group_alignment.py), as its TOTAL row adds them; a
        finished group keeps the sum of its nodes' results."""
        latest: dict[int, dict[str, RunRecord]] = {}
        for run in runs:  # newest first: a node's latest run of the group (a sweep's point now)
            if run.group_id is not None:
                latest.setdefault(run.group_id, {}).setdefault(run.host, run)
        aligned: dict[int, float | None] = {}
        for group_id, by_node in latest.items():
            if all(run.state.finished for run in by_node.values()):
                for run in by_node.values():
                    self._timelines.pop(run.id, None)
                continue
            timelines = {
                node: self._timelines.get(run.id, NodeTimeline(run.started_at)) for node, run in by_node.items()
            }
            finished = [node for node, run in by_node.items() if run.state.finished]
            description = description_of(next(iter(by_node.values())).tool)
            total = latest_total(description, timelines, finished=finished)
            aligned[group_id] = headline_figures(description, total).get("iops") if total is not None else None
        return aligned


@dataclass
class LiveRunWatch(Watch):
    """A live run: its new samples and state (the run view); posts when a sample or the
    state changed, or once a second for the elapsed clock, and once more after the end."""

    run_id: Any = None
    interval_s: float = 0.05
    poller: LivePoller | None = None
    _posted: tuple[int, RunState | None] | None = None
    _posted_at: float = 0.0

    def poll(self, store: Store) -> Message | None:
        if self.poller is None:
            self.poller = LivePoller(None, self.run_id)
            self.poller.use_store(store)
        live = self.poller.poll()
        self.done = not live.running
        if (live.samples_seen, live.state) == self._posted and time.monotonic() - self._posted_at < 1.0:
            return None
        self._posted, self._posted_at = (live.samples_seen, live.state), time.monotonic()
        return RunLiveUpdate(live)


class PairRecords(Protocol):
    """What a pair's view reads of its two runs: the store, or a replay's recording of them
    as they stood at a moment (ui/replay_data.py)."""

    def get_run(self, run_id: int) -> RunRecord: ...
    def samples(self, run_id: int, after_seq: int = 0) -> list[tuple[int, Sample]]: ...
    def result(self, run_id: int) -> dict[str, Any] | None: ...


@dataclass
class PairReader:
    """Both ends of a pair as the network panel shows them: :meth:`read` takes the client's
    samples recorded since the last read and gives the pair's snapshot (every client sample
    so far, both states, the results of the ends that finished). Read on one thread."""

    server_id: int
    client_id: int
    _samples: list[Sample] = field(default_factory=list)
    _after_seq: int = 0

    def read(self, records: PairRecords) -> PairSnapshot:
        for seq, sample in records.samples(self.client_id, self._after_seq):
            self._after_seq = seq
            self._samples.append(sample)
        server, client = records.get_run(self.server_id), records.get_run(self.client_id)
        return PairSnapshot(
            server,
            client,
            tuple(self._samples),
            records.result(server.id) if server.state.finished else None,
            records.result(client.id) if client.state.finished else None,
        )


@dataclass
class PairWatch(Watch):
    """Both ends of a pair (the network panel), read by a :class:`PairReader`; posted when it
    changed, done once both ended."""

    server_id: int = 0
    client_id: int = 0
    interval_s: float = 0.25
    _reader: PairReader | None = None
    _last: PairSnapshot | None = None

    def poll(self, store: Store) -> Message | None:
        if self._reader is None:
            self._reader = PairReader(self.server_id, self.client_id)
        snapshot = self._reader.read(store)
        self.done = snapshot.server.state.finished and snapshot.client.state.finished
        if snapshot == self._last:
            return None
        self._last = snapshot
        return PairUpdate(snapshot)


#: how many intervals a group view keeps per node and for the total (2 minutes at 1 s)
GROUP_HISTORY = 120


@dataclass
class GroupWatch(Watch):
    """A run group (the group view): each node's run and headline figures per sample, the
    total per complete interval (computed by orchestration/run_groups, never here); posts
    when something changed or once a second, done once every node's run ended."""

    group_id: int = 0
    interval_s: float = 0.25
    follower: GroupFollower | None = None
    _nodes: dict[str, dict[str, deque[float]]] = field(default_factory=dict)
    _total: dict[str, deque[float]] = field(default_factory=dict)
    _intervals: int = 0
    _final: dict[str, float] | None = None
    #: each ended node's own result figures, read once when its run ended
    _node_finals: dict[str, dict[str, float]] = field(default_factory=dict)
    _last: GroupSnapshot | None = None
    _posted_at: float = 0.0

    def poll(self, store: Store) -> Message | None:
        return self.read(store)

    def read(self, store: GroupRecords) -> Message | None:
        """The group's update from ``store`` (the store, or a replay's recording of it)."""
        if self.follower is None:
            try:
                self.follower = GroupFollower(store, self.group_id)
            except GroupNotFound:
                self.done = True
                return GroupUpdate(GroupSnapshot(self.group_id, error=f"no run group {self.group_id} in the store"))
        follower = self.follower
        for event in follower.poll():
            if event.interval is not None:
                self._intervals = event.interval.index
                _append(self._total, headline_figures(follower.description, event.interval.total))
            elif event.sample is not None and event.node is not None:
                figures = headline_figures(follower.description, node_figures(event.sample))
                _append(self._nodes.setdefault(event.node, {}), figures)
        runs = tuple(in_node_order(follower.group, follower.runs.values()))
        for run in runs:
            if run.state.finished and run.host not in self._node_finals:
                self._node_finals[run.host] = result_headline({run.host: store.result(run.id)})
        if follower.finished and self._final is None:
            self._final = result_headline(
                {run.host: store.result(run.id) for run in runs},
                {run.host: run.duration_s for run in runs},
                ended_early(runs),
            )
        snapshot = GroupSnapshot(
            self.group_id,
            follower.group,
            runs,
            {node: {key: tuple(values) for key, values in series.items()} for node, series in self._nodes.items()},
            {key: tuple(values) for key, values in self._total.items()},
            self._intervals,
            start_skew_s(runs),
            final_total=self._final or {},
            node_finals={node: dict(figures) for node, figures in self._node_finals.items()},
        )
        self.done = follower.finished
        if snapshot == self._last and time.monotonic() - self._posted_at < 1.0:
            return None
        self._last, self._posted_at = snapshot, time.monotonic()
        return GroupUpdate(snapshot)


def _append(series: dict[str, deque[float]], figures: dict[str, float]) -> None:
    for key, value in figures.items():
        series.setdefault(key, deque(maxlen=GROUP_HISTORY)).append(value)


@dataclass
class SweepWatch(Watch):
    """A sweep (the sweep view): its group's result as the driver writes it after each point,
    the point running now and its newest sample, the target devices' iostat once a second (a
    sweep on this machine: sampled here, core/disks/iostat_sampler.py), whether its driver is
    alive. Posts when something changed or once a second; done once the sweep ended (its
    result final, or no driver and no point running)."""

    group_id: int = 0
    data_dir: Any = None
    interval_s: float = 0.25
    sampler: IostatSampler | None = None
    _sampled_at: float = 0.0
    _devices: tuple[IostatRow, ...] = ()
    _last: SweepSnapshot | None = None
    _posted_at: float = 0.0

    def poll(self, store: Store) -> Message | None:
        try:
            group = store.get_group(self.group_id)
        except GroupNotFound:
            self.done = True
            return SweepUpdate(SweepSnapshot(self.group_id, error=f"no sweep g{self.group_id} in the store"))
        runs = tuple(store.group_runs(self.group_id))
        current = next((run for run in reversed(runs) if not run.state.finished), None)
        newest = store.last_sample(current.id) if current is not None else None
        alive = driver_alive(resolve_data_dir(self.data_dir), self.group_id)
        snapshot = SweepSnapshot(
            self.group_id,
            group,
            store.group_result(self.group_id),
            runs,
            current,
            dict(newest[1].metrics) if newest is not None else {},
            self._sample_devices(group.config, alive or current is not None),
            alive,
        )
        self.done = not snapshot.walking
        if snapshot == self._last and time.monotonic() - self._posted_at < 1.0:
            return None
        self._last, self._posted_at = snapshot, time.monotonic()
        return SweepUpdate(snapshot)

    def _sample_devices(self, config: dict[str, Any], live: bool) -> tuple[IostatRow, ...]:
        """The target's devices now (once a second while the sweep walks; the last rows after)."""
        if not live or time.monotonic() - self._sampled_at < 1.0:
            return self._devices
        self._sampled_at = time.monotonic()
        if self.sampler is None:
            walk = config.get(PLAN_KEY) or {}
            nodes = walk.get("nodes") or []
            local = all(isinstance(n, dict) and n.get("host") == LOCAL_NODE for n in nodes)
            names = block_devices_of(walk.get("target")) if local else []
            if not names:
                return self._devices
            self.sampler = IostatSampler(devices=names)
            self.sampler.sample()  # the first report counts since boot: the next is an interval
            return self._devices
        report = self.sampler.sample()
        if report.interval_s > 0:
            self._devices = tuple(report.rows)
        return self._devices


@dataclass
class CalibrationWatch(Watch):
    """The CALIBRATE_IO runs running now and their devices (the Cluster tab); posts when
    they changed, the first time too (none)."""

    interval_s: float = 1.0
    follower: CalibrationFollower = field(default_factory=CalibrationFollower)
    _version: int | None = None
    _last: tuple[CalibrationRun, ...] | None = None

    def poll(self, store: Store) -> Message | None:
        version = store.data_version()
        if version == self._version:
            return None
        self._version = version
        runs = self.follower.poll(store)
        if runs == self._last:
            return None
        self._last = runs
        return CalibrationUpdate(runs)


@dataclass
class ResultWatch(Watch):
    """A finished run read once (the result view): the run, its result, every sample."""

    run_id: Any = None
    interval_s: float = 0.0

    def poll(self, store: Store) -> Message | None:
        self.done = True
        try:
            run = store.get_run(self.run_id)
        except KeyError:
            return RunResultLoaded(self.run_id, None, None, (), f"no run {self.run_id} in the store")
        samples = tuple(sample for _seq, sample in store.samples(self.run_id, after_seq=0))
        return RunResultLoaded(self.run_id, run, store.result(self.run_id), samples, safety=_safety(store, run.id))


def _safety(store: Store, run_id: int) -> dict[str, Any] | None:
    """The run's recorded targets and protections (raw output ``safety``), None without."""
    try:
        record = json.loads(store.raw_output(run_id, "safety") or "null")
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


@dataclass
class UnfinishedWatch(Watch):
    """The runs still pending or running, read once (the network panel's reattach)."""

    interval_s: float = 0.0
    callback: Callable[[list[RunRecord]], None] | None = None

    def poll(self, store: Store) -> Message | None:
        self.done = True
        runs = self.read(store)
        if self.callback is not None:
            self.target.call_later(self.callback, runs)
        return None

    def read(self, store: Store) -> list[RunRecord]:
        return store.unfinished_runs()


@dataclass
class RecentRunsWatch(UnfinishedWatch):
    """The newest runs, read once (the network panel's last recorded pair)."""

    def read(self, store: Store) -> list[RunRecord]:
        return store.list_runs(limit=RUNS_LISTED)


class StoreWatcher:
    """The app's store reader (see the module doc). Subscribe from the event loop; the
    thread does every read. A store that cannot be opened is retried once a second and each
    subscriber is told why (an update with ``error``)."""

    def __init__(self, app: App[Any], data_dir: Any) -> None:
        self.app = app
        self.data_dir = data_dir
        self._watches: list[Watch] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._started = False
        #: the thread the watcher reads on (tests check that no store read happens elsewhere)
        self.thread: threading.Thread | None = None

    # ---- subscriptions (event loop) ----------------------------------------------------------
    def watch_runs(self, target: MessagePump) -> RunsWatch:
        return self._add(RunsWatch(target))

    def watch_run(self, target: MessagePump, run_id: Any, interval_s: float = 0.05) -> LiveRunWatch:
        return self._add(LiveRunWatch(target, interval_s, run_id=run_id))

    def watch_pair(self, target: MessagePump, server_id: int, client_id: int, interval_s: float = 0.25) -> PairWatch:
        return self._add(PairWatch(target, interval_s, server_id=server_id, client_id=client_id))

    def watch_group(self, target: MessagePump, group_id: int, interval_s: float = 0.25) -> GroupWatch:
        return self._add(GroupWatch(target, interval_s, group_id=group_id))

    def watch_sweep(self, target: MessagePump, group_id: int, interval_s: float = 0.25) -> SweepWatch:
        return self._add(SweepWatch(target, interval_s, group_id=group_id, data_dir=self.data_dir))

    def watch_calibration(self, target: MessagePump) -> CalibrationWatch:
        return self._add(CalibrationWatch(target))

    def load_result(self, target: MessagePump, run_id: Any) -> ResultWatch:
        return self._add(ResultWatch(target, 0.0, run_id=run_id))

    def unfinished_runs(self, target: MessagePump, callback: Callable[[list[RunRecord]], None]) -> UnfinishedWatch:
        return self._add(UnfinishedWatch(target, 0.0, callback=callback))

    def recent_runs(self, target: MessagePump, callback: Callable[[list[RunRecord]], None]) -> RecentRunsWatch:
        return self._add(RecentRunsWatch(target, 0.0, callback=callback))

    def watch(self, watch: Watch) -> Watch:
        """A subscription of a view's own kind (a replay's recording: ui/replay_data.py)."""
        return self._add(watch)

    def unwatch(self, target: MessagePump) -> None:
        """End every subscription of ``target`` (call it when the view goes away)."""
        with self._lock:
            self._watches = [w for w in self._watches if w.target is not target]

    def poke(self, watch: Watch) -> None:
        """Poll ``watch`` now (a refresh key)."""
        watch.due = 0.0
        self._wake.set()

    def _add(self, watch: Any) -> Any:
        with self._lock:
            self._watches.append(watch)
        if not self._started:
            self._started = True
            self.app.run_worker(
                self._run, thread=True, group="store-watcher", name="store watcher", exit_on_error=False
            )
        self._wake.set()
        return watch

    # ---- the thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        worker = get_current_worker()
        self.thread = threading.current_thread()
        store: Store | None = None
        try:
            while not worker.is_cancelled:
                if store is None:
                    try:
                        store = open_store(self.data_dir)
                    except Exception as error:
                        self._tell_unreadable(str(error))
                        self._wake.wait(IDLE_S)
                        self._wake.clear()
                        continue
                self._wake.clear()
                now = time.monotonic()
                with self._lock:
                    watches = list(self._watches)
                for watch in watches:
                    if watch.due > now:
                        continue
                    watch.due = now + watch.interval_s
                    try:
                        message = watch.poll(store)
                    except Exception as error:  # a store being migrated or locked: say so, retry
                        message = _unreadable(watch, f"cannot read the store: {error}")
                        watch.due = now + max(watch.interval_s, 0.5)
                    if message is not None:
                        watch.target.post_message(message)
                    if watch.done:
                        with self._lock:
                            if watch in self._watches:
                                self._watches.remove(watch)
                with self._lock:
                    dues = [w.due for w in self._watches]
                self._wake.wait(max(0.0, min(dues) - time.monotonic()) if dues else IDLE_S)
        finally:
            if store is not None:
                store.close()

    def _tell_unreadable(self, text: str) -> None:
        with self._lock:
            watches = list(self._watches)
        for watch in watches:
            message = _unreadable(watch, text)
            if message is not None:
                watch.target.post_message(message)
        with self._lock:
            self._watches = [w for w in self._watches if not w.done]


def _unreadable(watch: Watch, text: str) -> Message | None:
    """What a subscriber is told when the store cannot be read."""
    if isinstance(watch, RunsWatch):
        return RunsUpdate(RunsSnapshot(error=text))
    if isinstance(watch, LiveRunWatch):
        return RunLiveUpdate(LiveRunState(run_id=watch.run_id, state=None, error=text))
    if isinstance(watch, ResultWatch):
        watch.done = True
        return RunResultLoaded(watch.run_id, None, None, (), text)
    if isinstance(watch, GroupWatch):
        return GroupUpdate(GroupSnapshot(watch.group_id, error=text))
    if isinstance(watch, SweepWatch):
        return SweepUpdate(SweepSnapshot(watch.group_id, error=text))
    return None


_WATCHERS: weakref.WeakKeyDictionary[App[Any], dict[str, StoreWatcher]] = weakref.WeakKeyDictionary()


def store_watcher(app: App[Any], data_dir: Any) -> StoreWatcher:
    """The watcher of ``app``'s store in ``data_dir`` (one per app and data dir)."""
    watchers = _WATCHERS.setdefault(app, {})
    key = str(data_dir)
    if key not in watchers:
        watchers[key] = StoreWatcher(app, data_dir)
    return watchers[key]
