#!/usr/bin/env python3
"""racperf probe server: the receiving end of racperf's built-in network probe.

ONE self-contained file: it runs with any python3 >= 3.6 and the standard library only, so it
can be copied to another node (a RAC node, a Data Guard standby) and started there without
installing racperf::

    python3 probe_server.py [--bind 0.0.0.0] [--port 5566] [--once]
                            [--write-file FILE] [--fsync]

What it measures is what Oracle's oratcptest measures, without Java: the client sends
messages, and in SYNC mode waits for this server's acknowledgement of each one (the latency of
a message is send + ACK), optionally after this server wrote and fsynced the message (what
oratcptest's -write models: Data Guard SYNC redo transport, the standby writing the redo before
it acknowledges). In ASYNC mode the client streams and this server only counts (and optionally
writes) bytes.

Protocol (per TCP connection; every connection negotiates for itself):

1. client -> server, one line: ``RACPERF-PROBE/1 {json}\\n`` with the JSON keys ``mode``
   ("SYNC" | "ASYNC"), ``length`` (message payload bytes, 0 = RTT probe), ``write`` (bool:
   write + fsync every message before the ACK), ``test_id`` (str), ``conn_index``,
   ``num_conn`` and ``sockbuf`` (SO_RCVBUF to set, 0 = system default); ``mode`` "UDP" for
   datagram requests (step 3).
2. server -> client, one line: ``OK {json}\\n`` (``recv_buffer_bytes``, ``write_file``,
   ``fsync``) or ``ERR message\\n``.
3. SYNC: each message is a 4-byte big-endian payload length then the payload; the server answers
   each with one byte ``A`` (after write + fsync when asked). ASYNC: a raw byte stream.
   UDP: the OK also names ``udp_port`` (a UDP socket of this connection's own, on the address
   the connection came to) and ``mtu`` (this end's MTU towards the client, ``IP_MTU``); every
   datagram from the client's address there is answered with its first 8 bytes (the
   client's sequence number) and ``A``; the TCP connection carries nothing more until EOF.
4. The client shuts its sending side down (EOF); the server answers one line
   ``DONE {json}\\n`` (``bytes_received``, ``messages``, ``bytes_written``, ``fsyncs``,
   ``seconds``, ``recv_buffer_bytes``) and closes.

Limits (every one says what and where when it is hit; see LIMITS_TEXT and ``--help``): the
hello is at most MAX_HELLO_BYTES, arrives within ``--handshake-timeout`` and is validated
field by field (``ERR 'length' must be 0..N`` and so on); a message is at most
MAX_MESSAGE_BYTES and no longer than the hello's ``length``; each connection reads into one
reused buffer of at most RECV_BUFFER_BYTES; a connection silent for ``--idle-timeout`` is
closed; beyond ``--max-connections`` a connection gets ``ERR server busy ...``; write files are
rings (they wrap) within ``--max-write-bytes`` in all.

Stdout: ``Probe server listening on HOST:PORT`` once ready (clients start after it), then per
connection ``[A test was requested.] ...`` and ``[The test terminated.] ...`` lines. Exit
status 1 with ``Failed to listen on HOST:PORT: REASON`` when the port cannot be used.

Python 3.6 compatible on purpose: no ``from __future__ import annotations``, no dataclasses, no
walrus, typing-module generics.
"""

import argparse
import json
import os
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional

