"""oratcptest: parsers on the real outputs, live parsing, argv and validation, the java finder,
and both ends run for real through the emulator (tests/fakes/oratcptest) on 127.0.0.1, as a
pair of recorded runs (core/pair_runs), the way the UI starts them."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from racperf_tui.core import settings
from racperf_tui.core.contract.events import RunState
from racperf_tui.core.ports import check_listen_port
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import PairStartError, launch_pair, wait_for_server_ready
from racperf_tui.orchestration.runs import launch_run, wait_for_run
from racperf_tui.tools import load_tool
from racperf_tui.tools import oratcptest as ot
from tests.helpers import TESTS_DIR
from tests.helpers.pair_helpers import assert_client_started_after_server_ready, run_pair_to_end

TESTS = TESTS_DIR
FIXTURES = TESTS / "fixtures" / "oratcptest"
FAKE = TESTS / "fakes" / "oratcptest"
FAST = {"RACPERF_FAKE_TIMESCALE": "0.02"}


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def jar(tmp_path: Path) -> Path:
    """A stand-in jar file: the emulator ignores it, build_argv insists that it exists."""
    path = tmp_path / "oratcptest.jar"
    path.write_bytes(b"PK\x03\x04")
    return path


@pytest.fixture
def ends(jar: Path) -> tuple[dict, dict]:
    """Server and client configs running the emulator as the java, on a free loopback port."""
    port = free_port()
    common = {"java": str(FAKE), "jar_path": str(jar), "port": port}
    return (
        {**common, "role": "server", "host": "127.0.0.1"},
        {**common, "role": "client", "host": "127.0.0.1", "interval_s": 2, "duration_s": 10},
    )


# --------------------------------------------------------------------------- parsers


def test_parse_sync_client_sample() -> None:
    result = ot.parse_output(read("oratcptest-sync-client.txt"))
    assert result["tool"] == "oratcptest" and result["role"] == "client"
    assert result["mode"] == "SYNC"
    assert result["message_payload_bytes"] == 1048576
    assert (result["interval_s"], result["duration_s"]) == (2, 30)
    assert result["number_of_connections"] == 1
    assert result["server_ready_time"] == "13:53:34"
    samples = result["samples"]
    assert len(samples) == 15
    assert samples[0] == {"time": "13:53:36", "throughput_mib_s": 90.170, "latency_ms": 11.090}
    assert samples[-1] == {"time": "13:54:04", "throughput_mib_s": 91.570, "latency_ms": 10.921}
    assert result["socket_send_buffer_bytes"] == 326400
    assert result["avg_throughput_mib_s"] == 98.549
    assert result["avg_latency_ms"] == 10.147
    assert result["parameters"]["transport_mode"] == "SYNC"
    assert ot.succeeded(result, 0) == (True, "finished")


def test_parse_async_client_has_no_latency_keys() -> None:
    result = ot.parse_output(read("oratcptest-async-client.txt"))
    assert result["mode"] == "ASYNC"
    assert [s["throughput_mib_s"] for s in result["samples"]] == [151.234, 151.423, 151.387, 150.368, 142.243]
    assert all("latency_ms" not in s for s in result["samples"])
    assert "avg_latency_ms" not in result
    assert result["avg_throughput_mib_s"] == 149.284
    assert result["socket_send_buffer_bytes"] == 898560
    assert (result["interval_s"], result["duration_s"]) == (2, 10)


def test_parse_zero_length_sync_client() -> None:
    result = ot.parse_output(read("oratcptest-sync-length0-client.txt"))
    assert result["message_payload_bytes"] == 0
    assert (result["interval_s"], result["duration_s"]) == (1, 1)
    assert result["samples"] == [{"time": "12:07:44", "throughput_mib_s": 0.046, "latency_ms": 0.250}]
    assert (result["avg_throughput_mib_s"], result["avg_latency_ms"]) == (0.046, 0.250)
    assert result["socket_send_buffer_bytes"] == 166400


def test_parse_server_sample() -> None:
    result = ot.parse_output(read("oratcptest-server.txt"))
    assert result["role"] == "server" and result["started"] is True
    (test,) = result["tests"]
    assert test["message_payload_bytes"] == 1048576
    assert test["disk_write"] is False
    assert test["socket_receive_buffer_requested"] == "(system default)"
    assert test["socket_receive_buffer_bytes"] == 968880
    assert ot.succeeded(result, 0)[0]


def test_parse_port_in_use_sample() -> None:
    result = ot.parse_output(read("oratcptest-server-port-in-use.txt"))
    assert result["started"] is False
    assert result["error"] == "Failed to listen a socket : Address already in use"
    assert ot.succeeded(result, 1) == (False, "Failed to listen a socket : Address already in use")


def test_parse_rejects_other_output() -> None:
    with pytest.raises(ValueError, match="not oratcptest output"):
        ot.parse_output("Connecting to host 127.0.0.1, port 5201\n")


def test_racperf_parse_cli() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "racperf_tui",
            "parse",
            "oratcptest",
            str(FIXTURES / "oratcptest-sync-client.txt"),
            str(FIXTURES / "oratcptest-async-client.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    sync, async_ = (json.loads(line) for line in proc.stdout.splitlines())
    assert sync["avg_latency_ms"] == 10.147 and len(sync["samples"]) == 15
    assert async_["mode"] == "ASYNC" and "avg_latency_ms" not in async_


# --------------------------------------------------------------------------- live parser


def test_stream_parser_uses_oratcptests_clock() -> None:
    parser = ot.TOOL.stream_parser({"mode": "SYNC"})
    samples = [s for line in read("oratcptest-sync-client.txt").splitlines() for s in parser.feed(line)]
    assert parser.finish() == []
    assert len(samples) == 15
    assert [s.t for s in samples[:3]] == [2.0, 4.0, 6.0] and samples[-1].t == 30.0
    assert samples[0].metrics == {"throughput_mib_s": 90.170, "latency_ms": 11.090}
    assert samples[0].extra == {"time": "13:53:36"}


def test_stream_parser_async_and_midnight() -> None:
    parser = ot.stream_parser({"mode": "ASYNC"})
    lines = [
        "(23:59:58) The server is ready.",
        "                        Throughput",
        "(00:00:00)        151.234 Mbytes/s",
        "(00:00:02)        150.000 Mbytes/s",
        "(00:00:02) Test finished.",
    ]
    samples = [s for line in lines for s in parser.feed(line)]
    assert [(s.t, s.metrics) for s in samples] == [
        (2.0, {"throughput_mib_s": 151.234}),
        (4.0, {"throughput_mib_s": 150.0}),
    ]


# --------------------------------------------------------------------------- argv, validation


def test_client_and_server_argv(jar: Path) -> None:
    base = {"java": str(FAKE), "jar_path": str(jar)}
    client = ot.build_argv(
        {
            **base,
            "host": "stby1",
            "port": 1521,
            "mode": "async",
            "num_conn": 2,
            "sockbuf_bytes": "2M",
            "length_bytes": "64k",
            "delay_ms": 5,
            "random_delay": True,
            "payload": "zero",
            "interval_s": "2s",
            "duration_s": "1m",
            "timeout_s": 30,
            "write": True,
            "freq": "5m/1h",
            "output": "/tmp/o.txt",
        }
    )
    assert client == [
        str(FAKE),
        "-jar",
        str(jar),
        "stby1",
        "-port=1521",
        "-write",
        "-mode=ASYNC",
        "-num_conn=2",
        "-sockbuf=2097152",
        "-length=65536",
        "-delay=5",
        "-random_delay",
        "-payload=ZERO",
        "-interval=2s",
        "-duration=60s",
        "-freq=5m/1h",
        "-timeout=30s",
        "-output=/tmp/o.txt",
    ]
    rtt = ot.build_argv({**base, "host": "h", "rtt": True, "interval_s": 1, "duration_s": 5})
    assert rtt[3:] == ["h", "-port=5555", "-rtt", "-interval=1s", "-duration=5s"]
    server = ot.build_argv(
        {**base, "role": "server", "host": "10.0.0.2", "port": 1521, "file": "/u01/x.dat", "sockbuf_bytes": 4194304}
    )
    assert server == [
        str(FAKE),
        "-jar",
        str(jar),
        "-server",
        "10.0.0.2",
        "-port=1521",
        "-file=/u01/x.dat",
        "-sockbuf=4194304",
    ]
    assert ot.build_argv({**base, "role": "server"})[3:] == ["-server", "-port=5555"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"host": ""}, "the client needs host"),
        ({"mode": "FAST"}, "^oratcptest: mode must be one of SYNC, ASYNC, got 'FAST'$"),
        ({"rtt": True, "mode": "ASYNC"}, "cannot be combined with mode=ASYNC"),
        ({"rtt": True, "length_bytes": 100}, "rtt sends empty messages"),
        ({"interval_s": 20, "duration_s": 10}, r"interval_s \(20 s\) is longer than duration_s \(10 s\)"),
        ({"duration_s": None}, "duration_s is required"),
        ({"interval_s": 0.5}, "whole seconds"),
        ({"port": 70000}, "^oratcptest: port must be 1 to 65535, got 70000$"),
        ({"num_conn": 2.5}, "^oratcptest: num_conn must be a whole number, got 2.5$"),
        ({"num_conn": 0}, "num_conn must be at least 1"),
        ({"random_delay": True}, "set delay_ms > 0"),
        ({"random_length": True, "length_bytes": 100}, "length_bytes must be >= 512"),
        ({"payload": "/no/such/file"}, "payload must be RANDOM, ZERO or an existing file"),
        ({"freq": "often"}, "freq must look like EVERY/TOTAL"),
        ({"freq": "5s/1h"}, "shorter than one test"),
        ({"length_bytes": "12 parsecs"}, r"length_bytes: .12 parsecs. is not a size like 512, 8k, 1M or 2g"),
        ({"file": "/tmp/x"}, "file is a server option"),
        ({"colour": "red"}, "unknown option"),
    ],
)
def test_validation_messages(jar: Path, config: dict, message: str) -> None:
    base = {"java": str(FAKE), "jar_path": str(jar), "host": "h", "interval_s": 2, "duration_s": 10}
    with pytest.raises(ValueError, match=message):
        ot.build_argv({**base, **config})


def test_server_rejects_client_options(jar: Path) -> None:
    with pytest.raises(ValueError, match="write are client options"):
        ot.build_argv({"java": str(FAKE), "jar_path": str(jar), "role": "server", "write": True})


def test_hard_limits() -> None:
    assert ot.hard_limit_s({"host": "h", "interval_s": 2, "duration_s": 30}) == pytest.approx(30 * 1.1 + 30)
    assert ot.hard_limit_s(
        {"host": "h", "interval_s": 2, "duration_s": 30, "freq": "1m/10m", "timeout_s": 5}
    ) == pytest.approx((600 + 30) * 1.1 + 5 + 30)
    assert ot.hard_limit_s({"role": "server", "server_lifetime_s": 120}) == 120


# --------------------------------------------------------------------------- java and jar


def _fake_java(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "java"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_java_finder_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    explicit = _fake_java(tmp_path / "explicit")
    java_home = tmp_path / "jh"
    oracle_home = tmp_path / "oh"
    on_path = _fake_java(tmp_path / "pathdir")
    monkeypatch.setenv("PATH", str(on_path.parent))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("ORACLE_HOME", raising=False)
    assert ot.locate_java({}) == (str(on_path), "PATH")
    monkeypatch.setenv("ORACLE_HOME", str(oracle_home))
    assert ot.locate_java({})[1] == "PATH"  # no jdk in this Oracle home yet
    oh_java = _fake_java(oracle_home / "jdk" / "bin")
    assert ot.locate_java({}) == (str(oh_java), "$ORACLE_HOME")
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    jh_java = _fake_java(java_home / "bin")
    assert ot.locate_java({}) == (str(jh_java), "$JAVA_HOME")
    settings.set(ot.SETTING_JAVA, str(explicit))
    assert ot.locate_java({}) == (str(explicit), "the setting oratcptest.java")
    assert ot.locate_java({"java": str(on_path)}) == (str(on_path), "the java option")
    with pytest.raises(ValueError, match="is not an executable file"):
        ot.locate_java({"java": str(tmp_path / "nope")})


def test_no_java_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nojdk"))
    monkeypatch.delenv("ORACLE_HOME", raising=False)
    with pytest.raises(ValueError, match=r"oratcptest needs Java .*nojdk/bin/java, \$ORACLE_HOME \(not set\)"):
        ot.find_java({})


def test_jar_configured_once(jar: Path, data_dir: Path) -> None:
    with pytest.raises(ValueError, match="path of oratcptest.jar is not configured"):
        ot.build_argv({"java": str(FAKE), "host": "h", "interval_s": 1, "duration_s": 2})
    with pytest.raises(ValueError, match="does not exist"):
        ot.build_argv(
            {"java": str(FAKE), "jar_path": str(jar) + ".missing", "host": "h", "interval_s": 1, "duration_s": 2}
        )
    ot.remember_jar_path(str(jar))
    assert json.loads((data_dir / "settings.json").read_text()) == {"oratcptest.jar_path": str(jar)}
    argv = ot.build_argv({"java": str(FAKE), "host": "h", "interval_s": 1, "duration_s": 2})
    assert argv[:3] == [str(FAKE), "-jar", str(jar)]


# --------------------------------------------------------------------------- both ends, for real


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator's clock runs 50 times faster (the detached supervisors inherit it)."""
    monkeypatch.setenv("RACPERF_FAKE_TIMESCALE", "0.02")


