"""The write guard on real loop devices: every signature, mounts (also through a symlink), swap,
another process holding the device, a mounted partition, a stacked holder, and proof that the
guard itself never writes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from racperf_tui.core.guard.openfds import MountTable, may_hang
from racperf_tui.core.guard.safety import (
    SafetyVerdict,
    check_read_target,
    check_write_target,
    explain,
    override_matches,
)
from tests.helpers import REPO
from tests.helpers.loopdev import (
    LoopDevice,
    loop_device,
    make_sparse_image,
    mounted,
    needs_loop,
    stacked_loop,
    swap_on,
    write_at,
)
from tests.helpers.loopdev import sha256_of as _sha256

pytestmark = pytest.mark.timeout(60)

MIB = 1 << 20


def _run(argv: list[str], stdin: str | None = None) -> None:
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} not installed (make system-deps installs it)")
    subprocess.run(argv, input=stdin, capture_output=True, text=True, check=True, timeout=60)


def _one_reason(verdict: SafetyVerdict, needle: str) -> str:
    """The reason containing NEEDLE; fails listing all reasons when there is none."""
    found = [reason for reason in verdict.reasons if needle in reason]
    assert found, f"no reason contains {needle!r}; reasons: {verdict.reasons}"
    return found[0]


# ---------------------------------------------------------------------------------------------
# files, directories, missing paths, character devices (no root needed)


def test_regular_file_is_allowed(tmp_path: Path) -> None:
    scratch = tmp_path / "fio.scratch"
    scratch.write_bytes(b"\0" * 8192)
    verdict = check_write_target(str(scratch))
    assert verdict == SafetyVerdict(target=str(scratch), allowed=True, reasons=[], devices=[])


def test_directory_and_new_file_are_allowed(tmp_path: Path) -> None:
    assert check_write_target(str(tmp_path)).allowed
    assert check_write_target(str(tmp_path / "not-yet")).allowed


def test_missing_name_under_dev_is_refused() -> None:
    verdict = check_write_target("/dev/racperf-no-such-disk")
    assert not verdict.allowed
    assert verdict.reasons[0].startswith("/dev/racperf-no-such-disk: no such device; ")
    assert verdict.reasons[0].endswith(
        "(a write would create a regular file in /dev, in memory, instead of reaching a disk)"
    )
    read = check_read_target("/dev/racperf-no-such-disk")
    assert not read.allowed and read.reasons[0].startswith("/dev/racperf-no-such-disk: no such device; ")


def test_reads_of_what_exists_are_allowed(tmp_path: Path) -> None:
    """Reading cannot destroy data: files, directories, /dev/null, a missing file outside /dev,
    and a new file in a file system mounted under /dev (/dev/shm holds files by design)."""
    (tmp_path / "f").write_bytes(b"x")
    for path in (str(tmp_path / "f"), str(tmp_path), "/dev/null", str(tmp_path / "missing")):
        assert check_read_target(path) == SafetyVerdict(target=path, allowed=True)
    if os.path.ismount("/dev/shm"):
        assert check_read_target("/dev/shm/racperf-scratch").allowed
        assert check_write_target("/dev/shm/racperf-scratch").allowed


def test_dev_null_allowed() -> None:
    assert check_write_target("/dev/null").allowed


def test_file_with_asm_header_is_refused(tmp_path: Path) -> None:
    """ASM disks kept as files (ASM on NFS) carry the same header."""
    asm_file = make_sparse_image(tmp_path / "asm_disk1", 4)
    write_at(asm_file, 32, b"ORCLDISK")
    verdict = check_write_target(str(asm_file))
    assert not verdict.allowed
    assert _one_reason(verdict, "ORCLDISK at byte 32").startswith(str(asm_file))


def test_file_open_in_another_process_is_refused(tmp_path: Path) -> None:
    datafile = tmp_path / "system01.dbf"
    datafile.write_bytes(b"\0" * 4096)
    with _holding_open(str(datafile)) as pid:
        verdict = check_write_target(str(datafile))
    assert not verdict.allowed
    assert f"held open by process {pid} (" in _one_reason(verdict, "held open")


def test_override_matches_path_and_kernel_name() -> None:
    verdict = SafetyVerdict(
        target="/tmp/mydisk", allowed=False, reasons=["x"], devices=["loop3 (7:3)"], kernel_name="loop3"
    )
    assert override_matches(verdict, "loop3")
    assert override_matches(verdict, " /dev/loop3 ")
    assert override_matches(verdict, "/tmp/mydisk")
    assert not override_matches(verdict, "loop")
    assert not override_matches(verdict, "/dev/loop30")
    assert not override_matches(verdict, "")
    assert not override_matches(verdict, "yes")


def test_explain_lists_every_reason() -> None:
    verdict = SafetyVerdict(
        target="/dev/loop3",
        allowed=False,
        reasons=["first one", "second one"],
        devices=["loop3 (7:3)"],
        kernel_name="loop3",
    )
    text = explain(verdict)
    assert text.splitlines()[0] == "refusing to write to /dev/loop3:"
    assert "  - first one" in text and "  - second one" in text and "loop3 (7:3)" in text
    assert explain(SafetyVerdict(target="/tmp/x", allowed=True)) == ""


# ---------------------------------------------------------------------------------------------
# helpers for the loop-device tests


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[LoopDevice]:
    """A blank 64 MiB loop device."""
    with loop_device(tmp_path / "blank.img", 64) as device:
        yield device


@contextlib.contextmanager
def _holding_open(path: str) -> Iterator[int]:
    """Another process holding PATH open read-only, until the block ends; yields its pid."""
    code = f"import os, sys, time\nfd = os.open({path!r}, os.O_RDONLY)\nprint('ready', flush=True)\nsys.stdin.read()\n"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        yield child.pid
    finally:
        child.kill()
        child.wait(timeout=10)


# ---------------------------------------------------------------------------------------------
# signatures: each planted (or made by the real tool) in an image, then attached


def _plant_asm_primary(image: Path) -> None:
    write_at(image, 32, b"ORCLDISK")
    write_at(image, 0x48, b"DATA_0000")
    write_at(image, 0x68, b"DATA")


def _plant_asm_backup(au_bytes: int) -> Callable[[Path], None]:
    def plant(image: Path) -> None:
        write_at(image, 2 * au_bytes - 8192 + 32, b"ORCLDISK")

    return plant


def _mkfs_xfs_or_magic(image: Path) -> None:
    if shutil.which("mkfs.xfs"):
        _run(["mkfs.xfs", "-q", "-f", str(image)])
    else:
        write_at(image, 0, b"XFSB")


def _plant_lvm2(image: Path) -> None:
    write_at(image, 512, b"LABELONE")
    write_at(image, 512 + 24, b"LVM2 001")


def _gpt_then_wipe_primary(image: Path) -> None:
    _run(["sfdisk", "--quiet", str(image)], stdin="label: gpt\n,16M\n")
    write_at(image, 0, b"\0" * (34 * 512))


def _plant_md(offset_of_size: Callable[[int], int]) -> Callable[[Path], None]:
    def plant(image: Path) -> None:
        write_at(image, offset_of_size(image.stat().st_size), (0xA92B4EFC).to_bytes(4, "little"))

    return plant


SIGNATURES: list[tuple[str, int, Callable[[Path], None], str]] = [
    # (case id, image MiB, how to make it, text the reason must contain)
    (
        "asm-primary",
        16,
        _plant_asm_primary,
        "carries an Oracle ASM disk header (ORCLDISK at byte 32) (disk DATA_0000 of diskgroup DATA)",
    ),
    (
        "asm-backup-1MiB-AU",
        16,
        _plant_asm_backup(1 * MIB),
        "ASM backup disk header (ORCLDISK at byte 2088992: allocation unit 1, block 254, for 1 MiB",
    ),
    (
        "asm-backup-4MiB-AU",
        16,
        _plant_asm_backup(4 * MIB),
        "ASM backup disk header (ORCLDISK at byte 8380448: allocation unit 1, block 1022, for 4 MiB",
    ),
    (
        "ext4",
        64,
        lambda image: _run(["mkfs.ext4", "-q", "-F", str(image)]),
        "carries an ext2/3/4 file system (magic 0xEF53 at byte 1080)",
    ),
    ("xfs", 320, _mkfs_xfs_or_magic, "carries an XFS file system (XFSB at byte 0)"),
    ("btrfs", 16, lambda image: write_at(image, 65600, b"_BHRfS_M"), "btrfs file system (_BHRfS_M at byte 65600)"),
    ("lvm2", 16, _plant_lvm2, "carries an LVM2 physical volume label (LABELONE in sector 1, type 'LVM2 001')"),
    (
        "gpt",
        32,
        lambda image: _run(["sfdisk", "--quiet", str(image)], stdin="label: gpt\n,16M\n"),
        "carries a GPT partition table (EFI PART at byte 512",
    ),
    (
        "gpt-backup-only",
        32,
        _gpt_then_wipe_primary,
        f"carries a backup GPT header (EFI PART in its last 512-byte sector, at byte {32 * MIB - 512})",
    ),
    (
        "mbr",
        32,
        lambda image: _run(["sfdisk", "--quiet", str(image)], stdin="label: dos\n,16M,83\n"),
        "carries an MBR (DOS) partition table (0x55AA at byte 510; partition 1 of type 0x83)",
    ),
    (
        "swap",
        16,
        lambda image: _run(["mkswap", "-q", str(image)]),
        "carries a swap signature (SWAPSPACE2 at byte 4086, 4 KiB pages)",
    ),
    (
        "swap-64k-pages",
        16,
        lambda image: write_at(image, 65536 - 10, b"SWAPSPACE2"),
        "carries a swap signature (SWAPSPACE2 at byte 65526, 64 KiB pages)",
    ),
    (
        "ocfs2",
        16,
        lambda image: write_at(image, 8192, b"OCFSV2"),
        "carries an OCFS2 file system (OCFSV2 superblock at byte 8192, block 2 of 4096-byte blocks)",
    ),
    ("md-1.2", 16, _plant_md(lambda size: 4096), "md RAID superblock (magic 0xA92B4EFC at byte 4096, metadata 1.2)"),
    ("md-1.1", 16, _plant_md(lambda size: 0), "md RAID superblock (magic 0xA92B4EFC at byte 0, metadata 1.1)"),
    (
        "md-1.0",
        16,
        _plant_md(lambda size: (size - 8192) & ~4095),
        f"md RAID superblock (magic 0xA92B4EFC at byte {16 * MIB - 8192}, metadata 1.0)",
    ),
    (
        "md-0.90",
        16,
        _plant_md(lambda size: (size & ~65535) - 65536),
        f"md RAID superblock (magic 0xA92B4EFC at byte {16 * MIB - 65536}, metadata 0.90)",
    ),
]


@needs_loop
@pytest.mark.parametrize(
    ("size_mib", "make", "expected"), [case[1:] for case in SIGNATURES], ids=[case[0] for case in SIGNATURES]
)
def test_signature_refused(tmp_path: Path, size_mib: int, make: Callable[[Path], None], expected: str) -> None:
    image = make_sparse_image(tmp_path / "disk.img", size_mib)
    make(image)
    with loop_device(image) as device:
        verdict = check_write_target(device.path)
    assert not verdict.allowed
    reason = _one_reason(verdict, expected)
    assert reason.startswith(f"{device.path} ({device.major}:{device.minor}) carries")
    assert verdict.kernel_name == device.name
    assert verdict.devices[0] == f"{device.name} ({device.major}:{device.minor})"
    if "GPT" in expected:  # the protective MBR of a GPT disk is not reported twice
        assert not any("MBR" in r for r in verdict.reasons)


@needs_loop
def test_blank_device_allowed(loop: LoopDevice) -> None:
    verdict = check_write_target(loop.path)
    assert verdict.allowed, verdict.reasons
    assert verdict.reasons == []
    assert verdict.devices == [f"{loop.name} ({loop.major}:{loop.minor})"]
    assert verdict.kernel_name == loop.name


@needs_loop
def test_boot_signature_with_empty_partition_table_allowed(tmp_path: Path) -> None:
    """0x55AA alone, with four zero entries, is no partition table: no false positive."""
    image = make_sparse_image(tmp_path / "disk.img", 16)
    write_at(image, 510, b"\x55\xaa")
    with loop_device(image) as device:
        verdict = check_write_target(device.path)
        for _ in range(20):
            # another test's losetup (the other worker) may hold the new device open for a
            # moment: the guard is right to refuse that, and it is no partition-table verdict
            if verdict.allowed or not all("(losetup)" in reason for reason in verdict.reasons):
                break
            time.sleep(0.1)
            verdict = check_write_target(device.path)
    assert verdict.allowed, verdict.reasons


# ---------------------------------------------------------------------------------------------
# in use: mounted, swap, open, partitions, holders


@needs_loop
def test_mounted_device_refused_through_symlink(tmp_path: Path) -> None:
    """fio compares paths, so a symlink to a mounted device gets past it; we compare numbers."""
    image = make_sparse_image(tmp_path / "disk.img", 64)
    _run(["mkfs.ext4", "-q", "-F", str(image)])
    with loop_device(image) as device, mounted(device.path, tmp_path / "mnt") as mount_point:
        link = tmp_path / "innocent-looking-name"
        link.symlink_to(device.path)
        verdict = check_write_target(str(link))
        direct = check_write_target(device.path)
    assert not verdict.allowed and not direct.allowed
    assert verdict.kernel_name == device.name
    reason = _one_reason(verdict, "is mounted on")
    assert reason == f"{link} ({device.name}, {device.major}:{device.minor}) is mounted on {mount_point}"
    assert (
        _one_reason(direct, "is mounted on")
        == f"{device.path} ({device.major}:{device.minor}) is mounted on {mount_point}"
    )
    assert override_matches(verdict, device.name) and override_matches(verdict, str(link))


@needs_loop
def test_mounted_in_another_mount_namespace_refused(tmp_path: Path) -> None:
    """A container's mount is not in our mountinfo; the kernel's exclusive-open claim still is."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare not installed")
    image = make_sparse_image(tmp_path / "disk.img", 64)
    _run(["mkfs.ext4", "-q", "-F", str(image)])
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    with loop_device(image) as device:
        script = f"mount --make-rprivate / && mount {device.path} {mount_point} && echo ready && read line"
        holder = subprocess.Popen(
            ["unshare", "--mount", "sh", "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            if holder.stdout.readline().strip() != "ready":
                pytest.skip(f"cannot mount in a new mount namespace here: {holder.stderr.read()[:120]}")
            assert str(mount_point) not in Path("/proc/self/mountinfo").read_text()
            verdict = check_write_target(device.path)
        finally:
            holder.kill()
            holder.wait(timeout=10)
    assert not verdict.allowed
    assert _one_reason(verdict, "exclusive open fails with EBUSY").startswith(
        f"{device.path} ({device.major}:{device.minor}) is claimed by the kernel"
    )


@needs_loop
def test_swap_device_refused(loop: LoopDevice) -> None:
    try:
        with swap_on(loop.path):
            verdict = check_write_target(loop.path)
    except RuntimeError as exc:
        pytest.skip(f"swapon not permitted here: {exc}")
    assert not verdict.allowed
    assert _one_reason(verdict, "in use as swap") == (
        f"{loop.path} ({loop.major}:{loop.minor}) is in use as swap ({loop.path} in /proc/swaps)"
    )


@needs_loop
def test_device_held_open_by_another_process_refused(loop: LoopDevice) -> None:
    with _holding_open(loop.path) as pid:
        verdict = check_write_target(loop.path)
    assert not verdict.allowed
    reason = _one_reason(verdict, "held open by process")
    assert reason.startswith(f"{loop.path} ({loop.major}:{loop.minor}) is held open by process {pid} (")
    assert "python" in reason
    # once the other process is gone the device is free again
    assert check_write_target(loop.path).allowed


@needs_loop
@pytest.mark.root
def test_device_held_open_through_a_node_outside_dev_refused(tmp_path: Path, loop: LoopDevice) -> None:
    """The holder opened its own node (mknod /tmp/n b 7 5), not the /dev one: found by number."""
    node = tmp_path / "n"
    os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(loop.major, loop.minor))
    with _holding_open(str(node)) as pid:
        assert os.readlink(f"/proc/{pid}/fd/3") == str(node)
        verdict = check_write_target(loop.path)
    assert not verdict.allowed
    assert _one_reason(verdict, "held open by process").startswith(
        f"{loop.path} ({loop.major}:{loop.minor}) is held open by process {pid} ("
    )


def test_mount_table_types_by_id_and_path(tmp_path: Path) -> None:
    """A recorded mountinfo: ids and paths map to types; NFS, FUSE and cluster types may hang."""
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "mountinfo").write_text(
        "21 1 8:1 / / rw shared:1 - ext4 /dev/sda1 rw\n"
        "22 21 0:5 / /dev rw shared:2 - devtmpfs udev rw\n"
        "40 21 0:40 / /u02/nfs\\040data rw shared:9 - nfs4 filer:/vol rw\n"
        "41 21 0:41 / /mnt/ssh rw shared:10 - fuse.sshfs me@host:/ rw\n"
    )
    table = MountTable(tmp_path / "proc")
    assert table.fs_type_of_mount(22, "self") == "devtmpfs"
    assert table.fs_type_of_mount(99, "self") is None
    assert table.fs_type_of_path("/u02/nfs data/system01.dbf") == "nfs4"
    assert table.fs_type_of_path("/u02/nfs") == "ext4"
    assert table.fs_type_of_path("/dev/loop5") == "devtmpfs"
    assert [may_hang(t) for t in ("nfs4", "fuse.sshfs", "acfs", "ext4", "devtmpfs", "tmpfs")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


@needs_loop
def test_mounted_partition_refuses_whole_disk_not_its_sibling(tmp_path: Path) -> None:
    table = "label: dos\n,24M,83\n,,83\n"
    with loop_device(tmp_path / "disk.img", 64, partition_table=table, partition_count=2) as device:
        part1, part2 = device.partition_path(1), device.partition_path(2)
        _run(["mkfs.ext4", "-q", "-F", part1])
        with mounted(part1, tmp_path / "mnt") as mount_point:
            whole = check_write_target(device.path)
            first = check_write_target(part1)
            sibling = check_write_target(part2)
    assert not whole.allowed
    reason = _one_reason(whole, "its partition")
    assert reason.startswith(f"{device.path} ({device.major}:{device.minor}): its partition {device.name}p1 (")
    assert reason.endswith(f"is mounted on {mount_point}")
    assert f"{device.name}p1 (" in " ".join(whole.devices) and f"{device.name}p2 (" in " ".join(whole.devices)
    assert not first.allowed and _one_reason(first, f"is mounted on {mount_point}")
    # writing partition 2 cannot hurt partition 1: allowed, and the parent disk was examined
    assert sibling.allowed, sibling.reasons
    assert sibling.devices[1] == f"{device.name} ({device.major}:{device.minor})"


@needs_loop
def test_device_mapper_holder_refused(tmp_path: Path, loop: LoopDevice) -> None:
    """A real dm linear target stacked on the loop device, where the kernel has device-mapper."""
    if shutil.which("dmsetup") is None:
        pytest.skip("dmsetup not installed")
    name = f"racperf-test-{os.getpid()}"
    sectors = 64 * MIB // 512
    created = subprocess.run(
        ["dmsetup", "create", name, "--table", f"0 {sectors} linear {loop.path} 0"], capture_output=True, text=True
    )
    if created.returncode != 0:
        pytest.skip(f"device-mapper not available in this kernel: {created.stderr.strip()[:120]}")
    try:
        verdict = check_write_target(loop.path)
    finally:
        subprocess.run(["dmsetup", "remove", "--retry", name], capture_output=True)
    assert not verdict.allowed
    assert f'device-mapper "{name}"' in _one_reason(verdict, "is in use by dm-")


@needs_loop
def test_holders_replayed_from_recorded_sysfs(tmp_path: Path, loop: LoopDevice) -> None:
    """The holder walk on a recorded sysfs/proc layout (multipath on the disk, an LV mounted on
    top of it), for kernels here without device-mapper: holders recursive, names from dm/name."""
    root = tmp_path / "root"
    devices = root / "sys" / "devices" / "virtual" / "block"
    loop_dir = devices / loop.name
    mpath_dir, lv_dir = devices / "dm-7", devices / "dm-8"
    for directory, devno, dm_name, dm_uuid in (
        (loop_dir, f"{loop.major}:{loop.minor}", None, None),
        (mpath_dir, "253:7", "mpatha", "mpath-36000c29aa"),
        (lv_dir, "253:8", "vg01-u01", "LVM-abc"),
    ):
        (directory / "holders").mkdir(parents=True)
        (directory / "dev").write_text(devno + "\n")
        if dm_name:
            (directory / "dm").mkdir()
            (directory / "dm" / "name").write_text(dm_name + "\n")
            (directory / "dm" / "uuid").write_text(dm_uuid + "\n")
    (loop_dir / "holders" / "dm-7").symlink_to("../../dm-7")
    (mpath_dir / "holders" / "dm-8").symlink_to("../../dm-8")
    by_number = root / "sys" / "dev" / "block"
    by_number.mkdir(parents=True)
    (by_number / f"{loop.major}:{loop.minor}").symlink_to(f"../../devices/virtual/block/{loop.name}")
    (root / "proc" / "self").mkdir(parents=True)
    (root / "proc" / "self" / "mountinfo").write_text(
        "29 1 253:8 / /u01\\040data rw,relatime shared:1 - xfs /dev/mapper/vg01-u01 rw\n"
    )
    (root / "proc" / "swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n")

    verdict = check_write_target(loop.path, root=root)
    assert not verdict.allowed
    prefix = f"{loop.path} ({loop.major}:{loop.minor})"
    assert verdict.reasons[0] == (
        f'{prefix} is in use by dm-7 (253:7, multipath "mpatha"): writing underneath '
        "a device-mapper/multipath/md device corrupts what it holds"
    )
    assert verdict.reasons[1].startswith(
        f'{prefix} is in use by dm-8 (253:8, LVM logical volume "vg01-u01") through dm-7 (253:7)'
    )
    assert _one_reason(verdict, "is mounted on /u01 data").startswith(
        f'{prefix}: dm-8 (253:8, LVM logical volume "vg01-u01"), which is stacked on it'
    )
    assert verdict.devices == [f"{loop.name} ({loop.major}:{loop.minor})", "dm-7 (253:7)", "dm-8 (253:8)"]


def _label(device: LoopDevice) -> str:
    return f"{device.name} ({device.major}:{device.minor})"


@needs_loop
@pytest.mark.root
def test_mounted_loop_stacked_on_the_device_refused(tmp_path: Path, loop: LoopDevice) -> None:
    """losetup -o 1M /dev/loopB /dev/loopA, loopB mounted: not in holders/, and an exclusive
    open of loopA still succeeds; only loopB's loop/backing_file tells."""
    with stacked_loop(loop.path, MIB) as upper:
        _run(["mkfs.ext4", "-q", "-F", upper.path])
        with mounted(upper.path, tmp_path / "mnt") as mount_point:
            assert os.listdir(f"/sys/block/{loop.name}/holders") == []
            verdict = check_write_target(loop.path)
    assert not verdict.allowed
    prefix = f"{loop.path} ({loop.major}:{loop.minor})"
    described = f"{_label(upper)[:-1]}, loop device backed by {loop.path} from byte {MIB})"
    assert _one_reason(verdict, "is in use by") == (
        f"{prefix} is in use by {described}: writing underneath a loop device corrupts what it holds"
    )
    assert _one_reason(verdict, "is mounted on") == (
        f"{prefix}: {described}, which is stacked on it is mounted on {mount_point}"
    )
    assert verdict.devices == [_label(loop), _label(upper)]


@needs_loop
@pytest.mark.root
def test_loops_stacked_twice_are_followed(loop: LoopDevice) -> None:
    """loopC on loopB on loopA, loopC held open by a process: that counts against loopA."""
    with (
        stacked_loop(loop.path, MIB) as middle,
        stacked_loop(middle.path, 2 * MIB) as top,
        _holding_open(top.path) as pid,
    ):
        verdict = check_write_target(loop.path)
    assert not verdict.allowed
    prefix = f"{loop.path} ({loop.major}:{loop.minor})"
    top_described = f"{_label(top)[:-1]}, loop device backed by {middle.path} from byte {2 * MIB})"
    assert _one_reason(verdict, f"is in use by {top.name}") == (
        f"{prefix} is in use by {top_described} through {_label(middle)}: writing underneath a loop "
        "device corrupts what it holds"
    )
    assert _one_reason(verdict, "held open by process").startswith(
        f"{prefix}: {top_described}, which is stacked on it is held open by process {pid} ("
    )
    assert verdict.devices == [_label(loop), _label(middle), _label(top)]


@needs_loop
@pytest.mark.root
def test_loop_on_a_mounted_device_refused(tmp_path: Path) -> None:
    """Writing a loop device writes the device under it: loopB over a mounted loopA at 1 MiB
    carries no signature of its own, yet writing it corrupts loopA's file system."""
    image = make_sparse_image(tmp_path / "disk.img", 64)
    _run(["mkfs.ext4", "-q", "-F", str(image)])
    with (
        loop_device(image) as lower,
        mounted(lower.path, tmp_path / "mnt") as mount_point,
        stacked_loop(lower.path, MIB) as upper,
    ):
        verdict = check_write_target(upper.path)
        lower_free = check_write_target(lower.path)
    assert not verdict.allowed
    assert _one_reason(verdict, "is mounted on") == (
        f"{upper.path} ({upper.major}:{upper.minor}): the device it is a loop device on, "
        f"{_label(lower)} (from byte {MIB}) is mounted on {mount_point}"
    )
    assert not any("carries" in reason for reason in verdict.reasons)
    assert not lower_free.allowed  # mounted, and a loop device sits on it


@contextlib.contextmanager
def _dev_link(path: str, target: str) -> Iterator[str]:
    """A symlink at PATH (in /dev: the udev-style name of a test device), removed afterwards."""
    os.symlink(target, path)
    try:
        yield path
    finally:
        os.unlink(path)


@needs_loop
@pytest.mark.root
def test_mistyped_mapper_name_suggests_the_real_one(loop: LoopDevice) -> None:
    if not os.path.isdir("/dev/mapper"):
        pytest.skip("no /dev/mapper here")
    name = f"racperf{os.getpid()}-test1"
    with _dev_link(f"/dev/mapper/{name}", loop.path):
        typo = f"/dev/mapper/racperf{os.getpid()}-tset1"
        write = check_write_target(typo)
        read = check_read_target(typo)
    assert not write.allowed and not read.allowed
    assert read.reasons == [f"{typo}: no such device; did you mean /dev/mapper/{name}?"]
    assert write.reasons == [
        f"{typo}: no such device; did you mean /dev/mapper/{name}? (a write would "
        "create a regular file in /dev/mapper, in memory, instead of reaching a disk)"
    ]


@needs_loop
def test_missing_directory_under_dev_suggests_by_name(loop: LoopDevice) -> None:
    """/dev/mappr/loopN: the directory is mistyped; the device's own name still leads to it."""
    typo = f"/dev/racperf-no-dir/{loop.name}"
    for verdict in (check_write_target(typo), check_read_target(typo)):
        assert not verdict.allowed
        reason = verdict.reasons[0]
        assert reason.startswith(f"{typo}: no such device (no directory /dev/racperf-no-dir); did you mean {loop.path}")
        assert len(reason.split("did you mean ")[1].split(", ")) <= 5


@needs_loop
def test_close_names_rank_the_closest_first(loop: LoopDevice) -> None:
    typo = f"/dev/{loop.name[:2]}{loop.name[3]}{loop.name[2]}{loop.name[4:]}"  # loop3 -> lopo3
    reason = check_read_target(typo).reasons[0]
    suggested = reason.split("did you mean ")[1].rstrip("?").split(", ")
    assert suggested[0] == loop.path
    assert 1 <= len(suggested) <= 5 and all(os.path.exists(p) for p in suggested)


@needs_loop
def test_unprivileged_check_fails_safe(loop: LoopDevice) -> None:
    """Without root the guard can neither read the device nor see every process: it refuses
    and says why, rather than allowing what it could not check."""
    code = (
        "import json, os, sys\n"
        "from racperf_tui.core.guard.safety import check_write_target\n"  # before: nobody can't read the venv
        "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
        f"print(json.dumps(check_write_target({loop.path!r}).reasons))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, cwd=REPO)
    assert done.returncode == 0, done.stderr
    reasons = json.loads(done.stdout)
    assert any(
        r.startswith(f"{loop.path} ({loop.major}:{loop.minor}) could not be read to look for signatures")
        for r in reasons
    ), reasons
    assert any("processes were not readable (run as root)" in r for r in reasons), reasons


@needs_loop
def test_backing_file_of_loop_device_refused(loop: LoopDevice) -> None:
    verdict = check_write_target(str(loop.image))
    assert not verdict.allowed
    assert _one_reason(verdict, "backing file") == (
        f"{loop.image} is the backing file of loop device {loop.name} ({loop.major}:{loop.minor}); "
        "writing it writes that device"
    )


# ---------------------------------------------------------------------------------------------
# the guard itself never writes


def _write_ios(device: LoopDevice) -> int:
    """Completed write I/Os of the device, from its sysfs stat (5th field)."""
    return int(Path(f"/sys/block/{device.name}/stat").read_text().split()[4])


@needs_loop
def test_check_never_writes(tmp_path: Path) -> None:
    image = make_sparse_image(tmp_path / "disk.img", 16)
    _plant_asm_primary(image)
    _plant_lvm2(image)
    write_at(image, 16 * MIB - 512, b"EFI PART")
    before = _sha256(image)
    with loop_device(image) as device:
        writes_before = _write_ios(device)
        for _ in range(3):
            assert not check_write_target(device.path).allowed
        os.sync()
        writes_after = _write_ios(device)
    assert writes_after == writes_before
    assert _sha256(image) == before


# ---------------------------------------------------------------------------------------------
# racperf check-target


def _check_target_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "racperf_tui", "check-target", *args], capture_output=True, text=True, timeout=60
    )


def test_cli_allows_a_file(tmp_path: Path) -> None:
    done = _check_target_cli(str(tmp_path / "scratch"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{tmp_path / 'scratch'}: may be written\n"


@needs_loop
def test_cli_refuses_with_exit_3_and_json(tmp_path: Path) -> None:
    image = make_sparse_image(tmp_path / "disk.img", 16)
    write_at(image, 8192, b"OCFSV2")
    with loop_device(image) as device:
        done = _check_target_cli("--json", device.path, str(tmp_path))
    assert done.returncode == 3, done.stderr
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first["target"] == device.path and first["allowed"] is False
    assert first["kernel_name"] == device.name
    assert any("OCFS2" in reason for reason in first["reasons"])
    assert second == {"target": str(tmp_path), "allowed": True, "reasons": [], "devices": [], "kernel_name": None}
