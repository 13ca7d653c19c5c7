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
   ``num_conn`` and ``sockbuf`` (SO_RCVBUF to set, 0 = system default).
2. server -> client, one line: ``OK {json}\\n`` (``recv_buffer_bytes``, ``write_file``,
   ``fsync``) or ``ERR message\\n``.
3. SYNC: each message is a 4-byte big-endian payload length then the payload; the server answers
   each with one byte ``A`` (after write + fsync when asked). ASYNC: a raw byte stream.
4. The client shuts its sending side down (EOF); the server answers one line
   ``DONE {json}\\n`` (``bytes_received``, ``messages``, ``bytes_written``, ``fsyncs``,
   ``seconds``, ``recv_buffer_bytes``) and closes.

Stdout: ``Probe server listening on HOST:PORT`` once ready (clients start after it), then per
connection ``[A test was requested.] ...`` and ``[The test terminated.] ...`` lines. Exit
status 1 with ``Failed to listen on HOST:PORT: REASON`` when the port cannot be used.

Python 3.6 compatible on purpose: no ``from __future__ import annotations``, no dataclasses, no
walrus, typing-module generics.
"""

import argparse
import json
import os
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
#: ASYNC receive buffer: large, so one recv_into moves many segments per system call
STREAM_BUFFER_BYTES = 4 * 1024 * 1024
MAX_HELLO_BYTES = 4096
MAX_MESSAGE_BYTES = 1 << 30

_print_lock = threading.Lock()


def say(text):
    # type: (str) -> None
    """One line to stdout, whole and flushed (the client waits for the ready line)."""
    with _print_lock:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def now_hms():
    # type: () -> str
    return time.strftime("%H:%M:%S")


class ProtocolError(Exception):
    """The peer broke the protocol; the message says how."""


def recv_line(sock, limit):
    # type: (socket.socket, int) -> bytes
    """Read one line byte-exactly (the peer sends nothing after it until we answer)."""
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = sock.recv(1)
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


class WriteTarget(object):
    """Where received messages go when the client asked for a write (one fd per connection)."""

    def __init__(self, path, remove_after, fsync):
        # type: (str, bool, bool) -> None
        self.path = path
        self.remove_after = remove_after
        self.fsync_each = fsync
        # O_APPEND: connections of one test share the server's --write-file
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.bytes_written = 0
        self.fsyncs = 0

    def write(self, view):
        # type: (memoryview) -> None
        done = 0
        while done < len(view):
            done += os.write(self.fd, view[done:])
        self.bytes_written += done

    def sync(self):
        # type: () -> None
        if self.fsync_each:
            os.fsync(self.fd)
            self.fsyncs += 1

    def close(self):
        # type: () -> None
        os.close(self.fd)
        if self.remove_after:
            try:
                os.unlink(self.path)
            except OSError:
                pass


class ProbeServer(object):
    """Accepts probe connections, one thread each."""

    def __init__(self, bind, port, write_file=None, fsync=False, once=False, write_dir=None):
        # type: (str, int, Optional[str], bool, bool, Optional[str]) -> None
        self.bind = bind
        self.port = port
        self.write_file = write_file
        self.fsync = fsync
        self.once = once
        self.write_dir = write_dir
        self.listener = None  # type: Optional[socket.socket]
        self._tests = {}  # type: Dict[str, List[int]]  test_id -> [finished, num_conn]
        self._tests_lock = threading.Lock()
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
        if self.write_file:
            # a fresh file per server start, so its size is what this server's tests wrote
            with open(self.write_file, "wb"):
                pass
        return self.port

    def serve_forever(self):
        # type: () -> None
        assert self.listener is not None
        self.listener.settimeout(0.2)  # how soon a stop request is seen
        while not self.finished.is_set():
            try:
                conn, peer = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            conn.settimeout(None)
            worker = threading.Thread(target=self._serve_connection, args=(conn, peer))
            worker.daemon = True
            worker.start()
        self.listener.close()

    def _serve_connection(self, conn, peer):
        # type: (socket.socket, Any) -> None
        peer_text = "{}:{}".format(peer[0], peer[1])
        hello = None  # type: Optional[Dict[str, Any]]
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            hello = self._handshake(conn, peer_text)
            if hello is not None:
                self._run_test(conn, peer_text, hello)
        except (ProtocolError, OSError, ValueError) as exc:
            say("({}) Connection from {} failed: {}".format(now_hms(), peer_text, exc))
        finally:
            try:
                conn.close()
            except OSError:
                pass
            if hello is not None:
                self._connection_done(hello)

    def _handshake(self, conn, peer_text):
        # type: (socket.socket, str) -> Optional[Dict[str, Any]]
        line = recv_line(conn, MAX_HELLO_BYTES)
        if not line.startswith(PROTOCOL_MAGIC):
            conn.sendall(b"ERR not a racperf probe client (expected RACPERF-PROBE/1)\n")
            raise ProtocolError("not a probe client: {!r}".format(line[:40]))
        try:
            hello = json.loads(line[len(PROTOCOL_MAGIC):].decode("utf-8"))
            mode = str(hello["mode"]).upper()
            length = int(hello["length"])
        except (ValueError, KeyError, TypeError) as exc:
            conn.sendall(b"ERR bad request\n")
            raise ProtocolError("bad request: {}".format(exc))
        if mode not in ("SYNC", "ASYNC") or not 0 <= length <= MAX_MESSAGE_BYTES:
            conn.sendall("ERR mode must be SYNC or ASYNC and length 0..{}\n".format(
                MAX_MESSAGE_BYTES).encode())
            raise ProtocolError("bad mode/length: {} {}".format(mode, length))
        hello["mode"] = mode
        hello["length"] = length
        sockbuf = int(hello.get("sockbuf") or 0)
        if sockbuf > 0:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, sockbuf)
        return hello

    def _open_write_target(self, hello):
        # type: (Dict[str, Any]) -> Optional[WriteTarget]
        if not (hello.get("write") or self.write_file):
            return None
        fsync = bool(hello.get("write")) or self.fsync
        if self.write_file:
            return WriteTarget(self.write_file, False, fsync)
        fd, path = tempfile.mkstemp(prefix="racperf-probe-", dir=self.write_dir)
        os.close(fd)
        return WriteTarget(path, True, fsync)

    def _run_test(self, conn, peer_text, hello):
        # type: (socket.socket, str, Dict[str, Any]) -> None
        target = self._open_write_target(hello)
        recv_buffer = conn.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        reply = {"recv_buffer_bytes": recv_buffer,
                 "write_file": target.path if target else None,
                 "fsync": bool(target and target.fsync_each)}
        conn.sendall(b"OK " + json.dumps(reply).encode() + b"\n")
        say("({}) [A test was requested.] {} test={} conn={}/{} mode={} length={} write={}{}".format(
            now_hms(), peer_text, hello.get("test_id", "?"), hello.get("conn_index", 1),
            hello.get("num_conn", 1), hello["mode"], hello["length"],
            "YES" if target else "NO",
            " file={} fsync={}".format(target.path, "YES" if target.fsync_each else "NO")
            if target else ""))
        started = time.monotonic()
        try:
            if hello["mode"] == "SYNC":
                received, messages = self._sync_loop(conn, hello["length"], target)
            else:
                received, messages = self._async_loop(conn, hello["length"], target)
        finally:
            if target is not None:
                target.close()
        seconds = time.monotonic() - started
        done = {"bytes_received": received, "messages": messages,
                "bytes_written": target.bytes_written if target else 0,
                "fsyncs": target.fsyncs if target else 0,
                "seconds": round(seconds, 6), "recv_buffer_bytes": recv_buffer}
        conn.sendall(b"DONE " + json.dumps(done).encode() + b"\n")
        rate = received / seconds / 1048576.0 if seconds > 0 else 0.0
        say("({}) [The test terminated.] {} conn={}/{} received {} bytes in {} messages, "
            "{:.3f} s, {:.3f} Mbytes/s; socket receive buffer {} bytes{}".format(
                now_hms(), peer_text, hello.get("conn_index", 1), hello.get("num_conn", 1),
                received, messages, seconds, rate, recv_buffer,
                "; wrote {} bytes, {} fsyncs".format(done["bytes_written"], done["fsyncs"])
                if target else ""))

    @staticmethod
    def _sync_loop(conn, length, target):
        # type: (socket.socket, int, Optional[WriteTarget]) -> tuple
        header = bytearray(MESSAGE_HEADER.size)
        header_view = memoryview(header)
        payload = bytearray(max(length, 1))
        payload_view = memoryview(payload)
        received = 0
        messages = 0
        while True:
            if not recv_exact_into(conn, header_view):
                break
            size = MESSAGE_HEADER.unpack(header)[0]
            if size > len(payload):
                if size > MAX_MESSAGE_BYTES:
                    raise ProtocolError("message of {} bytes is too large".format(size))
                payload = bytearray(size)
                payload_view = memoryview(payload)
            body = payload_view[:size]
            if size and not recv_exact_into(conn, body):
                raise ProtocolError("connection closed before a message's payload")
            if target is not None:
                target.write(body)
                target.sync()
            conn.sendall(ACK)
            received += size
            messages += 1
        return received, messages

    @staticmethod
    def _async_loop(conn, length, target):
        # type: (socket.socket, int, Optional[WriteTarget]) -> tuple
        buffer = bytearray(STREAM_BUFFER_BYTES)
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
        test_id = str(hello.get("test_id", ""))
        with self._tests_lock:
            state = self._tests.setdefault(test_id, [0, int(hello.get("num_conn", 1) or 1)])
            state[0] += 1
            if state[0] >= state[1]:
                self.finished.set()


def build_parser():
    # type: () -> argparse.ArgumentParser
    parser = argparse.ArgumentParser(
        prog="probe_server.py",
        description="racperf probe server (python3 >= 3.6, stdlib only): answers racperf probe "
                    "clients in SYNC (ACK per message), ASYNC (stream) and RTT modes.")
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
                        help="write every received message to FILE (truncated at start); "
                             "without it, a client's write request uses a temporary file")
    parser.add_argument("--write-dir", metavar="DIR", default=None,
                        help="directory of those temporary files (default $TMPDIR or /tmp; "
                             "put it on the disk you mean to measure, not on tmpfs)")
    parser.add_argument("--fsync", action="store_true",
                        help="fsync every written message (a client's write request implies it)")


def serve(args):
    # type: (argparse.Namespace) -> int
    """Run the server described by parsed arguments until stopped (or --once is done)."""
    server = ProbeServer(args.bind, args.port, write_file=args.write_file, fsync=args.fsync,
                         once=args.once, write_dir=args.write_dir)
    try:
        port = server.listen()
    except OSError as exc:
        say("Failed to listen on {}:{}: {}".format(args.bind, args.port, exc.strerror or exc))
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
