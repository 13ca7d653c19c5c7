"""Is each node of the cluster usable, and what is installed there? (``racperf nodes``)

One check per node, all in parallel (one thread each), each bounded by the connect timeout,
so a dead node costs the others nothing: reach it (TCP, key exchange), verify its host key,
log in, then one remote POSIX-sh command that says where each program racperf drives is
(``command -v``), the ``$ORACLE_HOME`` of the login, the homes listed in /etc/oratab, the
kernel and the host name. The stage that failed is named, with the reason in one line. Then,
over the same connection, whether the node reaches every other node on its interconnect
address (core/remote/interconnect_reach.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from racperf_tui.core.remote.cluster import Node
from racperf_tui.core.remote.interconnect_reach import (
    REACH_TIMEOUT_S,
    PeerReach,
    parse_reach,
    reach_command,
    reach_here,
)
from racperf_tui.core.remote.ssh import (
    CONNECT_TIMEOUT_S,
    Connection,
    HostKeyError,
    LoginRefused,
    SshError,
    Unreachable,
    connect,
    one_line,
    record_host_key,
)

#: the programs racperf runs on a node, in the order a line lists them
PROGRAMS = ("fio", "iostat", "iperf3", "netperf", "netserver", "java", "sqlplus", "python3")

_FACTS_SH = (
    "for p in " + " ".join(PROGRAMS) + '; do printf \'prog %s %s\\n\' "$p" "$(command -v "$p" 2>/dev/null)"; done; '
    "printf 'home %s\\n' \"$ORACLE_HOME\"; "
    "if [ -r /etc/oratab ]; then sed -n 's/^[^#:][^:]*:\\(\\/[^:]*\\):.*/oratab \\1/p' /etc/oratab; fi; "
    "printf 'kernel %s\\n' \"$(uname -sr)\"; printf 'hostname %s\\n' \"$(uname -n)\""
)


@dataclass
class NodeCheck:
    """What the check found. ``stage`` is where it stopped: "ok", "reach", "host key",
    "login" or "command"."""

    node: Node
    stage: str = "ok"
    error: str | None = None
    programs: dict[str, str | None] = field(default_factory=dict)
    oracle_homes: list[str] = field(default_factory=list)
    kernel: str = ""
    hostname: str = ""
    seconds: float = 0.0
    #: ``accept_new``: the key recorded at this first contact ("[host]:port type SHA256:...")
    recorded_key: str | None = None
    #: from this node to each other node's interconnect address
    reach: list[PeerReach] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.stage == "ok"

    @property
    def reachable(self) -> bool:
        return self.stage != "reach"

    @property
    def host_key_known(self) -> bool | None:
        return None if self.stage == "reach" else self.stage != "host key"

    @property
    def authenticated(self) -> bool | None:
        return None if self.stage in ("reach", "host key") else self.stage != "login"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.node.name,
            "ssh": self.node.spec,
            "ok": self.ok,
            "stage": self.stage,
            "reachable": self.reachable,
            "host_key_known": self.host_key_known,
            "authenticated": self.authenticated,
            "error": self.error,
            "programs": dict(self.programs),
            "oracle_homes": list(self.oracle_homes),
            "kernel": self.kernel or None,
            "hostname": self.hostname or None,
            "seconds": round(self.seconds, 3),
            "recorded_host_key": self.recorded_key,
            "interconnect": [reach.to_json() for reach in self.reach],
        }


def parse_facts(text: str) -> tuple[dict[str, str | None], list[str], str, str]:
    """(programs -> path or None, Oracle homes, kernel, host name) from the facts command's output."""
    programs: dict[str, str | None] = {name: None for name in PROGRAMS}
    homes: list[str] = []
    kernel = hostname = ""
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "prog":
            name, _, path = rest.partition(" ")
            if name in programs:
                programs[name] = path.strip() if path.strip().startswith("/") else None
        elif kind in ("home", "oratab") and rest.strip().startswith("/"):
            if rest.strip() not in homes:
                homes.append(rest.strip())
        elif kind == "kernel":
            kernel = rest.strip()
        elif kind == "hostname":
            hostname = rest.strip()
    return programs, homes, kernel, hostname


