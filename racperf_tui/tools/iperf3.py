"""iperf3: server and client argv, live interval lines -> Samples, final output -> result.

Both ends are started by racperf: the server first (``iperf3 -s -p PORT -1``: one test, then
exit), the client once the server printed ``Server listening on`` (see :data:`READY_PATTERN`).

Live output. iperf3 >= 3.17 has ``--json-stream`` (one JSON event per line: ``start``,
``interval``, ``end``, ``error``); with it the live samples and the precise final figures come
from the same stream. Older versions (3.12 here) get ``--forceflush -V``: the text interval lines
arrive as they are printed, and the text summary gives the final figures (``-V`` adds the CPU
line). ``-J`` alone prints nothing until the end, so it is only used for saved files.

Units. iperf3's text prints bytes with 1024-based prefixes (``MBytes`` = 2^20 bytes) and rates
with 1000-based prefixes (``Mbits/sec`` = 10^6 bit/s); everything here is converted to bytes and
``*_mbit_s`` = 10^6 bit/s.

Sample metrics (one Sample per interval; with parallel streams one per ``[SUM]`` line):
``throughput_mbit_s``, ``bytes``, and when the line has them ``retransmits`` (TCP sender),
``cwnd_kib`` (TCP sender, one stream), ``packets`` (UDP), ``jitter_ms``, ``lost_packets`` and
``lost_pct`` (UDP receiver side). ``Sample.t`` is the interval's end in seconds since the test
started; ``extra`` holds ``{"interval_start_s": ...}``.

Result (``parse_result`` / ``parse_output``, from JSON, json-stream or text output)::

    {"tool": "iperf3",
     "version": "iperf 3.12" | None,      # None in plain text output
     "role": "client" | "server",
     "protocol": "TCP" | "UDP",
     "streams": int,                      # parallel streams (-P)
     "reverse": bool,                     # -R: the server sent
     "duration_s": float,                 # of the summary (sender side)
     "sent_bytes": int | None, "received_bytes": int | None,
     "sent_mbit_s": float | None,         # sender's summary
     "received_mbit_s": float | None,     # receiver's summary: what got through
     "retransmits": int | None,           # TCP sender; None for UDP or when unknown
     "jitter_ms": float | None,           # UDP receiver
     "lost_packets": int | None, "packets": int | None, "lost_pct": float | None,  # UDP
     "cpu_host_pct": float | None,        # this end's CPU (JSON, or text with -V)
     "cpu_remote_pct": float | None,
     "intervals": [{"start_s", "end_s", "bytes", "throughput_mbit_s", and when known
                    "retransmits", "packets", "jitter_ms", "lost_packets", "lost_pct"}],
     "error": str | None}                 # iperf3's own error message
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.contract.tool import (
    RUNS,
    MetricSpec,
    PairMode,
    PairSpec,
    ProgramField,
    ToolDescription,
    ToolOption,
)
from racperf_tui.tools.base import (
    check_choice,
    check_range,
    on_another_node,
    option_number,
    option_whole_number,
    program_output,
    run_briefly,
)
from racperf_tui.tools.figures import (
    MAX_LINE_CHARS,
    OutputParseError,
    Warnings,
    check_finite,
    count,
    figure,
    finite_number,
    load_json,
    optional_count,
    optional_figure,
    raw_decode,
    strict_decoder,
)

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

#: the server line after which a client may connect
READY_PATTERN = re.compile(r"Server listening on")
#: what iperf3 prints when the port is taken
PORT_IN_USE_PATTERN = re.compile(r"unable to start listener for connections: Address already in use")

DEFAULT_PORT = 5201

#: How both ends run (read by racperf_tui.orchestration.pair_runs).
#: the target rate of the network panel's UDP test (iperf3's own default of 1 Mbit/s measures
#: nothing); what arrives is capped by it, so it is no link-capacity figure
UDP_TEST_BITRATE = "1G"
PAIR = PairSpec(
    ready_pattern=READY_PATTERN,
    failure_pattern=PORT_IN_USE_PATTERN,
    default_port=DEFAULT_PORT,
    once_option="one_off",
    modes=(
        PairMode("TCP", {"udp": False, "reverse": False}),
        PairMode("UDP", {"udp": True, "bitrate": UDP_TEST_BITRATE}, rate_cap=UDP_TEST_BITRATE),
        PairMode("TCP reverse", {"udp": False, "reverse": True}),
    ),
    client_fields={
        "host": "host",
        "port": "port",
        "duration_s": "duration_s",
        "interval_s": "interval_s",
        "length": "length",
        "connections": "parallel",
    },
    server_fields={"host": "bind", "port": "port", "duration_s": "duration_s"},
    program=ProgramField("iperf3 program", "iperf3 on PATH", "iperf3.binary", (("binary", ""),)),
)

_BYTE_PREFIX = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_RATE_PREFIX = {"": 1e-6, "K": 1e-3, "M": 1.0, "G": 1e3, "T": 1e6}  # -> Mbit/s

_INTERVAL_LINE = re.compile(
    r"^\[\s*(?P<id>\d+|SUM)\]\s+(?P<start>\d+\.\d+)-\s*(?P<end>\d+\.\d+)\s+sec\s+"
    r"(?P<xfer>[\d.]+)\s+(?P<xunit>[KMGT]?)Bytes\s+(?P<rate>[\d.]+)\s+(?P<runit>[KMGT]?)bits/sec"
    r"(?P<rest>.*)$"
)
_UDP_RECEIVER_REST = re.compile(
    r"^\s+(?P<jitter>[\d.]+)\s+ms\s+(?P<lost>-?\d+)/(?P<total>\d+)\s+\((?P<pct>[-+\d.e]+|nan|-?inf)%\)"
)
_INTEGER_REST = re.compile(r"^\s+(?P<n>-?\d+)(?:\s+(?P<cwnd>[\d.]+)\s+(?P<cwnd_unit>[KMG]?)Bytes)?")
#: matched at the start of the line only: searched, ``.*`` would rescan the rest of the line
#: from every "CPU Utilization" in it (quadratic on a line of them)
_CPU_LINE = re.compile(
    r"^CPU Utilization: local/(?:sender|receiver) (?P<local>[\d.]+)%.*remote/(?:sender|receiver) "
    r"(?P<remote>[\d.]+)%"
)
_STARTING_TEST = re.compile(r"Starting Test: protocol: (?P<proto>\w+), (?P<streams>\d+) streams")
_ERROR_LINE = re.compile(r"^iperf3: (?:error - )?(?P<msg>.+)$")
_VERSION_LINE = re.compile(r"^iperf \d+\.\d+")
_SERVER_TEST_START = re.compile(r"^Server listening on", re.MULTILINE)


#: iperf3's config keys (see Iperf3Tool.build_argv)
OPTIONS = (
    ToolOption("role", "choice", "client", "which end this run is", ("client", "server")),
    ToolOption("host", "str", "", "the server's address", end="client"),
    ToolOption("port", "count", DEFAULT_PORT, "the server's port"),
    ToolOption("bind", "str", "", "the local address to use (-B)"),
    ToolOption("one_off", "bool", True, "the server exits after one test (-1)", end="server"),
    ToolOption("duration_s", "duration", 10, "seconds to send (-t)", end="client"),
    ToolOption("interval_s", "duration", 1, "seconds between live figures (-i)", end="client"),
    ToolOption("udp", "bool", False, "UDP instead of TCP (-u)", end="client"),
    ToolOption("bitrate", "str", "", "target rate, e.g. 100M (-b; UDP's default is 1M)", end="client"),
    ToolOption("parallel", "count", 1, "parallel streams (-P)", end="client"),
    ToolOption("reverse", "bool", False, "the server sends (-R)", end="client"),
    ToolOption("length", "size", "", "buffer length, e.g. 128K (-l)", end="client"),
    ToolOption("window", "size", "", "socket buffer, e.g. 4M (-w)", end="client"),
    ToolOption("json_stream", "str", "auto", "true / false / auto: --json-stream where iperf3 has it", end="client"),
    ToolOption("verbose", "bool", True, "-V: adds the CPU line", end="client"),
    ToolOption("binary", "path", "iperf3", "the iperf3 program", access=RUNS),
)
METRICS = (
    MetricSpec("throughput_mbit_s", "throughput", "Mbit/s", chart="throughput", quantity="throughput"),
    MetricSpec("retransmits", "retransmits", "", decimals=0, chart="retransmits"),
    MetricSpec("cwnd_kib", "cwnd", "KiB", decimals=0, chart="cwnd"),
    MetricSpec("jitter_ms", "jitter", "ms", decimals=3, chart="jitter"),
    MetricSpec("lost_pct", "lost", "%", decimals=2, chart="lost"),
)
RESULTS = (
    MetricSpec("received_mbit_s", "received", "Mbit/s", quantity="throughput"),
    MetricSpec("sent_mbit_s", "sent", "Mbit/s"),
    MetricSpec("retransmits", "retransmits", "", decimals=0, better="lower"),
    MetricSpec("jitter_ms", "jitter", "ms", decimals=3),
    MetricSpec("lost_pct", "lost", "%", decimals=2, better="lower"),
    MetricSpec("duration_s", "duration", "s"),
    MetricSpec("cpu_host_pct", "CPU here", "%", better="lower"),
    MetricSpec("cpu_remote_pct", "CPU remote", "%", better="lower"),
)
DESCRIPTION = ToolDescription(
    name="iperf3",
    summary="network throughput between two ends",
    install_hint="apt-get install iperf3 (Debian/Ubuntu) or dnf install iperf3 (RHEL/Oracle Linux)",
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
)


class Iperf3Tool:
    """The iperf3 Tool (see racperf_tui.core.contract.tool.Tool)."""

    name = "iperf3"
    description = DESCRIPTION
    install_hint = "apt-get install iperf3 (Debian/Ubuntu) or dnf install iperf3 (RHEL/Oracle Linux)"

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        """Argv for a server (``role: server``) or a client (default).

        Config keys: ``role`` ("client" | "server"), ``binary`` ("iperf3"), ``host`` (client:
        required), ``port`` (5201), ``bind``, ``one_off`` (server: exit after one test,
        default True), ``duration_s`` (10), ``interval_s`` (1), ``udp`` (False), ``bitrate``
        ("100M"; UDP default is iperf3's 1M), ``parallel`` (1), ``reverse`` (False),
        ``length`` (-l, e.g. "128K"), ``window`` (-w), ``json_stream`` (True / False /
        "auto", default "auto": used when the installed iperf3 has it), ``verbose`` (True:
        -V, adds the CPU line to text output).
        """
        role = config.get("role", "client")
        binary = str(config.get("binary") or "iperf3")
        port = _int_in_range(config, "port", DEFAULT_PORT, 1, 65535)
        if role == "server":
            argv = [binary, "-s", "-p", str(port)]
            if config.get("bind"):
                argv += ["-B", str(config["bind"])]
            if config.get("one_off", True):
                argv.append("-1")
            argv.append("--forceflush")
            return argv
        if role != "client":
            check_choice("iperf3", "role", role, ("client", "server"))
        host = str(config.get("host") or "").strip()
        if not host:
            raise ValueError("iperf3: host must be set: the client needs the server's address")
        duration_s = _number_in_range(config, "duration_s", 10, 1, 86400)
        interval_s = _number_in_range(config, "interval_s", 1, 0.1, 60)
        parallel = _int_in_range(config, "parallel", 1, 1, 128)
        argv = [binary, "-c", host, "-p", str(port), "-t", _fmt_number(duration_s), "-i", _fmt_number(interval_s)]
        if config.get("bind"):
            argv += ["-B", str(config["bind"])]
        if config.get("udp"):
            argv.append("-u")
        if config.get("bitrate") not in (None, ""):
            argv += ["-b", _checked_size(config["bitrate"], "bitrate")]
        if parallel > 1:
            argv += ["-P", str(parallel)]
        if config.get("reverse"):
            argv.append("-R")
        if config.get("length") not in (None, ""):
            argv += ["-l", _checked_size(config["length"], "length")]
        if config.get("window") not in (None, ""):
            argv += ["-w", _checked_size(config["window"], "window")]
        if self._use_json_stream(config, binary):
            argv += ["-J", "--json-stream"]
        else:
            argv.append("--forceflush")
            if config.get("verbose", True):
                argv.append("-V")
        return argv

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
        """The run on ``host``: ``json_stream: auto`` is decided by the iperf3 there (another
        node's build, not this machine's)."""
        binary = str(config.get("binary") or "iperf3")
        if config.get("json_stream", "auto") == "auto" and on_another_node(host):
            config = dict(config, json_stream=supports_json_stream_on(host, binary))
        return Invocation(argv=self.build_argv(config), hard_limit_s=float(self.hard_limit_s(config)))

    @staticmethod
    def _use_json_stream(config: Mapping[str, Any], binary: str) -> bool:
        wanted = config.get("json_stream", "auto")
        if wanted == "auto":
            return supports_json_stream(binary)
        return bool(wanted)

    def stream_parser(self, config: Mapping[str, Any]) -> Iperf3StreamParser:
        """A fresh parser for one run's output (text or json-stream, detected per line)."""
        return Iperf3StreamParser(parallel=int(config.get("parallel", 1) or 1))

    def parse_result(self, output: str) -> dict[str, Any]:
        """The whole output of a finished run -> result dict (module docstring)."""
        return parse_output(output)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        """iperf3 -J may exit 0 after "unable to connect": judge by the error and the bytes."""
        if result is None:
            return False, f"no iperf3 output could be parsed (exit status {exit_status})"
        if result.get("error"):
            return False, f"iperf3: {result['error']}"
        if exit_status != 0:
            return False, f"iperf3 exited with status {exit_status}"
        moved = (result.get("sent_bytes") or 0) + (result.get("received_bytes") or 0)
        if moved <= 0:
            return False, "iperf3 moved no data"
        return True, "ok"

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        """Test duration plus room for connecting and the summary exchange."""
        duration_s = float(config.get("duration_s", 10) or 10)
        slack_s = 60.0 if config.get("role") == "server" else 30.0
        return duration_s + slack_s


TOOL = Iperf3Tool()


# ---------------------------------------------------------------- version detection


@functools.lru_cache(maxsize=8)
def detect_version(binary: str = "iperf3") -> tuple[int, int] | None:
    """(major, minor) of the installed iperf3, None when it is missing or unparseable."""
    path = shutil.which(binary)
    if path is None:
        return None
    try:
        out = run_briefly([path, "--version"], 5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"iperf (\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else None


@functools.lru_cache(maxsize=8)
def supports_json_stream(binary: str = "iperf3") -> bool:
    """True when this iperf3 has ``--json-stream`` (3.17 and later): asked via ``--help``."""
    path = shutil.which(binary)
    if path is None:
        return False
    try:
        proc = run_briefly([path, "--help"], 5)
    except (OSError, subprocess.SubprocessError):
        return False
    if "--json-stream" in proc.stdout + proc.stderr:
        return True
    version = detect_version(binary)
    return version is not None and version >= (3, 17)


def supports_json_stream_on(host: Host, binary: str = "iperf3") -> bool:
    """:func:`supports_json_stream` for the iperf3 of another node (asked there)."""
    if "--json-stream" in (program_output([binary, "--help"], host=host) or ""):
        return True
    match = re.search(r"iperf (\d+)\.(\d+)", program_output([binary, "--version"], host=host) or "")
    return match is not None and (int(match.group(1)), int(match.group(2))) >= (3, 17)


# ---------------------------------------------------------------- live stream


class Iperf3StreamParser:
    """Text interval lines or json-stream ``interval`` events -> Samples.

    With several streams only the ``[SUM]`` lines become Samples (the number of streams is
    learnt from the ``connected to`` lines, ``parallel`` is the fallback). Summary lines
    (ending in ``sender``/``receiver``) and zero-length trailing intervals are not samples.
    """

    def __init__(self, parallel: int = 1) -> None:
        self.streams = parallel
        self._connected = 0
        self._columns = ""

    def feed(self, line: str) -> list[Sample]:
        stripped = line.strip()
        if stripped.startswith("{") and '"event"' in stripped:
            return self._feed_json_event(stripped)
        if len(line) > MAX_LINE_CHARS:
            return []
        if line.startswith("Server listening on"):
            self._connected = 0  # a new test on a long-running server
            return []
        if " connected to " in line and line.lstrip().startswith("["):
            self._connected += 1
            self.streams = max(self.streams, self._connected)
            return []
        if line.startswith("[ ID]"):
            self._columns = line
            return []
        interval = parse_interval_line(line, self._columns)
        if interval is None or interval.get("side"):
            return []
        if interval["end_s"] <= interval["start_s"]:
            return []
        if self.streams > 1 and interval["id"] != "SUM":
            return []
        return [_interval_sample(interval)]

    def _feed_json_event(self, text: str) -> list[Sample]:
        try:
            event = load_json(text, "json-stream event")
        except ValueError:
            return []
        data = event.get("data") if isinstance(event, dict) and event.get("event") == "interval" else None
        summary = data.get("sum") if isinstance(data, dict) else None
        if not isinstance(summary, dict) or not summary:
            return []
        try:
            interval = _json_interval(summary, "sum")
        except OutputParseError:
            return []  # an impossible figure: no sample rather than a wrong one
        if interval["end_s"] <= interval["start_s"] or summary.get("omitted"):
            return []
        return [_interval_sample(interval)]

    def finish(self) -> list[Sample]:
        return []


def _interval_sample(interval: Mapping[str, Any]) -> Sample:
    metrics = {
        k: float(v)
        for k, v in interval.items()
        if k not in ("id", "start_s", "end_s", "side") and isinstance(v, (int, float))
    }
    return Sample(t=float(interval["end_s"]), metrics=metrics, extra={"interval_start_s": float(interval["start_s"])})


def parse_interval_line(line: str, columns: str = "") -> dict[str, Any] | None:
    """One text interval or summary line -> dict, None when it is not one.

    ``columns`` is the last ``[ ID] Interval ...`` header seen: it says whether a trailing
    integer is ``Retr`` (TCP) or ``Total Datagrams`` (UDP sender). Keys: ``id`` ("5", "SUM"),
    ``start_s``, ``end_s``, ``bytes``, ``throughput_mbit_s``, ``side`` ("sender",
    "receiver" or None for interval lines) and the optional column figures.
    """
    match = _INTERVAL_LINE.match(line.rstrip())
    if match is None:
        return None
    rest = match.group("rest")
    side = None
    tail = rest.rstrip()
    for word in ("sender", "receiver"):
        if tail.endswith(word) and tail[: -len(word)][-1:].isspace():
            side = word
            rest = tail[: -len(word) - 1]
            break
    maybe = [finite_number(match.group(k)) for k in ("start", "end", "xfer", "rate")]
    figures = [f for f in maybe if f is not None]
    if len(figures) != len(maybe):
        return None  # "1.2.3 MBytes", a rate of 400 digits: no interval line iperf3 prints
    start, end, xfer, rate = figures
    interval: dict[str, Any] = {
        "id": match.group("id"),
        "start_s": start,
        "end_s": end,
        "bytes": int(round(xfer * _BYTE_PREFIX[match.group("xunit")])),
        "throughput_mbit_s": rate * _RATE_PREFIX[match.group("runit")],
        "side": side,
    }
    udp = _UDP_RECEIVER_REST.match(rest)
    if udp:
        jitter = finite_number(udp.group("jitter"))
        lost = finite_number(udp.group("lost"), negative_ok=True)  # reordering can make it < 0
        total = finite_number(udp.group("total"))
        if jitter is None or lost is None or total is None:
            return None
        interval["jitter_ms"] = jitter
        interval["lost_packets"] = int(lost)
        interval["packets"] = int(total)
        pct = finite_number(udp.group("pct"), negative_ok=True)
        if pct is not None:  # iperf3 prints nan% with zero datagrams
            interval["lost_pct"] = pct
        return interval
    number = _INTEGER_REST.match(rest)
    if number:
        n = finite_number(number.group("n"), negative_ok=True)
        if n is None:
            return None
        if "Datagrams" in columns:
            interval["packets"] = int(n)
        else:
            interval["retransmits"] = int(n)
            cwnd = finite_number(number.group("cwnd")) if number.group("cwnd") else None
            if cwnd is not None:
                interval["cwnd_kib"] = cwnd * _BYTE_PREFIX[number.group("cwnd_unit")] / 1024
    return interval


# ---------------------------------------------------------------- final result


def parse_output(text: str) -> dict[str, Any]:
    """Saved iperf3 output (JSON from -J, json-stream, or text) -> result (module docstring).

    OutputParseError (a ValueError) names what is missing or impossible, and where, when the
    text holds no usable report; skipped lines and intervals are named in ``"warnings"``.
    """
    stripped = text.lstrip()
    if not stripped:
        raise OutputParseError("empty iperf3 output")
    warnings = Warnings()
    if stripped.startswith("{"):
        first_line = stripped.split("\n", 1)[0]
        if '"event"' in first_line:
            result = _from_json_stream(stripped, warnings)
        else:
            result = _from_json(_last_json_object(stripped), warnings)
    else:
        result = _from_text(text, warnings)
    warnings.into(result)
    check_finite(result, "iperf3 output")
    return result


def _last_json_object(text: str) -> dict[str, Any]:
    """A server run with -J prints one object per test, back to back: keep the last."""
    decoder = strict_decoder()
    pos, found = 0, None
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        try:
            found, pos = raw_decode(decoder, text, pos)
        except ValueError as exc:
            if found is not None:
                break
            raise OutputParseError(f"iperf3 JSON output is not valid JSON: {exc}") from None
    if not isinstance(found, dict):
        raise OutputParseError("iperf3 JSON output holds no object")
    return found


def _from_json_stream(text: str, warnings: Warnings) -> dict[str, Any]:
    """Rebuild the -J document from json-stream events, then read it like -J output."""
    document: dict[str, Any] = {"start": {}, "intervals": [], "end": {}}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = load_json(line, "it")
        except OutputParseError as exc:
            raise OutputParseError(f"iperf3 json-stream line {number} is not JSON: {line[:80]!r} ({exc})") from None
        if not isinstance(event, dict):
            raise OutputParseError(f"iperf3 json-stream line {number} is not an event object: {line[:80]!r}")
        kind, data = event.get("event"), event.get("data")
        if kind == "start":
            document["start"] = data or {}
        elif kind == "interval":
            document["intervals"].append(data or {})
        elif kind == "end":
            document["end"] = data or {}
        elif kind == "error":
            document["error"] = data
    return _from_json(document, warnings)


def _json_interval(summary: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An interval or summary object of iperf3's JSON; OutputParseError names an impossible field."""
    interval: dict[str, Any] = {
        "start_s": figure(summary.get("start", 0.0), f"{where}.start"),
        "end_s": figure(summary.get("end", 0.0), f"{where}.end"),
        "bytes": count(summary.get("bytes", 0), f"{where}.bytes"),
        "throughput_mbit_s": figure(summary.get("bits_per_second", 0.0), f"{where}.bits_per_second") / 1e6,
    }
    for source, target in (
        ("retransmits", "retransmits"),
        ("packets", "packets"),
        ("jitter_ms", "jitter_ms"),
        ("lost_packets", "lost_packets"),
        ("lost_percent", "lost_pct"),
    ):
        if source in summary and summary[source] is not None:
            # lost_*: iperf3 counts reordered datagrams as lost then found: can go below 0
            interval[target] = figure(summary[source], f"{where}.{source}", negative_ok=source.startswith("lost"))
    return interval


def _section(doc: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    """A sub-object of iperf3's JSON ({} when absent); OutputParseError when it is no object."""
    value = doc.get(key)
    if value is None or value == [] or value == "":
        return {}
    if not isinstance(value, dict):
        raise OutputParseError(f"iperf3 JSON: {where}{key} is {type(value).__name__}, not an object")
    return value


def _from_json(doc: Mapping[str, Any], warnings: Warnings) -> dict[str, Any]:
    start = _section(doc, "start", "")
    end = _section(doc, "end", "")
    test = _section(start, "test_start", "start.")
    protocol = test.get("protocol") if isinstance(test.get("protocol"), str) else None
    protocol = protocol or ("UDP" if _json_is_udp(end) else "TCP")
    sent_key, received_key = "end.sum_sent", "end.sum_received"
    sent = _section(end, "sum_sent", "end.")
    received = _section(end, "sum_received", "end.")
    if protocol == "UDP":
        # before 3.?? UDP had only "sum", seen from the receiver; 3.12 has all three
        udp_sum = _section(end, "sum", "end.")
        if not sent:
            sent, sent_key = udp_sum, "end.sum"
        if not received:
            received, received_key = udp_sum, "end.sum"
    cpu = _section(end, "cpu_utilization_percent", "end.")
    error = doc.get("error")
    if error is not None and not isinstance(error, str):
        error = f"iperf3 reported an error that is not text ({type(error).__name__})"
    if not start and not end and error is None:
        raise OutputParseError("iperf3 JSON has neither 'start' nor 'end' (not iperf3 -J output?)")
    connected = start.get("connected")
    streams = test.get("num_streams")
    if streams:
        streams = count(streams, "start.test_start.num_streams")
    result = _empty_result()
    version = start.get("version")
    duration = sent.get("seconds") or received.get("seconds")
    result.update(
        {
            "version": version if isinstance(version, str) else None,
            "role": "server" if "accepted_connection" in start else "client",
            "protocol": protocol,
            "streams": streams or (len(connected) if isinstance(connected, list) else 0) or 1,
            "reverse": bool(test.get("reverse", 0)),
            "duration_s": optional_figure(duration, f"{sent_key if sent.get('seconds') else received_key}.seconds"),
            "sent_bytes": optional_count(sent.get("bytes"), f"{sent_key}.bytes"),
            "received_bytes": optional_count(received.get("bytes"), f"{received_key}.bytes"),
            "sent_mbit_s": _mbit_or_none(sent.get("bits_per_second"), f"{sent_key}.bits_per_second"),
            "received_mbit_s": _mbit_or_none(received.get("bits_per_second"), f"{received_key}.bits_per_second"),
            "cpu_host_pct": optional_figure(cpu.get("host_total"), "end.cpu_utilization_percent.host_total"),
            "cpu_remote_pct": optional_figure(cpu.get("remote_total"), "end.cpu_utilization_percent.remote_total"),
            "intervals": _json_intervals(doc.get("intervals"), warnings),
            "error": error,
        }
    )
    if protocol == "TCP":
        result["retransmits"] = optional_count(sent.get("retransmits"), f"{sent_key}.retransmits")
    else:
        result["jitter_ms"] = optional_figure(received.get("jitter_ms"), f"{received_key}.jitter_ms")
        result["lost_packets"] = optional_count(
            received.get("lost_packets"), f"{received_key}.lost_packets", negative_ok=True
        )
        result["packets"] = optional_count(received.get("packets"), f"{received_key}.packets")
        result["lost_pct"] = optional_figure(
            received.get("lost_percent"), f"{received_key}.lost_percent", negative_ok=True
        )
    if not sent and not received and not error:
        result["error"] = "iperf3 JSON has no end summary (the test did not finish)"
    return result


def _json_intervals(intervals: Any, warnings: Warnings) -> list[dict[str, Any]]:
    """The "intervals" list -> interval dicts; one with an impossible figure is skipped (warning)."""
    out: list[dict[str, Any]] = []
    for index, item in enumerate(intervals if isinstance(intervals, list) else []):
        summary = item.get("sum") if isinstance(item, dict) else None
        if not summary:
            continue
        if not isinstance(summary, dict):
            warnings.add(f"intervals[{index}].sum is not an object, skipped")
            continue
        try:
            out.append(_json_interval(summary, f"intervals[{index}].sum"))
        except OutputParseError as exc:
            warnings.add(f"{exc}; interval skipped")
    return out


def _json_is_udp(end: Mapping[str, Any]) -> bool:
    streams = end.get("streams")
    return isinstance(streams, list) and bool(streams) and isinstance(streams[0], dict) and "udp" in streams[0]


def _from_text(text: str, warnings: Warnings) -> dict[str, Any]:
    """Text output; a server's log of several tests yields its last finished test."""
    starts = [m.start() for m in _SERVER_TEST_START.finditer(text)]
    if len(starts) <= 1:
        return _from_text_one_test(text, warnings)
    segments = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    results = []
    first_line = text.count("\n", 0, starts[0]) + 1
    for segment in segments:
        try:
            results.append(_from_text_one_test(segment, warnings, first_line))
        except ValueError:
            pass
        first_line += segment.count("\n")
    finished = [r for r in results if r["sent_bytes"] is not None or r["received_bytes"] is not None]
    if finished:
        last = finished[-1]
        if last["error"] and "interrupt" in last["error"]:
            last["error"] = None  # the server was stopped after the test, as servers are
        return last
    if results:
        return results[-1]
    raise OutputParseError("no iperf3 output found (no 'Connecting to host', interval or summary lines)")


def _from_text_one_test(text: str, warnings: Warnings, first_line: int = 1) -> dict[str, Any]:
    result = _empty_result()
    columns = ""
    connected = 0
    intervals: list[dict[str, Any]] = []
    summaries: dict[tuple[str, str], dict[str, Any]] = {}
    seen_anything = False
    for lineno, line in enumerate(text.splitlines(), first_line):
        if len(line) > MAX_LINE_CHARS:
            warnings.long_line(lineno, len(line))
            continue
        if _VERSION_LINE.match(line):
            result["version"] = line.strip()
            continue
        if line.startswith("Connecting to host"):
            result["role"] = "client"
            seen_anything = True
            continue
        if line.startswith("Server listening on") or line.startswith("Accepted connection"):
            result["role"] = result["role"] or "server"
            seen_anything = True
            continue
        if line.startswith("Reverse mode"):
            result["reverse"] = True
            continue
        if " connected to " in line and line.lstrip().startswith("["):
            connected += 1
            continue
        if line.startswith("[ ID]"):
            columns = line
            if "Datagrams" in line:
                result["protocol"] = "UDP"
            continue
        starting = _STARTING_TEST.search(line)
        if starting:
            streams = finite_number(starting.group("streams"))
            if streams is None:
                warnings.add(f"line {lineno}: {len(starting.group('streams'))}-digit stream count, skipped")
                continue
            result["protocol"] = starting.group("proto")
            result["streams"] = int(streams)
            continue
        cpu = _CPU_LINE.match(line)
        if cpu:
            local, remote = finite_number(cpu.group("local")), finite_number(cpu.group("remote"))
            if local is None or remote is None:
                warnings.add(f"line {lineno}: CPU line with an impossible figure, skipped")
                continue
            result["cpu_host_pct"], result["cpu_remote_pct"] = local, remote
            continue
        error = _ERROR_LINE.match(line.strip())
        if error and "exiting" not in error.group("msg"):
            result["error"] = error.group("msg")
            seen_anything = True
            continue
        interval = parse_interval_line(line, columns)
        if interval is None:
            if _INTERVAL_LINE.match(line.rstrip()):
                warnings.add(f"line {lineno}: interval line with an impossible figure, skipped: {line.strip()[:60]!r}")
            continue
        seen_anything = True
        if interval["side"]:
            summaries[(interval["id"], interval["side"])] = interval
        elif interval["end_s"] > interval["start_s"]:
            intervals.append(interval)
    if not seen_anything:
        raise OutputParseError("no iperf3 output found (no 'Connecting to host', interval or summary lines)")
    streams = max(int(result["streams"] or 1), connected, 1)
    result["streams"] = streams
    summary_id = "SUM" if streams > 1 else None
    picked = [i for i in intervals if (i["id"] == "SUM") == (summary_id == "SUM")]
    result["intervals"] = [{k: v for k, v in i.items() if k not in ("id", "side")} for i in picked]
    sender = _pick_summary(summaries, "sender", summary_id)
    receiver = _pick_summary(summaries, "receiver", summary_id)
    if sender:
        result["sent_bytes"] = sender["bytes"]
        result["sent_mbit_s"] = sender["throughput_mbit_s"]
        result["duration_s"] = sender["end_s"] - sender["start_s"]
        if "retransmits" in sender:
            result["retransmits"] = sender["retransmits"]
    if receiver:
        result["received_bytes"] = receiver["bytes"]
        result["received_mbit_s"] = receiver["throughput_mbit_s"]
        if result["duration_s"] is None:
            result["duration_s"] = receiver["end_s"] - receiver["start_s"]
        for key in ("jitter_ms", "lost_packets", "packets", "lost_pct"):
            if key in receiver:
                result[key] = receiver[key]
    if result["protocol"] == "UDP" and result["packets"] is None and sender:
        result["packets"] = sender.get("packets")
    if not sender and not receiver and not result["error"]:
        result["error"] = "no iperf3 summary lines (the test did not finish)"
    return result


def _pick_summary(
    summaries: Mapping[tuple[str, str], dict[str, Any]], side: str, summary_id: str | None
) -> dict[str, Any] | None:
    if summary_id is not None:
        return summaries.get((summary_id, side))
    for (line_id, line_side), interval in summaries.items():
        if line_side == side and line_id != "SUM":
            return interval
    return None


def _empty_result() -> dict[str, Any]:
    return {
        "tool": "iperf3",
        "version": None,
        "role": None,
        "protocol": "TCP",
        "streams": 1,
        "reverse": False,
        "duration_s": None,
        "sent_bytes": None,
        "received_bytes": None,
        "sent_mbit_s": None,
        "received_mbit_s": None,
        "retransmits": None,
        "jitter_ms": None,
        "lost_packets": None,
        "packets": None,
        "lost_pct": None,
        "cpu_host_pct": None,
        "cpu_remote_pct": None,
        "intervals": [],
        "error": None,
    }


# ---------------------------------------------------------------- helpers


def _mbit_or_none(bits_per_second: Any, where: str) -> float | None:
    return None if bits_per_second is None else figure(bits_per_second, where) / 1e6


def _fmt_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _number_in_range(config: Mapping[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = option_number("iperf3", key, config.get(key, default))
    value = float(default) if value is None else value
    check_range("iperf3", key, value, low, high)
    return value


def _int_in_range(config: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = option_whole_number("iperf3", key, config.get(key, default))
    value = default if value is None else value
    check_range("iperf3", key, value, low, high)
    return value


def _checked_size(value: Any, key: str) -> str:
    """iperf3 sizes/rates: a number with an optional K/M/G/T suffix (e.g. "100M", "128K")."""
    text = str(value).strip()
    if not re.fullmatch(r"\d+(\.\d+)?[KMGTkmgt]?", text):
        raise ValueError(f"iperf3: {key} must be a number with an optional K/M/G/T suffix, got {value!r}")
    return text