def test_pair_starts_client_after_server_ready(ends: tuple[dict, dict], data_dir: Path, fast: None) -> None:
    """Both ends as runs of the store (detached supervisors), as the UI starts them."""
    server, client = ends
    done = run_pair_to_end("oratcptest", server, client, data_dir)
    assert done.client.state is RunState.SUCCEEDED, done.client.message
    assert_client_started_after_server_ready(done, "OraTcpTest server started.")
    assert "oratcptest emulator" in (done.client.tool_version or "")
    # live: one Sample per interval line, as they came
    samples = done.samples
    assert [s.t for s in samples] == [2.0, 4.0, 6.0, 8.0, 10.0]
    assert samples[0].metrics == {"throughput_mib_s": 90.170, "latency_ms": 11.090}
    assert samples[1].metrics == {"throughput_mib_s": 81.076, "latency_ms": 12.334}
    result = done.client_result
    assert result["mode"] == "SYNC" and result["interval_s"] == 2 and result["duration_s"] == 10
    assert len(result["samples"]) == 5
    assert result["avg_throughput_mib_s"] == pytest.approx(
        sum(s.metrics["throughput_mib_s"] for s in samples) / 5, abs=0.001
    )
    assert result["socket_send_buffer_bytes"] > 0
    # the server's side is kept: it really served this test
    assert done.server.state.finished
    assert "[A test was requested.]" in done.server_output
    (test,) = done.server_result["tests"]
    assert test["message_payload_bytes"] == 1048576 and test["socket_receive_buffer_bytes"] > 0