def _check_local(node: Node) -> NodeCheck:
    check = NodeCheck(node, programs={name: shutil.which(name) for name in PROGRAMS})
    home = os.environ.get("ORACLE_HOME", "")
    try:
        with open("/etc/oratab", encoding="utf-8", errors="replace") as handle:
            oratab = handle.read(1 << 20)
    except OSError:
        oratab = ""
    lines = [f"home {home}"] + [
        f"oratab {line.split(':')[1]}" for line in oratab.splitlines() if line[:1] not in ("#", "") and ":" in line
    ]
    _, check.oracle_homes, _, _ = parse_facts("\n".join(lines))
    uname = os.uname()
    check.kernel, check.hostname = f"{uname.sysname} {uname.release}", uname.nodename
    return check


def _connect(node: Node, timeout_s: float, accept_new: bool, check: NodeCheck) -> Connection:
    """The node's connection; ``accept_new``: a host with no key on record at all (first
    contact) has the key it offers recorded and is connected again, as OpenSSH's
    StrictHostKeyChecking=accept-new; a changed key is refused all the same."""
    try:
        return connect(node.ssh_target(), fresh=True, timeout_s=timeout_s)
    except HostKeyError as exc:
        if not accept_new or exc.changed or exc.offer is None:
            raise
        offer = exc.offer
    try:
        record_host_key(offer)
    except OSError as exc:
        raise SshError(f"cannot record the host key of {offer.host} in {offer.file}: {exc.strerror or exc}") from None
    check.recorded_key = f"{offer.host} {offer.algorithm} {offer.fingerprint}"
    return connect(node.ssh_target(), fresh=True, timeout_s=timeout_s)


def check_node(
    node: Node,
    timeout_s: float = CONNECT_TIMEOUT_S,
    *,
    accept_new: bool = False,
    peers: Sequence[tuple[str, str]] = (),
) -> NodeCheck:
    """Check one node (see the module doc); never raises. ``accept_new``: see :func:`_connect`;
    ``peers``: (name, interconnect address) of the nodes it must reach."""
    started = time.monotonic()
    own = node.interconnect or ""
    if node.is_local:
        check = _check_local(node)
        if peers:
            try:
                check.reach = parse_reach(node.name, peers, reach_here(own, [a for _n, a in peers]))
            except (OSError, subprocess.SubprocessError) as exc:
                check.reach = parse_reach(node.name, peers, f"noreach {one_line(exc)}")
        check.seconds = time.monotonic() - started
        return check
    check = NodeCheck(node)
    try:
        connection = _connect(node, timeout_s, accept_new, check)
    except HostKeyError as exc:
        check.stage, check.error = "host key", one_line(exc)
    except LoginRefused as exc:
        check.stage, check.error = "login", one_line(exc)
    except Unreachable as exc:
        check.stage, check.error = "reach", one_line(exc)
    except (SshError, OSError) as exc:
        check.stage, check.error = "reach", one_line(exc)
    else:
        try:
            status, out, err = connection.run(_FACTS_SH, timeout_s=timeout_s, limit=64 << 10)
            if status != 0:
                check.stage = "command"
                check.error = f"the check command exited {status}: {one_line(ValueError(err.decode(errors='replace')))}"
            check.programs, check.oracle_homes, check.kernel, check.hostname = parse_facts(
                out.decode("utf-8", "replace")
            )
            if peers:
                command = reach_command(own, [a for _n, a in peers])
                _status, out, _err = connection.run(command, timeout_s=timeout_s + REACH_TIMEOUT_S, limit=64 << 10)
                check.reach = parse_reach(node.name, peers, out.decode("utf-8", "replace"))
        except (OSError, TimeoutError) as exc:
            check.stage, check.error = "command", one_line(exc)
        finally:
            connection.close()
    check.seconds = time.monotonic() - started
    return check


def check_nodes(
    nodes: Iterable[Node],
    timeout_s: float = CONNECT_TIMEOUT_S,
    *,
    accept_new: bool = False,
    interconnect: bool = False,
) -> list[NodeCheck]:
    """Every node checked at once, in the order given; ``interconnect``: each also tries every
    other node's interconnect address (``NodeCheck.reach``)."""
    nodes = list(nodes)
    if not nodes:
        return []

    def check(node: Node) -> NodeCheck:
        peers = [(other.name, other.address) for other in nodes if other != node] if interconnect else []
        return check_node(node, timeout_s, accept_new=accept_new, peers=peers)

    with ThreadPoolExecutor(max_workers=min(32, len(nodes)), thread_name_prefix="racperf-check") as pool:
        return list(pool.map(check, nodes))
