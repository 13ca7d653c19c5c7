"""Reads /proc/diskstats, /proc/uptime and sysfs queue facts under a root directory.

Everything takes ``root`` so recorded snapshots (sysstat's tests/rootN layout) replay exactly.
Counters are kept raw and cumulative, as the kernel prints them; rates are iostat.py's job.

Speed matters here (a 2,000-device host is sampled every second), so parsing reuses the
counters of every line whose text did not change since the previous snapshot, and
``DeviceCounters`` is a NamedTuple (several times cheaper to build than a dataclass).
"""

from __future__ import annotations

import operator
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

#: Kernel tick counters (rd_ticks, wr_ticks, io_ticks, time_in_queue, ...) are printed as
#: 32-bit unsigned ints and wrap; sysstat subtracts them as ``unsigned int``.
TICKS_MODULO = 1 << 32


class DeviceCounters(NamedTuple):
    """Raw cumulative counters of one /proc/diskstats line (fields as the kernel names them).

    ``stat_fields`` is how many statistics the line carried: 4 (old kernels' partition
    lines: rd_ios, rd_sectors, wr_ios, wr_sectors only), 11 (2.6+), 15 (4.18+, discards),
    17 (5.5+, flushes). Tick fields are milliseconds.
    """

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
    stat_fields: int = 17


@dataclass(slots=True)
class DiskSnapshot:
    """All devices at one instant. ``uptime_s`` from /proc/uptime; ``wall_time`` is time.time().

    ``uptime_cs`` is the uptime in centiseconds parsed the way sysstat does (the interval
    between two snapshots is computed from it, so figures match sysstat's to the digit).
    ``lines`` maps each raw line to its counters so the next read can skip unchanged lines.
    """

    uptime_s: float
    wall_time: float
    devices: dict[str, DeviceCounters]
    errors: list[str] = field(default_factory=list)  # "FILE:LINE: what is wrong"
    uptime_cs: int = 0
    root: Path = Path("/")
    lines: dict[str, DeviceCounters] = field(default_factory=dict, repr=False)
    #: Names whose line differs from the previous snapshot's (None: no previous one).
    changed: set[str] | None = field(default=None, repr=False)
    #: How many old 4-statistics partition lines (iostat -x skips them, as sysstat).
    basic_lines: int = 0


@dataclass(slots=True, frozen=True)
class QueueFacts:
    """A device's queue settings from sysfs; None where the file does not exist."""

    queue_depth: int | None  # device/queue_depth (SCSI)
    nr_requests: int | None  # queue/nr_requests
    scheduler: str | None  # the [selected] one of queue/scheduler
    rotational: bool | None  # queue/rotational


def _parse_line(line: str, parts: list[str]) -> DeviceCounters | str:
    """One /proc/diskstats line -> counters, or a description of what is wrong with it."""
    n = len(parts)
    if n < 3:
        return f"too few fields: {line.strip()!r}"
    if n >= 14:
        # Like sysstat's sscanf: 14-17 fields are the 2.6 format, 18-19 add discards,
        # 20 and more add flushes (later kernels may append fields: ignored).
        if n >= 20:
            nstat, used = 17, 20
        elif n >= 18:
            nstat, used = 15, 18
        else:
            nstat, used = 11, 14
        try:
            values = [int(parts[0]), int(parts[1]), parts[2], *map(int, parts[3:used])]
        except ValueError:
            return f"not a number in {line.strip()!r}"
        if nstat < 17:
            values.extend((0,) * (17 - nstat))
        values.append(nstat)
        return DeviceCounters._make(values)
    if n == 7:
        try:
            major, minor, rd_ios, rd_sect, wr_ios, wr_sect = (
                int(parts[0]), int(parts[1]), int(parts[3]), int(parts[4]), int(parts[5]),
                int(parts[6]))
        except ValueError:
            return f"not a number in {line.strip()!r}"
        return DeviceCounters(major, minor, parts[2], rd_ios, 0, rd_sect, 0, wr_ios, 0,
                              wr_sect, 0, 0, 0, 0, stat_fields=4)
    return f"{n} fields, expected 14, 18 or 20 (or 7 for an old partition line): {line.strip()!r}"


