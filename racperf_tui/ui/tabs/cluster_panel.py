"""The Cluster tab: every node of the cluster file side by side, and the shared LUNs with the
cluster total.

The panel owns a :class:`ClusterMonitor` (a coroutine per node on the SSH loop). A node with a
new state is noted in :class:`SampledNodes` and one :class:`NodesSampled` message posted for
all the nodes noted until it is handled (a tick's burst of 16 samples: one message, one pass
over the cards, each node's newest state), and each is shown at once: fed
into that node's :class:`IostatModel`, so the card's saturation flags are the Disks tab's, and
the card repaints the lines that changed. The shared LUNs are grouped once the tick's samples
are in (a short debounce after the first), and their totals judged by a model of their own.

While a CALIBRATE_IO run is running (the app's store watcher says which, and the devices
under its datafiles on its instance's node), every card marks its own names of those LUNs
(orchestration/calibration_watch.py maps them by the monitor's LUN identities), and a line
above the cards says which run; the marks go when the run ends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ItemGrid, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Static

from racperf_tui.core.disks.diskstats import QueueFacts
from racperf_tui.core.disks.iostat_model import IostatModel
from racperf_tui.core.disks.iostat_sampler import IostatReport

# cluster_file_to_watch lives in core.cluster now (the app asks it without importing this
# module, which brings asyncssh); re-exported for those who import it from here
from racperf_tui.core.remote.cluster import ClusterFileError, cluster_file_to_watch, load_cluster  # noqa: F401
from racperf_tui.orchestration.calibration_watch import CalibrationRun, devices_to_watch, instance_node
from racperf_tui.orchestration.cluster_monitor import OK, ClusterMonitor, NodeState, shared_luns
from racperf_tui.ui.dialogs.host_key_dialog import NodeHostKeys
from racperf_tui.ui.messages import CalibrationUpdate
from racperf_tui.ui.screens.matrix_view import MatrixView
from racperf_tui.ui.shown import plain
from racperf_tui.ui.store_watcher import store_watcher
from racperf_tui.ui.widgets.cluster_luns import LunView, SharedLunTable
from racperf_tui.ui.widgets.cluster_node_card import NodeCard

#: seconds after a node's sample before the shared LUNs are recomputed (the others of the
#: same tick arrive within it: every node samples at the same wall-clock instants)
LUN_DEBOUNCE_S = 0.1
#: seconds the first node's new state waits for the rest of its tick's burst: the SSH loop
#: computes the nodes' answers one after the other (1 to 2 ms each), and each pass over the
#: cards is one more screen update (3 to 4 ms) when they come apart
BURST_WINDOW_S = 0.03


@dataclass
class NodesSampled(Message):
    """The monitor published something new of one node or more (posted from the SSH loop's
    thread): the names are taken from the panel's :class:`SampledNodes` when it is handled."""


