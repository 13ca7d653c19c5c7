"""The target devices' iostat of a run on another node, recorded a second at a time.

A local run's devices are sampled by its saturation watch (orchestration/saturation_watch.py);
a run on a node has its own: a long-lived companion on the node (one SSH channel for the run,
orchestration/companions.py) answers ``cat /proc/uptime /proc/diskstats`` every second, and
each answer after the first gives one interval of the devices' iostat -x rows (core/disks/
iostat_math.py, sysstat's semantics, the interval from the node's own uptime), appended to
the run's ``iostat`` stream (core/disks/iostat_record.py). The devices are those the run's
conditions found under its targets on the node (orchestration/run_conditions.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.hosts import Host
from racperf_tui.core.contract.invocation import Invocation, diskstats_companion
from racperf_tui.core.disks.diskstats import DiskSnapshot, snapshot_from_text
from racperf_tui.core.disks.iostat_math import compute_row
from racperf_tui.core.disks.iostat_record import IOSTAT_STREAM, iostat_line
from racperf_tui.orchestration.companions import CompanionRunner

#: the node's diskstats every second, one loop for the run
IOSTAT_COMPANION = diskstats_companion("iostat", first_after_s=0.0)


class NodeIostat:
    """Poll with :meth:`poll` from the supervisor's loop; :meth:`close` at the end."""

    def __init__(
        self,
        host: Host,
        directory: Path,
        devices: Sequence[str],
        record: Callable[[str, str], None],
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.devices = sorted(set(devices))
        self.record = record
        self.intervals = 0
        self._previous: DiskSnapshot | None = None
        looking = Invocation(argv=["true"], companions=(IOSTAT_COMPANION,))
        self.runner = CompanionRunner(host, looking, directory, self, record=record, log=log)

    def poll(self) -> None:
        self.runner.poll()

    def close(self) -> None:
        self.runner.close()

    def companion_output(self, name: str, output: str, exit_status: int) -> list[Sample]:
        """One answer of the node: the devices' rows since the previous one, recorded."""
        if exit_status != 0:
            return []
        current = snapshot_from_text(output, time.time(), source="node diskstats", previous=self._previous)
        previous, self._previous = self._previous, current
        if previous is None or current.uptime_cs <= previous.uptime_cs:
            return []
        itv_cs = current.uptime_cs - previous.uptime_cs
        rows = [
            compute_row(device, current.devices[device], previous.devices[device], itv_cs)
            for device in self.devices
            if device in current.devices and device in previous.devices
        ]
        line = iostat_line(current.wall_time, itv_cs / 100.0, rows, self.devices)
        if line:
            self.intervals += 1
            self.record(IOSTAT_STREAM, line)
        return []