_new_tuple = tuple.__new__
_name_of = operator.itemgetter(2)  # DeviceCounters.name, at C speed


def _parse_changed_20_field_lines(lines: list[str]) -> list[DeviceCounters] | None:
    """Bulk parse of 20-field lines (today's kernels): one split and one C-level int loop for
    all of them, the fastest way CPython offers. None when any line is not so (the caller
    then parses line by line, which names the bad line)."""
    tokens = " ".join(lines).split()
    n = len(lines)
    if len(tokens) != 20 * n:
        return None
    names = tokens[2::20]
    del tokens[2::20]
    try:
        ints = list(map(int, tokens))
    except ValueError:
        return None
    out = []
    append = out.append
    for k in range(n):
        b = k * 19
        append(_new_tuple(DeviceCounters, (ints[b], ints[b + 1], names[k], *ints[b + 2:b + 19], 17)))
    return out


def parse_diskstats(text: str, path: str = "/proc/diskstats",
                    previous: DiskSnapshot | None = None,
                    ) -> tuple[dict[str, DeviceCounters], dict[str, DeviceCounters], list[str]]:
    """Parse diskstats text. Lines identical to one of ``previous``'s are not parsed again.

    Returns (devices by name, in the file's order; devices by raw line; errors
    "PATH:LINE: what").
    """
    devices, by_line, errors, _, _ = _parse(text, path, previous)
    return devices, by_line, errors


def _parse(text: str, path: str, previous: DiskSnapshot | None,
           ) -> tuple[dict[str, DeviceCounters], dict[str, DeviceCounters], list[str],
                      set[str] | None, int]:
    """parse_diskstats, plus the names whose line changed (None: no previous to compare)
    and the number of old 4-statistics lines."""
    known = previous.lines if previous is not None else {}
    lines = text.splitlines()
    # One dict lookup of the whole line is the fast path: on a big host most devices are
    # idle, their lines do not change between samples.
    found = list(map(known.get, lines))
    changed = [i for i, c in enumerate(found) if c is None] if None in found else []
    if changed:
        parsed = _parse_changed_20_field_lines([lines[i] for i in changed])
        if parsed is not None:
            for i, counters in zip(changed, parsed):
                found[i] = counters
    if None not in found:
        # Every line parsed: dicts built at C speed unless a name repeats.
        devices = dict(zip(map(_name_of, found), found))
        if len(devices) == len(found):
            changed_names = None if previous is None else {found[i].name for i in changed}
            # Cached counters can be old 4-statistics ones only if the previous file had some.
            basic = (sum(1 for c in found if c.stat_fields == 4)  # type: ignore[union-attr]
                     if previous is not None and previous.basic_lines else 0)
            return (devices, dict(zip(lines, found)), [],  # type: ignore[arg-type]
                    changed_names, basic)
    errors: list[str] = []
    devices = {}
    by_line: dict[str, DeviceCounters] = {}
    changed_lines = set(changed)
    changed_names: set[str] = set()
    for index, (line, counters) in enumerate(zip(lines, found)):
        if counters is None:
            parts = line.split()
            if not parts:
                continue
            result = _parse_line(line, parts)
            if isinstance(result, str):
                errors.append(f"{path}:{index + 1}: {result}")
                continue
            counters = result
        name = counters.name
        if name in devices:
            errors.append(f"{path}:{index + 1}: device {name!r} listed twice; the first line "
                          "is kept")
            continue
        devices[name] = counters
        by_line[line] = counters
        if index in changed_lines:
            changed_names.add(name)
    basic = sum(1 for c in devices.values() if c.stat_fields == 4)
    return devices, by_line, errors, None if previous is None else changed_names, basic


