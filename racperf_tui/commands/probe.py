"""``racperf probe server|client``: the built-in network probe, headless.

``racperf probe server [--bind 0.0.0.0] [--port N] [--once] [--write-file F] [--fsync]`` runs
the same code as ``python3 probe_server.py`` (the file to copy to another node:
``racperf probe server-path`` prints where it is). ``racperf probe client HOST [options]``
prints oratcptest-shaped interval lines and a summary; exit status 1 when the test failed.
"""

from __future__ import annotations

import argparse
import sys

from racperf_tui.core.units import MIB
from racperf_tui.tools import probe, probe_client, probe_server


def add_arguments(parser: argparse.ArgumentParser) -> None:
    roles = parser.add_subparsers(dest="role", required=True, metavar="server|client|server-path")
    server = roles.add_parser(
        "server",
        help="answer probe clients (also: python3 probe_server.py)",
        description="Answer probe clients until stopped (or after one test "
        "with --once). The same code runs as 'python3 "
        "probe_server.py' on a node without racperf.",
        epilog=probe_server.LIMITS_TEXT,
    )
    probe_server.add_server_arguments(server)
    roles.add_parser(
        "server-path",
        help="print the path of probe_server.py (to copy to another node)",
        description="Print the path of probe_server.py: one stdlib-only file for "
        "python3 >= 3.6, to copy to the other node and run there.",
    )
    client = roles.add_parser(
        "client",
        help="run one test against a probe server",
        description="One test against a probe server: oratcptest-shaped "
        "interval lines (MiB/s, ms) and a summary; exit status 1 "
        "when the test failed.",
    )
    client.add_argument("host", help="the probe server's address")
    client.add_argument(
        "--port", type=int, default=probe.DEFAULT_PORT, help=f"server port (default {probe.DEFAULT_PORT})"
    )
    client.add_argument(
        "--mode",
        type=str.upper,
        choices=("SYNC", "ASYNC"),
        default="SYNC",
        help="SYNC: wait for the server's ACK of every message (latency); ASYNC: stream (default SYNC)",
    )
    client.add_argument(
        "--length",
        type=probe_client.parse_size,
        default=MIB,
        metavar="BYTES",
        help="message payload, e.g. 512, 8K, 1M (default 1M)",
    )
    client.add_argument("--num-conn", type=int, default=1, metavar="N", help="parallel connections (default 1)")
    client.add_argument(
        "--delay-ms", type=float, default=0.0, metavar="MS", help="pause between messages (ms, default 0)"
    )
    client.add_argument(
        "--write",
        action="store_true",
        help="the server writes and fsyncs every message before its ACK (Data Guard SYNC redo transport)",
    )
    client.add_argument("--rtt", action="store_true", help="empty SYNC messages: network round trip")
    client.add_argument("--interval", type=float, default=2.0, metavar="S", help="seconds per line (default 2)")
    client.add_argument("--duration", type=float, default=10.0, metavar="S", help="test seconds (default 10)")
    client.add_argument(
        "--sockbuf",
        type=probe_client.parse_size,
        default=0,
        metavar="BYTES",
        help="SO_SNDBUF here and SO_RCVBUF on the server (default: system's)",
    )
    client.add_argument(
        "--payload", type=str.upper, choices=("ZERO", "RANDOM"), default="ZERO", help="message content (default ZERO)"
    )
    client.add_argument(
        "--connect-timeout", type=float, default=5.0, metavar="S", help="seconds to wait for the connection (default 5)"
    )


def run(args: argparse.Namespace) -> int:
    if args.role == "server":
        return probe_server.serve(args)
    if args.role == "server-path":
        print(probe.PROBE_SERVER_PATH)
        return 0
    options = probe_client.ClientOptions(
        host=args.host,
        port=args.port,
        mode=args.mode,
        length_bytes=args.length,
        num_conn=args.num_conn,
        delay_ms=args.delay_ms,
        write=args.write,
        rtt=args.rtt,
        interval_s=args.interval,
        duration_s=args.duration,
        sockbuf_bytes=args.sockbuf,
        payload=args.payload,
        connect_timeout_s=args.connect_timeout,
    )
    try:
        options.validate()
    except ValueError as exc:
        print(f"racperf probe client: {exc}", file=sys.stderr)
        return 2
    result = probe_client.run_client(options)
    return 1 if result.get("error") else 0