PROTOCOL_MAGIC = b"RACPERF-PROBE/1 "
DEFAULT_PORT = 5566
ACK = b"A"
MESSAGE_HEADER = struct.Struct("!I")
MIB = 1024 * 1024
MAX_HELLO_BYTES = 4096
#: UDP mode: the bytes of a request echoed back (the client's sequence number)
UDP_ECHO_BYTES = 8
#: UDP mode: requests numbered from here on are the client's don't-fragment probes of the
#: path's MTU, answered but not counted as the test's
MTU_PROBE_SEQ = 1 << 62
#: Linux's IP_MTU / IPV6_MTU (absent from some builds' socket module)
IP_MTU = getattr(socket, "IP_MTU", 14)
IPV6_MTU = getattr(socket, "IPV6_MTU", 24)
#: The largest message payload (hello ``length`` and SYNC header). oratcptest's -length
#: defaults to 1 Mbyte and Data Guard never sends a redo message larger than its SDU (2 MB at
#: most), so 64 MiB is far above anything worth measuring; memory does not depend on it (see
#: RECV_BUFFER_BYTES), it only bounds how long one message may occupy a connection.
MAX_MESSAGE_BYTES = 64 * MIB
#: Every connection reads into ONE reused buffer of at most this size, whatever length a peer
#: claims: memory per connection is bounded by it (and 256 connections by 64 MiB).
RECV_BUFFER_BYTES = 256 * 1024
#: SO_RCVBUF a client may ask for (the kernel caps it at net.core.rmem_max anyway)
MAX_SOCKBUF_BYTES = 256 * MIB
#: connections one test may open (the racperf client's --num-conn limit)
MAX_NUM_CONN = 256
MAX_TEST_ID_CHARS = 64
DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_HANDSHAKE_TIMEOUT_S = 10.0
DEFAULT_IDLE_TIMEOUT_S = 60.0
#: disk space all write files of this server may take at once (each is a ring: it wraps)
DEFAULT_MAX_WRITE_BYTES = 1024 * MIB
#: the ring one writing connection reserves in --write-dir (from the budget above)
WRITE_RING_BYTES = 64 * MIB
#: a writing connection needs at least this much of the budget
MIN_WRITE_RING_BYTES = 1 * MIB

_print_lock = threading.Lock()


def say(text):
    # type: (str) -> None
    """One line to stdout, whole and flushed (the client waits for the ready line). A dead
    stdout (the reader went away) must not kill a connection's thread: the line is dropped."""
    with _print_lock:
        try:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass


def now_hms():
    # type: () -> str
    return time.strftime("%H:%M:%S")


