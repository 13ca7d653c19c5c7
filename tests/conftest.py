"""Shared fixtures. Real components everywhere they run here; see tests/fakes for the
emulators of tools that cannot be installed (ORION, oratcptest, netperf, sqlplus)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

# the namespace cluster fixtures (netns_cluster, netns_cluster_factory) for every test module
from tests.netns_helpers import netns_cluster, netns_cluster_factory  # noqa: F401

TESTS_DIR = Path(__file__).parent
FIXTURES = TESTS_DIR / "fixtures"
FAKES = TESTS_DIR / "fakes"
REPO = TESTS_DIR.parent


def racperf_cmd() -> list[str]:
    """argv prefix that runs the racperf CLI with the interpreter running the tests."""
    return [sys.executable, "-m", "racperf_tui"]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private store directory, also exported as RACPERF_DATA_DIR."""
    d = tmp_path / "data"
    d.mkdir()
    monkeypatch.setenv("RACPERF_DATA_DIR", str(d))
    return d


def is_root() -> bool:
    return os.geteuid() == 0


needs_root = pytest.mark.skipif(not is_root(), reason="needs root")
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")


#: modules whose tests run real benchmarks, UIs on a pty or sysstat's binary for seconds each:
#: `make test-fast` (-m "not slow") leaves them out; `make test` runs everything
SLOW_MODULES = frozenset(
    {
        "test_ui_kill9",
        "test_iostat_vs_sysstat",
        "test_write_guard_bypasses",
        "test_fio_live",
        "test_run_hangup",
        "test_runs_ui",
        "test_network_panel",
        "test_pair_runs",
        "test_devjail",
        "test_write_watch",
        "test_runs_ui_snapshot",
        "test_dashboard_snapshot",
        "test_oratcptest",
        "test_netperf",
        "test_iperf3",
        "test_orion_runs",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.module is not None and item.module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def sshd(tmp_path: Path):
    """A real OpenSSH sshd on 127.0.0.1 (random high port) with throwaway host and user keys
    and a known_hosts file holding its host key (tests/sshd_helpers.py); stopped at teardown."""
    from tests.sshd_helpers import sshd_available, start_sshd

    ok, why = sshd_available()
    if not ok:
        pytest.skip(why)
    server = start_sshd(tmp_path / "sshd")
    try:
        yield server
    finally:
        server.stop()
