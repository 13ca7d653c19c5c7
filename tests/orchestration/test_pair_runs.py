"""core/pair_runs without running a pair: which tools have two ends (their module's PAIR),
the port check before a server starts (refusal with a suggestion; the database's ports a
warning), a recorded pair found again from either end; and ``racperf pair`` (headless, a real
probe pair on 127.0.0.1). The pairs of each tool run in test_iperf3, test_probe,
test_oratcptest, test_netperf."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.tool import PairSpec
from racperf_tui.core.ports import check_listen_port
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import PairStartError, _check_port, pair_spec, recorded_pair
from tests.helpers import racperf_cmd
from tests.helpers.pair_helpers import SHORT_PROBE_PAIR, probe_pair_command


@pytest.mark.parametrize(
    ("tool", "ready_line", "default_port"),
    [
        ("iperf3", "Server listening on 5201", 5201),
        ("probe", "Probe server listening on 127.0.0.1:40123", 5566),
        ("oratcptest", "OraTcpTest server started.", 5555),
        ("netperf", "Starting netserver with host 'IN(6)ADDR_ANY' port '12865' and family AF_UNSPEC", 12865),
    ],
)
def test_every_two_ended_tool_has_a_pair_spec(tool: str, ready_line: str, default_port: int) -> None:
    spec = pair_spec(tool)
    assert isinstance(spec, PairSpec) and spec.default_port == default_port
    assert spec.ready_pattern.search(ready_line)
    assert spec.failure_pattern is not None and not spec.failure_pattern.search(ready_line)
    assert spec.ready_timeout_s >= 15


def test_a_one_ended_tool_is_not_a_pair() -> None:
    with pytest.raises(ValueError, match="'fio' is not a server/client pair"):
        pair_spec("fio")


def test_port_check_refuses_a_taken_port_and_warns_of_the_databases() -> None:
    spec = pair_spec("netperf")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with pytest.raises(
            PairStartError,
            match=rf"127\.0\.0\.1:{port} is already in use by .*: netserver "
            r"could not listen there .*use another port, e\.g\. \d+",
        ):
            _check_port("netperf", spec, {"host": "127.0.0.1", "port": port})
    # no port given: the tool's default is checked; port 0: the server picks one, nothing to check
    assert _check_port("probe", pair_spec("probe"), {"bind": "127.0.0.1", "port": 0}) is None
    if check_listen_port(1521, "127.0.0.1").in_use:
        with pytest.raises(PairStartError, match="in use"):
            _check_port("oratcptest", pair_spec("oratcptest"), {"host": "127.0.0.1", "port": 1521})
    else:
        warning = _check_port("oratcptest", pair_spec("oratcptest"), {"host": "127.0.0.1", "port": 1521})
        assert warning and "default Oracle Net listener port" in warning


# --------------------------------------------------------------------------- racperf pair (headless)


def _pair_cmd(data_dir: Path, *args: str) -> list[str]:
    return probe_pair_command(racperf_cmd(), data_dir, *args)


def test_a_recorded_pair_is_found_from_either_end(data_dir: Path) -> None:
    """A server is named only by its client (``peer_run_id``): runs in between, a client of
    another server, a lone server and a one-ended run are told apart."""
    with Store.open(data_dir) as store:

        def run(tool: str, config: dict[str, object]) -> int:
            return store.create_run(tool, "local", None, config, [tool], None)

        server = run("probe", {"role": "server", "port": 0})
        other_client = run("probe", {"role": "client", "peer_run_id": 999})
        run("fio", {"target": "/tmp/x", "peer_run_id_note": server})
        client = run("probe", {"role": "client", "peer_run_id": server})
        lone = run("iperf3", {"role": "server"})
        fio = run("fio", {"target": "/tmp/y"})
        ends = [(r.id, r.config["role"]) for r in recorded_pair(store, server) or ()]
        assert ends == [(server, "server"), (client, "client")]
        assert [r.id for r in recorded_pair(store, client) or ()] == [server, client]
        assert recorded_pair(store, lone) is None and recorded_pair(store, fio) is None
        with pytest.raises(ValueError, match=f"run {other_client} is the probe client of run 999, which is not in"):
            recorded_pair(store, other_client)
        with pytest.raises(ValueError, match="no run 12345 in the store"):
            recorded_pair(store, 12345)


def test_racperf_pair_runs_both_ends_and_prints_json_lines(data_dir: Path) -> None:
    proc = subprocess.run(
        _pair_cmd(data_dir, *SHORT_PROBE_PAIR, "--set", "length=32K"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    head, *samples, client, server = lines
    assert head["type"] == "pair" and head["port"] > 0 and head["notes"] == []
    assert len(samples) >= 3 and all(s["type"] == "sample" and s["metrics"]["latency_ms"] > 0 for s in samples)
    assert (client["role"], client["run_id"], client["state"]) == ("client", head["client_run_id"], "succeeded")
    assert (server["role"], server["run_id"], server["state"]) == ("server", head["server_run_id"], "succeeded")
    assert server["result"]["bytes_received"] == client["result"]["bytes_sent"] > 0
    with Store.open(data_dir) as store:
        assert store.get_run(head["client_run_id"]).config["peer_run_id"] == head["server_run_id"]


def test_racperf_pair_refuses_a_taken_port(data_dir: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        proc = subprocess.run(
            _pair_cmd(data_dir, "--set", "host=127.0.0.1", "--set", f"port={port}"),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2 and proc.stdout == ""
    assert f"127.0.0.1:{port} is already in use" in proc.stderr and "use another port" in proc.stderr
    with Store.open(data_dir) as store:
        assert store.list_runs() == []


def test_racperf_pair_sigterm_stops_both_runs(data_dir: Path) -> None:
    proc = subprocess.Popen(
        _pair_cmd(
            data_dir,
            "--server",
            "port=0",
            "--set",
            "host=127.0.0.1",
            "--set",
            "duration_s=60",
            "--set",
            "interval_s=0.25",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        head = json.loads(proc.stdout.readline())
        assert json.loads(proc.stdout.readline())["type"] == "sample"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 15
    with Store.open(data_dir) as store:
        client = store.get_run(head["client_run_id"])
        server = store.get_run(head["server_run_id"])
    assert client.state.finished and server.state.finished
    assert client.duration_s < 30
