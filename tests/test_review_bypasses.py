"""Ways around racperf's protections found in the safety review (each a real reproduction)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from racperf_tui.core.cluster import load_cluster
from racperf_tui.core.node_runs import NodeRun, stop_node_run
from racperf_tui.core.ssh import connect
from racperf_tui.core.ssh_host import remote_run_prefix
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.sshd_helpers import Sshd

NOBODY = 65534


def _as_nobody(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.usefixtures("isolated_home", "remote_runs")
def test_runs_stop_on_a_node_never_signals_for_another_users_fake_watchdog(sshd: Sshd, tmp_path: Path) -> None:
    """Any local user of the node can start a process whose argv looks like racperf's watchdog
    (the run's name, HOST-HASH-ID, is in every real watchdog's /proc cmdline) and write the
    tracker file ``/tmp/MARK.PID`` the stop reads as root: its first word became the process
    group the stop TERMs and KILLs (``1``: kill -- -1, every process of the node)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run the other user's process")
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    data = tmp_path / "data"
    (data / "runs").mkdir(parents=True)
    name = f"{remote_run_prefix(data / 'runs')}5"
    mark = f"racperf-{name}-0123456789ab"
    # not racperf's: a root process of its own (an Oracle background process, say)
    victim = subprocess.Popen(["setsid", "sleep", "300"], stdin=subprocess.DEVNULL)
    fake = _as_nobody(["sh", "-c", "sleep 300", "racperf-watchdog", mark, "1", "0", "exec fio", "0"])
    tracker = Path(os.environ.get("TMPDIR") or "/tmp") / f"{mark}.{fake.pid}"
    try:
        time.sleep(0.3)
        tracker.write_text(f"{victim.pid}:1 {victim.pid}:{psutil.Process(victim.pid).create_time()}\n")
        os.chown(tracker, NOBODY, NOBODY)
        done = racperf("runs", "stop", "5", "--node", "rac1", "--cluster", str(cluster), "--data-dir", str(data))
        time.sleep(0.3)
        assert victim.poll() is None, f"the stop signalled a process not racperf's: {done.stdout} {done.stderr}"
        assert done.returncode == 3 and "nothing of run 5 runs on rac1" in done.stderr
        # and the stop itself, given that process, refuses it (not only the listing)
        connection = connect(load_cluster(cluster).node("rac1").ssh_target())
        with pytest.raises(OSError, match="not a watchdog of this user's"):
            stop_node_run(connection, NodeRun(name, 5, True, fake.pid, mark), grace_s=1)
        assert victim.poll() is None
    finally:
        for p in (victim, fake):
            p.kill()
            p.wait()
        tracker.unlink(missing_ok=True)
