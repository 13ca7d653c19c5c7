"""May this target be written to?  The write guard every writing tool goes through.

A write workload on the wrong block device destroys a database.  ``check_write_target`` looks at
a target the way the kernel sees it and refuses when writing could destroy data:

* the device, one of its partitions, the disk a partition belongs to, or anything stacked on top
  of them (device-mapper, multipath, md: ``holders/`` in sysfs, followed recursively) is mounted,
  used as swap, or held open by another process;
* the kernel refuses an exclusive open (``O_EXCL`` on a block device fails with EBUSY while a
  file system, swap, dm or md has claimed it, even from another mount namespace);
* the device carries a signature: Oracle ASM (primary or backup header), ext2/3/4, XFS, btrfs,
  LVM2, GPT, MBR, swap, OCFS2, mdraid.

Devices are compared by major:minor (``st_rdev``), never by path: a symlink, a
``/dev/disk/by-*`` link or a ``/dev/mapper`` name all lead to the same number, and fio's own
"is it mounted" check, which compares path strings, is fooled by a symlink.

Everything is read-only: the device is opened with ``O_RDONLY`` and only ``pread`` is called.
``proc/`` and ``sys/`` are read under ``root`` (through core/disks/block_devices.py for sysfs) and
every other question (a path's stat, an open file's stat, a device's first blocks, the
exclusive-open probe) goes to a ``system`` (core/guard/openfds.py): this machine by default, or a
node's gathered facts (core/remote/node_facts.py), so the same judgement runs on another node's view.
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from racperf_tui.core.disks.block_devices import (
    BlockDevice,
    attached_loops,
    device_from_devno,
    device_partitions,
    direct_holders,
    holder_kind,
    parent_disk,
    parse_devno,
    read_sysfs_text,
)
from racperf_tui.core.guard.openfds import (
    MountTable,
    Reader,
    StatLike,
    System,
    live_system,
    may_hang,
    stat_open_fd,
    unescape,
)

#: Allocation-unit sizes ASM supports (1 MiB is the default; Exadata uses 4 MiB).
ASM_AU_SIZES_BYTES = tuple(mib << 20 for mib in (1, 2, 4, 8, 16, 32, 64))
#: ASM metadata blocks are 4 KiB; the header copy is the second-last block of allocation unit 1.
ASM_METADATA_BLOCK_BYTES = 4096
#: Page sizes a swap area may have been made for (x86 4K, SPARC 8K, arm64 16K/64K, ppc64 64K).
SWAP_PAGE_SIZES_BYTES = (4096, 8192, 16384, 65536)
SWAP_MAGICS = (b"SWAPSPACE2", b"SWAP-SPACE", b"S1SUSPEND", b"S2SUSPEND", b"ULSUSPEND", b"LINHIB0001")
MD_MAGIC_LE = (0xA92B4EFC).to_bytes(4, "little")
MD_MAGIC_BE = (0xA92B4EFC).to_bytes(4, "big")
#: Bytes read from the start of the device: covers every head signature (btrfs ends at 65,608).
HEAD_BYTES = 128 * 1024


@dataclass(frozen=True)
class SafetyVerdict:
    """The answer for one target.

    ``reasons`` are full sentences naming the device and what was found; ``allowed`` is False
    exactly when there is at least one.  ``devices`` lists the block devices examined as
    ``NAME (MAJ:MIN)``.  ``kernel_name`` is the kernel's name of the target device ("loop3",
    "dm-2", "cciss/c0d0"), None for files and directories.
    """

    target: str
    allowed: bool
    reasons: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    kernel_name: str | None = None
    #: the regular file judged, as (st_dev, st_ino) of the descriptor its header was read
    #: through: the jail binds that file writable and no other (core/guard/devjail.py)
    identity: tuple[int, int] | None = field(default=None, compare=False)


# --------------------------------------------------------------------------------------------
# sysfs (core/disks/block_devices.py) and the loops' backing files


@dataclass(frozen=True)
class _Loop:
    """An attached loop device and what backs it."""

    device: BlockDevice
    backing: str  # sysfs loop/backing_file: a path, as our mount namespace names it
    offset_bytes: int
    backing_st: StatLike | None  # None: gone, or on a file system that may hang

    @property
    def backing_devno(self) -> tuple[int, int] | None:
        if self.backing_st is None or not stat.S_ISBLK(self.backing_st.st_mode):
            return None
        return (os.major(self.backing_st.st_rdev), os.minor(self.backing_st.st_rdev))

    @property
    def text(self) -> str:
        return f"loop device backed by {self.backing} from byte {self.offset_bytes}"


def _loops(root: Path, system: System, trusted_paths: Collection[str] = ()) -> list[_Loop]:
    """Every attached loop device.  A backing file on a network, cluster or FUSE file system is
    not stat'ed (it could hang) unless it is one of ``trusted_paths``."""
    mounts: MountTable | None = None
    loops = []
    for entry in attached_loops(root):
        if entry.backing not in trusted_paths:
            mounts = mounts or MountTable(root / "proc")
            fs_type = mounts.fs_type_of_path(entry.backing)
            if fs_type is not None and may_hang(fs_type):
                loops.append(_Loop(entry.device, entry.backing, 0, None))
                continue
        try:
            backing_st: StatLike | None = system.stat(entry.backing)
        except OSError:
            backing_st = None
        loops.append(_Loop(entry.device, entry.backing, entry.offset_bytes, backing_st))
    return loops


