"""CALIBRATE_IO's load on every node: it runs on one instance, but the I/O it drives lands on
the shared LUNs that every node of the RAC sees (and loads itself, if its instance is busy).

A CALIBRATE_IO run records the devices under its datafiles as kernel names on the instance's
node (``extra["devices"]`` of its samples, the result's ``devices``; tools/calibrate_io/__init__.py).
Another node names the same LUN differently (dm-3 there, dm-7 here): the cluster monitor
knows each node's LUNs by their identity (WWID, dm uuid, dm name: ``NodeState.luns``), so
:func:`devices_to_watch` maps the instance's devices to each node's own kernel names of the
same LUNs. What a view does with them (the Cluster tab marking them on each node) is the
view's; a device with no identity known on the instance is watched on the instance only.

Which runs: :class:`CalibrationFollower` reads the CALIBRATE_IO runs running now and the
devices of each one's newest sample from the store (on the store watcher's thread), and
:func:`instance_node` says which node of the cluster file a run's host is: ``local`` (this
machine) is the node whose ``host`` is ``local``, if the file has one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.remote.cluster import LOCAL_NODE, Cluster
from racperf_tui.core.store import Store

if TYPE_CHECKING:  # a type only: the dashboard's store watcher imports this module, and the
    # monitor's module brings asyncssh, which the first paint must not load
    from racperf_tui.orchestration.cluster_monitor import NodeState

#: the tool name CALIBRATE_IO's runs are recorded under
CALIBRATE_IO = "calibrate_io"


@dataclass(frozen=True)
class CalibrationRun:
    """A CALIBRATE_IO run running now: where (``host``: the run record's, "local" or a
    node's name) and the devices under its datafiles there (None: no sample yet, the
    calibration has not started)."""

    run_id: int
    host: str
    devices: tuple[str, ...] | None = None


@dataclass
class CalibrationFollower:
    """The CALIBRATE_IO runs in state running, oldest first, each with the devices of its
    newest sample. Each poll reads only the samples recorded since the last one; a run that
    ended is no longer listed (and forgotten)."""

    _after_seq: dict[int, int] = field(default_factory=dict)
    _devices: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def poll(self, store: Store) -> tuple[CalibrationRun, ...]:
        running = [r for r in store.unfinished_runs() if r.tool == CALIBRATE_IO and r.state == RunState.RUNNING]
        ids = {run.id for run in running}
        for kept in (self._after_seq, self._devices):
            for run_id in [k for k in kept if k not in ids]:
                del kept[run_id]
        found = []
        for run in running:
            for seq, sample in store.samples(run.id, after_seq=self._after_seq.get(run.id, 0)):
                self._after_seq[run.id] = seq
                devices = sample.extra.get("devices")
                if isinstance(devices, list):
                    self._devices[run.id] = tuple(str(name) for name in devices)
            found.append(CalibrationRun(run.id, run.host, self._devices.get(run.id)))
        return tuple(found)


def instance_node(host: str, cluster: Cluster) -> tuple[str | None, str]:
    """(the cluster file's node a run's ``host`` is, or None with why not).

    ``host`` is a node's name, or ``local`` (this machine: the node whose host is ``local``),
    or an ad hoc ``user@host:port`` (the node of that spec)."""
    where = cluster.path.name if cluster.path else "the cluster file"
    if host == LOCAL_NODE:
        for node in cluster.nodes:
            if node.is_local:
                return node.name, ""
        return None, f'it runs on this host, and no node of {where} is this host (host = "local" says which)'
    for node in cluster.nodes:
        if node.name == host or (not node.is_local and node.spec == host):
            return node.name, ""
    return None, f"its node {host} is not in {where}"


def devices_to_watch(
    instance_node: str, devices: Iterable[str], states: Mapping[str, NodeState]
) -> dict[str, tuple[str, ...]]:
    """Node name -> the kernel names there of the LUNs under CALIBRATE_IO's datafiles.

    ``devices``: the run's devices on ``instance_node``; ``states``: the cluster monitor's
    nodes (their ``luns``: LUN key -> kernel names on that node). The instance's own devices
    are always in; another node gets the names of every LUN whose names on the instance
    include one of ``devices``, and nothing when it shares none (or its LUNs are not known
    yet). Order: as the LUNs and their names are listed, without repeats."""
    wanted = list(dict.fromkeys(devices))
    watched: dict[str, tuple[str, ...]] = {instance_node: tuple(wanted)}
    instance = states.get(instance_node)
    if instance is None:
        return watched
    keys = [key for key, names in instance.luns.items() if any(name in wanted for name in names)]
    for name, state in states.items():
        if name == instance_node:
            continue
        found = [kernel for key in keys for kernel in state.luns.get(key, ())]
        watched[name] = tuple(dict.fromkeys(found))
    return watched
