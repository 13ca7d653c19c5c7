"""oratcptest: Oracle's network test jar (MOS Doc ID 2064368.1), server and client.

``java -jar oratcptest.jar -server [HOST] -port=N`` listens; ``java -jar oratcptest.jar HOST
-port=N -mode=SYNC|ASYNC -interval=2s -duration=30s ...`` measures, printing one line per
interval::

    (13:53:36)     90.170 Mbytes/s           11.090 ms      <- SYNC: throughput and latency
    (18:08:22)        151.234 Mbytes/s                      <- ASYNC: throughput only

oratcptest says "(1 Mbyte = 1024x1024 bytes)": its Mbytes/s are MiB/s, and that is the unit
of ``throughput_mib_s``. The server must be listening before the client starts: :data:`PAIR`
tells :mod:`racperf_tui.orchestration.pair_runs` how to know (its "OraTcpTest server started." line).

Config (a mapping; keys are the fields of :class:`OratcptestConfig`). The java is found in
this order: the ``java`` key (or the persisted setting ``oratcptest.java``), ``$JAVA_HOME/bin/
java``, ``$ORACLE_HOME/jdk/bin/java``, ``java`` on PATH. The jar: the ``jar_path`` key, else the
persisted setting ``oratcptest.jar_path`` (see :func:`remember_jar_path`).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from racperf_tui.core import settings, units
from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.contract.tool import (
    READS,
    RUNS,
    WRITES,
    MetricSpec,
    PairMode,
    PairSpec,
    ProgramField,
    ToolDescription,
    options_from_dataclass,
)
from racperf_tui.core.guard.program_vetting import vet_program
from racperf_tui.tools.base import (
    ModuleTool,
    OptionsConfig,
    check_choice,
    check_range,
    on_another_node,
    option_whole_number,
    program_output,
)
from racperf_tui.tools.figures import MAX_LINE_CHARS, OutputParseError, Warnings, check_finite, finite_number

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

name = "oratcptest"

#: The jar's own defaults (used when an option is left unset, and to describe a run).
DEFAULT_LENGTH_BYTES = units.MIB
DEFAULT_INTERVAL_S = 10
DEFAULT_PORT = 5555
#: Seconds to allow the JVM to start and the test to finish beyond its duration.
STARTUP_ALLOWANCE_S = 30.0
#: Lifetime of a server run on its own (one waiting for a client from another node).
DEFAULT_SERVER_LIFETIME_S = 3600.0

SETTING_JAR_PATH = "oratcptest.jar_path"
SETTING_JAVA = "oratcptest.java"

#: The server's line meaning "listening"; the client may start after it.
SERVER_READY_RE = re.compile(r"OraTcpTest server started\.")
#: The server's line when its port is taken (the jar's exact wording).
SERVER_PORT_IN_USE_RE = re.compile(r"Failed to listen a socket\s*:\s*(.*)")

_INTERVAL_RE = re.compile(
    r"^\((?P<time>\d{1,2}:\d{2}:\d{2})\)\s+(?P<tput>[-+]?\d+(?:\.\d+)?)\s+Mbytes/s"
    r"(?:\s+(?P<lat>[-+]?\d+(?:\.\d+)?)\s+ms)?\s*$"
)
# Linear regexes only: no two neighbouring parts may match the same characters (a lazy
# ``.*?\s*$`` tries every split of a run of blanks: quadratic). Text is stripped by the code.
_STAMPED_RE = re.compile(r"^\((?P<time>\d{1,2}:\d{2}:\d{2})\)(?P<text>\s.*)$")
#: "   Key = value" (indented: parameters) and "Key = value" (the summary)
_KEY_VALUE_RE = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z][A-Za-z. ]*)=(?P<value>.*)$")
_LEADING_NUMBER_RE = re.compile(r"^([-+]?\d+(?:\.\d+)?)")
_SERVER_RCVBUF_RE = re.compile(r"socket receive buffer was (\d+) bytes")
_FREQ_RE = re.compile(r"^(?P<every>\d+[smhd]?)/(?P<total>\d+[smhd]?)$", re.IGNORECASE)
# --------------------------------------------------------------------------- config


@dataclass
class OratcptestConfig(OptionsConfig):
    """One end of an oratcptest run: every option of the jar, unit-named.

    ``role`` "server": ``host`` is the address to bind ("" = all), with ``port``, ``file``,
    ``sockbuf_bytes``. ``role`` "client": ``host`` is the server's address; the rest are the
    client options. ``None`` leaves an option to the jar's default.
    """

    role: str = "client"
    host: str = ""
    port: int = DEFAULT_PORT
    jar_path: str = ""
    java: str = ""
    # server
    file: str = ""
    server_lifetime_s: float = DEFAULT_SERVER_LIFETIME_S
    # both ends: -sockbuf (server: receive buffer; client: send buffer)
    sockbuf_bytes: int | None = None
    # client
    write: bool = False
    mode: str = "SYNC"
    num_conn: int = 1
    length_bytes: int | None = None
    delay_ms: int | None = None
    rtt: bool = False
    random_length: bool = False
    random_delay: bool = False
    payload: str = "RANDOM"
    interval_s: int = DEFAULT_INTERVAL_S
    duration_s: int = 30
    freq: str = ""
    timeout_s: int | None = None
    output: str = ""

    tool_name: ClassVar[str] = "oratcptest"

    def _normalise(self) -> None:
        """Accept friendly spellings: "1M" for sizes, "2m" for times, "sync" for modes."""
        self.role = str(self.role).strip().lower()
        self.mode = str(self.mode).strip().upper()
        self.host = str(self.host or "").strip()
        for key in ("sockbuf_bytes", "length_bytes"):
            value = getattr(self, key)
            if value is not None and value != "":
                setattr(self, key, parse_size_bytes(value, key))
            else:
                setattr(self, key, None)
        for key in ("interval_s", "duration_s", "timeout_s"):
            value = getattr(self, key)
            if value is None or value == "":
                setattr(self, key, None)
            else:
                seconds = parse_time_s(value, key)
                if seconds != int(seconds):
                    raise ValueError(
                        f"oratcptest: {key} must be whole seconds (the jar counts in seconds), got {value!r}"
                    )
                setattr(self, key, int(seconds))
        if self.delay_ms is not None and self.delay_ms != "":
            try:
                self.delay_ms = int(self.delay_ms)
            except (TypeError, ValueError):
                raise ValueError(
                    f"oratcptest: delay_ms must be a whole number of milliseconds, got {self.delay_ms!r}"
                ) from None
        else:
            self.delay_ms = None
        for key in ("port", "num_conn"):
            whole = option_whole_number("oratcptest", key, getattr(self, key))
            if whole is None:
                raise ValueError(f"oratcptest: {key} must be a whole number, got {getattr(self, key)!r}")
            setattr(self, key, whole)
        payload = str(self.payload or "RANDOM").strip()
        self.payload = payload.upper() if payload.upper() in ("RANDOM", "ZERO") else payload

    def validate(self) -> None:
        """Check every option; ValueError says which and why."""
        check_choice("oratcptest", "role", self.role, ("client", "server"))
        check_range("oratcptest", "port", self.port, 1, 65535)
        if self.sockbuf_bytes is not None and self.sockbuf_bytes < 1:
            raise ValueError(f"oratcptest: sockbuf_bytes must be at least 1 byte, got {self.sockbuf_bytes}")
        if self.role == "server":
            client_only = [k for k in ("write", "rtt", "random_length", "random_delay") if getattr(self, k)]
            if client_only:
                raise ValueError(
                    f"oratcptest: {', '.join(client_only)} are client options; the server takes "
                    "host, port, file and sockbuf_bytes"
                )
            if self.server_lifetime_s is None or float(self.server_lifetime_s) <= 0:
                raise ValueError("oratcptest: server_lifetime_s must be > 0 (a server run is bounded)")
            return
        if not self.host:
            raise ValueError("oratcptest: the client needs host (the address of the oratcptest server)")
        if self.file:
            raise ValueError(
                "oratcptest: file is a server option (the file the server writes with -write); set it on the server"
            )
        check_choice("oratcptest", "mode", self.mode, ("SYNC", "ASYNC"))
        if self.num_conn < 1:
            raise ValueError(f"oratcptest: num_conn must be at least 1, got {self.num_conn}")
        if self.length_bytes is not None and self.length_bytes < 0:
            raise ValueError(f"oratcptest: length_bytes must be >= 0, got {self.length_bytes}")
        if self.delay_ms is not None and self.delay_ms < 0:
            raise ValueError(f"oratcptest: delay_ms must be >= 0, got {self.delay_ms}")
        if self.rtt:
            if self.mode == "ASYNC":
                raise ValueError(
                    "oratcptest: rtt measures round trips (SYNC with empty messages); "
                    "it cannot be combined with mode=ASYNC"
                )
            if self.length_bytes not in (None, 0):
                raise ValueError("oratcptest: rtt sends empty messages; leave length_bytes unset")
        if self.random_length and (self.length_bytes is not None and self.length_bytes < 512):
            raise ValueError(
                "oratcptest: random_length draws lengths between 512 bytes and length_bytes; "
                f"length_bytes must be >= 512, got {self.length_bytes}"
            )
        if self.random_delay and not self.delay_ms:
            raise ValueError("oratcptest: random_delay draws delays between 0 and delay_ms; set delay_ms > 0")
        if self.payload not in ("RANDOM", "ZERO") and not Path(self.payload).is_file():
            raise ValueError(
                f"oratcptest: payload must be RANDOM, ZERO or an existing file; {self.payload!r} is not a file"
            )
        if self.interval_s is None or self.interval_s < 1:
            raise ValueError(f"oratcptest: interval_s must be at least 1 second, got {self.interval_s}")
        if self.duration_s is None or self.duration_s < 1:
            raise ValueError("oratcptest: duration_s is required (racperf runs are bounded) and must be >= 1 s")
        if self.interval_s > self.duration_s:
            raise ValueError(
                f"oratcptest: interval_s ({self.interval_s} s) is longer than duration_s "
                f"({self.duration_s} s): no interval would be reported"
            )
        if self.timeout_s is not None and self.timeout_s < 0:
            raise ValueError(f"oratcptest: timeout_s must be >= 0, got {self.timeout_s}")
        if self.freq:
            match = _FREQ_RE.match(self.freq.strip())
            if not match:
                raise ValueError(f"oratcptest: freq must look like EVERY/TOTAL, e.g. 1h/24h, got {self.freq!r}")
            every, total = parse_time_s(match["every"], "freq"), parse_time_s(match["total"], "freq")
            if every < self.duration_s:
                raise ValueError(
                    f"oratcptest: freq repeats every {every:g} s, shorter than one test "
                    f"(duration_s {self.duration_s} s)"
                )
            if total < every:
                raise ValueError(f"oratcptest: freq total ({total:g} s) is shorter than its period ({every:g} s)")

    # ------------------------------------------------------------------ argv

    def options(self) -> list[str]:
        """The jar's options for this end (after ``java -jar JAR``)."""
        if self.role == "server":
            argv = ["-server"]
            if self.host:
                argv.append(self.host)
            argv.append(f"-port={self.port}")
            if self.file:
                argv.append(f"-file={self.file}")
            if self.sockbuf_bytes is not None:
                argv.append(f"-sockbuf={self.sockbuf_bytes}")
            return argv
        argv = [self.host, f"-port={self.port}"]
        if self.write:
            argv.append("-write")
        if self.rtt:
            argv.append("-rtt")
        else:
            argv.append(f"-mode={self.mode}")
        if self.num_conn != 1:
            argv.append(f"-num_conn={self.num_conn}")
        if self.sockbuf_bytes is not None:
            argv.append(f"-sockbuf={self.sockbuf_bytes}")
        if self.length_bytes is not None:
            argv.append(f"-length={self.length_bytes}")
        if self.delay_ms is not None:
            argv.append(f"-delay={self.delay_ms}")
        if self.random_length:
            argv.append("-random_length")
        if self.random_delay:
            argv.append("-random_delay")
        if self.payload != "RANDOM":
            argv.append(f"-payload={self.payload}")
        argv.append(f"-interval={self.interval_s}s")
        argv.append(f"-duration={self.duration_s}s")
        if self.freq:
            argv.append(f"-freq={self.freq.strip()}")
        if self.timeout_s is not None:
            argv.append(f"-timeout={self.timeout_s}s")
        if self.output:
            argv.append(f"-output={self.output}")
        return argv


