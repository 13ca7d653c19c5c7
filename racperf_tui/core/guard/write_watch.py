"""The write watch: which benchmark process has a block device open for writing that the
write guard did not clear?

The write guard (core/guard/safety.py) clears targets before a run; the device jail (core/guard/devjail.py)
hides every other device node under /dev.  The watch is the net under both while the run goes:
every quarter second the supervisor hands it the benchmark's pids, and it looks at what each
one has open, by device number, whatever path was used (a node made with mknod anywhere, a
device reached through /proc/PID/root).  A block device open with O_WRONLY or O_RDWR whose
major:minor is not in the cleared set is a :class:`Violation`; the supervisor then kills the
whole tree with SIGKILL.

It sees an open, not a write: a process that opens an uncleared device and writes at once can
land writes in the fraction of a second before the next check.  See docs/SAFETY-kernel-notes.md.

Per fd: a readlink, then for a path an fdinfo read (open flags and mount id, from procfs alone),
and only for a writable one a stat of the magic link, skipped when the file lives on a file
system that may hang (core/guard/openfds.py).  Measured on the 2-core development VM (Python 3.11,
kernel 6.18, load average ~4 from other jobs, where a stat of /dev/null took 2.2 µs): 250-270 µs
per fio process (~9 fds: /dev/null x4, pipes, a timerfd, the target open O_RDWR), 1.0-1.2 ms for
fio with three jobs (4 processes); at one check per 0.25 s that is 0.4 % of one core.  Most of
it is procfs (readlink and fdinfo), not the stat.  The supervisor's cheap pid walk
(/proc/PID/task/TID/children) replaces a full /proc scan, which took 3-5 ms here.
"""

from __future__ import annotations

import os
import select
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from racperf_tui.core.guard.openfds import MountTable, stat_open_fd


@dataclass(frozen=True)
class Violation:
    """A process holding an uncleared block device open for writing."""

    pid: int
    comm: str
    fd: int
    path: str  # as the process opened it (its magic link's text)
    major: int
    minor: int

    def __str__(self) -> str:
        return (
            f"{self.comm} (pid {self.pid}) opened {self.path} ({self.major}:{self.minor}) for "
            "writing, which the write guard did not clear"
        )


class WriteWatch:
    """Built with the block devices the write guard cleared, as (major, minor)."""

    def __init__(self, cleared: Iterable[tuple[int, int]], *, proc: Path = Path("/proc")) -> None:
        self.cleared = frozenset((int(major), int(minor)) for major, minor in cleared)
        self._proc = str(proc)
        self._mounts: MountTable | None = None
        self._mountinfo_fd: int | None = None
        self._poller = select.poll()

    def _mount_table(self) -> MountTable:
        # Mount ids are reused after an unmount, so a table is kept only until mountinfo says it
        # changed (POLLPRI), never across a mount or unmount.
        if self._mountinfo_fd is not None and self._poller.poll(0):
            self._poller.unregister(self._mountinfo_fd)
            os.close(self._mountinfo_fd)
            self._mountinfo_fd = None
            self._mounts = None
        if self._mounts is None:
            try:
                self._mountinfo_fd = os.open(f"{self._proc}/self/mountinfo", os.O_RDONLY | os.O_CLOEXEC)
                os.read(self._mountinfo_fd, 1 << 20)  # a change is signalled relative to a read
                self._poller.register(self._mountinfo_fd, select.POLLPRI | select.POLLERR)
            except OSError:
                self._mountinfo_fd = None
            self._mounts = MountTable(Path(self._proc))
        return self._mounts

    def check(self, pids: Iterable[int]) -> list[Violation]:
        """Violations among the open files of ``pids`` (gone pids are skipped)."""
        found: list[Violation] = []
        mounts = self._mount_table()
        for pid in pids:
            pid_text = str(pid)
            try:
                fds = [entry.name for entry in os.scandir(f"{self._proc}/{pid_text}/fd")]
            except OSError:
                continue
            for fd in fds:
                open_fd = stat_open_fd(self._proc, pid_text, fd, mounts, writable_only=True)
                if open_fd is None:
                    continue
                devno = open_fd.devno
                if devno is None or devno in self.cleared:
                    continue
                found.append(
                    Violation(
                        pid=pid,
                        comm=self._comm(pid_text),
                        fd=open_fd.fd,
                        path=open_fd.link,
                        major=devno[0],
                        minor=devno[1],
                    )
                )
        return found

    def _comm(self, pid: str) -> str:
        try:
            with open(f"{self._proc}/{pid}/comm", "rb") as handle:
                return handle.read().decode(errors="replace").strip() or "?"
        except OSError:
            return "?"

    def close(self) -> None:
        if self._mountinfo_fd is not None:
            self._poller.unregister(self._mountinfo_fd)
            os.close(self._mountinfo_fd)
            self._mountinfo_fd = None
        self._mounts = None
