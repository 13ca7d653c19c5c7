"""May a benchmark server listen on this TCP port here? Checked before starting it.

A network benchmark server (oratcptest, netserver) started on a port that is taken fails
(oratcptest: "Failed to listen a socket : Address already in use") or, worse, on a DB node,
collides with the Oracle listener. We check first, say who holds the port when we can tell,
and suggest a free one.

A server asked for a free port (port 0) that cannot pick one and say it gets one picked for
it: here by the kernel (:func:`free_port_here`), on another node from the node's own socket
tables (:func:`free_port_on`), as the node's kernel would pick: in its
``ip_local_port_range``, not in ``ip_local_reserved_ports`` (where a RAC keeps its own), not
used by any TCP or UDP socket there, not a database port.
"""

from __future__ import annotations

import errno
import random
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

import psutil

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

#: Ports a database node typically serves (the server would fight them), and what they are.
DB_LISTENER_PORTS: dict[int, str] = {
    1521: "the default Oracle Net listener port",
    1522: "a common second Oracle Net listener / SCAN listener port",
    1525: "a common alternate Oracle Net listener port",
    1158: "the Enterprise Manager Database Control port",
    5500: "the EM Express port",
}

#: Names of processes that are Oracle listeners (their ports count as listener ports too).
LISTENER_PROCESS_NAMES = ("tnslsnr",)

#: Where suggestions start: oratcptest's documentation uses 5555.
SUGGESTION_START_PORT = 5555


@dataclass(frozen=True, slots=True)
class PortCheck:
    """The verdict on one port. ``problem`` blocks the start; ``warning`` only informs."""

    host: str
    port: int
    in_use: bool
    owner: str | None = None
    problem: str | None = None
    warning: str | None = None
    suggestion: int | None = None

    @property
    def ok(self) -> bool:
        """True when the server may start on this port."""
        return self.problem is None


def can_bind(port: int, host: str = "") -> bool:
    """True when a listening TCP socket can be bound on host:port right now.

    SO_REUSEADDR is set as Java's ServerSocket and netserver set it, so sockets in TIME_WAIT
    do not make a free port look taken.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host or ("::" if family == socket.AF_INET6 else "0.0.0.0"), port))
            sock.listen(1)
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def _listeners() -> dict[int, str]:
    """Local TCP ports in LISTEN state -> "name (pid N)" where psutil may tell (else "")."""
    owners: dict[int, str] = {}
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.AccessDenied, PermissionError, OSError):
        return owners
    for conn in connections:
        if conn.status != psutil.CONN_LISTEN or not conn.laddr:
            continue
        label = ""
        if conn.pid:
            try:
                label = f"{psutil.Process(conn.pid).name()} (pid {conn.pid})"
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                label = f"pid {conn.pid}"
        owners.setdefault(conn.laddr.port, label)
    return owners


def listener_ports() -> dict[int, str]:
    """Ports on which an Oracle listener process (tnslsnr) listens here -> its label."""
    return {
        port: owner
        for port, owner in _listeners().items()
        if any(owner.startswith(name) for name in LISTENER_PROCESS_NAMES)
    }


def suggest_free_port(host: str = "", start: int = SUGGESTION_START_PORT, tries: int = 200) -> int | None:
    """The first port from ``start`` that is bindable and not a database port."""
    for port in range(start, min(start + tries, 65536)):
        if port in DB_LISTENER_PORTS:
            continue
        try:
            if can_bind(port, host):
                return port
        except OSError:
            return None
    return None


def check_listen_port(port: int, host: str = "", *, what: str = "the server") -> PortCheck:
    """Check ``port`` before ``what`` listens on it at ``host`` ("" = all addresses).

    Problems (block the start): out of range, in use (naming the owner when known; a database
    listener named as such). Warning only: a free port that a database listener normally uses.
    """
    where = f"{host}:{port}" if host else f"port {port}"
    if not 1 <= int(port) <= 65535:
        return PortCheck(host, port, False, problem=f"port {port} is out of range (1-65535)")
    try:
        bindable = can_bind(port, host)
    except OSError as exc:
        return PortCheck(host, port, False, problem=f"cannot listen on {where}: {exc.strerror}")
    listeners = _listeners()
    owner = listeners.get(port) or None
    oracle_listeners = listener_ports()
    if not bindable:
        suggestion = suggest_free_port(host)
        if port in oracle_listeners or (owner and owner.startswith(LISTENER_PROCESS_NAMES)):
            who = f"the Oracle listener {oracle_listeners.get(port) or owner}"
        elif owner:
            who = owner
        elif port in DB_LISTENER_PORTS:
            who = f"another process (this is {DB_LISTENER_PORTS[port]}: probably the database's)"
        else:
            who = "another process"
        if port < 1024 and owner is None and not listeners.get(port):
            # EACCES on a privileged port looks the same as "in use" to a bind test.
            who += " or it is a privileged port (< 1024) and we are not root"
        hint = f"; use another port, e.g. {suggestion}" if suggestion else "; use another port"
        return PortCheck(
            host,
            port,
            True,
            owner=owner,
            problem=f"{where} is already in use by {who}: {what} could not listen there "
            f'("Address already in use"){hint}',
            suggestion=suggestion,
        )
    warning = None
    if port in DB_LISTENER_PORTS:
        warning = (
            f"{where} is free now, but it is {DB_LISTENER_PORTS[port]}: a database listener "
            f"started later would collide with {what}"
        )
    return PortCheck(host, port, False, owner=None, warning=warning)


# ---- a free port on another node -----------------------------------------------------------

#: the kernel's ephemeral range when a node does not say (Linux's default)
DEFAULT_EPHEMERAL_RANGE = (32768, 60999)
#: what a node is asked: its ephemeral range, its reserved ports, every socket table (a table
#: missing, IPv6 off, is left out); each file after a ``== PATH`` line
_NODE_PORTS_SH = (
    "for f in /proc/sys/net/ipv4/ip_local_port_range /proc/sys/net/ipv4/ip_local_reserved_ports "
    '/proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6; do [ -r "$f" ] && '
    '{ echo "== $f"; cat "$f"; }; done; exit 0'
)


def free_port_here(host: str = "") -> int:
    """A port free on ``host`` here right now, the kernel's pick ("" = all addresses)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _port_list(text: str) -> set[int]:
    """``ip_local_reserved_ports``: "6100-6200,7000" -> the ports."""
    ports: set[int] = set()
    for part in text.replace("\n", ",").split(","):
        low, _, high = part.strip().partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            ports.update(range(int(low), int(high or low) + 1))
    return ports


