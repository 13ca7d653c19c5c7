"""fio's own client/server mode on the run contract: ``fio --server`` already running on the
nodes, racperf as ``fio --client``; its result per server and the "All clients" total
(:mod:`racperf_tui.tools.fio.client_server_result`). docs/FIO_CLIENT_SERVER.md says what it
does and where its safety ends.

The job is the fio tool's: the same options (:class:`~racperf_tui.tools.fio.config.FioConfig`),
resolved by fio itself and judged against the same allow list (:mod:`racperf_tui.tools.fio.plan`),
written as one job file that fio must read back as judged. What client mode adds:

- every path of the job is a target on EACH server (``Target.node``: the server's address),
  which the orchestration judges with the write guard on that node, before the client
  connects; the paths must be absolute (a server opens a relative one in its own working
  directory) and named with ``filename=`` (fio's generated names can carry the server's
  address in client mode);
- options fio would run on the server outside the job (log prefixes written there, fio's
  top-level options, which the client does not send) are refused or left out, saying so;
- each server must answer on its port before anything is sent: one that does not is named;
- no live figures: fio's client receives no periodic status from its servers (fio issue 712),
  so the description's ``live_note`` says so instead of empty charts.

racperf does not start the servers: a fio server runs ANY job any client sends it, as its
user, ``exec_prerun`` included. racperf never sends a job its plan refuses, but it cannot vouch
for what else reaches a server it did not start.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shlex
import socket
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from racperf_tui.core import units
from racperf_tui.core.contract.invocation import Invocation, Target
from racperf_tui.core.contract.tool import READS, MetricSpec, ResultTable, ToolDescription, ToolOption
from racperf_tui.tools.fio import (
    JOB_FILE_NAME,
    fio_on,
    fio_option_table,
    fio_path,
    install_hint,
    plan_hard_limit,
    verify_planned_job,
)
from racperf_tui.tools.fio import OPTIONS as FIO_OPTIONS
from racperf_tui.tools.fio.client_server_result import SERVERS_FILE, parse_output, server_name, succeeded
from racperf_tui.tools.fio.config import FioConfig
from racperf_tui.tools.fio.plan import FioPlan, FioPlanError, plan, split_fio_list
from racperf_tui.tools.fio.policy import LOG_PREFIX_OPTIONS

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

NAME = "fio_cs"
#: fio's default server port (fio's server.h FIO_NET_PORT)
DEFAULT_PORT = 8765
#: how long a server may take to accept the check's connection
CONNECT_TIMEOUT_S = 3.0
MAX_SERVERS = 64
LIVE_NOTE = "fio client/server mode: no live figures (fio issue 712); results per host at the end"
_HOST_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$")
#: the fio tool's options that mean nothing here (no live dumps)
_NOT_HERE = {"status_interval_s"}


def _server(text: str) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT``, ``HOST,PORT`` (fio's own spelling) or ``[V6]:PORT`` -> (host, port)."""
    raw = text.strip()
    host, port_text = raw, ""
    if raw.startswith("["):
        host, _, rest = raw[1:].partition("]")
        port_text = rest.lstrip(":,")
    elif raw.count(":") == 1 or "," in raw:
        host, _, port_text = raw.replace(",", ":", 1).rpartition(":")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not _HOST_RE.match(host):
            raise ValueError(f"{NAME}: servers: {text!r} is not HOST[:PORT] (an IP address or host name)") from None
    port = DEFAULT_PORT
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"{NAME}: servers: {text!r}: the port must be 1 to 65535")
        port = int(port_text)
    return host, port


def parse_servers(value: Any) -> list[tuple[str, int]]:
    """The config's ``servers`` (a list, or one space separated text) -> (host, port)
    each, in order; ValueError naming the entry."""
    items = value if isinstance(value, (list, tuple)) else [value or ""]
    # a form's field holds them all in one text, space separated
    servers = [_server(word) for item in items for word in str(item).split()]
    if not servers:
        raise ValueError(f"{NAME}: servers: give at least one fio server, HOST[:PORT] (fio --server runs there)")
    if len(servers) > MAX_SERVERS:
        raise ValueError(f"{NAME}: servers: at most {MAX_SERVERS}, got {len(servers)}")
    if len(set(servers)) != len(servers):
        raise ValueError(f"{NAME}: servers: a server is named twice")
    return servers


