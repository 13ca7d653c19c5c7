"""``racperf pair TOOL [--data-dir D] [--server KEY=VALUE]... [--set KEY=VALUE]...
[--server-node NAME | --server-ssh SPEC] [--client-node NAME | --client-ssh SPEC]``

Both ends of a two-ended tool (iperf3, probe, oratcptest, netperf), headless, exactly as the
network panel runs them (:mod:`racperf_tui.orchestration.pair_runs`): two recorded runs, the
client started once the server said it is ready. ``--server`` keys configure the server
(``port``, ``bind`` / ``host``, ...), ``--set`` keys the client (``host``, ``duration_s``,
``mode`` ...); a ``port`` given only to the client is the server's too, none
a free one where the server runs (``pair_runs.pair_ports``, the Network tab's rule too). Each end runs on this
machine unless ``--server-node`` / ``--client-node`` (the cluster file's nodes) or
``--server-ssh`` / ``--client-ssh`` (``[user@]host[:port]``) put it on another node; the
client's default server address is then the server node's interconnect address.

Prints one JSON object per line: ``{"type": "pair", "server_run_id", "client_run_id", "port",
"notes", "warnings"}``, then ``{"type": "sample", "t", "metrics"}`` per client sample as it is
recorded, then ``{"type": "result", "role": "client" | "server", "run_id", "state",
"message", "result"}`` for each end.

Exit status: 0 the client succeeded; 1 it failed; 2 refused before the client started (bad
config, port taken, the server never got ready; the reason on stderr); 3 a node cannot be
reached or logged into (which and why, in one line); 127 the tool is not installed; 130
stopped by a signal (SIGINT / SIGTERM / SIGHUP stop both runs).
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

from racperf_tui.commands.run import parse_setting
from racperf_tui.core.contract.events import RunState
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import (
    LOCAL,
    LOCAL_NODE,
    Cluster,
    ClusterFileError,
    Node,
    default_cluster_path,
    load_cluster,
    node_from_spec,
)
from racperf_tui.core.store import Store
from racperf_tui.core.textio import strict_json
from racperf_tui.orchestration.pair_runs import PairStartError, finish_pair, launch_pair, stop_pair
from racperf_tui.orchestration.runs import ToolNotFound, follow_run


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """TOOL, the server's and the client's config keys, the data dir."""
    parser.add_argument("tool", help="the two-ended tool: iperf3, probe, oratcptest, netperf")
    parser.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="server_settings",
        help="a config key of the server end (repeatable), e.g. --server port=5201",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="client_settings",
        help="a config key of the client end (repeatable), e.g. --set duration_s=30",
    )
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="where runs are stored (default $RACPERF_DATA_DIR or ~/.local/share/racperf)",
    )
    nodes = parser.add_argument_group("nodes (default: both ends on this machine)")
    for end in ("server", "client"):
        where = nodes.add_mutually_exclusive_group()
        where.add_argument(
            f"--{end}-node", metavar="NAME", default=None, help=f"the {end} on the cluster file's node NAME"
        )
        where.add_argument(
            f"--{end}-ssh", metavar="[USER@]HOST[:PORT]", default=None, help=f"the {end} on another node, over SSH"
        )
    nodes.add_argument("--identity", metavar="FILE", default=None, help="with --*-ssh: a private key file")
    nodes.add_argument(
        "--known-hosts",
        metavar="FILE",
        action="append",
        default=None,
        help="with --*-ssh: verify host keys against FILE (repeatable)",
    )
    nodes.add_argument(
        "--cluster", metavar="FILE", default=None, help=f"the cluster file (default: {default_cluster_path()})"
    )
    parser.epilog = (
        "examples: racperf pair iperf3 --server port=5201 --set host=127.0.0.1 --set duration_s=10;  "
        "racperf pair iperf3 --server-node rac1 --client-node rac2 --set duration_s=30"
    )


def end_node(args: argparse.Namespace, end: str, cluster: Cluster | None) -> tuple[Node, Cluster | None]:
    """The node of one end (LOCAL when none is named); ClusterFileError."""
    spec, name = getattr(args, f"{end}_ssh", None), getattr(args, f"{end}_node", None)
    if spec is not None:
        return node_from_spec(spec, identity=args.identity, known_hosts=args.known_hosts), cluster
    if name is None or name == LOCAL_NODE:
        return LOCAL, cluster
    if cluster is None:
        cluster = load_cluster(args.cluster, required=True)
    return cluster.node(name), cluster


def _settings(texts: list[str]) -> dict[str, Any]:

    return dict(parse_setting(text) for text in texts)


def _print_json(obj: dict[str, Any]) -> None:
    sys.stdout.write(strict_json.dumps(obj, separators=(", ", ": ")) + "\n")
    sys.stdout.flush()


def _stop_on_signals() -> None:
    """SIGTERM / SIGHUP end the command the way Ctrl-C does, so both runs are stopped."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


def run(args: argparse.Namespace) -> int:
    """Launch the pair, stream the client's samples, finish the server; exit status as above."""

    name = f"racperf pair {args.tool}"
    try:
        server_cfg = _settings(list(args.server_settings))
        client_cfg = _settings(list(args.client_settings))
        data_dir = Path(resolve_data_dir(args.data_dir))
    except (ValueError, OSError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    try:
        server_node, cluster = end_node(args, "server", None)
        client_node, _ = end_node(args, "client", cluster)
    except ClusterFileError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    _stop_on_signals()
    try:
        pair = launch_pair(
            args.tool, server_cfg, client_cfg, data_dir=data_dir, server_node=server_node, client_node=client_node
        )
    except ToolNotFound as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 127
    except OSError as exc:  # a node cannot be reached: which, and why, in one line
        print(f"{name}: {exc}", file=sys.stderr)
        return 3
    except (ValueError, KeyError, PairStartError) as exc:
        print(f"{name}: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130  # launch_pair stops the server it started
    _print_json(
        {
            "type": "pair",
            "tool": pair.tool,
            "server_run_id": pair.server_run_id,
            "client_run_id": pair.client_run_id,
            "port": pair.port,
            "notes": list(pair.notes),
            "warnings": list(pair.warnings),
        }
    )
    for text in (*pair.notes, *pair.warnings):
        print(f"{name}: note: {text}", file=sys.stderr)
    interrupted = False
    try:
        for _, sample in follow_run(pair.client_run_id, data_dir):
            _print_json(sample.to_json())
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if interrupted:
            stop_pair(pair, data_dir)
        else:
            finish_pair(pair, data_dir)
    with Store.open(data_dir) as store:
        records = {
            role: store.get_run(run_id)
            for role, run_id in (("client", pair.client_run_id), ("server", pair.server_run_id))
        }
        for role, record in records.items():
            _print_json(
                {
                    "type": "result",
                    "role": role,
                    "run_id": record.id,
                    "state": record.state.value,
                    "message": record.message,
                    "result": store.result(record.id),
                }
            )
    client = records["client"]
    if interrupted:
        return 130
    if client.state is RunState.SUCCEEDED:
        return 0
    print(f"{name}: {client.state.value}: {client.message or 'no message'}", file=sys.stderr)
    return 1
