"""The write watch on real loop devices and real processes: found by number whatever node was
opened, only for writing, only when not cleared."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopdev import LoopDevice, loop_device, needs_loop, write_at
from racperf_tui.core.write_watch import Violation, WriteWatch

pytestmark = [pytest.mark.timeout(60), pytest.mark.root, needs_loop]

MIB = 1 << 20


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(MIB), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _devno(device: LoopDevice) -> tuple[int, int]:
    return (device.major, device.minor)


@pytest.fixture
def cleared(tmp_path: Path) -> Iterator[LoopDevice]:
    with loop_device(tmp_path / "cleared.img", 8) as device:
        yield device


@pytest.fixture
def uncleared(tmp_path: Path) -> Iterator[LoopDevice]:
    image = tmp_path / "uncleared.img"
    with loop_device(image, 8) as device:
        write_at(image, 0, b"precious data..." * 4096)
        yield device


@contextlib.contextmanager
def _holder(path: str, flags: str) -> Iterator[tuple[int, int]]:
    """Another process holding PATH open with FLAGS ("os.O_RDONLY"...); yields (pid, fd)."""
    code = f"import os, sys\nfd = os.open({path!r}, {flags})\nprint(fd, flush=True)\nsys.stdin.read()\n"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        yield child.pid, int(child.stdout.readline())
    finally:
        child.kill()
        child.wait(timeout=10)


def test_only_uncleared_devices_open_for_writing_count(tmp_path: Path, cleared: LoopDevice,
                                                        uncleared: LoopDevice) -> None:
    node = tmp_path / "n"  # the uncleared device through a node outside /dev
    os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(uncleared.major, uncleared.minor))
    watch = WriteWatch({_devno(cleared)})
    with _holder(cleared.path, "os.O_RDWR") as writes_cleared, \
            _holder(uncleared.path, "os.O_RDONLY") as reads_uncleared, \
            _holder(str(node), "os.O_WRONLY") as writes_uncleared, \
            _holder(str(tmp_path / "f"), "os.O_RDWR | os.O_CREAT") as writes_a_file:
        pids = [writes_cleared[0], reads_uncleared[0], writes_uncleared[0], writes_a_file[0], 999999999]
        found = watch.check(pids)
        assert found == [Violation(pid=writes_uncleared[0], comm="python", fd=writes_uncleared[1],
                                   path=str(node), major=uncleared.major, minor=uncleared.minor)]
        assert str(found[0]) == (f"python (pid {writes_uncleared[0]}) opened {node} "
                                 f"({uncleared.major}:{uncleared.minor}) for writing, which the write guard "
                                 "did not clear")
        assert WriteWatch({_devno(cleared), _devno(uncleared)}).check(pids) == []
    watch.close()


def test_a_mount_made_meanwhile_is_seen(tmp_path: Path, uncleared: LoopDevice) -> None:
    """The watch keeps its mount table only until mountinfo changes: a tmpfs mounted after the
    first check, holding a node of the uncleared device, is still looked into."""
    watch = WriteWatch(set())
    assert watch.check([os.getpid()]) == []
    mount_point = tmp_path / "late"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "racperf-late", str(mount_point)], check=True)
    try:
        node = mount_point / "disk"
        os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(uncleared.major, uncleared.minor))
        with _holder(str(node), "os.O_WRONLY") as (pid, _):
            assert [v.path for v in watch.check([pid])] == [str(node)]
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)
        watch.close()
