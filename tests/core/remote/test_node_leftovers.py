"""What runs leave on a node, cleaned when the next run starts there (issue 21): the watchdog's
tracker directories in the node's $TMPDIR whose watchdog is gone (its sshd killed under it),
and run directories in the runs' base beyond the newest 20 (never a running run's). A real
sshd (tests/helpers/sshd_helpers.py) with throwaway keys; the node's TMPDIR a directory here."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.run_dirs import KEEP_RUN_DIRS
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost, remote_run_prefix
from tests.helpers.cluster_helpers import isolated_home  # noqa: F401 (fixture)
from tests.helpers.sshd_helpers import Sshd, set_node_path

pytestmark = pytest.mark.usefixtures("isolated_home")


def _host(server: Sshd, base: Path) -> SshHost:
    target = SshTarget.parse(server.spec, identity=str(server.user_key), known_hosts=[str(server.known_hosts)])
    return SshHost(target, remote_base=str(base), connection=ssh.connect(target, fresh=True))


def _wait(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_killed_sshds_tracker_is_removed_when_the_next_run_starts(sshd: Sshd, tmp_path: Path) -> None:
    node_tmp = tmp_path / "node-tmp"
    node_tmp.mkdir(mode=0o700)
    set_node_path(sshd, "/usr/bin", "/bin", env={"TMPDIR": str(node_tmp)})
    base = tmp_path / "runs"
    base.mkdir(mode=0o700)
    proc = _host(sshd, base).start(Invocation(["sh", "-c", "sleep 300"]), tmp_path / "r" / "1")
    assert proc.remote_pgid is not None
    _wait(lambda: len(list(node_tmp.glob("racperf-*"))) == 1, 5, "the tracker's directory")
    # the session's sshd killed (the listener stays): the watchdog goes with it
    for child in psutil.Process(sshd.pid).children():
        child.send_signal(signal.SIGKILL)
    _wait(lambda: not _group_alive(proc.remote_pgid), 15, "the benchmark to be stopped")
    # a tracker whose watchdog is gone (the killed one's, or one made so when that one
    # cleaned up after all), and a live watchdog's that must stay (this process's pid)
    stale = node_tmp / "racperf-h-abc-7-0123456789ab.4194303"
    stale.mkdir(mode=0o700, exist_ok=True)
    (stale / "list").write_text("1:1\n")
    alive = node_tmp / f"racperf-h-abc-8-0123456789ab.{os.getpid()}"
    alive.mkdir(mode=0o700)
    left_by_kill = sorted(p.name for p in node_tmp.glob("racperf-*") if p not in (stale, alive))
    # the killed session's watchdog may still be exiting on a loaded machine: a live one's
    # tracker is rightly kept, so the next run starts once it is gone
    _wait(
        lambda: not any(psutil.pid_exists(int(name.rsplit(".", 1)[1])) for name in left_by_kill),
        15,
        "the killed session's watchdog to exit",
    )
    later = _host(sshd, base).start(Invocation(["sh", "-c", "sleep 30"]), tmp_path / "r" / "2")
    try:
        # the new run's watchdog makes its own tracker as it starts, after start() returned
        _wait(lambda: len(list(node_tmp.glob("racperf-*"))) == 2, 5, "the new run's tracker, the dead ones gone")
        names = {p.name for p in node_tmp.glob("racperf-*")}
        assert stale.name not in names and not (set(left_by_kill) & names), (left_by_kill, names)
        assert alive.name in names  # its watchdog's pid is a live process
        assert len(names) == 2, names  # the live one's and the new run's own
    finally:
        later.kill()
        later.reap()
        later.close()
    _wait(lambda: {p.name for p in node_tmp.glob("racperf-*")} == {alive.name}, 5, "the second run's cleanup")


def test_run_directories_are_kept_to_the_newest_twenty_and_never_a_running_one(sshd: Sshd, tmp_path: Path) -> None:
    base = tmp_path / "runs"
    base.mkdir(mode=0o700)
    local_runs = tmp_path / "data" / "runs"
    prefix = remote_run_prefix(local_runs)
    now = time.time()
    old = [f"{prefix}{run_id}" for run_id in range(1, 26)]
    for age, name in enumerate(reversed(old), start=1):  # run 25 the newest of them
        (base / name).mkdir(mode=0o700)
        (base / name / "job.fio").write_text("x")
        os.utime(base / name, (now - 100 * age, now - 100 * age))
    # run 1 (the oldest) still runs: its watchdog's mark names its directory
    running = _host(sshd, base).start(Invocation(["sh", "-c", "sleep 300"]), local_runs / "1")
    try:
        _host(sshd, base).put_files(local_runs / "26", {"job.fio": "[global]\n"})
        kept = {p.name for p in base.iterdir()}
        newest = {f"{prefix}{run_id}" for run_id in range(26 - KEEP_RUN_DIRS + 1, 27)}
        assert kept == newest | {f"{prefix}1"}, sorted(kept)
        assert len(kept) == KEEP_RUN_DIRS + 1 and (base / f"{prefix}26" / "job.fio").read_text() == "[global]\n"
    finally:
        running.kill()
        running.reap()
        running.close()
