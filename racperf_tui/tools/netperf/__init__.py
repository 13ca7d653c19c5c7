"""netperf / netserver: the classic network benchmark (netperf.org, 2.x), both ends.

``netserver -p PORT -D`` listens (``-D``: stay in the foreground, so racperf owns it);
``netperf -H HOST -p PORT -t TCP_RR|TCP_STREAM|UDP_RR|UDP_STREAM -l SECONDS [-D INTERVAL]
[-P 0|1] [-c] [-C] -- [-m B] [-M B] [-r REQ,RESP] [-s B] [-S B] [-o|-O|-k SELECTORS]`` measures.

Output understood (see tests/fixtures/netperf, real netperf 2.7.0 / 2.7.1 outputs):

* the classic result blocks of each test, with or without the banner and headers (``-P``),
  with CPU columns (``-c -C``);
* interim results of builds configured with ``--enable-demo`` (``-D``), as human lines
  ("Interim result: 8064.58 Trans/s over 1.275 seconds ending at 1796005365.201"), CSV lines
  (with ``-o``) and NETPERF_INTERIM_RESULT[i] keys (with ``-k``);
* omni output selectors (netperf >= 2.5): ``-o`` CSV, ``-O`` columns, ``-k`` KEY=VALUE, kept as a
  dict of selectors and mapped to the common keys (``trans_per_s``, ``throughput_mbit_s``,
  ``mean_latency_us``, ``p99_latency_us``, ``local_cpu_util_pct`` ...).

Throughput is normalised to ``throughput_mbit_s`` (10^6 bits/s, netperf's default unit).
Whether the build has ``-D`` and omni is detected by :func:`detect_capabilities`
(``netperf -D 1 -V``: a build without demo support says "Sorry, Demo Mode not configured into
this netperf" before printing its version).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from racperf_tui.core import units
from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.contract.tool import (
    MetricSpec,
    PairMode,
    PairSpec,
    ProgramField,
    ToolDescription,
    options_from_dataclass,
)
from racperf_tui.tools.base import (
    ModuleTool,
    OptionsConfig,
    check_choice,
    check_range,
    on_another_node,
    option_whole_number,
    program_output,
)
from racperf_tui.tools.figures import MAX_LINE_CHARS, MAX_NUMBER_CHARS, OutputParseError, Warnings, check_finite

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

name = "netperf"

TESTS = ("TCP_RR", "TCP_STREAM", "UDP_RR", "UDP_STREAM")
RR_TESTS = ("TCP_RR", "UDP_RR")
STREAM_TESTS = ("TCP_STREAM", "UDP_STREAM")
DEFAULT_CONTROL_PORT = 12865
#: Seconds allowed beyond -l for control-connection set-up and the final exchange.
SETUP_ALLOWANCE_S = 30.0
DEFAULT_SERVER_LIFETIME_S = 3600.0
#: netperf learned omni tests and output selectors in 2.5.0.
OMNI_MIN_VERSION = (2, 5, 0)

#: Output selectors racperf asks for when omni output is on and none are given: the set of
#: the shared 2.7.1 samples (latency percentiles and CPU included).
DEFAULT_RR_SELECTORS = (
    "THROUGHPUT",
    "THROUGHPUT_UNITS",
    "TRANSACTION_RATE",
    "RT_LATENCY",
    "MIN_LATENCY",
    "MEAN_LATENCY",
    "P50_LATENCY",
    "P90_LATENCY",
    "P99_LATENCY",
    "MAX_LATENCY",
    "STDDEV_LATENCY",
    "ELAPSED_TIME",
    "PROTOCOL",
    "DIRECTION",
    "REQUEST_SIZE",
    "RESPONSE_SIZE",
    "LOCAL_CPU_UTIL",
    "REMOTE_CPU_UTIL",
)
DEFAULT_STREAM_SELECTORS = (
    "THROUGHPUT",
    "THROUGHPUT_UNITS",
    "ELAPSED_TIME",
    "PROTOCOL",
    "DIRECTION",
    "LOCAL_SEND_SIZE",
    "LSS_SIZE_END",
    "RSR_SIZE_END",
    "MEAN_LATENCY",
    "P50_LATENCY",
    "P90_LATENCY",
    "P99_LATENCY",
    "LOCAL_CPU_UTIL",
    "REMOTE_CPU_UTIL",
    "REMOTE_RECV_THROUGHPUT",
)

_SELECTOR_TEXT = (
    "OUTPUT_NONE SOCKET_TYPE PROTOCOL DIRECTION ELAPSED_TIME THROUGHPUT THROUGHPUT_UNITS "
    "LSS_SIZE_REQ LSS_SIZE LSS_SIZE_END LSR_SIZE_REQ LSR_SIZE LSR_SIZE_END RSS_SIZE_REQ RSS_SIZE "
    "RSS_SIZE_END RSR_SIZE_REQ RSR_SIZE RSR_SIZE_END LOCAL_SEND_SIZE LOCAL_RECV_SIZE "
    "REMOTE_SEND_SIZE REMOTE_RECV_SIZE REQUEST_SIZE RESPONSE_SIZE LOCAL_CPU_UTIL "
    "LOCAL_CPU_PERCENT_USER LOCAL_CPU_PERCENT_SYSTEM LOCAL_CPU_PERCENT_IOWAIT LOCAL_CPU_PERCENT_IRQ "
    "LOCAL_CPU_PERCENT_SWINTR LOCAL_CPU_METHOD LOCAL_SD REMOTE_CPU_UTIL REMOTE_CPU_PERCENT_USER "
    "REMOTE_CPU_PERCENT_SYSTEM REMOTE_CPU_PERCENT_IOWAIT REMOTE_CPU_PERCENT_IRQ "
    "REMOTE_CPU_PERCENT_SWINTR REMOTE_CPU_METHOD REMOTE_SD SD_UNITS CONFIDENCE_LEVEL "
    "CONFIDENCE_INTERVAL CONFIDENCE_ITERATION THROUGHPUT_CONFID LOCAL_CPU_CONFID REMOTE_CPU_CONFID "
    "TRANSACTION_RATE RT_LATENCY BURST_SIZE LOCAL_TRANSPORT_RETRANS REMOTE_TRANSPORT_RETRANS "
    "TRANSPORT_MSS LOCAL_SEND_THROUGHPUT LOCAL_RECV_THROUGHPUT REMOTE_SEND_THROUGHPUT "
    "REMOTE_RECV_THROUGHPUT LOCAL_CPU_BIND LOCAL_CPU_COUNT LOCAL_CPU_PEAK_UTIL LOCAL_CPU_PEAK_ID "
    "LOCAL_CPU_MODEL LOCAL_CPU_FREQUENCY REMOTE_CPU_BIND REMOTE_CPU_COUNT REMOTE_CPU_PEAK_UTIL "
    "REMOTE_CPU_PEAK_ID REMOTE_CPU_MODEL REMOTE_CPU_FREQUENCY SOURCE_PORT SOURCE_ADDR SOURCE_FAMILY "
    "DEST_PORT DEST_ADDR DEST_FAMILY LOCAL_SEND_CALLS LOCAL_RECV_CALLS LOCAL_BYTES_PER_RECV "
    "LOCAL_BYTES_PER_SEND LOCAL_BYTES_SENT LOCAL_BYTES_RECVD LOCAL_BYTES_XFERD LOCAL_SEND_OFFSET "
    "LOCAL_RECV_OFFSET LOCAL_SEND_ALIGN LOCAL_RECV_ALIGN LOCAL_SEND_WIDTH LOCAL_RECV_WIDTH "
    "LOCAL_SEND_DIRTY_COUNT LOCAL_RECV_DIRTY_COUNT LOCAL_RECV_CLEAN_COUNT LOCAL_NODELAY LOCAL_CORK "
    "REMOTE_SEND_CALLS REMOTE_RECV_CALLS REMOTE_BYTES_PER_RECV REMOTE_BYTES_PER_SEND "
    "REMOTE_BYTES_SENT REMOTE_BYTES_RECVD REMOTE_BYTES_XFERD REMOTE_SEND_OFFSET REMOTE_RECV_OFFSET "
    "REMOTE_SEND_ALIGN REMOTE_RECV_ALIGN REMOTE_SEND_WIDTH REMOTE_RECV_WIDTH "
    "REMOTE_SEND_DIRTY_COUNT REMOTE_RECV_DIRTY_COUNT REMOTE_RECV_CLEAN_COUNT REMOTE_NODELAY "
    "REMOTE_CORK LOCAL_SYSNAME LOCAL_SYSTEM_MODEL LOCAL_RELEASE LOCAL_VERSION LOCAL_MACHINE "
    "REMOTE_SYSNAME REMOTE_SYSTEM_MODEL REMOTE_RELEASE REMOTE_VERSION REMOTE_MACHINE "
    "LOCAL_INTERFACE_NAME LOCAL_INTERFACE_VENDOR LOCAL_INTERFACE_DEVICE LOCAL_INTERFACE_SUBVENDOR "
    "LOCAL_INTERFACE_SUBDEVICE LOCAL_DRIVER_NAME LOCAL_DRIVER_VERSION LOCAL_DRIVER_FIRMWARE "
    "LOCAL_DRIVER_BUS LOCAL_INTERFACE_SLOT REMOTE_INTERFACE_NAME REMOTE_INTERFACE_VENDOR "
    "REMOTE_INTERFACE_DEVICE REMOTE_INTERFACE_SUBVENDOR REMOTE_INTERFACE_SUBDEVICE "
    "REMOTE_DRIVER_NAME REMOTE_DRIVER_VERSION REMOTE_DRIVER_FIRMWARE REMOTE_DRIVER_BUS "
    "REMOTE_INTERFACE_SLOT LOCAL_INTERVAL_USECS LOCAL_INTERVAL_BURST REMOTE_INTERVAL_USECS "
    "REMOTE_INTERVAL_BURST LOCAL_SECURITY_TYPE_ID LOCAL_SECURITY_TYPE LOCAL_SECURITY_ENABLED_NUM "
    "LOCAL_SECURITY_ENABLED LOCAL_SECURITY_SPECIFIC REMOTE_SECURITY_TYPE_ID REMOTE_SECURITY_TYPE "
    "REMOTE_SECURITY_ENABLED_NUM REMOTE_SECURITY_ENABLED REMOTE_SECURITY_SPECIFIC RESULT_BRAND UUID "
    "MIN_LATENCY MAX_LATENCY P50_LATENCY P90_LATENCY P99_LATENCY MEAN_LATENCY STDDEV_LATENCY "
    "LOCAL_SOCKET_PRIO REMOTE_SOCKET_PRIO LOCAL_SOCKET_TOS REMOTE_SOCKET_TOS LOCAL_CONG_CONTROL "
    "REMOTE_CONG_CONTROL LOCAL_FILL_FILE REMOTE_FILL_FILE COMMAND_LINE OUTPUT_END "
)

#: Every output selector netperf 2.7.1 knows (its ``-o "?"`` list, tests/fixtures/netperf).
OMNI_SELECTORS: tuple[str, ...] = tuple(_SELECTOR_TEXT.split())

#: Selector -> the column name netperf prints for it (the CSV header; the ``-O`` header's
#: stacked words joined with spaces).
SELECTOR_NAMES: dict[str, str] = {
    "SOCKET_TYPE": "Socket Type",
    "PROTOCOL": "Protocol",
    "DIRECTION": "Direction",
    "ELAPSED_TIME": "Elapsed Time (sec)",
    "THROUGHPUT": "Throughput",
    "THROUGHPUT_UNITS": "Throughput Units",
    "LSS_SIZE_REQ": "Local Send Socket Size Requested",
    "LSS_SIZE": "Local Send Socket Size Initial",
    "LSS_SIZE_END": "Local Send Socket Size Final",
    "LSR_SIZE_REQ": "Local Recv Socket Size Requested",
    "LSR_SIZE": "Local Recv Socket Size Initial",
    "LSR_SIZE_END": "Local Recv Socket Size Final",
    "RSS_SIZE_REQ": "Remote Send Socket Size Requested",
    "RSS_SIZE": "Remote Send Socket Size Initial",
    "RSS_SIZE_END": "Remote Send Socket Size Final",
    "RSR_SIZE_REQ": "Remote Recv Socket Size Requested",
    "RSR_SIZE": "Remote Recv Socket Size Initial",
    "RSR_SIZE_END": "Remote Recv Socket Size Final",
    "LOCAL_SEND_SIZE": "Local Send Size",
    "LOCAL_RECV_SIZE": "Local Recv Size",
    "REMOTE_SEND_SIZE": "Remote Send Size",
    "REMOTE_RECV_SIZE": "Remote Recv Size",
    "REQUEST_SIZE": "Request Size Bytes",
    "RESPONSE_SIZE": "Response Size Bytes",
    "LOCAL_CPU_UTIL": "Local CPU Util %",
    "LOCAL_CPU_PERCENT_USER": "Local CPU User %",
    "LOCAL_CPU_PERCENT_SYSTEM": "Local CPU System %",
    "LOCAL_CPU_PERCENT_IOWAIT": "Local CPU I/O %",
    "LOCAL_CPU_PERCENT_IRQ": "Local CPU IRQ %",
    "LOCAL_CPU_PERCENT_SWINTR": "Local CPU swintr %",
    "LOCAL_CPU_METHOD": "Local CPU Util Method",
    "LOCAL_SD": "Local Service Demand",
    "REMOTE_CPU_UTIL": "Remote CPU Util %",
    "REMOTE_CPU_PERCENT_USER": "Remote CPU User %",
    "REMOTE_CPU_PERCENT_SYSTEM": "Remote CPU System %",
    "REMOTE_CPU_PERCENT_IOWAIT": "Remote CPU I/O %",
    "REMOTE_CPU_PERCENT_IRQ": "Remote CPU IRQ %",
    "REMOTE_CPU_PERCENT_SWINTR": "Remote CPU swintr %",
    "REMOTE_CPU_METHOD": "Remote CPU Util Method",
    "REMOTE_SD": "Remote Service Demand",
    "SD_UNITS": "Service Demand Units",
    "CONFIDENCE_LEVEL": "Confidence Level Percent",
    "CONFIDENCE_INTERVAL": "Confidence Width Target",
    "CONFIDENCE_ITERATION": "Confidence Iterations Run",
    "THROUGHPUT_CONFID": "Throughput Confidence Width (%)",
    "LOCAL_CPU_CONFID": "Local CPU Confidence Width (%)",
    "REMOTE_CPU_CONFID": "Remote CPU Confidence Width (%)",
    "TRANSACTION_RATE": "Transaction Rate Tran/s",
    "RT_LATENCY": "Round Trip Latency usec/tran",
    "BURST_SIZE": "Initial Burst Requests",
    "LOCAL_TRANSPORT_RETRANS": "Local Transport Retransmissions",
    "REMOTE_TRANSPORT_RETRANS": "Remote Transport Retransmissions",
    "TRANSPORT_MSS": "Transport MSS bytes",
    "LOCAL_SEND_THROUGHPUT": "Local Send Throughput",
    "LOCAL_RECV_THROUGHPUT": "Local Recv Throughput",
    "REMOTE_SEND_THROUGHPUT": "Remote Send Throughput",
    "REMOTE_RECV_THROUGHPUT": "Remote Recv Throughput",
    "LOCAL_CPU_COUNT": "Local CPU Count",
    "REMOTE_CPU_COUNT": "Remote CPU Count",
    "LOCAL_BYTES_SENT": "Local Bytes Sent",
    "LOCAL_BYTES_RECVD": "Local Bytes Received",
    "REMOTE_BYTES_SENT": "Remote Bytes Sent",
    "REMOTE_BYTES_RECVD": "Remote Bytes Received",
    "RESULT_BRAND": "Result Tag",
    "UUID": "Test UUID",
    "MIN_LATENCY": "Minimum Latency Microseconds",
    "MAX_LATENCY": "Maximum Latency Microseconds",
    "P50_LATENCY": "50th Percentile Latency Microseconds",
    "P90_LATENCY": "90th Percentile Latency Microseconds",
    "P99_LATENCY": "99th Percentile Latency Microseconds",
    "MEAN_LATENCY": "Mean Latency Microseconds",
    "STDDEV_LATENCY": "Stddev Latency Microseconds",
    "COMMAND_LINE": "Command Line",
}
_NAME_TO_SELECTOR = {v.lower(): k for k, v in SELECTOR_NAMES.items()}

#: Selector -> the common result key it fills (units in the names).
COMMON_KEYS: dict[str, str] = {
    "ELAPSED_TIME": "elapsed_s",
    "TRANSACTION_RATE": "trans_per_s",
    "RT_LATENCY": "rt_latency_us",
    "MIN_LATENCY": "min_latency_us",
    "MAX_LATENCY": "max_latency_us",
    "MEAN_LATENCY": "mean_latency_us",
    "P50_LATENCY": "p50_latency_us",
    "P90_LATENCY": "p90_latency_us",
    "P99_LATENCY": "p99_latency_us",
    "STDDEV_LATENCY": "stddev_latency_us",
    "LOCAL_CPU_UTIL": "local_cpu_util_pct",
    "REMOTE_CPU_UTIL": "remote_cpu_util_pct",
    "REQUEST_SIZE": "request_bytes",
    "RESPONSE_SIZE": "response_bytes",
    "LOCAL_SEND_SIZE": "send_message_bytes",
    "REMOTE_RECV_SIZE": "recv_message_bytes",
    "LSS_SIZE_END": "local_send_socket_bytes",
    "LSR_SIZE_END": "local_recv_socket_bytes",
    "RSS_SIZE_END": "remote_send_socket_bytes",
    "RSR_SIZE_END": "remote_recv_socket_bytes",
    "LOCAL_TRANSPORT_RETRANS": "local_retransmissions",
    "REMOTE_TRANSPORT_RETRANS": "remote_retransmissions",
    "PROTOCOL": "protocol",
    "DIRECTION": "direction",
}

#: Throughput unit as netperf prints it -> factor to 10^6 bits/s.
_UNIT_TO_MBIT = {
    "10^9bits": 1000.0,
    "10^6bits": 1.0,
    "10^3bits": 0.001,
    "GBytes": units.MIB_S_TO_MBIT_S * 1024,
    "MBytes": units.MIB_S_TO_MBIT_S,
    "KBytes": units.MIB_S_TO_MBIT_S / 1024,
}

# every regex here is linear in the line: no two adjacent parts can match the same character
# (``\d+\.?\d*`` could split a digit run in n ways and was quadratic on a long one)
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_BANNER_RE = re.compile(r"^(?:MIGRATED\s+)?(?P<what>[A-Za-z/ ]+?) TEST (?:from|to) (?P<rest>.*)$")
_INTERIM_HUMAN_RE = re.compile(
    rf"^Interim result:\s*(?P<value>{_NUM})\s+(?P<units>\S+)\s+over\s+(?P<interval>{_NUM})\s+seconds"
    rf"\s+ending at\s+(?P<ending>{_NUM})\s*$"
)
_INTERIM_CSV_RE = re.compile(rf"^(?P<value>{_NUM}),(?P<units>[^,]*/s),(?P<interval>{_NUM}),(?P<ending>\d+\.\d+)\s*$")
#: the value is stripped by the caller (a lazy ``.*?\s*$`` is quadratic on a run of blanks)
_KEYVAL_RE = re.compile(r"^(?P<key>[A-Z][A-Z0-9_]*)(?:\[(?P<index>\d+)\])?=(?P<value>.*)$")
#: a digit run this long is no figure (int() refuses > 4300 digits; float() makes it inf)
_HUGE_NUMBER_RE = re.compile(rf"\d{{{MAX_NUMBER_CHARS + 1}}}")
_NUMERIC_ROW_RE = re.compile(rf"^\s*{_NUM}(?:\s+{_NUM})*\s*$")
_CLASSIC_HEADER_RES = (
    re.compile(r"^Local /Remote"),
    re.compile(r"^Recv\s+Send\s+Send"),
    re.compile(r"^Socket\s+Message\s+Elapsed"),
    re.compile(r"^Socket Size\s+Request"),
)
_ERROR_RES = (
    re.compile(r"^establish[ _]control"),
    re.compile(r"^Netperf could not resolve"),
    re.compile(r"^(send|recv)_\w+: "),
    re.compile(r"could not establish"),
    re.compile(r"^netperf: .*(invalid|unrecognized) option"),
)
_NOTE_RES = (
    re.compile(r"^Sorry, Demo Mode not configured"),
    re.compile(r"^Please consider reconfiguring"),
    re.compile(r"^please consider reconfiguring"),
    re.compile(r"^--enable-demo=yes"),
)
_WHAT_TO_TEST = {
    "TCP REQUEST/RESPONSE": "TCP_RR",
    "TCP STREAM": "TCP_STREAM",
    "UDP REQUEST/RESPONSE": "UDP_RR",
    "UDP STREAM": "UDP_STREAM",
    "TCP MAERTS": "TCP_MAERTS",
    "TCP Connect/Request/Response": "TCP_CRR",
}


def to_mbit_s(value: float, units: str) -> float | None:
    """A throughput in netperf's printed ``units`` -> 10^6 bits/s (None for Trans/s or unknown)."""
    base = units.split("/")[0]
    factor = _UNIT_TO_MBIT.get(base)
    return None if factor is None else value * factor


