"""SSH connections to the cluster's nodes, with asyncssh, behind a synchronous API.

- Host keys are always verified: against racperf's own known_hosts file (DATA_DIR/known_hosts)
  and ~/.ssh/known_hosts, or the files given (``--known-hosts``). Nothing is accepted on the
  fly here: an unknown host is refused with its key's fingerprint and the line that would
  trust it, the offer (:class:`HostKeyOffer`) in the error, so a UI can show it and, once
  the user confirms, :func:`record_host_key` appends it to racperf's file; a host whose key
  differs from the one on record is refused loudly, both fingerprints and the file:line on
  record named (:class:`HostKeyError`), and never offered.
- ~/.ssh/config (User, Port, HostName, IdentityFile...) and the agent ($SSH_AUTH_SOCK) are
  honoured, as OpenSSH does; ``identity`` adds a key file.
- Keepalives every KEEPALIVE_INTERVAL_S, the link declared dead after KEEPALIVE_COUNT_MAX
  unanswered ones; tighter (RUN_KEEPALIVE_*) while a run's benchmark goes on over the
  connection (:meth:`Connection.run_started`), so its state follows the link within ~15 s.
- One connection per node (:func:`connect` keeps a small pool), channels opened on it.

asyncssh runs in one background thread's event loop (:func:`runtime`); every public call here
is synchronous and thread-safe. Channels (:class:`Channel`) hand their output over as bytes
(asyncssh ``encoding=None``: an invalid UTF-8 byte is just a byte) through a queue whose wake-up
pipe a caller can select() on with its own fds.

Code that runs *in* that loop (coroutines handed to ``runtime().loop``: the cluster monitor,
one coroutine per node) uses the async side instead, which never blocks the loop and never
hops to another thread: :func:`connect_async` (the same pool), :meth:`Connection.open_stream`
(an :class:`AsyncChannel`, read with ``await read_until(...)``) and
:meth:`Connection.abort_async`.
"""

from __future__ import annotations

import asyncio
import collections
import fcntl
import os
import re
import select
import shlex
import socket
import threading
import time
from collections.abc import Coroutine, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import asyncssh

# the names that need no asyncssh live there (the dashboard and the cluster file load without
# it); re-exported: every caller keeps importing them from here
from racperf_tui.core.remote.ssh_target import (  # noqa: F401
    KNOWN_HOSTS_NAME,
    HostKeyError,
    HostKeyOffer,
    LoginRefused,
    RecordedKey,
    SshError,
    SshTarget,
    Unreachable,
    one_line,
    racperf_known_hosts,
)

KEEPALIVE_INTERVAL_S = 15.0
KEEPALIVE_COUNT_MAX = 3
#: while a run's benchmark goes on over a connection: a link silent for 3 s gets a keepalive,
#: the 4th unanswered one (15 s of silence) closes the connection, so the run records the loss
#: within ~17 s of the cut, not the 60 s of the idle setting. Not tighter: a blip that made
#: the node's watchdog stop the benchmark (4-8 s) must be able to come back (TCP's retransmit
#: after 6-8 s of loss comes ~12.6 s after the cut) and say so (core/remote/ssh_host.py).
RUN_KEEPALIVE_INTERVAL_S = 3.0
RUN_KEEPALIVE_COUNT_MAX = 4
CONNECT_TIMEOUT_S = 20.0
#: a channel whose unread output passes this stops reading (SSH flow control) until drained
MAX_BUFFERED_BYTES = 8 << 20

T = TypeVar("T")


# ---- the event loop thread ------------------------------------------------------------------