def client_argument(host: str, port: int) -> str:
    """fio's ``--client=`` value: ``ip6:ADDR,PORT`` for IPv6, else ``HOST,PORT``."""
    return f"--client=ip6:{host},{port}" if ":" in host else f"--client={host},{port}"


def job_config(config: Mapping[str, Any]) -> FioConfig:
    """The fio job of the config, checked as the fio tool checks it, but for its target: that
    is a path on the servers, which this machine cannot look at (each server's guard does)."""
    cfg = FioConfig.from_dict({k: v for k, v in config.items() if k != "target"})
    cfg.target = str(config.get("target") or "").strip()
    errors = [e for e in cfg.validate() if not e.startswith("target:") and not e.startswith("size: needed")]
    if not cfg.custom:
        if not cfg.target:
            errors.append("target: give the file or block device the servers work on (its path on every server)")
        elif not os.path.isabs(cfg.target):
            errors.append(f"target: {cfg.target} is relative; a fio server opens it in its own working directory")
    if errors:
        raise ValueError(f"{NAME}: " + "; ".join(errors))
    return cfg


def client_mode_refusals(fio_plan: FioPlan) -> list[str]:
    """What the plan asks that client mode cannot keep safe, each naming the job and option."""
    problems = []
    for job in fio_plan.jobs:
        names = split_fio_list(job.options.get("filename"))
        if not names:
            problems.append(
                f"{job.where}: no filename=: name the file or device on the servers (in client mode fio's "
                "generated file names can carry the server's address)"
            )
        directories = split_fio_list(job.options.get("directory"))
        for name in [d for d in directories if not os.path.isabs(d)] + [n for n in names if not os.path.isabs(n)]:
            problems.append(f"{job.where}: {name} is relative; a fio server opens it in its own working directory")
        if directories:
            # a server puts the client's address before every name under a directory (fio's
            # set_name_idx, unique_filename=1): D/f is written as D/ADDRESS.f, and an absolute
            # name as D/ADDRESS./NAME: never the path judged
            problems.append(
                f"{job.where}: directory= in client mode: a fio server writes DIRECTORY/CLIENT-ADDRESS.NAME, "
                "not the path racperf judges; give the file's absolute path in filename= instead"
            )
        for option in sorted(LOG_PREFIX_OPTIONS & set(job.options)):
            problems.append(f"{job.where}: {option} writes its log on the servers; racperf refuses it in client mode")
    return problems


def _server_access(target: Target) -> str:
    """What a server may do to the target: a file a read job finds shorter than its size is
    laid out by fio, rewritten whole (filesetup.c extend_file), and only ``--readonly``, which
    the client does not send, stops that: so every file is judged as written; a device (under
    /dev) fio never lays out."""
    if target.access == "read" and (target.path == "/dev" or target.path.startswith("/dev/")):
        return "read"
    return "write"


