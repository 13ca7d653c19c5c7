"""fio's client/server mode against real fio servers: two ``fio --server=127.0.0.1,PORT`` (two
ports, two hosts to fio), racperf as the client on temp files. The per-host and All-clients
figures are held to fio's own JSON, the total to the sum of the hosts; a server that is not
there is named; a target the write guard refuses on a server's node (reached over a real
sshd) refuses the run before the client connects."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.remote.cluster import ClusterFileError
from racperf_tui.core.store import Store
from racperf_tui.orchestration.run_plan import PlanRefused, judge_run, node_with_address
from racperf_tui.orchestration.runs import launch_run, stop_run
from racperf_tui.tools import load_tool
from racperf_tui.tools.fio.client_server import parse_servers
from racperf_tui.tools.fio.client_server_result import SERVERS_FILE, parse_output, server_name
from racperf_tui.tools.fio.figures import FioParseError
from tests.helpers import needs_fio
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf  # noqa: F401
from tests.helpers.fio_servers import start_fio_server, stop_fio_server
from tests.helpers.sshd_helpers import Sshd

pytestmark = needs_fio


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def fio_servers(tmp_path: Path) -> Iterator[list[int]]:
    """Two real fio servers on 127.0.0.1, their ports; stopped (their whole group) after."""
    started = []
    try:
        for index in range(2):
            directory = tmp_path / f"server{index}"
            directory.mkdir()
            started.append(start_fio_server(directory))
        yield [port for _, port in started]
    finally:
        for proc, _ in started:
            stop_fio_server(proc)


def _fio_client_report(output: str) -> dict:
    """fio's own JSON, read here without racperf's parser: from the line that opens it."""
    lines = output.splitlines()
    start = lines.index("{")
    return json.loads("\n".join(lines[start:]))


def _last_json_line(stdout: str) -> dict:
    return json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])


def test_two_servers_per_host_and_total_are_fios_own_figures(tmp_path: Path, fio_servers: list[int]) -> None:
    data = tmp_path / "data"
    target = tmp_path / "target.bin"
    done = racperf(
        "run",
        "--data-dir",
        str(data),
        "fio_cs",
        "--target",
        str(target),
        *(f"--set=servers=127.0.0.1:{port}" for port in fio_servers),
        "--set=rw=randrw",
        "--set=rwmixread=70",
        "--set=bs=4k",
        "--set=size=4m",
        "--set=runtime_s=1",
    )
    assert done.returncode == 0, done.stderr + done.stdout
    line = _last_json_line(done.stdout)
    assert line["state"] == "succeeded", line["message"]
    result = line["result"]
    with Store.open(data) as store:
        run = store.list_runs()[0]
        assert store.samples(run.id) == []  # no live figures in client mode
        fio_own = _fio_client_report(store.raw_output(run.id, "stdout"))
    by_server = {
        server_name(e["hostname"], e["port"]): e for e in fio_own["client_stats"] if e["jobname"] != "All clients"
    }
    (all_clients,) = [e for e in fio_own["client_stats"] if e["jobname"] == "All clients"]
    expected = [f"127.0.0.1:{port}" for port in fio_servers]
    assert sorted(by_server) == sorted(expected)
    assert sorted(h["server"] for h in result["hosts"]) == sorted(expected)
    assert result["missing_servers"] == []
    for host in result["hosts"]:
        own = by_server[host["server"]]
        for direction in ("read", "write"):
            assert host[direction]["iops"] == own[direction]["iops"]
            assert host[direction]["io_bytes"] == own[direction]["io_bytes"]
            assert host[direction]["total_ios"] == own[direction]["total_ios"]
            assert host[direction]["io_bytes"] > 0
    total = result["total"]
    for direction in ("read", "write"):
        assert total[direction]["iops"] == all_clients[direction]["iops"]
        assert total[direction]["io_bytes"] == all_clients[direction]["io_bytes"]
        # the total is the sum of the hosts: bytes and I/Os exactly
        assert total[direction]["io_bytes"] == sum(h[direction]["io_bytes"] for h in result["hosts"])
        assert total[direction]["total_ios"] == sum(h[direction]["total_ios"] for h in result["hosts"])
        # fio's total IOPS is the total I/O over the longest runtime (not the sum of rates)
        longest_s = max(h[direction]["runtime_ms"] for h in result["hosts"]) / 1000.0
        assert total[direction]["iops"] == pytest.approx(total[direction]["total_ios"] / longest_s, rel=1e-3)
        assert total[direction]["iops"] == pytest.approx(sum(h[direction]["iops"] for h in result["hosts"]), rel=0.1)
    assert result["total_iops"] == pytest.approx(all_clients["read"]["iops"] + all_clients["write"]["iops"])
    # both servers did the job on the one file (two hosts to fio, one machine here)
    assert target.stat().st_size == 4 * 1024 * 1024


def test_a_server_that_is_not_there_is_named_and_nothing_is_recorded(tmp_path: Path, fio_servers: list[int]) -> None:
    data = tmp_path / "data"
    absent = _free_port()
    done = racperf(
        "run",
        "--data-dir",
        str(data),
        "fio_cs",
        "--target",
        str(tmp_path / "t.bin"),
        f"--set=servers=127.0.0.1:{fio_servers[0]}",
        f"--set=servers=127.0.0.1:{absent}",
        "--set=rw=read",
        "--set=size=1m",
        "--set=runtime_s=1",
    )
    assert done.returncode != 0
    assert f"no fio server answers at 127.0.0.1:{absent} (Connection refused)" in done.stderr
    assert f"fio --server=127.0.0.1,{absent}" in done.stderr  # how to start it
    assert "Traceback" not in done.stderr
    assert not (data / "runs").exists() or not any((data / "runs").iterdir())


def test_a_server_lost_after_the_check_fails_the_run_naming_it_and_keeps_the_others(
    tmp_path: Path, fio_servers: list[int]
) -> None:
    """fio's client exits 0 when one of its servers cannot be reached: the figures decide."""
    job = tmp_path / "job.fio"
    job.write_text(f"[j]\nfilename={tmp_path / 'j.bin'}\nsize=1m\nrw=read\nruntime=1\ntime_based\n")
    absent = _free_port()
    done = subprocess.run(
        ["fio", "--output-format=json", f"--client=127.0.0.1,{fio_servers[0]}", str(job)]
        + [f"--client=127.0.0.1,{absent}", str(job)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0  # fio's own verdict: fine
    assert f"failed to connect to 127.0.0.1:{absent}" in done.stderr
    tool = load_tool("fio_cs").TOOL
    servers = json.dumps([f"127.0.0.1:{fio_servers[0]}", f"127.0.0.1:{absent}"])
    result = tool.parse_result_files(done.stdout, {SERVERS_FILE: servers})
    assert result["missing_servers"] == [f"127.0.0.1:{absent}"]
    (host,) = result["hosts"]
    own = _fio_client_report(done.stdout)["client_stats"][0]
    assert host["read"]["io_bytes"] == own["read"]["io_bytes"] > 0
    ok, message = tool.succeeded(result, done.returncode)
    assert not ok
    assert f"no figures from fio server 127.0.0.1:{absent}" in message


def _cluster_file(tmp_path: Path, sshd: Sshd, **extra: object) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text(node_table("n1", sshd, **extra))  # type: ignore[arg-type]
    return path


@pytest.mark.usefixtures("isolated_home")
def test_a_target_refused_on_the_server_node_refuses_the_run(
    tmp_path: Path, sshd: Sshd, fio_servers: list[int]
) -> None:
    """The server's address is node n1's (reached over a real sshd): the guard runs there, on
    a file another process holds open for writing (a live datafile), and refuses."""
    datafile = tmp_path / "live.dbf"
    datafile.write_bytes(os.urandom(1 << 20))
    before = hashlib.sha256(datafile.read_bytes()).hexdigest()
    holder = subprocess.Popen(
        [sys.executable, "-c", f"f = open({str(datafile)!r}, 'r+b'); import time; time.sleep(120)"]
    )
    try:
        time.sleep(0.3)
        config = {
            "servers": [f"127.0.0.1:{fio_servers[0]}"],
            "cluster_file": str(_cluster_file(tmp_path, sshd)),
            "target": str(datafile),
            "rw": "randwrite",
            "size": "1m",
            "runtime_s": 1,
        }
        assert node_with_address("127.0.0.1", config["cluster_file"]).name == "n1"
        with pytest.raises(PlanRefused) as refused:
            judge_run(load_tool("fio_cs"), "fio_cs", config)
        message = str(refused.value)
        assert f"refusing to write to {datafile}" in message
        assert f"on fio server 127.0.0.1:{fio_servers[0]}, judged on n1)" in message
        assert "open" in message  # held open by another process
        # the same node unreachable: every target blocked, naming the node (it is judged there)
        closed = _free_port()
        unreachable = tmp_path / "unreachable"
        unreachable.mkdir()
        config["cluster_file"] = str(_cluster_file(unreachable, sshd, port=closed))  # type: ignore[arg-type]
        with pytest.raises(PlanRefused) as blocked:
            judge_run(load_tool("fio_cs"), "fio_cs", config)
        assert "on n1: cannot judge it" in str(blocked.value)
    finally:
        holder.kill()
        holder.wait()
    assert hashlib.sha256(datafile.read_bytes()).hexdigest() == before


@pytest.mark.usefixtures("isolated_home")
def test_an_address_no_node_has_is_refused_without_judging_blind() -> None:
    with pytest.raises(ClusterFileError, match="no node of .* has the address 192.0.2.7"):
        node_with_address("192.0.2.7")
    assert node_with_address("127.0.0.5").is_local  # loopback, no node claims it: this machine


def test_client_mode_refuses_what_it_cannot_keep_safe(tmp_path: Path) -> None:
    module = load_tool("fio_cs")
    base = {"servers": ["127.0.0.1:1"], "rw": "read", "size": "1m", "runtime_s": 1}
    with pytest.raises(ValueError, match="target: relative.bin is relative"):
        module.TOOL.invocation({**base, "target": "relative.bin"})
    with pytest.raises(ValueError, match="target: give the file or block device"):
        module.TOOL.invocation(base)
    with pytest.raises(ValueError, match="no filename=: name the file"):
        module.TOOL.invocation({"servers": ["127.0.0.1:1"], "extra_args": ["--name=j", "--rw=read", "--size=1m"]})
    relative_directory = ["--name=j", "--directory=rel", "--filename=f", "--rw=read", "--size=1m"]
    with pytest.raises(ValueError, match="rel is relative"):
        module.TOOL.invocation({"servers": ["127.0.0.1:1"], "extra_args": relative_directory})
    with pytest.raises(ValueError, match="write_bw_log writes its log on the servers"):
        module.TOOL.invocation({**base, "target": str(tmp_path / "t"), "extra_args": ["--write_bw_log=bw"]})
    with pytest.raises(ValueError, match="exec_prerun"):
        module.TOOL.invocation({**base, "target": str(tmp_path / "t"), "extra_args": ["--exec_prerun=touch /x"]})
    with pytest.raises(ValueError, match="servers: give at least one fio server"):
        module.TOOL.invocation({**base, "servers": [], "target": str(tmp_path / "t")})


def test_server_spellings() -> None:
    assert parse_servers(["rac1-priv", "10.0.0.2:4444", "h,5555", "[::1]:6666"]) == [
        ("rac1-priv", 8765),
        ("10.0.0.2", 4444),
        ("h", 5555),
        ("::1", 6666),
    ]
    # a form's one text field holds them all
    assert parse_servers(["127.0.0.1:1 127.0.0.1:2"]) == [("127.0.0.1", 1), ("127.0.0.1", 2)]
    for bad in ("h:0", "h:99999", "bad/host", "h:x"):
        with pytest.raises(ValueError, match="servers:"):
            parse_servers([bad])


def test_output_that_is_not_a_client_report_is_a_clear_error() -> None:
    with pytest.raises(FioParseError, match="no fio client report in the output"):
        parse_output("fio: failed to connect to 127.0.0.1:1\n")
    with pytest.raises(FioParseError, match="not the output of fio --client"):
        parse_output('{\n"fio version": "fio-3.33", "jobs": []\n}\n')


def test_a_stopped_run_ends_the_jobs_on_the_servers_and_keeps_what_they_did(
    tmp_path: Path, fio_servers: list[int]
) -> None:
    """SIGTERM to the client: it tells its servers to stop, and prints what they did so far."""
    data = tmp_path / "data"
    config = {
        "servers": [f"127.0.0.1:{port}" for port in fio_servers],
        "target": str(tmp_path / "long.bin"),
        "rw": "randread",
        "size": "4m",
        "runtime_s": 120,
    }
    run_id = launch_run("fio_cs", config, data_dir=data)
    # the fixture's servers are this process's children; their jobs run in children of theirs
    listeners = [
        child
        for child in psutil.Process().children()
        if any(f"--server=127.0.0.1,{port}" in child.cmdline() for port in fio_servers)
    ]
    assert len(listeners) == 2
    deadline = time.monotonic() + 30
    while not all(listener.children(recursive=True) for listener in listeners):
        assert time.monotonic() < deadline, "the servers never started the job"
        time.sleep(0.2)
    time.sleep(4)  # the file laid out, seconds of reads done
    started = time.monotonic()
    assert stop_run(run_id, data) is RunState.STOPPED
    while any(listener.children(recursive=True) for listener in listeners):
        assert time.monotonic() - started < 15, "a server's job outlived the stop"
        time.sleep(0.1)
    with Store.open(data) as store:
        result = store.result(run_id)
    assert result is not None
    assert sorted(h["server"] for h in result["hosts"]) == sorted(config["servers"])
    assert all(h["read"]["io_bytes"] > 0 for h in result["hosts"]), result["hosts"]
