"""The probe's client: the measuring code of ``racperf probe client HOST`` (oratcptest's
SYNC / ASYNC / rtt / write test against :mod:`racperf_tui.tools.probe_server`), writing
oratcptest-shaped lines that :func:`racperf_tui.tools.probe.parse_output` reads back.

The wire protocol is in probe_server's docstring; the output and result shapes in
:mod:`racperf_tui.tools.probe`'s.
"""

from __future__ import annotations

import json
import math
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from racperf_tui.core import units
from racperf_tui.core.units import MIB
from racperf_tui.tools import probe_server
from racperf_tui.tools.base import check_choice, check_range

#: ASYNC send chunk: big enough that per-call Python overhead vanishes next to the copy,
#: small enough that the end of the test is not delayed on a slow link
ASYNC_CHUNK_BYTES = 1 * MIB
#: how long the client waits for each server's DONE line after its EOF
DONE_TIMEOUT_S = 10.0


@dataclass
class ClientOptions:
    """One probe test, seen from the client."""

    host: str
    port: int = probe_server.DEFAULT_PORT
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
        """ValueError naming the option that is wrong (by its key in the probe's config)."""
        self.mode = self.mode.upper()
        check_choice("probe", "mode", self.mode, ("SYNC", "ASYNC"))
        if self.rtt and self.mode != "SYNC":
            raise ValueError("probe: rtt needs SYNC mode (a round trip is a message and its ACK)")
        if self.rtt:
            self.length_bytes = 0
        check_range("probe", "length", self.length_bytes, 0, probe_server.MAX_MESSAGE_BYTES, "bytes")
        if self.length_bytes == 0 and not self.rtt:
            raise ValueError("probe: length 0 means an RTT test: use rtt instead")
        check_range("probe", "num_conn", self.num_conn, 1, 256)
        check_range("probe", "interval_s", self.interval_s, 0.1, 3600, "s")
        check_range("probe", "duration_s", self.duration_s, 0.1, 7 * 86400, "s")
        if self.delay_ms < 0:
            raise ValueError(f"probe: delay_ms must be >= 0, got {self.delay_ms:g}")
        check_choice("probe", "payload", self.payload.upper(), ("ZERO", "RANDOM"))
        check_range("probe", "port", self.port, 1, 65535)


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


def parse_size(text: str | int) -> int:
    """ "1M" / "8k" / "512" / "1MiB" -> bytes (1024-based, as oratcptest's -length)."""
    return units.size_bytes(text, "size")
