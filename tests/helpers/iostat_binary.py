"""Runs the real sysstat ``iostat`` on generated data: in a private mount namespace
(``unshare -m``), /proc/diskstats, /proc/uptime and /sys/block are bind mounts of files we
rewrite between its samples. Needs root. Used by test_iostat_vs_sysstat_binary.py."""

from __future__ import annotations

import os
import random
import select
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

IOSTAT = shutil.which("iostat") or "/usr/bin/iostat"

# The 17 statistics of a 20-field line, in kernel order.
STAT_NAMES = (
    "rd_ios",
    "rd_merges",
    "rd_sectors",
    "rd_ticks",
    "wr_ios",
    "wr_merges",
    "wr_sectors",
    "wr_ticks",
    "ios_pgr",
    "tot_ticks",
    "rq_ticks",
    "dc_ios",
    "dc_merges",
    "dc_sectors",
    "dc_ticks",
    "fl_ios",
    "fl_ticks",
)
TICKS = {"rd_ticks", "wr_ticks", "tot_ticks", "rq_ticks", "dc_ticks", "fl_ticks"}


@dataclass
class Device:
    """One generated device: counters and how many statistics its line prints (11/15/17)."""

    name: str
    major: int
    minor: int
    stats: list[int]
    nstat: int = 17
    parent: str | None = None  # the disk of a partition

    def line(self) -> str:
        values = " ".join(str(v) for v in self.stats[: self.nstat])
        return f"{self.major:4d} {self.minor:7d} {self.name} {values}"


@dataclass
class Sample:
    """What the kernel would show at one instant."""

    uptime_cs: int
    devices: list[Device] = field(default_factory=list)
    dm_names: dict[str, str] = field(default_factory=dict)  # dm-N -> device-mapper name

    def write_root(self, root: Path) -> None:
        """As a sysstat-style root: proc/diskstats, proc/uptime, sys/block/NAME[/PART]/stat."""
        (root / "proc").mkdir(parents=True, exist_ok=True)
        write_in_place(root / "proc/uptime", f"{self.uptime_cs // 100}.{self.uptime_cs % 100:02d} 1000.00\n")
        write_in_place(root / "proc/diskstats", "".join(d.line() + "\n" for d in self.devices))
        block = root / "sys/block"
        block.mkdir(parents=True, exist_ok=True)
        wanted: set[Path] = set()
        for dev in self.devices:
            sysname = dev.name.replace("/", "!")
            d = block / sysname if dev.parent is None else block / dev.parent.replace("/", "!") / sysname
            d.mkdir(parents=True, exist_ok=True)
            wanted.add(d)
            write_in_place(d / "stat", " ".join(f"{v:8d}" for v in dev.stats[: dev.nstat]) + "\n")
            if dev.name in self.dm_names:
                (d / "dm").mkdir(exist_ok=True)
                write_in_place(d / "dm/name", self.dm_names[dev.name] + "\n")
        # Unplugged devices vanish from sysfs too.
        for disk in list(block.iterdir()):
            for sub in list(disk.iterdir()):
                if sub.is_dir() and sub not in wanted and sub.name != "dm":
                    shutil.rmtree(sub)
            if disk not in wanted and not any(p.parent == disk for p in wanted):
                shutil.rmtree(disk)


def write_in_place(path: Path, text: str) -> None:
    """Rewrite keeping the inode: a bind mount of the file keeps showing it."""
    with open(path, "a+", encoding="ascii") as f:
        f.seek(0)
        f.truncate()
        f.write(text)


