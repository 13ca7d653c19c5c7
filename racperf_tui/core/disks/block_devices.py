"""The one sysfs walk: block devices as /sys describes them, read under a root directory.

Everything takes ``root`` (``Path("/")`` for the live system): a recorded tree (sysstat's
tests/rootN layout), a node's facts laid out here (core/remote/remote_diskstats.py, core/remote/node_facts.py)
and the live /sys are read by the same code. Four readers use it:

* the iostat report (core/disks/diskstats.py, core/disks/iostat_sampler.py): which names are whole devices,
  partitions of which disk, queue facts, dm names;
* the write guard (core/guard/safety.py): a device by major:minor, its partitions, the disk a
  partition belongs to, its holders (dm, multipath, md), attached loop devices and what backs
  them, what kind of device a holder is;
* the runs list (ui/runs_data.py): the devices I/O on a target reaches;
* ORION's live view (tools/orion/live.py): the device a LUN's I/O is counted on (by name or
  major:minor) and the devices below it (a partition's disk, dm / md slaves, recursively).

sysstat's test build reads a directory's entries from its ``_list`` file (and ``_void`` marks an
empty one) instead of readdir(); :func:`list_dir` honours both so its trees work as they are.
Nothing here opens a device node or stats a path outside ``root/sys``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from racperf_tui.core.textio.bounded_read import read_regular_text_bounded


@dataclass(slots=True, frozen=True)
class QueueFacts:
    """A device's queue settings from sysfs; None where the file does not exist."""

    queue_depth: int | None  # device/queue_depth (SCSI)
    nr_requests: int | None  # queue/nr_requests
    scheduler: str | None  # the [selected] one of queue/scheduler
    rotational: bool | None  # queue/rotational
    nr_hw_queues: int | None = None  # entries of mq/ (blk-mq hardware queues; NVMe has several)
    slaves: tuple[str, ...] = ()  # slaves/: the paths of a dm-multipath device, an md's members


# ---------------------------------------------------------------------------------------
# for iostat: which names are whole devices, partitions of which disk, queue facts, dm names


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


def is_block_name(name: str, root: Path = Path("/")) -> bool:
    """A device sysfs knows: a whole device (sys/block/NAME) or a partition (sys/class/block/NAME)."""
    sname = sysfs_name(name)
    return os.path.isdir(os.path.join(root, "sys/block", sname)) or os.path.isdir(
        os.path.join(root, "sys/class/block", sname)
    )


def disk_of_partition(name: str, root: Path = Path("/")) -> str | None:
    """The whole disk of partition ``name`` (None when ``name`` is a whole device or unknown)."""
    sname = sysfs_name(name)
    block = os.path.join(root, "sys/block")
    if os.path.isdir(os.path.join(block, sname)):
        return None
    # A live /sys links sys/class/block/PART to .../block/DISK/PART.
    link = os.path.join(root, "sys/class/block", sname)
    if os.path.exists(link):
        parent = os.path.basename(os.path.dirname(os.path.realpath(link)))
        if os.path.isdir(os.path.join(block, parent)):
            return parent.replace("!", "/")
    for disk in list_dir(block) or []:
        if os.path.isdir(os.path.join(block, disk, sname)):
            return disk.replace("!", "/")
    return None


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _queue_dir_owner(name: str, root: Path) -> str | None:
    """sysfs dir (under sys/block) that holds the queue of `name`: itself or, for a
    partition, its disk."""
    block = os.path.join(root, "sys/block")
    if os.path.isdir(os.path.join(block, sysfs_name(name))):
        return os.path.join(block, sysfs_name(name))
    disk = disk_of_partition(name, root)
    return None if disk is None else os.path.join(block, sysfs_name(disk))


def selected_scheduler(text: str) -> str | None:
    """The [selected] one of a queue/scheduler file's text ("none [mq-deadline] kyber")."""
    text = text.strip()
    if "[" in text and "]" in text:
        return text[text.index("[") + 1 : text.index("]")]
    return text.split()[0] if text else None  # a single scheduler is printed without brackets


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
            scheduler = selected_scheduler(f.read())
    except OSError:
        pass
    hw_queues = list_dir(os.path.join(base, "mq"))
    slaves = list_dir(os.path.join(base, "slaves"))
    return QueueFacts(
        queue_depth,
        nr_requests,
        scheduler,
        None if rotational_raw is None else bool(rotational_raw),
        nr_hw_queues=len(hw_queues) if hw_queues else None,
        slaves=tuple(sorted(name.replace("!", "/") for name in slaves or ())),
    )


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