def parse_uptime_cs(text: str) -> int:
    """/proc/uptime's first field in centiseconds, as sysstat's ``"%lu.%lu"`` reads it."""
    first = text.split()[0]
    seconds, _, cents = first.partition(".")
    if not seconds.isdigit() or (cents and not cents.isdigit()):
        raise ValueError(f"not an uptime: {first!r}")
    return int(seconds) * 100 + (int(cents) if cents else 0)


def read_snapshot(root: Path = Path("/"), previous: DiskSnapshot | None = None) -> DiskSnapshot:
    """Read ROOT/proc/diskstats and ROOT/proc/uptime.

    Never raises for bad data: what cannot be read is described in ``errors`` ("FILE:LINE:
    what"), and every device that can be read is returned. ``previous`` (the last snapshot
    of the same root) lets unchanged lines skip parsing.
    """
    root = Path(root)
    wall_time = time.time()
    errors: list[str] = []
    uptime_path = os.path.join(root, "proc/uptime")
    uptime_cs = 0
    try:
        with open(uptime_path, encoding="ascii", errors="replace") as f:
            uptime_text = f.read()
        uptime_cs = parse_uptime_cs(uptime_text)
    except OSError as exc:
        errors.append(f"{uptime_path}: cannot read: {exc.strerror or exc}")
    except (ValueError, IndexError):
        errors.append(f"{uptime_path}:1: not an uptime: {uptime_text.strip()[:60]!r}")
    diskstats_path = os.path.join(root, "proc/diskstats")
    try:
        # latin-1 decodes at memcpy speed and never fails (the file is ASCII anyway).
        with open(diskstats_path, "rb") as f:
            text = f.read().decode("latin-1")
    except OSError as exc:
        errors.append(f"{diskstats_path}: cannot read: {exc.strerror or exc}")
        return DiskSnapshot(uptime_cs / 100.0, wall_time, {}, errors, uptime_cs, root, {})
    if previous is not None and previous.root != root:
        previous = None
    devices, lines, line_errors, changed, basic = _parse(text, diskstats_path, previous)
    errors.extend(line_errors)
    return DiskSnapshot(uptime_cs / 100.0, wall_time, devices, errors, uptime_cs, root, lines,
                        changed, basic)


# ---------------------------------------------------------------------------------------
# sysfs: which names are whole devices, partitions of which disk, queue facts, dm names.
# sysstat's test build reads a directory's entries from its `_list` file (and `_void` marks
# an empty one) instead of readdir(); we honour both so its tests/rootN trees work as is.


def sysfs_name(name: str) -> str:
    """The sysfs spelling of a /proc/diskstats name ('cciss/c0d0' -> 'cciss!c0d0')."""
    return name.replace("/", "!")


def list_dir(path: str | Path) -> list[str] | None:
    """Entries of a directory (from its `_list` file when present); None if it is missing."""
    path = os.fspath(path)
    listing = os.path.join(path, "_list")
    try:
        with open(listing, encoding="utf-8", errors="replace") as f:
            return [e for e in f.read().split() if e not in (".", "..")]
    except OSError:
        pass
    try:
        return [e for e in os.listdir(path) if e not in ("_list", "_void")]
    except OSError:
        return None


def block_devices(root: Path = Path("/")) -> set[str] | None:
    """sysfs names of the whole devices (entries of ROOT/sys/block); None without sysfs."""
    entries = list_dir(os.path.join(root, "sys/block"))
    return None if entries is None else set(entries)


def whole_devices_with_stats(root: Path = Path("/")) -> set[str] | None:
    """/proc/diskstats names of the whole devices sysstat's default report lists: entries
    of ROOT/sys/block that hold a `stat` file. None without sysfs."""
    block = os.path.join(root, "sys/block")
    entries = list_dir(block)
    if entries is None:
        return None
    return {e.replace("!", "/") for e in entries if os.path.isfile(os.path.join(block, e, "stat"))}


def partitions_of(disk: str, root: Path = Path("/")) -> list[str]:
    """The partitions sysfs lists under a disk (sub-directories holding a `stat` file),
    as /proc/diskstats names, the way sysstat's ``iostat -p DISK`` finds them."""
    base = os.path.join(root, "sys/block", sysfs_name(disk))
    found = []
    for entry in list_dir(base) or []:
        if entry in ("device", "stat", "queue", "holders", "slaves", "trace", "power"):
            continue
        if os.path.isfile(os.path.join(base, entry, "stat")):
            found.append(entry.replace("!", "/"))
    return found


