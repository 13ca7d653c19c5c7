"""netperf: every real sample parsed (numbers asserted), interim results live in their three
forms, argv and validation, build detection, and netserver + netperf run for real through the
emulators (tests/fakes/netserver, tests/fakes/netperf) on 127.0.0.1, as a pair of recorded
runs (core/pair_runs), the way the UI starts them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import PairStartError, launch_pair, wait_for_server_ready
from racperf_tui.orchestration.runs import launch_run, wait_for_run
from racperf_tui.tools import load_tool
from racperf_tui.tools import netperf as np_
from racperf_tui.tools.netperf.capabilities import adapt_to_capabilities, detect_capabilities
from racperf_tui.tools.netperf.config import DEFAULT_RR_SELECTORS, OMNI_SELECTORS
from tests.helpers import TESTS_DIR
from tests.helpers.pair_helpers import assert_client_started_after_server_ready, run_pair_to_end

TESTS = TESTS_DIR
FIXTURES = TESTS / "fixtures" / "netperf"
NETPERF = str(TESTS / "fakes" / "netperf")
NETSERVER = str(TESTS / "fakes" / "netserver")
FAST = {"RACPERF_FAKE_TIMESCALE": "0.02"}


def parse(name: str, **kwargs) -> dict:
    return np_.parse_output((FIXTURES / name).read_text(), **kwargs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def ends() -> tuple[dict, dict]:
    port = free_port()
    return (
        {"role": "server", "host": "127.0.0.1", "port": port, "netserver": NETSERVER},
        {"role": "client", "host": "127.0.0.1", "port": port, "netperf": NETPERF, "test": "TCP_RR", "duration_s": 3},
    )


# --------------------------------------------------------------------------- every sample

CLASSIC = [
    (
        "netperf-tcp_rr.txt",
        {
            "test": "TCP_RR",
            "elapsed_s": 60.0,
            "trans_per_s": 1721.92,
            "local_send_socket_bytes": 16384,
            "local_recv_socket_bytes": 87380,
            "request_bytes": 1,
            "response_bytes": 1,
            "remote_send_socket_bytes": 16384,
            "remote_recv_socket_bytes": 87380,
            "features": ["first burst 0"],
        },
    ),
    (
        "netperf-tcp_stream.txt",
        {
            "test": "TCP_STREAM",
            "elapsed_s": 60.0,
            "throughput_mbit_s": 2808.18,
            "remote_recv_socket_bytes": 87380,
            "local_send_socket_bytes": 16384,
            "send_message_bytes": 16384,
        },
    ),
    (
        "netperf_tcp_rr_P1.txt",
        {
            "test": "TCP_RR",
            "elapsed_s": 2.0,
            "trans_per_s": 22040.02,
            "local_recv_socket_bytes": 131072,
            "rt_latency_us": 45.372,
            "features": ["histogram", "interval", "demo"],
        },
    ),
    (
        "netperf_tcp_rr_P0.txt",
        {
            "test": None,
            "test_shape": "*_RR",
            "elapsed_s": 2.0,
            "trans_per_s": 8371.41,
            "remote_recv_socket_bytes": 131072,
        },
    ),
    (
        "netperf_tcp_rr_cpu.txt",
        {
            "test": "TCP_RR",
            "trans_per_s": 9239.28,
            "local_cpu_util_pct": 38.14,
            "remote_cpu_util_pct": 38.14,
            "local_service_demand_us_per_tran": 82.557,
            "remote_service_demand_us_per_tran": 82.557,
        },
    ),
    (
        "netperf_tcp_stream_P1.txt",
        {"test": "TCP_STREAM", "elapsed_s": 2.0, "throughput_mbit_s": 11239.85, "remote_recv_socket_bytes": 131072},
    ),
    ("netperf_tcp_stream_P0.txt", {"test": "TCP_STREAM", "elapsed_s": 2.0, "throughput_mbit_s": 12107.56}),
    (
        "netperf_tcp_stream_cpu.txt",
        {
            "test": "TCP_STREAM",
            "throughput_mbit_s": 11355.85,
            "local_cpu_util_pct": 87.84,
            "remote_cpu_util_pct": 87.84,
            "local_service_demand_us_per_kb": 1.267,
            "remote_service_demand_us_per_kb": 1.267,
        },
    ),
    (
        "netperf_udp_rr_P1.txt",
        {
            "test": "UDP_RR",
            "elapsed_s": 2.0,
            "trans_per_s": 26217.78,
            "local_send_socket_bytes": 212992,
            "remote_recv_socket_bytes": 212992,
        },
    ),
    ("netperf_udp_rr_P0.txt", {"test": None, "trans_per_s": 17475.0, "local_send_socket_bytes": 212992}),
    (
        "netperf_udp_stream_P1.txt",
        {
            "test": "UDP_STREAM",
            "elapsed_s": 2.0,
            "throughput_mbit_s": 1893.40,
            "remote_throughput_mbit_s": 1579.96,
            "messages_ok": 338130,
            "errors": 0,
            "remote_messages_ok": 282154,
            "loss_pct": 16.555,  # 1 - 282154 / 338130: what the receiver never counted
            "send_message_bytes": 1400,
            "local_send_socket_bytes": 212992,
            "remote_recv_socket_bytes": 212992,
        },
    ),
    (
        "netperf_udp_stream_P0.txt",
        {
            "test": "UDP_STREAM",
            "throughput_mbit_s": 1961.82,
            "remote_throughput_mbit_s": 1960.50,
            "messages_ok": 350344,
            "loss_pct": 0.067,  # 350108 of 350344 counted
            "errors": 0,
        },
    ),
]


@pytest.mark.parametrize(("name", "expected"), CLASSIC, ids=[c[0] for c in CLASSIC])
def test_classic_outputs(name: str, expected: dict) -> None:
    result = parse(name)
    assert result["tool"] == "netperf"
    assert {k: result.get(k) for k in expected} == expected
    assert result["samples"] == []
    assert np_.succeeded(result, 0) == (True, "finished")


def test_p0_rr_with_the_test_given() -> None:
    assert parse("netperf_udp_rr_P0.txt", test="UDP_RR")["test"] == "UDP_RR"


RR_OMNI = {
    "THROUGHPUT_UNITS": "Trans/s",
    "PROTOCOL": "TCP",
    "DIRECTION": "Send|Recv",
    "REQUEST_SIZE": 1,
    "RESPONSE_SIZE": 1,
    "LOCAL_CPU_UTIL": -1.0,
    "REMOTE_CPU_UTIL": -1.0,
}


@pytest.mark.parametrize(
    ("name", "rate", "p50", "p90", "p99", "mean", "stddev", "rt", "elapsed"),
    [
        ("netperf_tcp_rr_omni_o.txt", 8053.364, 111, 145, 440, 123.90, 96.18, 124.172, 2.0),
        ("netperf_tcp_rr_omni_o_P0.txt", 8064.395, 114, 142, 410, 123.78, 90.01, 124.002, 2.0),
        ("netperf_tcp_rr_omni_O.txt", 7426.271, 115, 157, 525, 134.41, 117.62, 134.657, 2.0),
        ("netperf_tcp_rr_omni_k.txt", 7879.078, 113, 148, 457, 126.68, 85.72, 126.918, 2.0),
        ("netperf_tcp_rr_omni_o_D1.txt", 8101.401, 114, 143, 377, 123.14, 85.48, 123.435, 3.0),
    ],
)
def test_omni_rr_outputs(name, rate, p50, p90, p99, mean, stddev, rt, elapsed) -> None:
    result = parse(name)
    assert result["test"] == "TCP_RR"
    omni = result["omni"]
    assert {k: omni[k] for k in RR_OMNI} == RR_OMNI
    assert omni["TRANSACTION_RATE"] == rate
    assert (
        result["trans_per_s"],
        result["p50_latency_us"],
        result["p90_latency_us"],
        result["p99_latency_us"],
        result["mean_latency_us"],
        result["stddev_latency_us"],
        result["rt_latency_us"],
        result["elapsed_s"],
    ) == (rate, p50, p90, p99, mean, stddev, rt, elapsed)
    assert "local_cpu_util_pct" not in result  # -1: CPU was not measured


def test_omni_stream_keyval() -> None:
    result = parse("netperf_tcp_stream_omni_k.txt")
    assert result["test"] == "TCP_STREAM"
    assert result["omni"] == {
        "THROUGHPUT": 11056.01,
        "THROUGHPUT_UNITS": "10^6bits/s",
        "ELAPSED_TIME": 2.01,
        "LOCAL_SEND_SIZE": 16384,
        "MEAN_LATENCY": 11.73,
        "P99_LATENCY": 83,
    }
    assert (
        result["throughput_mbit_s"],
        result["elapsed_s"],
        result["send_message_bytes"],
        result["mean_latency_us"],
        result["p99_latency_us"],
    ) == (11056.01, 2.01, 16384, 11.73, 83)


@pytest.mark.parametrize(
    ("name", "values", "intervals", "ts", "key"),
    [
        (
            "netperf_tcp_rr_D1.txt",
            [8064.58, 10675.86, 39118.12],
            [1.275, 1.0, 0.725],
            [1.275, 2.275, 3.0],
            "trans_per_s",
        ),
        (
            "netperf_tcp_stream_D1.txt",
            [11863.19, 10404.61, 13285.57],
            [1.2, 1.14, 0.66],
            [1.2, 2.34, 3.0],
            "throughput_mbit_s",
        ),
        (
            "netperf_tcp_rr_omni_o_D1.txt",
            [8371.92, 7908.62, 7964.27],
            [1.155, 1.059, 0.786],
            [1.155, 2.213, 2.999],
            "trans_per_s",
        ),
        (
            "netperf_tcp_rr_omni_k_D1.txt",
            [7655.83, 8188.18, 8789.02],
            [1.066, 1.002, 0.932],
            [1.066, 2.068, 3.0],
            "trans_per_s",
        ),
    ],
)
def test_interim_samples_in_every_form(name, values, intervals, ts, key) -> None:
    result = parse(name)
    samples = result["samples"]
    assert [s[key] for s in samples] == values
    assert [s["interval_s"] for s in samples] == intervals
    assert [s["t"] for s in samples] == ts
    # the live parser gives the same, line by line
    parser = np_.TOOL.stream_parser({})
    live = [s for line in (FIXTURES / name).read_text().splitlines() for s in parser.feed(line)]
    assert [s.metrics[key] for s in live] == values and [s.t for s in live] == ts
    if key == "trans_per_s":
        assert live[0].metrics["rt_latency_us"] == round(1e6 / values[0], 3)


def test_final_figures_of_interim_outputs() -> None:
    rr = parse("netperf_tcp_rr_D1.txt")
    assert (rr["trans_per_s"], rr["elapsed_s"]) == (16435.47, 3.0)
    stream = parse("netperf_tcp_stream_D1.txt")
    assert (stream["throughput_mbit_s"], stream["elapsed_s"]) == (11620.87, 3.0)
    assert parse("netperf_tcp_rr_omni_k_D1.txt")["trans_per_s"] == 8185.06


def test_selector_list() -> None:
    listing = parse("netperf_omni_selector_list.txt")["selector_list"]
    assert len(listing) == 175 and listing[0] == "OUTPUT_NONE" and "P99_LATENCY" in listing
    assert set(listing) == set(OMNI_SELECTORS)


def test_not_netperf_output() -> None:
    with pytest.raises(ValueError, match="not netperf output"):
        np_.parse_output("hello\nworld\n")


def test_racperf_parse_cli() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "racperf_tui",
            "parse",
            "netperf",
            str(FIXTURES / "netperf-tcp_rr.txt"),
            str(FIXTURES / "netperf_udp_stream_P1.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    rr, udp = (json.loads(line) for line in proc.stdout.splitlines())
    assert (rr["test"], rr["elapsed_s"], rr["trans_per_s"]) == ("TCP_RR", 60.0, 1721.92)
    assert (udp["throughput_mbit_s"], udp["remote_throughput_mbit_s"], udp["messages_ok"], udp["errors"]) == (
        1893.40,
        1579.96,
        338130,
        0,
    )


# --------------------------------------------------------------------------- argv, validation


def test_client_argv() -> None:
    argv = np_.build_argv(
        {
            "host": "rac2-priv",
            "test": "tcp_rr",
            "duration_s": 60,
            "interim_s": 1,
            "local_cpu": True,
            "remote_cpu": True,
            "request_bytes": 8192,
            "response_bytes": 8192,
            "local_sockbuf_bytes": 262144,
            "remote_sockbuf_bytes": 262144,
            "omni_output": "csv",
        }
    )
    assert argv == [
        "netperf",
        "-H",
        "rac2-priv",
        "-p",
        "12865",
        "-t",
        "TCP_RR",
        "-l",
        "60",
        "-D",
        "1",
        "-c",
        "-C",
        "--",
        "-r",
        "8192,8192",
        "-s",
        "262144",
        "-S",
        "262144",
        "-o",
        ",".join(DEFAULT_RR_SELECTORS),
    ]
    stream = np_.build_argv(
        {
            "test": "UDP_STREAM",
            "duration_s": 5,
            "send_size_bytes": 1400,
            "print_headers": False,
            "omni_output": "keyval",
            "omni_selectors": "throughput, throughput_units",
        }
    )
    assert stream == [
        "netperf",
        "-H",
        "127.0.0.1",
        "-p",
        "12865",
        "-t",
        "UDP_STREAM",
        "-l",
        "5",
        "-P",
        "0",
        "--",
        "-m",
        "1400",
        "-k",
        "THROUGHPUT,THROUGHPUT_UNITS",
    ]
    assert np_.build_argv({"role": "server", "port": 12866, "netserver": "/opt/np/netserver"}) == [
        "/opt/np/netserver",
        "-p",
        "12866",
        "-D",
        "-L",
        "127.0.0.1",
    ]
    assert np_.build_argv({"role": "server", "host": ""}) == ["netserver", "-p", "12865", "-D"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"test": "SCTP_RR"}, "test must be one of TCP_RR, TCP_STREAM, UDP_RR, UDP_STREAM, got 'SCTP_RR'"),
        ({"duration_s": 0}, "duration_s must be at least 1 second"),
        ({"interim_s": 20}, r"interim_s must be > 0 and <= duration_s \(10 s\)"),
        ({"send_size_bytes": 1400}, "are for STREAM tests; TCP_RR takes request_bytes"),
        ({"test": "TCP_STREAM", "request_bytes": 1}, "are for RR tests; TCP_STREAM takes send_size_bytes"),
        ({"omni_output": "csv", "omni_selectors": ["THROUGHPUT", "WARP_SPEED"]}, "unknown output selector"),
        ({"omni_selectors": ["THROUGHPUT"]}, "omni_selectors need omni_output"),
        ({"omni_output": "xml"}, "omni_output must be"),
        ({"port": 0}, "^netperf: port must be 1 to 65535, got 0$"),
        ({"port": "inf"}, "^netperf: port must be a whole number, got 'inf'$"),
        ({"local_sockbuf_bytes": "big"}, "local_sockbuf_bytes must be a whole number"),
        ({"hostname": "x"}, "unknown option"),
    ],
)
def test_validation_messages(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        np_.build_argv(config)


def test_hard_limit() -> None:
    assert np_.hard_limit_s({"duration_s": 60}) == pytest.approx(60 * 1.1 + 30)
    assert np_.hard_limit_s({"role": "server", "server_lifetime_s": 99}) == 99


# --------------------------------------------------------------------------- build detection


def test_detect_capabilities(monkeypatch: pytest.MonkeyPatch) -> None:
    caps = detect_capabilities(NETPERF)
    assert (caps.version, caps.version_tuple, caps.demo, caps.omni) == ("2.7.1", (2, 7, 1), True, True)
    monkeypatch.setenv("RACPERF_FAKE_NETPERF_DEMO", "0")
    no_demo = detect_capabilities(NETPERF)
    assert (no_demo.demo, no_demo.omni) == (False, True)
    config, notes = adapt_to_capabilities({"interim_s": 1, "omni_output": "csv"}, no_demo)
    assert config["interim_s"] is None and config["omni_output"] == "csv"
    assert "built without --enable-demo" in notes[0]
    monkeypatch.setenv("RACPERF_FAKE_NETPERF_VERSION", "2.4.5")
    old = detect_capabilities(NETPERF)
    assert (old.version, old.omni) == ("2.4.5", False)
    config, notes = adapt_to_capabilities({"omni_output": "keyval", "omni_selectors": ["P99_LATENCY"]}, old)
    assert config["omni_output"] == "" and "predates omni output selectors" in notes[0]
    with pytest.raises(ValueError, match="not found"):
        detect_capabilities("/no/such/netperf")


# --------------------------------------------------------------------------- both ends, for real


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulators' clock runs 50 times faster (the detached supervisors inherit it)."""
    monkeypatch.setenv("RACPERF_FAKE_TIMESCALE", "0.02")


