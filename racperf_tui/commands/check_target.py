"""``racperf check-target PATH... [--ssh [USER@]HOST[:PORT] | --node NAME]``: would a write
workload on PATH destroy data, here or on that node?

Prints one verdict per path (text, or one JSON object per line with ``--json``) and exits 0
when every path may be written, 3 when at least one is refused, 2 when the node cannot be
reached or named.  On a node the guard judges that node's mounts, holders, open files and
signatures (core/remote/node_facts.py) and prints exactly what it prints here.  Reads only; never writes.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from racperf_tui.core.guard.safety import SafetyVerdict, check_write_target, explain
from racperf_tui.core.remote.cluster import ClusterFileError, add_node_arguments, node_from_args
from racperf_tui.core.remote.node_facts import check_write_targets
from racperf_tui.core.remote.ssh import connect
from racperf_tui.core.textio import strict_json

#: Exit status when at least one target is refused (2 is argparse's usage error).
REFUSED_EXIT_STATUS = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory or block device (any link to one)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line instead of text")
    parser.add_argument("--root", default="/", metavar="DIR", help="read proc/ and sys/ under DIR (default /)")
    add_node_arguments(parser, what="check the paths")
    parser.add_argument(
        "--data-dir", metavar="DIR", default=None, help="with a node: the data dir whose known_hosts is racperf's own"
    )
    parser.epilog = (
        f"Reads only, never writes. Exit status: 0 every PATH may be written; "
        f"{REFUSED_EXIT_STATUS} at least one is refused (the reasons are printed); 2 usage error, or the node "
        "cannot be reached or named."
    )


def _verdicts(args: argparse.Namespace) -> list[SafetyVerdict]:
    """Each path's verdict, here or on the node the options name; ClusterFileError, OSError."""
    node = node_from_args(args)
    if node.is_local:
        return [check_write_target(path, root=Path(args.root)) for path in args.paths]
    if args.root != "/":
        raise ClusterFileError("--root goes with this machine only (a node's facts are read there)")
    return check_write_targets(connect(node.ssh_target()), node.name, args.paths)


def run(args: argparse.Namespace) -> int:
    try:
        verdicts = _verdicts(args)
    except (ValueError, OSError) as exc:  # ClusterFileError is a ValueError; SshError an OSError
        print(f"racperf check-target: {exc}", file=sys.stderr)
        return 2
    status = 0
    for path, verdict in zip(args.paths, verdicts):
        if not verdict.allowed:
            status = REFUSED_EXIT_STATUS
        if args.json:
            # the file's identity pins it for the jail of a run; it is no part of the verdict shown
            shown = {k: v for k, v in dataclasses.asdict(verdict).items() if k != "identity"}
            print(strict_json.dumps(shown), flush=True)
        elif verdict.allowed:
            examined = f" (examined {', '.join(verdict.devices)})" if verdict.devices else ""
            print(f"{path}: may be written{examined}", flush=True)
        else:
            print(explain(verdict), flush=True)
    return status
