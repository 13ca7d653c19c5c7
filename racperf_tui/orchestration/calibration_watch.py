"""CALIBRATE_IO's load on every node: it runs on one instance, but the I/O it drives lands on
the shared LUNs that every node of the RAC sees (and loads itself, if its instance is busy).

A CALIBRATE_IO run records the devices under its datafiles as kernel names on the instance's
node (``extra["devices"]`` of its samples, the result's ``devices``; tools/calibrate_io.py).
Another node names the same LUN differently (dm-3 there, dm-7 here): the cluster monitor
knows each node's LUNs by their identity (WWID, dm uuid, dm name: ``NodeState.luns``), so
:func:`devices_to_watch` maps the instance's devices to each node's own kernel names of the
same LUNs. What a view does with them (the Cluster tab marking them on each node) is the
view's; a device with no identity known on the instance is watched on the instance only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from racperf_tui.orchestration.cluster_monitor import NodeState


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