def size_text(n):
    # type: (int) -> str
    if n % MIB == 0:
        return "{} MiB".format(n // MIB)
    if n % 1024 == 0:
        return "{} KiB".format(n // 1024)
    return "{} bytes".format(n)


def parse_size(text):
    # type: (str) -> int
    """argparse type: "512", "64K", "1G" (1024-based) -> bytes."""
    value = str(text).strip().upper()
    factor = 1
    for suffix, scale in (("K", 1024), ("M", MIB), ("G", 1024 * MIB)):
        if value.endswith(suffix):
            value, factor = value[:-1], scale
            break
    if not value.isdigit():
        raise argparse.ArgumentTypeError("not a size: {!r} (use e.g. 512, 64M, 1G)".format(text))
    return int(value) * factor


class ProtocolError(Exception):
    """The peer broke the protocol; the message says how."""


class Refused(ProtocolError):
    """A request this server will not serve; the message is the ERR reply's text."""


def recv_line(sock, limit, deadline=None):
    # type: (socket.socket, int, Optional[float]) -> bytes
    """Read one line byte-exactly (the peer sends nothing after it until we answer), all of it
    before ``deadline`` (time.monotonic()): a peer trickling bytes cannot hold a thread."""
    data = bytearray()
    while not data.endswith(b"\n"):
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProtocolError("no complete line in time")
            sock.settimeout(remaining)
        try:
            chunk = sock.recv(1)
        except socket.timeout:
            raise ProtocolError("no complete line in time")
        if not chunk:
            raise ProtocolError("connection closed before the end of the line")
        data += chunk
        if len(data) > limit:
            raise ProtocolError("line longer than {} bytes".format(limit))
    return bytes(data)


def recv_exact_into(sock, view):
    # type: (socket.socket, memoryview) -> bool
    """Fill `view` completely; False on EOF before the first byte, ProtocolError mid-way."""
    got = 0
    total = len(view)
    while got < total:
        n = sock.recv_into(view[got:])
        if n == 0:
            if got == 0:
                return False
            raise ProtocolError("connection closed in the middle of a message")
        got += n
    return True


def _reject_constant(name):
    # type: (str) -> Any
    raise ValueError("{} is not a number this server accepts".format(name))


def _int_field(hello, key, default, low, high):
    # type: (Dict[str, Any], str, Optional[int], int, int) -> int
    value = hello.get(key, default)
    # bool is an int subclass and a float may be 1e300: only real integers, in range
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        raise Refused("'{}' must be an integer {}..{}, not {}".format(
            key, low, high, json.dumps(value)[:40]))
    if not low <= value <= high:
        raise Refused("'{}' must be {}..{}, not {}".format(key, low, high, str(value)[:40]))
    return value


def parse_hello(line):
    # type: (bytes) -> Dict[str, Any]
    """The client's hello line -> validated request; Refused names the field that is wrong."""
    if not line.startswith(PROTOCOL_MAGIC):
        raise Refused("not a racperf probe client (expected RACPERF-PROBE/1)")
    try:
        hello = json.loads(line[len(PROTOCOL_MAGIC):].decode("utf-8"),
                           parse_constant=_reject_constant)
    except RecursionError:
        raise Refused("bad request: nested too deeply")
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise Refused("bad request: {}".format(str(exc)[:100]))
    if not isinstance(hello, dict):
        raise Refused("bad request: not a JSON object")
    mode = hello.get("mode")
    if not isinstance(mode, str) or mode.upper() not in ("SYNC", "ASYNC", "UDP"):
        raise Refused("'mode' must be SYNC, ASYNC or UDP")
    write = hello.get("write", False)
    if not isinstance(write, bool):
        raise Refused("'write' must be true or false")
    test_id = hello.get("test_id", "?")
    if (not isinstance(test_id, str) or not 0 < len(test_id) <= MAX_TEST_ID_CHARS
            or not all(c.isalnum() or c in "-_.:?" for c in test_id)):
        raise Refused("'test_id' must be 1..{} letters, digits or -_.:".format(MAX_TEST_ID_CHARS))
    num_conn = _int_field(hello, "num_conn", 1, 1, MAX_NUM_CONN)
    return {
        "mode": mode.upper(),
        "length": _int_field(hello, "length", None, 0, MAX_MESSAGE_BYTES),
        "write": write,
        "test_id": test_id,
        "conn_index": _int_field(hello, "conn_index", 1, 1, num_conn),
        "num_conn": num_conn,
        "sockbuf": _int_field(hello, "sockbuf", 0, 0, MAX_SOCKBUF_BYTES),
    }


class RingFile(object):
    """A write file of bounded size: writes go round it (a redo log's way), so a client that
    writes for hours takes no more disk than ``size`` bytes."""

    def __init__(self, path, size, remove_after):
        # type: (str, int, bool) -> None
        self.path = path
        self.size = size
        self.remove_after = remove_after
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.offset = 0
        self.lock = threading.Lock()  # connections of one test share the server's --write-file

    def write(self, view):
        # type: (memoryview) -> int
        done = 0
        with self.lock:
            while done < len(view):
                room = self.size - self.offset
                n = os.pwrite(self.fd, view[done:done + room], self.offset)
                done += n
                self.offset = (self.offset + n) % self.size
        return done

    def close(self):
        # type: () -> None
        os.close(self.fd)
        if self.remove_after:
            try:
                os.unlink(self.path)
            except OSError:
                pass


class WriteTarget(object):
    """One connection's writes (to its own ring or the server's shared one) and its counts."""

    def __init__(self, ring, fsync, reserved=0):
        # type: (RingFile, bool, int) -> None
        """``reserved``: the write budget its own ring took (0: it writes the shared ring)."""
        self.ring = ring
        self.path = ring.path
        self.fsync_each = fsync
        self.reserved = reserved
        self.bytes_written = 0
        self.fsyncs = 0

    def write(self, view):
        # type: (memoryview) -> None
        self.bytes_written += self.ring.write(view)

    def sync(self):
        # type: () -> None
        if self.fsync_each:
            os.fsync(self.ring.fd)
            self.fsyncs += 1

    def close(self):
        # type: () -> None
        if self.reserved:
            self.ring.close()


class ProbeServer(object):
    """Accepts probe connections, one thread each, within the limits it was given."""

    def __init__(self, bind, port, write_file=None, fsync=False, once=False, write_dir=None,
                 max_connections=DEFAULT_MAX_CONNECTIONS,
                 handshake_timeout_s=DEFAULT_HANDSHAKE_TIMEOUT_S,
                 idle_timeout_s=DEFAULT_IDLE_TIMEOUT_S, max_write_bytes=DEFAULT_MAX_WRITE_BYTES):
        # type: (str, int, Optional[str], bool, bool, Optional[str], int, float, float, int) -> None
        self.bind = bind
        self.port = port
        self.write_file = write_file
        self.fsync = fsync
        self.once = once
        self.write_dir = write_dir or tempfile.gettempdir()
        self.max_connections = max_connections
        self.handshake_timeout_s = handshake_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.max_write_bytes = max_write_bytes
        self.listener = None  # type: Optional[socket.socket]
        self.shared_ring = None  # type: Optional[RingFile]
        # test_id -> [finished, num_conn]
        self._tests = {}  # type: Dict[str, List[int]]
        self._tests_lock = threading.Lock()
        self._active = 0
        self._write_reserved = 0
        self._limits_lock = threading.Lock()
        self.finished = threading.Event()

    def listen(self):
        # type: () -> int
        """Bind and listen; returns the port (useful with port 0). OSError when it cannot."""
        family = socket.AF_INET6 if ":" in self.bind else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self.bind, self.port))
            listener.listen(64)
        except OSError:
            listener.close()
            raise
        self.listener = listener
        self.port = listener.getsockname()[1]
        return self.port

    def open_write_file(self):
        # type: () -> None
        """Create --write-file (OSError when it cannot be): a fresh file per server start, so
        its size is what this server's tests wrote (up to the write budget, then it wraps)."""
        if self.write_file:
            self.shared_ring = RingFile(self.write_file, self.max_write_bytes, False)

    def serve_forever(self):
        # type: () -> None
        assert self.listener is not None
        self.listener.settimeout(0.2)  # how soon a stop request is seen
        last_accept_error = ""
        while not self.finished.is_set():
            try:
                conn, peer = self.listener.accept()
            except socket.timeout:
                continue
            except OSError as exc:
                if self.listener.fileno() < 0:
                    break
                # out of fds or memory: the server lives on; the peers that cannot be
                # accepted now wait in the backlog or are refused by the kernel
                text = str(exc.strerror or exc)
                if text != last_accept_error:
                    say("({}) Cannot accept a connection: {}".format(now_hms(), text))
                    last_accept_error = text
                time.sleep(0.1)
                continue
            self._start_connection(conn, peer)
        self.listener.close()
        if self.shared_ring is not None:
            self.shared_ring.close()

    def _start_connection(self, conn, peer):
        # type: (socket.socket, Any) -> None
        peer_text = "{}:{}".format(peer[0], peer[1])
        with self._limits_lock:
            busy = self._active >= self.max_connections
            if not busy:
                self._active += 1
        if busy:
            self._refuse(conn, peer_text, "server busy: {} connections open (the limit, "
                                          "--max-connections)".format(self.max_connections))
            return
        worker = threading.Thread(target=self._serve_connection, args=(conn, peer_text))
        worker.daemon = True
        try:
            worker.start()
        except RuntimeError as exc:  # "can't start new thread": refuse this one, serve on
            with self._limits_lock:
                self._active -= 1
            self._refuse(conn, peer_text, "server cannot start a thread: {}".format(exc))

    def _refuse(self, conn, peer_text, reason):
        # type: (socket.socket, str, str) -> None
        say("({}) Connection from {} refused: {}".format(now_hms(), peer_text, reason))
        try:
            conn.settimeout(1.0)  # never let a refusal block the accept loop
            conn.sendall("ERR {}\n".format(reason).encode())
        except OSError:
            pass
        finally:
            conn.close()

    def active_connections(self):
        # type: () -> int
        with self._limits_lock:
            return self._active

    def _serve_connection(self, conn, peer_text):
        # type: (socket.socket, str) -> None
        hello = None  # type: Optional[Dict[str, Any]]
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                hello = self._handshake(conn)
                target = self._open_write_target(hello)
            except Refused as exc:
                try:
                    conn.settimeout(1.0)
                    conn.sendall("ERR {}\n".format(exc).encode())
                except OSError:
                    pass
                raise
            conn.settimeout(self.idle_timeout_s)
            self._run_test(conn, peer_text, hello, target)
        except socket.timeout:
            say("({}) Connection from {} failed: idle for {:g} s (--idle-timeout)".format(
                now_hms(), peer_text, self.idle_timeout_s))
        except (ProtocolError, OSError) as exc:
            say("({}) Connection from {} failed: {}".format(now_hms(), peer_text, exc))
        except Exception as exc:  # whatever a peer managed: one line, never a traceback
            say("({}) Connection from {} failed: {}: {}".format(
                now_hms(), peer_text, type(exc).__name__, exc))
        finally:
            try:
                conn.close()
            except OSError:
                pass
            with self._limits_lock:
                self._active -= 1
            if hello is not None:
                self._connection_done(hello)

    def _handshake(self, conn):
        # type: (socket.socket) -> Dict[str, Any]
        try:
            line = recv_line(conn, MAX_HELLO_BYTES,
                             time.monotonic() + self.handshake_timeout_s)
        except ProtocolError as exc:
            raise Refused("{} (the hello must arrive within {:g} s, at most {} bytes)".format(
                exc, self.handshake_timeout_s, MAX_HELLO_BYTES))
        hello = parse_hello(line)
        if hello["sockbuf"] > 0:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, hello["sockbuf"])
        return hello

    def _open_write_target(self, hello):
        # type: (Dict[str, Any]) -> Optional[WriteTarget]
        if not (hello["write"] or self.write_file):
            return None
        fsync = hello["write"] or self.fsync
        if self.shared_ring is not None:
            return WriteTarget(self.shared_ring, fsync)
        with self._limits_lock:
            ring_bytes = min(WRITE_RING_BYTES, self.max_write_bytes - self._write_reserved)
            if ring_bytes < MIN_WRITE_RING_BYTES:
                raise Refused("the server's write budget ({} in {}, --max-write-bytes) is "
                              "taken by other connections".format(
                                  size_text(self.max_write_bytes), self.write_dir))
            self._write_reserved += ring_bytes
        try:
            stat = os.statvfs(self.write_dir)
            free = stat.f_bavail * stat.f_frsize
            if free < ring_bytes:
                raise Refused("only {} free in {}, a write test needs {}".format(
                    size_text(free), self.write_dir, size_text(ring_bytes)))
            fd, path = tempfile.mkstemp(prefix="racperf-probe-", dir=self.write_dir)
            os.close(fd)
            ring = RingFile(path, ring_bytes, True)
        except OSError as exc:
            self._release_write(ring_bytes)
            raise Refused("cannot create a write file in {}: {}".format(
                self.write_dir, exc.strerror or exc))
        except BaseException:
            self._release_write(ring_bytes)
            raise
        return WriteTarget(ring, fsync, ring_bytes)

    def _release_write(self, ring_bytes):
        # type: (int) -> None
        with self._limits_lock:
            self._write_reserved -= ring_bytes

    def _run_test(self, conn, peer_text, hello, target):
        # type: (socket.socket, str, Dict[str, Any], Optional[WriteTarget]) -> None
        udp = None  # type: Optional[socket.socket]
        try:
            recv_buffer = conn.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
            reply = {"recv_buffer_bytes": recv_buffer,
                     "write_file": target.path if target else None,
                     "fsync": bool(target and target.fsync_each)}  # type: Dict[str, Any]
            if hello["mode"] == "UDP":
                udp = socket.socket(conn.family, socket.SOCK_DGRAM)
                udp.bind((conn.getsockname()[0], 0))
                reply["udp_port"] = udp.getsockname()[1]
                reply["mtu"] = _path_mtu(conn)
            conn.sendall(b"OK " + json.dumps(reply).encode() + b"\n")
            say("({}) [A test was requested.] {} test={} conn={}/{} mode={} length={} "
                "write={}{}".format(
                    now_hms(), peer_text, hello["test_id"], hello["conn_index"],
                    hello["num_conn"], hello["mode"], hello["length"],
                    "YES" if target else "NO",
                    " file={} fsync={} (a ring of {})".format(
                        target.path, "YES" if target.fsync_each else "NO",
                        size_text(target.ring.size)) if target else ""))
            started = time.monotonic()
            if udp is not None:
                received, messages = self._udp_loop(conn, udp, self.idle_timeout_s)
            elif hello["mode"] == "SYNC":
                received, messages = self._sync_loop(conn, hello["length"], target)
            else:
                received, messages = self._async_loop(conn, hello["length"], target)
        finally:
            if udp is not None:
                udp.close()
            if target is not None:
                target.close()
                self._release_write(target.reserved)
        seconds = time.monotonic() - started
        done = {"bytes_received": received, "messages": messages,
                "bytes_written": target.bytes_written if target else 0,
                "fsyncs": target.fsyncs if target else 0,
                "seconds": round(seconds, 6), "recv_buffer_bytes": recv_buffer}
        conn.sendall(b"DONE " + json.dumps(done).encode() + b"\n")
        rate = received / seconds / 1048576.0 if seconds > 0 else 0.0
        say("({}) [The test terminated.] {} conn={}/{} received {} bytes in {} messages, "
            "{:.3f} s, {:.3f} Mbytes/s; socket receive buffer {} bytes{}".format(
                now_hms(), peer_text, hello["conn_index"], hello["num_conn"],
                received, messages, seconds, rate, recv_buffer,
                "; wrote {} bytes, {} fsyncs".format(done["bytes_written"], done["fsyncs"])
                if target else ""))

    @staticmethod
    def _sync_loop(conn, length, target):
        # type: (socket.socket, int, Optional[WriteTarget]) -> tuple
        header = bytearray(MESSAGE_HEADER.size)
        header_view = memoryview(header)
        # one buffer for the whole connection, read into piece by piece: what a header
        # claims costs time on the wire, never memory here
        buffer = bytearray(max(1, min(length, RECV_BUFFER_BYTES)))
        view = memoryview(buffer)
        received = 0
        messages = 0
        while True:
            if not recv_exact_into(conn, header_view):
                break
            size = MESSAGE_HEADER.unpack(header)[0]
            if size > length:
                raise ProtocolError("message of {} bytes is longer than the {} bytes the hello "
                                    "announced".format(size, length))
            left = size
            while left:
                piece = view[:min(left, len(buffer))]
                if not recv_exact_into(conn, piece):
                    raise ProtocolError("connection closed before a message's payload")
                if target is not None:
                    target.write(piece)
                left -= len(piece)
            if target is not None:
                target.sync()
            conn.sendall(ACK)
            received += size
            messages += 1
        return received, messages

    @staticmethod
    def _udp_loop(conn, udp, idle_timeout_s):
        # type: (socket.socket, socket.socket, float) -> tuple
        """Answer the client's datagrams (from its address only) until its EOF on ``conn``;
        socket.timeout when neither socket says anything for ``idle_timeout_s``."""
        peer_ip = conn.getpeername()[0]
        received = 0
        datagrams = 0
        while True:
            readable = select.select([conn, udp], [], [], idle_timeout_s)[0]
            if not readable:
                raise socket.timeout()
            if udp in readable:
                data, source = udp.recvfrom(65536)
                if source[0] == peer_ip and len(data) >= UDP_ECHO_BYTES:
                    udp.sendto(data[:UDP_ECHO_BYTES] + ACK, source)
                    if struct.unpack("!Q", data[:UDP_ECHO_BYTES])[0] < MTU_PROBE_SEQ:
                        received += len(data) - UDP_ECHO_BYTES
                        datagrams += 1
            if conn in readable:
                if not conn.recv(1):
                    return received, datagrams
                raise ProtocolError("data on the control connection of a UDP test")

    @staticmethod
    def _async_loop(conn, length, target):
        # type: (socket.socket, int, Optional[WriteTarget]) -> tuple
        buffer = bytearray(RECV_BUFFER_BYTES)
        view = memoryview(buffer)
        received = 0
        unsynced = 0
        sync_every = max(length, 1)
        while True:
            n = conn.recv_into(view)
            if n == 0:
                break
            received += n
            if target is not None:
                target.write(view[:n])
                unsynced += n
                if unsynced >= sync_every:
                    target.sync()
                    unsynced = 0
        if target is not None and unsynced:
            target.sync()
        messages = received // length if length else 0
        return received, messages

    def _connection_done(self, hello):
        # type: (Dict[str, Any]) -> None
        if not self.once:
            return
        with self._tests_lock:
            state = self._tests.setdefault(hello["test_id"], [0, hello["num_conn"]])
            state[0] += 1
            if state[0] >= state[1]:
                self.finished.set()


