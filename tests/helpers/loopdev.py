"""Real loop devices on sparse image files, for tests that need a block device.

Usage::

    with loop_device(tmp_path / "disk.img", size_mib=64) as loop:
        ...  # loop.path == "/dev/loop3", loop.image, loop.major, loop.minor, loop.name

Everything is undone on every exit path: mounts made with ``mounted``, swap enabled with
``swap_on``, the loop device itself.  Only root can do this; guard tests with ``needs_loop``.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import reveals
from tests.helpers.blkio_throttle import blkio_throttle_available, read_iops_capped

#: every program this module and the loop device tests run: a machine with losetup but without
#: sfdisk (util-linux's fdisk package) stopped `make test-fast` in the middle instead of skipping
LOOP_TOOLS = ("losetup", "partx", "sfdisk", "mkfs.ext4", "mkswap", "swapon", "swapoff", "mount", "umount")


def loop_devices_missing() -> list[str]:
    """What a loop device test lacks here: root, /dev/loop-control, or one of LOOP_TOOLS."""
    missing = [] if os.geteuid() == 0 else ["root"]
    if not os.path.exists("/dev/loop-control"):
        missing.append("/dev/loop-control")
    return missing + [tool for tool in LOOP_TOOLS if shutil.which(tool) is None]


LOOP_MISSING = loop_devices_missing()
needs_loop = pytest.mark.skipif(
    bool(LOOP_MISSING),
    reason=f"loop devices need root, /dev/loop-control and {', '.join(LOOP_TOOLS)}; missing: {', '.join(LOOP_MISSING)}",
)


@dataclass(frozen=True)
class LoopDevice:
    """An attached loop device and the image behind it."""

    path: str  # "/dev/loop3"
    image: Path

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def major(self) -> int:
        return os.major(os.stat(self.path).st_rdev)

    @property
    def minor(self) -> int:
        return os.minor(os.stat(self.path).st_rdev)

    def partition_path(self, number: int) -> str:
        """The node of partition NUMBER ("/dev/loop3p1")."""
        return f"{self.path}p{number}"


def _run(argv: list[str], stdin: str | None = None) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def make_sparse_image(image: Path, size_mib: int) -> Path:
    """A sparse zero-filled file of SIZE_MIB MiB (no disk space used until written)."""
    with open(image, "wb") as handle:
        handle.truncate(size_mib << 20)
    return image


def write_at(image: Path, offset: int, data: bytes) -> None:
    """Write DATA at byte OFFSET of IMAGE (for planting signatures)."""
    with open(image, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def asm_file(path: Path, size_mib: int = 4) -> Path:
    """A sparse file carrying an Oracle ASM disk header (ASM on NFS): the guard refuses it."""
    make_sparse_image(path, size_mib)
    write_at(path, 32, b"ORCLDISK")
    return path


@reveals("needs_loop")
def attach(image: Path, *, partitions: bool = False, offset_bytes: int = 0, direct_io: bool = False) -> str:
    """losetup IMAGE on a free loop device; retried because other tests race for free ones."""
    argv = (
        ["losetup", "--find", "--show"]
        + (["--partscan"] if partitions else [])
        + (["--direct-io=on"] if direct_io else [])
        + (["--offset", str(offset_bytes)] if offset_bytes else [])
        + [str(image)]
    )
    last_error: Exception | None = None
    for _ in range(5):
        try:
            return _run(argv).strip()
        except RuntimeError as exc:
            last_error = exc
            time.sleep(0.1)
    raise RuntimeError(f"could not attach {image}: {last_error}")


def detach(path: str) -> None:
    """losetup -d, retried briefly: udev-less kernels may still be closing the device."""
    for _ in range(20):
        if subprocess.run(["losetup", "-d", path], capture_output=True).returncode == 0:
            return
        time.sleep(0.05)
    subprocess.run(["losetup", "-d", path], capture_output=True, check=False)


def _add_partitions(path: str, count: int) -> None:
    """Make sure the kernel created the partition nodes: some kernels here parse no partition
    tables by themselves, so ask with partx (BLKPG), as udev-less systems do."""
    if all(os.path.exists(f"{path}p{n}") for n in range(1, count + 1)):
        return
    subprocess.run(["partx", "--add", path], capture_output=True, check=False)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if all(os.path.exists(f"{path}p{n}") for n in range(1, count + 1)):
            return
        time.sleep(0.05)
    raise RuntimeError(f"partitions of {path} did not appear")


@contextlib.contextmanager
def loop_device(
    image: Path, size_mib: int = 64, *, partition_table: str | None = None, partition_count: int = 0
) -> Iterator[LoopDevice]:
    """Attach a loop device on a sparse image (created if missing); detach on every path.

    ``partition_table`` is an sfdisk script (e.g. "label: dos\\n,32M,83\\n"); with it the image
    is partitioned first and ``partition_count`` partition nodes are waited for.
    """
    if not image.exists():
        make_sparse_image(image, size_mib)
    if partition_table is not None:
        _run(["sfdisk", "--quiet", str(image)], stdin=partition_table)
    path = attach(image, partitions=partition_table is not None)
    try:
        if partition_count:
            _add_partitions(path, partition_count)
        yield LoopDevice(path=path, image=image)
    finally:
        detach(path)


@contextlib.contextmanager
def stacked_loop(backing: str, offset_bytes: int = 0, *, direct_io: bool = False) -> Iterator[LoopDevice]:
    """A loop device whose backing file is the block device BACKING (``losetup -o OFFSET
    /dev/loopN /dev/loopM``); its ``image`` is BACKING's path. ``direct_io``: its reads and
    writes reach BACKING as I/O (O_DIRECT), not through BACKING's page cache."""
    path = attach(Path(backing), offset_bytes=offset_bytes, direct_io=direct_io)
    try:
        yield LoopDevice(path=path, image=Path(backing))
    finally:
        detach(path)


