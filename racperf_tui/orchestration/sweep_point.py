"""Which sweep, and which of its points, a run is: said with the load of each saturation
episode its supervisor records (orchestration/saturation_watch.py). Its own module: the
supervisor reads it, and orchestration/sweep.py (which starts supervisors) cannot be read
from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from racperf_tui.core.store import GroupNotFound, RunRecord, Store

#: the key of a sweep group's config under which its walk is recorded (sweep.plan_record)
PLAN_KEY = "sweep"


def is_sweep(config: Mapping[str, Any]) -> bool:
    """Is this a sweep group's config (sweep.plan_record)?"""
    return isinstance(config.get(PLAN_KEY), dict)


def sweep_point_of(store: Store, run: RunRecord) -> str:
    """'sweep g7 point 3 of 8' for a sweep's point ('' for any other run): its place among the
    group's points so far (a point runs on every node at once)."""
    if run.group_id is None:
        return ""
    try:
        group = store.get_group(run.group_id)
    except GroupNotFound:
        return ""
    if not is_sweep(group.config):
        return ""
    walk = group.config[PLAN_KEY]
    planned = len(walk.get("iodepth") or []) * len(walk.get("numjobs") or [])
    earlier = [other for other in store.group_runs(run.group_id) if other.id <= run.id]
    number = (len(earlier) - 1) // max(1, len(group.nodes)) + 1
    return f"sweep g{run.group_id} point {number}" + (f" of {planned}" if planned else "")
