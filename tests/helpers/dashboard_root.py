"""A replayed root for dashboard tests: proc/diskstats, proc/uptime and sys/block under a
temp dir, rewritten between ticks (sysstat's tests/rootN layout, kept updated in place).

Devices are described by the figures iostat should show for each 1 s interval; the writer
turns them into cumulative kernel counters, so the real sampler computes them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class DiskLoad:
    """What a device does during one second (the figures iostat -x should print)."""

    read_iops: int = 0
    write_iops: int = 0
    sectors_per_io: int = 8  # 4 KiB requests
    await_ms: float = 0.0  # per I/O, reads and writes alike
    util_pct: float = 0.0
    avgqu_sz: float = 0.0


@dataclass
class DiskSpec:
    """A device's identity and queue facts in sysfs."""

    name: str
    major: int = 8
    minor: int = 0
    parent: str | None = None  # the disk of a partition
    queue_depth: int | None = 32
    nr_requests: int = 64
    scheduler: str = "none [mq-deadline] kyber"
    rotational: bool = False


class ReplayRoot:
    """A root directory whose counters advance by one second of given loads per ``tick``."""

    def __init__(self, path: Path, disks: list[DiskSpec], uptime_s: float = 5000.0) -> None:
        self.path = path
        self.disks = disks
        self.uptime_cs = int(uptime_s * 100)
        self.counters = {d.name: [0] * 11 for d in disks}
        self.extra_lines: list[str] = []  # written after the devices' lines (e.g. a broken one)
        (path / "proc").mkdir(parents=True, exist_ok=True)
        for disk in disks:
            if disk.parent is None:
                base = path / "sys" / "block" / disk.name
                (base / "queue").mkdir(parents=True, exist_ok=True)
                (base / "queue" / "nr_requests").write_text(f"{disk.nr_requests}\n")
                (base / "queue" / "scheduler").write_text(f"{disk.scheduler}\n")
                (base / "queue" / "rotational").write_text(f"{int(disk.rotational)}\n")
                (base / "device").mkdir(exist_ok=True)
                if disk.queue_depth is not None:
                    (base / "device" / "queue_depth").write_text(f"{disk.queue_depth}\n")
                (base / "stat").write_text("")
            else:
                part = path / "sys" / "block" / disk.parent / disk.name
                part.mkdir(parents=True, exist_ok=True)
                (part / "stat").write_text("")
                (part / "partition").write_text("1\n")
        self._write()

    def tick(self, loads: dict[str, DiskLoad], seconds: float = 1.0) -> None:
        """Advance the clock by ``seconds`` with these loads (absent devices stay idle)."""
        for name, load in loads.items():
            c = self.counters[name]
            reads, writes = round(load.read_iops * seconds), round(load.write_iops * seconds)
            c[0] += reads
            c[2] += reads * load.sectors_per_io
            c[3] += round(reads * load.await_ms)
            c[4] += writes
            c[6] += writes * load.sectors_per_io
            c[7] += round(writes * load.await_ms)
            c[9] += round(load.util_pct * 10 * seconds)  # io_ticks, ms busy per second
            c[10] += round(load.avgqu_sz * 1000 * seconds)  # time_in_queue
        self.uptime_cs += round(seconds * 100)
        self._write()

    def _write(self) -> None:
        lines = []
        for disk in self.disks:
            c = self.counters[disk.name]
            fields = " ".join(str(v) for v in c)
            lines.append(f"{disk.major:4d} {disk.minor:7d} {disk.name} {fields} 0 0 0 0 0 0\n")
        lines.extend(line + "\n" for line in self.extra_lines)
        tmp = self.path / "proc" / "diskstats.new"
        tmp.write_text("".join(lines))
        tmp.replace(self.path / "proc" / "diskstats")
        seconds, cents = divmod(self.uptime_cs, 100)
        (self.path / "proc" / "uptime").write_text(f"{seconds}.{cents:02d} {seconds * 2}.00\n")


#: The dashboard tests' five devices (tests/test_dashboard.py, test_dashboard_snapshot.py)
DISKS = [
    DiskSpec("sda", 8, 0, rotational=True, scheduler="mq-deadline [bfq]"),
    DiskSpec("sda1", 8, 1, parent="sda"),
    DiskSpec("sdb", 8, 16, queue_depth=32),
    DiskSpec("sdc", 8, 32),
    DiskSpec("nvme0n1", 259, 0, queue_depth=None, nr_requests=1023, scheduler="[none] mq-deadline"),
]

#: One second of each device; sdb is full (util 100, avgqu-sz 31.5 of queue_depth 32), sdc
#: queues (await 40 ms over svctm 2 ms), nvme0n1 is amber, sda green.
LOADS = {
    "sda": DiskLoad(read_iops=100, write_iops=50, await_ms=2, util_pct=30, avgqu_sz=0.3),
    "sda1": DiskLoad(read_iops=100, write_iops=50, await_ms=2, util_pct=30, avgqu_sz=0.3),
    "sdb": DiskLoad(read_iops=500, write_iops=500, await_ms=32, util_pct=100, avgqu_sz=31.5),
    "sdc": DiskLoad(read_iops=50, write_iops=50, await_ms=40, util_pct=20, avgqu_sz=4),
    "nvme0n1": DiskLoad(read_iops=200, await_ms=7, util_pct=50, avgqu_sz=1.4),
}