class _Runtime:
    """One daemon thread running an asyncio loop; :meth:`run` calls a coroutine there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._main, name="racperf-ssh", daemon=True)
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        if threading.current_thread() is self.thread:
            raise RuntimeError("synchronous SSH call from the SSH thread itself")
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout_s)
        except TimeoutError:
            future.cancel()
            raise

    def call(self, function: Any, *args: Any) -> None:
        """Run a plain function in the loop thread, soon (fire and forget)."""
        self.loop.call_soon_threadsafe(function, *args)


_runtime: _Runtime | None = None
_runtime_lock = threading.Lock()


def runtime() -> _Runtime:
    global _runtime
    with _runtime_lock:
        if _runtime is None or not _runtime.thread.is_alive():
            _runtime = _Runtime()
        return _runtime


# ---- host keys ----------------------------------------------------------------------------


class _Client(asyncssh.SSHClient):
    """Remembers the host key a server offered that known_hosts does not trust (asyncssh
    asks us only for those), so the refusal can show its fingerprint. Never accepts one."""

    def __init__(self) -> None:
        self.refused_key: asyncssh.SSHKey | None = None

    def validate_host_public_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        self.refused_key = key
        return False


def _read_known_hosts(files: list[str]) -> tuple[asyncssh.SSHKnownHosts, list[str]]:
    """The known hosts of the files that exist (never None: None would disable checking)."""
    present = [f for f in files if os.path.isfile(f)]
    if not present:
        return asyncssh.import_known_hosts(""), []
    try:
        return asyncssh.read_known_hosts(present), present
    except (OSError, ValueError) as exc:
        raise SshError(f"cannot read known hosts {', '.join(present)}: {exc}") from exc


def _known_hosts_pattern(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def _recorded_keys(files: list[str], host: str, addr: str, port: int) -> tuple[RecordedKey, ...]:
    """The keys on record for the host, each with the file and line that holds it (a line is
    read on its own by asyncssh, so hashed names and patterns match as they do when checking)."""
    found: list[RecordedKey] = []
    for file in files:
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                lines = handle.read(8 << 20).splitlines()
        except OSError:
            continue
        for number, text in enumerate(lines, 1):
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            try:
                keys = asyncssh.match_known_hosts(asyncssh.import_known_hosts(text + "\n"), host, addr, port)[0]
            except (ValueError, asyncssh.Error):
                continue
            for key in keys:  # the name and the address may both match the line: one record
                recorded = RecordedKey(file, number, key.get_algorithm(), key.get_fingerprint("sha256"))
                if recorded not in found:
                    found.append(recorded)
    return tuple(found)


#: characters known_hosts reads as patterns, lists, negation or a comment in a host name
_KNOWN_HOSTS_PATTERN = re.compile(r"[*?!,|#\s]")


def _host_key_message(
    target: SshTarget, port: int, key: asyncssh.SSHKey, known: asyncssh.SSHKnownHosts, files: list[str], addr: str
) -> HostKeyError:
    fingerprint = key.get_fingerprint("sha256")
    algorithm = key.get_algorithm()
    where = _known_hosts_pattern(target.host, port)
    on_record = asyncssh.match_known_hosts(known, target.host, addr, port)[0]
    if on_record:
        recorded_keys = _recorded_keys(files, target.host, addr, port)
        if recorded_keys:
            recorded = ", ".join(f"{k.algorithm} {k.fingerprint} ({k.where})" for k in recorded_keys)
            fix = " ".join(sorted({k.where for k in recorded_keys}))
        else:
            recorded = ", ".join(f"{k.get_algorithm()} {k.get_fingerprint('sha256')}" for k in on_record)
            recorded += f" ({', '.join(files)})"
            fix = ", ".join(files)
        return HostKeyError(
            f"@@@ HOST KEY OF {where} HAS CHANGED: refused @@@\n"
            f"  it offers {algorithm} {fingerprint}, the record says {recorded}.\n"
            "  Someone may be intercepting the connection, or the node was reinstalled. Verify the new "
            "key on the node (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub), then remove or replace the "
            f"line on record ({fix}).",
            changed=True,
            fingerprint=fingerprint,
            summary=f"{where}: HOST KEY HAS CHANGED, refused: it offers {algorithm} {fingerprint}, "
            f"the record says {recorded}",
            recorded=recorded_keys,
        )
    own = target.known_hosts[0] if target.known_hosts else str(racperf_known_hosts())
    key_type, key_data = key.export_public_key("openssh").decode().split()[:2]
    if _KNOWN_HOSTS_PATTERN.search(target.host):
        # recorded as given, 'rac1,*' would trust this key for every host (a pattern list)
        return HostKeyError(
            f"host {where} is not known: it offers {algorithm} key {fingerprint}, and its name has a "
            "character known_hosts reads as a pattern (* ? ! , | #): racperf records no key for it; "
            "connect by the node's real name or address",
            changed=False,
            fingerprint=fingerprint,
            summary=f"{where}: host key unknown ({algorithm} {fingerprint}); a name with a pattern character "
            "is never recorded",
        )
    line = f"{where} {key_type} ..."
    port_option = f"-p {port} " if port != 22 else ""
    scan = f"ssh-keyscan {port_option}-t {algorithm.replace('ssh-', '')} {target.host}"
    return HostKeyError(
        f"host {where} is not known: it offers {algorithm} key {fingerprint}.\n"
        f"  racperf never trusts a key on first sight. Compare the fingerprint with the node's own "
        f"(ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on it), then record it:\n"
        f"    {scan} >> {shlex.quote(own)}\n"
        f"  (a line '{line}'), or log in once with ssh, which records it in ~/.ssh/known_hosts.",
        changed=False,
        fingerprint=fingerprint,
        summary=f"{where}: host key unknown ({algorithm} {fingerprint}): verify it, then: {scan} >> {shlex.quote(own)}",
        offer=HostKeyOffer(where, algorithm, fingerprint, f"{where} {key_type} {key_data}", own),
    )


def record_host_key(offer: HostKeyOffer) -> Path:
    """Append the offered key to its known_hosts file (made 0600, its directory 0700, where
    missing), under an exclusive lock so two racperf processes never interleave lines. Only
    for a key the user confirmed: the caller shows the offer first. OSError."""
    path = Path(offer.file)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        size = os.fstat(handle.fileno()).st_size
        # a file whose last line lacks its newline would have ours glued onto it
        gap = b""
        if size:
            handle.seek(size - 1)
            gap = b"" if handle.read(1) == b"\n" else b"\n"
        handle.write(gap + offer.line.encode() + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    return path


# ---- connections ----------------------------------------------------------------------------


class Connection:
    """One SSH connection to a node. Thread-safe; channels are opened with :meth:`open_channel`."""

    def __init__(self, target: SshTarget, conn: asyncssh.SSHClientConnection, setup_s: float) -> None:
        self.target = target
        self._conn = conn
        #: seconds the connection took to set up (TCP, key exchange, authentication)
        self.setup_s = setup_s
        self._closed = threading.Event()
        self._runs = 0
        self._runs_lock = threading.Lock()
        runtime().call(self._watch_close)

    def _watch_close(self) -> None:
        async def wait() -> None:
            await self._conn.wait_closed()
            self._closed.set()

        asyncio.ensure_future(wait())

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def run_started(self) -> None:
        """A run's benchmark goes on over this connection: the tight keepalives (see
        RUN_KEEPALIVE_INTERVAL_S) until every such run called :meth:`run_ended`."""
        with self._runs_lock:
            self._runs += 1
            if self._runs == 1:
                runtime().call(self._conn.set_keepalive, RUN_KEEPALIVE_INTERVAL_S, RUN_KEEPALIVE_COUNT_MAX)

    def run_ended(self) -> None:
        with self._runs_lock:
            self._runs = max(0, self._runs - 1)
            if self._runs == 0:
                runtime().call(self._conn.set_keepalive, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT_MAX)

    def wait_closed(self, timeout_s: float) -> bool:
        """Whether the connection is closed, waiting up to ``timeout_s`` for it: a channel
        learns of a dropped connection one event-loop step before the connection says so."""
        return self._closed.wait(timeout_s)

    def open_channel(self, command: str, *, stdin: bytes | None = None, eof: bool = False) -> Channel:
        """Run ``command`` (a shell command line, for the remote login shell) on a new session
        channel; its output as bytes. ``stdin``: written first; ``eof``: then closed."""
        channel = Channel(self, command)
        runtime().run(channel._open(stdin, eof), CONNECT_TIMEOUT_S)
        return channel

    def run(
        self, command: str, *, stdin: bytes | None = None, timeout_s: float = 60.0, limit: int = 64 << 20
    ) -> tuple[int | None, bytes, bytes]:
        """Run a short command to its end: (exit status, stdout, stderr); TimeoutError."""
        channel = self.open_channel(command, stdin=stdin, eof=True)
        out: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
        deadline = time.monotonic() + timeout_s
        sizes = {"stdout": 0, "stderr": 0}
        try:
            while not channel.closed or channel.pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.target.display}: {command[:80]!r} did not end within {timeout_s:g} s")
                for stream, chunk in channel.read(min(left, 1.0)):
                    if sizes[stream] < limit:
                        out[stream].append(chunk)
                        sizes[stream] += len(chunk)
        finally:
            channel.close()
        return channel.exit_status, b"".join(out["stdout"]), b"".join(out["stderr"])

    def close(self) -> None:
        """Close the connection (every channel on it ends)."""
        if not self.closed:
            runtime().call(self._conn.close)
            self._closed.wait(5.0)

    def abort(self) -> None:
        """Drop the TCP connection without a goodbye (what a dead link looks like to the node)."""
        runtime().call(self._conn.abort)
        self._closed.wait(5.0)

    # in the SSH thread's loop
    async def open_stream(self, command: str) -> AsyncChannel:
        """:meth:`open_channel` for a coroutine in the SSH loop: ``command`` on a new session
        channel, its output gathered in memory and awaited with :meth:`AsyncChannel.read_until`."""
        channel = AsyncChannel(self)
        try:
            chan, _session = await asyncio.wait_for(
                self._conn.create_session(lambda: _StreamSession(channel), command, encoding=None), CONNECT_TIMEOUT_S
            )
        except (asyncssh.Error, OSError, TimeoutError) as exc:
            raise SshError(f"{self.target.display}: cannot open a channel: {exc or type(exc).__name__}") from None
        channel._chan = chan
        return channel

    async def abort_async(self, timeout_s: float = 5.0) -> None:
        """:meth:`abort` for a coroutine in the SSH loop (the loop goes on while it waits)."""
        self._conn.abort()
        try:
            await asyncio.wait_for(self._conn.wait_closed(), timeout_s)
        except TimeoutError:
            pass


async def _connect(target: SshTarget, timeout_s: float = CONNECT_TIMEOUT_S) -> Connection:
    files = target.known_hosts_files()
    known, present = _read_known_hosts(files)
    options: dict[str, Any] = {
        "known_hosts": known,
        "keepalive_interval": KEEPALIVE_INTERVAL_S,
        "keepalive_count_max": KEEPALIVE_COUNT_MAX,
        "connect_timeout": timeout_s,
    }
    if target.port is not None:
        options["port"] = target.port
    if target.user is not None:
        options["username"] = target.user
    if target.identity is not None:
        options["client_keys"] = [target.identity]
    if target.config is not None:
        options["config"] = list(target.config)
    client: _Client | None = None

    def factory() -> _Client:
        nonlocal client
        client = _Client()
        return client

    started = time.monotonic()
    try:
        conn = await asyncssh.connect(target.host, client_factory=factory, **options)
    except asyncssh.HostKeyNotVerifiable as exc:
        if client is not None and client.refused_key is not None:
            port = target.port or 22
            try:
                addr = socket.gethostbyname(target.host)
            except OSError:
                addr = target.host
            raise _host_key_message(target, port, client.refused_key, known, present or files, addr) from None
        raise SshError(f"{target.display}: host key refused: {exc}") from None
    except asyncssh.PermissionDenied as exc:
        raise LoginRefused(
            f"{target.display}: login refused ({exc.reason}): is the key in the node's "
            "authorized_keys, loaded in the agent, or given with --identity?"
        ) from None
    except asyncssh.KeyImportError as exc:
        raise LoginRefused(
            f"{target.display}: cannot use the identity {target.identity}: {exc} "
            "(a key with a passphrase: load it in ssh-agent instead)"
        ) from None
    except asyncssh.Error as exc:
        raise SshError(f"{target.display}: {exc.reason}") from None
    except socket.gaierror as exc:
        raise Unreachable(f"{target.display}: cannot resolve {target.host!r} (DNS): {exc.strerror or exc}") from None
    except (TimeoutError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno:  # asyncio's "Connect call failed (...)" hides the errno's words
            why = os.strerror(exc.errno)
        elif isinstance(exc, OSError) and exc.strerror:
            why = exc.strerror
        else:
            why = f"timed out after {timeout_s:g} s" if isinstance(exc, TimeoutError) else str(exc)
        raise Unreachable(f"{target.display}: cannot connect: {why}") from None
    return Connection(target, conn, time.monotonic() - started)


_pool: dict[SshTarget, Connection] = {}
_pool_lock = threading.Lock()


def connect(target: SshTarget, *, fresh: bool = False, timeout_s: float = CONNECT_TIMEOUT_S) -> Connection:
    """The pooled connection to ``target`` (made on first use, remade once closed); SshError.
    ``fresh``: a new connection not taken from nor put in the pool. ``timeout_s`` bounds the
    TCP connection, key exchange and login together."""
    if fresh:
        return runtime().run(_connect(target, timeout_s), timeout_s + 10)
    with _pool_lock:
        conn = _pool.get(target)
        if conn is None or conn.closed:
            conn = runtime().run(_connect(target, timeout_s), timeout_s + 10)
            _pool[target] = conn
        return conn


async def connect_async(target: SshTarget, *, timeout_s: float = CONNECT_TIMEOUT_S) -> Connection:
    """:func:`connect` for a coroutine in the SSH loop: the same pool (a connection made here
    is the one a synchronous caller gets, and the other way round); SshError."""
    with _pool_lock:
        conn = _pool.get(target)
    if conn is not None and not conn.closed:
        return conn
    conn = await asyncio.wait_for(_connect(target, timeout_s), timeout_s + 10)
    with _pool_lock:
        pooled = _pool.get(target)
        if pooled is not None and not pooled.closed:  # another caller made one meanwhile: keep one
            conn._conn.close()
            return pooled
        _pool[target] = conn
    return conn


def close_all() -> None:
    """Close every pooled connection."""
    with _pool_lock:
        conns = list(_pool.values())
        _pool.clear()
    for conn in conns:
        conn.close()


# ---- channels -------------------------------------------------------------------------------


class _Session(asyncssh.SSHClientSession[bytes]):
    def __init__(self, channel: Channel) -> None:
        self.owner = channel

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        self.owner._push("stderr" if datatype == asyncssh.EXTENDED_DATA_STDERR else "stdout", data)

    def exit_status_received(self, status: int) -> None:
        self.owner.exit_status = status

    def exit_signal_received(self, signal: str, core_dumped: bool, msg: str, lang: str) -> None:
        self.owner.exit_signal = signal

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner._lost(exc)


class Channel:
    """A command running on a node. :meth:`read` returns (stream, bytes) pairs, as
    SupervisedProcess.read does; an empty chunk marks a stream's end. Thread-safe."""

    def __init__(self, connection: Connection, command: str) -> None:
        self.connection = connection
        self.command = command
        self.exit_status: int | None = None
        self.exit_signal: str | None = None
        self.error: Exception | None = None
        self._queue: collections.deque[tuple[str, bytes]] = collections.deque()
        self._buffered = 0
        self._paused = False
        self._lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._closed = threading.Event()
        self._chan: asyncssh.SSHClientChannel[bytes] | None = None

    async def _open(self, stdin: bytes | None, eof: bool) -> None:
        try:
            chan, _session = await self.connection._conn.create_session(
                lambda: _Session(self), self.command, encoding=None
            )
        except (asyncssh.Error, OSError) as exc:
            raise SshError(f"{self.connection.target.display}: cannot open a channel: {exc}") from None
        self._chan = chan
        if stdin:
            chan.write(stdin)
        if eof:
            chan.write_eof()

    # called in the loop thread
    def _push(self, stream: str, data: bytes) -> None:
        with self._lock:
            self._queue.append((stream, data))
            self._buffered += len(data)
            if self._buffered > MAX_BUFFERED_BYTES and not self._paused and self._chan is not None:
                self._paused = True
                self._chan.pause_reading()
        self._wake()

    def _lost(self, exc: Exception | None) -> None:
        self.error = exc
        with self._lock:
            self._queue.append(("stdout", b""))
            self._queue.append(("stderr", b""))
        self._closed.set()
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def _resume(self) -> None:
        if self._chan is not None:
            self._chan.resume_reading()

    # any thread
    @property
    def fileno(self) -> int:
        """Readable when output (or the end) is waiting."""
        return self._wake_r

    @property
    def closed(self) -> bool:
        """The channel ended (command exited and output closed, or the connection dropped)."""
        return self._closed.is_set()

    @property
    def pending(self) -> bool:
        return bool(self._queue)

    def read(self, timeout_s: float, extra_fds: Iterable[int] = ()) -> list[tuple[str, bytes]]:
        """Wait up to ``timeout_s`` for output, or until one of ``extra_fds`` is readable."""
        if not self._queue:
            fds = [self._wake_r, *extra_fds]
            try:
                select.select(fds, [], [], max(0.0, timeout_s))
            except InterruptedError:
                pass
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        except OSError:
            pass
        with self._lock:
            chunks = list(self._queue)
            self._queue.clear()
            self._buffered = 0
            resume = self._paused
            self._paused = False
        if resume:
            runtime().call(self._resume)
        return chunks

    def write(self, data: bytes) -> None:
        if self._chan is not None and not self.closed:
            runtime().call(self._chan.write, data)

    def heartbeat(self, interval_s: float, data: bytes) -> None:
        """Write ``data`` every ``interval_s`` until the channel closes, from the SSH thread's
        loop (so a caller that blocks does not stop it: the beat says the link and this
        process are alive, not that the caller is reading)."""

        async def beat() -> None:
            while self._chan is not None and not self.closed:
                try:
                    self._chan.write(data)
                except (OSError, asyncssh.Error):
                    return
                await asyncio.sleep(interval_s)

        runtime().call(lambda: asyncio.ensure_future(beat()))

    def write_eof(self) -> None:
        if self._chan is not None and not self.closed:
            runtime().call(self._chan.write_eof)

    def wait_closed(self, timeout_s: float) -> bool:
        return self._closed.wait(timeout_s)

    def close(self) -> None:
        """Close the channel (the remote command's stdin reaches EOF) and the wake-up pipe."""
        if self._chan is not None and not self.closed:
            runtime().call(self._chan.close)
            self._closed.wait(5.0)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1