needs_blkio_throttle = pytest.mark.skipif(
    bool(LOOP_MISSING) or not blkio_throttle_available(),
    reason="needs root, loop devices and the cgroup v1 blkio throttle",
)


@dataclass(frozen=True)
class ThrottledLoop:
    """A loop device with a real ceiling: ``device`` (direct I/O) is backed by another loop
    device that the blkio cgroup ``cgroup`` lets do at most ``iops`` reads a second. Requests
    of a process in ``cgroup`` wait on ``device`` (its avgqu-sz and await grow with the load,
    its IOPS stay at the ceiling), as on a disk that can do no more."""

    device: LoopDevice
    cgroup: Path
    iops: int

    def join(self) -> None:
        """Move the calling process into the throttled cgroup (a ``preexec_fn``)."""
        (self.cgroup / "cgroup.procs").write_text(str(os.getpid()))


@contextlib.contextmanager
def throttled_loop(image: Path, iops: int, size_mib: int = 128) -> Iterator[ThrottledLoop]:
    """A :class:`ThrottledLoop` on IMAGE; the cgroup and both loop devices go on every path."""
    with (
        loop_device(image, size_mib) as lower,
        stacked_loop(lower.path, direct_io=True) as upper,
        read_iops_capped(lower.major, lower.minor, iops) as cgroup,
    ):
        # a queue setting outlives the detach: the next user of this loop number gets it back
        nr_requests = Path("/sys/block") / upper.name / "queue" / "nr_requests"
        kept = nr_requests.read_text()
        try:
            yield ThrottledLoop(upper, cgroup.path, iops)
        finally:
            nr_requests.write_text(kept)


@contextlib.contextmanager
def mounted(device: str, mount_point: Path) -> Iterator[Path]:
    """Mount DEVICE on MOUNT_POINT (created); unmount on every path."""
    mount_point.mkdir(parents=True, exist_ok=True)
    _run(["mount", device, str(mount_point)])
    try:
        yield mount_point
    finally:
        if subprocess.run(["umount", str(mount_point)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, check=False)


@contextlib.contextmanager
def swap_on(device: str) -> Iterator[str]:
    """mkswap + swapon DEVICE; swapoff on every path."""
    _run(["mkswap", "-q", device])
    _run(["swapon", device])
    try:
        yield device
    finally:
        subprocess.run(["swapoff", device], capture_output=True, check=False)


def sha256_of(path: str | Path) -> str:
    """The checksum of what is on the disk of a device or file (a test's "nothing was written").

    Read with O_DIRECT where the file system allows it: an emulator writing with O_DIRECT into
    a file whose zero pages a buffered read cached before can leave those pages stale (seen on
    ext4), so a buffered checksum could miss a write."""
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:  # tmpfs and friends: no O_DIRECT, and no disk to be stale against
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    buffer = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT needs
    try:
        offset = 0
        while True:
            count = os.preadv(fd, [buffer], offset)
            if count <= 0:
                break
            digest.update(buffer[:count])
            offset += count
    finally:
        os.close(fd)
        buffer.close()
    return digest.hexdigest()


@contextlib.contextmanager
def ext4_loop_device(directory: Path, size_mib: int = 32) -> Iterator[str]:
    """A loop device carrying an ext4 file system (which the write guard refuses); its path."""
    image = make_sparse_image(directory / "ext4.img", size_mib)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    with loop_device(image) as loop:
        yield loop.path