def _describe_holder(holder: BlockDevice, loops: dict[tuple[int, int], _Loop] | None = None) -> str:
    """'dm-0 (253:0, device-mapper "vg-lv")', 'md0 (9:0, md raid1)',
    'loop6 (7:6, loop device backed by /dev/loop5 from byte 1048576)'..."""
    loop = (loops or {}).get(holder.devno)
    kind = loop.text if loop is not None else holder_kind(holder)
    return f"{holder.name} ({holder.major}:{holder.minor}{', ' + kind if kind else ''})"


def _stacked(
    start: list[BlockDevice], seen: set[tuple[int, int]], loops: list[_Loop]
) -> list[tuple[BlockDevice, BlockDevice, bool]]:
    """(upper, lower, upper is a partition of lower) triples, recursively upwards from ``start``:
    dm on dm, md on partitions, a loop device whose backing file is one of these devices' nodes (not in holders/: a loop
    holds its backing file like any open file, but from the kernel, with no fd and no claim),
    and the partitions of whatever is stacked."""
    loops_on: dict[tuple[int, int], list[_Loop]] = {}
    for loop in loops:
        if loop.backing_devno is not None:
            loops_on.setdefault(loop.backing_devno, []).append(loop)
    pairs = []
    todo = list(start)
    while todo:
        lower = todo.pop(0)
        uppers = direct_holders(lower) + [loop.device for loop in loops_on.get(lower.devno, [])]
        for upper in uppers:
            if upper.devno in seen:
                continue
            seen.add(upper.devno)
            pairs.append((upper, lower, False))
            todo.append(upper)
            for part in device_partitions(upper):
                if part.devno not in seen:
                    seen.add(part.devno)
                    pairs.append((part, upper, True))
                    todo.append(part)
    return pairs


