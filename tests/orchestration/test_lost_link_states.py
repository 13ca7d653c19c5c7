"""A run on a node whose link dies (issue 21): a node in a network namespace with its own
sshd, fio running there under a detached supervisor, the node's public link set down
mid-run (``ip link set ... down``: packets dropped, no FIN, no RST).

- A link that stays down: the run is recorded as ended (FAILED, "lost link to n1") within
  20 s of the cut, not after the idle keepalives' ~60 s; its samples are kept.
- A blip: the link down until the node's watchdog stopped fio (4-8 s without heartbeats),
  then up again: the run says the link was lost and the watchdog stopped it, and when,
  not "fio exited with status -15; stderr: Terminated"."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.remote.cluster import load_cluster
from racperf_tui.core.store import Store
from racperf_tui.orchestration.runs import launch_run
from tests.helpers.cluster_helpers import isolated_home, remote_runs  # noqa: F401
from tests.helpers.netns_helpers import netns_cluster_factory  # noqa: F401
from tests.helpers.proc_helpers import wait_until

pytestmark = [pytest.mark.usefixtures("isolated_home", "remote_runs"), pytest.mark.slow]


def fio_with(marker: str) -> list[int]:
    """The live fio processes (on any node: the namespaces share this pid space) that have
    the file named ``marker`` open."""
    found = []
    for proc in psutil.process_iter(["name", "status"]):
        if proc.info["name"] == "fio" and proc.info["status"] != psutil.STATUS_ZOMBIE:
            try:
                if any(marker in f.path for f in proc.open_files()):
                    found.append(proc.pid)
            except psutil.Error:
                continue
    return found


def _fio_on_n1(made, tmp_path: Path) -> tuple[Path, int, str]:
    """A detached fio run on n1, 60 s of reads of a temp file; (data dir, run id, marker)."""
    marker = f"lost-{time.monotonic_ns()}.dat"
    config = {
        "extra_args": [
            "--name=r", f"--filename={tmp_path / marker}", "--size=8m", "--rw=randread", "--bs=4k",
            "--time_based", "--runtime=60", "--rate_iops=200", "--status-interval=1",
        ]
    }  # fmt: skip
    data = tmp_path / "data"
    node = load_cluster(made.cluster_file).node("n1")
    run_id = launch_run("fio", config, data_dir=data, node=node)
    with Store.open(data) as store:
        wait_until(lambda: store.sample_count(run_id) >= 3, 60, 0.1, "fio's samples from n1")
    assert fio_with(marker)
    return data, run_id, marker


@pytest.mark.timeout(150)
def test_a_link_that_stays_down_ends_the_run_within_20_s(netns_cluster_factory, tmp_path: Path) -> None:  # noqa: F811
    made = netns_cluster_factory(1)
    data, run_id, marker = _fio_on_n1(made, tmp_path)
    try:
        with Store.open(data) as store:
            before = store.sample_count(run_id)
            made.node("n1").cut()
            cut = time.monotonic()
            wait_until(lambda: not fio_with(marker), 15, 0.1, "fio gone on n1")
            gone = time.monotonic() - cut
            wait_until(lambda: store.get_run(run_id).state.finished, 40, 0.1, "the run recorded as ended")
            took = time.monotonic() - cut
            record = store.get_run(run_id)
            print(f"fio gone on n1 {gone:.1f} s after the cut; the run recorded as ended {took:.1f} s after it")
            assert took < 20, took
            assert record.state is RunState.FAILED and record.message.startswith("lost link to n1"), record.message
            assert "Terminated" not in record.message
            assert store.sample_count(run_id) >= before >= 3
            # when: the node's last word, its newest sample (the loss is seen up to 15 s later)
            last = store.last_sample(run_id)
            assert last is not None
            at = time.strftime("%H:%M:%S", time.localtime(record.started_at + last[1].t))
            said = f"lost link to n1 after {at} (its last sample, {last[1].t:.0f} s into the run): "
            assert record.message.startswith(said), record.message
    finally:
        made.node("n1").mend()


@pytest.mark.timeout(150)
def test_a_blip_that_made_the_watchdog_stop_fio_says_so(netns_cluster_factory, tmp_path: Path) -> None:  # noqa: F811
    made = netns_cluster_factory(1)
    data, run_id, marker = _fio_on_n1(made, tmp_path)
    try:
        made.node("n1").cut()
        cut_at = time.time()
        wait_until(lambda: not fio_with(marker), 15, 0.1, "fio stopped by n1's watchdog")
        gone = time.time() - cut_at
    finally:
        made.node("n1").mend()
    print(f"n1's watchdog stopped fio {gone:.1f} s after the cut; the link is back")
    with Store.open(data) as store:
        wait_until(lambda: store.get_run(run_id).state.finished, 40, 0.1, "the run recorded as ended")
        record = store.get_run(run_id)
    print(record.message)
    assert record.state is RunState.FAILED
    assert "Terminated" not in record.message and "status -15" not in record.message, record.message
    assert record.message.startswith("lost link to n1"), record.message
    assert "no heartbeat for 4 s, so the node's watchdog stopped the benchmark at" in record.message
    into = float(record.message.split(" s into the run")[0].rsplit(", ", 1)[1])
    assert abs((record.started_at + into) - (cut_at + gone)) < 3, (into, gone)