def test_pair_rr_with_interim_results_streamed(ends: tuple[dict, dict], data_dir: Path, fast: None) -> None:
    server, client = ends
    done = run_pair_to_end("netperf", server, {**client, "interim_s": 1}, data_dir)
    assert done.client.state is RunState.SUCCEEDED, done.client.message
    assert_client_started_after_server_ready(done, "Starting netserver with host")
    samples = done.samples
    assert [s.metrics["trans_per_s"] for s in samples] == [8064.58, 10675.86, 39118.12]
    assert [s.t for s in samples] == [1.0, 2.0, 3.0]
    result = done.client_result
    assert (result["test"], result["elapsed_s"], result["trans_per_s"]) == ("TCP_RR", 3.0, 22040.02)
    assert len(result["samples"]) == 3
    assert done.server_result["started"] and done.server_result["port"] == server["port"]
    assert done.pair.notes == ()


def test_pair_without_demo_support_drops_interim(
    ends, data_dir: Path, fast: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, client = ends
    monkeypatch.setenv("RACPERF_FAKE_NETPERF_DEMO", "0")
    done = run_pair_to_end("netperf", server, {**client, "interim_s": 1, "test": "TCP_STREAM"}, data_dir)
    assert done.client.state is RunState.SUCCEEDED, done.client.message
    assert "built without --enable-demo" in done.pair.notes[0]
    assert done.client_result["samples"] == []
    # what ran is what was recorded: the adapted config, without -D
    assert "-D" not in done.client.argv and done.client.config["interim_s"] is None
    assert done.client_result["throughput_mbit_s"] == 11239.85


@pytest.mark.parametrize("mode", ["csv", "human", "keyval"])
def test_pair_omni_output_modes(ends, data_dir: Path, fast: None, mode: str) -> None:
    server, client = ends
    done = run_pair_to_end("netperf", server, {**client, "omni_output": mode, "interim_s": 1}, data_dir)
    assert done.client.state is RunState.SUCCEEDED, done.client.message
    result = done.client_result
    assert (result["trans_per_s"], result["p99_latency_us"], result["mean_latency_us"], result["elapsed_s"]) == (
        8053.364,
        440,
        123.90,
        3.0,
    )
    assert [s["trans_per_s"] for s in result["samples"]] == [8064.58, 10675.86, 39118.12]


def test_pair_udp_stream(ends, data_dir: Path, fast: None) -> None:
    server, client = ends
    done = run_pair_to_end(
        "netperf", server, {**client, "test": "UDP_STREAM", "duration_s": 2, "send_size_bytes": 1400}, data_dir
    )
    assert done.client.state is RunState.SUCCEEDED, done.client.message
    result = done.client_result
    assert (
        result["throughput_mbit_s"],
        result["remote_throughput_mbit_s"],
        result["messages_ok"],
        result["errors"],
        result["send_message_bytes"],
    ) == (1893.40, 1579.96, 338130, 0, 1400)


def test_netperf_without_netserver_fails_with_netperfs_words(ends) -> None:
    _, client = ends
    proc = subprocess.run(
        np_.build_argv(client), capture_output=True, text=True, timeout=30, env={**os.environ, **FAST}
    )
    port = client["port"]
    assert proc.returncode == 255
    assert proc.stdout.splitlines() == [
        f"establish control: are you sure there is a netserver listening on 127.0.0.1 at port {port}?",
        f"establish_control could not establish the control connection from 0.0.0.0 port 0 address family "
        f"AF_UNSPEC to 127.0.0.1 port {port} address family AF_INET",
    ]
    result = np_.parse_output(proc.stdout)
    ok, reason = np_.succeeded(result, proc.returncode)
    assert not ok and "are you sure there is a netserver listening" in reason


def test_netserver_port_in_use(ends, data_dir: Path, fast: None) -> None:
    server, client = ends
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", server["port"]))
        squatter.listen(1)
        with pytest.raises(PairStartError) as refused:
            launch_pair("netperf", server, client, data_dir=data_dir)
        assert "already in use" in str(refused.value) and "use another port" in str(refused.value)
        assert "netserver" in str(refused.value)
        with Store.open(data_dir) as store:
            assert store.list_runs() == []  # refused before anything started
        # slipped past the check: netserver's own words end the wait
        server_run = launch_run("netperf", {**server, "role": "server"}, data_dir=data_dir)
        with pytest.raises(PairStartError) as failed:
            wait_for_server_ready(server_run, data_dir, np_.PAIR.ready_pattern, np_.PAIR.failure_pattern, 10)
        wait_for_run(server_run, data_dir, 10)
    assert f"Unable to start netserver with  '127.0.0.1' port '{server['port']}'" in str(failed.value)
    with Store.open(data_dir) as store:
        assert [r.id for r in store.list_runs()] == [server_run]  # no client run


def test_tool_is_registered() -> None:
    assert load_tool("netperf").TOOL.name == "netperf"


def test_pair_as_recorded_runs(ends: tuple[dict, dict], data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """netserver and netperf as runs of the store (detached supervisors), samples recorded live."""
    pair_runs = pytest.importorskip("racperf_tui.orchestration.pair_runs")
    from racperf_tui.core.contract.events import RunState
    from racperf_tui.core.store import Store
    from racperf_tui.orchestration.runs import wait_for_run

    monkeypatch.setenv("RACPERF_FAKE_TIMESCALE", "0.02")
    server, client = ends
    pair = pair_runs.launch_pair("netperf", server, {**client, "test": "TCP_STREAM", "interim_s": 1}, data_dir=data_dir)
    try:
        record = wait_for_run(pair.client_run_id, data_dir, timeout_s=30)
    finally:
        pair_runs.finish_pair(pair, data_dir, grace_s=0.1)
    assert record.state is RunState.SUCCEEDED, record.message
    assert record.tool_version == "Netperf version 2.7.1"
    with Store.open(data_dir) as store:
        samples = [s for _, s in store.samples(pair.client_run_id)]
        result = store.result(pair.client_run_id)
    assert [s.metrics["throughput_mbit_s"] for s in samples] == [11863.19, 10404.61, 13285.57]
    assert (result["test"], result["throughput_mbit_s"], result["elapsed_s"]) == ("TCP_STREAM", 11239.85, 3.0)