def _path_mtu(conn):
    # type: (socket.socket) -> Optional[int]
    """This end's MTU towards the connection's peer (its route's interface), None where the
    kernel does not say."""
    try:
        if conn.family == socket.AF_INET6:
            return conn.getsockopt(socket.IPPROTO_IPV6, IPV6_MTU)
        return conn.getsockopt(socket.IPPROTO_IP, IP_MTU)
    except OSError:
        return None


LIMITS_TEXT = (
    "Limits (a probe server is unauthenticated: bind it to the interconnect or Data Guard "
    "address, not 0.0.0.0, where that network is not trusted): a hello line of at most {hello} "
    "bytes within --handshake-timeout; messages of at most {msg} (the hello's length; "
    "oratcptest's default is 1 MiB); one reused receive buffer of at most {buf} per "
    "connection; SO_RCVBUF requests up to {sockbuf}; a connection beyond --max-connections is "
    "refused with a reason; write files live in --write-dir and each is a ring of at most "
    "{ring} (it wraps), all of them together within --max-write-bytes; a write test is "
    "refused when the budget or the free space is not there.").format(
        hello=MAX_HELLO_BYTES, msg=size_text(MAX_MESSAGE_BYTES), buf=size_text(RECV_BUFFER_BYTES),
        sockbuf=size_text(MAX_SOCKBUF_BYTES), ring=size_text(WRITE_RING_BYTES))


