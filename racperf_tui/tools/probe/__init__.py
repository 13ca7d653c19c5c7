"""The built-in network probe: oratcptest's measurement without Java (client side + Tool).

The server is :mod:`racperf_tui.tools.probe.server` and the client (what ``racperf probe client
HOST`` runs) :mod:`racperf_tui.tools.probe.client`: each one self-contained file for python3 >=
3.6, an input file of its end's run, written into the run's directory on the node where it
runs and started there by that node's python3 (the server's docstring describes the wire
protocol). This module is the Tool for the runs machinery (``role: "server" | "client"``) and
the parsers of both ends' output.

Modes (as oratcptest's, and UDP): SYNC sends a message and waits for the server's ACK (throughput and
per-message latency); ASYNC streams (throughput only); ``rtt`` sends empty SYNC messages (the
latency is the network round trip); ``write`` asks the server to write and fsync every message
before its ACK (Data Guard SYNC redo transport: the standby writes before it acknowledges).
UDP (what Cache Fusion does: 8 KiB blocks in datagrams) sends datagram requests the server
answers, ``num_conn`` of them in flight: latency and round-trip loss per interval, after a
don't-fragment check at the path's MTU (client.py's docstring).

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
(10^6 bit/s) and, in SYNC and UDP modes when messages completed in the interval,
``latency_ms``; UDP: ``loss_pct`` (the interval's unanswered requests, % of those judged).
``Sample.t`` is the interval's end in seconds since the server was ready.

Client result (``parse_output`` of client output)::

    {"tool": "probe", "role": "client", "mode": "SYNC" | "ASYNC", "rtt": bool,
     "message_payload_bytes", "num_conn", "delay_ms", "write": bool, "interval_s",
     "duration_s", "samples": [{"time": "13:53:36", "throughput_mib_s", "latency_ms"?}],
     "socket_send_buffer_bytes", "avg_throughput_mib_s", "avg_latency_ms"?,
     "latency_p50_ms"?, "latency_p99_ms"?, "latency_max_ms"?, "messages", "bytes_sent",
     "elapsed_s", "server_bytes_received", "server_recv_buffer_bytes",
     "server_bytes_written", "server_fsyncs", "error": str | None}

(latency keys absent in ASYNC). UDP adds ``datagrams_sent``, ``datagrams_lost``, ``loss_pct``
and the MTU check's ``mtu_local``, ``mtu_remote``, ``df_probe_bytes``, ``df_probe_ok`` (bool)
and ``mtu_note`` (a sentence, naming a mismatch of the two ends' MTUs).
Server result (``parse_output`` of server output)::

    {"tool": "probe", "role": "server", "listening": "HOST:PORT" | None,
     "connections": [{"peer", "mode", "length", "write": bool, "bytes_received", "messages",
                      "seconds", "throughput_mib_s", "recv_buffer_bytes",
                      "bytes_written"?, "fsyncs"?}],
     "bytes_received", "error": str | None}
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from racperf_tui.core import units
from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.contract.tool import RUNS, WRITES, MetricSpec, PairMode, PairSpec, ToolDescription, ToolOption
from racperf_tui.core.guard.isolated_python import ISOLATED
from racperf_tui.core.units import MIB, MIB_S_PER_MBIT_S
from racperf_tui.tools.base import (
    check_choice,
    check_range,
    on_another_node,
    option_number,
    option_whole_number,
    run_briefly,
)
from racperf_tui.tools.figures import MAX_LINE_CHARS, OutputParseError, Warnings, check_finite, finite_number
from racperf_tui.tools.probe import client as probe_client
from racperf_tui.tools.probe import server as probe_server
from racperf_tui.tools.probe.client import DEFAULT_LENGTH_BYTES, ClientOptions

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

#: the server file to copy to another node (``python3 probe_server.py --port N``)
PROBE_SERVER_PATH = Path(probe_server.__file__).resolve()
#: its name in a run's directory (an input file of the server's Invocation)
SERVER_FILE_NAME = "probe_server.py"
#: the client file, likewise (``python3 probe_client.py HOST --port N ...``)
PROBE_CLIENT_PATH = Path(probe_client.__file__).resolve()
CLIENT_FILE_NAME = "probe_client.py"
#: the oldest python3 both files run on
MIN_PYTHON = (3, 6)
#: what a python says of its version, in a syntax every python answers (a python 2 too)
_PYTHON_VERSION_CODE = "import sys; sys.stdout.write('%d.%d' % sys.version_info[:2])"


def server_source() -> str:
    """The server file's text (the server Invocation's input file)."""
    return PROBE_SERVER_PATH.read_text(encoding="utf-8")


def client_source() -> str:
    """The client file's text (the client Invocation's input file)."""
    return PROBE_CLIENT_PATH.read_text(encoding="utf-8")


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
    once_option="once",
    modes=(
        PairMode("SYNC", {"mode": "SYNC", "rtt": False}),
        PairMode("ASYNC", {"mode": "ASYNC", "rtt": False}),
        PairMode("RTT", {"mode": "SYNC", "rtt": True}, latency_only=True, unused_fields=frozenset({"length"})),
        PairMode("UDP", {"mode": "UDP", "rtt": False, "write": False}, unused_fields=frozenset({"write"})),
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


_TIME = r"\((?P<time>\d{2}:\d{2}:\d{2}(?:\.\d+)?)\)"
_INTERVAL_LINE = re.compile(
    _TIME + r"\s+(?P<tput>[\d.]+)\s+Mbytes/s(?:\s+(?P<lat>[\d.]+)\s+ms)?(?:\s+(?P<loss>[\d.]+)\s+% lost)?\s*$"
)
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


# ---------------------------------------------------------------- the Tool


#: the probe's config keys (see ProbeTool.build_argv)
OPTIONS = (
    ToolOption("role", "choice", "client", "which end this run is", ("client", "server")),
    ToolOption("host", "str", "", "the server's address", end="client"),
    ToolOption("port", "count", DEFAULT_PORT, "the server's port (server: 0 picks one)"),
    ToolOption("bind", "str", "0.0.0.0", "the address the server listens on", end="server"),
    ToolOption(
        "mode",
        "choice",
        "SYNC",
        "SYNC: each message waits for the ACK; ASYNC: a stream; UDP: datagram requests answered (latency, loss, MTU)",
        ("SYNC", "ASYNC", "UDP"),
        end="client",
    ),
    ToolOption("length", "size", "8K", "message length (default 8K: a RAC block), e.g. 1M", end="client"),
    ToolOption("num_conn", "count", 1, "parallel connections (UDP: requests in flight)", end="client"),
    ToolOption("delay_ms", "duration", 0, "pause between messages", end="client"),
    ToolOption("write", "bool", False, "the server writes and fsyncs each message (SYNC redo)", end="client"),
    ToolOption("rtt", "bool", False, "empty messages: the latency is the round trip", end="client"),
    ToolOption("interval_s", "duration", 2, "seconds between live figures", end="client"),
    ToolOption("duration_s", "duration", 10, "seconds to send", end="client"),
    ToolOption("sockbuf", "size", "", "socket send buffer, e.g. 4M", end="client"),
    ToolOption("payload", "choice", "ZERO", "message contents", ("ZERO", "RANDOM"), end="client"),
    ToolOption("once", "bool", True, "the server exits after one test", end="server"),
    ToolOption(
        "write_dir",
        "path",
        "",
        "where the server writes with write (on the standby redo disk)",
        end="server",
        access=WRITES,
    ),
    ToolOption("write_file", "path", "", "one file the server writes into with write", end="server", access=WRITES),
    ToolOption("fsync", "bool", False, "the server fsyncs each written message", end="server"),
    ToolOption(
        "python", "path", "", "the python3 that runs this end's file (>= 3.6; default python3 on a node)", access=RUNS
    ),
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
    MetricSpec("loss_pct", "lost", "%", decimals=2, quantity="loss", better="lower"),
)
RESULTS = (
    MetricSpec("avg_throughput_mib_s", "throughput", "Mbit/s", divisor=MIB_S_PER_MBIT_S, quantity="throughput"),
    MetricSpec("avg_latency_ms", "latency", "ms", decimals=3, quantity="latency"),
    MetricSpec("latency_p50_ms", "latency p50", "ms", decimals=3, quantity="latency_p50", better="lower"),
    MetricSpec("latency_p99_ms", "latency p99", "ms", decimals=3, quantity="latency_p99", better="lower"),
    MetricSpec("loss_pct", "lost", "%", decimals=3, quantity="loss", better="lower"),
    MetricSpec("latency_max_ms", "latency max", "ms", decimals=3),
    MetricSpec("elapsed_s", "elapsed", "s", decimals=2),
)
DESCRIPTION = ToolDescription(
    name="probe",
    summary="oratcptest's SYNC/ASYNC measurement without Java",
    install_hint="nothing to install: the probe is part of racperf (on another node: python3 >= 3.6)",
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
)


class ProbeTool:
    """The probe as a Tool (see racperf_tui.core.contract.tool.Tool): ``role`` "client" or "server"."""

    name = "probe"
    description = DESCRIPTION
    install_hint = "nothing to install: the probe is part of racperf (on another node: python3 >= 3.6)"
    stop_grace_s = 3.0

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        """Config keys. Both ends: ``python`` (the interpreter, default this one). Server:
        ``role: "server"``, ``bind`` ("0.0.0.0"), ``port``, ``once`` (True), ``write_file``,
        ``write_dir``, ``fsync``. Client: ``host``, ``port``, ``mode``, ``length`` (bytes or
        "1M"; default 8K), ``num_conn``, ``delay_ms``, ``write``, ``rtt``, ``interval_s``, ``duration_s``,
        ``sockbuf``, ``payload``. Each end's file as racperf has it (:meth:`invocation` runs
        the run directory's copy)."""
        role = config.get("role", "client")
        check_choice("probe", "role", role, ("client", "server"))
        if role == "server":
            port = _whole(config, "port", DEFAULT_PORT)
            check_range("probe", "port", port, 0, 65535)
            argv = [
                str(config.get("python") or sys.executable),
                ISOLATED,
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
        options = client_options_from_config(config)
        argv = [
            str(config.get("python") or sys.executable),
            ISOLATED,
            "-u",
            str(PROBE_CLIENT_PATH),
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

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
        """Each end's one stdlib file (:mod:`~racperf_tui.tools.probe.server`,
        :mod:`~racperf_tui.tools.probe.client`) as an input file of the run, written into the
        run's directory on the host where it runs and started there with that host's python3
        (this interpreter here; ``python`` when set). Nothing of racperf needs to be installed
        on a node for either end."""
        argv = self.build_argv(config)
        hard_limit_s = float(self.hard_limit_s(config))
        server = config.get("role", "client") == "server"
        name, source = (SERVER_FILE_NAME, server_source()) if server else (CLIENT_FILE_NAME, client_source())
        python = str(config.get("python") or ("python3" if on_another_node(host) else sys.executable))
        place = run_dir or "<run directory>"
        # isolated: the run's directory (the file's) and the PYTHON* variables reach nothing
        argv = [python, ISOLATED, "-u", os.path.join(place, name), *argv[4:]]
        return Invocation(argv=argv, files={name: source}, hard_limit_s=hard_limit_s)

    def prepare(self, config: Mapping[str, Any], planned: Invocation, host: Host | None = None) -> None:
        """The python of either end on its host must be 3.6 or later (its file's only need);
        ValueError names the end, the host and what it has."""
        if not planned.argv:
            return
        end = "server" if config.get("role", "client") == "server" else "client"
        where = f" on {host.name}" if host is not None and on_another_node(host) else ""
        command = [planned.argv[0], ISOLATED, "-c", _PYTHON_VERSION_CODE]
        try:
            if host is not None:
                answer = host.run_briefly(command, 15.0)
                status, version, text = answer.returncode, answer.stdout.strip(), answer.text
            else:
                done = run_briefly(command, 15.0)
                status, version, text = done.returncode, done.stdout.strip(), done.stdout + done.stderr
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ValueError(f"probe: cannot run the {end}'s python {planned.argv[0]!r}{where}: {exc}") from None
        numbers = tuple(int(x) for x in version.split(".") if x.isdigit())
        if status != 0 or len(numbers) != 2:
            raise ValueError(
                f"probe: {planned.argv[0]!r}{where} is not a python3 that racperf can use: "
                f"{(text.strip() or f'exit status {status}')[:200]}"
            )
        if numbers < MIN_PYTHON:
            raise ValueError(
                f"probe: the {end} needs python3 >= {'.'.join(map(str, MIN_PYTHON))}; "
                f"{planned.argv[0]}{where} is {version}"
            )

    def tool_version(self, argv: list[str], host: Host | None = None) -> str:
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
        if result.get("mode") == "UDP" and result.get("datagrams_sent"):
            # every request lost is a measurement of the path (its loss and MTU check say so)
            return True, "ok" if result.get("messages") else "ok: every UDP request was lost"
        if not result.get("messages"):
            return False, "the probe moved no messages"
        return True, "ok"

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        duration_s = float(config.get("duration_s", 10) or 10)
        return duration_s + (90.0 if config.get("role") == "server" else 30.0)


TOOL = ProbeTool()


def _whole(config: Mapping[str, Any], key: str, default: int) -> int:
    value = option_whole_number("probe", key, config.get(key, default))
    return default if value is None else value


def _number(config: Mapping[str, Any], key: str, default: float) -> float:
    value = option_number("probe", key, config.get(key, default))
    return default if value is None else value


def _size(config: Mapping[str, Any], key: str, default: int) -> int:
    try:
        return units.size_bytes(config.get(key) or default, key)
    except ValueError as exc:
        raise ValueError(f"probe: {exc}") from None


def client_options_from_config(config: Mapping[str, Any]) -> ClientOptions:
    """A validated ClientOptions from a run config (ValueError says which key is wrong)."""
    host = str(config.get("host") or "").strip()
    if not host:
        raise ValueError("probe: host must be set: the client needs the probe server's address")
    options = ClientOptions(
        host=host,
        port=_whole(config, "port", DEFAULT_PORT),
        mode=str(config.get("mode", "SYNC")),
        length_bytes=_size(config, "length", DEFAULT_LENGTH_BYTES),
        num_conn=_whole(config, "num_conn", 1),
        delay_ms=_number(config, "delay_ms", 0.0),
        write=bool(config.get("write", False)),
        rtt=bool(config.get("rtt", False)),
        interval_s=_number(config, "interval_s", 2.0),
        duration_s=_number(config, "duration_s", 10.0),
        sockbuf_bytes=_size(config, "sockbuf", 0),
        payload=str(config.get("payload", "ZERO")),
    )
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
    if match.group("loss") is not None:
        loss_pct = finite_number(match.group("loss"))
        if loss_pct is None or loss_pct > 100:
            return None
        metrics["loss_pct"] = loss_pct
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
    "Datagrams sent": ("datagrams_sent", int),
    "Datagrams lost": ("datagrams_lost", int),
    "Loss": ("loss_pct", float),
    "MTU here": ("mtu_local", int),
    "MTU at the server": ("mtu_remote", int),
    "Path MTU probe": ("df_probe_bytes", int),
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
            for key in ("latency_ms", "loss_pct"):
                if key in metrics:
                    sample[key] = metrics[key]
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
        elif key == "MTU check":
            summary["mtu_note"] = value
        if finished and key == "Path MTU probe":
            summary["df_probe_ok"] = value.endswith("arrived")
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
    if mode in ("SYNC", "UDP"):
        for key in ("avg_latency_ms", "latency_p50_ms", "latency_p99_ms", "latency_max_ms"):
            if key in summary:
                result[key] = summary[key]
    if mode == "UDP":
        for key in UDP_RESULT_KEYS:
            result[key] = summary.get(key)
    if error is None and not finished:
        error = "the test did not finish (no 'Test finished.' line)"
    result["error"] = error
    return result


#: what a UDP client's result adds (module docstring)
UDP_RESULT_KEYS = (
    "datagrams_sent",
    "datagrams_lost",
    "loss_pct",
    "mtu_local",
    "mtu_remote",
    "df_probe_bytes",
    "df_probe_ok",
    "mtu_note",
)


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
