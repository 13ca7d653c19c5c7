"""Benchmark: the built-in probe against iperf3 on loopback, same run, alternated.

Target (issue 4): probe ASYNC throughput >= 60 % of iperf3's single-stream TCP throughput.
iperf3 has no latency figure, so the probe's SYNC latencies (RTT, 8 KiB and 1 MiB messages:
avg and p99) are reported beside iperf3's throughput, a TCP_RR-like number for the same path.

    .venv/bin/python tests/bench/bench_probe_vs_iperf3.py [--duration 3] [--rounds 3]

Both tools run as they do for users: separate server and client processes (the probe client
through ``racperf probe client``). Prints a table; exit status 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from racperf_tui.core import units  # noqa: E402
from racperf_tui.tools import iperf3, probe  # noqa: E402

TARGET_RATIO = 0.60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(argv: list[str], ready: re.Pattern[str]) -> tuple[subprocess.Popen, str]:  # noqa: F821
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if ready.search(line):
            return proc, line
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"server {argv[0]} did not get ready")


def iperf3_mbit_s(port: int, duration_s: float) -> float:
    out = subprocess.run(
        ["iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", f"{duration_s:g}", "-J"],
        capture_output=True,
        text=True,
        timeout=duration_s + 30,
    )
    result = iperf3.parse_output(out.stdout)
    if result["error"]:
        raise RuntimeError(f"iperf3: {result['error']}")
    return float(result["received_mbit_s"])


def probe_run(port: int, duration_s: float, *args: str) -> dict:
    argv = [
        sys.executable,
        "-m",
        "racperf_tui",
        "probe",
        "client",
        "127.0.0.1",
        "--port",
        str(port),
        "--duration",
        f"{duration_s:g}",
        "--interval",
        f"{duration_s:g}",
        *args,
    ]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=duration_s + 30, cwd=REPO)
    result = probe.parse_output(out.stdout)
    if result["error"]:
        raise RuntimeError(f"probe: {result['error']}")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (median taken)")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args()

    iperf_port, probe_port = free_port(), free_port()
    iperf_server, _ = start_server(
        ["iperf3", "-s", "-p", str(iperf_port), "-B", "127.0.0.1", "--forceflush"], iperf3.READY_PATTERN
    )
    probe_server, _ = start_server(
        [sys.executable, "-u", str(probe.PROBE_SERVER_PATH), "--bind", "127.0.0.1", "--port", str(probe_port)],
        probe.READY_PATTERN,
    )
    iperf_runs: list[float] = []
    async_runs: list[float] = []
    ratios: list[float] = []
    try:
        for _ in range(args.rounds):
            iperf = iperf3_mbit_s(iperf_port, args.duration)
            asynchronous = units.mib_s_to_mbit_s(
                probe_run(probe_port, args.duration, "--mode", "ASYNC")["avg_throughput_mib_s"]
            )
            iperf_runs.append(iperf)
            async_runs.append(asynchronous)
            ratios.append(asynchronous / iperf)
        latency_rows = []
        for label, extra in (
            ("SYNC RTT (0 B)", ["--rtt"]),
            ("SYNC 8 KiB", ["--length", "8K"]),
            ("SYNC 1 MiB", ["--length", "1M"]),
            ("SYNC 8 KiB 4 conn", ["--length", "8K", "--num-conn", "4"]),
        ):
            result = probe_run(probe_port, args.duration, *extra)
            latency_rows.append(
                (
                    label,
                    units.mib_s_to_mbit_s(result["avg_throughput_mib_s"]),
                    result["avg_latency_ms"],
                    result["latency_p99_ms"],
                    result["messages"] / result["elapsed_s"],
                )
            )
    finally:
        for proc in (iperf_server, probe_server):
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    ratio = statistics.median(ratios)
    print(
        f"loopback, {args.rounds} alternated rounds of {args.duration:g} s, medians (shared machine: figures are noisy)"
    )
    print(f"{'measurement':<28}{'Mbit/s':>12}{'avg ms':>10}{'p99 ms':>10}{'msg/s':>12}")
    print(f"{'iperf3 TCP, 1 stream':<28}{statistics.median(iperf_runs):>12.0f}{'-':>10}{'-':>10}{'-':>12}")
    print(f"{'probe ASYNC, 1 conn':<28}{statistics.median(async_runs):>12.0f}{'-':>10}{'-':>10}{'-':>12}")
    for label, mbit, avg_ms, p99_ms, rate in latency_rows:
        print(f"{'probe ' + label:<28}{mbit:>12.0f}{avg_ms:>10.3f}{p99_ms:>10.3f}{rate:>12.0f}")
    print(
        f"probe ASYNC / iperf3 = {ratio:.2f} (rounds: {', '.join(f'{r:.2f}' for r in ratios)}); "
        f"target >= {TARGET_RATIO:.2f}: {'MET' if ratio >= TARGET_RATIO else 'MISSED'}"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "iperf3_mbit_s": iperf_runs,
                    "probe_async_mbit_s": async_runs,
                    "ratio_median": ratio,
                    "sync": [dict(zip(("label", "mbit_s", "avg_ms", "p99_ms", "msg_s"), row)) for row in latency_rows],
                }
            )
        )
    return 0 if ratio >= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