def build_parser():
    # type: () -> argparse.ArgumentParser
    parser = argparse.ArgumentParser(
        prog="probe_server.py",
        description="racperf probe server (python3 >= 3.6, stdlib only): answers racperf probe "
                    "clients in SYNC (ACK per message), ASYNC (stream) and RTT modes.",
        epilog=LIMITS_TEXT)
    add_server_arguments(parser)
    return parser


def add_server_arguments(parser):
    # type: (argparse.ArgumentParser) -> None
    """The server's options (also used by ``racperf probe server``)."""
    parser.add_argument("--bind", default="0.0.0.0",
                        help="address to listen on (default 0.0.0.0: all IPv4 addresses)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help="TCP port (default {}; 0 picks a free one and prints it)".format(
                            DEFAULT_PORT))
    parser.add_argument("--once", action="store_true",
                        help="exit after the first test (all of its connections) has finished")
    parser.add_argument("--write-file", metavar="FILE", default=None,
                        help="write every received message to FILE (truncated at start; it "
                             "wraps at --max-write-bytes); without it, a client's write request "
                             "uses a temporary file in --write-dir")
    parser.add_argument("--write-dir", metavar="DIR", default=None,
                        help="directory of those temporary files (default $TMPDIR or /tmp; "
                             "put it on the disk you mean to measure, not on tmpfs); each is a "
                             "ring of at most {} removed when its test ends".format(
                                 size_text(WRITE_RING_BYTES)))
    parser.add_argument("--fsync", action="store_true",
                        help="fsync every written message (a client's write request implies it)")
    parser.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                        metavar="N",
                        help="connections served at once; more are refused with a reason "
                             "(default {})".format(DEFAULT_MAX_CONNECTIONS))
    parser.add_argument("--handshake-timeout", type=float, default=DEFAULT_HANDSHAKE_TIMEOUT_S,
                        metavar="S", help="seconds a new connection has to send its hello "
                                          "(default {:g})".format(DEFAULT_HANDSHAKE_TIMEOUT_S))
    parser.add_argument("--idle-timeout", type=float, default=DEFAULT_IDLE_TIMEOUT_S,
                        metavar="S", help="a test connection silent this long is closed "
                                          "(default {:g}; raise it for a client --delay-ms "
                                          "above it)".format(DEFAULT_IDLE_TIMEOUT_S))
    parser.add_argument("--max-write-bytes", type=parse_size, default=DEFAULT_MAX_WRITE_BYTES,
                        metavar="BYTES",
                        help="disk space all write files may take at once, e.g. 512M, 4G "
                             "(default {}); --write-file is a ring of this size".format(
                                 size_text(DEFAULT_MAX_WRITE_BYTES)))