def test_pair_async_mode(ends: tuple[dict, dict], data_dir: Path, fast: None) -> None:
    server, client = ends
    done = run_pair_to_end("oratcptest", server, {**client, "mode": "ASYNC", "num_conn": 2}, data_dir)
    assert done.client.state is RunState.SUCCEEDED, done.client.message
    assert done.client_result["mode"] == "ASYNC"
    assert done.client_result["number_of_connections"] == 2
    assert "avg_latency_ms" not in done.client_result


def test_client_without_server_fails(ends: tuple[dict, dict]) -> None:
    _, client = ends
    proc = subprocess.run(ot.build_argv(client), capture_output=True, text=True, timeout=30, env={**os.environ, **FAST})
    assert proc.returncode == 1
    assert "Failed to connect a socket : Connection refused" in proc.stdout
    ok, reason = ot.succeeded(ot.parse_output(proc.stdout), proc.returncode)
    assert not ok and "Failed to connect" in reason


def test_port_in_use_is_refused_with_a_suggestion(ends: tuple[dict, dict], data_dir: Path, fast: None) -> None:
    server, client = ends
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", server["port"]))
        squatter.listen(1)
        started = time.monotonic()
        with pytest.raises(PairStartError) as refused:
            launch_pair("oratcptest", server, client, data_dir=data_dir)
        assert re.search(
            rf"127\.0\.0\.1:{server['port']} is already in use by .*use another port, e\.g\. \d+", str(refused.value)
        )
        with Store.open(data_dir) as store:
            assert store.list_runs() == []  # refused before anything started
        # and if something slips past the check, the server's own failure ends the wait, no hang
        server_run = launch_run("oratcptest", {**server, "role": "server"}, data_dir=data_dir)
        with pytest.raises(PairStartError) as failed:
            wait_for_server_ready(
                server_run,
                data_dir,
                ot.PAIR.ready_pattern,
                ot.PAIR.failure_pattern,
                10,
                failure_hint=ot.PAIR.failure_hint,
            )
        record = wait_for_run(server_run, data_dir, 10)
        assert time.monotonic() - started < 10
    assert "Failed to listen a socket : Address already in use" in str(failed.value)
    assert "pick another port" in str(failed.value)
    assert record.state.finished and record.state is not RunState.SUCCEEDED
    with Store.open(data_dir) as store:
        assert [r.id for r in store.list_runs()] == [server_run]  # no client run


