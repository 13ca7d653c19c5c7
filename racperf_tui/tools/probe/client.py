#!/usr/bin/env python3
"""racperf probe client: the measuring end of racperf's built-in network probe (oratcptest's
SYNC / ASYNC / rtt / write test against :mod:`racperf_tui.tools.probe.server`), writing
oratcptest-shaped lines that :func:`racperf_tui.tools.probe.parse_output` reads back.

ONE self-contained file, as the server is: it runs with any python3 >= 3.6 and the standard
library only, so a client run on another node is this file copied into the run's directory
there and started by the node's python3, with nothing of racperf installed there::

    python3 probe_client.py HOST [--port 5566] [--mode SYNC|ASYNC|UDP] [--length 8K] [--rtt]
                                 [--num-conn N] [--delay-ms MS] [--write] [--interval S]
                                 [--duration S] [--sockbuf BYTES] [--payload ZERO|RANDOM]

``racperf probe client HOST`` runs the same code (its options are :func:`add_client_arguments`).
The wire protocol is in probe_server's docstring (its constants are repeated here: this file
imports nothing of racperf; a test holds them equal); the output and result shapes in
:mod:`racperf_tui.tools.probe`'s. Exit status 0 when the test ran, 1 when it failed (the
``Failed`` / ``Error`` line says why), 2 for a wrong option.

UDP mode (what a RAC's Cache Fusion does: 8 KiB blocks as UDP datagrams): the TCP connection
is the test's control channel; the server names a UDP port of its own on the same address and
the MTU of its end. The client first sends don't-fragment datagrams (IP_MTU_DISCOVER = DO) as
large as its own interface's MTU allows (MTU - 28 bytes for IPv4), MTU_TRIES times: a path
that drops such frames (a switch or a peer at 1500 while this end says 9000) never answers.
Then requests of ``--length`` bytes, ``--num-conn`` of them in flight, each answered by the
server with its 8-byte sequence number: the round trip's latency per request, and as lost each
request unanswered after UDP_LOSS_TIMEOUT_S (the request or its answer was dropped).

Python 3.6 compatible on purpose: no ``from __future__ import annotations``, no dataclasses, no
walrus, no f-strings, typing-module generics in type comments.
"""

import argparse
import json
import math
import os
import re
import socket
import struct
import sys
import threading
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, TextIO

# the wire protocol, as probe_server.py has it
PROTOCOL_MAGIC = b"RACPERF-PROBE/1 "
DEFAULT_PORT = 5566
MESSAGE_HEADER = struct.Struct("!I")
MIB = 1024 * 1024
MAX_MESSAGE_BYTES = 64 * MIB

#: ASYNC send chunk: big enough that per-call Python overhead vanishes next to the copy,
#: small enough that the end of the test is not delayed on a slow link
ASYNC_CHUNK_BYTES = 1 * MIB
#: a message's default size: a RAC block (Cache Fusion ships 8 KiB blocks), what the
#: interconnect carries, not a bulk transfer's 1 MiB
DEFAULT_LENGTH_BYTES = 8 * 1024
#: how long the client waits for each server's DONE line after its EOF
DONE_TIMEOUT_S = 10.0

#: UDP mode: a request's sequence number, which the server's answer repeats
UDP_HEADER = struct.Struct("!Q")
#: the largest UDP request payload (an IPv4 datagram's 65507 bytes less the header)
MAX_UDP_LENGTH = 65507 - UDP_HEADER.size
#: a UDP request unanswered this long is lost (a LAN's round trip is well under 1 ms; a
#: shaped or loaded link's queue may hold a request for tens of ms)
UDP_LOSS_TIMEOUT_S = 0.5
#: how long one wait for an answer lasts before the lost requests are counted again
UDP_POLL_S = 0.05
#: don't-fragment probes at the path's MTU: this many, each waited for MTU_WAIT_S
MTU_TRIES = 3
MTU_WAIT_S = 0.5
#: the don't-fragment probes' sequence numbers (apart from the requests')
MTU_PROBE_SEQ = 1 << 62
#: Linux's socket options (Python's socket module lacks some of them on some builds)
IP_MTU_DISCOVER = getattr(socket, "IP_MTU_DISCOVER", 10)
IP_PMTUDISC_DO = getattr(socket, "IP_PMTUDISC_DO", 2)
IP_MTU = getattr(socket, "IP_MTU", 14)
IPV6_MTU_DISCOVER = getattr(socket, "IPV6_MTU_DISCOVER", 23)
IPV6_PMTUDISC_DO = getattr(socket, "IPV6_PMTUDISC_DO", 2)
IPV6_MTU = getattr(socket, "IPV6_MTU", 24)
#: IPv4 and UDP headers (IPv6: 40 + 8)
UDP_IPV4_OVERHEAD = 28
UDP_IPV6_OVERHEAD = 48