def serve(args):
    # type: (argparse.Namespace) -> int
    """Run the server described by parsed arguments until stopped (or --once is done)."""
    for name, value, low, high in (
            ("--max-connections", args.max_connections, 1, 100000),
            ("--handshake-timeout", args.handshake_timeout, 0.1, 86400),
            ("--idle-timeout", args.idle_timeout, 0.1, 7 * 86400),
            ("--max-write-bytes", args.max_write_bytes, MIN_WRITE_RING_BYTES, 1 << 50)):
        if not low <= value <= high:  # NaN fails too
            sys.stderr.write("probe server: {} must be {:g}..{:g}, not {}\n".format(
                name, low, high, value))
            return 2
    server = ProbeServer(args.bind, args.port, write_file=args.write_file, fsync=args.fsync,
                         once=args.once, write_dir=args.write_dir,
                         max_connections=args.max_connections,
                         handshake_timeout_s=args.handshake_timeout,
                         idle_timeout_s=args.idle_timeout, max_write_bytes=args.max_write_bytes)
    try:
        port = server.listen()
    except OSError as exc:
        say("Failed to listen on {}:{}: {}".format(args.bind, args.port, exc.strerror or exc))
        return 1
    try:
        server.open_write_file()
    except OSError as exc:
        if server.listener is not None:
            server.listener.close()
        say("Failed to open the --write-file {}: {}".format(args.write_file, exc.strerror or exc))
        return 1

    def stop(signum, frame):
        # type: (int, Any) -> None
        server.finished.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
    say("Probe server listening on {}:{}".format(args.bind, port))
    server.serve_forever()
    say("({}) Probe server stopped.".format(now_hms()))
    return 0


def main(argv=None):
    # type: (Optional[List[str]]) -> int
    return serve(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
