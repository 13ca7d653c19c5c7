"""``racperf probe server|client``: the built-in network probe, headless.

``racperf probe server [--bind 0.0.0.0] [--port N] [--once] [--write-file F] [--fsync]`` runs
the same code as ``python3 probe_server.py`` (the file to copy to another node:
``racperf probe server-path`` prints where it is). ``racperf probe client HOST [options]``
runs the same code as ``python3 probe_client.py HOST [options]`` (the file a client run on
another node copies there): oratcptest-shaped interval lines and a summary; exit status 1
when the test failed.
"""

from __future__ import annotations

import argparse
import sys

from racperf_tui.tools import probe
from racperf_tui.tools.probe import client as probe_client
from racperf_tui.tools.probe import server as probe_server


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
        "when the test failed. The same code runs as 'python3 "
        "probe_client.py' on a node without racperf.",
    )
    probe_client.add_client_arguments(client)


def run(args: argparse.Namespace) -> int:
    if args.role == "server":
        return probe_server.serve(args)
    if args.role == "server-path":
        print(probe.PROBE_SERVER_PATH)
        return 0
    options = probe_client.options_from_args(args)
    try:
        options.validate()
    except ValueError as exc:
        print(f"racperf probe client: {exc}", file=sys.stderr)
        return 2
    result = probe_client.run_client(options)
    return 1 if result.get("error") else 0
