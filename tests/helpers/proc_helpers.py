"""Helpers for the process / supervisor tests: waiting on conditions, inspecting process
groups with psutil, and cleaning up whatever a failed test left behind."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import psutil

from tests.helpers import FAKES, REPO

FAKE_TOOL = "tests.fakes.faketool"
FAKE_BENCH = FAKES / "fakebench.py"

T = TypeVar("T")


def ensure_repo_importable() -> None:
    """``tests.fakes.faketool`` must import here and in every child we start."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(REPO) not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *parts])


def wait_until(condition: Callable[[], T], timeout_s: float, poll_s: float = 0.02, what: str = "") -> T:
    """Poll ``condition`` until truthy; AssertionError naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what or condition}")
        time.sleep(poll_s)


def live(pid: int) -> bool:
    """Alive and not a zombie (a zombie has finished; only its exit status remains)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def group_pids(pgid: int) -> list[int]:
    """Live members of a process group."""
    pids = []
    for proc in psutil.process_iter(["status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(proc.pid) == pgid:
                pids.append(proc.pid)
        except (ProcessLookupError, psutil.NoSuchProcess):
            pass
    return pids


def read_pidfile(path: Path, count: int, timeout_s: float = 10.0) -> list[int]:
    """The pids a fakebench wrote (itself first, then its grandchildren)."""

    def ready() -> list[int] | None:
        try:
            pids = [int(x) for x in path.read_text().split()]
        except (OSError, ValueError):
            return None
        return pids if len(pids) >= count else None

    return wait_until(ready, timeout_s, what=f"{count} pids in {path}")


def zombie_children() -> list[int]:
    """Our own children that exited and were never reaped."""
    return [c.pid for c in psutil.Process().children(recursive=False) if c.status() == psutil.STATUS_ZOMBIE]


def kill_group_quietly(pgid: int | None) -> None:
    """Test cleanup: SIGKILL a group that may well be gone already."""
    if pgid:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def kill_quietly(pid: int | None) -> None:
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