def test_server_readiness_timeout_stops_the_server(data_dir: Path) -> None:
    """A server that never says it is ready: the pair gives up after the timeout, with the
    server's words, and the server's process is gone (no client run was started)."""
    started = time.monotonic()
    with pytest.raises(PairStartError) as timed_out:
        launch_pair("tests.fakes.silent_server_tool", {"port": 0}, {}, data_dir=data_dir, ready_timeout_s=0.5)
    assert time.monotonic() - started < 10
    message = str(timed_out.value)
    assert "did not say it was ready within 0.5 s" in message and "starting" in message
    pid = int(re.search(r"starting (\d+)", message)[1])
    with Store.open(data_dir) as store:
        (server_run,) = store.list_runs()
    assert server_run.config["role"] == "server" and server_run.state.finished
    assert not (psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)


def test_database_listener_ports_are_flagged() -> None:
    check = check_listen_port(1521, "127.0.0.1", what="the oratcptest server")
    if check.in_use:  # a listener runs here: refused, and said so
        assert check.problem and "in use" in check.problem
    else:
        assert check.ok and "default Oracle Net listener port" in check.warning


def test_tool_is_registered() -> None:
    module = load_tool("oratcptest")
    assert module.TOOL.name == "oratcptest"
    assert callable(module.parse_output)