def check_servers_answer(servers: list[tuple[str, int]], timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """ValueError naming every server that does not accept a connection on its port."""
    problems = []
    for host, port in servers:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                pass
        except OSError as exc:
            why = exc.strerror or str(exc) or type(exc).__name__
            problems.append(
                f"no fio server answers at {server_name(host, port)} ({why}); start it there with "
                f"fio --server={host},{port}"
            )
    if problems:
        raise ValueError(f"{NAME}: " + "; ".join(problems))


def invocation(config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
    """``fio --output-format=json --client=S1 JOB --client=S2 JOB ...`` on the job fio itself
    resolved and racperf judged; every path of it a target on every server. ValueError
    (FioPlanError) names every refused option, a bad server or one that does not answer.
    ``host``: where the client runs (--node): the fio there reads the job, as for the fio tool."""
    servers = parse_servers(config.get("servers"))
    cfg = job_config(config)
    fio = fio_on(host)
    fio_plan = plan(fio, fio_option_table(fio, host), cfg.fio_args(), host=host)
    problems = client_mode_refusals(fio_plan)
    if problems:
        raise FioPlanError(problems)
    verify_planned_job(fio, fio_plan, host)
    spec = config.get("host_spec")
    if not (isinstance(spec, Mapping) and spec.get("host") not in (None, "local")):
        # from this machine; a client run on another node (--node) connects from there, and
        # a server it cannot reach fails the run by name at the end (parse_result_files)
        check_servers_answer(servers)
    notes = ["fio client/server mode: the servers run the job; no live figures (fio issue 712)"]
    if fio_plan.top_level:
        given = ", ".join(f"--{a.name}" for a in fio_plan.top_level)
        notes.append(f"{given}: fio's own options are not sent to the servers; left out")
    job_path = os.path.join(run_dir or "<run directory>", JOB_FILE_NAME)
    argv = [fio, "--output-format=json"]
    targets: list[Target] = []
    for server, port in servers:
        argv += [client_argument(server, port), job_path]
        name = server_name(server, port)
        targets += [
            Target(t.path, _server_access(t), f"{t.origin} on fio server {name}", node=server) for t in fio_plan.targets
        ]
    return Invocation(
        argv=argv,
        cwd=".",
        files={
            JOB_FILE_NAME: fio_plan.job_file_text,
            SERVERS_FILE: json.dumps([server_name(h, p) for h, p in servers]),
        },
        result_files=(SERVERS_FILE,),
        targets=tuple(targets),
        hard_limit_s=plan_hard_limit(fio_plan),
        notes=tuple(notes),
        detail=fio_plan,
    )


def build_argv(config: Mapping[str, Any]) -> list[str]:
    """The argv of :func:`invocation` (its job file not yet placed)."""
    return invocation(config).argv


def command_preview(config: Mapping[str, Any]) -> str:
    """What the form shows: the client's command line and the job it sends (unvalidated)."""
    try:
        servers = parse_servers(config.get("servers"))
    except ValueError:
        servers = []
    cfg = FioConfig.from_dict(config)
    line = ["fio", "--output-format=json"]
    for host, port in servers:
        line += [client_argument(host, port), JOB_FILE_NAME]
    return shlex.join(line) + "  # " + JOB_FILE_NAME + ": " + shlex.join(cfg.fio_args())


def parse_result_files(output: str, files: Mapping[str, str]) -> dict[str, Any]:
    """The result, with the servers the run asked for (its servers file) named when missing."""
    expected: list[str] | None = None
    try:
        listed = json.loads(files.get(SERVERS_FILE) or "null")
    except ValueError:
        listed = None
    if isinstance(listed, list):
        expected = [str(s) for s in listed]
    return parse_output(output, expected)


class NoLiveFigures:
    """fio's client prints nothing per interval (fio issue 712): no Samples while it runs."""

    def feed(self, line: str) -> list[Any]:
        return []

    def finish(self) -> list[Any]:
        return []


# ---------------------------------------------------------------------------- description

_SERVERS_OPTION = ToolOption(
    "servers",
    "list",
    [],
    "the fio servers, HOST[:PORT] (port 8765 by default), each a node of the cluster file (or this "
    "machine by a loopback address), where fio --server already runs",
    repeatable=True,
)
_CLUSTER_OPTION = ToolOption(
    "cluster_file",
    "path",
    None,
    "the cluster file whose nodes the servers are (default: ~/.config/racperf/cluster.toml)",
    access=READS,
)
OPTIONS = (
    _SERVERS_OPTION,
    _CLUSTER_OPTION,
    *(
        replace(o, default="", help="the file or block device on every server (an absolute path)")
        if o.name == "target"
        else o
        for o in FIO_OPTIONS
        if o.name not in _NOT_HERE
    ),
)
_IOPS = MetricSpec("total_iops", "IOPS", "IOPS", decimals=0)
RESULTS = (
    _IOPS,
    MetricSpec("read_iops", "read IOPS", "IOPS", decimals=0),
    MetricSpec("write_iops", "write IOPS", "IOPS", decimals=0),
    MetricSpec("read_bw_kib_s", "read BW", "MiB/s", divisor=1024.0),
    MetricSpec("write_bw_kib_s", "write BW", "MiB/s", divisor=1024.0),
)
_HOST_COLUMNS = (
    MetricSpec("read_iops", "read IOPS", "IOPS", decimals=0),
    MetricSpec("write_iops", "write IOPS", "IOPS", decimals=0),
    MetricSpec("read_bw", "read", "MiB/s", divisor=1024.0),
    MetricSpec("write_bw", "write", "MiB/s", divisor=1024.0),
    MetricSpec("read_mib", "read", "MiB", divisor=1024.0 * 1024.0),
    MetricSpec("write_mib", "written", "MiB", divisor=1024.0 * 1024.0),
    MetricSpec("read_clat", "read clat mean", "µs"),
    MetricSpec("write_clat", "write clat mean", "µs"),
    MetricSpec("runtime", "runtime", "s", divisor=1000.0),
    MetricSpec("jobs", "jobs"),
)


def _host_row(label: str, figures: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    read, write = figures.get("read") or {}, figures.get("write") or {}
    return (
        (label,),
        (
            read.get("iops"),
            write.get("iops"),
            read.get("bw_kib_s"),
            write.get("bw_kib_s"),
            read.get("io_bytes"),
            write.get("io_bytes"),
            read.get("clat_mean_us"),
            write.get("clat_mean_us"),
            max(float(read.get("runtime_ms") or 0), float(write.get("runtime_ms") or 0)),
            figures.get("jobs"),
        ),
    )


class FioClientServerDescription(ToolDescription):
    """Its result is a row per server and the All clients row; its plan, runtime + ramp."""

    def result_sections(self, result: Mapping[str, Any] | None) -> list[ResultTable]:
        if result is None:
            return []
        rows = [_host_row(str(h.get("server")), h) for h in result.get("hosts") or [] if isinstance(h, Mapping)]
        if isinstance(result.get("total"), Mapping):
            rows.append(_host_row("All clients", result["total"]))
        tables = [ResultTable("Per server and all clients", ("server",), _HOST_COLUMNS, tuple(rows), key="hosts")]
        disks = [d for d in result.get("disk_util") or [] if isinstance(d, Mapping)]
        if disks:
            columns = (MetricSpec("util", "util", "%"), MetricSpec("r", "read I/Os"), MetricSpec("w", "write I/Os"))
            disk_rows = tuple(
                ((str(d.get("server")), str(d.get("name"))), (d.get("util_pct"), d.get("read_ios"), d.get("write_ios")))
                for d in disks
            )
            tables.append(ResultTable("Disks", ("server", "disk"), columns, disk_rows, tab="Details", key="disks"))
        return tables

    def result_notes(self, result: Mapping[str, Any] | None) -> list[str]:
        notes = []
        missing = (result or {}).get("missing_servers") or []
        if missing:
            notes.append("no figures from " + ", ".join(str(m) for m in missing))
        total = (result or {}).get("total") or {}
        if total.get("source"):
            notes.append(f"All clients: {total['source']}")
        return notes + super().result_notes(result)

    def planned_duration_s(self, config: Mapping[str, Any]) -> float | None:
        # a form records only the fields changed: the job's defaults count too
        job = FioConfig.from_dict(config)
        runtime = units.maybe_duration_s(str(job.runtime_s or ""))
        if not runtime:
            return None
        return runtime + (units.maybe_duration_s(str(job.ramp_time_s or "")) or 0.0)


DESCRIPTION = FioClientServerDescription(
    name=NAME,
    summary="fio's own client/server mode: one job on fio servers already running",
    install_hint=install_hint,
    options=OPTIONS,
    results=RESULTS,
    takes_raw_args=True,
    live_note=LIVE_NOTE,
)


class FioClientServerTool:
    """The fio client/server :class:`racperf_tui.core.contract.tool.Tool`."""

    name = NAME
    description = DESCRIPTION
    install_hint = install_hint
    #: the client tells its servers to stop their jobs on SIGTERM, then prints what they did
    stop_grace_s = 15.0
    #: the run's record of protections (orchestration.supervisor)
    option_guard = (
        "options resolved by fio itself and judged against racperf's allow list; each server's targets "
        "judged by the write guard on its node (the servers themselves were not started by racperf)"
    )

    def available(self) -> bool:
        return fio_path() is not None

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
        return invocation(config, run_dir, host)

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        return build_argv(config)

    def command_preview(self, config: Mapping[str, Any]) -> str:
        return command_preview(config)

    def stream_parser(self, config: Mapping[str, Any]) -> NoLiveFigures:
        return NoLiveFigures()

    def parse_result(self, output: str) -> dict[str, Any]:
        return parse_output(output)

    def parse_result_files(self, output: str, files: Mapping[str, str]) -> dict[str, Any]:
        return parse_result_files(output, files)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        return succeeded(result, exit_status)

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        return FioConfig.from_dict(config).hard_limit_s()


TOOL = FioClientServerTool()