#: sizes as racperf reads them (core/units.py: 1024-based, "512", "8k", "1M", "1MiB", "2g")
_SIZE = re.compile(r"^(\d{1,30}(?:\.\d{1,30})?)\s*([A-Za-z]{0,8})$")
_SIZE_UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1}  # type: Dict[str, int]
for _power, _prefix in enumerate("kmgtpe", 1):
    for _suffix in ("", "b", "ib", "byte", "bytes"):
        _SIZE_UNITS[_prefix + _suffix] = 1024 ** _power


def parse_size(text):
    # type: (Any) -> int
    """ "1M" / "8k" / "512" / "1MiB" -> bytes (1024-based, as oratcptest's -length); ValueError."""
    match = _SIZE.match(str(text).strip())
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _SIZE_UNITS:
        raise ValueError("size: {!r} is not a size like 512, 8k, 1M or 2g (1024-based)".format(str(text)[:40]))
    size = float(match.group(1)) * _SIZE_UNITS[str(unit)]
    if size != int(size):
        raise ValueError("size: {!r} does not come to whole bytes".format(str(text)[:40]))
    return int(size)


def _check_range(key, value, low, high, unit=""):
    # type: (str, float, float, float, str) -> None
    """ValueError in racperf's one shape, ``probe: KEY must be LOW to HIGH UNIT, got VALUE``."""
    if not low <= value <= high:  # NaN fails too
        raise ValueError(
            "probe: {} must be {:g} to {:g}{}, got {:g}".format(key, low, high, " " + unit if unit else "", value)
        )


def _check_choice(key, value, choices):
    # type: (str, Any, List[str]) -> None
    if value not in choices:
        raise ValueError("probe: {} must be one of {}, got {!r}".format(key, ", ".join(choices), value))


class ClientOptions(object):
    """One probe test, seen from the client."""

    def __init__(
        self,
        host,  # type: str
        port=DEFAULT_PORT,  # type: int
        mode="SYNC",  # type: str
        length_bytes=DEFAULT_LENGTH_BYTES,  # type: int
        num_conn=1,  # type: int
        delay_ms=0.0,  # type: float
        write=False,  # type: bool
        rtt=False,  # type: bool
        interval_s=2.0,  # type: float
        duration_s=10.0,  # type: float
        sockbuf_bytes=0,  # type: int
        payload="ZERO",  # type: str
        connect_timeout_s=5.0,  # type: float
    ):
        # type: (...) -> None
        self.host = host
        self.port = port
        self.mode = mode
        self.length_bytes = length_bytes
        self.num_conn = num_conn
        self.delay_ms = delay_ms
        self.write = write
        self.rtt = rtt
        self.interval_s = interval_s
        self.duration_s = duration_s
        self.sockbuf_bytes = sockbuf_bytes
        self.payload = payload
        self.connect_timeout_s = connect_timeout_s

    def validate(self):
        # type: () -> None
        """ValueError naming the option that is wrong (by its key in the probe's config)."""
        self.mode = self.mode.upper()
        _check_choice("mode", self.mode, ["SYNC", "ASYNC", "UDP"])
        if self.rtt and self.mode != "SYNC":
            raise ValueError("probe: rtt needs SYNC mode (a round trip is a message and its ACK)")
        if self.rtt:
            self.length_bytes = 0
        if self.mode == "UDP":
            _check_range("length", self.length_bytes, 1, MAX_UDP_LENGTH, "bytes (UDP)")
            if self.write:
                raise ValueError("probe: write needs SYNC or ASYNC mode (a UDP request is answered, never written)")
        _check_range("length", self.length_bytes, 0, MAX_MESSAGE_BYTES, "bytes")
        if self.length_bytes == 0 and not self.rtt:
            raise ValueError("probe: length 0 means an RTT test: use rtt instead")
        _check_range("num_conn", self.num_conn, 1, 256)
        _check_range("interval_s", self.interval_s, 0.1, 3600, "s")
        _check_range("duration_s", self.duration_s, 0.1, 7 * 86400, "s")
        if not self.delay_ms >= 0:
            raise ValueError("probe: delay_ms must be >= 0, got {:g}".format(self.delay_ms))
        _check_choice("payload", self.payload.upper(), ["ZERO", "RANDOM"])
        _check_range("port", self.port, 1, 65535)
        _check_range("connect_timeout_s", self.connect_timeout_s, 0.1, 3600, "s")


