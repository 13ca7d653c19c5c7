"""What the tests share, imported one way everywhere: ``from tests.helpers import FIXTURES``,
``from tests.helpers.loopdev import loop_device``. conftest.py holds only fixtures and hooks.

Here: the test tree's paths, the command that runs racperf's CLI, the skip markers of
tests that need root or fio, and ``reveals``, the tag of a helper that starts something heavy.
The modules beside this one: needs (the markers a test gets from its fixtures, its skip
markers and the helpers it calls; ``make test-fast`` selects by them), loopdev (loop devices,
images, checksums), fio_helpers (judged fio plans), pair_helpers (server/client pairs to their end),
sshd_helpers (a real OpenSSH sshd with throwaway keys), iostat_oracle and iostat_binary
(sysstat's iostat as the reference), dashboard_root (replayed /proc and /sys roots),
proc_helpers (waiting on and cleaning up processes), pilot_apps (the small apps the Pilot
tests drive, and their wait_until).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

TESTS_DIR = Path(__file__).resolve().parent.parent
FIXTURES = TESTS_DIR / "fixtures"
FAKES = TESTS_DIR / "fakes"
REPO = TESTS_DIR.parent

Helper = TypeVar("Helper")


def reveals(*markers: str) -> Callable[[Helper], Helper]:
    """Tag a helper that starts something heavy (an sshd, a loop device, a namespace): a test
    that calls it, itself or through its fixtures and their helpers, gets these markers
    (tests/helpers/needs.py), and ``make test-fast`` leaves it out."""

    def tag(helper: Helper) -> Helper:
        helper.reveals_needs = frozenset(markers)  # type: ignore[attr-defined]
        return helper

    return tag


@reveals("subprocess_cli")
def racperf_cmd() -> list[str]:
    """argv prefix that runs the racperf CLI with the interpreter running the tests."""
    return [sys.executable, "-m", "racperf_tui"]


def is_root() -> bool:
    return os.geteuid() == 0


needs_root = pytest.mark.skipif(not is_root(), reason="needs root")
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
#: Debian's chromium (the Makefile's APT_PACKAGES): a report rendered in a real browser
needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None, reason="chromium not installed (apt-get install chromium: make system-deps)"
)