def run_iostat_on_samples(samples: list[Sample], args: list[str], workdir: Path, timeout_s: float = 30.0) -> str:
    """Run ``iostat ARGS 1 len(samples)`` with samples[k] visible at its k-th read; return
    its stdout. ``-y`` in args: the first sample is read unseen, so the switch to the second
    is timed from the banner instead of from a printed report."""
    live = workdir / "live"
    samples[0].write_root(live)
    skip_first = any(a.startswith("-") and "y" in a for a in args)
    n_reports = len(samples) - (1 if skip_first else 0)
    dm_setup = ""
    if samples[0].dm_names:
        # iostat -N finds dm names by major:minor in /dev/mapper, the dm major in /proc/devices.
        (workdir / "devices").write_text("Block devices:\n  8 sd\n253 device-mapper\n")
        nodes = {d.name: (d.major, d.minor) for s in samples for d in s.devices}
        dm_setup = (
            f"mount --bind {workdir}/devices /proc/devices; mkdir -p /dev/mapper; "
            "mount -t tmpfs tmpfs /dev/mapper; "
            + "".join(
                f"mknod /dev/mapper/{dm_name} b {nodes[dm][0]} {nodes[dm][1]}; "
                for dm, dm_name in samples[0].dm_names.items()
                if dm in nodes
            )
        )
    script = (
        "set -e; mount --make-rprivate / 2>/dev/null || true; "
        f"mount --bind {live}/proc/diskstats /proc/diskstats; "
        f"mount --bind {live}/proc/uptime /proc/uptime; "
        f"mount --bind {live}/sys/block /sys/block; "
        + dm_setup
        + f"exec {IOSTAT} "
        + " ".join(args)
        + f" 1 {n_reports}"
    )
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC", "S_COLORS": "never"}
    proc = subprocess.Popen(
        ["unshare", "-m", "sh", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    out: list[str] = []
    try:
        deadline = time.monotonic() + timeout_s
        buffer = b""
        next_sample = 1
        reports_seen = 0
        banner_seen = False
        in_report = False
        assert proc.stdout is not None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"iostat {args} did not finish: {b''.join([buffer]).decode()!r}")
            ready, _, _ = select.select([proc.stdout], [], [], min(remaining, 0.5))
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                line = raw.decode()
                out.append(line)
                if not banner_seen and line.startswith("Linux"):
                    banner_seen = True
                    if skip_first and next_sample < len(samples):
                        # Its first (unseen) read happens right after the banner; the next
                        # comes 1 s later: switch half-way.
                        time.sleep(0.5)
                        samples[next_sample].write_root(live)
                        next_sample += 1
                    continue
                if line.startswith("Device"):
                    in_report = True
                elif in_report and not line.strip():
                    in_report = False
                    reports_seen += 1
                    if next_sample < len(samples):
                        samples[next_sample].write_root(live)
                        next_sample += 1
        proc.wait(timeout=5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise RuntimeError(f"iostat {args} failed ({proc.returncode}): {err}")
    return "\n".join(out) + "\n"


def write_roots(samples: list[Sample], workdir: Path) -> list[Path]:
    """The same samples as separate root dirs (what racperf --root reads)."""
    roots = []
    for index, sample in enumerate(samples):
        root = workdir / f"root{index + 1}"
        sample.write_root(root)
        roots.append(root)
    return roots


# -- random data ----------------------------------------------------------------------------


def _counter(rng: random.Random, big: bool) -> int:
    return rng.randrange(0, 1 << 40) if big else rng.randrange(0, 100_000)


def random_device(rng: random.Random, name: str, major: int, minor: int, parent: str | None = None) -> Device:
    """A device with random cumulative counters; some near the 32-bit tick wrap."""
    stats = []
    big = rng.random() < 0.3
    for stat in STAT_NAMES:
        if stat in TICKS:
            near_wrap = rng.random() < 0.2
            stats.append(rng.randrange((1 << 32) - 5000, 1 << 32) if near_wrap else rng.randrange(0, 1 << 31))
        elif stat == "ios_pgr":
            stats.append(rng.randrange(0, 4))
        else:
            stats.append(_counter(rng, big))
    if rng.random() < 0.15:
        stats[STAT_NAMES.index("rd_ios")] = stats[STAT_NAMES.index("wr_ios")] = 0
        stats[STAT_NAMES.index("dc_ios")] = stats[STAT_NAMES.index("fl_ios")] = 0
    nstat = rng.choice((11, 15, 17, 17))
    for i in range(nstat, 17):
        stats[i] = 0
    return Device(name, major, minor, stats, nstat, parent)


def advance(rng: random.Random, dev: Device, interval_cs: int) -> Device:
    """The same device one interval later: random activity, idle, or re-registered."""
    roll = rng.random()
    stats = list(dev.stats)
    ios = sum(stats[STAT_NAMES.index(s)] for s in ("rd_ios", "wr_ios", "dc_ios", "fl_ios"))
    if roll < 0.2:
        pass  # idle
    elif roll < 0.27 and ios:
        # Removed then inserted again: every counter restarts lower (sysstat's detection
        # case: fewer I/Os and every non-zero sector counter lower).
        stats = [rng.randrange(0, min(v, 1000)) if v else 0 for v in stats]
    else:
        for i, stat in enumerate(STAT_NAMES):
            if i >= dev.nstat:
                continue
            if stat == "ios_pgr":
                stats[i] = rng.randrange(0, 8)
            elif stat == "tot_ticks":
                # Sometimes busier than the interval (util > 100 %), sometimes wrapping.
                step = rng.choice(
                    (0, rng.randrange(0, interval_cs * 10), rng.randrange(interval_cs * 10, interval_cs * 15))
                )
                stats[i] = (stats[i] + step) % (1 << 32)
            elif stat in TICKS:
                stats[i] = (stats[i] + rng.choice((0, rng.randrange(0, 200_000)))) % (1 << 32)
            else:
                stats[i] += rng.choice((0, rng.randrange(0, 5000)))
    return Device(dev.name, dev.major, dev.minor, stats, dev.nstat, dev.parent)


def random_samples(seed: int, n_samples: int, n_disks: int, with_partitions: bool) -> list[Sample]:
    """Samples with activity, idle and never-used devices, discards, flushes, tick wraps,
    re-registrations and hot-plug (devices that vanish, come back, or appear)."""
    rng = random.Random(seed)
    uptime = rng.randrange(10_000, 10_000_000)
    known: dict[str, Device] = {}
    for i in range(n_disks):
        name = f"sd{chr(97 + i // 26)}{chr(97 + i % 26)}" if i < 40 else f"dm-{i}"
        disk = random_device(rng, name, 8 if i < 40 else 253, i * 16)
        known[name] = disk
        if with_partitions and i % 3 == 0:
            for p in range(1, 3):
                known[f"{name}{p}"] = random_device(rng, f"{name}{p}", disk.major, disk.minor + p, name)
    unplugged: set[str] = set()
    samples = [Sample(uptime, list(known.values()))]
    for k in range(1, n_samples):
        interval = rng.randrange(50, 400)
        uptime += interval
        for name, dev in list(known.items()):
            known[name] = advance(rng, dev, interval)
            if dev.parent is None and rng.random() < 0.05:
                unplugged ^= {name}  # unplugged, or plugged back
        if rng.random() < 0.7:
            name = f"nvme{k}n1"
            known[name] = random_device(rng, name, 259, k)
        samples.append(Sample(uptime, [d for d in known.values() if (d.parent or d.name) not in unplugged]))
    return samples
