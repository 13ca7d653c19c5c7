"""Reads /proc/diskstats, /proc/uptime and sysfs queue facts under a root directory.

INTERFACE STUB (owned by the iostat helper; keep the names, fill the bodies).
Everything takes ``root`` so recorded snapshots (sysstat's tests/rootN layout) replay exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(slots=True)
class DeviceCounters:
    """Raw cumulative counters of one /proc/diskstats line (fields as the kernel names them)."""

    major: int
    minor: int
    name: str  # as in /proc/diskstats, e.g. "cciss/c0d0", "dm-3", "sda1"
    rd_ios: int
    rd_merges: int
    rd_sectors: int
    rd_ticks: int
    wr_ios: int
    wr_merges: int
    wr_sectors: int
    wr_ticks: int
    ios_pgr: int
    tot_ticks: int
    rq_ticks: int
    dc_ios: int = 0
    dc_merges: int = 0
    dc_sectors: int = 0
    dc_ticks: int = 0
    fl_ios: int = 0
    fl_ticks: int = 0


@dataclass(slots=True)
class DiskSnapshot:
    """All devices at one instant. ``uptime_s`` from /proc/uptime; ``wall_time`` is time.time()."""

    uptime_s: float
    wall_time: float
    devices: dict[str, DeviceCounters]
    errors: list[str] = field(default_factory=list)  # "FILE:LINE: what is wrong"


@dataclass(slots=True, frozen=True)
class QueueFacts:
    """A device's queue settings from sysfs; None where the file does not exist."""

    queue_depth: int | None  # device/queue_depth (SCSI)
    nr_requests: int | None  # queue/nr_requests
    scheduler: str | None  # the [selected] one of queue/scheduler
    rotational: bool | None  # queue/rotational


def read_snapshot(root: Path = Path("/")) -> DiskSnapshot:
    """Read ROOT/proc/diskstats and ROOT/proc/uptime."""
    raise NotImplementedError


def read_queue_facts(name: str, root: Path = Path("/")) -> QueueFacts:
    """Queue facts of device `name` (the /proc/diskstats name; '/' becomes '!' in sysfs)."""
    raise NotImplementedError
