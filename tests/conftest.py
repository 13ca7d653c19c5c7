"""Fixtures and hooks only. What tests share otherwise (paths, markers, helpers) is the
package tests/helpers. Real components everywhere they run here; see tests/fakes for the
emulators of tools that cannot be installed (ORION, oratcptest, netperf, sqlplus)."""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.tools.fio.options import option_table
from tests.helpers.needs import mark_needs
from tests.helpers.netns_helpers import netns_cluster, netns_cluster_factory  # noqa: F401
from tests.helpers.sshd_helpers import sshd_available, start_sshd


@pytest.fixture(scope="session", autouse=True)
def fio_option_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """XDG_CACHE_HOME for the whole session, one directory for every test worker (and the
    racperf processes and supervisors the tests start): fio's option table
    (tools/fio/options.py) is read once per fio binary, and per node name on a node, then
    kept there. Read cold it is ~290 fio processes, 3-8 s here and ~20 s for two nodes over
    SSH on a loaded machine; with the cache in each test's own HOME (tests that set HOME) or
    in one directory per worker, every such test or every worker paid it again. One worker
    reads it cold while the others wait on a lock, then read the file it wrote: both workers
    reading it at once cost 6.5 s of CPU each (measured at load 36), twice for nothing."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's basetemp: popen-gw0 and popen-gw1 are below it
    cache = base / "xdg-cache"
    cache.mkdir(exist_ok=True)
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    # read here, once, before any test times its own steps: the first judge of a local fio run
    # in a test (a form's launch waited 10 s for the refusal) must not pay the cold read
    fio = shutil.which("fio")
    if fio is not None:
        with open(cache / "fio-options.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
            try:
                option_table(fio)
            except (OSError, ValueError):
                pass  # the tests that need fio say why themselves
    yield cache
    if before is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = before


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


#: the modules with the longest wall time, longest first (seconds of one worker on 2 cores at
#: a load of ~2, from --durations): they are handed out first, so that neither worker starts a
#: minute-long file while the other has nothing left. `--dist loadfile` gives each worker the
#: next file in collection order as it gets free (xdist's LoadScopeScheduling); alphabetical
#: order left test_matrix.py or test_write_guard_bypasses.py to the end of one worker.
LONGEST_MODULES = (
    # this round's: the offline bundle builds and installs twice, a sweep on two nodes
    "test_offline_bundle",
    "test_sweep_nodes",
    "test_run_groups",
    "test_write_guard_bypasses",
    "test_matrix",
    "test_matrix_emulated_tools",
    "test_runs_ui",
    "test_cluster_runs",
    "test_remote_prepare",
    "test_runs_cli",
    "test_network_panel",
    "test_node_guard",
    "test_cluster_pairs",
    "test_calibrate_io",
    "test_ui_kill9",
    "test_ssh_host",
    "test_write_guard_hostile",
    "test_dashboard",
    "test_runs_node",
    "test_network_panel_nodes",
    "test_iostat_vectorised",
    "test_iostat_cli",
    "test_fio_live",
    "test_lost_link_states",
    "test_orion_live_runs",
    "test_kernel_net",
    "test_sweep_cli",
    "test_saturation_watch",
    "test_foreign_io",
)


def _module_name(item: pytest.Item) -> str:
    return item.module.__name__.rsplit(".", 1)[-1] if item.module is not None else ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # what each test needs, from its skip markers, fixtures and the helpers they call
    # (tests/helpers/needs.py): `make test-fast` leaves out the tests that need any of it
    mark_needs(items)
    rank = {name: i for i, name in enumerate(LONGEST_MODULES)}
    # stable: a module's tests keep their order, the rest keep collection order after these
    items.sort(key=lambda item: rank.get(_module_name(item), len(rank)))


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