class _Connection(object):
    """One TCP connection of a test and its counters (written by its worker thread only)."""

    def __init__(self, sock, server_info):
        # type: (socket.socket, Dict[str, Any]) -> None
        self.sock = sock
        self.server_info = server_info
        self.bytes_sent = 0
        self.messages = 0
        self.latencies_s = []  # type: List[float]
        self.lock = threading.Lock()
        self.error = None  # type: Optional[str]
        self.done_info = None  # type: Optional[Dict[str, Any]]
        # UDP mode: the test's datagram socket, the requests sent and those never answered
        self.udp = None  # type: Optional[socket.socket]
        self.datagrams_sent = 0
        self.datagrams_lost = 0

    def take_latencies(self):
        # type: () -> List[float]
        with self.lock:
            taken, self.latencies_s = self.latencies_s, []
        return taken


class _LatencyHistogram(object):
    """Whole-test latency percentiles at ~1 % resolution, constant memory (log buckets)."""

    _BASE = math.log(1.01)

    def __init__(self):
        # type: () -> None
        self.buckets = {}  # type: Dict[int, int]
        self.count = 0
        self.max_s = 0.0

    def add(self, values_s):
        # type: (List[float]) -> None
        for value in values_s:
            key = int(math.floor(math.log(max(value, 1e-9)) / self._BASE))
            self.buckets[key] = self.buckets.get(key, 0) + 1
        self.count += len(values_s)
        if values_s:
            self.max_s = max(self.max_s, max(values_s))

    def percentile_s(self, pct):
        # type: (float) -> Optional[float]
        if not self.count:
            return None
        wanted = math.ceil(self.count * pct / 100.0)
        seen = 0
        for key in sorted(self.buckets):
            seen += self.buckets[key]
            if seen >= wanted:
                # the bucket's geometric middle
                return min(math.exp((key + 0.5) * self._BASE), self.max_s)
        return self.max_s


def _payload_text(length, rtt):
    # type: (int, bool) -> str
    if rtt:
        return "0 bytes (RTT)"
    if length % MIB == 0:
        count = length // MIB
        return "{} Mbyte{}".format(count, "s" if count != 1 else "")
    if length % 1024 == 0:
        return "{} Kbytes".format(length // 1024)
    return "{} bytes".format(length)


def _seconds_text(value):
    # type: (float) -> str
    return "{:g} seconds".format(value)


def _stamp():
    # type: () -> str
    return time.strftime("%H:%M:%S")


def _recv_line(sock, limit=4096):
    # type: (socket.socket, int) -> bytes
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
        if len(data) > limit:
            raise ConnectionError("the server's answer is too long (not a racperf probe server?)")
    return bytes(data)


def _connect(options, test_id, index, num_conn):
    # type: (ClientOptions, str, int, int) -> _Connection
    sock = socket.create_connection((options.host, options.port), timeout=options.connect_timeout_s)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if options.sockbuf_bytes:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, options.sockbuf_bytes)
        hello = {
            "mode": options.mode,
            "length": options.length_bytes,
            "write": options.write,
            "test_id": test_id,
            "conn_index": index,
            "num_conn": num_conn,
            "sockbuf": options.sockbuf_bytes,
        }
        sock.sendall(PROTOCOL_MAGIC + json.dumps(hello).encode() + b"\n")
        answer = _recv_line(sock)
        if not answer.startswith(b"OK "):
            raise ConnectionError(
                "the server refused the test: {}".format(answer.decode("utf-8", "replace").strip())
            )
        info = json.loads(answer[3:].decode())
        sock.settimeout(None)  # data phase: blocking; the main thread unblocks stuck workers
        return _Connection(sock, info)
    except BaseException:
        sock.close()
        raise


