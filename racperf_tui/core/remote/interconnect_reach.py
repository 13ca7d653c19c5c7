"""Does every node reach every other on its interconnect address? (``racperf nodes``)

Checked from each node, not from this host (which may not be on the private network at all):
one POSIX-sh command on the node, over the connection the node check already has, tries each
other node's interconnect address at once, from the node's own interconnect address (bound,
so the test leaves by the interconnect and not by a public route):

* with python3 there: a TCP connect to port REACH_PORT (sshd's); an answer of either kind
  (accepted, or refused: the peer's kernel said no) is "reached", a timeout or an ICMP error
  ("No route to host") is not; and each peer's MTU as the node's routing sees it (IP_MTU of a
  connected UDP socket), so an MTU mismatch between two nodes is named;
* without python3, ``ping -c 1 -W S -I OWN ADDRESS`` where ping is (reached or not, no MTU);
* with neither, the node says so and nothing is judged.

A firewall that drops TCP to port 22 on the interconnect reads as unreachable: the line says
which port was tried.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

#: the port tried on each peer (sshd's: open on a RAC node; refused counts as reached anyway)
REACH_PORT = 22
#: seconds each peer may take to answer
REACH_TIMEOUT_S = 3.0

#: argv: own address ("" for none), the timeout, then the peers' addresses; one line a peer:
#: ``reach ADDRESS MS MTU RESULT...`` (MTU 0: unknown; RESULT "ok" or the reason)
_REACH_PY = r"""
import socket, sys, threading, time
own, timeout, port = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
found = {}
def reach(address):
    six = ":" in address
    family = socket.AF_INET6 if six else socket.AF_INET
    started = time.monotonic()
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        if own:
            sock.bind((own, 0))
        sock.connect((address, port))
        result = "ok"
    except ConnectionRefusedError:
        result = "ok"
    except socket.timeout:
        result = "no answer within %g s (TCP port %d)" % (timeout, port)
    except OSError as exc:
        result = "%s (TCP port %d)" % (exc.strerror or exc, port)
    finally:
        sock.close()
    seconds = time.monotonic() - started
    mtu = 0
    try:
        udp = socket.socket(family, socket.SOCK_DGRAM)
        if own:
            udp.bind((own, 0))
        udp.connect((address, 9))
        mtu = udp.getsockopt(41 if six else 0, 24 if six else 14)
        udp.close()
    except OSError:
        pass
    found[address] = "reach %s %.1f %d %s" % (address, seconds * 1000.0, mtu, result)
threads = [threading.Thread(target=reach, args=(a,)) for a in sys.argv[4:]]
for t in threads:
    t.start()
for t in threads:
    t.join()
for a in sys.argv[4:]:
    print(found[a])
"""

_REACH_SH = """
own=$1 to=$2 port=$3; shift 3
if command -v python3 >/dev/null 2>&1; then
  exec python3 -c "$REACH_PY" "$own" "$to" "$port" "$@"
elif command -v ping >/dev/null 2>&1; then
  for a in "$@"; do
    if ping -c 1 -W "${to%.*}" ${own:+-I "$own"} "$a" >/dev/null 2>&1; then
      echo "reach $a 0 0 ok"
    else
      echo "reach $a 0 0 no answer to ping"
    fi
  done
else
  echo "noreach neither python3 nor ping on the node: the interconnect was not checked"
fi
"""


@dataclass(frozen=True)
class PeerReach:
    """One direction: ``source`` (the node the command ran on) to ``target``'s interconnect."""

    source: str
    target: str
    address: str
    reached: bool
    reason: str = ""
    ms: float | None = None
    #: the source's MTU towards the target (None: unknown)
    mtu: int | None = None

    def line(self) -> str:
        head = f"{self.source} -> {self.target} ({self.address}) interconnect"
        if self.reached:
            mtu = f", MTU {self.mtu}" if self.mtu else ""
            return f"{head}: ok{f' in {self.ms:.1f} ms' if self.ms else ''}{mtu}"
        return f"{head}: UNREACHABLE: {self.reason}"

    def to_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "target": self.target,
            "address": self.address,
            "reached": self.reached,
            "reason": self.reason or None,
            "ms": self.ms,
            "mtu": self.mtu,
        }


def reach_command(own: str, addresses: Sequence[str], timeout_s: float = REACH_TIMEOUT_S) -> str:
    """The sh command a node runs (module doc)."""
    args = " ".join(shlex.quote(a) for a in (own, f"{timeout_s:g}", str(REACH_PORT), *addresses))
    return f"REACH_PY={shlex.quote(_REACH_PY)} sh -c {shlex.quote(_REACH_SH)} racperf-reach {args}"


def reach_here(own: str, addresses: Sequence[str], timeout_s: float = REACH_TIMEOUT_S) -> str:
    """The same test run on this machine (a node named ``local``), by this python."""
    argv = [sys.executable, "-c", _REACH_PY, own, f"{timeout_s:g}", str(REACH_PORT), *addresses]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s + 10)
    return done.stdout


def parse_reach(source: str, peers: Sequence[tuple[str, str]], text: str) -> list[PeerReach]:
    """The command's lines -> one PeerReach per ``(name, address)`` of ``peers``; a peer the
    output does not name is unreached with the reason the node gave (or "no answer")."""
    said: dict[str, PeerReach] = {}
    excuse = "the node's check said nothing of it"
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "noreach":
            excuse = rest.strip()
            continue
        fields = rest.split(" ", 3)
        if kind != "reach" or len(fields) < 4:
            continue
        address, ms, mtu, result = fields
        try:
            ms_value, mtu_value = float(ms), int(mtu)
        except ValueError:
            continue
        said[address] = PeerReach(
            source,
            "",
            address,
            result == "ok",
            "" if result == "ok" else result.strip(),
            ms_value or None,
            mtu_value or None,
        )
    found = []
    for name, address in peers:
        reach = said.get(address)
        if reach is None:
            found.append(PeerReach(source, name, address, False, excuse))
        else:
            found.append(PeerReach(source, name, address, reach.reached, reach.reason, reach.ms, reach.mtu))
    return found


def mtu_mismatches(reaches: Sequence[PeerReach]) -> list[str]:
    """A sentence for each pair of nodes whose MTUs towards each other differ."""
    mtus = {(r.source, r.target): r.mtu for r in reaches if r.mtu}
    said = []
    for (source, target), there in sorted(mtus.items()):
        back = mtus.get((target, source))
        if back is None or source > target or back == there:
            continue
        bigger = source if there > back else target
        said.append(
            f"{source} <-> {target} interconnect MTU MISMATCH: {there} on {source}, {back} on {target}: "
            f"frames larger than {min(there, back)} bytes from {bigger} are dropped"
        )
    return said
