"""Fixtures and hooks only. What tests share otherwise (paths, markers, helpers) is the
package tests/helpers. Real components everywhere they run here; see tests/fakes for the
emulators of tools that cannot be installed (ORION, oratcptest, netperf, sqlplus)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.helpers.netns_helpers import netns_cluster, netns_cluster_factory  # noqa: F401
from tests.helpers.sshd_helpers import sshd_available, start_sshd


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private store directory, also exported as RACPERF_DATA_DIR."""
    d = tmp_path / "data"
    d.mkdir()
    monkeypatch.setenv("RACPERF_DATA_DIR", str(d))
    return d


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """Render local times in UTC for the duration of the test."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


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
        "test_fio_client_server",
    }
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.module is not None and item.module.__name__.rsplit(".", 1)[-1] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def sshd(tmp_path: Path):
    """A real OpenSSH sshd on 127.0.0.1 (random high port) with throwaway host and user keys
    and a known_hosts file holding its host key (tests/helpers/sshd_helpers.py); stopped at teardown."""
    ok, why = sshd_available()
    if not ok:
        pytest.skip(why)
    server = start_sshd(tmp_path / "sshd")
    try:
        yield server
    finally:
        server.stop()
