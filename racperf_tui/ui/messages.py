"""Messages the store watcher (ui/store_watcher.py, a worker thread) posts to the views that
show runs, and the few the views post to each other.

Each update carries the whole latest state of what a view shows (sparkline series, the runs
list, a pair's samples so far), so when the UI is busy a newer update replaces the one still
queued (``can_replace``) without losing anything: the Toolong way of keeping a fast producer
from flooding a slower consumer. Everything in them is the core's types (RunRecord, Sample,
RunState) or immutable snapshots of them, never rows or JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.tool import MetricSpec
from racperf_tui.core.disks.iostat_math import IostatRow
from racperf_tui.core.store import GroupRecord, RunRecord
from racperf_tui.orchestration.calibration_watch import CalibrationRun


@dataclass(frozen=True, slots=True)
class LiveRunState:
    """Everything the live view shows of one run at one moment.

    ``series`` maps a metric name to its recent per-interval values (bounded, oldest first);
    ``current`` maps a metric name to its latest value. ``last_sample_t`` is the run clock
    (seconds) of the newest sample and ``polled_at_monotonic`` the moment the poller read it,
    which the latency benchmark uses. ``run`` is the run as the store has it, ``samples`` its
    recent samples (bounded, oldest first) and ``extra`` the newest one's extra: what a live
    panel of the tool (ui/tool_panels/live_panels.py) reads. ``state`` is the run's as the
    store has it, None when it is not known (the store cannot be read: ``error`` says why).
    """

    run_id: Any
    state: RunState | None
    #: the run's tool, and the metrics its description says the view shows (label, unit, format)
    tool: str = ""
    metrics: tuple[MetricSpec, ...] = ()
    series: dict[str, list[float]] = field(default_factory=dict)
    current: dict[str, float] = field(default_factory=dict)
    samples_seen: int = 0
    last_sample_t: float | None = None
    elapsed_s: float | None = None
    eta_s: float | None = None
    progress_pct: float | None = None
    job_states: str = ""
    polled_at_monotonic: float = 0.0
    error: str = ""
    run: RunRecord | None = None
    samples: tuple[Sample, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: the run's saturation episodes so far, a line each (core/disks/saturation.episodes_text),
    #: then what foreign I/O its LUN carried, if any (orchestration/foreign_io.py)
    saturation: tuple[str, ...] = ()

    @property
    def running(self) -> bool:
        """The run is pending or running: it may still change."""
        return self.state is not None and not self.state.finished

    @property
    def ended(self) -> bool:
        """The run is known to have ended (not merely unknown)."""
        return self.state is not None and self.state.finished

    @property
    def state_name(self) -> str:
        """The state as shown: its value, ``?`` when unknown."""
        return "?" if self.state is None else self.state.value


@dataclass
class RunLiveUpdate(Message):
    """The latest state of a live run; supersedes an older one for the same run still queued."""

    live: LiveRunState

    def can_replace(self, message: Message) -> bool:
        """Textual drops this message in favour of a newer update of the same run."""
        return isinstance(message, RunLiveUpdate) and message.live.run_id == self.live.run_id


@dataclass(frozen=True, slots=True)
class RunsSnapshot:
    """The runs list at one moment: the runs (newest first), each one's figure (a running
    run's from its latest sample, a finished one's from its result), the block devices the
    running runs reach (sysfs, read by the watcher) and the runs found interrupted when the
    store was first opened. ``error`` says why the store cannot be read."""

    runs: tuple[RunRecord, ...] = ()
    figures: Mapping[int, str] = field(default_factory=dict)
    devices: tuple[str, ...] = ()
    interrupted_on_start: tuple[int, ...] = ()
    error: str = ""
    #: a run group's IOPS: its nodes' latest (running) or final (ended) IOPS added up
    group_iops: Mapping[int, float] = field(default_factory=dict)
    #: a run group's nodes in the order they were named (the cluster file's for ``--nodes all``)
    group_nodes: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    #: the run groups that are sweeps (their row opens the sweep view)
    sweeps: frozenset[int] = frozenset()


@dataclass
class RunsUpdate(Message):
    """The latest runs list; supersedes the one still queued."""

    snapshot: RunsSnapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunsUpdate)


@dataclass(frozen=True, slots=True)
class PairSnapshot:
    """Both ends of a pair: their runs, every client sample so far (the verdict is on all of
    them), the results of the ends that finished."""

    server: RunRecord
    client: RunRecord
    client_samples: tuple[Sample, ...] = ()
    server_result: Mapping[str, Any] | None = None
    client_result: Mapping[str, Any] | None = None
    error: str = ""


@dataclass
class PairUpdate(Message):
    """The latest state of a pair; supersedes an older one of the same pair still queued."""

    pair: PairSnapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, PairUpdate) and message.pair.client.id == self.pair.client.id


@dataclass(frozen=True, slots=True)
class GroupSnapshot:
    """A run group as its view shows it: the group, each node's run (in the group's node
    order), each node's and the total's recent headline figures per interval (``iops``,
    ``mib_s``, ``progress_pct``: orchestration/run_groups.headline_figures) per wall-clock
    second, the start skew.
    ``error`` says why it cannot be read."""

    group_id: int
    group: GroupRecord | None = None
    runs: tuple[RunRecord, ...] = ()
    node_series: Mapping[str, Mapping[str, tuple[float, ...]]] = field(default_factory=dict)
    total_series: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    intervals: int = 0
    start_skew_s: float | None = None
    error: str = ""
    #: once every node's run ended: the total of the nodes' final results (``iops``,
    #: ``mib_s``), the group's figure rather than its last (partial) second
    final_total: Mapping[str, float] = field(default_factory=dict)
    #: each node whose run ended: its own final result's headline figures (empty when it
    #: recorded none: a node lost, a layout refused), shown instead of its last interval
    node_finals: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


@dataclass
class GroupUpdate(Message):
    """The latest state of a run group; supersedes an older one of the same group."""

    snapshot: GroupSnapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, GroupUpdate) and message.snapshot.group_id == self.snapshot.group_id


@dataclass(frozen=True, slots=True)
class SweepSnapshot:
    """A sweep as its view shows it: its group (the plan in its config), its result so far
    (the curves built point by point, the knee, why it ended: orchestration/sweep.py), its
    points' runs (oldest first), the point running now and its newest sample's metrics, the
    target devices' latest iostat rows (a sweep on this machine), whether its detached driver
    still walks it. ``error`` says why it cannot be read."""

    group_id: int
    group: GroupRecord | None = None
    result: Mapping[str, Any] | None = None
    runs: tuple[RunRecord, ...] = ()
    current: RunRecord | None = None
    current_metrics: Mapping[str, float] = field(default_factory=dict)
    devices: tuple[IostatRow, ...] = ()
    driver_alive: bool = False
    error: str = ""

    @property
    def walking(self) -> bool:
        """The sweep may still add a point: its result is not final and a driver or a point runs."""
        final = bool(self.result and self.result.get("finished"))
        return not final and (self.driver_alive or self.current is not None)


@dataclass
class SweepUpdate(Message):
    """The latest state of a sweep; supersedes an older one of the same sweep still queued."""

    snapshot: SweepSnapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SweepUpdate) and message.snapshot.group_id == self.snapshot.group_id


@dataclass(frozen=True, slots=True)
class SweepLaunched:
    """What the sweep form closes with: the sweep's group (the Runs tab opens its view)."""

    group_id: int


@dataclass
class CalibrationUpdate(Message):
    """The CALIBRATE_IO runs running now, with their devices (the Cluster tab marks them)."""

    runs: tuple[CalibrationRun, ...]

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CalibrationUpdate)


@dataclass
class RunResultLoaded(Message):
    """A finished run as the result view shows it: read once, off the event loop."""

    run_id: Any
    run: RunRecord | None
    result: Mapping[str, Any] | None
    samples: tuple[Sample, ...]
    error: str = ""
    #: what the supervisor recorded of its targets and the protections in force where it ran
    #: (None: a run without targets)
    safety: Mapping[str, Any] | None = None


@dataclass
class RunLaunched(Message):
    """A run was started from the form; the panel opens its live view."""

    run_id: Any


@dataclass
class RunsChanged(Message):
    """The set of runs (or their states) may have changed; the panel refreshes its list."""