def free_port_from_tables(text: str, rng: random.Random | None = None) -> int:
    """A port free by a node's answer to :data:`_NODE_PORTS_SH`; ValueError when its range has
    none (or says nothing that makes one)."""
    sections: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("== "):
            lines = sections.setdefault(line[3:].strip(), [])
        else:
            lines.append(line)
    low, high = DEFAULT_EPHEMERAL_RANGE
    bounds = " ".join(sections.get("/proc/sys/net/ipv4/ip_local_port_range", [])).split()
    if len(bounds) == 2 and all(b.isdigit() for b in bounds) and 1024 <= int(bounds[0]) <= int(bounds[1]) <= 65535:
        low, high = int(bounds[0]), int(bounds[1])
    if "/proc/net/tcp" not in sections:
        raise ValueError("its /proc/net/tcp cannot be read (the ports in use there are unknown)")
    taken = _port_list(" ".join(sections.get("/proc/sys/net/ipv4/ip_local_reserved_ports", [])))
    taken |= set(DB_LISTENER_PORTS)
    for name, table in sections.items():
        if not name.startswith("/proc/net/"):
            continue
        for row in table[1:]:  # the heading first
            fields = row.split()
            # "sl local_address ...": local_address is HEXADDR:HEXPORT, any state counts
            if len(fields) > 1 and ":" in fields[1]:
                try:
                    taken.add(int(fields[1].rsplit(":", 1)[1], 16))
                except ValueError:
                    continue
    free = [port for port in range(low, high + 1) if port not in taken]
    if not free:
        raise ValueError(f"no port of the range {low}-{high} is free")
    return (rng or random.SystemRandom()).choice(free)


def free_port_on(host: Host, rng: random.Random | None = None) -> int:
    """A port free on the node ``host`` now (module doc); ValueError naming the node when it
    cannot be told, OSError when the node cannot be reached."""
    answer = host.run_briefly(["sh", "-c", _NODE_PORTS_SH], 15.0)
    try:
        return free_port_from_tables(answer.stdout, rng)
    except ValueError as exc:
        raise ValueError(f"cannot pick a free port on {host.name}: {exc}") from None