def _number(text: str) -> int | float | str:
    """A selector's value: a number when it is one (finite), else the text as printed."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


# --------------------------------------------------------------------------- config


@dataclass
class NetperfConfig(OptionsConfig):
    """One end of a netperf run, unit-named. ``None`` leaves an option to netperf's default.

    ``role`` "server": netserver on ``host`` ("" = all addresses) and control ``port``.
    ``role`` "client": netperf against the netserver at ``host``:``port``.
    ``omni_output``: "" (classic output), "csv" (``-o``), "human" (``-O``), "keyval" (``-k``);
    ``omni_selectors`` empty means racperf's default list for the test.
    """

    role: str = "client"
    host: str = "127.0.0.1"
    port: int = DEFAULT_CONTROL_PORT
    netperf: str = "netperf"
    netserver: str = "netserver"
    test: str = "TCP_RR"
    duration_s: int = 10
    interim_s: float | None = None
    print_headers: bool = True
    local_cpu: bool = False
    remote_cpu: bool = False
    send_size_bytes: int | None = None
    recv_size_bytes: int | None = None
    request_bytes: int | None = None
    response_bytes: int | None = None
    local_sockbuf_bytes: int | None = None
    remote_sockbuf_bytes: int | None = None
    omni_output: str = ""
    omni_selectors: Sequence[str] = field(default_factory=tuple)
    server_lifetime_s: float = DEFAULT_SERVER_LIFETIME_S

    tool_name: ClassVar[str] = "netperf"

    def to_mapping(self) -> dict[str, Any]:
        """The config as a plain dict (what the store records)."""
        data = dataclasses.asdict(self)
        data["omni_selectors"] = list(self.omni_selectors)
        return data

    def _normalise(self) -> None:
        self.role = str(self.role).strip().lower()
        self.test = str(self.test).strip().upper()
        self.host = str(self.host or "").strip()
        self.omni_output = {
            "": "",
            "none": "",
            "o": "csv",
            "csv": "csv",
            "O": "human",
            "human": "human",
            "k": "keyval",
            "keyval": "keyval",
        }.get(str(self.omni_output or "").strip(), str(self.omni_output))
        if isinstance(self.omni_selectors, str):
            self.omni_selectors = [s for s in re.split(r"[,\s]+", self.omni_selectors) if s]
        self.omni_selectors = tuple(str(s).strip().upper() for s in self.omni_selectors)
        for key in (
            "port",
            "duration_s",
            "send_size_bytes",
            "recv_size_bytes",
            "request_bytes",
            "response_bytes",
            "local_sockbuf_bytes",
            "remote_sockbuf_bytes",
        ):
            value = getattr(self, key)
            whole = option_whole_number("netperf", key, value)
            # port and duration_s are required: validate() names them when left empty
            setattr(self, key, value if whole is None and key in ("port", "duration_s") else whole)
        if self.interim_s in ("", 0, None):
            self.interim_s = None
        else:
            try:
                self.interim_s = float(self.interim_s)
            except (TypeError, ValueError):
                raise ValueError(f"netperf: interim_s must be seconds, got {self.interim_s!r}") from None

    def validate(self) -> None:
        """Check every option; ValueError says which and why."""
        check_choice("netperf", "role", self.role, ("client", "server"))
        if not isinstance(self.port, int):
            raise ValueError(f"netperf: port must be a whole number, got {self.port!r}")
        check_range("netperf", "port", self.port, 1, 65535)
        if self.role == "server":
            if not self.netserver:
                raise ValueError("netperf: netserver (the path of the netserver program) is empty")
            if float(self.server_lifetime_s) <= 0:
                raise ValueError("netperf: server_lifetime_s must be > 0 (a server run is bounded)")
            return
        if not self.netperf:
            raise ValueError("netperf: netperf (the path of the netperf program) is empty")
        if not self.host:
            raise ValueError("netperf: the client needs host (where netserver runs)")
        check_choice("netperf", "test", self.test, TESTS)
        if not isinstance(self.duration_s, int) or self.duration_s < 1:
            raise ValueError(
                f"netperf: duration_s must be at least 1 second (racperf runs are bounded), got {self.duration_s!r}"
            )
        if self.interim_s is not None and not 0 < self.interim_s <= self.duration_s:
            raise ValueError(
                f"netperf: interim_s must be > 0 and <= duration_s ({self.duration_s} s), got {self.interim_s:g}"
            )
        for key in (
            "send_size_bytes",
            "recv_size_bytes",
            "request_bytes",
            "response_bytes",
            "local_sockbuf_bytes",
            "remote_sockbuf_bytes",
        ):
            value = getattr(self, key)
            if value is not None and value < (0 if key in ("request_bytes", "response_bytes") else 1):
                raise ValueError(f"netperf: {key} must be positive, got {value}")
        if self.test in RR_TESTS and (self.send_size_bytes is not None or self.recv_size_bytes is not None):
            raise ValueError(
                f"netperf: send_size_bytes/recv_size_bytes (-m/-M) are for STREAM tests; "
                f"{self.test} takes request_bytes/response_bytes (-r)"
            )
        if self.test in STREAM_TESTS and (self.request_bytes is not None or self.response_bytes is not None):
            raise ValueError(
                f"netperf: request_bytes/response_bytes (-r) are for RR tests; "
                f"{self.test} takes send_size_bytes/recv_size_bytes (-m/-M)"
            )
        if self.omni_output not in ("", "csv", "human", "keyval"):
            raise ValueError(
                f"netperf: omni_output must be '', 'csv' (-o), 'human' (-O) or 'keyval' (-k), got {self.omni_output!r}"
            )
        unknown = [s for s in self.omni_selectors if s not in OMNI_SELECTORS]
        if unknown:
            raise ValueError(
                f"netperf: unknown output selector(s) {', '.join(unknown)} "
                f"(netperf -- -o '?' lists them; e.g. THROUGHPUT, P99_LATENCY, LOCAL_CPU_UTIL)"
            )
        if self.omni_selectors and not self.omni_output:
            raise ValueError("netperf: omni_selectors need omni_output ('csv', 'human' or 'keyval')")

    def selectors(self) -> tuple[str, ...]:
        """The output selectors asked for (racperf's default list when none are given)."""
        if self.omni_selectors:
            return tuple(self.omni_selectors)
        return DEFAULT_RR_SELECTORS if self.test in RR_TESTS else DEFAULT_STREAM_SELECTORS

    def client_argv(self) -> list[str]:
        """netperf's command line."""
        argv = [self.netperf, "-H", self.host, "-p", str(self.port), "-t", self.test, "-l", str(self.duration_s)]
        if self.interim_s is not None:
            argv += ["-D", f"{self.interim_s:g}"]
        if not self.print_headers:
            argv += ["-P", "0"]
        if self.local_cpu:
            argv.append("-c")
        if self.remote_cpu:
            argv.append("-C")
        specific: list[str] = []
        if self.send_size_bytes is not None:
            specific += ["-m", str(self.send_size_bytes)]
        if self.recv_size_bytes is not None:
            specific += ["-M", str(self.recv_size_bytes)]
        if self.request_bytes is not None or self.response_bytes is not None:
            req = "" if self.request_bytes is None else str(self.request_bytes)
            resp = "" if self.response_bytes is None else str(self.response_bytes)
            specific += ["-r", f"{req},{resp}"]
        if self.local_sockbuf_bytes is not None:
            specific += ["-s", str(self.local_sockbuf_bytes)]
        if self.remote_sockbuf_bytes is not None:
            specific += ["-S", str(self.remote_sockbuf_bytes)]
        if self.omni_output:
            flag = {"csv": "-o", "human": "-O", "keyval": "-k"}[self.omni_output]
            specific += [flag, ",".join(self.selectors())]
        if specific:
            argv += ["--", *specific]
        return argv

    def server_argv(self) -> list[str]:
        """netserver's command line: ``-D`` keeps it in the foreground, owned by racperf."""
        argv = [self.netserver, "-p", str(self.port), "-D"]
        if self.host:
            argv += ["-L", self.host]
        return argv


# --------------------------------------------------------------------------- capabilities


@dataclass(frozen=True)
class NetperfCapabilities:
    """What a netperf build can do."""

    version: str | None
    demo: bool
    omni: bool
    raw: str = ""

    @property
    def version_tuple(self) -> tuple[int, ...]:
        """(2, 7, 1) for "2.7.1"; () when unknown."""
        return tuple(int(x) for x in re.findall(r"\d+", self.version or ""))[:3]


@functools.lru_cache(maxsize=16)
def _detect_cached(path: str, mtime_ns: int, env_key: str) -> NetperfCapabilities:
    try:
        proc = subprocess.run(
            [path, "-D", "1", "-V"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(f"netperf: cannot run {path!r} to check its version: {exc}") from None
    return capabilities_of(proc.stdout + proc.stderr)


def capabilities_of(out: str) -> NetperfCapabilities:
    """What ``netperf -D 1 -V`` said: its version, demo (-D) support, omni."""
    match = re.search(r"Netperf version (\S+)", out)
    version = match[1] if match else None
    demo = "Demo Mode not configured" not in out
    numbers = tuple(int(x) for x in re.findall(r"\d+", version or ""))[:3]
    return NetperfCapabilities(version=version, demo=demo, omni=bool(numbers) and numbers >= OMNI_MIN_VERSION, raw=out)


def detect_capabilities_on(host: Host, netperf: str = "netperf") -> NetperfCapabilities:
    """:func:`detect_capabilities` of the netperf on another node, asked there (``-V`` touches
    no network). ValueError names the node when it is not there or cannot run."""
    try:
        answer = host.run_briefly([netperf, "-D", "1", "-V"], 10.0)
    except FileNotFoundError:
        raise ValueError(f"netperf: {netperf!r} not found on {host.name} (install netperf there)") from None
    except OSError as exc:
        raise ValueError(f"netperf: cannot run {netperf!r} on {host.name} to check its version: {exc}") from None
    return capabilities_of(answer.text)


def detect_capabilities(netperf: str = "netperf") -> NetperfCapabilities:
    """Run ``netperf -D 1 -V`` once per binary: its version, and whether it has -D (demo) and omni.

    A build without ``--enable-demo`` prints "Sorry, Demo Mode not configured into this netperf"
    when it parses ``-D``; ``-V`` then prints "Netperf version X" and exits, touching no network.
    """
    path = shutil.which(netperf) if os.sep not in netperf else netperf
    if not path or not os.path.isfile(path):
        raise ValueError(f"netperf: {netperf!r} not found (install netperf, or set the netperf path)")
    env_key = os.environ.get("RACPERF_FAKE_NETPERF_VERSION", "") + os.environ.get("RACPERF_FAKE_NETPERF_DEMO", "")
    return _detect_cached(path, os.stat(path).st_mtime_ns, env_key)


def adapt_to_capabilities(config: Mapping[str, Any], caps: NetperfCapabilities) -> tuple[dict[str, Any], list[str]]:
    """Drop what the build cannot do (-D without demo support, omni before 2.5); say so."""
    adapted = dict(config)
    notes: list[str] = []
    if adapted.get("interim_s") and not caps.demo:
        adapted["interim_s"] = None
        notes.append(
            f"this netperf ({caps.version or 'unknown version'}) was built without --enable-demo: "
            "no interim results (-D), only the final figures"
        )
    if adapted.get("omni_output") and not caps.omni:
        adapted["omni_output"] = ""
        adapted["omni_selectors"] = ()
        notes.append(
            f"this netperf ({caps.version or 'unknown version'}) predates omni output selectors "
            "(2.5): the classic output is parsed instead (no latency percentiles)"
        )
    return adapted, notes


# --------------------------------------------------------------------------- parsing


def _line_problem(line: str) -> str | None:
    """Why a line cannot hold a figure (too long, a number of absurd length), None when it can."""
    if len(line) > MAX_LINE_CHARS:
        return f"{len(line)} characters long, skipped (no figure line is longer than {MAX_LINE_CHARS})"
    if _HUGE_NUMBER_RE.search(line):
        return f"a number of more than {MAX_NUMBER_CHARS} digits is no figure; line skipped"
    return None


def _interim_figures(value: str, interval: str, ending: str) -> tuple[float, float, float] | None:
    """An interim result's figures, None when one is impossible (negative, inf, NaN)."""
    numbers = (float(value), float(interval), float(ending))
    if not all(math.isfinite(x) and x >= 0 for x in numbers):
        return None
    return numbers


def _sample_from_interim(
    value: float, units: str, interval: float, ending: float, origin: float | None
) -> tuple[dict[str, Any], float]:
    if origin is None:
        origin = ending - interval
    sample: dict[str, Any] = {
        "t": round(ending - origin, 3),
        "interval_s": interval,
        "ending_epoch": ending,
        "value": value,
        "units": units,
    }
    if units.startswith("Trans"):
        sample["trans_per_s"] = value
    else:
        mbit = to_mbit_s(value, units)
        if mbit is not None:
            sample["throughput_mbit_s"] = round(mbit, 6)
    return sample, origin


def _omni_to_common(omni: Mapping[str, Any], result: dict[str, Any]) -> None:
    """Fill the common keys from a selector dict."""
    for selector, key in COMMON_KEYS.items():
        if selector not in omni:
            continue
        value = omni[selector]
        if key.endswith("_cpu_util_pct") and isinstance(value, (int, float)) and value < 0:
            continue  # netperf prints -1 when CPU was not measured
        result.setdefault(key, value)
    units = str(omni.get("THROUGHPUT_UNITS", ""))
    tput = omni.get("THROUGHPUT")
    if isinstance(tput, (int, float)):
        if units.startswith("Trans"):
            result.setdefault("trans_per_s", tput)
        else:
            mbit = to_mbit_s(float(tput), units or "10^6bits/s")
            if mbit is not None:
                result.setdefault("throughput_mbit_s", round(mbit, 6))
    remote = omni.get("REMOTE_RECV_THROUGHPUT")
    if isinstance(remote, (int, float)) and units and not units.startswith("Trans"):
        mbit = to_mbit_s(float(remote), units)
        if mbit is not None:
            result.setdefault("remote_throughput_mbit_s", round(mbit, 6))
    if "test" not in result or result["test"] is None:
        proto, direction = str(omni.get("PROTOCOL", "")).upper(), str(omni.get("DIRECTION", ""))
        if proto in ("TCP", "UDP") and direction:
            kind = {"Send|Recv": "RR", "Send": "STREAM", "Recv": "MAERTS"}.get(direction)
            if kind:
                result["test"] = f"{proto}_{kind}"


def _columns_from_value_row(header_rows: list[str], value_row: str) -> dict[str, str]:
    """``-O`` output: column names from the stacked header rows, aligned on the value row."""
    starts = [m.start() for m in re.finditer(r"\S+", value_row)]
    values = value_row.split()
    names = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else None
        words = [row[start:end].strip() for row in header_rows]
        names.append(" ".join(w for w in words if w))
    return dict(zip(names, values))


def _selector_for(name: str) -> str:
    return _NAME_TO_SELECTOR.get(name.strip().lower(), name.strip())


def _classic(
    test: str | None, header_rows: list[str], rows: list[list[float]], units: str, result: dict[str, Any]
) -> None:
    """The classic result block -> common keys. Shape decides when there is no banner/header."""
    first = rows[0]
    second = rows[1] if len(rows) > 1 else []
    header = " ".join(header_rows)
    if test is None:
        if "Okay Errors" in header or (len(first) == 6 and len(second) == 4):
            test = "UDP_STREAM"
        elif "Trans." in header or (len(first) in (6, 10) and len(second) == 2):
            test = "*_RR"
        elif len(first) in (5, 9):
            test = "TCP_STREAM"
        # RR shapes are the same for TCP and UDP; the STREAM shapes differ
        result["test"] = test if test in ("UDP_STREAM", "TCP_STREAM") else None
        result["test_shape"] = test
        result.setdefault("notes", []).append("no banner (-P 0): the test is inferred from the result's shape")
    if test is not None and test.endswith("_RR"):
        keys = [
            "local_send_socket_bytes",
            "local_recv_socket_bytes",
            "request_bytes",
            "response_bytes",
            "elapsed_s",
            "trans_per_s",
            "local_cpu_util_pct",
            "remote_cpu_util_pct",
            "local_service_demand_us_per_tran",
            "remote_service_demand_us_per_tran",
        ]
        result.update(zip(keys, first))
        if len(second) >= 2:
            result["remote_send_socket_bytes"], result["remote_recv_socket_bytes"] = second[:2]
        if result.get("trans_per_s"):
            result["rt_latency_us"] = round(1e6 / result["trans_per_s"], 3)
    elif test == "UDP_STREAM":
        keys = [
            "local_send_socket_bytes",
            "send_message_bytes",
            "elapsed_s",
            "messages_ok",
            "errors",
            "throughput_mbit_s",
        ]
        result.update(zip(keys, first))
        if len(second) >= 4:
            result["remote_recv_socket_bytes"] = second[0]
            result["remote_elapsed_s"] = second[1]
            result["remote_messages_ok"] = second[2]
            result["remote_throughput_mbit_s"] = second[3]
        for key in ("throughput_mbit_s", "remote_throughput_mbit_s"):
            if key in result:
                result[key] = round(to_mbit_s(float(result[key]), units) or result[key], 6)
    else:  # TCP_STREAM / TCP_MAERTS
        keys = [
            "remote_recv_socket_bytes",
            "local_send_socket_bytes",
            "send_message_bytes",
            "elapsed_s",
            "throughput_mbit_s",
            "local_cpu_util_pct",
            "remote_cpu_util_pct",
            "local_service_demand_us_per_kb",
            "remote_service_demand_us_per_kb",
        ]
        result.update(zip(keys, first))
        if "throughput_mbit_s" in result:
            result["throughput_mbit_s"] = round(
                to_mbit_s(float(result["throughput_mbit_s"]), units) or result["throughput_mbit_s"], 6
            )


def parse_output(text: str, test: str | None = None, selectors: Sequence[str] | None = None) -> dict[str, Any]:
    """A saved netperf output -> result dict.

    ``{"tool": "netperf", "test": "TCP_RR", "elapsed_s", "trans_per_s" (RR) |
    "throughput_mbit_s" (STREAM), "remote_throughput_mbit_s", "messages_ok", "errors"
    (UDP_STREAM), socket and message sizes, CPU figures (-c -C), "omni": {SELECTOR: value} and
    the common keys it maps to, "samples": [{"t", "interval_s", "ending_epoch", "value",
    "units", "trans_per_s" | "throughput_mbit_s"}]}``. ``test`` and ``selectors`` help with
    ``-P 0`` outputs, which print neither the banner nor the CSV header. An output that is only
    an error (no netserver listening) gives ``{"tool": "netperf", "error": ...}``.
    """
    result: dict[str, Any] = {"tool": "netperf", "test": test.upper() if test else None}
    listing = text.strip()
    if listing.startswith("OUTPUT_NONE,") and re.fullmatch(r"[A-Z0-9_,\s]+", listing):
        # the output of `netperf -- -o '?'`: the selectors this build knows
        return {"tool": "netperf", "selector_list": [s.strip() for s in listing.split(",") if s.strip()]}
    samples: list[dict[str, Any]] = []
    origin: float | None = None
    keyval: dict[str, Any] = {}
    interim_kv: dict[int, dict[str, str]] = {}
    csv_lines: list[list[str]] = []
    block: list[str] = []
    errors: list[str] = []
    notes: list[str] = []
    warnings = Warnings()
    for lineno, raw in enumerate(text.splitlines(), 1):
        problem = _line_problem(raw)
        if problem:
            warnings.add(f"line {lineno}: {problem}")
            continue
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        banner = _BANNER_RE.match(stripped)
        if banner and not block:
            result["banner"] = stripped
            parts = [p.strip() for p in banner["rest"].split(" : ")]
            result["features"] = parts[1:]
            found = _WHAT_TO_TEST.get(banner["what"].strip())
            if found and not test:
                result["test"] = found
            continue
        interim = _INTERIM_HUMAN_RE.match(stripped) or _INTERIM_CSV_RE.match(stripped)
        if interim:
            figures = _interim_figures(interim["value"], interim["interval"], interim["ending"])
            if figures is None:
                warnings.add(f"line {lineno}: interim result with a negative or infinite figure, skipped")
                continue
            sample, origin = _sample_from_interim(figures[0], interim["units"], figures[1], figures[2], origin)
            samples.append(sample)
            continue
        if any(r.search(stripped) for r in _ERROR_RES):
            errors.append(stripped)
            continue
        if any(r.search(stripped) for r in _NOTE_RES):
            notes.append(stripped)
            continue
        kv = _KEYVAL_RE.match(stripped)
        if kv:
            if kv["key"].startswith("NETPERF_") and kv["index"] is not None:
                interim_kv.setdefault(int(kv["index"]), {})[kv["key"]] = kv["value"]
            else:
                keyval[kv["key"]] = _number(kv["value"])
            continue
        if "," in stripped and not _NUMERIC_ROW_RE.match(stripped):
            csv_lines.append(stripped.split(","))
            continue
        block.append(line)
    for index in sorted(interim_kv):
        item = interim_kv[index]
        try:
            figures = _interim_figures(item["NETPERF_INTERIM_RESULT"], item["NETPERF_INTERVAL"], item["NETPERF_ENDING"])
        except (KeyError, ValueError):
            continue  # an interim cut short by the end of the run
        if figures is None:
            warnings.add(f"NETPERF_INTERIM_RESULT[{index}]: a negative or infinite figure, skipped")
            continue
        sample, origin = _sample_from_interim(figures[0], item.get("NETPERF_UNITS", ""), figures[1], figures[2], origin)
        samples.append(sample)
    omni: dict[str, Any] = dict(keyval)
    if csv_lines:
        values = csv_lines[-1]
        header = csv_lines[-2] if len(csv_lines) >= 2 and not _NUMERIC_ROW_RE.match(csv_lines[-2][0]) else None
        if header is not None and len(header) == len(values):
            names = [_selector_for(h) for h in header]
        elif selectors and len(selectors) == len(values):
            names = list(selectors)
        elif len(values) == len(DEFAULT_RR_SELECTORS) and values[1].startswith("Trans"):
            names = list(DEFAULT_RR_SELECTORS)
            notes.append("CSV without header (-P 0): read with racperf's default RR selector list")
        elif len(values) == len(DEFAULT_STREAM_SELECTORS) and "bits" in values[1]:
            names = list(DEFAULT_STREAM_SELECTORS)
            notes.append("CSV without header (-P 0): read with racperf's default STREAM selector list")
        else:
            names = [f"column_{i + 1}" for i in range(len(values))]
            notes.append("CSV without header (-P 0) and selectors unknown: columns are unnamed")
        omni.update({n: _number(v) for n, v in zip(names, values)})
    numeric_rows = []
    for row in block:
        if _NUMERIC_ROW_RE.match(row):
            numbers = [float(x) if any(c in x for c in ".eE") else int(x) for x in row.split()]
            if all(math.isfinite(x) for x in numbers):
                numeric_rows.append(numbers)
            else:
                warnings.add(f"result row with an infinite figure, skipped: {row.strip()[:60]!r}")
    header_rows = [row for row in block if not _NUMERIC_ROW_RE.match(row)]
    if (
        header_rows
        and not numeric_rows
        and len(header_rows) >= 2
        and not any(r.match(header_rows[0].strip()) for r in _CLASSIC_HEADER_RES)
    ):
        # -O: stacked column names, then one value row (it holds words like Trans/s, TCP)
        columns = _columns_from_value_row(header_rows[:-1], header_rows[-1])
        omni.update({_selector_for(n): _number(v) for n, v in columns.items()})
        header_rows = []
    if omni:
        result["omni"] = omni
        _omni_to_common(omni, result)
    if numeric_rows:
        header_text = " ".join(header_rows)
        unit_match = re.search(r"(10\^\d+bits|[KMG]Bytes)/s", header_text)
        units = unit_match[0] if unit_match else "10^6bits/s"
        _classic(result["test"], header_rows, numeric_rows, units, result)
    if notes:
        result.setdefault("notes", []).extend(notes)
    result["samples"] = samples
    if errors:
        result["error"] = " / ".join(errors)
    warnings.into(result)
    check_finite(result, "netperf output")
    if "elapsed_s" not in result and "trans_per_s" not in result and "throughput_mbit_s" not in result:
        if errors or samples:
            return result
        detail = f" ({warnings.items[0]})" if warnings.items else ""
        raise OutputParseError(f"not netperf output: no result block, no omni output, no interim results{detail}")
    return result


def parse_result(output: str) -> dict[str, Any]:
    """The whole output of a finished run -> result dict: netserver's (see
    :func:`parse_server_output`) or netperf's (see :func:`parse_output`)."""
    if SERVER_READY_RE.search(output) or SERVER_FAILED_RE.search(output):
        return parse_server_output(output)
    return parse_output(output)


def succeeded(result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
    """A run succeeded when netperf printed its figures and did not fail to reach netserver."""
    if not result:
        return False, f"no netperf output (exit status {exit_status})"
    if result.get("error"):
        return False, str(result["error"])
    if result.get("role") == "server":
        return (True, "server ran") if result.get("started") else (False, "netserver never said it started")
    if "trans_per_s" not in result and "throughput_mbit_s" not in result:
        return False, "netperf printed no final result"
    if exit_status not in (0, None):
        return False, f"netperf exited with status {exit_status}"
    return True, "finished"


# --------------------------------------------------------------------------- live


class NetperfStreamParser:
    """netperf output lines -> one Sample per interim result (-D), in any of the three forms.

    ``t`` is netperf's own clock: the interim's end time minus the start of the first interval.
    Metrics: ``trans_per_s`` (+ ``rt_latency_us`` = 10^6 / rate) for RR, ``throughput_mbit_s``
    for STREAM.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self._origin: float | None = None
        self._kv: dict[int, dict[str, str]] = {}

    def _emit(self, value: float, units: str, interval: float, ending: float) -> list[Sample]:
        sample, self._origin = _sample_from_interim(value, units, interval, ending, self._origin)
        metrics: dict[str, float] = {}
        if "trans_per_s" in sample:
            metrics["trans_per_s"] = sample["trans_per_s"]
            if value > 0:
                metrics["rt_latency_us"] = round(1e6 / value, 3)
        elif "throughput_mbit_s" in sample:
            metrics["throughput_mbit_s"] = sample["throughput_mbit_s"]
        else:
            metrics["value"] = value
        return [
            Sample(
                t=sample["t"], metrics=metrics, extra={"interval_s": interval, "ending_epoch": ending, "units": units}
            )
        ]

    def feed(self, line: str) -> list[Sample]:
        """One output line; a Sample when it completes an interim result."""
        if _line_problem(line):
            return []
        stripped = line.strip()
        match = _INTERIM_HUMAN_RE.match(stripped) or _INTERIM_CSV_RE.match(stripped)
        if match:
            figures = _interim_figures(match["value"], match["interval"], match["ending"])
            return [] if figures is None else self._emit(figures[0], match["units"], figures[1], figures[2])
        kv = _KEYVAL_RE.match(stripped)
        if kv and kv["key"].startswith("NETPERF_") and kv["index"] is not None:
            item = self._kv.setdefault(int(kv["index"]), {})
            item[kv["key"]] = kv["value"]
            if {"NETPERF_INTERIM_RESULT", "NETPERF_INTERVAL", "NETPERF_ENDING"} <= item.keys():
                del self._kv[int(kv["index"])]
                try:
                    figures = _interim_figures(
                        item["NETPERF_INTERIM_RESULT"], item["NETPERF_INTERVAL"], item["NETPERF_ENDING"]
                    )
                except ValueError:
                    return []
                if figures is None:
                    return []
                return self._emit(figures[0], item.get("NETPERF_UNITS", ""), figures[1], figures[2])
        return []

    def finish(self) -> list[Sample]:
        """Nothing is buffered beyond an incomplete key/value interim, which is dropped."""
        self._kv.clear()
        return []


def stream_parser(config: Mapping[str, Any]) -> NetperfStreamParser:
    """A fresh live parser for one run."""
    return NetperfStreamParser(config)


# --------------------------------------------------------------------------- argv, limits


def build_argv(config: Mapping[str, Any]) -> list[str]:
    """netperf's (role client) or netserver's (role server) exact command line."""
    cfg = NetperfConfig.from_mapping(config)
    return cfg.server_argv() if cfg.role == "server" else cfg.client_argv()


def hard_limit_s(config: Mapping[str, Any]) -> float:
    """Client: -l plus set-up slack. Server: its lifetime."""
    cfg = NetperfConfig.from_mapping(config)
    if cfg.role == "server":
        return float(cfg.server_lifetime_s)
    return cfg.duration_s * 1.1 + SETUP_ALLOWANCE_S


# --------------------------------------------------------------------------- two ends

SERVER_READY_RE = re.compile(r"Starting netserver with host")
SERVER_FAILED_RE = re.compile(r"Unable to start netserver")


def parse_server_output(text: str) -> dict[str, Any]:
    """netserver's own output -> {"tool", "role": "server", "started", "port", "error"?}."""
    result: dict[str, Any] = {"tool": "netperf", "role": "server", "started": False}
    for line in text.splitlines():
        match = re.search(r"Starting netserver with host '([^']*)' port '(\d+)' and family (\S+)", line)
        if match:
            result.update(started=True, host=match[1], port=int(match[2]), family=match[3])
        elif SERVER_FAILED_RE.search(line):
            result["error"] = line.strip()
    return result


def adapt_client(config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Ask the client's netperf here what it supports; drop the options it lacks (-D, omni),
    saying so. No netperf here: the config as it is (a client on another node is adapted to
    that node's build by :func:`invocation`; one here is refused as not installed)."""
    cfg = NetperfConfig.from_mapping({**config, "role": "client"})
    try:
        caps = detect_capabilities(cfg.netperf)
    except ValueError:
        return dict(config), []
    return adapt_to_capabilities(config, caps)


def invocation(config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
    """The run on ``host``: a client on another node drops what that node's netperf build
    cannot do (-D, omni), saying so in the notes; everything else as :func:`build_argv`."""
    notes: list[str] = []
    cfg = NetperfConfig.from_mapping(config)
    if cfg.role == "client" and on_another_node(host):
        adapted, notes = adapt_to_capabilities(config, detect_capabilities_on(host, cfg.netperf))
        config = adapted
    return Invocation(argv=build_argv(config), hard_limit_s=float(hard_limit_s(config)), notes=tuple(notes))


#: How both ends run (read by racperf_tui.orchestration.pair_runs).
PAIR = PairSpec(
    ready_pattern=SERVER_READY_RE,
    failure_pattern=SERVER_FAILED_RE,
    default_port=DEFAULT_CONTROL_PORT,
    failure_hint="pick another port",
    server_name="netserver",
    adapt_client=adapt_client,
    modes=(
        PairMode("TCP_STREAM", {"test": "TCP_STREAM"}),
        PairMode("TCP_RR", {"test": "TCP_RR"}, latency_only=True),
        PairMode("UDP_STREAM", {"test": "UDP_STREAM"}),
        PairMode("UDP_RR", {"test": "UDP_RR"}, latency_only=True),
    ),
    client_fields={"host": "host", "port": "port", "duration_s": "duration_s", "interval_s": "interim_s"},
    server_fields={"host": "host", "port": "port"},
    program=ProgramField(
        "netperf directory",
        "directory of netperf and netserver (blank: PATH)",
        "netperf.dir",
        (("netperf", "netperf"), ("netserver", "netserver")),
    ),
)


install_hint = (
    "netperf is not in most distributions' main repositories: Debian/Ubuntu: apt-get install "
    "netperf (non-free/multiverse); RHEL/OL: from EPEL or build from "
    "https://github.com/HewlettPackard/netperf (./configure --enable-demo for interim results)"
)


def tool_version(argv: list[str], host: Host | None = None) -> str | None:
    """``netperf -V`` / ``netserver -V`` on the run's host: "Netperf version 2.7.1"."""
    match = re.search(r"Netperf version \S+", program_output([argv[0], "-V"], host=host) or "")
    return match[0] if match else None


_HELP = {
    "role": "which end this run is",
    "host": "client: where netserver runs; server: the address to listen on (empty: all)",
    "port": "netserver's control port (-p)",
    "netperf": "the netperf program",
    "netserver": "the netserver program",
    "test": "the test (-t)",
    "duration_s": "seconds to run (-l)",
    "interim_s": "seconds between live figures (-D; builds with --enable-demo)",
    "print_headers": "netperf's banner and headers (-P)",
    "local_cpu": "measure this end's CPU (-c)",
    "remote_cpu": "measure the other end's CPU (-C)",
    "send_size_bytes": "STREAM: send size (-m)",
    "recv_size_bytes": "STREAM: receive size (-M)",
    "request_bytes": "RR: request size (-r)",
    "response_bytes": "RR: response size (-r)",
    "local_sockbuf_bytes": "this end's socket buffer (-s)",
    "remote_sockbuf_bytes": "the other end's socket buffer (-S)",
    "omni_output": "omni output: csv (-o), human (-O), keyval (-k), or none",
    "omni_selectors": "omni output selectors (e.g. THROUGHPUT,P99_LATENCY)",
    "server_lifetime_s": "seconds before a server run ends by itself",
}
OPTIONS = options_from_dataclass(
    NetperfConfig,
    _HELP,
    choices={"role": ("client", "server"), "test": TESTS},
    ends={"netserver": "server", "server_lifetime_s": "server"},
)
METRICS = (
    MetricSpec("trans_per_s", "transactions", "trans/s", chart="trans", quantity="transaction_rate"),
    MetricSpec("rt_latency_us", "round trip", "µs", chart="latency", quantity="latency"),
    MetricSpec("throughput_mbit_s", "throughput", "Mbit/s", chart="throughput_mbit", quantity="throughput"),
)
RESULTS = (
    MetricSpec("throughput_mbit_s", "throughput", "Mbit/s", quantity="throughput"),
    MetricSpec("trans_per_s", "transactions", "trans/s"),
    MetricSpec("rt_latency_us", "round trip", "µs"),
    MetricSpec("elapsed_s", "elapsed", "s", decimals=2),
)
DESCRIPTION = ToolDescription(
    name=name,
    summary="request/response latency and stream throughput",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
)

#: The Tool (racperf_tui.core.contract.tool.Tool). netserver says "Unable to start netserver ..." on
#: stderr and getopt errors go there too, so both are read.
TOOL = ModuleTool(
    name,
    build_argv=build_argv,
    stream_parser=stream_parser,
    parse_result=parse_result,
    succeeded=succeeded,
    hard_limit_s=hard_limit_s,
    tool_version=tool_version,
    install_hint=install_hint,
    merge_stderr=True,
    stop_grace_s=2.0,
    description=DESCRIPTION,
    invocation=invocation,
)