def parse_size_bytes(value: Any, what: str = "size") -> int:
    """``1048576``, ``"64k"``, ``"1M"``, ``"1 Mbyte"`` -> bytes (1024-based, as oratcptest)."""
    try:
        return units.size_bytes(value, what)
    except ValueError as exc:
        raise ValueError(f"oratcptest: {exc}") from None


def parse_time_s(value: Any, what: str = "time") -> float:
    """``30``, ``"30s"``, ``"2m"``, ``"1h"``, ``"30 seconds"`` -> seconds."""
    try:
        return units.duration_s(value, what)
    except ValueError as exc:
        raise ValueError(f"oratcptest: {exc}") from None


# --------------------------------------------------------------------------- java and jar


def locate_java(config: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """(path of java, where it came from). ValueError when none is usable, saying where we looked.

    Order: the config's ``java`` / the setting ``oratcptest.java`` > ``$JAVA_HOME/bin/java`` >
    ``$ORACLE_HOME/jdk/bin/java`` (every Oracle home ships a JDK) > ``java`` on PATH.
    """
    config = config or {}
    explicit = config.get("java") or ""
    source = "the java option"
    if not explicit:
        explicit = settings.get(SETTING_JAVA) or ""
        source = f"the setting {SETTING_JAVA}"
    if explicit:
        path = shutil.which(explicit) if os.sep not in explicit else explicit
        if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
            raise ValueError(f"oratcptest: java {explicit!r} (from {source}) is not an executable file")
        vet_program(path, f"oratcptest: java (from {source})")
        return path, source
    looked = []
    for var, rel in (("JAVA_HOME", ("bin", "java")), ("ORACLE_HOME", ("jdk", "bin", "java"))):
        home = os.environ.get(var)
        if home:
            candidate = os.path.join(home, *rel)
            looked.append(candidate)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate, f"${var}"
        else:
            looked.append(f"${var} (not set)")
    on_path = shutil.which("java")
    if on_path:
        return on_path, "PATH"
    looked.append("java on PATH (none)")
    raise ValueError(
        "oratcptest needs Java (JRE 6 or later) and none was found; looked at "
        + ", ".join(looked)
        + ". Set JAVA_HOME, or the java option, to a java executable"
    )


def find_java(config: Mapping[str, Any] | None = None) -> str:
    """The java executable to run the jar with (see :func:`locate_java`)."""
    return locate_java(config)[0]


def find_jar(config: Mapping[str, Any] | None = None) -> str:
    """The jar: the config's ``jar_path``, else the persisted setting. ValueError when missing."""
    config = config or {}
    jar = config.get("jar_path") or settings.get(SETTING_JAR_PATH) or ""
    if not jar:
        raise ValueError(
            "oratcptest: the path of oratcptest.jar is not configured (download it from My "
            "Oracle Support, Doc ID 2064368.1, and set jar_path once)"
        )
    jar = os.path.expanduser(str(jar))
    if not os.path.isfile(jar):
        raise ValueError(f"oratcptest: jar_path {jar!r} does not exist or is not a file")
    vet_program(os.path.abspath(jar), "oratcptest: jar_path (java runs its code)")
    return jar


def remember_jar_path(jar_path: str, data_dir: str | None = None) -> None:
    """Persist the jar's path so it is configured once."""
    settings.set(SETTING_JAR_PATH, str(Path(jar_path).expanduser().absolute()), data_dir)


# --------------------------------------------------------------------------- Tool protocol


def build_argv(config: Mapping[str, Any]) -> list[str]:
    """``[java, "-jar", jar, ...options]`` for one end; ValueError says what is wrong."""
    cfg = OratcptestConfig.from_mapping(config)
    return [find_java(config), "-jar", find_jar(config), *cfg.options()]


#: java on a node, looked for there in :func:`locate_java`'s order: $1 the config's java
#: (may be empty). Prints the path and where it came from, or exits 1 saying where it looked.
_NODE_JAVA_SH = r"""
if [ -n "$1" ]; then
  j=$1; case $j in */*) ;; *) j=$(command -v -- "$j") ;; esac
  if [ -n "$j" ] && [ -f "$j" ] && [ -x "$j" ]; then printf '%s\tthe java option\n' "$j"; exit 0; fi
  echo "java $1 (from the java option) is not an executable file"; exit 1
fi
if [ -n "$JAVA_HOME" ] && [ -x "$JAVA_HOME/bin/java" ]; then printf '%s\t$JAVA_HOME\n' "$JAVA_HOME/bin/java"; exit 0; fi
if [ -n "$ORACLE_HOME" ] && [ -x "$ORACLE_HOME/jdk/bin/java" ]; then
  printf '%s\t$ORACLE_HOME\n' "$ORACLE_HOME/jdk/bin/java"; exit 0
fi
j=$(command -v java) && [ -n "$j" ] && { printf '%s\tPATH\n' "$j"; exit 0; }
echo "looked at \$JAVA_HOME/bin/java, \$ORACLE_HOME/jdk/bin/java, java on PATH"; exit 1
"""


def locate_java_on(host: Host, config: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """:func:`locate_java` on another node (its JAVA_HOME, ORACLE_HOME and PATH; this
    machine's remembered java is this machine's). ValueError names the node."""
    explicit = str((config or {}).get("java") or "")
    try:
        answer = host.run_briefly(["sh", "-c", _NODE_JAVA_SH, "racperf-java", explicit], 15.0)
    except OSError as exc:
        raise ValueError(f"oratcptest: cannot look for java on {host.name}: {exc}") from None
    path, _, source = answer.stdout.strip().partition("\t")
    if answer.returncode != 0 or not path.startswith("/"):
        raise ValueError(
            f"oratcptest needs Java (JRE 6 or later) on {host.name} and none was found there: "
            f"{answer.text.strip()[:200] or answer.returncode}. Set the java option to a java on {host.name}"
        )
    return path, f"{source} on {host.name}"


def invocation(config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
    """One end on ``host``: on another node, java is found there and the jar must be there
    (the config's ``jar_path``, else the remembered one, as a path on that node)."""
    if not on_another_node(host):
        return Invocation(argv=build_argv(config), hard_limit_s=hard_limit_s(config))
    cfg = OratcptestConfig.from_mapping(config)
    java, _source = locate_java_on(host, config)
    jar = str(config.get("jar_path") or settings.get(SETTING_JAR_PATH) or "")
    if not jar:
        find_jar(config)  # the message of a jar never configured
    answer = host.run_briefly(["sh", "-c", '[ -f "$1" ]', "racperf-jar", jar], 15.0)
    if answer.returncode != 0:
        raise ValueError(f"oratcptest: jar_path {jar!r} does not exist on {host.name} or is not a file")
    return Invocation(argv=[java, "-jar", jar, *cfg.options()], hard_limit_s=hard_limit_s(config))


def hard_limit_s(config: Mapping[str, Any]) -> float:
    """Client: duration (+ the -freq span, + timeout) plus JVM start-up slack. Server: its lifetime."""
    cfg = OratcptestConfig.from_mapping(config)
    if cfg.role == "server":
        return float(cfg.server_lifetime_s)
    span = float(cfg.duration_s)
    if cfg.freq:
        match = _FREQ_RE.match(cfg.freq.strip())
        assert match is not None
        span = parse_time_s(match["total"]) + cfg.duration_s
    return span * 1.1 + (cfg.timeout_s or 0) + STARTUP_ALLOWANCE_S


def _key_value(line: str, indented: bool) -> tuple[str, str] | None:
    """("Key", "value") of a "   Key = value" line (``indented``: the parameter block's form)."""
    match = _KEY_VALUE_RE.match(line)
    if match is None or (indented and not match["indent"]):
        return None
    return match["key"].strip(), match["value"].strip()


def _interval_figures(match: re.Match[str]) -> dict[str, float] | None:
    """An interval line's figures, None when one is impossible (negative, infinite)."""
    tput = finite_number(match["tput"])
    if tput is None:
        return None
    figures = {"throughput_mib_s": tput}
    if match["lat"] is not None:
        lat = finite_number(match["lat"])
        if lat is None:
            return None
        figures["latency_ms"] = lat
    return figures


def _clock_s(hhmmss: str) -> int:
    h, m, s = (int(x) for x in hhmmss.split(":"))
    return h * 3600 + m * 60 + s


def _valid_clock(hhmmss: str) -> bool:
    h, m, s = (int(x) for x in hhmmss.split(":"))
    return h < 24 and m < 60 and s < 61


class OratcptestStreamParser:
    """Client output lines -> one Sample per interval line.

    ``t`` comes from oratcptest's own clock: seconds from "(HH:MM:SS) The server is ready."
    (midnight wrap handled); before that line, from the first line's arrival.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.mode = str((config or {}).get("mode", "SYNC")).upper()
        self._origin_clock_s: int | None = None
        self._last_clock_s: int | None = None
        self._days = 0
        self._started = time.monotonic()

    def _t(self, hhmmss: str) -> float:
        clock = _clock_s(hhmmss)
        if self._last_clock_s is not None and clock < self._last_clock_s - 43200:
            self._days += 1
        self._last_clock_s = clock
        clock += self._days * 86400
        if self._origin_clock_s is None:
            return round(time.monotonic() - self._started, 3)
        return float(clock - self._origin_clock_s)

    def feed(self, line: str) -> list[Sample]:
        """One output line; a Sample when it is an interval line with possible figures."""
        if len(line) > MAX_LINE_CHARS:
            return []
        match = _INTERVAL_RE.match(line)
        if match:
            metrics = _interval_figures(match)
            if metrics is None or not _valid_clock(match["time"]):
                return []  # "-90.170 Mbytes/s" is no measurement
            return [Sample(t=self._t(match["time"]), metrics=metrics, extra={"time": match["time"]})]
        stamped = _STAMPED_RE.match(line)
        if stamped and stamped["text"].strip().startswith("The server is ready") and _valid_clock(stamped["time"]):
            self._origin_clock_s = _clock_s(stamped["time"])
            self._last_clock_s = self._origin_clock_s
            self._days = 0
        return []

    def finish(self) -> list[Sample]:
        """Nothing is buffered: every interval line is complete on its own."""
        return []


def stream_parser(config: Mapping[str, Any]) -> OratcptestStreamParser:
    """A fresh live parser for one client run (the server prints no interval lines)."""
    return OratcptestStreamParser(config)


def _payload_bytes(text: str) -> int | None:
    try:
        return parse_size_bytes(text.strip(), "message payload")
    except ValueError:
        return None


def _duration_s(text: str) -> float | None:
    text = text.strip()
    if text.upper() == "NO":
        return None
    try:
        seconds = parse_time_s(text, "duration")
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) else None


def _small_int(text: str) -> int | None:
    """A count as printed ("2"), None when it is none (empty, words, absurdly long)."""
    number = finite_number(text) if text.isascii() and text.isdigit() else None
    return None if number is None else int(number)


def _snake(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


def _parse_server(lines: list[str], warnings: Warnings) -> dict[str, Any]:
    result: dict[str, Any] = {"tool": "oratcptest", "role": "server", "started": False, "tests": []}
    test: dict[str, Any] | None = None
    for lineno, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_CHARS:
            warnings.long_line(lineno, len(line))
            continue
        stripped = line.strip()
        failure = SERVER_PORT_IN_USE_RE.search(stripped)
        if failure:
            result["error"] = stripped
            continue
        if SERVER_READY_RE.search(stripped):
            result["started"] = True
        elif stripped.startswith("[A test was requested"):
            test = {"parameters": {}}
            result["tests"].append(test)
        elif test is not None and (kv := _key_value(line, indented=True)):
            key, value = kv
            test["parameters"][_snake(key)] = value
            if key == "Message payload":
                test["message_payload_bytes"] = _payload_bytes(value)
            elif key == "Disk write":
                test["disk_write"] = value.upper() != "NO"
            elif key == "Socket receive buffer":
                test["socket_receive_buffer_requested"] = value
        elif test is not None and (m := _SERVER_RCVBUF_RE.search(stripped)):
            size = finite_number(m[1])
            if size is None:
                warnings.add(f"line {lineno}: socket receive buffer of {len(m[1])} digits, skipped")
                continue
            test["socket_receive_buffer_bytes"] = int(size)
            test["terminated"] = True
    return warnings.into(result)


def _parse_client(lines: list[str], warnings: Warnings) -> dict[str, Any]:
    result: dict[str, Any] = {"tool": "oratcptest", "role": "client"}
    tests: list[dict[str, Any]] = []
    test: dict[str, Any] | None = None
    section = None
    messages: list[str] = []
    for lineno, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_CHARS:
            warnings.long_line(lineno, len(line))
            continue
        stripped = line.strip()
        if not stripped:
            if section == "parameters":
                section = "run"
            continue
        if stripped.startswith("[Requesting a test"):
            test = {"parameters": {}, "samples": []}
            tests.append(test)
            section = "parameters"
            continue
        if test is None:
            messages.append(stripped)
            continue
        match = _INTERVAL_RE.match(line)
        if match:
            figures = _interval_figures(match)
            if figures is None:
                warnings.add(f"line {lineno}: interval with a negative or infinite figure, skipped: {stripped[:60]!r}")
            else:
                test["samples"].append({"time": match["time"], **figures})
            section = "run"
            continue
        stamped = _STAMPED_RE.match(line)
        if stamped:
            text = stamped["text"].strip()
            if text.startswith("The server is ready"):
                test["server_ready_time"] = stamped["time"]
            elif text.startswith("Test finished"):
                test["finished_time"] = stamped["time"]
                section = "summary"
            else:
                messages.append(stripped)
            continue
        kv = _key_value(line, indented=section != "summary")
        if kv and section == "parameters":
            test["parameters"][kv[0]] = kv[1]
            continue
        if kv and section == "summary":
            key, value = kv
            match = _LEADING_NUMBER_RE.match(value)
            number = finite_number(match[1]) if match else None
            figure_key = (
                "socket_send_buffer_bytes"
                if key == "Socket send buffer"
                else "avg_throughput_mib_s"
                if key.startswith("Avg. throughput")
                else "avg_latency_ms"
                if key.startswith("Avg. latency")
                else None
            )
            if figure_key and match and number is None:
                warnings.add(f"line {lineno}: {key} = {value[:40]!r} is no possible figure, skipped")
            elif figure_key and number is not None:
                test[figure_key] = int(number) if figure_key.endswith("_bytes") else number
            else:
                test.setdefault("summary", {})[key] = value
            continue
        if section == "parameters" and stripped.startswith("(1 Mbyte"):
            continue
        if stripped.startswith("Throughput"):
            continue  # the column header
        messages.append(stripped)
    if not tests:
        raise OutputParseError(
            "not oratcptest output: no '[Requesting a test]' block (client) and no "
            "'OraTcpTest server started.' line (server)"
        )
    for test in tests:
        params = test["parameters"]
        mode = params.get("Transport mode", "").strip().upper() or (
            "SYNC" if any("latency_ms" in s for s in test["samples"]) else "ASYNC"
        )
        test["mode"] = mode
        test["message_payload_bytes"] = _payload_bytes(params.get("Message payload", ""))
        test["interval_s"] = _duration_s(params.get("Statistics interval", ""))
        test["duration_s"] = _duration_s(params.get("Test duration", ""))
        test["number_of_connections"] = _small_int(params.get("Number of connections", ""))
        test["disk_write"] = params.get("Disk write", "NO").upper() != "NO"
        test["payload_content_type"] = params.get("Payload content type")
        test["socket_send_buffer_requested"] = params.get("Socket send buffer")
    last = tests[-1]
    ordered = [
        "mode",
        "message_payload_bytes",
        "interval_s",
        "duration_s",
        "number_of_connections",
        "payload_content_type",
        "disk_write",
        "socket_send_buffer_requested",
        "server_ready_time",
        "samples",
        "finished_time",
        "socket_send_buffer_bytes",
        "avg_throughput_mib_s",
        "avg_latency_ms",
    ]
    for key in ordered:
        if key in last:
            result[key] = last[key]
    if last["mode"] == "ASYNC":
        result.pop("avg_latency_ms", None)
    result["parameters"] = {_snake(k): v for k, v in last["parameters"].items()}
    if len(tests) > 1:  # -freq repeats the test
        result["samples"] = [s for t in tests for s in t["samples"]]
        result["tests"] = [{k: t[k] for k in ordered if k in t} for t in tests]
    if "summary" in last:
        result["summary"] = last["summary"]
    if messages:
        result["messages"] = messages[:1000]
    return warnings.into(result)


def parse_output(text: str) -> dict[str, Any]:
    """A saved oratcptest output (client or server side) -> result dict.

    Client: ``{"tool": "oratcptest", "role": "client", "mode", "message_payload_bytes",
    "interval_s", "duration_s", "samples": [{"time", "throughput_mib_s", "latency_ms"}],
    "socket_send_buffer_bytes", "avg_throughput_mib_s", "avg_latency_ms", "parameters", ...}``
    (latency keys absent in ASYNC). Server: ``{"role": "server", "started", "tests": [...]}``
    or ``"error"`` (e.g. port in use).
    """
    lines = text.splitlines()
    warnings = Warnings()
    if any(SERVER_READY_RE.search(l) or SERVER_PORT_IN_USE_RE.search(l) for l in lines) and not any(
        l.strip().startswith("[Requesting a test") for l in lines
    ):
        result = _parse_server(lines, warnings)
    else:
        result = _parse_client(lines, warnings)
    check_finite(result, "oratcptest output")
    return result


def parse_result(output: str) -> dict[str, Any]:
    """The whole output of a finished run -> result dict (see :func:`parse_output`)."""
    return parse_output(output)


def succeeded(result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
    """Judged by the output: a client needs interval lines and a summary; a server must have started."""
    if not result:
        return False, f"no oratcptest output (exit status {exit_status})"
    if result.get("error"):
        return False, str(result["error"])
    if result.get("role") == "server":
        if not result.get("started"):
            return False, "the oratcptest server never said it started"
        return True, "server ran"
    if not result.get("samples"):
        detail = "; ".join(result.get("messages", [])[:2])
        return False, "no interval lines" + (f": {detail}" if detail else "")
    if "avg_throughput_mib_s" not in result:
        return False, "the test did not finish (no summary)"
    if exit_status not in (0, None):
        return False, f"oratcptest exited with status {exit_status}"
    return True, "finished"


# --------------------------------------------------------------------------- two ends

#: How both ends run (read by racperf_tui.orchestration.pair_runs): the JVM may take a while to listen.
PAIR = PairSpec(
    ready_pattern=SERVER_READY_RE,
    failure_pattern=SERVER_PORT_IN_USE_RE,
    default_port=DEFAULT_PORT,
    failure_hint="pick another port (racperf checks ports before starting; see the suggestion)",
    ready_timeout_s=20.0,
    modes=(PairMode("SYNC", {"mode": "SYNC"}), PairMode("ASYNC", {"mode": "ASYNC"})),
    client_fields={
        "host": "host",
        "port": "port",
        "duration_s": "duration_s",
        "interval_s": "interval_s",
        "length": "length_bytes",
        "connections": "num_conn",
        "write": "write",
    },
    server_fields={"host": "host", "port": "port"},
    program=ProgramField(
        "oratcptest.jar path", "oratcptest.jar (MOS Doc ID 2064368.1)", "oratcptest.jar_path", (("jar_path", ""),)
    ),
    runtime=ProgramField(
        "Java (oratcptest)", "$JAVA_HOME, $ORACLE_HOME/jdk or PATH", "oratcptest.java", (("java", ""),)
    ),
)


install_hint = (
    "Java (JRE 6 or later): apt-get install default-jre-headless / dnf install "
    "java-17-openjdk-headless (or use $ORACLE_HOME/jdk); oratcptest.jar: My Oracle Support, "
    "Doc ID 2064368.1"
)


def tool_version(argv: list[str], host: Host | None = None) -> str | None:
    """The jar prints no version; record the java that ran it (``java -version`` on the run's
    host, first line)."""
    text = (program_output([argv[0], "-version"], host=host) or "").strip()
    return f"oratcptest.jar on {text.splitlines()[0][:150]}" if text else None


_HELP = {
    "role": "which end this run is",
    "host": "client: the server's address; server: the address to bind (empty: all)",
    "port": "the server's port",
    "jar_path": "oratcptest.jar (remembered once found)",
    "java": "the java program (default: JAVA_HOME, ORACLE_HOME/jdk, PATH)",
    "file": "the file the server writes into with write",
    "server_lifetime_s": "seconds before a server run ends by itself",
    "sockbuf_bytes": "socket buffer (-sockbuf), e.g. 4M",
    "write": "the server writes each message to file (SYNC redo)",
    "mode": "SYNC: each message waits for the ACK; ASYNC: a stream",
    "num_conn": "parallel connections (-num_conn)",
    "length_bytes": "message length (-length), e.g. 1M",
    "delay_ms": "pause between messages (-delay)",
    "rtt": "round-trip latency only (-rtt)",
    "random_length": "random message lengths up to length_bytes (-random_length)",
    "random_delay": "random delays up to delay_ms (-random_delay)",
    "payload": "message contents (-payload): RANDOM, ZERO or a file",
    "interval_s": "seconds between live figures (-interval)",
    "duration_s": "seconds to send (-duration)",
    "freq": "how often to send, e.g. 1.0/10 (-freq)",
    "timeout_s": "the client's connect timeout (-timeout)",
    "output": "a file the jar also writes its report to (-output)",
}
OPTIONS = options_from_dataclass(
    OratcptestConfig,
    _HELP,
    choices={"role": ("client", "server"), "mode": ("SYNC", "ASYNC")},
    kinds={"jar_path": "path", "java": "path", "file": "path", "output": "path", "port": "count", "num_conn": "count"}
    | dict.fromkeys(("sockbuf_bytes", "length_bytes"), "size")
    # the jar counts whole seconds and milliseconds: counts, so the Network tab rounds to them
    | dict.fromkeys(("delay_ms", "interval_s", "duration_s", "timeout_s"), "count")
    | {"server_lifetime_s": "duration"},
    units=dict.fromkeys(("interval_s", "duration_s", "timeout_s"), "seconds") | {"delay_ms": "milliseconds"},
    access={"jar_path": RUNS, "java": RUNS, "file": WRITES, "output": WRITES, "payload": READS},
    ends={k: "server" for k in ("file", "server_lifetime_s")}
    | {
        k: "client"
        for k in (
            "write",
            "mode",
            "num_conn",
            "length_bytes",
            "delay_ms",
            "rtt",
            "random_length",
            "random_delay",
            "payload",
            "interval_s",
            "duration_s",
            "freq",
            "timeout_s",
            "output",
        )
    },
)
METRICS = (
    MetricSpec("throughput_mib_s", "throughput", "MiB/s", chart="throughput_mib", quantity="throughput"),
    MetricSpec("latency_ms", "latency", "ms", decimals=3, chart="latency", quantity="latency"),
)
RESULTS = (
    MetricSpec("avg_throughput_mib_s", "throughput", "MiB/s", quantity="throughput"),
    MetricSpec("avg_latency_ms", "latency", "ms", decimals=3, quantity="latency"),
)
DESCRIPTION = ToolDescription(
    name=name,
    summary="Oracle's network test for Data Guard redo transport",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
)

#: The Tool (racperf_tui.core.contract.tool.Tool). The jar reports its failures on stdout; stderr holds
#: JVM errors worth a look, so both are read.
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
    stop_grace_s=3.0,
    description=DESCRIPTION,
    invocation=invocation,
)