# ---------------------------------------------------------------------------------------
# for the write guard: devices by number, partitions, holders, loops


def read_sysfs_text(path: Path) -> str | None:
    """A sysfs attribute, stripped; None when it cannot be read."""
    try:
        return read_regular_text_bounded(path).strip()
    except OSError:
        return None


def parse_devno(text: str | None) -> tuple[int, int] | None:
    """(major, minor) of a ``MAJ:MIN`` text, None for anything else."""
    if not text or ":" not in text:
        return None
    major_text, minor_text = text.split(":", 1)
    try:
        return (int(major_text), int(minor_text))
    except ValueError:
        return None


@dataclass(frozen=True)
class BlockDevice:
    """One block device as sysfs describes it."""

    name: str  # kernel name, "/" for "!" as in /proc/diskstats ("cciss/c0d0")
    major: int
    minor: int
    sysfs_dir: Path | None

    @property
    def devno(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.major}:{self.minor})"

    @property
    def is_partition(self) -> bool:
        return self.sysfs_dir is not None and (self.sysfs_dir / "partition").exists()


def device_from_sysfs(sysfs_dir: Path) -> BlockDevice | None:
    """The device of a sysfs directory (its ``dev`` and ``uevent``'s DEVNAME); None without one."""
    devno = parse_devno(read_sysfs_text(sysfs_dir / "dev"))
    if devno is None:
        return None
    name = sysfs_dir.name.replace("!", "/")
    for line in (read_sysfs_text(sysfs_dir / "uevent") or "").splitlines():
        if line.startswith("DEVNAME="):
            name = line.split("=", 1)[1]
    return BlockDevice(name=name, major=devno[0], minor=devno[1], sysfs_dir=sysfs_dir)


def device_from_devno(root: Path, major: int, minor: int) -> BlockDevice:
    """The device ``major:minor`` (``ROOT/sys/dev/block/MAJ:MIN``); without sysfs, just the number."""
    link = root / "sys" / "dev" / "block" / f"{major}:{minor}"
    if link.exists():
        found = device_from_sysfs(link.resolve())
        if found is not None:
            return found
    # Without sysfs we still know the number, which is all the usage checks need.
    return BlockDevice(name=f"{major}:{minor}", major=major, minor=minor, sysfs_dir=None)


def device_partitions(device: BlockDevice) -> list[BlockDevice]:
    """The partitions of a whole device (none for a partition)."""
    if device.sysfs_dir is None or device.is_partition:
        return []
    found = []
    try:
        children = sorted(device.sysfs_dir.iterdir())
    except OSError:
        return []
    for child in children:
        if (child / "partition").exists():
            part = device_from_sysfs(child)
            if part is not None:
                found.append(part)
    return found


def parent_disk(device: BlockDevice) -> BlockDevice | None:
    """The disk a partition belongs to; None for a whole device."""
    if device.sysfs_dir is None or not device.is_partition:
        return None
    return device_from_sysfs(device.sysfs_dir.parent)


def direct_holders(device: BlockDevice) -> list[BlockDevice]:
    """What sysfs ``holders/`` lists: device-mapper, multipath, md, bcache."""
    if device.sysfs_dir is None:
        return []
    try:
        entries = sorted((device.sysfs_dir / "holders").iterdir())
    except OSError:
        return []
    found = [device_from_sysfs(entry.resolve()) for entry in entries]
    return [holder for holder in found if holder is not None]


def holder_kind(device: BlockDevice) -> str:
    """'device-mapper "vg-lv"', 'multipath "mpatha"', 'LVM logical volume "vg-lv"', 'md raid1',
    or '' when sysfs says neither."""
    if device.sysfs_dir is None:
        return ""
    dm_name = read_sysfs_text(device.sysfs_dir / "dm" / "name")
    if dm_name is not None:
        dm_uuid = read_sysfs_text(device.sysfs_dir / "dm" / "uuid") or ""
        what = "multipath" if dm_uuid.startswith("mpath-") else "device-mapper"
        if dm_uuid.startswith("LVM-"):
            what = "LVM logical volume"
        return f'{what} "{dm_name}"'
    md_level = read_sysfs_text(device.sysfs_dir / "md" / "level")
    if md_level is not None:
        return f"md {md_level}"
    return ""


