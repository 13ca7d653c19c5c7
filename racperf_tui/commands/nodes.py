"""``racperf nodes [--cluster FILE] [--timeout S] [--json] [--accept-new-host-keys] [--data-dir D]``:
the cluster file's nodes, each checked at once (core/remote/node_check.py): reachable, host key
known, login accepted, and which of fio, iostat (sysstat), iperf3, netperf/netserver, java,
sqlplus, python3 are installed there, with ORACLE_HOME ($ORACLE_HOME of the login, the homes in /etc/oratab).

One line per node: its name, ``ok`` or ``FAILED (stage)`` with the reason, the programs found
and those missing, the Oracle homes. Then the interconnect, tried from every node to every
other's interconnect address (core/remote/interconnect_reach.py): a line per pair that did
not reach (``n1 -> n2 (10.1.0.12) interconnect: UNREACHABLE: No route to host (TCP port 22)``),
one per pair of nodes whose MTUs differ, else one line saying all pairs answered.
``--json``: one object per node (``interconnect``: a list of ``{source, target, address,
reached, reason, ms, mtu}``).

``--accept-new-host-keys``: a node seen for the first time (no key of it on record in any
known_hosts file consulted) has the key it offers recorded in racperf's own known_hosts, as
OpenSSH's ``StrictHostKeyChecking=accept-new`` (``DATA_DIR/known_hosts``: ``--data-dir`` names
the data dir whose runs will use it); a key that differs from the record is refused all the
same. Each key recorded is said on stderr with its fingerprint and the file.

Exit status: 0 every node passed and reached every other; 1 at least one failed or did not
reach another on the interconnect; 2 no cluster file, or a wrong one.
"""

from __future__ import annotations

import argparse
import sys

from racperf_tui.core.disks.diskstats import printable_name
from racperf_tui.core.remote.cluster import ClusterFileError, default_cluster_path, load_cluster
from racperf_tui.core.remote.interconnect_reach import PeerReach, mtu_mismatches
from racperf_tui.core.remote.node_check import PROGRAMS, NodeCheck, check_nodes
from racperf_tui.core.remote.ssh import racperf_known_hosts
from racperf_tui.core.textio import strict_json

#: seconds a node may take to answer, key exchange and login included
DEFAULT_TIMEOUT_S = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cluster", metavar="FILE", default=None, help=f"the cluster file (default: {default_cluster_path()})"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"seconds each node may take to connect and log in (default {DEFAULT_TIMEOUT_S:g}); "
        "all are checked at once",
    )
    parser.add_argument(
        "--accept-new-host-keys",
        action="store_true",
        help="first contact only (as ssh's StrictHostKeyChecking=accept-new): a node with no key on record "
        "in any known_hosts file has the key it offers recorded in racperf's own known_hosts, unverified: "
        "use it only on a network you trust, and compare the fingerprints it prints; a CHANGED key is "
        "always refused",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per node instead of a line")
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="the data dir whose known_hosts is racperf's own (default $RACPERF_DATA_DIR or ~/.local/share/racperf)",
    )


def node_line(check: NodeCheck, width: int) -> str:
    name = printable_name(check.node.name).ljust(width)
    where = printable_name(check.node.spec)
    if not check.ok:
        return f"{name}  FAILED ({check.stage})  {printable_name(check.error or '')}"
    found = [p for p in PROGRAMS if check.programs.get(p)]
    missing = [p for p in PROGRAMS if not check.programs.get(p)]
    text = f"{name}  ok  {where}  {check.seconds * 1000:.0f} ms  {' '.join(found) or 'none of the tools'}"
    if missing:
        text += f" (missing: {' '.join(missing)})"
    homes = ", ".join(check.oracle_homes) or "-"
    return text + f"  ORACLE_HOME: {printable_name(homes)}"


def run(args: argparse.Namespace) -> int:
    try:
        cluster = load_cluster(args.cluster, required=True)
    except ClusterFileError as exc:
        print(f"racperf nodes: {exc}", file=sys.stderr)
        return 2
    if not cluster.nodes:
        print(f"racperf nodes: {cluster.path}: no [[node]] in it", file=sys.stderr)
        return 2
    if not args.timeout > 0:
        print("racperf nodes: --timeout must be more than 0 s", file=sys.stderr)
        return 2
    checks = check_nodes(cluster.nodes, timeout_s=args.timeout, accept_new=args.accept_new_host_keys, interconnect=True)
    width = max(len(check.node.name) for check in checks)
    for check in checks:
        if check.recorded_key:
            print(
                f"racperf nodes: recorded the new host key of {printable_name(check.node.name)} "
                f"({printable_name(check.recorded_key)}) in {racperf_known_hosts()}",
                file=sys.stderr,
            )
        if args.json:
            print(strict_json.dumps(check.to_json()))
        else:
            print(node_line(check, width))
    reaches = [reach for check in checks for reach in check.reach]
    if not args.json:
        for line in interconnect_lines(reaches):
            print(line)
    return 0 if all(check.ok for check in checks) and all(r.reached for r in reaches) else 1


def interconnect_lines(reaches: list[PeerReach]) -> list[str]:
    """A line per pair that did not reach, one per MTU mismatch, else one that says all did."""
    failed = [printable_name(r.line()) for r in reaches if not r.reached]
    mismatched = mtu_mismatches(reaches)
    if failed or mismatched:
        return failed + mismatched
    if not reaches:
        return []
    mtus = sorted({r.mtu for r in reaches if r.mtu})
    said = f", MTU {mtus[0]} everywhere" if len(mtus) == 1 else ""
    return [f"interconnect: every node reached every other ({len(reaches)} pairs){said}"]
