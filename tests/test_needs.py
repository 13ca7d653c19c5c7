"""The markers of what a test needs (tests/helpers/needs.py), derived by the real collection hook
of tests/conftest.py on a sample module, and the fast lane the Makefile selects with them: a
test gets a need from its fixtures, its skip markers and the helpers it calls, whatever their
names, and a pure test gets none. Only collected, never run: nothing heavy starts here."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.helpers import REPO

SAMPLE_CONFTEST = """
import os

from tests.conftest import pytest_collection_modifyitems, sshd  # noqa: F401  the real hook and fixture
from tests.helpers.needs import DERIVED


def _write(items, lane):
    with open(os.environ["NEEDS_OUT"], "a") as out:
        for item in items:
            names = sorted(mark.name for mark in item.iter_markers() if mark.name in DERIVED)
            out.write(f"{item.name} {','.join(names) or '-'} {lane}\\n")


def pytest_deselected(items):
    _write(items, "out")


def pytest_collection_finish(session):
    _write(session.items, "in")
"""

SAMPLE_TESTS = """
import pty
import subprocess

import pytest

from tests.helpers import needs_fio, racperf_cmd
from tests.helpers.loopdev import loop_device
from tests.helpers.sshd_helpers import start_sshd


RACPERF = racperf_cmd()


@pytest.fixture
def a_node(tmp_path):
    # a name that says nothing: what it calls says it needs an sshd
    server = start_sshd(tmp_path)
    yield server
    server.stop()


@pytest.fixture
def two_nodes(a_node):
    return [a_node, a_node]


def _image_on_a_loop(tmp_path):
    with loop_device(tmp_path / "disk.img", size_mib=8) as loop:
        return loop.path


def test_pure():
    assert sorted([2, 1]) == [1, 2]


def test_that_only_names_an_sshd():
    assert "start_sshd" != "sshd"


def test_with_the_sshd_fixture(sshd):
    pass


def test_with_an_own_node_fixture(two_nodes):
    pass


def test_through_a_module_helper(tmp_path):
    _image_on_a_loop(tmp_path)


@needs_fio
def test_skipped_without_fio():
    pass


def test_through_the_cli_constant():
    subprocess.run([*RACPERF, "runs"])


def test_on_a_pty():
    pid, fd = pty.fork()


class TestGrouped:
    def test_in_a_class(self, a_node):
        pass
"""


def _fast_lane_expression() -> str:
    match = re.search(r"^FAST_LANE := (.+)$", (REPO / "Makefile").read_text(), re.MULTILINE)
    assert match, "Makefile: no FAST_LANE line"
    return match.group(1).strip()


@dataclass(frozen=True)
class Collected:
    needs: dict[str, str]  # test name: its derived markers, or "-"
    fast_lane: list[str]  # the tests the Makefile's FAST_LANE selects


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Collected:
    """The sample module collected with the project's pytest configuration (its declared
    markers, strictly) and selected by the Makefile's FAST_LANE expression, in one process."""
    sample = tmp_path_factory.mktemp("sample")
    (sample / "conftest.py").write_text(SAMPLE_CONFTEST)
    (sample / "test_sample.py").write_text(SAMPLE_TESTS)
    out = sample / "needs.txt"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--strict-markers"]
        + ["-c", str(REPO / "pyproject.toml"), "--rootdir", str(sample), "--collect-only"]
        + ["-m", _fast_lane_expression(), str(sample / "test_sample.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=sample,
        env={"PYTHONPATH": str(REPO), "NEEDS_OUT": str(out), "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [line.split(" ") for line in out.read_text().splitlines()]
    return Collected({name: needs for name, needs, _ in rows}, [name for name, _, lane in rows if lane == "in"])


def test_needs_come_from_fixtures_skip_markers_and_helpers_whatever_their_names(collected: Collected) -> None:
    assert collected.needs == {
        "test_pure": "-",
        "test_that_only_names_an_sshd": "-",
        "test_with_the_sshd_fixture": "needs_sshd",
        "test_with_an_own_node_fixture": "needs_sshd",
        "test_through_a_module_helper": "needs_loop",
        "test_skipped_without_fio": "needs_fio",
        "test_through_the_cli_constant": "subprocess_cli",
        "test_on_a_pty": "pty_ui",
        "test_in_a_class": "needs_sshd",
    }


def test_the_fast_lane_of_the_makefile_holds_the_tests_that_need_nothing(collected: Collected) -> None:
    assert collected.fast_lane == ["test_pure", "test_that_only_names_an_sshd"]