def _sync_worker(conn, options, payload, stop):
    # type: (_Connection, ClientOptions, bytes, threading.Event) -> None
    message = MESSAGE_HEADER.pack(len(payload)) + payload
    sock = conn.sock
    delay_s = options.delay_ms / 1000.0
    length = len(payload)
    clock = time.perf_counter
    try:
        while not stop.is_set():
            started = clock()
            sock.sendall(message)
            if not sock.recv(1):
                raise ConnectionError("the server closed the connection")
            latency_s = clock() - started
            with conn.lock:
                conn.latencies_s.append(latency_s)
                conn.bytes_sent += length
                conn.messages += 1
            if delay_s:
                stop.wait(delay_s)
    except OSError as exc:
        if not stop.is_set():
            conn.error = str(exc) or exc.__class__.__name__


def _async_worker(conn, options, payload, stop):
    # type: (_Connection, ClientOptions, bytes, threading.Event) -> None
    sock = conn.sock
    delay_s = options.delay_ms / 1000.0
    if delay_s:
        chunk, per_chunk_messages = memoryview(payload), 1
    else:
        # without a delay the stream is just bytes: send many messages per call
        repeat = max(1, ASYNC_CHUNK_BYTES // max(len(payload), 1))
        chunk, per_chunk_messages = memoryview(payload * repeat), repeat
    size = len(chunk)
    try:
        while not stop.is_set():
            sock.sendall(chunk)
            conn.bytes_sent += size
            conn.messages += per_chunk_messages
            if delay_s:
                stop.wait(delay_s)
    except OSError as exc:
        if not stop.is_set():
            conn.error = str(exc) or exc.__class__.__name__


def _udp_worker(conn, options, payload, stop):
    # type: (_Connection, ClientOptions, bytes, threading.Event) -> None
    """``options.num_conn`` requests in flight; each answer's round trip is a latency, each
    request unanswered after UDP_LOSS_TIMEOUT_S a loss. Requests still in flight at the end
    count as neither."""
    sock = conn.udp
    assert sock is not None
    request = bytearray(UDP_HEADER.size + len(payload))
    request[UDP_HEADER.size:] = payload
    window = options.num_conn
    length = len(payload)
    outstanding = {}  # type: Dict[int, float]
    seq = 0
    clock = time.perf_counter
    sock.settimeout(UDP_POLL_S)
    try:
        while not stop.is_set():
            while len(outstanding) < window:
                seq += 1
                UDP_HEADER.pack_into(request, 0, seq)
                sock.send(request)
                outstanding[seq] = clock()
                conn.datagrams_sent += 1
            try:
                answer = sock.recv(64)
            except socket.timeout:
                answer = b""
            now = clock()
            sent = outstanding.pop(UDP_HEADER.unpack_from(answer)[0], None) if len(answer) >= 8 else None
            if sent is not None:
                with conn.lock:
                    conn.latencies_s.append(now - sent)
                    conn.bytes_sent += length
                    conn.messages += 1
            # the oldest first (a dict keeps the order of sending)
            for old in list(outstanding):
                if now - outstanding[old] < UDP_LOSS_TIMEOUT_S:
                    break
                del outstanding[old]
                conn.datagrams_lost += 1
    except OSError as exc:
        if not stop.is_set():
            conn.error = "UDP to {}: {}".format(options.host, exc.strerror or exc)


def _mtu_options(family):
    # type: (int) -> tuple
    if family == socket.AF_INET6:
        return socket.IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO, IPV6_MTU, UDP_IPV6_OVERHEAD
    return socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO, IP_MTU, UDP_IPV4_OVERHEAD


def check_path_mtu(host, port, server_mtu):
    # type: (str, int, Optional[int]) -> Dict[str, Any]
    """Don't-fragment datagrams as large as this end's MTU (the interface the route to
    ``host`` leaves by) to the server's UDP port: ``mtu_local``, ``mtu_remote``,
    ``df_probe_bytes``, ``df_probe_ok`` and ``mtu_note`` (a sentence naming a mismatch)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    level, discover, do, mtu_option, overhead = _mtu_options(family)
    found = {"mtu_local": None, "mtu_remote": server_mtu, "df_probe_bytes": None, "df_probe_ok": None,
             "mtu_note": None}  # type: Dict[str, Any]
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.connect((host, port))
        sock.setsockopt(level, discover, do)
        mtu = sock.getsockopt(level, mtu_option)
        size = mtu - overhead
        found.update(mtu_local=mtu, df_probe_bytes=size)
        probe = bytearray(max(size, UDP_HEADER.size))
        arrived = False
        sock.settimeout(MTU_WAIT_S)
        for attempt in range(MTU_TRIES):
            UDP_HEADER.pack_into(probe, 0, MTU_PROBE_SEQ + attempt)
            sock.send(probe)
            deadline = time.monotonic() + MTU_WAIT_S
            while not arrived and time.monotonic() < deadline:
                try:
                    answer = sock.recv(64)
                except socket.timeout:
                    break
                arrived = len(answer) >= 8 and UDP_HEADER.unpack_from(answer)[0] >= MTU_PROBE_SEQ
            if arrived:
                break
    except OSError as exc:
        found["mtu_note"] = "the MTU check failed: {}".format(exc.strerror or exc)
        return found
    finally:
        sock.close()
    found["df_probe_ok"] = arrived
    found["mtu_note"] = mtu_note(mtu, server_mtu, size, arrived)
    return found


def mtu_note(mtu, server_mtu, size, arrived):
    # type: (int, Optional[int], int, bool) -> str
    """The MTU check said in a sentence: what got through, and a mismatch of the two ends."""
    mismatch = ""
    if server_mtu is not None and server_mtu != mtu:
        mismatch = "; MTU MISMATCH: {} here, {} at the server: frames larger than {} bytes are dropped on " \
                   "the way to the smaller end".format(mtu, server_mtu, min(mtu, server_mtu))
    if arrived:
        return "a {}-byte don't-fragment datagram (MTU {}) got through{}".format(size, mtu, mismatch)
    return "a {}-byte don't-fragment datagram (MTU {}) was never answered in {} tries: the path drops {}-byte " \
           "frames{}".format(size, mtu, MTU_TRIES, mtu, mismatch)


def run_client(options, out=None):
    # type: (ClientOptions, Optional[TextIO]) -> Dict[str, Any]
    """Run one test against a probe server, writing oratcptest-shaped lines to ``out``
    (stdout by default).

    Returns the client result (racperf_tui.tools.probe's docstring). Connection problems do
    not raise: the result's ``error`` says what happened (and the output has a ``Failed`` line).
    """
    options.validate()
    stream = out if out is not None else sys.stdout

    def say(line=""):
        # type: (str) -> None
        stream.write(line + "\n")
        stream.flush()

    say("[Requesting a test]")
    params = [
        ("Message payload", _payload_text(options.length_bytes, options.rtt)),
        ("Payload content type", options.payload.upper()),
        ("Delay between messages", "{:g} ms".format(options.delay_ms) if options.delay_ms else "NO"),
        ("Number of connections", str(options.num_conn)),
        (
            "Socket send buffer",
            "{} bytes".format(options.sockbuf_bytes) if options.sockbuf_bytes else "(system default)",
        ),
        ("Transport mode", options.mode),
        ("Disk write", "YES (write + fsync on the server before the ACK)" if options.write else "NO"),
        ("Statistics interval", _seconds_text(options.interval_s)),
        ("Test duration", _seconds_text(options.duration_s)),
    ]
    for key, value in params:
        say("        {:<22} = {}".format(key, value))
    say("        (1 Mbyte = 1024x1024 bytes)")
    say()
    result = _empty_client_result(options)
    test_id = uuid.uuid4().hex[:12]
    connections = []  # type: List[_Connection]
    udp = options.mode == "UDP"
    # UDP: one control connection; num_conn is the requests in flight
    count = 1 if udp else options.num_conn
    try:
        for index in range(1, count + 1):
            connections.append(_connect(options, test_id, index, count))
        if udp:
            result.update(_open_udp(options, connections[0]))
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__
        message = "Failed to connect to {}:{}: {}".format(options.host, options.port, reason)
        say("({}) {}".format(_stamp(), message))
        for conn in connections:
            conn.sock.close()
            if conn.udp is not None:
                conn.udp.close()
        result["error"] = message
        return result

    payload = os.urandom(options.length_bytes) if options.payload.upper() == "RANDOM" else bytes(options.length_bytes)
    say("({}) The server is ready.".format(_stamp()))
    timed = options.mode in ("SYNC", "UDP")
    say("                    Throughput" + ("             Latency" if timed else "") + ("      Lost" if udp else ""))
    stop = threading.Event()
    worker = {"SYNC": _sync_worker, "ASYNC": _async_worker, "UDP": _udp_worker}[options.mode]
    threads = [
        threading.Thread(
            target=worker, args=(c, options, payload, stop), daemon=True, name="probe-conn-{}".format(i)
        )
        for i, c in enumerate(connections, 1)
    ]
    histogram = _LatencyHistogram()
    latency_sum_s = 0.0
    started = time.monotonic()
    for thread in threads:
        thread.start()
    end_at = started + options.duration_s
    last_t, last_bytes, last_answered, last_lost = started, 0, 0, 0
    while True:
        next_t = min(last_t + options.interval_s, end_at)
        stop.wait(max(0.0, next_t - time.monotonic()))
        now = time.monotonic()
        total_bytes = sum(c.bytes_sent for c in connections)
        latencies = []  # type: List[float]
        for conn in connections:
            latencies.extend(conn.take_latencies())
        histogram.add(latencies)
        latency_sum_s += sum(latencies)
        elapsed = now - last_t
        throughput_mib_s = (total_bytes - last_bytes) / elapsed / MIB if elapsed > 0 else 0.0
        line = "({}) {:>10.3f} Mbytes/s".format(_stamp(), throughput_mib_s)
        if timed and latencies:
            line += "  {:>16.3f} ms".format(sum(latencies) / len(latencies) * 1000.0)
        if udp:
            answered = sum(c.messages for c in connections)
            lost = sum(c.datagrams_lost for c in connections)
            judged = (answered - last_answered) + (lost - last_lost)
            line += "  {:>8.2f} % lost".format(100.0 * (lost - last_lost) / judged if judged else 0.0)
            last_answered, last_lost = answered, lost
        # a final sliver of an interval (duration not a multiple of it) would be noise
        if elapsed >= min(options.interval_s, options.duration_s) * 0.2 or now < end_at:
            say(line)
        last_t, last_bytes = now, total_bytes
        errors = [c.error for c in connections if c.error]
        if now >= end_at or errors:
            break
    stop.set()
    elapsed_s = time.monotonic() - started
    for thread in threads:
        thread.join(timeout=5.0)
    for conn, thread in zip(connections, threads):
        if thread.is_alive():  # stuck in sendall: the server stopped reading
            conn.error = conn.error or "the server stopped reading (send blocked)"
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            thread.join(timeout=2.0)
    for conn in connections:
        # whatever a worker appended after the last report still counts in the summary
        late = conn.take_latencies()
        histogram.add(late)
        latency_sum_s += sum(late)
    _collect_done(connections)
    say("({}) Test finished.".format(_stamp()))
    result.update(_summarise(options, connections, histogram, latency_sum_s, elapsed_s))
    send_buffer = (
        connections[0].sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) if connections[0].sock.fileno() >= 0 else 0
    )
    result["socket_send_buffer_bytes"] = send_buffer
    for conn in connections:
        conn.sock.close()
        if conn.udp is not None:
            conn.udp.close()
    _say_summary(say, result)
    return result


def _open_udp(options, conn):
    # type: (ClientOptions, _Connection) -> Dict[str, Any]
    """The UDP socket to the port the server named, after the MTU check to it."""
    udp_port = conn.server_info.get("udp_port")
    if not isinstance(udp_port, int):
        raise ConnectionError("the server named no UDP port (a probe server older than UDP mode?)")
    server_mtu = conn.server_info.get("mtu")
    checked = check_path_mtu(options.host, udp_port, server_mtu if isinstance(server_mtu, int) else None)
    family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
    conn.udp = socket.socket(family, socket.SOCK_DGRAM)
    conn.udp.connect((options.host, udp_port))
    return checked


def _collect_done(connections):
    # type: (List[_Connection]) -> None
    """EOF to each server connection, then read its DONE line (the server's own count)."""
    for conn in connections:
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            continue
    for conn in connections:
        try:
            conn.sock.settimeout(DONE_TIMEOUT_S)
            line = _recv_line(conn.sock)
            if line.startswith(b"DONE "):
                conn.done_info = json.loads(line[5:].decode())
        except (OSError, ValueError) as exc:
            conn.error = conn.error or "no summary from the server: {}".format(exc)


def _summarise(options, connections, histogram, latency_sum_s, elapsed_s):
    # type: (ClientOptions, List[_Connection], _LatencyHistogram, float, float) -> Dict[str, Any]
    bytes_sent = sum(c.bytes_sent for c in connections)
    messages = sum(c.messages for c in connections)
    summary = {
        "avg_throughput_mib_s": bytes_sent / elapsed_s / MIB if elapsed_s > 0 else 0.0,
        "messages": messages,
        "bytes_sent": bytes_sent,
        "elapsed_s": elapsed_s,
    }  # type: Dict[str, Any]
    if options.mode in ("SYNC", "UDP") and histogram.count:
        summary["avg_latency_ms"] = latency_sum_s / histogram.count * 1000.0
        summary["latency_p50_ms"] = (histogram.percentile_s(50) or 0.0) * 1000.0
        summary["latency_p99_ms"] = (histogram.percentile_s(99) or 0.0) * 1000.0
        summary["latency_max_ms"] = histogram.max_s * 1000.0
    if options.mode == "UDP":
        sent = sum(c.datagrams_sent for c in connections)
        lost = sum(c.datagrams_lost for c in connections)
        summary["datagrams_sent"] = sent
        summary["datagrams_lost"] = lost
        judged = messages + lost
        summary["loss_pct"] = 100.0 * lost / judged if judged else 0.0
    done = [c.done_info for c in connections if c.done_info]
    if len(done) == len(connections):
        summary["server_bytes_received"] = sum(int(d["bytes_received"]) for d in done)
        summary["server_recv_buffer_bytes"] = int(done[0].get("recv_buffer_bytes") or 0)
        summary["server_bytes_written"] = sum(int(d.get("bytes_written") or 0) for d in done)
        summary["server_fsyncs"] = sum(int(d.get("fsyncs") or 0) for d in done)
    errors = [c.error for c in connections if c.error]
    if errors:
        summary["error"] = errors[0]
    return summary


def _say_summary(say, result):
    # type: (Callable[[str], None], Dict[str, Any]) -> None
    def row(key, value):
        # type: (str, str) -> None
        say("{:>33} = {}".format(key, value))

    row("Socket send buffer", "{} bytes".format(result["socket_send_buffer_bytes"]))
    row("Avg. throughput", "{:.3f} Mbytes/s".format(result["avg_throughput_mib_s"]))
    if "avg_latency_ms" in result:
        row("Avg. latency", "{:.3f} ms".format(result["avg_latency_ms"]))
        row("Latency p50", "{:.3f} ms".format(result["latency_p50_ms"]))
        row("Latency p99", "{:.3f} ms".format(result["latency_p99_ms"]))
        row("Latency max", "{:.3f} ms".format(result["latency_max_ms"]))
    if result.get("datagrams_sent") is not None:
        row("Datagrams sent", str(result["datagrams_sent"]))
        row("Datagrams lost", str(result["datagrams_lost"]))
        row("Loss", "{:.3f} %".format(result["loss_pct"]))
    if result.get("mtu_local") is not None:
        row("MTU here", "{} bytes".format(result["mtu_local"]))
    if result.get("mtu_remote") is not None:
        row("MTU at the server", "{} bytes".format(result["mtu_remote"]))
    if result.get("df_probe_ok") is not None:
        row("Path MTU probe", "{} bytes {}".format(
            result["df_probe_bytes"], "arrived" if result["df_probe_ok"] else "LOST"))
    if result.get("mtu_note"):
        row("MTU check", str(result["mtu_note"]))
    row("Messages", str(result["messages"]))
    row("Bytes sent", "{} bytes".format(result["bytes_sent"]))
    row("Elapsed", "{:.3f} seconds".format(result["elapsed_s"]))
    if result.get("server_bytes_received") is not None:
        row("Server received", "{} bytes".format(result["server_bytes_received"]))
        row("Server receive buffer", "{} bytes".format(result["server_recv_buffer_bytes"]))
        if result.get("write"):
            row("Server written", "{} bytes".format(result["server_bytes_written"]))
            row("Server fsyncs", str(result["server_fsyncs"]))
    if result.get("error"):
        row("Error", str(result["error"]))


def _empty_client_result(options):
    # type: (ClientOptions) -> Dict[str, Any]
    return {
        "tool": "probe",
        "role": "client",
        "mode": options.mode,
        "rtt": options.rtt,
        "message_payload_bytes": options.length_bytes,
        "num_conn": options.num_conn,
        "delay_ms": options.delay_ms,
        "write": options.write,
        "interval_s": options.interval_s,
        "duration_s": options.duration_s,
        "samples": [],
        "socket_send_buffer_bytes": None,
        "avg_throughput_mib_s": None,
        "messages": 0,
        "bytes_sent": 0,
        "elapsed_s": None,
        "server_bytes_received": None,
        "server_recv_buffer_bytes": None,
        "server_bytes_written": None,
        "server_fsyncs": None,
        "error": None,
    }


# ---------------------------------------------------------------- the command line


def _size_argument(text):
    # type: (str) -> int
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def add_client_arguments(parser):
    # type: (argparse.ArgumentParser) -> None
    """The client's options (also ``racperf probe client``'s)."""
    parser.add_argument("host", help="the probe server's address")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help="server port (default {})".format(DEFAULT_PORT))
    parser.add_argument("--mode", type=str.upper, choices=("SYNC", "ASYNC", "UDP"), default="SYNC",
                        help="SYNC: wait for the server's ACK of every message (latency); "
                             "ASYNC: stream; UDP: datagram requests answered by the server "
                             "(latency and loss), after a don't-fragment check of the path's "
                             "MTU (default SYNC)")
    parser.add_argument("--length", type=_size_argument, default=DEFAULT_LENGTH_BYTES, metavar="BYTES",
                        help="message payload, e.g. 512, 8K, 1M (default 1M)")
    parser.add_argument("--num-conn", type=int, default=1, metavar="N",
                        help="parallel connections (UDP: requests in flight) (default 1)")
    parser.add_argument("--delay-ms", type=float, default=0.0, metavar="MS",
                        help="pause between messages (ms, default 0)")
    parser.add_argument("--write", action="store_true",
                        help="the server writes and fsyncs every message before its ACK "
                             "(Data Guard SYNC redo transport)")
    parser.add_argument("--rtt", action="store_true", help="empty SYNC messages: network round trip")
    parser.add_argument("--interval", type=float, default=2.0, metavar="S",
                        help="seconds per line (default 2)")
    parser.add_argument("--duration", type=float, default=10.0, metavar="S",
                        help="test seconds (default 10)")
    parser.add_argument("--sockbuf", type=_size_argument, default=0, metavar="BYTES",
                        help="SO_SNDBUF here and SO_RCVBUF on the server (default: system's)")
    parser.add_argument("--payload", type=str.upper, choices=("ZERO", "RANDOM"), default="ZERO",
                        help="message content (default ZERO)")
    parser.add_argument("--connect-timeout", type=float, default=5.0, metavar="S",
                        help="seconds to wait for the connection (default 5)")


def options_from_args(args):
    # type: (argparse.Namespace) -> ClientOptions
    """The test parsed arguments describe (not validated yet)."""
    return ClientOptions(
        host=args.host,
        port=args.port,
        mode=args.mode,
        length_bytes=args.length,
        num_conn=args.num_conn,
        delay_ms=args.delay_ms,
        write=args.write,
        rtt=args.rtt,
        interval_s=args.interval,
        duration_s=args.duration,
        sockbuf_bytes=args.sockbuf,
        payload=args.payload,
        connect_timeout_s=args.connect_timeout,
    )


def main(argv=None):
    # type: (Optional[List[str]]) -> int
    parser = argparse.ArgumentParser(
        prog="probe_client.py",
        description="One test against a racperf probe server: oratcptest-shaped interval lines "
                    "(MiB/s, ms) and a summary; exit status 1 when the test failed.")
    add_client_arguments(parser)
    options = options_from_args(parser.parse_args(argv))
    try:
        options.validate()
    except ValueError as exc:
        sys.stderr.write("{}\n".format(exc))  # "probe: KEY must be ...", racperf's words
        return 2
    return 1 if run_client(options).get("error") else 0


if __name__ == "__main__":
    sys.exit(main())
