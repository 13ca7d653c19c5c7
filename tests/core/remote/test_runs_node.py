"""``racperf runs list --node`` / ``racperf runs stop ID --node`` against a real OpenSSH sshd:
a command under the node's watchdog (core/remote/ssh_host.py) that this store knows nothing of is
listed by its run name and stopped there, the process that left its group with setsid()
included; the listing's parser on its own."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.remote.cluster import load_cluster
from racperf_tui.core.remote.node_runs import parse_listing
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost, remote_run_prefix
from racperf_tui.core.store import Store
from racperf_tui.orchestration.runs import launch_run
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.sshd_helpers import Sshd, _free_port

pytestmark = pytest.mark.usefixtures("isolated_home", "remote_runs")


def test_the_listing_names_each_watchdog_once_and_the_directories_left() -> None:
    script = "\x01".join(["sh", "-c", "WATCHDOG", "racperf-watchdog"])
    mark = "racperf-db1-0a1b2c3d-12-00ff00ff00ff"
    argv = lambda m: f"{script}\x01{m}\x013\x010\x01exec iperf3 -s\x014"  # noqa: E731
    text = "\n".join(
        [
            "clock 100 5000.50",
            f"proc 400 1 450000 {argv(mark)}",  # the watchdog: started at 4500 s, up 5000.5 s
            f"proc 401 400 450010 {argv(mark)}",  # its tracker subshell: same argv
            f"proc 500 1 490000 {argv('racperf-00ff00ff00ff')}",  # an older run's mark
            "proc 600 1 499000 grep\x01-l\x01racperf-watchdog\x01/proc/1/cmdline",
            "dir 1700000000 db1-0a1b2c3d-12",
            "dir 1700000001 db1-0a1b2c3d-9",
        ]
    )
    runs = parse_listing(text)
    assert [(r.name, r.run_id, r.running, r.pid) for r in runs] == [
        ("db1-0a1b2c3d-12", 12, True, 400),
        ("racperf-00ff00ff00ff", None, True, 500),
        ("db1-0a1b2c3d-9", 9, False, None),
    ]
    assert runs[0].elapsed_s == pytest.approx(500.5) and runs[0].command == "exec iperf3 -s"
    assert runs[0].directory_mtime == 1700000000
    assert runs[0].of_store("db1-0a1b2c3d-") and not runs[0].of_store("db1-0a1b2c3e-")


def _gone(pids: list[int], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids):
            return True
        time.sleep(0.1)
    return False


def _is_worker(argv: list[str], marker: str) -> bool:
    """``sh -c 'sleep 30N; true' MARKER`` (not the watchdog, whose command names the marker too)."""
    return len(argv) == 4 and argv[2].startswith("sleep 30") and argv[3] == marker


@pytest.mark.slow
def test_a_run_the_store_lost_is_listed_and_stopped_on_its_node(sshd: Sshd, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    data = tmp_path / "data"
    (data / "runs" / "7").mkdir(parents=True)
    # run 7 on the node under its watchdog, with a worker that leaves the group (as fio's do);
    # no store records it: the racperf that started it lost track
    host = SshHost(SshTarget.parse(sshd.spec, identity=str(sshd.user_key), known_hosts=[str(sshd.known_hosts)]))
    marker = f"racperf-test-{tmp_path.name}"
    script = f"setsid sh -c 'sleep 301; true' {marker} & exec sh -c 'sleep 300; true' {marker}"
    process = host.start(Invocation(["sh", "-c", script]), data / "runs" / "7")
    try:
        deadline = time.monotonic() + 10
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = [p.pid for p in psutil.process_iter(["cmdline"]) if _is_worker(p.info["cmdline"] or [], marker)]
        assert len(workers) == 2, workers
        time.sleep(3.0)  # the tracker (a look a second) has seen the worker that left the group
        args = ("--node", "rac1", "--cluster", str(cluster), "--data-dir", str(data))
        listed = racperf("runs", "list", *args, "--json")
        assert listed.returncode == 0, listed.stderr
        rows = [json.loads(line) for line in listed.stdout.splitlines()]
        name = f"{remote_run_prefix(data / 'runs')}7"
        mine = [row for row in rows if row["name"] == name]
        assert len(mine) == 1, rows
        assert mine[0]["running"] and mine[0]["this_store"] and mine[0]["run_id"] == 7
        assert mine[0]["recorded_state"] is None and "sleep 300" in mine[0]["command"]
        table = racperf("runs", "list", *args)
        assert any(
            line.startswith(name) and "running" in line and "#7 not in this store" in line
            for line in table.stdout.splitlines()
        )
        started = time.monotonic()
        stopped = racperf("runs", "stop", "7", *args, "--grace", "5")
        assert stopped.returncode == 0, stopped.stderr
        assert f"{name} on rac1: stopped" in stopped.stdout and "ended on TERM" in stopped.stdout
        assert _gone(workers, 10.0), "a worker outlived the stop"
        assert time.monotonic() - started < 20
        assert process.reap(10.0) != 0  # the watchdog ended with its command
        again = racperf("runs", "stop", "7", *args)
        assert again.returncode == 3 and "nothing of run 7 runs on rac1" in again.stderr
    finally:
        process.close()


def test_an_unreachable_node_is_one_line(sshd: Sshd, tmp_path: Path) -> None:
    from tests.helpers.sshd_helpers import _free_port

    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd, port=_free_port()))
    done = racperf("runs", "list", "--node", "rac1", "--cluster", str(cluster), "--data-dir", str(tmp_path / "d"))
    assert done.returncode == 4
    assert done.stderr.startswith("racperf runs list: node rac1: ") and "Connection refused" in done.stderr
    assert "Traceback" not in done.stderr
    done = racperf("runs", "list", "--node", "nosuch", "--cluster", str(cluster))
    assert done.returncode == 2 and "no node named 'nosuch'" in done.stderr


@pytest.mark.slow
def test_a_recorded_run_is_stopped_through_its_supervisor_and_nothing_is_left_on_the_node(
    sshd: Sshd, tmp_path: Path
) -> None:
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    port = _free_port()
    server = subprocess.Popen(
        ["iperf3", "-s", "-p", str(port), "-B", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    data = tmp_path / "data"
    try:
        time.sleep(0.5)
        node = load_cluster(cluster).node("rac1")
        run_id = launch_run("iperf3", {"host": "127.0.0.1", "port": port, "duration_s": 60}, data_dir=data, node=node)
        with Store.open(data) as store:
            deadline = time.monotonic() + 30
            while store.sample_count(run_id) < 2:
                assert time.monotonic() < deadline, "no samples from the node"
                time.sleep(0.2)
        args = ("--node", "rac1", "--cluster", str(cluster), "--data-dir", str(data))
        rows = [json.loads(line) for line in racperf("runs", "list", *args, "--json").stdout.splitlines()]
        (row,) = [r for r in rows if r["this_store"] and r["run_id"] == run_id]
        assert row["running"] and row["recorded_state"] == "running" and "iperf3" in row["command"]
        stopped = racperf("runs", "stop", str(run_id), *args, "--grace", "10")
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout.splitlines()[0] == f"run {run_id}: stopped"  # by its supervisor, recorded
        with Store.open(data) as store:
            assert store.get_run(run_id).state is RunState.STOPPED
        rows = [json.loads(line) for line in racperf("runs", "list", *args, "--json").stdout.splitlines()]
        assert not [r for r in rows if r["this_store"] and r["run_id"] == run_id and r["running"]]
        other = racperf(
            "runs", "stop", str(run_id), "--node", "rac2", "--cluster", str(cluster), "--data-dir", str(data)
        )
        assert other.returncode == 2 and "no node named 'rac2'" in other.stderr
    finally:
        server.kill()
        server.wait()
