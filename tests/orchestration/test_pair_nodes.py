"""``racperf pair`` with an end on another node asks that end's needs of the node that runs
it (issue 10): oratcptest's java and jar are looked for on the client's node before the server
starts, not on this machine; the probe client is its one file copied to the node and run by
the node's python3 (3.6 here), nothing of racperf there. Real OpenSSH sshd as rac1 and rac2;
the nodes' commands get a PATH of their own (sshd's ``SetEnv``) whose ``java`` is the
oratcptest emulator (tests/fakes/oratcptest stands in for ``java -jar oratcptest.jar``), while
this machine's racperf runs with a PATH that has no java at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.remote.ssh_host import SshHost
from racperf_tui.core.remote.ssh_target import SshTarget
from racperf_tui.core.store import Store
from racperf_tui.tools import probe
from tests.helpers import FAKES
from tests.helpers.cluster_helpers import REPO, isolated_home, node_table, racperf, remote_runs  # noqa: F401
from tests.helpers.sshd_helpers import Sshd, set_node_path, sshd_available, start_sshd

# two sshd and a pair of detached runs for seconds: the slow lane
pytestmark = [pytest.mark.usefixtures("isolated_home", "remote_runs"), pytest.mark.slow]


def path_without_java(directory: Path) -> Path:
    """A directory of links to every program of /usr/bin but java."""
    directory.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir("/usr/bin"):
        if entry.name != "java":
            (directory / entry.name).symlink_to(entry.path)
    return directory


@pytest.fixture
def nodes(sshd: Sshd, tmp_path: Path):
    """(cluster file, rac1, rac2, this machine's PATH without java, the emulator's bin dir,
    a jar): rac1 has the emulator as its java; rac2 gets its PATH from each test."""
    ok, why = sshd_available()
    if not ok:
        pytest.skip(why)
    second = start_sshd(tmp_path / "sshd2")
    try:
        no_java = path_without_java(tmp_path / "no-java")
        java_bin = tmp_path / "node-java"
        java_bin.mkdir()
        (java_bin / "java").symlink_to(FAKES / "oratcptest")
        set_node_path(sshd, java_bin, no_java)
        jar = tmp_path / "oratcptest.jar"
        jar.write_bytes(b"PK\x03\x04")
        cluster = tmp_path / "cluster.toml"
        cluster.write_text(
            node_table("rac1", sshd, interconnect="127.0.0.1") + node_table("rac2", second, interconnect="127.0.0.1")
        )
        yield cluster, sshd, second, no_java, java_bin, jar
    finally:
        second.stop()


def pair(cluster: Path, data: Path, no_java: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``racperf pair oratcptest`` from rac1 (server) to rac2 (client), here without a java."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "ORACLE_HOME")}
    env["PATH"] = str(no_java)
    return subprocess.run(
        [sys.executable, "-m", "racperf_tui", "pair", "oratcptest", "--server-node", "rac1", "--client-node", "rac2",
         "--cluster", str(cluster), "--data-dir", str(data), "--set", "interval_s=1", "--set", "duration_s=2",
         *args],
        capture_output=True, text=True, timeout=120, cwd=REPO, stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip


def test_oratcptest_across_two_nodes_needs_no_java_here(nodes, tmp_path: Path) -> None:
    cluster, rac1, rac2, no_java, java_bin, jar = nodes
    set_node_path(rac2, java_bin, no_java)
    data = tmp_path / "data"
    done = pair(cluster, data, no_java, "--server", f"jar_path={jar}", "--set", f"jar_path={jar}")
    assert done.returncode == 0, done.stderr
    head = json.loads(done.stdout.splitlines()[0])
    samples = [json.loads(line) for line in done.stdout.splitlines() if '"sample"' in line]
    with Store.open(data) as store:
        server, client = store.get_run(head["server_run_id"]), store.get_run(head["client_run_id"])
    assert (server.host, client.host) == ("rac1", "rac2")
    assert server.argv[0] == client.argv[0] == str(java_bin / "java")  # the nodes' java, found there
    assert client.state is RunState.SUCCEEDED, client.message
    assert len(samples) == 2 and all(s["metrics"]["throughput_mib_s"] > 0 for s in samples)


def test_a_client_node_without_java_or_jar_is_named_before_anything_runs(nodes, tmp_path: Path) -> None:
    cluster, rac1, rac2, no_java, java_bin, jar = nodes
    set_node_path(rac2, no_java)
    data = tmp_path / "data"
    done = pair(cluster, data, no_java, "--server", f"jar_path={jar}", "--set", f"jar_path={jar}")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("racperf pair oratcptest: oratcptest needs Java (JRE 6 or later) on rac2 and none")
    assert "Traceback" not in done.stderr
    set_node_path(rac2, java_bin, no_java)
    missing = tmp_path / "not-on-rac2.jar"
    done = pair(cluster, data, no_java, "--server", f"jar_path={jar}", "--set", f"jar_path={missing}")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        f"racperf pair oratcptest: oratcptest: jar_path '{missing}' does not exist on rac2 or is not a file"
    )
    with Store.open(data) as store:
        assert store.list_runs() == []  # no server was started for a client that cannot run


PYTHON36 = Path("/root/.pyenv/versions/3.6.15/bin/python3")


def test_a_probe_client_on_a_node_is_its_file_run_by_the_nodes_python(sshd: Sshd, tmp_path: Path) -> None:
    """rac1's python3 is 3.6 (when it is here; else the system's), without racperf."""
    node_bin = tmp_path / "node-bin"
    node_bin.mkdir()
    python = PYTHON36 if PYTHON36.exists() else Path("/usr/bin/python3")
    (node_bin / "python3").symlink_to(python)
    set_node_path(sshd, node_bin, Path("/usr/bin"), Path("/bin"))
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    data = tmp_path / "data"
    done = racperf(
        "pair", "probe", "--client-node", "rac1", "--cluster", str(cluster), "--data-dir", str(data),
        "--server", "bind=127.0.0.1", "--server", "port=0", "--set", "duration_s=1", "--set", "interval_s=0.25",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    head = json.loads(done.stdout.splitlines()[0])
    with Store.open(data) as store:
        client = store.get_run(head["client_run_id"])
        copied = store.raw_output(client.id, f"file:{probe.CLIENT_FILE_NAME}")
        stdout = store.raw_output(client.id, "stdout")
        samples = [s.metrics for _seq, s in store.samples(client.id)]
        server_result = store.result(head["server_run_id"])
    assert client.host == "rac1" and client.state is RunState.SUCCEEDED, client.message
    # the run's directory's copy, by the node's python3: this machine's interpreter is not named
    assert client.argv[:3] == ["python3", "-u", str(data / "runs" / str(client.id) / probe.CLIENT_FILE_NAME)]
    assert copied == probe.client_source()
    target = SshTarget(sshd.host, sshd.user, sshd.port, str(sshd.user_key), (str(sshd.known_hosts),))
    on_node = Path(SshHost(target, name="rac1").remote_dir(data / "runs" / str(client.id))) / probe.CLIENT_FILE_NAME
    assert on_node.read_text() == probe.client_source()
    result = probe.parse_output(stdout)
    assert result["error"] is None and result["server_bytes_received"] == result["bytes_sent"] > 0
    assert server_result["bytes_received"] == result["bytes_sent"]
    assert len(samples) >= 3 and all(m["latency_ms"] > 0 for m in samples)


def test_a_node_python_older_than_3_6_is_refused_for_the_probe_client(sshd: Sshd, tmp_path: Path) -> None:
    old = tmp_path / "node-bin" / "python3"
    old.parent.mkdir()
    old.write_text("#!/bin/sh\nprintf 3.5\n")
    old.chmod(0o755)
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    data = tmp_path / "data"
    done = racperf(
        "run", "probe", "--node", "rac1", "--cluster", str(cluster), "--data-dir", str(data),
        "--set", "host=127.0.0.1", "--set", f"python={old}", "--set", "duration_s=1",
    )  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    message = f"probe: the client needs python3 >= 3.6; {old} on rac1 is 3.5"
    assert json.loads(done.stdout.splitlines()[-1])["message"] == message
    with Store.open(data) as store:
        (client,) = store.list_runs()
    assert client.host == "rac1" and client.state is RunState.FAILED and client.message == message
