"""One end of a netperf run as a config: the tests, the omni output selectors netperf knows and
racperf's default lists, each option checked, and both ends' command lines."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from racperf_tui.tools.base import OptionsConfig, check_choice, check_range, option_whole_number

TESTS = ("TCP_RR", "TCP_STREAM", "UDP_RR", "UDP_STREAM")
RR_TESTS = ("TCP_RR", "UDP_RR")
STREAM_TESTS = ("TCP_STREAM", "UDP_STREAM")
DEFAULT_CONTROL_PORT = 12865
DEFAULT_SERVER_LIFETIME_S = 3600.0
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


#: the options netperf takes as whole numbers, no unit (-p 12865, -l 10, -m 65536): converted
#: here, declared "count" for the form and --set
BYTE_OPTIONS = (
    "send_size_bytes",
    "recv_size_bytes",
    "request_bytes",
    "response_bytes",
    "local_sockbuf_bytes",
    "remote_sockbuf_bytes",
)
WHOLE_NUMBER_OPTIONS = ("port", "duration_s", *BYTE_OPTIONS)


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
        for key in WHOLE_NUMBER_OPTIONS:
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
        for key in BYTE_OPTIONS:
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
