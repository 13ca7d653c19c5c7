"""Who a node is and why it cannot be used, without asyncssh: the ``[user@]host[:port]`` of
a node (:class:`SshTarget`), the errors of :mod:`racperf_tui.core.remote.ssh` and their one-line
reason, racperf's own known_hosts file.

Its own module so that reading a cluster file, planning or listing runs, and starting the
dashboard do not import asyncssh (0.25 s at load ~1, README Performance); ``core.ssh``
re-exports every name, the connections are there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from racperf_tui.core.paths import resolve_data_dir

KNOWN_HOSTS_NAME = "known_hosts"


class SshError(OSError):
    """A node cannot be reached, logged into or run on; the message says why."""


class Unreachable(SshError):
    """No SSH server answered: no such host, refused, no route, timed out."""


class LoginRefused(SshError):
    """The node answered and its host key is known, but it refused the login."""


@dataclass(frozen=True)
class HostKeyOffer:
    """A host key a node offered that no known_hosts file trusts: what a user is shown (the
    host as known_hosts names it, the key type, the SHA256 fingerprint as OpenSSH prints it)
    and what recording it writes (``line`` into ``file``)."""

    host: str  # ``host`` for port 22, else ``[host]:port``
    algorithm: str  # ssh-ed25519, ecdsa-sha2-nistp256, rsa-sha2-512...
    fingerprint: str  # SHA256:...
    line: str  # the known_hosts line that trusts it
    file: str  # where it is recorded: racperf's own known_hosts (or the first --known-hosts)


@dataclass(frozen=True)
class RecordedKey:
    """A key on record for a host: the file and line (1-based) that holds it."""

    file: str
    line: int
    algorithm: str
    fingerprint: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


class HostKeyError(SshError):
    """The node's host key is not on record (``changed`` False: ``offer`` is what it offered)
    or differs from it (True: ``recorded`` are the keys on record, with their file and line)."""

    def __init__(
        self,
        message: str,
        *,
        changed: bool,
        fingerprint: str,
        summary: str = "",
        offer: HostKeyOffer | None = None,
        recorded: tuple[RecordedKey, ...] = (),
    ) -> None:
        super().__init__(message)
        self.changed = changed
        self.fingerprint = fingerprint
        #: the refusal in one line (what a list of nodes shows)
        self.summary = summary or " ".join(message.split())
        #: an unknown key only (never a changed one): what the node offered
        self.offer = None if changed else offer
        self.recorded = recorded


def one_line(exc: BaseException) -> str:
    """Why a node cannot be used, in one line (a HostKeyError's summary; whitespace folded)."""
    if isinstance(exc, HostKeyError):
        return exc.summary
    return " ".join(str(exc).split()) or type(exc).__name__


# ---- where: [user@]host[:port] -----------------------------------------------------------

_SPEC = re.compile(
    r"^(?:(?P<user>[^@\s]+)@)?(?:\[(?P<v6>[0-9A-Fa-f:.%\w]+)\]|(?P<host>[^:@\[\]\s]+))"
    r"(?::(?P<port>\d{1,5}))?$"
)


@dataclass(frozen=True)
class SshTarget:
    """A node and how to log into it. ``port``/``user`` None: ~/.ssh/config's, else 22 / ours.
    ``known_hosts`` None: racperf's own file and ~/.ssh/known_hosts. ``config`` None: ~/.ssh/config."""

    host: str
    user: str | None = None
    port: int | None = None
    identity: str | None = None
    known_hosts: tuple[str, ...] | None = None
    config: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, spec: str, *, identity: str | None = None, known_hosts: Iterable[str] | None = None) -> SshTarget:
        """``[user@]host[:port]`` (an IPv6 address in brackets: ``[::1]:2222``); ValueError."""
        match = _SPEC.match(spec.strip())
        if not match:
            raise ValueError(f"{spec!r}: expected [user@]host[:port]")
        port = int(match["port"]) if match["port"] else None
        if port is not None and not 0 < port < 65536:
            raise ValueError(f"{spec!r}: port {port} is not 1..65535")
        return cls(
            match["host"] or match["v6"],
            match["user"],
            port,
            identity,
            tuple(str(p) for p in known_hosts) if known_hosts else None,
        )

    @property
    def display(self) -> str:
        """``user@host:port`` with what is known (the store's host name of a run)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        return f"{user}{host}" + (f":{self.port}" if self.port else "")

    def known_hosts_files(self) -> list[str]:
        if self.known_hosts is not None:
            return list(self.known_hosts)
        return [str(racperf_known_hosts()), str(Path.home() / ".ssh" / "known_hosts")]


def racperf_known_hosts() -> Path:
    """racperf's own known_hosts file (DATA_DIR/known_hosts; may not exist)."""
    return resolve_data_dir(create=False) / KNOWN_HOSTS_NAME
