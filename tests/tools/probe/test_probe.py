"""The built-in probe: the real server (under python 3.6 when it is here) and the real client on
127.0.0.1, the parsers, the Tool, and the pair of runs through the runs machinery."""

from __future__ import annotations

import ast
import io
import json
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.core.units import MIB
from racperf_tui.tools import probe
from racperf_tui.tools.probe import TOOL, parse_output
from racperf_tui.tools.probe import client as probe_client
from racperf_tui.tools.probe import server as probe_server
from racperf_tui.tools.probe.client import ClientOptions, run_client
from tests.helpers import REPO, racperf_cmd

PYTHON36 = Path("/root/.pyenv/versions/3.6.15/bin/python3")
SERVER_PYTHONS = [sys.executable] + ([str(PYTHON36)] if PYTHON36.exists() else [])


class ProbeServerProcess:
    """A real probe server process on 127.0.0.1 with an ephemeral port."""

    def __init__(self, python: str, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [python, "-u", str(probe.PROBE_SERVER_PATH), "--bind", "127.0.0.1", "--port", "0", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        first = self.first_line = self.proc.stdout.readline()
        match = probe.READY_PATTERN.search(first)
        if not match:
            self.stop()
            raise AssertionError(f"server did not get ready: {first!r}")
        self.port = int(match.group("port"))

    def output(self, timeout_s: float = 10.0) -> str:
        """Stop (if still running) and return the rest of its output."""
        if self.proc.poll() is None:
            self.proc.terminate()
        out, _ = self.proc.communicate(timeout=timeout_s)
        return self.first_line + out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture(params=SERVER_PYTHONS, ids=lambda p: "py36" if "3.6" in p else "venv")
def server(request: pytest.FixtureRequest) -> Iterator[ProbeServerProcess]:
    srv = ProbeServerProcess(request.param)
    try:
        yield srv
    finally:
        srv.stop()


def client(port: int, **options) -> tuple[dict, str]:
    out = io.StringIO()
    result = run_client(ClientOptions(host="127.0.0.1", port=port, **options), out)
    return result, out.getvalue()


# ---------------------------------------------------------------- the real thing


def test_sync_throughput_and_latency_are_consistent(server: ProbeServerProcess) -> None:
    result, text = client(server.port, mode="SYNC", length_bytes=64 * 1024, duration_s=1.0, interval_s=0.25)
    assert result["error"] is None
    assert result["messages"] > 10
    assert result["bytes_sent"] == result["messages"] * 64 * 1024
    assert result["server_bytes_received"] == result["bytes_sent"]
    assert result["avg_throughput_mib_s"] == pytest.approx(result["bytes_sent"] / result["elapsed_s"] / MIB, rel=1e-6)
    assert 0 < result["latency_p50_ms"] <= result["latency_p99_ms"] <= result["latency_max_ms"] * 1.01
    assert result["avg_latency_ms"] > 0
    # with one connection, throughput x latency ~= message size (minus the gaps between)
    assert result["avg_throughput_mib_s"] * result["avg_latency_ms"] / 1000 <= 64 / 1024 * 1.05
    # the printed text parses back to the same figures
    parsed = parse_output(text)
    assert parsed["messages"] == result["messages"]
    assert parsed["server_bytes_received"] == result["bytes_sent"]
    assert parsed["avg_latency_ms"] == pytest.approx(result["avg_latency_ms"], abs=0.0006)
    assert 3 <= len(parsed["samples"]) <= 5
    assert all(s["latency_ms"] > 0 for s in parsed["samples"])
    mean_interval = sum(s["throughput_mib_s"] for s in parsed["samples"]) / len(parsed["samples"])
    assert mean_interval == pytest.approx(result["avg_throughput_mib_s"], rel=0.25)
    server_result = parse_output(server.output())
    assert server_result["connections"][0]["bytes_received"] == result["bytes_sent"]
    assert server_result["connections"][0]["mode"] == "SYNC"


def test_async_counts_every_byte(server: ProbeServerProcess) -> None:
    result, text = client(server.port, mode="ASYNC", length_bytes=MIB, duration_s=1.0, interval_s=0.5, num_conn=2)
    assert result["error"] is None
    assert result["server_bytes_received"] == result["bytes_sent"] > 0
    assert "avg_latency_ms" not in result
    assert "Latency" not in text
    samples = parse_output(text)["samples"]
    assert len(samples) == 2 and all("latency_ms" not in s for s in samples)
    server_result = parse_output(server.output())
    assert len(server_result["connections"]) == 2
    assert server_result["bytes_received"] == result["bytes_sent"]


def test_udp_requests_answered_with_latency_loss_and_the_mtu_check(server: ProbeServerProcess) -> None:
    """UDP mode on loopback: 8 KiB requests, four in flight, none lost; the don't-fragment
    probe at lo's MTU (65535: 65507 bytes of UDP payload) got through."""
    result, text = client(server.port, mode="UDP", length_bytes=8192, num_conn=4, duration_s=1.0, interval_s=0.5)
    assert result["error"] is None, text
    assert result["messages"] > 100
    assert result["datagrams_lost"] == 0 and result["loss_pct"] == 0.0
    # what was neither answered nor lost was in flight at the end: the window at most
    assert 0 <= result["datagrams_sent"] - result["messages"] <= 4
    assert result["bytes_sent"] == result["messages"] * 8192
    assert 0 < result["latency_p50_ms"] <= result["latency_p99_ms"] <= result["latency_max_ms"] * 1.01
    assert result["mtu_local"] == result["mtu_remote"] == 65535
    assert result["df_probe_bytes"] == 65535 - 28 and result["df_probe_ok"] is True
    parsed = parse_output(text)
    for key in ("datagrams_sent", "datagrams_lost", "mtu_local", "mtu_remote", "df_probe_bytes", "df_probe_ok"):
        assert parsed[key] == result[key], key
    assert parsed["loss_pct"] == 0.0 and parsed["latency_p99_ms"] == pytest.approx(result["latency_p99_ms"], abs=6e-4)
    assert parsed["mtu_note"] == "a 65507-byte don't-fragment datagram (MTU 65535) got through"
    assert len(parsed["samples"]) == 2 and all(s["loss_pct"] == 0.0 and s["latency_ms"] > 0 for s in parsed["samples"])
    served = parse_output(server.output())["connections"][0]
    # the server answered every request the client counted (the MTU probe is not counted)
    assert served["mode"] == "UDP" and result["messages"] <= served["messages"] <= result["datagrams_sent"]
    assert served["bytes_received"] == served["messages"] * 8192


def test_udp_mode_refuses_what_it_cannot_do() -> None:
    with pytest.raises(ValueError, match="^probe: length must be 1 to 65499 bytes \\(UDP\\), got 70000$"):
        ClientOptions(host="h", mode="UDP", length_bytes=70000).validate()
    with pytest.raises(ValueError, match="^probe: write needs SYNC or ASYNC mode"):
        ClientOptions(host="h", mode="UDP", length_bytes=8192, write=True).validate()


def test_rtt_mode_sends_empty_messages(server: ProbeServerProcess) -> None:
    result, text = client(server.port, rtt=True, duration_s=0.5, interval_s=0.5)
    assert result["error"] is None and result["rtt"] is True
    assert result["bytes_sent"] == 0 and result["server_bytes_received"] == 0
    assert result["messages"] > 100
    assert 0 < result["avg_latency_ms"] < 50
    assert "0 bytes (RTT)" in text
    assert parse_output(text)["rtt"] is True


def test_write_and_fsync_every_message_before_the_ack(tmp_path: Path) -> None:
    target = tmp_path / "redo.dat"
    srv = ProbeServerProcess(SERVER_PYTHONS[-1], "--write-file", str(target), "--once")
    try:
        result, text = client(
            srv.port, mode="SYNC", length_bytes=16 * 1024, write=True, duration_s=0.5, interval_s=0.5, payload="RANDOM"
        )
        out = srv.output()
    finally:
        srv.stop()
    assert result["error"] is None
    assert target.stat().st_size == result["bytes_sent"] == result["server_bytes_written"]
    assert result["server_fsyncs"] == result["messages"] > 0
    assert "Disk write             = YES" in text
    assert "wrote" in out and f"{result['messages']} fsyncs" in out
    assert parse_output(text)["server_fsyncs"] == result["messages"]
    # --once: the server ended by itself after the test
    assert srv.proc.returncode == 0


def test_write_without_server_file_uses_a_removed_temp_file(tmp_path: Path) -> None:
    srv = ProbeServerProcess(sys.executable, "--write-dir", str(tmp_path), "--once")
    try:
        result, _ = client(srv.port, mode="ASYNC", length_bytes=256 * 1024, write=True, duration_s=0.3, interval_s=0.3)
        srv.output()
    finally:
        srv.stop()
    assert result["server_bytes_written"] == result["bytes_sent"] > 0
    assert result["server_fsyncs"] >= 1
    assert list(tmp_path.iterdir()) == []


def test_once_waits_for_all_connections_of_the_test() -> None:
    srv = ProbeServerProcess(sys.executable, "--once")
    try:
        result, _ = client(srv.port, num_conn=3, length_bytes=4096, duration_s=0.3, interval_s=0.3)
        out = srv.output()
    finally:
        srv.stop()
    assert result["error"] is None
    assert out.count("[The test terminated.]") == 3
    assert "Probe server stopped." in out


def test_port_in_use_is_a_clear_failure(server: ProbeServerProcess) -> None:
    second = subprocess.run(
        [sys.executable, str(probe.PROBE_SERVER_PATH), "--bind", "127.0.0.1", "--port", str(server.port)],
        capture_output=True,
        text=True,
        timeout=10,
    )
    assert second.returncode == 1
    assert f"Failed to listen on 127.0.0.1:{server.port}: Address already in use" in second.stdout
    assert probe.PORT_IN_USE_PATTERN.search(second.stdout)
    assert parse_output(second.stdout)["error"].startswith("Failed to listen")


def test_connection_refused_is_reported_not_raised() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result, text = client(port, duration_s=1)
    assert "Connection refused" in result["error"]
    parsed = parse_output(text)
    assert "Connection refused" in parsed["error"]
    assert TOOL.succeeded(parsed, 1)[0] is False


def test_server_refuses_a_foreign_client(server: ProbeServerProcess) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        answer = sock.recv(200)
    assert answer.startswith(b"ERR not a racperf probe client")
    # and it keeps serving
    result, _ = client(server.port, length_bytes=1024, duration_s=0.2, interval_s=0.2)
    assert result["error"] is None


def test_cli_client_and_exit_status(server: ProbeServerProcess) -> None:
    ok = subprocess.run(
        racperf_cmd()
        + [
            "probe",
            "client",
            "127.0.0.1",
            "--port",
            str(server.port),
            "--duration",
            "0.5",
            "--interval",
            "0.25",
            "--length",
            "8K",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    parsed = parse_output(ok.stdout)
    assert parsed["message_payload_bytes"] == 8192 and parsed["mode"] == "SYNC"
    bad = subprocess.run(
        racperf_cmd() + ["probe", "client", "127.0.0.1", "--port", str(server.port), "--mode", "async", "--rtt"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    # a refused option is an error message on stderr; stdout stays parseable output only
    assert bad.returncode == 2 and "rtt needs SYNC" in bad.stderr and bad.stdout == ""
    path = subprocess.run(racperf_cmd() + ["probe", "server-path"], capture_output=True, text=True, timeout=30)
    assert Path(path.stdout.strip()) == probe.PROBE_SERVER_PATH


# ---------------------------------------------------------------- the server file stays 3.6-clean


@pytest.mark.parametrize("path", [probe.PROBE_SERVER_PATH, probe.PROBE_CLIENT_PATH], ids=["server", "client"])
def test_each_end_file_is_stdlib_only_and_36_syntax(path: Path) -> None:
    source = path.read_text()
    tree = ast.parse(source)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.module != "__future__", "from __future__ import annotations needs 3.7"
            imported.add((node.module or "").split(".")[0])
        assert not isinstance(node, ast.NamedExpr), "walrus needs 3.8"
        assert not isinstance(node, ast.JoinedStr), "keep it .format(): runs on 3.6"
    assert imported <= set(sys.stdlib_module_names)
    assert "dataclasses" not in imported  # 3.7+
    assert "racperf_tui" not in imported
    if PYTHON36.exists():
        compiled = subprocess.run(
            [str(PYTHON36), "-c", "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')", str(path)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert compiled.returncode == 0, compiled.stderr


def test_the_client_file_speaks_the_server_files_protocol() -> None:
    """The client imports nothing of racperf: its copy of the wire constants is the server's."""
    for name in ("PROTOCOL_MAGIC", "DEFAULT_PORT", "MIB", "MAX_MESSAGE_BYTES", "MTU_PROBE_SEQ"):
        assert getattr(probe_client, name) == getattr(probe_server, name), name
    assert probe_client.MESSAGE_HEADER.format == probe_server.MESSAGE_HEADER.format
    assert probe_client.UDP_HEADER.size == probe_server.UDP_ECHO_BYTES


def test_the_client_file_alone_measures_under_each_python(server: ProbeServerProcess, tmp_path: Path) -> None:
    """The file copied somewhere without racperf, run by that python (3.6 when it is here, as
    on an old node): the same lines and figures as the racperf client's."""
    python = server.proc.args[0]
    copy = tmp_path / probe.CLIENT_FILE_NAME
    copy.write_text(probe.client_source())
    argv = TOOL.build_argv({"host": "127.0.0.1", "port": server.port, "duration_s": 1, "interval_s": 0.5})
    done = subprocess.run(
        [python, "-u", str(copy), *argv[4:]],
        capture_output=True, text=True, timeout=30, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = parse_output(done.stdout)
    assert result["error"] is None and result["messages"] > 10
    # no length given: 8 KiB messages, a RAC block (the default, docs/NETWORK.md)
    assert result["server_bytes_received"] == result["bytes_sent"] == result["messages"] * 8 * 1024
    assert len(result["samples"]) == 2 and all(s["latency_ms"] > 0 for s in result["samples"])
    bad = subprocess.run([python, str(copy), "127.0.0.1", "--rtt", "--mode", "ASYNC"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.strip() == (
        "probe: rtt needs SYNC mode (a round trip is a message and its ACK)"
    )


# ---------------------------------------------------------------- parsers and the Tool


ORATCPTEST_SAMPLE = REPO.parent / "shared" / "samples" / "oratcptest-sync-client.txt"


def test_stream_parser_reads_probe_and_oratcptest_shaped_lines() -> None:
    parser = TOOL.stream_parser({"interval_s": 2})
    samples = []
    for line in [
        "        Statistics interval    = 0.5 seconds",
        "(13:53:36)     90.170 Mbytes/s           11.090 ms",
        "(13:53:38)   4541.587 Mbytes/s",
        "(13:53:38) Test finished.",
    ]:
        samples += parser.feed(line)
    assert [s.t for s in samples] == [0.5, 1.0]
    assert samples[0].metrics == {
        "throughput_mib_s": 90.17,
        "throughput_mbit_s": pytest.approx(90.17 * 1.048576 * 8),
        "latency_ms": 11.09,
    }
    assert "latency_ms" not in samples[1].metrics
    if ORATCPTEST_SAMPLE.exists():  # one parser style fits both
        oracle = TOOL.stream_parser({})
        got = [s for line in ORATCPTEST_SAMPLE.read_text().splitlines() for s in oracle.feed(line)]
        assert len(got) == 15 and got[0].metrics["latency_ms"] == 11.09 and got[-1].t == 30.0


def test_parse_output_rejects_foreign_text() -> None:
    with pytest.raises(ValueError, match="not racperf probe output"):
        parse_output("hello\n")


def test_unfinished_client_output_is_an_error() -> None:
    text = "[Requesting a test]\n        Transport mode         = SYNC\n(10:00:00) The server is ready.\n"
    assert "did not finish" in parse_output(text)["error"]


def test_build_argv_server_and_client() -> None:
    server_argv = TOOL.build_argv(
        {
            "role": "server",
            "bind": "127.0.0.1",
            "port": 0,
            "write_file": "/u01/redo.dat",
            "fsync": True,
            "python": "/usr/bin/python3",
        }
    )
    assert server_argv == [
        "/usr/bin/python3",
        "-I",
        "-u",
        str(probe.PROBE_SERVER_PATH),
        "--bind",
        "127.0.0.1",
        "--port",
        "0",
        "--once",
        "--write-file",
        "/u01/redo.dat",
        "--fsync",
    ]
    client_argv = TOOL.build_argv(
        {
            "host": "stby",
            "port": 6000,
            "mode": "async",
            "length": "8K",
            "num_conn": 4,
            "delay_ms": 5,
            "write": True,
            "interval_s": 1,
            "duration_s": 60,
            "sockbuf": "4M",
        }
    )
    assert client_argv[:4] == [sys.executable, "-I", "-u", str(probe.PROBE_CLIENT_PATH)]
    assert client_argv[4:] == [
        "stby",
        "--port",
        "6000",
        "--mode",
        "ASYNC",
        "--num-conn",
        "4",
        "--interval",
        "1",
        "--duration",
        "60",
        "--payload",
        "ZERO",
        "--length",
        "8192",
        "--delay-ms",
        "5",
        "--write",
        "--sockbuf",
        str(4 * MIB),
    ]
    assert "--rtt" in TOOL.build_argv({"host": "h", "rtt": True})


@pytest.mark.parametrize(
    "config, message",
    [
        ({}, "^probe: host must be set"),
        ({"host": "h", "mode": "FAST"}, "^probe: mode must be one of SYNC, ASYNC, UDP, got 'FAST'$"),
        ({"host": "h", "length": "lots"}, "^probe: length: 'lots' is not a size"),
        ({"host": "h", "num_conn": 0}, "^probe: num_conn must be 1 to 256, got 0$"),
        ({"host": "h", "num_conn": "two"}, "^probe: num_conn must be a whole number, got 'two'$"),
        ({"host": "h", "interval_s": 0}, "^probe: interval_s must be 0.1 to 3600 s, got 0$"),
        ({"host": "h", "rtt": True, "mode": "ASYNC"}, "^probe: rtt needs SYNC"),
        ({"role": "relay"}, "^probe: role must be one of client, server, got 'relay'$"),
        ({"role": "server", "port": 70000}, "^probe: port must be 0 to 65535, got 70000$"),
    ],
)
def test_bad_config_says_what(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TOOL.build_argv(config)


def test_parse_size() -> None:
    assert probe_client.parse_size("1M") == MIB
    assert probe_client.parse_size("8k") == 8192
    assert probe_client.parse_size("512") == 512
    assert probe_client.parse_size("2MiB") == 2 * MIB
    with pytest.raises(ValueError, match="not a size"):
        probe_client.parse_size("-1")


# ---------------------------------------------------------------- a pair of recorded runs


def test_pair_of_runs_records_both_ends(data_dir: Path) -> None:
    from racperf_tui.core.store import Store
    from racperf_tui.orchestration.pair_runs import finish_pair, launch_pair
    from racperf_tui.orchestration.runs import wait_for_run

    pair = launch_pair(
        "probe",
        {"bind": "127.0.0.1", "port": 0},
        {"host": "127.0.0.1", "port": 0, "duration_s": 1, "interval_s": 0.25, "length": "32K"},
        data_dir=data_dir,
    )
    assert pair.port and pair.port > 0
    record = wait_for_run(pair.client_run_id, data_dir, 30)
    finish_pair(pair, data_dir)
    with Store.open(data_dir) as store:
        assert record.state.value == "succeeded", record.message
        assert store.get_run(pair.server_run_id).state.value == "succeeded"
        samples = store.samples(pair.client_run_id)
        assert len(samples) >= 3 and all(s.metrics["latency_ms"] > 0 for _, s in samples)
        client_result = store.result(pair.client_run_id)
        server_result = store.result(pair.server_run_id)
        assert store.get_run(pair.client_run_id).config["peer_run_id"] == pair.server_run_id
    assert server_result["bytes_received"] == client_result["bytes_sent"] > 0


def test_pair_start_fails_clearly_on_a_taken_port(data_dir: Path) -> None:
    from racperf_tui.core.store import Store
    from racperf_tui.orchestration.pair_runs import PairStartError, launch_pair, wait_for_server_ready
    from racperf_tui.orchestration.runs import launch_run, wait_for_run

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        # checked before anything starts, with a suggestion
        with pytest.raises(PairStartError, match=r"already in use.*use another port"):
            launch_pair(
                "probe",
                {"bind": "127.0.0.1", "port": port},
                {"host": "127.0.0.1", "port": port},
                data_dir=data_dir,
                ready_timeout_s=10,
            )
        with Store.open(data_dir) as store:
            assert store.list_runs() == []
        # taken between the check and the start: the server's own words end the wait
        server_run = launch_run("probe", {"role": "server", "bind": "127.0.0.1", "port": port}, data_dir=data_dir)
        with pytest.raises(PairStartError, match="could not listen: Failed to listen on .*Address already in use"):
            wait_for_server_ready(server_run, data_dir, probe.READY_PATTERN, probe.PORT_IN_USE_PATTERN, 10)
        record = wait_for_run(server_run, data_dir, 10)
    assert record.state.value == "failed"


# ---------------------------------------------------------------- a hostile client


def _proc_status(pid: int) -> tuple[int, int]:
    """(VmRSS in KiB, thread count) of a live process, from /proc."""
    text = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+)", text).group(1))
    threads = int(re.search(r"Threads:\s+(\d+)", text).group(1))
    return rss, threads


def _hello(**fields) -> bytes:
    base = {
        "mode": "SYNC",
        "length": 1024,
        "write": False,
        "test_id": "t1",
        "conn_index": 1,
        "num_conn": 1,
        "sockbuf": 0,
    }
    base.update(fields)
    return probe_server.PROTOCOL_MAGIC + json.dumps(base).encode() + b"\n"


def _ask(port: int, line: bytes) -> bytes:
    """Send one hello line, return the server's one-line answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(line)
        return probe_client._recv_line(sock)


def _wait_for(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@pytest.mark.parametrize(
    "line, named",
    [
        (probe_server.PROTOCOL_MAGIC + b'{"mode": "SYNC", "length": Infinity}\n', "Infinity"),
        (probe_server.PROTOCOL_MAGIC + b'{"mode": "SYNC", "length": 1e999}\n', "'length' must be an integer"),
        (_hello(sockbuf=1e300), "'sockbuf' must be an integer"),
        (_hello(sockbuf=2**40), "'sockbuf' must be 0..268435456"),
        (_hello(length=2**40), "'length' must be 0..67108864"),
        (_hello(length=-1), "'length' must be 0..67108864"),
        (_hello(length=True), "'length' must be an integer"),
        (_hello(mode="FAST"), "'mode' must be SYNC, ASYNC or UDP"),
        (_hello(num_conn=10**6), "'num_conn' must be 1..256"),
        (_hello(write="yes"), "'write' must be true or false"),
        (_hello(test_id="\x1b[2J"), "'test_id' must be"),
        (probe_server.PROTOCOL_MAGIC + b"[" * 3000 + b"\n", "nested too deeply"),
        (probe_server.PROTOCOL_MAGIC + b"[1, 2]\n", "not a JSON object"),
        (probe_server.PROTOCOL_MAGIC + b"\xff\xfe{}\n", "bad request"),
        (probe_server.PROTOCOL_MAGIC + b"{" + b" " * 5000 + b"}\n", "longer than 4096 bytes"),
    ],
)
def test_a_bad_hello_gets_an_err_reply_naming_the_field(server: ProbeServerProcess, line: bytes, named: str) -> None:
    answer = _ask(server.port, line).decode()
    assert answer.startswith("ERR ") and named in answer, answer
    # the server lives on and serves a good client
    result, _ = client(server.port, length_bytes=1024, duration_s=0.2, interval_s=0.2)
    assert result["error"] is None
    out = server.output()
    assert "Traceback" not in out and "refused" not in out
    assert out.count("failed:") == 1


def test_hostile_clients_cost_bounded_memory_and_threads_then_time_out() -> None:
    srv = ProbeServerProcess(
        SERVER_PYTHONS[-1], "--max-connections", "40", "--handshake-timeout", "1", "--idle-timeout", "2"
    )
    held: list[socket.socket] = []
    try:
        base_rss, base_threads = _proc_status(srv.proc.pid)
        assert base_threads == 1
        # 3 SYNC connections announcing the largest message, then a header claiming all of it
        for _ in range(3):
            sock = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            sock.sendall(_hello(length=probe_server.MAX_MESSAGE_BYTES))
            assert probe_client._recv_line(sock).startswith(b"OK ")
            sock.sendall(probe_server.MESSAGE_HEADER.pack(probe_server.MAX_MESSAGE_BYTES) + b"x" * 1000)
            held.append(sock)
        # 12 ASYNC connections streaming a little, 25 that never say hello
        for _ in range(12):
            sock = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            sock.sendall(_hello(mode="ASYNC", length=MIB))
            assert probe_client._recv_line(sock).startswith(b"OK ")
            sock.sendall(bytes(MIB))
            held.append(sock)
        for _ in range(25):
            held.append(socket.create_connection(("127.0.0.1", srv.port), timeout=5))
        assert _wait_for(lambda: _proc_status(srv.proc.pid)[1] == 41, 3)
        # beyond the limit: refused at once, with the reason
        answers = [_ask(srv.port, _hello()) for _ in range(20)]
        assert all(a.startswith(b"ERR server busy: 40 connections open") for a in answers)
        rss, threads = _proc_status(srv.proc.pid)
        assert threads == 41
        # 15 reused 256 KiB buffers and 40 thread stacks' touched pages: a few MB, not GB
        assert rss - base_rss < 30 * 1024, (base_rss, rss)
        # the silent ones go after the handshake timeout, the rest after the idle timeout
        assert _wait_for(lambda: _proc_status(srv.proc.pid)[1] == 16, 3)
        assert _wait_for(lambda: _proc_status(srv.proc.pid)[1] == 1, 4)
        result, _ = client(srv.port, length_bytes=4096, duration_s=0.2, interval_s=0.2)
        assert result["error"] is None
        out = srv.output()
    finally:
        for sock in held:
            sock.close()
        srv.stop()
    assert "Traceback" not in out
    assert out.count("refused: server busy") == 20
    assert out.count("idle for 2 s (--idle-timeout)") == 15
    assert out.count("the hello must arrive within 1 s") == 25


def test_write_files_wrap_within_the_budget(tmp_path: Path) -> None:
    target = tmp_path / "redo.dat"
    srv = ProbeServerProcess(SERVER_PYTHONS[-1], "--write-file", str(target), "--max-write-bytes", "1M")
    try:
        result, _ = client(srv.port, mode="ASYNC", length_bytes=256 * 1024, write=True, duration_s=0.5, interval_s=0.5)
    finally:
        srv.stop()
    assert result["server_bytes_written"] == result["bytes_sent"] > 2 * MIB
    assert target.stat().st_size == MIB  # a ring: it wrapped, it did not grow


def test_write_tests_beyond_the_budget_are_refused_naming_the_dir(tmp_path: Path) -> None:
    srv = ProbeServerProcess(SERVER_PYTHONS[-1], "--write-dir", str(tmp_path), "--max-write-bytes", "1M")
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as first:
            first.sendall(_hello(write=True))
            ok = probe_client._recv_line(first)
            assert ok.startswith(b"OK ")
            assert json.loads(ok[3:])["write_file"].startswith(str(tmp_path))
            second = _ask(srv.port, _hello(write=True)).decode()
        # once the first is gone its share of the budget is back
        assert _wait_for(lambda: not list(tmp_path.iterdir()), 3)
        assert _ask(srv.port, _hello(write=True)).startswith(b"OK ")
    finally:
        srv.stop()
    assert second.startswith("ERR the server's write budget (1 MiB in ") and str(tmp_path) in second


def test_server_help_states_the_limits() -> None:
    text = subprocess.run(
        racperf_cmd() + ["probe", "server", "--help"], capture_output=True, text=True, timeout=30
    ).stdout
    flat = " ".join(text.split())
    for fragment in (
        "--max-connections N",
        "(default 256)",
        "--idle-timeout S",
        "(default 60;",
        "--handshake-timeout S",
        "(default 10)",
        "default 1024 MiB",
        "messages of at most 64 MiB",
        "256 KiB per connection",
        "at most 64 MiB (it wraps)",
    ):
        assert fragment in flat, fragment