@dataclass(frozen=True)
class LoopEntry:
    """An attached loop device as sysfs names it: its backing file's path (as the kernel's
    mount namespace names it, not stat'ed here) and offset."""

    device: BlockDevice
    backing: str
    offset_bytes: int


def attached_loops(root: Path) -> list[LoopEntry]:
    """Every attached loop device (``ROOT/sys/block/loop*/loop/backing_file``), by name."""
    block_dir = root / "sys" / "block"
    try:
        names = sorted(entry.name for entry in os.scandir(block_dir) if entry.name.startswith("loop"))
    except OSError:
        return []
    loops = []
    for name in names:
        backing = read_sysfs_text(block_dir / name / "loop" / "backing_file")
        device = device_from_sysfs(block_dir / name)
        if not backing or device is None:
            continue
        try:
            offset_bytes = int(read_sysfs_text(block_dir / name / "loop" / "offset") or 0)
        except ValueError:
            offset_bytes = 0
        loops.append(LoopEntry(device, backing, offset_bytes))
    return loops


# ---------------------------------------------------------------------------------------
# for ORION's live view: the device a LUN's I/O is counted on and the devices below it

#: how deep device-mapper / md stacks are followed (the bound protects against a sysfs cycle)
MAX_STACK_DEPTH = 8


def name_of_devno(major: int, minor: int, root: Path = Path("/")) -> str | None:
    """The kernel name of device ``major:minor`` (``ROOT/sys/dev/block/MAJ:MIN``); None when
    sysfs does not know it."""
    link = os.path.join(root, "sys/dev/block", f"{major}:{minor}")
    if not os.path.exists(link):
        return None
    return os.path.basename(os.path.realpath(link)).replace("!", "/")


def devices_below(name: str, root: Path = Path("/"), depth: int = 0) -> list[str]:
    """A partition's disk, then every device under a dm / md device (``slaves/``, of the disk
    for a partition), recursively, in order, each once: they see the I/O of ``name`` again."""
    found: list[str] = []
    disk = disk_of_partition(name, root)
    if disk is not None:
        found.append(disk)
    if depth >= MAX_STACK_DEPTH:
        return found
    for slave in sorted(list_dir(os.path.join(root, "sys/block", sysfs_name(disk or name), "slaves")) or []):
        slave_name = slave.replace("!", "/")
        found.append(slave_name)
        found.extend(devices_below(slave_name, root, depth + 1))
    return [item for item in dict.fromkeys(found) if item != name]


# ---------------------------------------------------------------------------------------
# for the runs list


def devices_reached(major: int, minor: int, root: Path = Path("/")) -> list[str]:
    """Kernel names of the devices I/O on device ``major:minor`` reaches, itself first: a
    partition adds its whole disk, a device-mapper or md device the devices under it
    (``slaves/``), because iostat shows all of them. Empty when sysfs does not know it."""
    link = root / "sys" / "dev" / "block" / f"{major}:{minor}"
    try:
        real = link.resolve(strict=True)
    except OSError:
        return []
    names: list[str] = [real.name]
    if (real / "partition").exists():
        names.append(real.parent.name)
    slaves = real / "slaves"
    if slaves.is_dir():
        names.extend(sorted(p.name for p in slaves.iterdir()))
    return list(dict.fromkeys(names))


def block_devices_of(target: str | os.PathLike[str] | None, sys_root: str = "/sys") -> list[str]:
    """Kernel names of the block devices I/O on ``target`` reaches (``["sda1", "sda"]``).

    A block device is named by its own major:minor; a file or directory by the device of the
    filesystem holding it (st_dev). A partition adds its whole disk; a device-mapper or md
    device adds the devices under it (``slaves``), because iostat shows all of them.
    """
    if not target:
        return []
    try:
        st = os.stat(target)
    except OSError:
        parent = Path(target).parent
        try:
            st = os.stat(parent)
        except OSError:
            return []
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    return devices_reached(os.major(dev), os.minor(dev), Path(sys_root).parent)
