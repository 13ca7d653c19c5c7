"""Runs on another node (issue 10) against a real OpenSSH sshd on 127.0.0.1: ``racperf run
--node / --ssh`` (foreground and detached), the node's name in the store, ``racperf runs``
listing and stopping a remote run through its supervisor, the remote side surviving the
launcher, a read-only fio target refused on a node, one-line reasons for a node that cannot
be used, and a link lost mid-run (the remote benchmark gone within 10 s, the samples kept)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.disks.iostat_record import IOSTAT_STREAM, recorded_iostat
from racperf_tui.core.remote.cluster import load_cluster, node_of_config
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost
from racperf_tui.core.store import Store
from racperf_tui.orchestration.run_conditions import CONDITIONS_STREAM, last_json_object
from tests.helpers.cluster_helpers import REPO, isolated_home, node_table, racperf, remote_base, remote_runs  # noqa: F401
from tests.helpers.sshd_helpers import Sshd, _free_port

# real benchmarks over real sshd for seconds each: left out of make test-fast
pytestmark = [pytest.mark.usefixtures("isolated_home", "remote_runs"), pytest.mark.slow]


@pytest.fixture
def cluster_file(sshd: Sshd, tmp_path: Path) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text('[cluster]\nname = "test"\n\n' + node_table("rac1", sshd))
    return path


@pytest.fixture
def iperf3_server():
    """A real iperf3 server here (what the node's client connects to), killed at teardown."""
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    port = _free_port()
    server = subprocess.Popen(
        ["iperf3", "-s", "-p", str(port), "-B", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(0.5)
    yield port
    server.kill()
    server.wait()


def iperf3_clients(port: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmd = proc.info["cmdline"] or []
        if cmd[:1] == ["iperf3"] and "-c" in cmd and str(port) in cmd and proc.info["status"] != "zombie":
            found.append(proc)
    return found


def wait_until(predicate, timeout_s: float, what: str) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout_s, f"not within {timeout_s} s: {what}"
        time.sleep(0.1)
    return time.monotonic() - started


def test_run_on_a_node_in_the_foreground(sshd: Sshd, cluster_file: Path, iperf3_server: int, tmp_path: Path) -> None:
    """iperf3's client started on rac1 over SSH: its samples stream back as JSON lines, the
    store's rows name the node, the run's config carries the node it ran on."""
    data = tmp_path / "data"
    done = racperf(
        "run", "iperf3", "--node", "rac1", "--cluster", str(cluster_file), "--data-dir", str(data),
        "--set", "host=127.0.0.1", "--set", f"port={iperf3_server}", "--set", "duration_s=2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    samples = [line for line in lines if line["type"] == "sample"]
    assert len(samples) >= 2
    assert all(s["metrics"]["throughput_mbit_s"] > 10 for s in samples)  # loopback: far more
    result = lines[-1]
    assert result["type"] == "result" and result["state"] == "succeeded"
    with Store.open(data) as store:
        record = store.get_run(result["run_id"])
    assert record.host == "rac1"
    assert record.config["host_spec"]["port"] == sshd.port
    assert node_of_config(record.config) == load_cluster(cluster_file).node("rac1")
    # the node's side made the run's directory: it ran there, through sshd
    mine = SshHost(SshTarget("127.0.0.1", sshd.user, sshd.port), remote_base=str(remote_base(sshd))).remote_dir(
        data / "runs" / str(record.id)
    )
    assert Path(mine).is_dir()


def test_an_ad_hoc_ssh_node_is_named_by_its_spec(sshd: Sshd, iperf3_server: int, tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = racperf(
        "run", "iperf3", "--ssh", sshd.spec, "--identity", str(sshd.user_key), "--known-hosts",
        str(sshd.known_hosts), "--data-dir", str(data),
        "--set", "host=127.0.0.1", "--set", f"port={iperf3_server}", "--set", "duration_s=1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Store.open(data) as store:
        (record,) = store.list_runs()
    assert record.host == sshd.spec and record.state is RunState.SUCCEEDED


LAUNCHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from racperf_tui.core.remote.cluster import load_cluster
    from racperf_tui.orchestration.runs import launch_run
    node = load_cluster(sys.argv[1]).node("rac1")
    config = {"host": "127.0.0.1", "port": int(sys.argv[3]), "duration_s": 60}
    print(launch_run("iperf3", config, data_dir=Path(sys.argv[2]), node=node))
""")


def launch_detached(cluster_file: Path, data: Path, port: int) -> int:
    """launch_run from a process that then exits (as a UI that quits)."""
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCHER, str(cluster_file), str(data), str(port)],
        capture_output=True, text=True, timeout=60, cwd=REPO,
    )  # fmt: skip
    assert launched.returncode == 0, launched.stderr
    return int(launched.stdout.split()[-1])


def test_a_detached_run_on_a_node_outlives_its_launcher_lists_and_stops(
    sshd: Sshd, cluster_file: Path, iperf3_server: int, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    run_id = launch_detached(cluster_file, data, iperf3_server)
    # the launcher is gone; the run goes on, its samples keep coming
    with Store.open(data) as store:
        wait_until(lambda: store.sample_count(run_id) >= 3, 30, "samples after the launcher exited")
        assert store.get_run(run_id).state is RunState.RUNNING
    assert len(iperf3_clients(iperf3_server)) == 1
    listing = racperf("runs", "--data-dir", str(data), "list", "--json")
    (row,) = [json.loads(line) for line in listing.stdout.splitlines()]
    assert (row["id"], row["host"], row["state"]) == (run_id, "rac1", "running")
    table = racperf("runs", "--data-dir", str(data)).stdout
    assert "rac1" in table.splitlines()[1]
    started = time.monotonic()
    stopped = racperf("runs", "--data-dir", str(data), "stop", str(run_id))
    assert stopped.returncode == 0 and stopped.stdout.strip() == f"run {run_id}: stopped", stopped.stderr
    assert time.monotonic() - started < 15
    wait_until(lambda: not iperf3_clients(iperf3_server), 10, "the node's iperf3 client gone")
    with Store.open(data) as store:
        record = store.get_run(run_id)
        assert record.state is RunState.STOPPED and record.message.startswith("stopped by SIGTERM")
        assert "iperf3: interrupt" in record.message  # the TERM reached iperf3 on the node
        assert store.sample_count(run_id) >= 3


def sshd_sessions(server: Sshd) -> list[psutil.Process]:
    """The per-connection sshd processes under the listener (not the shells they run); a
    short-lived session that ends while it is looked at is none (psutil.NoSuchProcess, once)."""
    sessions = []
    for process in psutil.Process(server.pid).children(recursive=True):
        try:
            if process.name() in ("sshd", "sshd-session") and process.status() != "zombie":
                sessions.append(process)
        except psutil.NoSuchProcess:
            continue
    return sessions


def test_a_link_lost_mid_run_marks_the_run_keeps_its_samples_and_ends_the_remote_client(
    sshd: Sshd, cluster_file: Path, iperf3_server: int, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    run_id = launch_detached(cluster_file, data, iperf3_server)
    with Store.open(data) as store:
        wait_until(lambda: store.sample_count(run_id) >= 3, 30, "samples")
        (client,) = iperf3_clients(iperf3_server)
        sessions = sshd_sessions(sshd)
        assert sessions
        for session in sessions:  # the link dies: every sshd serving the connection killed
            session.kill()
        before = store.sample_count(run_id)
        took = wait_until(lambda: not client.is_running() or client.status() == "zombie", 10, "the client gone")
        print(f"the node's iperf3 client gone {took:.2f} s after the link died")
        assert took < 10
        wait_until(lambda: store.get_run(run_id).state.finished, 30, "the run recorded as ended")
        record = store.get_run(run_id)
        assert record.state is RunState.FAILED
        assert record.message.startswith("lost link to rac1"), record.message
        assert store.sample_count(run_id) >= before >= 3
        assert all(s.metrics["throughput_mbit_s"] > 10 for _seq, s in store.samples(run_id))


def test_fio_with_a_read_only_target_on_a_node_is_judged_there_and_runs(
    sshd: Sshd, cluster_file: Path, tmp_path: Path
) -> None:
    """The write guard runs on the node (core/remote/node_facts.py): a read of a plain file there is
    cleared and fio reads the whole of it."""
    target = tmp_path / "data.fio"
    target.write_bytes(b"\0" * (1 << 20))
    done = racperf(
        "run", "fio", "--node", "rac1", "--cluster", str(cluster_file), "--data-dir", str(tmp_path / "data"),
        "--", "--name=r", f"--filename={target}", "--rw=read", "--size=1m",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])["result"]
    assert sum(job["read"]["io_kib"] for job in result["jobs"]) == 1024


def test_a_run_on_a_node_records_its_conditions_and_its_devices_iostat(
    sshd: Sshd, cluster_file: Path, tmp_path: Path
) -> None:
    """What a report needs is asked of the node itself (the node is this machine, so its
    sysfs is the oracle): the kernel, the device under the target, and that device's iostat a
    second at a time from the node's own diskstats (orchestration/node_iostat.py)."""
    target = tmp_path / "data.fio"
    target.write_bytes(b"\0" * (1 << 20))
    done = racperf(
        "run", "fio", "--node", "rac1", "--cluster", str(cluster_file), "--data-dir", str(tmp_path / "data"),
        "--", "--name=r", f"--filename={target}", "--rw=read", "--size=1m", "--time_based", "--runtime=2500ms",
        "--rate_iops=100",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Store.open(tmp_path / "data", read_only=True) as store:
        run_id = store.list_runs()[0].id
        conditions = last_json_object(store.raw_output(run_id, CONDITIONS_STREAM))
        intervals = recorded_iostat(store.raw_output(run_id, IOSTAT_STREAM))
    assert conditions is not None
    st = os.stat(target)
    devno = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    assert conditions["kernel"] == f"Linux {os.uname().release}"
    assert conditions["targets"] == [{"path": str(target), "devno": devno}]
    device = Path(os.path.realpath(f"/sys/dev/block/{devno}")).name
    assert conditions["devices"][0]["name"] == device
    assert len(intervals) >= 1, "no interval of the device's iostat recorded"
    assert all(device in interval.devices and 0.5 < interval.interval_s < 2.5 for interval in intervals)


def test_a_node_that_cannot_be_used_says_why_in_one_line(sshd: Sshd, tmp_path: Path) -> None:
    """Nobody listening, no such host (DNS), a key the node refuses, a host key unknown, a
    host key changed: exit status 3, one line naming the node and the reason."""
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    other_key = tmp_path / "other_host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other_key)], check=True)
    changed = tmp_path / "changed_known_hosts"
    changed.write_text(f"[127.0.0.1]:{sshd.port} " + " ".join(Path(f"{other_key}.pub").read_text().split()[:2]) + "\n")
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(
        node_table("refused", sshd, port=_free_port())
        + node_table("nodns", sshd, host="no-such-node.invalid")
        + node_table("badkey", sshd, identity=str(stranger))
        + node_table("unknown", sshd, known_hosts=str(empty))
        + node_table("changed", sshd, known_hosts=str(changed))
    )
    expected = {
        "refused": "cannot connect: Connection refused",
        "nodns": "cannot resolve 'no-such-node.invalid' (DNS)",
        "badkey": "login refused",
        "unknown": f"host key unknown (ssh-ed25519 {sshd.host_fingerprint()}): verify it, then: ssh-keyscan",
        "changed": "HOST KEY HAS CHANGED, refused",
    }
    for name, words in expected.items():
        done = racperf(
            "run", "iperf3", "--node", name, "--cluster", str(cluster), "--data-dir", str(tmp_path / "data"),
            "--set", "host=127.0.0.1",
        )  # fmt: skip
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 3, (name, done.stderr)
        assert len(lines) == 1 and lines[0].startswith(f"racperf run iperf3: node {name}: "), (name, lines)
        assert words in lines[0], (name, lines)
