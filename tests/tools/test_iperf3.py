"""iperf3: argv, the parsers on every recorded fixture (real iperf 3.12 output), and the real
iperf3 on 127.0.0.1 streamed live."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.tools import iperf3
from racperf_tui.tools.iperf3 import TOOL, parse_interval_line, parse_output
from tests.helpers import FIXTURES, racperf_cmd

IPERF3_FIXTURES = FIXTURES / "iperf3"
needs_iperf3 = pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed")


def fixture_text(name: str) -> str:
    return (IPERF3_FIXTURES / name).read_text()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------- argv


def test_client_argv_has_every_option_in_order() -> None:
    argv = TOOL.build_argv(
        {
            "host": "rac1-priv",
            "port": 5301,
            "duration_s": 30,
            "interval_s": 2,
            "udp": True,
            "bitrate": "500M",
            "parallel": 4,
            "reverse": True,
            "length": "128K",
            "window": "4M",
            "json_stream": False,
        }
    )
    assert argv == [
        "iperf3",
        "-c",
        "rac1-priv",
        "-p",
        "5301",
        "-t",
        "30",
        "-i",
        "2",
        "-u",
        "-b",
        "500M",
        "-P",
        "4",
        "-R",
        "-l",
        "128K",
        "-w",
        "4M",
        "--forceflush",
        "-V",
    ]


def test_client_argv_json_stream_when_asked() -> None:
    argv = TOOL.build_argv({"host": "h", "json_stream": True, "interval_s": 0.5})
    assert argv[-2:] == ["-J", "--json-stream"]
    assert "--forceflush" not in argv
    assert argv[argv.index("-i") + 1] == "0.5"


@needs_iperf3
def test_json_stream_detection_matches_installed_version() -> None:
    version = iperf3.detect_version("iperf3")
    assert version is not None and version[0] == 3
    help_text = subprocess.run(["iperf3", "--help"], capture_output=True, text=True).stdout
    assert iperf3.supports_json_stream("iperf3") == ("--json-stream" in help_text or version >= (3, 17))
    auto = TOOL.build_argv({"host": "h"})
    assert ("--json-stream" in auto) == iperf3.supports_json_stream("iperf3")


def test_server_argv_one_off_and_bind() -> None:
    assert TOOL.build_argv({"role": "server", "port": 5999, "bind": "127.0.0.1"}) == [
        "iperf3",
        "-s",
        "-p",
        "5999",
        "-B",
        "127.0.0.1",
        "-1",
        "--forceflush",
    ]
    assert "-1" not in TOOL.build_argv({"role": "server", "one_off": False})


@pytest.mark.parametrize(
    "config, message",
    [
        ({}, "^iperf3: host must be set"),
        ({"host": "h", "port": 70000}, "^iperf3: port must be 1 to 65535, got 70000$"),
        ({"host": "h", "port": "http"}, "^iperf3: port must be a whole number, got 'http'$"),
        ({"host": "h", "parallel": 0}, "^iperf3: parallel must be 1 to 128, got 0$"),
        ({"host": "h", "duration_s": "ten"}, "^iperf3: duration_s must be a number, got 'ten'$"),
        ({"host": "h", "bitrate": "fast"}, "^iperf3: bitrate must be a number with an optional K/M/G/T"),
        ({"host": "h", "role": "both"}, "^iperf3: role must be one of client, server, got 'both'$"),
    ],
)
def test_bad_config_names_the_key(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TOOL.build_argv(config)


def test_hard_limit_covers_duration() -> None:
    assert TOOL.hard_limit_s({"duration_s": 20}) == 50
    assert TOOL.hard_limit_s({"role": "server", "duration_s": 20}) == 80


# ---------------------------------------------------------------- every fixture, numbers asserted

# name -> expected subset of the result
EXPECTED: dict[str, dict] = {
    "tcp_text.txt": {
        "role": "client",
        "protocol": "TCP",
        "streams": 1,
        "reverse": False,
        "duration_s": 3.0,
        "sent_mbit_s": 19400.0,
        "received_mbit_s": 19400.0,
        "sent_bytes": round(6.79 * 1024**3),
        "retransmits": 53,
        "jitter_ms": None,
        "cpu_host_pct": None,
        "n_intervals": 3,
        "error": None,
    },
    "tcp_text_V.txt": {
        "version": "iperf 3.12",
        "sent_mbit_s": 18400.0,
        "retransmits": 17,
        "cpu_host_pct": 80.2,
        "cpu_remote_pct": 35.0,
        "n_intervals": 3,
    },
    "tcp.json": {
        "version": "iperf 3.12",
        "role": "client",
        "protocol": "TCP",
        "streams": 1,
        "sent_bytes": 4309647360,
        "received_bytes": 4309647360,
        "sent_mbit_s": 17227.06453382687,
        "received_mbit_s": 17221.875609720768,
        "retransmits": 13,
        "duration_s": 2.001338,
        "n_intervals": 2,
        "error": None,
    },
    "udp_text.txt": {
        "protocol": "UDP",
        "sent_mbit_s": 200.0,
        "received_mbit_s": 200.0,
        "jitter_ms": 0.008,
        "lost_packets": 0,
        "packets": 2289,
        "lost_pct": 0.0,
        "retransmits": None,
        "n_intervals": 3,
    },
    "udp.json": {
        "protocol": "UDP",
        "sent_bytes": 50003968,
        "jitter_ms": 0.00816936187341416,
        "lost_packets": 0,
        "packets": 1526,
        "lost_pct": 0.0,
        "received_mbit_s": 199.97637666560853,
        "cpu_host_pct": 3.318893655470752,
    },
    "udp_unlimited_text.txt": {
        "protocol": "UDP",
        "sent_mbit_s": 30100.0,
        "received_mbit_s": 11400.0,
        "lost_packets": 142630,
        "packets": 229720,
        "lost_pct": 62.0,
        "jitter_ms": 0.02,
    },
    "udp_unlimited.json": {
        "lost_packets": 3391,
        "packets": 91630,
        "lost_pct": 3.700753028484121,
        "sent_mbit_s": 12009.586928588213,
        "received_mbit_s": 11563.470930258714,
    },
    "udp_reverse_text_V.txt": {
        "protocol": "UDP",
        "reverse": True,
        "received_mbit_s": 100.0,
        "jitter_ms": 0.016,
        "packets": 763,
        "n_intervals": 2,
    },
    "udp_parallel.json": {
        "protocol": "UDP",
        "streams": 2,
        "packets": 35702,
        "received_bytes": 49982800,
        "jitter_ms": 0.007432602231917432,
    },
    "reverse_text.txt": {
        "reverse": True,
        "sent_mbit_s": 25000.0,
        "retransmits": 2,
        "received_bytes": round(8.73 * 1024**3),
    },
    "reverse.json": {
        "reverse": True,
        "sent_bytes": 4580966400,
        "received_bytes": 4580441900,
        "retransmits": 0,
        "cpu_remote_pct": 97.9834692068609,
    },
    "parallel_text.txt": {
        "streams": 3,
        "sent_mbit_s": 25000.0,
        "retransmits": 20,
        "n_intervals": 3,
        "first_interval_mbit_s": 24500.0,
    },
    "parallel.json": {"streams": 3, "sent_bytes": 6229852160, "retransmits": 1, "sent_mbit_s": 24913.715855926923},
    "server_oneoff_text.txt": {
        "role": "server",
        "sent_bytes": None,
        "received_bytes": round(5.52 * 1024**3),
        "received_mbit_s": 23700.0,
        "n_intervals": 2,
    },  # the 2.00-2.00 sliver is not an interval
    "server.txt": {
        "role": "server",
        "protocol": "UDP",
        "received_mbit_s": 11600.0,
        "lost_packets": 3391,
        "error": None,
    },  # last of several tests
    "refused_text.txt": {"error": "unable to connect to server: Connection refused", "sent_bytes": None},
    "refused.json": {"error": "unable to connect to server: Connection refused", "n_intervals": 0},
    "tcp_json_stream_derived.jsonl": {
        "sent_bytes": 4309647360,
        "retransmits": 13,
        "n_intervals": 2,
        "first_interval_mbit_s": 17622.844765195972,
    },
    "udp_parallel_json_stream_derived.jsonl": {"protocol": "UDP", "streams": 2, "packets": 35702},
    "error_json_stream_derived.jsonl": {"error": "unable to connect to server: Connection refused"},
}


def test_every_fixture_has_expectations() -> None:
    recorded = {p.name for p in IPERF3_FIXTURES.iterdir() if p.name != "README.md"}
    assert recorded == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_parse_fixture(name: str) -> None:
    result = parse_output(fixture_text(name))
    assert result["tool"] == "iperf3"
    json.dumps(result)  # JSON-ready
    for key, want in EXPECTED[name].items():
        if key == "n_intervals":
            assert len(result["intervals"]) == want
        elif key == "first_interval_mbit_s":
            assert result["intervals"][0]["throughput_mbit_s"] == pytest.approx(want)
        elif isinstance(want, float):
            assert result[key] == pytest.approx(want, rel=1e-9), key
        else:
            assert result[key] == want, key


def test_text_units_bytes_1024_rates_1000() -> None:
    line = "[  5]   0.00-1.00   sec  23.8 MBytes   200 Mbits/sec  763  "
    interval = parse_interval_line(line, "[ ID] Interval           Transfer     Bitrate         Total Datagrams")
    assert interval["bytes"] == round(23.8 * 1024 * 1024)
    assert interval["throughput_mbit_s"] == 200.0
    assert interval["packets"] == 763 and "retransmits" not in interval
    kbit = parse_interval_line("[  5]   0.00-1.00   sec   640 KBytes  5.24 Mbits/sec    0   1.50 MBytes", "Retr  Cwnd")
    assert kbit["retransmits"] == 0 and kbit["cwnd_kib"] == pytest.approx(1536.0)
    gbit = parse_interval_line("[SUM]   0.00-3.00   sec  8.74 GBytes  25.0 Gbits/sec   20             sender")
    assert gbit["side"] == "sender" and gbit["throughput_mbit_s"] == 25000.0 and gbit["id"] == "SUM"


def test_empty_and_foreign_input_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="empty iperf3 output"):
        parse_output("  \n")
    with pytest.raises(ValueError, match="no iperf3 output found"):
        parse_output("hello world\n")
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_output("{ broken")
    with pytest.raises(ValueError, match="json-stream line 2 is not JSON"):
        parse_output('{"event": "start", "data": {}}\nnot json\n')


# ---------------------------------------------------------------- stream parser


def feed_all(name: str, config: dict | None = None) -> list:
    parser = TOOL.stream_parser(config or {})
    samples = []
    for line in fixture_text(name).splitlines():
        samples += parser.feed(line)
    return samples + parser.finish()


def test_stream_tcp_text_samples() -> None:
    samples = feed_all("tcp_text_V.txt")
    assert [s.t for s in samples] == [1.0, 2.0, 3.0]
    assert [s.metrics["throughput_mbit_s"] for s in samples] == pytest.approx([16100, 16800, 22200])
    assert [s.metrics["retransmits"] for s in samples] == [4, 10, 3]
    assert samples[0].metrics["cwnd_kib"] == 1023
    assert samples[1].extra["interval_start_s"] == 1.0


def test_stream_parallel_only_sum_lines() -> None:
    samples = feed_all("parallel_text.txt")
    assert [s.metrics["throughput_mbit_s"] for s in samples] == pytest.approx([24500, 24800, 25700])
    assert [s.metrics["retransmits"] for s in samples] == [15, 1, 4]


def test_stream_udp_receiver_has_jitter_and_loss() -> None:
    samples = feed_all("udp_reverse_text_V.txt")
    assert len(samples) == 2
    assert samples[0].metrics["jitter_ms"] == 0.016 and samples[0].metrics["lost_pct"] == 0.0
    assert samples[1].metrics["throughput_mbit_s"] == pytest.approx(99.9)
    sender = feed_all("udp_text.txt")
    assert [s.metrics["packets"] for s in sender] == [763, 763, 763]


def test_stream_server_skips_zero_length_tail() -> None:
    samples = feed_all("server_oneoff_text.txt")
    assert [s.metrics["throughput_mbit_s"] for s in samples] == pytest.approx([23300, 24200])


def test_stream_json_events() -> None:
    samples = feed_all("tcp_json_stream_derived.jsonl")
    assert [s.metrics["throughput_mbit_s"] for s in samples] == pytest.approx([17622.844765195972, 16831.175851682951])
    assert samples[0].metrics["retransmits"] == 8
    udp = feed_all("udp_parallel_json_stream_derived.jsonl")
    assert udp[0].metrics["packets"] == 17844


# ---------------------------------------------------------------- success judgement


def test_refused_json_exit_zero_is_a_failure() -> None:
    ok, why = TOOL.succeeded(parse_output(fixture_text("refused.json")), 0)
    assert not ok and "Connection refused" in why
    ok, why = TOOL.succeeded(parse_output(fixture_text("tcp.json")), 0)
    assert ok, why
    assert TOOL.succeeded(None, 1)[0] is False
    assert TOOL.succeeded(parse_output(fixture_text("tcp.json")), 1)[0] is False


def test_racperf_parse_cli(tmp_path: Path) -> None:
    out = subprocess.run(
        racperf_cmd() + ["parse", "iperf3", str(IPERF3_FIXTURES / "udp.json"), str(IPERF3_FIXTURES / "tcp_text.txt")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    first, second = [json.loads(line) for line in out.stdout.splitlines()]
    assert first["packets"] == 1526 and second["retransmits"] == 53
    bad = tmp_path / "bad.txt"
    bad.write_text("nothing here\n")
    out = subprocess.run(racperf_cmd() + ["parse", "iperf3", str(bad)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and "bad.txt" in out.stderr and "no iperf3 output" in out.stderr


# ---------------------------------------------------------------- the real iperf3


@needs_iperf3
def test_real_iperf3_pair_streams_live_and_matches_summary() -> None:
    port = free_port()
    server = subprocess.Popen(
        TOOL.build_argv({"role": "server", "port": port, "bind": "127.0.0.1"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert server.stdout is not None
        ready_line = ""
        deadline = time.monotonic() + 10
        while not iperf3.READY_PATTERN.search(ready_line) and time.monotonic() < deadline:
            ready_line = server.stdout.readline()
        assert iperf3.READY_PATTERN.search(ready_line), ready_line
        config = {"host": "127.0.0.1", "port": port, "duration_s": 2, "interval_s": 0.5}
        client = subprocess.Popen(TOOL.build_argv(config), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        parser = TOOL.stream_parser(config)
        lines, samples, arrival = [], [], []
        started = time.monotonic()
        assert client.stdout is not None
        for line in client.stdout:
            lines.append(line.rstrip("\n"))
            new = parser.feed(line.rstrip("\n"))
            samples += new
            arrival += [time.monotonic() - started] * len(new)
        assert client.wait(timeout=20) == 0
        server_out, _ = server.communicate(timeout=10)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert len(samples) == 4
    # live: the first interval arrived long before the end (--forceflush works)
    assert arrival[0] < arrival[-1] - 0.8
    result = TOOL.parse_result("\n".join(lines))
    assert TOOL.succeeded(result, 0) == (True, "ok")
    mean_live = sum(s.metrics["throughput_mbit_s"] for s in samples) / len(samples)
    assert mean_live == pytest.approx(result["sent_mbit_s"], rel=0.1)
    assert result["sent_bytes"] > 0 and result["duration_s"] == pytest.approx(2.0, abs=0.05)
    server_result = parse_output(server_out)
    assert server_result["role"] == "server"
    # both ends count the same bytes (3 significant digits in text output)
    assert server_result["received_bytes"] == pytest.approx(result["received_bytes"], rel=0.01)


@needs_iperf3
def test_iperf3_pair_of_runs_records_both_ends(data_dir: Path) -> None:
    from racperf_tui.core.store import Store
    from racperf_tui.orchestration.pair_runs import finish_pair, launch_pair
    from racperf_tui.orchestration.runs import wait_for_run

    port = free_port()
    pair = launch_pair(
        "iperf3",
        {"bind": "127.0.0.1", "port": port},
        {"host": "127.0.0.1", "port": port, "duration_s": 1, "interval_s": 0.25},
        data_dir=data_dir,
    )
    record = wait_for_run(pair.client_run_id, data_dir, 30)
    finish_pair(pair, data_dir)
    with Store.open(data_dir) as store:
        assert record.state.value == "succeeded", record.message
        server = store.get_run(pair.server_run_id)
        assert server.state.value == "succeeded", server.message  # -1: it ended by itself
        samples = [s for _, s in store.samples(pair.client_run_id)]
        client_result = store.result(pair.client_run_id)
        server_result = store.result(pair.server_run_id)
    assert len(samples) == 4 and all(s.metrics["throughput_mbit_s"] > 0 for s in samples)
    assert client_result["received_mbit_s"] > 0
    assert server_result["role"] == "server"
    assert server_result["received_bytes"] == pytest.approx(client_result["received_bytes"], rel=0.01)
