"""A real ceiling for a block device: a blkio cgroup (v1) whose read IOPS on it are capped by
the kernel's throttle, and a command started inside it (its children, racperf's detached
supervisors and fio, inherit the cgroup).

Usage::

    with read_iops_capped(loop.major, loop.minor, 2000) as cgroup:
        subprocess.run(cmd, preexec_fn=cgroup.enter)
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

BLKIO = Path("/sys/fs/cgroup/blkio")


def blkio_throttle_available() -> bool:
    return os.geteuid() == 0 and (BLKIO / "blkio.throttle.read_iops_device").exists()


needs_blkio_throttle = pytest.mark.skipif(
    not blkio_throttle_available(), reason="needs root and the cgroup v1 blkio controller at /sys/fs/cgroup/blkio"
)


@dataclass(frozen=True)
class ThrottledCgroup:
    path: Path

    def enter(self) -> None:
        """Move the calling process into the cgroup (a subprocess's preexec_fn)."""
        (self.path / "cgroup.procs").write_text(f"{os.getpid()}\n")


@contextlib.contextmanager
def read_iops_capped(major: int, minor: int, iops: int) -> Iterator[ThrottledCgroup]:
    """A new blkio cgroup capping reads of MAJOR:MINOR at IOPS a second; removed on every path
    (whatever is still in it moved back to the root first)."""
    path = BLKIO / f"racperf-test-{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir()
    try:
        (path / "blkio.throttle.read_iops_device").write_text(f"{major}:{minor} {iops}\n")
        yield ThrottledCgroup(path)
    finally:
        for pid in (path / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (BLKIO / "cgroup.procs").write_text(f"{pid}\n")
        for _ in range(50):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.1)