class SampledNodes:
    """The nodes with a state not shown yet, handed from the SSH loop's thread to the UI: a
    burst of the nodes' samples (every node samples at the same instants) is one message and
    one pass over the cards, each node's newest state read when it is handled."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._names: dict[str, None] = {}
        self._posted = False

    def add(self, name: str) -> bool:
        """Note the node; True when no message is on its way yet (the caller posts one)."""
        with self._lock:
            self._names[name] = None
            if self._posted:
                return False
            self._posted = True
            return True

    def take(self) -> list[str]:
        """The nodes noted since the last take, in the order they came."""
        with self._lock:
            names = list(self._names)
            self._names.clear()
            self._posted = False
        return names


class ClusterPanel(Vertical):
    """Cluster status line, the shared LUNs, then one card per node."""

    HELP_TITLE = "Cluster"

    BINDINGS = [
        Binding("m", "open_matrix", "Matrix", tooltip="The interconnect matrix of every node (its own view)"),
    ]

    #: the CALIBRATE_IO runs running now (the store watcher's latest word)
    calibrations: var[tuple[CalibrationRun, ...]] = var((), init=False)

    def __init__(
        self,
        cluster_file: Path,
        interval_s: float = 1.0,
        *,
        monitor: ClusterMonitor | None = None,
        first: bool = False,
        data_dir: str | None = None,
        id: str | None = None,
    ) -> None:
        """``monitor``: one made by the caller (its nodes must be the file's), started here.
        ``first``: take the focus once mounted, which brings its tab to the front (--cluster).
        ``data_dir``: the run store's (None: the default), for the CALIBRATE_IO runs."""
        super().__init__(id=id)
        self.data_dir = data_dir
        self._calibration_text = ""
        self.first = first
        self.cluster_file = cluster_file
        self.interval_s = interval_s
        self.monitor: ClusterMonitor | None = monitor
        self.models: dict[str, IostatModel] = {}
        self.totals = IostatModel()
        self.error = ""
        self.names: list[str] = []
        self._seen: dict[str, int] = {}
        self._sampled = SampledNodes()
        self._lun_timer: Timer | None = None
        self._burst_timer: Timer | None = None
        self._totals_of: tuple[tuple[str, int], ...] = ()
        self._status_text = ""
        self.host_keys = NodeHostKeys(self, self._host_key_trusted)
        try:
            self.cluster = load_cluster(cluster_file, required=True)
            self.names = self.cluster.names()
            if not self.names:
                self.error = f"{cluster_file}: no [[node]] in it"
        except ClusterFileError as exc:
            self.error = str(exc)

    def compose(self) -> ComposeResult:
        yield Static(id="cluster-status", markup=False)
        with VerticalScroll(id="cluster-body"):
            yield Static("Shared LUNs", classes="cluster-heading")
            yield SharedLunTable(id="cluster-luns")
            yield Static("Nodes", classes="cluster-heading")
            yield Static(id="cluster-calibration", markup=False)
            with ItemGrid(id="cluster-nodes", min_column_width=38):
                for index, name in enumerate(self.names):
                    yield NodeCard(name, interval_s=self.interval_s, id=f"node-{index}")

    def on_mount(self) -> None:
        if self.first:  # after the Disks table took the focus (mounted before this tab)
            self.call_after_refresh(self.query_one("#cluster-body").focus)
        if self.error:
            self._status(self.error)
            return
        if self.monitor is None:
            self.monitor = ClusterMonitor(self.cluster.nodes, self.interval_s)
        self.monitor.on_sample = self._from_worker
        self.monitor.start()
        store_watcher(self.app, self.data_dir).watch_calibration(self)
        self.set_interval(1.0, self._tick_clock)
        self._status_line()

    def action_open_matrix(self) -> None:
        self.app.push_screen(MatrixView(self.data_dir, self.cluster_file))

    def on_show(self) -> None:
        """The keys (scrolling) work at once on the tab: the focus left on a hidden tab's widget
        would keep them."""
        self.query_one("#cluster-body").focus()

    def on_unmount(self) -> None:
        store_watcher(self.app, self.data_dir).unwatch(self)
        if self.monitor is not None:
            self.monitor.stop(timeout_s=1.0)  # its coroutines end on the SSH loop, a daemon thread

    # the SSH loop's thread
    def _from_worker(self, name: str) -> None:
        if self._sampled.add(name):
            self.post_message(NodesSampled())

    # the UI thread
    def card(self, name: str) -> NodeCard:
        return self.query_one(f"#node-{self.names.index(name)}", NodeCard)

    def on_nodes_sampled(self, message: NodesSampled) -> None:
        """Show the nodes' new states BURST_WINDOW_S after the first of a burst, all that came
        by then in one pass (one screen update); waiting for every node of the tick would
        make the first node's sample wait for the slowest (Textual draws the screen at most
        60 times a second whoever asked)."""
        if self.monitor is not None and self._burst_timer is None:
            self._burst_timer = self.set_timer(BURST_WINDOW_S, self._show_sampled)

    def _show_sampled(self) -> None:
        self._burst_timer = None
        names = self._sampled.take()
        if self.monitor is None or not names:
            return
        for name in names:
            self._show_node(self.monitor.state(name))
        if self._lun_timer is None:
            self._lun_timer = self.set_timer(LUN_DEBOUNCE_S, self._show_luns)
        self._status_line()

    def _show_node(self, state: NodeState) -> None:
        assert self.monitor is not None
        name = state.name
        model = self.models.get(name)
        if model is None:
            model = self.models[name] = IostatModel(facts_of=_facts_of(self.monitor, name))
        if state.seq != self._seen.get(name, 0) and state.rows:
            self._seen[name] = state.seq
            # the model judges the devices that did something: a node has dozens of idle ones
            # (loop devices, partitions), 16 nodes of them were most of the tab's CPU
            rows = [r for r in state.rows if not r.is_partition and (r.r_s or r.w_s or r.util_pct or r.avgqu_sz)]
            report = IostatReport(state.sampled_at, state.interval_s, rows, list(state.errors), state.since_boot)
            model.update(report, record_history=not state.since_boot)
        self.card(name).show(state, model)
        if state.reason.startswith("host key"):
            self.host_keys.check(self.cluster.node(name), state.reason)

    def _host_key_trusted(self, name: str) -> None:
        if self.monitor is not None:
            self.monitor.retry_now(name)

    def _show_luns(self) -> None:
        self._lun_timer = None
        if self.monitor is None:
            return
        states = self.monitor.states()
        groups = shared_luns(states)
        samples = tuple((name, s.seq) for name, s in states.items() if s.state == OK)
        if samples != self._totals_of:  # a state change alone is no new sample of the totals
            self._totals_of = samples
            # a LUN's queue is its members' together, and it serves many I/Os at once (as a dm
            # device over several paths: await/svctm says nothing of queueing there)
            facts = {
                g.label: QueueFacts(g.queue_limit, None, None, None, slaves=tuple(f"{m.node}:" for m in g.members))
                for g in groups
            }
            self.totals.facts_of = lambda label: facts.get(label, QueueFacts(None, None, None, None))
            self.totals.update(IostatReport(0.0, self.interval_s, [g.total for g in groups], []))
        views = []
        for group in groups:
            members = []
            for member in group.members:
                model = self.models.get(member.node)
                device = model.devices.get(member.row.device) if model is not None else None
                if device is not None and device.flagged:
                    members.append((member.node, device.saturation_reason))
            views.append(LunView(group, self.totals.devices.get(group.label), tuple(members)))
        self.query_one(SharedLunTable).show(views)
        if self.calibrations:  # the nodes' LUNs may be new (the first full sample of a node)
            self._mark_calibration()

    def on_calibration_update(self, message: CalibrationUpdate) -> None:
        self.calibrations = message.runs

    def watch_calibrations(self) -> None:
        self._mark_calibration()

    def _mark_calibration(self) -> None:
        """Mark every node's names of the running calibrations' LUNs, and say which runs."""
        if self.monitor is None:
            return
        states = self.monitor.states()
        marks: dict[str, list[str]] = {}
        said = []
        for run in self.calibrations:
            node, why = instance_node(run.host, self.cluster)
            where = "this host (local)" if run.host == "local" else plain(run.host)
            if node is not None and node != run.host:
                where += f", node {plain(node)}"
            head = f"CALIBRATE_IO run {run.run_id} on {where}"
            if node is None:
                said.append(f"{head}: its datafiles' LUNs marked on no node: {plain(why)}")
            elif run.devices is None:
                said.append(f"{head}: the devices under its datafiles come when the calibration starts")
            elif not run.devices:
                said.append(f"{head}: no device found under its datafiles there")
            else:
                watched = devices_to_watch(node, run.devices, states)
                for name, devices in watched.items():
                    marks.setdefault(name, []).extend(devices)
                said.append(f"{head}: its datafiles' LUNs marked on every node{self._unmarked(node, watched, states)}")
        for name in self.names:
            self.card(name).mark(tuple(dict.fromkeys(marks.get(name, ()))))
        text = "\n".join(said)
        if text != self._calibration_text:  # an update re-lays the tab out: only when it changed
            self._calibration_text = text
            line = self.query_one("#cluster-calibration", Static)
            line.update(text)
            line.display = bool(said)

    def _unmarked(self, instance: str, watched: dict[str, tuple[str, ...]], states: dict[str, NodeState]) -> str:
        """Why some node has no marks: it shares none of the LUNs, or is not sampled yet."""
        others = [name for name in self.names if name != instance and not watched.get(name)]
        unsampled = [plain(n) for n in others if n not in states or states[n].seq == 0]
        sharing_none = [plain(n) for n in others if n in states and states[n].seq > 0]
        parts = []
        if sharing_none:
            parts.append(f"none of them seen on {', '.join(sharing_none)}")
        if unsampled:
            parts.append(f"{', '.join(unsampled)} not sampled yet")
        return f" ({'; '.join(parts)})" if parts else ""

    def _tick_clock(self) -> None:
        """Retry countdowns and the age of a sample that is late move once a second (a node
        sampled on time is repainted by its samples)."""
        now = time.time()
        for card in self.query(NodeCard):
            if card.state is not None and (card.state.state != OK or card.is_stale(now)):
                card.refresh_clock()

    def _status(self, text: str) -> None:
        if text != self._status_text:  # an update re-lays the line out: only when it changed
            self._status_text = text
            self.query_one("#cluster-status", Static).update(text)

    def _status_line(self) -> None:
        if self.monitor is None:
            return
        states = self.monitor.states().values()
        ok = sum(1 for s in states if s.state == OK)
        name = self.cluster.name or self.cluster_file.name
        self._status(
            f"{plain(name)}: {ok}/{len(self.names)} nodes sampled every {self.interval_s:g} s over SSH  "
            f"({plain(self.cluster_file)})"
        )


def _facts_of(monitor: ClusterMonitor, name: str) -> Callable[[str], QueueFacts | None]:
    def facts_of(kernel_name: str) -> QueueFacts | None:
        state: NodeState = monitor.state(name)
        return state.facts.get(kernel_name)

    return facts_of