def _find_device_node(device: BlockDevice, system: System) -> str | None:
    """A /dev node whose st_rdev is this device (for reading it and the exclusive-open probe)."""
    for candidate in (f"/dev/block/{device.major}:{device.minor}", f"/dev/{device.name}"):
        try:
            st = system.stat(candidate)
        except OSError:
            continue
        if stat.S_ISBLK(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == device.devno:
            return candidate
    return None


# --------------------------------------------------------------------------------------------
# who uses what: mounts, swap, open file descriptors


def _blockdev_of_path(path: str, system: System) -> tuple[int, int] | None:
    try:
        st = system.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return (os.major(st.st_rdev), os.minor(st.st_rdev))


def _mounts(root: Path, system: System) -> dict[tuple[int, int], list[str]]:
    """major:minor -> mount points, from mountinfo's MAJ:MIN field and from the mount source.

    The source matters for btrfs, whose mountinfo number is an anonymous device, not the disk.
    """
    mounts: dict[tuple[int, int], list[str]] = {}
    text = read_sysfs_text(root / "proc" / "self" / "mountinfo") or ""
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        mount_point = unescape(fields[4])
        devnos = set()
        devno = parse_devno(fields[2])
        if devno is not None:
            devnos.add(devno)
        if "-" in fields[6:]:
            after = fields[fields.index("-", 6) + 1 :]
            if len(after) >= 2 and after[1].startswith("/"):
                source_devno = _blockdev_of_path(unescape(after[1]), system)
                if source_devno is not None:
                    devnos.add(source_devno)
        for devno in devnos:
            mounts.setdefault(devno, []).append(mount_point)
    return mounts


def _swaps(root: Path, system: System) -> dict[tuple[int, int], str]:
    """major:minor -> the swap entry in /proc/swaps (paths resolved by st_rdev, then by name)."""
    swaps: dict[tuple[int, int], str] = {}
    text = read_sysfs_text(root / "proc" / "swaps") or ""
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 2 or fields[1] != "partition":
            continue
        swap_path = unescape(fields[0])
        devno = _blockdev_of_path(swap_path, system)
        if devno is None:
            # The node may be missing here (a container); the kernel name still is in sysfs.
            devno = parse_devno(read_sysfs_text(root / "sys" / "class" / "block" / Path(swap_path).name / "dev"))
        if devno is not None:
            swaps[devno] = swap_path
    return swaps


@dataclass
class _OpenScan:
    """Result of one pass over /proc/*/fd."""

    holders: dict[object, list[str]] = field(default_factory=dict)  # key -> ["PID (comm)", ...]
    unreadable_pids: int = 0


def _scan_open_files(root: Path, wanted: Collection[object], *, trusted_paths: set[str], system: System) -> _OpenScan:
    """Which other processes hold one of ``wanted`` open.

    Keys are ("blk", major, minor) for block devices and ("ino", st_dev, st_ino) for files.
    Every open file is found by what it is, not by its path: a block device opened through a
    node outside /dev (``mknod /tmp/n b 7 5``) counts.  Files on network, cluster and FUSE file
    systems are never stat'ed (a dead NFS server would hang the guard; see core/guard/openfds.py),
    except the links in ``trusted_paths``: the target itself, which was stat'ed already.
    """
    scan = _OpenScan()
    proc = root / "proc"
    proc_text = str(proc)
    mounts = MountTable(proc)
    try:
        pids = [entry.name for entry in os.scandir(proc) if entry.name.isdigit() and entry.name not in system.own_pids]
    except OSError:
        return scan
    for pid in pids:
        try:
            fds = system.fd_names(f"{proc_text}/{pid}/fd")
        except FileNotFoundError:
            continue  # exited meanwhile
        except PermissionError:
            scan.unreadable_pids += 1
            continue
        except OSError:
            continue
        for fd in fds:
            found = stat_open_fd(proc_text, pid, fd, mounts, trusted_paths, system=system)
            if found is None:
                continue
            st = found.st
            if stat.S_ISBLK(st.st_mode):
                key: object = ("blk", os.major(st.st_rdev), os.minor(st.st_rdev))
            else:
                key = ("ino", st.st_dev, st.st_ino)
            if key in wanted:
                comm = read_sysfs_text(proc / pid / "comm") or "?"
                entry_text = f"{pid} ({comm})"
                users = scan.holders.setdefault(key, [])
                if entry_text not in users:
                    users.append(entry_text)
    return scan


# --------------------------------------------------------------------------------------------
# signatures


def _pread(reader: Reader, offset: int, length: int) -> bytes:
    try:
        return reader.pread(offset, length)
    except OSError:
        return b""


def _printable(raw: bytes) -> str:
    text = raw.split(b"\0", 1)[0].decode("ascii", errors="replace").strip()
    return text if text.isprintable() else ""


def _asm_names(block: bytes) -> str:
    """' (disk DATA_0000 of diskgroup DATA)' from an ASM header block, or ''."""
    if len(block) < 0x88:
        return ""
    disk_name = _printable(block[0x48:0x68])
    group_name = _printable(block[0x68:0x88])
    if disk_name and group_name:
        return f" (disk {disk_name} of diskgroup {group_name})"
    return ""


def _signature_reasons(reader: Reader, size_bytes: int, what: str, *, asm_only: bool = False) -> list[str]:
    """Sentences for each signature found; ``what`` names the device or file in them."""
    reasons: list[str] = []
    head = _pread(reader, 0, min(HEAD_BYTES, size_bytes))
    if size_bytes > 0 and not head:
        return [f"{what} could not be read to look for signatures (read error at byte 0)"]

    def at(buf: bytes, offset: int, magic: bytes) -> bool:
        return buf[offset : offset + len(magic)] == magic

    asm_primary = at(head, 32, b"ORCLDISK")
    if asm_primary:
        reasons.append(f"{what} carries an Oracle ASM disk header (ORCLDISK at byte 32){_asm_names(head)}")
    else:
        for au_bytes in ASM_AU_SIZES_BYTES:
            backup_offset = 2 * au_bytes - 2 * ASM_METADATA_BLOCK_BYTES
            if backup_offset + ASM_METADATA_BLOCK_BYTES > size_bytes:
                break
            block = _pread(reader, backup_offset, 256)
            if at(block, 32, b"ORCLDISK"):
                block_no = au_bytes // ASM_METADATA_BLOCK_BYTES - 2
                reasons.append(
                    f"{what} carries an Oracle ASM backup disk header (ORCLDISK at byte "
                    f"{backup_offset + 32}: allocation unit 1, block {block_no}, for "
                    f"{au_bytes >> 20} MiB allocation units){_asm_names(block)}; its primary header "
                    "at byte 0 is missing or damaged, which is how an ASM disk looks after an "
                    "accidental overwrite"
                )
                break
    if asm_only:
        return reasons

    if at(head, 1080, b"\x53\xef"):
        reasons.append(f"{what} carries an ext2/3/4 file system (magic 0xEF53 at byte 1080)")
    if at(head, 0, b"XFSB"):
        reasons.append(f"{what} carries an XFS file system (XFSB at byte 0)")
    if at(head, 65536 + 64, b"_BHRfS_M"):
        reasons.append(f"{what} carries a btrfs file system (_BHRfS_M at byte 65600)")
    for sector in range(4):
        if at(head, sector * 512, b"LABELONE"):
            label_type = _printable(head[sector * 512 + 24 : sector * 512 + 32]) or "unknown type"
            reasons.append(
                f"{what} carries an LVM2 physical volume label (LABELONE in sector {sector}, type {label_type!r})"
            )
            break
    gpt_found = False
    for offset, where in ((512, "byte 512, 512-byte sectors"), (4096, "byte 4096, 4K sectors")):
        if at(head, offset, b"EFI PART"):
            reasons.append(f"{what} carries a GPT partition table (EFI PART at {where})")
            gpt_found = True
            break
    # The backup GPT header sits in the last sector; it survives a wiped primary.
    last_4k = _pread(reader, size_bytes - 4096, 4096) if size_bytes >= 2 * 4096 else b""
    if not gpt_found and len(last_4k) == 4096:
        for sector_bytes in (512, 4096):
            if at(last_4k, 4096 - sector_bytes, b"EFI PART"):
                reasons.append(
                    f"{what} carries a backup GPT header (EFI PART in its last {sector_bytes}-byte "
                    f"sector, at byte {size_bytes - sector_bytes})"
                )
                gpt_found = True
                break
    if not gpt_found and at(head, 510, b"\x55\xaa"):
        entries = []
        for index in range(4):
            entry = head[446 + 16 * index : 462 + 16 * index]
            sectors = int.from_bytes(entry[12:16], "little") if len(entry) == 16 else 0
            # A real entry has a boot flag of 0x00/0x80, a type and a length: zeros are not one.
            if len(entry) == 16 and entry[0] in (0x00, 0x80) and entry[4] != 0 and sectors:
                entries.append(f"partition {index + 1} of type 0x{entry[4]:02X}")
        if entries:
            reasons.append(f"{what} carries an MBR (DOS) partition table (0x55AA at byte 510; {', '.join(entries)})")
    for page_bytes in SWAP_PAGE_SIZES_BYTES:
        magic_area = head[page_bytes - 10 : page_bytes]
        magic = next((m for m in SWAP_MAGICS if magic_area.startswith(m)), None)
        if magic is not None:
            reasons.append(
                f"{what} carries a swap signature ({magic.decode()} at byte {page_bytes - 10}, "
                f"{page_bytes // 1024} KiB pages)"
            )
            break
    for block_bytes in (512, 1024, 2048, 4096):
        if at(head, 2 * block_bytes, b"OCFSV2"):
            reasons.append(
                f"{what} carries an OCFS2 file system (OCFSV2 superblock at byte {2 * block_bytes}, "
                f"block 2 of {block_bytes}-byte blocks)"
            )
            break
    md_locations = [(0, "1.1"), (4096, "1.2")]
    if size_bytes >= 3 * 65536:
        md_locations.append((((size_bytes - 8192) & ~4095), "1.0"))
        md_locations.append((((size_bytes & ~65535) - 65536), "0.90"))
    for offset, version in md_locations:
        magic_bytes = _pread(reader, offset, 4)
        if magic_bytes in (MD_MAGIC_LE, MD_MAGIC_BE):
            reasons.append(
                f"{what} carries an md RAID superblock (magic 0xA92B4EFC at byte {offset}, metadata {version})"
            )
            break
    return reasons


# --------------------------------------------------------------------------------------------
# the checks


def _loop_backing_users(root: Path, system: System, st: StatLike, trusted_paths: set[str]) -> list[str]:
    """Loop devices whose backing file is this file (same st_dev and st_ino)."""
    return [
        loop.device.label
        for loop in _loops(root, system, trusted_paths)
        if loop.backing_st is not None and (loop.backing_st.st_dev, loop.backing_st.st_ino) == (st.st_dev, st.st_ino)
    ]


def _check_regular_file(path: str, st: StatLike, root: Path, system: System) -> SafetyVerdict:
    """Writing a file is fine, unless it is a loop device's backing store, an ASM disk kept in a
    file (ASM on NFS), or open in another process (a live datafile)."""
    reasons = []
    real = system.realpath(path)
    for loop in _loop_backing_users(root, system, st, {real}):
        reasons.append(f"{path} is the backing file of loop device {loop}; writing it writes that device")
    identity = (st.st_dev, st.st_ino)
    try:
        reader = system.open_reader(path)
    except OSError as exc:
        reasons.append(f"{path} could not be read to look for an ASM header: {exc.strerror}")
    else:
        try:
            # the file whose header is read must be the file judged (another user's directory:
            # a link swapped in between the stat and the open)
            if reader.identity() not in (None, identity):
                reasons.append(f"{path} was replaced by another file while the write guard examined it")
            reasons.extend(_signature_reasons(reader, st.st_size, path, asm_only=True))
        finally:
            reader.close()
    key = ("ino", st.st_dev, st.st_ino)
    scan = _scan_open_files(root, {key}, trusted_paths={real}, system=system)
    for user in scan.holders.get(key, []):
        reasons.append(f"{path} is held open by process {user}")
    return SafetyVerdict(target=path, allowed=not reasons, reasons=reasons, devices=[], identity=identity)


def _check_block_device(path: str, st: StatLike, root: Path, system: System) -> SafetyVerdict:
    reasons: list[str] = []
    target = device_from_devno(root, os.major(st.st_rdev), os.minor(st.st_rdev))
    target_text = (
        f"{path} ({target.name}, {target.major}:{target.minor})"
        if path != f"/dev/{target.name}"
        else f"{path} ({target.major}:{target.minor})"
    )

    # The devices whose use forbids writing: the target, its partitions, the disk it is a
    # partition of, the device a loop target writes through (and so on down), and everything
    # stacked on any of those.
    related: list[tuple[BlockDevice, str]] = [(target, "")]
    partitions = device_partitions(target)
    related += [(part, f"its partition {part.label}") for part in partitions]
    parent = parent_disk(target)
    if parent is not None:
        related.append((parent, f"the disk it is a partition of, {parent.label}"))
    seen = {device.devno for device, _ in related}
    loops = _loops(root, system)
    loop_by_devno = {loop.device.devno: loop for loop in loops}
    upper_loop = loop_by_devno.get(target.devno)
    while upper_loop is not None and upper_loop.backing_devno is not None and upper_loop.backing_devno not in seen:
        lower = device_from_devno(root, *upper_loop.backing_devno)
        related.append(
            (lower, f"the device it is a loop device on, {lower.label} (from byte {upper_loop.offset_bytes})")
        )
        seen.add(lower.devno)
        for extra in device_partitions(lower) + [p for p in [parent_disk(lower)] if p is not None]:
            if extra.devno not in seen:
                seen.add(extra.devno)
                related.append((extra, f"{extra.label}, under the device it is a loop device on"))
        upper_loop = loop_by_devno.get(lower.devno)
    holder_pairs = _stacked([device for device, _ in related], seen, loops)
    for holder, held, is_partition in holder_pairs:
        described = _describe_holder(holder, loop_by_devno)
        related.append((holder, f"{described}, which is stacked on it"))
        if is_partition:
            continue  # a partition of something stacked: its use is reported, not its existence
        if holder.devno in loop_by_devno:
            what = "a loop device"
        else:
            what = "a device-mapper/multipath/md device"
        under = "" if held.devno == target.devno else f" through {held.label}"
        reasons.append(
            f"{target_text} is in use by {described}{under}: writing underneath {what} corrupts what it holds"
        )

    mounts = _mounts(root, system)
    swaps = _swaps(root, system)
    claimed_explained = bool(holder_pairs)
    for device, relation in related:
        who = target_text if not relation else f"{target_text}: {relation}"
        for mount_point in mounts.get(device.devno, []):
            reasons.append(f"{who} is mounted on {mount_point}")
            claimed_explained = True
        if device.devno in swaps:
            reasons.append(f"{who} is in use as swap ({swaps[device.devno]} in /proc/swaps)")
            claimed_explained = True

    wanted = {("blk", device.major, device.minor) for device, _ in related}
    scan = _scan_open_files(root, wanted, trusted_paths={system.realpath(path)}, system=system)
    for device, relation in related:
        who = target_text if not relation else f"{target_text}: {relation}"
        for user in scan.holders.get(("blk", device.major, device.minor), []):
            reasons.append(f"{who} is held open by process {user}")
    if scan.unreadable_pids:
        reasons.append(
            f"could not check whether another process holds {target_text} open: the open files "
            f"of {scan.unreadable_pids} processes were not readable (run as root)"
        )

    # The kernel's own view catches claims made in other mount namespaces (containers).
    if not claimed_explained:
        for device, relation in related[: 1 + len(partitions)]:
            node = path if device.devno == target.devno else _find_device_node(device, system)
            if node is None:
                continue
            who = target_text if not relation else f"{target_text}: {relation}"
            busy = system.exclusive_open_busy(node)
            if busy:
                reasons.append(
                    f"{who} is claimed by the kernel (an exclusive open fails with EBUSY): mounted "
                    "in another mount namespace, used as swap, or part of a dm/md device"
                )
            elif busy is None:
                reasons.append(
                    f"could not ask the kernel whether {who} is claimed (the exclusive-open probe "
                    "needs python on that node): a mount in another mount namespace would go unseen"
                )

    try:
        reader = system.open_reader(path)
    except OSError as exc:
        reasons.append(f"{target_text} could not be read to look for signatures: {exc.strerror}")
    else:
        try:
            if reader.rdev() != st.st_rdev:  # the link changed between stat and open
                reasons.append(f"{path} changed while being checked; check again")
            else:
                reasons.extend(_signature_reasons(reader, reader.size_bytes(), target_text))
        finally:
            reader.close()

    devices = [device.label for device, _ in related]
    return SafetyVerdict(target=path, allowed=not reasons, reasons=reasons, devices=devices, kernel_name=target.name)


#: where device names live besides the missing path's own directory; the close names offered
#: for a mistyped device come from these (and /dev/disk/by-*)
_NAME_DIRS = ("/dev", "/dev/mapper", "/dev/oracleasm/disks")
#: close names offered at most
CLOSE_NAMES_MAX = 5


def _close_device_names(path: str, system: System) -> list[str]:
    """Up to CLOSE_NAMES_MAX existing block devices (nodes or links to one) whose name is close
    to ``path``'s last component, best first; at equal closeness, those in its own directory."""
    wanted = os.path.basename(path)
    own_dir = os.path.dirname(path)
    try:
        by_id = sorted(f"/dev/disk/{name}" for name in system.listdir("/dev/disk") if name.startswith("by-"))
    except OSError:
        by_id = []
    scored = []
    for directory in dict.fromkeys([own_dir, *_NAME_DIRS, *by_id]):
        try:
            names = system.listdir(directory)
        except OSError:
            continue
        for name in names:
            ratio = difflib.SequenceMatcher(None, wanted, name).ratio()
            if ratio < 0.6:  # difflib.get_close_matches' default cutoff
                continue
            candidate = os.path.join(directory, name)
            try:
                mode = system.stat(candidate).st_mode
            except OSError:
                continue
            if stat.S_ISBLK(mode):
                scored.append((-ratio, directory != own_dir, candidate))
    return [candidate for *_, candidate in sorted(scored)[:CLOSE_NAMES_MAX]]


def _missing_under_dev(path: str, system: System) -> tuple[str, str] | None:
    """For a path that does not exist: (the sentence naming it and the close names, the
    existing directory it would be created in) when it lies in /dev's own file system; None
    elsewhere, including file systems mounted under /dev (/dev/shm holds files by design)."""
    absolute = os.path.normpath(os.path.abspath(path))
    existing = os.path.dirname(absolute)
    while not system.isdir(existing) and existing != "/":
        existing = os.path.dirname(existing)
    real = system.realpath(existing)
    if real != "/dev" and not real.startswith("/dev/"):
        return None
    try:
        if system.stat(real).st_dev != system.stat("/dev").st_dev:
            return None
    except OSError:
        pass
    missing_dir = "" if existing == os.path.dirname(absolute) else f" (no directory {os.path.dirname(absolute)})"
    names = _close_device_names(absolute, system)
    hint = f"did you mean {', '.join(names)}?" if names else "no device has a similar name"
    return f"{path}: no such device{missing_dir}; {hint}", real


def check_read_target(path: str, *, system: System | None = None) -> SafetyVerdict:
    """Reading cannot destroy data, so everything that exists may be read.  A missing path in
    /dev is still refused: it is a mistyped device name, and the run would measure nothing (or,
    with a tool that creates its file, a file in memory)."""
    system = system or live_system()
    try:
        system.stat(path)
    except FileNotFoundError:
        missing = _missing_under_dev(path, system)
        if missing is not None:
            return SafetyVerdict(target=path, allowed=False, reasons=[missing[0]])
    except OSError:
        pass
    return SafetyVerdict(target=path, allowed=True)


def check_write_target(path: str, *, root: Path = Path("/"), system: System | None = None) -> SafetyVerdict:
    """Decide whether a write workload on ``path`` can destroy data.

    Files and directories are allowed (a file that backs a loop device, holds an ASM header or is
    open in another process is not).  A block device, reached directly or through any link, is
    refused for the reasons in the module docstring.  A missing path in /dev is refused with the
    close device names.  Nothing is ever written.  ``system`` answers what is not a file under
    ``root`` (this machine by default; a node's facts: core/remote/node_facts.py).
    """
    system = system or live_system()
    through = _kernel_files_on_the_way(path, walk=root == Path("/"))
    if through is not None:
        return SafetyVerdict(
            target=path,
            allowed=False,
            reasons=[
                f"{path} leads through {through}, a file system of the kernel (/proc/PID/fd/N, /dev/fd/N, "
                "/proc/PID/root: another process's files, reached past the run's read-only mounts); name "
                "the file itself"
            ],
        )
    try:
        st = system.stat(path)  # follows symlinks: /dev/mapper/x, /dev/disk/by-id/y, ~/mydisk
    except FileNotFoundError:
        missing = _missing_under_dev(path, system)
        if missing is not None:
            sentence, directory = missing
            if "(no directory" not in sentence:
                sentence += (
                    f" (a write would create a regular file in {directory}, in memory, instead of reaching a disk)"
                )
            return SafetyVerdict(target=path, allowed=False, reasons=[sentence])
        return SafetyVerdict(target=path, allowed=True)
    except OSError as exc:
        return SafetyVerdict(target=path, allowed=False, reasons=[f"{path} could not be examined: {exc.strerror}"])
    if stat.S_ISBLK(st.st_mode):
        return _check_block_device(path, st, root, system)
    if stat.S_ISCHR(st.st_mode):
        if os.major(st.st_rdev) == 1:  # /dev/null, /dev/zero: nothing to destroy
            return SafetyVerdict(target=path, allowed=True)
        return SafetyVerdict(
            target=path,
            allowed=False,
            reasons=[
                f"{path} is a character device ({os.major(st.st_rdev)}:{os.minor(st.st_rdev)}), "
                "e.g. a raw or NVMe generic device bound to a disk; racperf cannot tell which "
                "disk it writes to"
            ],
        )
    if stat.S_ISREG(st.st_mode):
        return _check_regular_file(path, st, root, system)
    # a directory or a FIFO: nothing to destroy, but the jail binds this one and no other
    return SafetyVerdict(target=path, allowed=True, identity=(st.st_dev, st.st_ino))


#: where a path reaches another process's descriptors or root, past any mount's read-only flag
_KERNEL_FILE_ROOTS = ("/proc", "/sys", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr")


def _under_kernel_files(path: str) -> bool:
    return any(path == top or path.startswith(top + "/") for top in _KERNEL_FILE_ROOTS)


def _kernel_files_on_the_way(path: str, *, walk: bool) -> str | None:
    """Where ``path`` enters /proc, /sys or /dev/fd: as written (.. resolved), and with ``walk``
    (this machine) at every symbolic link met on the way as the kernel walks it; None when it
    never does. A write to /proc/PID/fd/N reopens another process's file on that process's
    mount (writable), not the run's read-only view, and the guard would judge its own fd N."""
    normal = os.path.normpath(os.path.join("/", path))
    if _under_kernel_files(normal):
        return normal
    if not walk:
        return None
    pending = [part for part in normal.split("/") if part]
    current = "/"
    for _ in range(256):  # components and links together; the kernel follows at most 40 links
        if not pending:
            return None
        part = pending.pop(0)
        if part in (".", ".."):
            current = current if part == "." else os.path.dirname(current)
            continue
        candidate = os.path.join(current, part)
        if _under_kernel_files(candidate):
            return candidate
        try:
            target = os.readlink(candidate)
        except OSError:  # not a link (or missing): the walk goes on below it
            current = candidate
            continue
        pending = [p for p in target.split("/") if p] + pending
        current = "/" if target.startswith("/") else current
    return None


def override_matches(verdict: SafetyVerdict, typed: str) -> bool:
    """True when ``typed`` names the refused target: the path as given, the kernel name
    ("loop3") or /dev/ plus the kernel name ("/dev/loop3").  Surrounding blanks are ignored."""
    typed = typed.strip()
    if not typed:
        return False
    names = {verdict.target}
    if verdict.kernel_name:
        names |= {verdict.kernel_name, f"/dev/{verdict.kernel_name}"}
    return typed in names


def explain(verdict: SafetyVerdict) -> str:
    """A multi-line message for a refusal (empty when allowed), for headless error output."""
    if verdict.allowed:
        return ""
    lines = [f"refusing to write to {verdict.target}:"]
    lines += [f"  - {reason}" for reason in verdict.reasons]
    if verdict.devices:
        lines.append(f"  devices examined: {', '.join(verdict.devices)}")
    return "\n".join(lines)
