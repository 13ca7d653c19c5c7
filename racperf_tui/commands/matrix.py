"""``racperf matrix [TOOL] [--cluster FILE] [--nodes A,B,...] [--duration S] [--set KEY=VALUE]...
[--server KEY=VALUE]... [--json] [--data-dir D]``: the interconnect matrix
(orchestration/interconnect_matrix.py): every node of the cluster file to every other, with
iperf3 (default), the probe, oratcptest or netperf, one pair at a time, each pair a recorded
server/client pair (``racperf runs`` lists them), a verdict per pair against the 1 GbE / 10 GbE
interconnect guidance and on its stalls and dips (core/net_guidance.py).

Prints a line per pair as it is measured (its median throughput, its latency when the tool
measures one, the verdict with each stall and dip: when and how long), then the matrix (rows
send, columns receive; "STALL" / "dip" after a cell's figure); ``--json``: one object per pair
instead (``mbit_s``, ``latency_ms``, ``level``, ``verdict``, ``stalls`` and ``dips``: lists of
``{kind, start_s, end_s, length_s, intervals, lowest_mbit_s}``, ``error``, ``samples``, the run ids).

Exit status: 0 every pair measured; 1 a pair could not be measured (its line says why); 2 no
cluster file, a wrong one, fewer than two nodes, or a bad option.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from racperf_tui.commands.run import parse_setting
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import ClusterFileError, default_cluster_path, load_cluster, nodes_named
from racperf_tui.core.textio import strict_json
from racperf_tui.orchestration.interconnect_matrix import PairMeasurement, interconnect_matrix, matrix_table
from racperf_tui.orchestration.pair_runs import pair_spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tool", nargs="?", default="iperf3", help="the two-ended tool: iperf3 (default), probe, oratcptest, netperf"
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
        pair_spec(args.tool)
        client = dict(parse_setting(text) for text in args.client_settings)
        server = dict(parse_setting(text) for text in args.server_settings)
        data_dir = Path(resolve_data_dir(args.data_dir))
    except (ClusterFileError, ValueError, KeyError, OSError) as exc:
        print(f"{name}: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}", file=sys.stderr)
        return 2
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
            args.tool,
            nodes,
            data_dir=data_dir,
            duration_s=args.duration,
            server_config=server,
            client_config=client,
            on_result=show,
        )
    except KeyboardInterrupt:
        return 130
    if not args.json:
        print()
        sys.stdout.write(matrix_table(nodes, results))
    return 0 if all(r.measured for r in results) else 1