def _looks_like_partition(name: str, names: set[str]) -> bool:
    """Without sysfs: 'sda1' of 'sda', 'nvme0n1p2' of 'nvme0n1', 'cciss/c0d0p1' of 'cciss/c0d0'."""
    stem = name.rstrip("0123456789")
    if stem == name or not stem:
        return False
    if stem in names and not stem[-1].isdigit():
        return True
    return stem.endswith("p") and stem[:-1] in names and stem[-2:-1].isdigit()


def classify_partitions(names: list[str] | set[str], root: Path = Path("/")) -> dict[str, bool]:
    """name -> True when it is a partition. Whole devices are those with ROOT/sys/block/NAME
    (as sysstat's is_device() decides); without sysfs, a name-based guess."""
    whole = block_devices(root)
    if whole is None:
        pool = set(names)
        return {n: _looks_like_partition(n, pool) for n in names}
    return {n: sysfs_name(n) not in whole for n in names}


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _queue_dir_owner(name: str, root: Path) -> str | None:
    """sysfs dir (under sys/block) that holds the queue of `name`: itself or, for a
    partition, its disk."""
    sname = sysfs_name(name)
    block = os.path.join(root, "sys/block")
    if os.path.isdir(os.path.join(block, sname)):
        return os.path.join(block, sname)
    # A live /sys links sys/class/block/PART to .../block/DISK/PART.
    link = os.path.join(root, "sys/class/block", sname)
    if os.path.exists(link):
        parent = os.path.dirname(os.path.realpath(link))
        if os.path.isdir(os.path.join(parent, "queue")):
            return parent
    for disk in list_dir(block) or []:
        if os.path.isdir(os.path.join(block, disk, sname)):
            return os.path.join(block, disk)
    return None


def read_queue_facts(name: str, root: Path = Path("/")) -> QueueFacts:
    """Queue facts of device `name` (the /proc/diskstats name; '/' becomes '!' in sysfs).

    A partition reports its disk's queue.
    """
    base = _queue_dir_owner(name, Path(root))
    if base is None:
        return QueueFacts(None, None, None, None)
    queue_depth = _read_int(os.path.join(base, "device/queue_depth"))
    nr_requests = _read_int(os.path.join(base, "queue/nr_requests"))
    rotational_raw = _read_int(os.path.join(base, "queue/rotational"))
    scheduler: str | None = None
    try:
        with open(os.path.join(base, "queue/scheduler"), encoding="ascii", errors="replace") as f:
            text = f.read().strip()
        if "[" in text and "]" in text:
            scheduler = text[text.index("[") + 1:text.index("]")]
        elif text:
            scheduler = text.split()[0]  # a single scheduler is printed without brackets
    except OSError:
        pass
    return QueueFacts(queue_depth, nr_requests, scheduler,
                      None if rotational_raw is None else bool(rotational_raw))


def dm_names(root: Path = Path("/")) -> dict[str, str]:
    """dm-N -> device-mapper name, from ROOT/sys/block/dm-N/dm/name, else ROOT/dev/mapper links."""
    names: dict[str, str] = {}
    block = os.path.join(root, "sys/block")
    for entry in list_dir(block) or []:
        if entry.startswith("dm-"):
            try:
                with open(os.path.join(block, entry, "dm/name"), encoding="utf-8") as f:
                    dm_name = f.read().strip()
            except OSError:
                continue
            if dm_name:
                names[entry] = dm_name
    mapper = os.path.join(root, "dev/mapper")
    for entry in list_dir(mapper) or []:
        path = os.path.join(mapper, entry)
        if entry == "control" or not os.path.islink(path):
            continue
        target = os.path.basename(os.readlink(path))
        if target.startswith("dm-") and target not in names:
            names[target] = entry
    return names
