"""The built-in network probe: oratcptest's measurement without Java (client side + Tool).

The server is :mod:`racperf_tui.tools.probe_server` (one self-contained file for python3 >= 3.6,
copied to the other node and run there; its docstring describes the wire protocol). This module
holds the client (:func:`run_client`, what ``racperf probe client HOST`` runs), the Tool for the
runs machinery (``role: "server" | "client"``), and the parsers.

Modes (as oratcptest's): SYNC sends a message and waits for the server's ACK (throughput and
per-message latency); ASYNC streams (throughput only); ``rtt`` sends empty SYNC messages (the
latency is the network round trip); ``write`` asks the server to write and fsync every message
before its ACK (Data Guard SYNC redo transport: the standby writes before it acknowledges).

Client output has oratcptest's shape, so one parser style fits both (MiB/s: "1 Mbyte =
1024x1024 bytes"; latency in ms)::

    [Requesting a test]
            Message payload        = 1 Mbyte
            ...
    (13:53:34) The server is ready.
                        Throughput             Latency
    (13:53:36)     90.170 Mbytes/s           11.090 ms
    (13:54:04) Test finished.
                   Socket send buffer = 326400 bytes
                      Avg. throughput = 98.549 Mbytes/s
                         Avg. latency = 10.147 ms
    followed by racperf's additions: Latency p50 / p99 / max, Messages, Bytes sent,
    Elapsed, Server received, Server receive buffer, Server written, Server fsyncs.

Sample metrics (one per interval line): ``throughput_mib_s``, ``throughput_mbit_s``
(10^6 bit/s) and, in SYNC mode when messages completed in the interval, ``latency_ms``.
``Sample.t`` is the interval's end in seconds since the server was ready.

Client result (``parse_output`` of client output)::

    {"tool": "probe", "role": "client", "mode": "SYNC" | "ASYNC", "rtt": bool,
     "message_payload_bytes", "num_conn", "delay_ms", "write": bool, "interval_s",
     "duration_s", "samples": [{"time": "13:53:36", "throughput_mib_s", "latency_ms"?}],
     "socket_send_buffer_bytes", "avg_throughput_mib_s", "avg_latency_ms"?,
     "latency_p50_ms"?, "latency_p99_ms"?, "latency_max_ms"?, "messages", "bytes_sent",
     "elapsed_s", "server_bytes_received", "server_recv_buffer_bytes",
     "server_bytes_written", "server_fsyncs", "error": str | None}

(latency keys absent in ASYNC). Server result (``parse_output`` of server output)::

    {"tool": "probe", "role": "server", "listening": "HOST:PORT" | None,
     "connections": [{"peer", "mode", "length", "write": bool, "bytes_received", "messages",
                      "seconds", "throughput_mib_s", "recv_buffer_bytes",
                      "bytes_written"?, "fsyncs"?}],
     "bytes_received", "error": str | None}
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from racperf_tui.core import units
from racperf_tui.core.events import Sample
from racperf_tui.core.tool import MIB_S_PER_MBIT_S, MetricSpec, ToolDescription, ToolOption
from racperf_tui.tools import probe_server
from racperf_tui.tools.base import PairMode, PairSpec
from racperf_tui.tools.figures import MAX_LINE_CHARS, OutputParseError, Warnings, check_finite, finite_number

#: the server file to copy to another node (``python3 probe_server.py --port N``)
PROBE_SERVER_PATH = Path(probe_server.__file__).resolve()
DEFAULT_PORT = probe_server.DEFAULT_PORT
#: the server line after which clients may connect
READY_PATTERN = re.compile(r"Probe server listening on (?P<host>\S+):(?P<port>\d+)")
PORT_IN_USE_PATTERN = re.compile(r"Failed to listen on .*Address already in use")
#: How both ends run (read by racperf_tui.orchestration.pair_runs); a server given port 0 picks a free
#: one and names it in its ready line, which the client is then given.
PAIR = PairSpec(
    ready_pattern=READY_PATTERN,
    failure_pattern=PORT_IN_USE_PATTERN,
    default_port=DEFAULT_PORT,
    modes=(
        PairMode("SYNC", {"mode": "SYNC", "rtt": False}),
        PairMode("ASYNC", {"mode": "ASYNC", "rtt": False}),
        PairMode("RTT", {"mode": "SYNC", "rtt": True}, latency_only=True, unused_fields=frozenset({"length"})),
    ),
    client_fields={
        "host": "host",
        "port": "port",
        "duration_s": "duration_s",
        "interval_s": "interval_s",
        "length": "length",
        "connections": "num_conn",
        "write": "write",
    },
    server_fields={"host": "bind", "port": "port", "duration_s": "duration_s"},
)
PROBE_VERSION = "racperf probe 1"

MIB = 1024 * 1024
#: ASYNC send chunk: big enough that per-call Python overhead vanishes next to the copy,
#: small enough that the end of the test is not delayed on a slow link
ASYNC_CHUNK_BYTES = 1 * MIB
#: how long the client waits for each server's DONE line after its EOF
DONE_TIMEOUT_S = 10.0

_TIME = r"\((?P<time>\d{2}:\d{2}:\d{2}(?:\.\d+)?)\)"
_INTERVAL_LINE = re.compile(_TIME + r"\s+(?P<tput>[\d.]+)\s+Mbytes/s(?:\s+(?P<lat>[\d.]+)\s+ms)?\s*$")
# linear regexes only (no neighbouring parts matching the same characters; the code strips):
# a lazy ``.*?\s*$`` tries every split of a run of blanks
_PARAM_LINE = re.compile(r"^\s+(?P<key>[A-Za-z][A-Za-z0-9 .]*)=(?P<value>\s.*)$")
_STAT_INTERVAL = re.compile(r"=\s*([\d.]+)")
_LEADING_FIGURE = re.compile(r"^\s*(-?[\d.]+)")
_PAYLOAD = re.compile(r"^\s*([\d.]+)\s*(Mbyte|Kbyte|byte)")
_SERVER_REQUEST = re.compile(
    r"\[A test was requested\.\] (?P<peer>\S+) test=\S+ conn=\S+ mode=(?P<mode>\w+) "
    r"length=(?P<length>\d+) write=(?P<write>YES|NO)"
)
_SERVER_DONE = re.compile(
    r"\[The test terminated\.\] (?P<peer>\S+) conn=\S+ received (?P<bytes>\d+) bytes in "
    r"(?P<messages>\d+) messages, (?P<seconds>[\d.]+) s, (?P<rate>[\d.]+) Mbytes/s; socket "
    r"receive buffer (?P<rcvbuf>\d+) bytes(?:; wrote (?P<written>\d+) bytes, (?P<fsyncs>\d+) fsyncs)?"
)


# ---------------------------------------------------------------- the client


@dataclass
class ClientOptions:
    """One probe test, seen from the client."""

    host: str
    port: int = DEFAULT_PORT
    mode: str = "SYNC"
    length_bytes: int = MIB
    num_conn: int = 1
    delay_ms: float = 0.0
    write: bool = False
    rtt: bool = False
    interval_s: float = 2.0
    duration_s: float = 10.0
    sockbuf_bytes: int = 0
    payload: str = "ZERO"
    connect_timeout_s: float = 5.0

    def validate(self) -> None:
        """ValueError naming the option that is wrong."""
        self.mode = self.mode.upper()
        if self.mode not in ("SYNC", "ASYNC"):
            raise ValueError(f"probe mode must be SYNC or ASYNC, not {self.mode!r}")
        if self.rtt and self.mode != "SYNC":
            raise ValueError("probe rtt needs SYNC mode (a round trip is a message and its ACK)")
        if self.rtt:
            self.length_bytes = 0
        if not 0 <= self.length_bytes <= probe_server.MAX_MESSAGE_BYTES:
            raise ValueError(f"probe message length must be 0..{probe_server.MAX_MESSAGE_BYTES} bytes")
        if self.length_bytes == 0 and not self.rtt:
            raise ValueError("probe message length 0 means an RTT test: use rtt instead")
        if not 1 <= self.num_conn <= 256:
            raise ValueError(f"probe num_conn must be 1..256, not {self.num_conn}")
        if not 0.1 <= self.interval_s <= 3600:
            raise ValueError(f"probe interval must be 0.1..3600 s, not {self.interval_s:g}")
        if not 0.1 <= self.duration_s <= 7 * 86400:
            raise ValueError(f"probe duration must be 0.1 s..7 days, not {self.duration_s:g}")
        if self.delay_ms < 0:
            raise ValueError("probe delay must be >= 0 ms")
        if self.payload.upper() not in ("ZERO", "RANDOM"):
            raise ValueError(f"probe payload must be ZERO or RANDOM, not {self.payload!r}")
        if not 0 < self.port < 65536:
            raise ValueError(f"probe port must be 1..65535, not {self.port}")


class _Connection:
    """One TCP connection of a test and its counters (written by its worker thread only)."""

    def __init__(self, sock: socket.socket, server_info: dict[str, Any]) -> None:
        self.sock = sock
        self.server_info = server_info
        self.bytes_sent = 0
        self.messages = 0
        self.latencies_s: list[float] = []
        self.lock = threading.Lock()
        self.error: str | None = None
        self.done_info: dict[str, Any] | None = None

    def take_latencies(self) -> list[float]:
        with self.lock:
            taken, self.latencies_s = self.latencies_s, []
        return taken


class _LatencyHistogram:
    """Whole-test latency percentiles at ~1 % resolution, constant memory (log buckets)."""

    _BASE = math.log(1.01)

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.count = 0
        self.max_s = 0.0

    def add(self, values_s: list[float]) -> None:
        for value in values_s:
            key = math.floor(math.log(max(value, 1e-9)) / self._BASE)
            self.buckets[key] = self.buckets.get(key, 0) + 1
        self.count += len(values_s)
        if values_s:
            self.max_s = max(self.max_s, max(values_s))

    def percentile_s(self, pct: float) -> float | None:
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


def _payload_text(length: int, rtt: bool) -> str:
    if rtt:
        return "0 bytes (RTT)"
    if length % MIB == 0:
        count = length // MIB
        return f"{count} Mbyte" + ("s" if count != 1 else "")
    if length % 1024 == 0:
        return f"{length // 1024} Kbytes"
    return f"{length} bytes"


def _seconds_text(value: float) -> str:
    return f"{value:g} seconds"


def _stamp() -> str:
    return time.strftime("%H:%M:%S")


def _recv_line(sock: socket.socket, limit: int = 4096) -> bytes:
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        data += chunk
        if len(data) > limit:
            raise ConnectionError("the server's answer is too long (not a racperf probe server?)")
    return bytes(data)


def _connect(options: ClientOptions, test_id: str, index: int) -> _Connection:
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
            "num_conn": options.num_conn,
            "sockbuf": options.sockbuf_bytes,
        }
        sock.sendall(probe_server.PROTOCOL_MAGIC + json.dumps(hello).encode() + b"\n")
        answer = _recv_line(sock)
        if not answer.startswith(b"OK "):
            raise ConnectionError(f"the server refused the test: {answer.decode(errors='replace').strip()}")
        info = json.loads(answer[3:].decode())
        sock.settimeout(None)  # data phase: blocking; the main thread unblocks stuck workers
        return _Connection(sock, info)
    except BaseException:
        sock.close()
        raise


def _sync_worker(conn: _Connection, options: ClientOptions, payload: bytes, stop: threading.Event) -> None:
    message = probe_server.MESSAGE_HEADER.pack(len(payload)) + payload
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


def _async_worker(conn: _Connection, options: ClientOptions, payload: bytes, stop: threading.Event) -> None:
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


def run_client(options: ClientOptions, out: TextIO = sys.stdout) -> dict[str, Any]:
    """Run one test against a probe server, writing oratcptest-shaped lines to ``out``.

    Returns the client result (module docstring). Connection problems do not raise: the
    result's ``error`` says what happened (and the output has a ``Failed`` line).
    """
    options.validate()

    def say(line: str = "") -> None:
        out.write(line + "\n")
        out.flush()

    say("[Requesting a test]")
    params = [
        ("Message payload", _payload_text(options.length_bytes, options.rtt)),
        ("Payload content type", options.payload.upper()),
        ("Delay between messages", f"{options.delay_ms:g} ms" if options.delay_ms else "NO"),
        ("Number of connections", str(options.num_conn)),
        ("Socket send buffer", f"{options.sockbuf_bytes} bytes" if options.sockbuf_bytes else "(system default)"),
        ("Transport mode", options.mode),
        ("Disk write", "YES (write + fsync on the server before the ACK)" if options.write else "NO"),
        ("Statistics interval", _seconds_text(options.interval_s)),
        ("Test duration", _seconds_text(options.duration_s)),
    ]
    for key, value in params:
        say(f"        {key:<22} = {value}")
    say("        (1 Mbyte = 1024x1024 bytes)")
    say()
    result = _empty_client_result(options)
    test_id = uuid.uuid4().hex[:12]
    connections: list[_Connection] = []
    try:
        for index in range(1, options.num_conn + 1):
            connections.append(_connect(options, test_id, index))
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or exc.__class__.__name__
        message = f"Failed to connect to {options.host}:{options.port}: {reason}"
        say(f"({_stamp()}) {message}")
        for conn in connections:
            conn.sock.close()
        result["error"] = message
        return result

    payload = os.urandom(options.length_bytes) if options.payload.upper() == "RANDOM" else bytes(options.length_bytes)
    say(f"({_stamp()}) The server is ready.")
    say("                    Throughput" + ("             Latency" if options.mode == "SYNC" else ""))
    stop = threading.Event()
    worker = _sync_worker if options.mode == "SYNC" else _async_worker
    threads = [
        threading.Thread(target=worker, args=(c, options, payload, stop), daemon=True, name=f"probe-conn-{i}")
        for i, c in enumerate(connections, 1)
    ]
    histogram = _LatencyHistogram()
    latency_sum_s = 0.0
    started = time.monotonic()
    for thread in threads:
        thread.start()
    end_at = started + options.duration_s
    last_t, last_bytes = started, 0
    while True:
        next_t = min(last_t + options.interval_s, end_at)
        stop.wait(max(0.0, next_t - time.monotonic()))
        now = time.monotonic()
        total_bytes = sum(c.bytes_sent for c in connections)
        latencies: list[float] = []
        for conn in connections:
            latencies.extend(conn.take_latencies())
        histogram.add(latencies)
        latency_sum_s += sum(latencies)
        elapsed = now - last_t
        throughput_mib_s = (total_bytes - last_bytes) / elapsed / MIB if elapsed > 0 else 0.0
        line = f"({_stamp()}) {throughput_mib_s:>10.3f} Mbytes/s"
        if options.mode == "SYNC" and latencies:
            line += f"  {sum(latencies) / len(latencies) * 1000.0:>16.3f} ms"
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
    say(f"({_stamp()}) Test finished.")
    result.update(_summarise(options, connections, histogram, latency_sum_s, elapsed_s))
    send_buffer = (
        connections[0].sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) if connections[0].sock.fileno() >= 0 else 0
    )
    result["socket_send_buffer_bytes"] = send_buffer
    for conn in connections:
        conn.sock.close()
    _say_summary(say, result)
    return result


def _collect_done(connections: list[_Connection]) -> None:
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
            conn.error = conn.error or f"no summary from the server: {exc}"


def _summarise(
    options: ClientOptions,
    connections: list[_Connection],
    histogram: _LatencyHistogram,
    latency_sum_s: float,
    elapsed_s: float,
) -> dict[str, Any]:
    bytes_sent = sum(c.bytes_sent for c in connections)
    messages = sum(c.messages for c in connections)
    summary: dict[str, Any] = {
        "avg_throughput_mib_s": bytes_sent / elapsed_s / MIB if elapsed_s > 0 else 0.0,
        "messages": messages,
        "bytes_sent": bytes_sent,
        "elapsed_s": elapsed_s,
    }
    if options.mode == "SYNC" and histogram.count:
        summary["avg_latency_ms"] = latency_sum_s / histogram.count * 1000.0
        summary["latency_p50_ms"] = (histogram.percentile_s(50) or 0.0) * 1000.0
        summary["latency_p99_ms"] = (histogram.percentile_s(99) or 0.0) * 1000.0
        summary["latency_max_ms"] = histogram.max_s * 1000.0
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


def _say_summary(say: Any, result: Mapping[str, Any]) -> None:
    def row(key: str, value: str) -> None:
        say(f"{key:>33} = {value}")

    row("Socket send buffer", f"{result['socket_send_buffer_bytes']} bytes")
    row("Avg. throughput", f"{result['avg_throughput_mib_s']:.3f} Mbytes/s")
    if "avg_latency_ms" in result:
        row("Avg. latency", f"{result['avg_latency_ms']:.3f} ms")
        row("Latency p50", f"{result['latency_p50_ms']:.3f} ms")
        row("Latency p99", f"{result['latency_p99_ms']:.3f} ms")
        row("Latency max", f"{result['latency_max_ms']:.3f} ms")
    row("Messages", str(result["messages"]))
    row("Bytes sent", f"{result['bytes_sent']} bytes")
    row("Elapsed", f"{result['elapsed_s']:.3f} seconds")
    if result.get("server_bytes_received") is not None:
        row("Server received", f"{result['server_bytes_received']} bytes")
        row("Server receive buffer", f"{result['server_recv_buffer_bytes']} bytes")
        if result.get("write"):
            row("Server written", f"{result['server_bytes_written']} bytes")
            row("Server fsyncs", str(result["server_fsyncs"]))
    if result.get("error"):
        row("Error", str(result["error"]))


def _empty_client_result(options: ClientOptions) -> dict[str, Any]:
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


# ---------------------------------------------------------------- sizes


def parse_size(text: str | int) -> int:
    """ "1M" / "8k" / "512" / "1MiB" -> bytes (1024-based, as oratcptest's -length)."""
    return units.size_bytes(text, "size")


# ---------------------------------------------------------------- the Tool


#: the probe's config keys (see ProbeTool.build_argv)
OPTIONS = (
    ToolOption("role", "choice", "client", "which end this run is", ("client", "server")),
    ToolOption("host", "str", "", "the server's address", end="client"),
    ToolOption("port", "int", DEFAULT_PORT, "the server's port (server: 0 picks one)"),
    ToolOption("bind", "str", "0.0.0.0", "the address the server listens on", end="server"),
    ToolOption(
        "mode",
        "choice",
        "SYNC",
        "SYNC: each message waits for the ACK; ASYNC: a stream",
        ("SYNC", "ASYNC"),
        end="client",
    ),
    ToolOption("length", "str", "1M", "message length, e.g. 8K", end="client"),
    ToolOption("num_conn", "int", 1, "parallel connections", end="client"),
    ToolOption("delay_ms", "float", 0, "pause between messages", end="client"),
    ToolOption("write", "bool", False, "the server writes and fsyncs each message (SYNC redo)", end="client"),
    ToolOption("rtt", "bool", False, "empty messages: the latency is the round trip", end="client"),
    ToolOption("interval_s", "float", 2, "seconds between live figures", end="client"),
    ToolOption("duration_s", "float", 10, "seconds to send", end="client"),
    ToolOption("sockbuf", "str", "", "socket send buffer, e.g. 4M", end="client"),
    ToolOption("payload", "choice", "ZERO", "message contents", ("ZERO", "RANDOM"), end="client"),
    ToolOption("once", "bool", True, "the server exits after one test", end="server"),
    ToolOption("write_dir", "path", "", "where the server writes with write (on the standby redo disk)", end="server"),
    ToolOption("write_file", "path", "", "one file the server writes into with write", end="server"),
    ToolOption("fsync", "bool", False, "the server fsyncs each written message", end="server"),
    ToolOption("python", "path", "", "the python3 that runs the server (>= 3.6)", end="server"),
)
METRICS = (
    MetricSpec("throughput_mbit_s", "throughput", "Mbit/s", chart="throughput_mbit", quantity="throughput"),
    MetricSpec(
        "throughput_mib_s",
        "throughput",
        "MiB/s",
        chart="throughput_mib",
        twin_of="throughput_mbit_s",
        quantity="throughput",
    ),
    MetricSpec("latency_ms", "latency", "ms", decimals=3, chart="latency", quantity="latency"),
)
RESULTS = (
    MetricSpec("avg_throughput_mib_s", "throughput", "Mbit/s", divisor=MIB_S_PER_MBIT_S, quantity="throughput"),
    MetricSpec("avg_latency_ms", "latency", "ms", decimals=3),
    MetricSpec("latency_p50_ms", "latency p50", "ms", decimals=3),
    MetricSpec("latency_p99_ms", "latency p99", "ms", decimals=3),
    MetricSpec("latency_max_ms", "latency max", "ms", decimals=3),
    MetricSpec("elapsed_s", "elapsed", "s", decimals=2),
)
DESCRIPTION = ToolDescription(
    name="probe",
    summary="oratcptest's SYNC/ASYNC measurement without Java",
    install_hint="nothing to install: the probe is part of racperf (server: python3 >= 3.6)",
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
)


class ProbeTool:
    """The probe as a Tool (see racperf_tui.tools.base.Tool): ``role`` "client" or "server"."""

    name = "probe"
    description = DESCRIPTION
    install_hint = "nothing to install: the probe is part of racperf (server: python3 >= 3.6)"
    stop_grace_s = 3.0

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        """Config keys. Server: ``role: "server"``, ``bind`` ("0.0.0.0"), ``port``,
        ``once`` (True), ``write_file``, ``write_dir``, ``fsync``, ``python`` (the interpreter,
        default this one). Client: ``host``, ``port``, ``mode``, ``length`` (bytes or "1M"),
        ``num_conn``, ``delay_ms``, ``write``, ``rtt``, ``interval_s``, ``duration_s``,
        ``sockbuf``, ``payload``."""
        role = config.get("role", "client")
        port = int(config.get("port", DEFAULT_PORT))
        if role == "server":
            if not 0 <= port < 65536:
                raise ValueError(f"probe server port must be 0..65535, not {port}")
            argv = [
                str(config.get("python") or sys.executable),
                "-u",
                str(PROBE_SERVER_PATH),
                "--bind",
                str(config.get("bind") or "0.0.0.0"),
                "--port",
                str(port),
            ]
            if config.get("once", True):
                argv.append("--once")
            if config.get("write_file"):
                argv += ["--write-file", str(config["write_file"])]
            if config.get("write_dir"):
                argv += ["--write-dir", str(config["write_dir"])]
            if config.get("fsync"):
                argv.append("--fsync")
            return argv
        if role != "client":
            raise ValueError(f"probe config 'role' must be 'client' or 'server', not {role!r}")
        options = client_options_from_config(config)
        argv = [
            sys.executable,
            "-m",
            "racperf_tui",
            "probe",
            "client",
            options.host,
            "--port",
            str(options.port),
            "--mode",
            options.mode,
            "--num-conn",
            str(options.num_conn),
            "--interval",
            f"{options.interval_s:g}",
            "--duration",
            f"{options.duration_s:g}",
            "--payload",
            options.payload.upper(),
        ]
        if options.rtt:
            argv.append("--rtt")
        else:
            argv += ["--length", str(options.length_bytes)]
        if options.delay_ms:
            argv += ["--delay-ms", f"{options.delay_ms:g}"]
        if options.write:
            argv.append("--write")
        if options.sockbuf_bytes:
            argv += ["--sockbuf", str(options.sockbuf_bytes)]
        return argv

    def tool_version(self, argv: list[str]) -> str:
        return PROBE_VERSION

    def stream_parser(self, config: Mapping[str, Any]) -> ProbeStreamParser:
        return ProbeStreamParser(interval_s=float(config.get("interval_s", 2.0) or 2.0))

    def parse_result(self, output: str) -> dict[str, Any]:
        return parse_output(output)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        if result is None:
            return False, f"no probe output could be parsed (exit status {exit_status})"
        if result.get("error"):
            return False, f"probe: {result['error']}"
        if exit_status != 0:
            return False, f"probe exited with status {exit_status}"
        if result.get("role") == "server":
            if not result.get("connections"):
                return False, "the probe server served no test"
            return True, "ok"
        if not result.get("messages"):
            return False, "the probe moved no messages"
        return True, "ok"

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        duration_s = float(config.get("duration_s", 10) or 10)
        return duration_s + (90.0 if config.get("role") == "server" else 30.0)


TOOL = ProbeTool()


def client_options_from_config(config: Mapping[str, Any]) -> ClientOptions:
    """A validated ClientOptions from a run config (ValueError says which key is wrong)."""
    host = str(config.get("host") or "").strip()
    if not host:
        raise ValueError("probe client config needs 'host' (the probe server's address)")
    try:
        options = ClientOptions(
            host=host,
            port=int(config.get("port", DEFAULT_PORT)),
            mode=str(config.get("mode", "SYNC")),
            length_bytes=parse_size(config.get("length", MIB)),
            num_conn=int(config.get("num_conn", 1)),
            delay_ms=float(config.get("delay_ms", 0) or 0),
            write=bool(config.get("write", False)),
            rtt=bool(config.get("rtt", False)),
            interval_s=float(config.get("interval_s", 2.0)),
            duration_s=float(config.get("duration_s", 10.0)),
            sockbuf_bytes=parse_size(config.get("sockbuf", 0) or 0),
            payload=str(config.get("payload", "ZERO")),
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"probe config: {exc}") from None
    options.validate()
    return options


# ---------------------------------------------------------------- parsers


class ProbeStreamParser:
    """Interval lines -> Samples; t counts intervals (the lines carry wall-clock time only)."""

    def __init__(self, interval_s: float = 2.0) -> None:
        self.interval_s = interval_s
        self.count = 0

    def feed(self, line: str) -> list[Sample]:
        stripped = line.strip()
        if stripped.startswith("Statistics interval"):
            match = _STAT_INTERVAL.search(stripped)
            interval = finite_number(match.group(1)) if match else None
            if interval:
                self.interval_s = interval
            return []
        if len(stripped) > MAX_LINE_CHARS:
            return []
        match = _INTERVAL_LINE.match(stripped)
        if match is None:
            return []
        metrics = _interval_metrics(match)
        if metrics is None:
            return []  # a figure no measurement can have
        self.count += 1
        return [Sample(t=self.count * self.interval_s, metrics=metrics, extra={"time": match.group("time")})]

    def finish(self) -> list[Sample]:
        return []


def _interval_metrics(match: re.Match[str]) -> dict[str, float] | None:
    """An interval line's metrics; None when a figure is impossible ("1.2.3", inf)."""
    throughput_mib_s = finite_number(match.group("tput"))
    if throughput_mib_s is None:
        return None
    metrics = {"throughput_mib_s": throughput_mib_s, "throughput_mbit_s": units.mib_s_to_mbit_s(throughput_mib_s)}
    if match.group("lat") is not None:
        latency_ms = finite_number(match.group("lat"))
        if latency_ms is None:
            return None
        metrics["latency_ms"] = latency_ms
    return metrics


class _BadFigure(ValueError):
    """A line's figure that no measurement can have: the line is skipped with a warning."""


def _figure(text: str, kind: type = float) -> float:
    number = finite_number(text)
    if number is None:
        raise _BadFigure(f"{text[:40]!r} is no possible figure")
    return int(number) if kind is int else number


def parse_output(text: str) -> dict[str, Any]:
    """Saved probe output (client or server) -> result (module docstring); lines that cannot
    be figures are skipped, named in ``"warnings"``."""
    warnings = Warnings()
    if "[Requesting a test]" in text:
        result = _parse_client(text, warnings)
    elif any(mark in text for mark in ("Probe server listening on", "Failed to listen on", "[A test was requested.]")):
        result = _parse_server(text, warnings)
    else:
        raise OutputParseError(
            "not racperf probe output (no '[Requesting a test]' or 'Probe server listening on' line)"
        )
    warnings.into(result)
    check_finite(result, "probe output")
    return result


_SUMMARY_KEYS: dict[str, tuple[str, type]] = {
    "Socket send buffer": ("socket_send_buffer_bytes", int),
    "Avg. throughput": ("avg_throughput_mib_s", float),
    "Avg. latency": ("avg_latency_ms", float),
    "Latency p50": ("latency_p50_ms", float),
    "Latency p99": ("latency_p99_ms", float),
    "Latency max": ("latency_max_ms", float),
    "Messages": ("messages", int),
    "Bytes sent": ("bytes_sent", int),
    "Elapsed": ("elapsed_s", float),
    "Server received": ("server_bytes_received", int),
    "Server receive buffer": ("server_recv_buffer_bytes", int),
    "Server written": ("server_bytes_written", int),
    "Server fsyncs": ("server_fsyncs", int),
}


def _parse_client(text: str, warnings: Warnings) -> dict[str, Any]:
    params: dict[str, str] = {}
    summary: dict[str, Any] = {}
    samples: list[dict[str, Any]] = []
    error: str | None = None
    finished = False
    for lineno, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE_CHARS:
            warnings.long_line(lineno, len(line))
            continue
        stripped = line.strip()
        interval = _INTERVAL_LINE.match(stripped)
        if interval:
            metrics = _interval_metrics(interval)
            if metrics is None:
                warnings.add(f"line {lineno}: interval with an impossible figure, skipped: {stripped[:60]!r}")
                continue
            sample: dict[str, Any] = {"time": interval.group("time"), "throughput_mib_s": metrics["throughput_mib_s"]}
            if "latency_ms" in metrics:
                sample["latency_ms"] = metrics["latency_ms"]
            samples.append(sample)
            continue
        if "Failed to connect to" in stripped:
            error = stripped.split(") ", 1)[-1]
            continue
        if stripped.endswith("Test finished."):
            finished = True
            continue
        param = _PARAM_LINE.match(line)
        if not param:
            continue
        key, value = param.group("key").strip(), param.group("value").strip()
        if not finished:
            params[key] = value
        elif key in _SUMMARY_KEYS:
            name, kind = _SUMMARY_KEYS[key]
            number = _LEADING_FIGURE.match(value)
            if number:
                try:
                    summary[name] = _figure(number.group(1), kind)
                except _BadFigure as exc:
                    warnings.add(f"line {lineno}: {key}: {exc}, skipped")
        elif key == "Error":
            error = value
    mode = params.get("Transport mode", "SYNC").upper()
    payload = params.get("Message payload", "")
    result: dict[str, Any] = {
        "tool": "probe",
        "role": "client",
        "mode": mode,
        "rtt": "(RTT)" in payload,
        "message_payload_bytes": _payload_bytes(payload),
        "num_conn": _count_or(params.get("Number of connections", ""), 1),
        "delay_ms": _leading_number(params.get("Delay between messages", "NO")),
        "write": params.get("Disk write", "NO").startswith("YES"),
        "interval_s": _leading_number(params.get("Statistics interval", "")) or None,
        "duration_s": _leading_number(params.get("Test duration", "")) or None,
        "samples": samples,
    }
    for key in (
        "socket_send_buffer_bytes",
        "avg_throughput_mib_s",
        "messages",
        "bytes_sent",
        "elapsed_s",
        "server_bytes_received",
        "server_recv_buffer_bytes",
        "server_bytes_written",
        "server_fsyncs",
    ):
        result[key] = summary.get(key)
    if mode == "SYNC":
        for key in ("avg_latency_ms", "latency_p50_ms", "latency_p99_ms", "latency_max_ms"):
            if key in summary:
                result[key] = summary[key]
    if error is None and not finished:
        error = "the test did not finish (no 'Test finished.' line)"
    result["error"] = error
    return result


def _payload_bytes(text: str) -> int | None:
    match = _PAYLOAD.match(text)
    number = finite_number(match.group(1)) if match else None
    if number is None:
        return None
    assert match is not None  # a number came out of it
    factor = {"Mbyte": MIB, "Kbyte": 1024, "byte": 1}[match.group(2)]
    return int(number * factor)


def _count_or(text: str, default: int) -> int:
    number = finite_number(text.strip()) if text.strip() else None
    return default if number is None or number != int(number) else int(number)


def _leading_number(text: str) -> float:
    match = _LEADING_FIGURE.match(text)
    number = finite_number(match.group(1)) if match else None
    return number or 0.0


def _parse_server(text: str, warnings: Warnings) -> dict[str, Any]:
    listening = None
    connections: list[dict[str, Any]] = []
    requests: dict[str, dict[str, Any]] = {}
    error: str | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE_CHARS:
            warnings.long_line(lineno, len(line))
            continue
        listening = listening or READY_PATTERN.search(line)
        if line.startswith("Failed to listen on"):
            error = line.strip()
            continue
        try:
            request = _SERVER_REQUEST.search(line)
            if request:
                requests[request.group("peer")] = {
                    "mode": request.group("mode"),
                    "length": _figure(request.group("length"), int),
                    "write": request.group("write") == "YES",
                }
                continue
            done = _SERVER_DONE.search(line)
            if done:
                figures: dict[str, Any] = {
                    "bytes_received": _figure(done.group("bytes"), int),
                    "messages": _figure(done.group("messages"), int),
                    "seconds": _figure(done.group("seconds")),
                    "throughput_mib_s": _figure(done.group("rate")),
                    "recv_buffer_bytes": _figure(done.group("rcvbuf"), int),
                }
                if done.group("written") is not None:
                    figures["bytes_written"] = _figure(done.group("written"), int)
                    figures["fsyncs"] = _figure(done.group("fsyncs"), int)
                connection: dict[str, Any] = {"peer": done.group("peer")}
                connection.update(requests.pop(done.group("peer"), {}))
                connection.update(figures)
                connections.append(connection)
        except _BadFigure as exc:
            warnings.add(f"line {lineno}: {exc}, skipped")
    return {
        "tool": "probe",
        "role": "server",
        "listening": f"{listening.group('host')}:{listening.group('port')}" if listening else None,
        "connections": connections,
        "bytes_received": sum(c["bytes_received"] for c in connections),
        "error": error,
    }