# ---- channels read from the SSH loop itself -------------------------------------------------


class _StreamSession(asyncssh.SSHClientSession[bytes]):
    def __init__(self, channel: AsyncChannel) -> None:
        self.owner = channel

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        self.owner._received(datatype == asyncssh.EXTENDED_DATA_STDERR, data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner._lost(exc)


class AsyncChannel:
    """A command running on a node, read by a coroutine in the SSH loop: its stdout gathered
    in a buffer, stderr kept (the last 4 kB) to say why it ended. Loop thread only."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.error: Exception | None = None
        self.stderr = b""
        self._buffer = bytearray()
        self._arrived = asyncio.Event()
        self._closed = False
        self._chan: asyncssh.SSHClientChannel[bytes] | None = None

    def _received(self, stderr: bool, data: bytes) -> None:
        if stderr:
            self.stderr = (self.stderr + data)[-4096:]
            return
        self._buffer += data
        self._arrived.set()

    def _lost(self, exc: Exception | None) -> None:
        self.error = exc
        self._closed = True
        self._arrived.set()

    @property
    def closed(self) -> bool:
        return self._closed

    def write(self, data: bytes) -> None:
        if self._chan is not None and not self._closed:
            self._chan.write(data)

    async def read_until(self, end: bytes, timeout_s: float, limit: int) -> bytes:
        """The output up to and without ``end`` (taken off the buffer with it). TimeoutError
        past ``timeout_s``; EOFError when the channel closed first; ValueError past ``limit``
        bytes waiting."""
        deadline = time.monotonic() + timeout_s
        start = 0
        while True:
            found = self._buffer.find(end, start)
            if found >= 0:
                answer = bytes(self._buffer[:found])
                del self._buffer[: found + len(end)]
                return answer
            if self._closed:
                raise EOFError(self.stderr.decode("utf-8", "replace").strip())
            if len(self._buffer) > limit:
                raise ValueError(f"more than {limit} bytes without an end")
            start = max(0, len(self._buffer) - len(end) + 1)  # the end may straddle two packets
            self._arrived.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            try:
                await asyncio.wait_for(self._arrived.wait(), left)
            except TimeoutError:
                raise TimeoutError from None

    async def close(self, timeout_s: float = 5.0) -> None:
        """Close the channel (the remote command's stdin reaches EOF) and wait for its end."""
        chan = self._chan
        if chan is not None and not self._closed:
            chan.close()
            try:
                await asyncio.wait_for(chan.wait_closed(), timeout_s)
            except TimeoutError:
                pass
