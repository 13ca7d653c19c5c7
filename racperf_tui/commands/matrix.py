"""``racperf matrix [TOOL] [--cluster FILE] [--nodes A,B,...] [--duration S] [--mode NAME | --udp]
[--no-path-check] [--set KEY=VALUE]... [--server KEY=VALUE]... [--json] [--data-dir D]``: the
interconnect matrix
(orchestration/interconnect_matrix.py): every node of the cluster file to every other, with
iperf3 (default), the probe, oratcptest or netperf, one pair at a time, each pair a recorded
server/client pair (``racperf runs`` lists them), a verdict per pair against the 1 GbE / 10 GbE
interconnect guidance and on its stalls and dips (core/net_guidance.py), then each pair's
path check (the probe's UDP requests of 8 KiB: round trip p50 / p99, loss, a don't-fragment
datagram at the MTU; ``--no-path-check`` leaves it out).

``--mode NAME``: the tool's mode (netperf TCP_RR, UDP_STREAM, ...; default its first);
``--udp``: its UDP mode (netperf UDP_STREAM, the probe's UDP with UDP_WINDOW requests in
flight, iperf3 UDP); without a TOOL, netperf where every node has netperf and netserver, the
probe otherwise.

Prints a line per pair as it is measured (its median throughput, its latency when the tool
measures one, the verdict with each stall and dip: when and how long), then the matrix (rows
send, columns receive; "STALL" / "dip" after a cell's figure); ``--json``: one object per pair
instead (``mbit_s``, ``latency_ms``, ``level``, ``verdict``, ``stalls`` and ``dips``: lists of
``{kind, start_s, end_s, length_s, intervals, lowest_mbit_s}``, ``error``, ``samples``, the run ids,
``latency_p50_ms``, ``latency_p99_ms`` (the path check's 8 KiB round trips, or the pair's own:
netperf's RR tests), ``round_trip_by`` (the tool whose own test measured them, else null),
``loss_pct``, ``mtu``: ``{local, remote, probe_bytes, arrived, mismatch, note}``, ``path_error``).

Exit status: 0 every pair measured; 1 a pair could not be measured (its line says why); 2 no
cluster file, a wrong one, fewer than two nodes, or a bad option.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from racperf_tui.commands.run import parse_setting
from racperf_tui.core.contract.tool import PairMode
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import ClusterFileError, Node, default_cluster_path, load_cluster, nodes_named
from racperf_tui.core.remote.node_check import check_nodes
from racperf_tui.core.textio import strict_json
from racperf_tui.orchestration.interconnect_matrix import PairMeasurement, interconnect_matrix, matrix_table
from racperf_tui.orchestration.pair_runs import pair_spec

#: the probe's UDP requests in flight in a --udp matrix: enough to fill a 1 Gbit/s link at a
#: LAN's round trip (16 x 8 KiB per 0.1 ms), few enough that a queue's drops are the link's
UDP_WINDOW = 16


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tool",
        nargs="?",
        default=None,
        help="the two-ended tool: iperf3 (default), probe, oratcptest, netperf (--udp: netperf where installed, "
        "else probe)",
    )
    parser.add_argument(
        "--cluster", metavar="FILE", default=None, help=f"the cluster file (default: {default_cluster_path()})"
    )
    parser.add_argument("--nodes", metavar="A,B,...", default=None, help="these nodes only (default: all)")
    parser.add_argument("--duration", type=float, default=10.0, metavar="S", help="seconds per pair (default 10)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", dest="client_settings", help="a client option"
    )
    parser.add_argument(
        "--server", action="append", default=[], metavar="KEY=VALUE", dest="server_settings", help="a server option"
    )
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--mode", default=None, metavar="NAME", help="the tool's mode (default its first)")
    modes.add_argument(
        "--udp", action="store_true", help="the tool's UDP mode (what Cache Fusion uses): throughput and loss"
    )
    parser.add_argument(
        "--no-path-check",
        dest="path_check",
        action="store_false",
        help="no path check after each pair (the probe's 8 KiB UDP round trips, loss and MTU check)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per pair")
    parser.add_argument(
        "--data-dir", metavar="DIR", default=None, help="where the pairs' runs are stored (default as racperf run)"
    )


def run(args: argparse.Namespace) -> int:
    name = "racperf matrix"
    try:
        cluster = load_cluster(args.cluster, required=True)
        names = [n.strip() for n in args.nodes.split(",") if n.strip()] if args.nodes else cluster.names()
        nodes = nodes_named(cluster, names)
        tool = args.tool or (udp_tool(nodes) if args.udp else "iperf3")
        spec = pair_spec(tool)
        client = dict(parse_setting(text) for text in args.client_settings)
        client = {**mode_settings(tool, spec.modes, args.mode, args.udp), **client}
        server = dict(parse_setting(text) for text in args.server_settings)
        data_dir = Path(resolve_data_dir(args.data_dir))
    except (ClusterFileError, ValueError, KeyError, OSError) as exc:
        print(f"{name}: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}", file=sys.stderr)
        return 2
    if args.udp and not args.json:
        print(f"{name}: UDP with {tool}", file=sys.stderr)
    if len(nodes) < 2:
        print(f"{name}: the matrix needs two nodes at least ({', '.join(names) or 'none'} given)", file=sys.stderr)
        return 2
    if not args.duration > 0:
        print(f"{name}: --duration must be more than 0 s", file=sys.stderr)
        return 2

    def show(result: PairMeasurement) -> None:
        print(strict_json.dumps(result.to_json()) if args.json else result.line(), flush=True)

    try:
        results = interconnect_matrix(
            tool,
            nodes,
            data_dir=data_dir,
            duration_s=args.duration,
            server_config=server,
            client_config=client,
            on_result=show,
            path_check=args.path_check,
        )
    except KeyboardInterrupt:
        return 130
    if not args.json:
        print()
        sys.stdout.write(matrix_table(nodes, results))
    return 0 if all(r.measured for r in results) else 1


def udp_tool(nodes: list[Node]) -> str:
    """netperf where every node has netperf and netserver, else the probe (python3 only)."""
    checks = check_nodes(nodes)
    found = all(c.ok and c.programs.get("netperf") and c.programs.get("netserver") for c in checks)
    return "netperf" if found else "probe"


def mode_settings(tool: str, modes: tuple[PairMode, ...], mode: str | None, udp: bool) -> dict[str, Any]:
    """The client settings of the mode asked for (``--mode NAME``, or ``--udp``: the first
    mode named UDP...); ValueError naming the modes there are."""
    if udp:
        found = next((m for m in modes if m.name.upper().startswith("UDP")), None)
        if found is None:
            raise ValueError(f"{tool} has no UDP mode; the modes: {', '.join(m.name for m in modes)}")
        settings = dict(found.client)
        if tool == "probe":
            settings["num_conn"] = UDP_WINDOW
            settings["length"] = "8K"
        return settings
    if mode is None:
        return {}
    for found in modes:
        if found.name.upper() == mode.upper():
            return dict(found.client)
    raise ValueError(f"{tool} has no mode {mode!r}; the modes: {', '.join(m.name for m in modes)}")
