"""fio's client output (``fio --output-format=json --client=HOST,PORT JOB ...``) -> per host and
the "All clients" total.

What fio prints there (fio 3.33, client.c): the servers' job headers as text lines prefixed
``<hostname>``, then one JSON object whose ``client_stats`` holds every job (or every group
with group_reporting) of every server, each with the ``hostname`` and ``port`` the client was
given, and, when more than one server ran, one more entry named "All clients": fio's sum of
every server's I/O (``total_ios``, ``io_bytes`` are the sums; its ``runtime`` is the longest,
so its IOPS is the total I/O over the longest runtime, a little below the sum of the hosts'
IOPS). ``disk_util`` carries the servers' disks, each with its hostname and port.

The result::

    {"hosts": [{"server": "127.0.0.1:8765", "host", "port", "jobs", "error",
                "read": {"iops", "bw_kib_s", "io_bytes", "total_ios", "runtime_ms",
                         "clat_mean_us"}, "write": {...}, "trim": {...}}, ...],
     "total": {... the same, "All clients" as fio gives it (from the one host alone with
               one server) ...},
     "read_iops", "write_iops", "total_iops", "read_bw_kib_s", "write_bw_kib_s": the total's,
     "servers_expected": ["127.0.0.1:8765", ...] (with the run's servers file),
     "missing_servers": the expected servers no figures came from,
     "disk_util": [{"server", "name", "util_pct", "read_ios", "write_ios"}, ...],
     "messages": fio's own lines outside the report (connection failures...)}

Every figure is checked (finite, not negative); anything else is a FioParseError naming the
field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from racperf_tui.tools import figures
from racperf_tui.tools.fio.figures import FioParseError
from racperf_tui.tools.fio.json_report import split_json_objects

#: fio's name of the summed entry in client_stats (client.c)
ALL_CLIENTS = "All clients"
DIRECTIONS = ("read", "write", "trim")
#: the file of the servers a run asked for, written into the run's directory and read back
SERVERS_FILE = "servers.json"


def server_name(host: str, port: int) -> str:
    """``host:port`` (``[v6]:port`` for an IPv6 address), how racperf names a fio server."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _figure(value: Any, where: str) -> float:
    return figures.figure(value if value is not None else 0, where, error=FioParseError)


def _count(value: Any, where: str) -> int:
    return figures.count(value if value is not None else 0, where, error=FioParseError)


def _direction(block: Any, where: str) -> dict[str, float]:
    if not isinstance(block, Mapping):
        return {"iops": 0.0, "bw_kib_s": 0.0, "io_bytes": 0, "total_ios": 0, "runtime_ms": 0.0}
    out: dict[str, Any] = {
        "iops": _figure(block.get("iops"), f"{where}.iops"),
        "bw_kib_s": _figure(block.get("bw"), f"{where}.bw"),
        "io_bytes": _count(block.get("io_bytes"), f"{where}.io_bytes"),
        "total_ios": _count(block.get("total_ios"), f"{where}.total_ios"),
        "runtime_ms": _figure(block.get("runtime"), f"{where}.runtime"),
    }
    clat = block.get("clat_ns")
    if isinstance(clat, Mapping) and clat.get("mean") is not None:
        out["clat_mean_us"] = _figure(clat.get("mean"), f"{where}.clat_ns.mean") / 1000.0
    return out


def _sum_entries(entries: list[tuple[Mapping[str, Any], str]]) -> dict[str, Any]:
    """One host's jobs (or groups) added up: I/O, bytes and rates summed (the jobs run side by
    side), the runtime the longest, the mean latency weighted by each job's I/O count."""
    summed: dict[str, Any] = {"jobs": len(entries), "error": 0}
    for direction in DIRECTIONS:
        parts = [_direction(entry.get(direction), f"{where}.{direction}") for entry, where in entries]
        total: dict[str, Any] = {
            "iops": sum(p["iops"] for p in parts),
            "bw_kib_s": sum(p["bw_kib_s"] for p in parts),
            "io_bytes": sum(p["io_bytes"] for p in parts),
            "total_ios": sum(p["total_ios"] for p in parts),
            "runtime_ms": max((p["runtime_ms"] for p in parts), default=0.0),
        }
        weighted = [(p["clat_mean_us"], p["total_ios"]) for p in parts if "clat_mean_us" in p and p["total_ios"]]
        if weighted:
            total["clat_mean_us"] = sum(m * n for m, n in weighted) / sum(n for _, n in weighted)
        summed[direction] = total
    for entry, where in entries:
        error = _count(entry.get("error"), f"{where}.error")
        summed["error"] = summed["error"] or error
    return summed


def _report(text: str) -> tuple[dict[str, Any], list[str]]:
    objects, splitter = split_json_objects(text)
    reports = [o for o in objects if isinstance(o.get("client_stats"), list)]
    if not reports:
        if any("jobs" in o for o in objects):
            raise FioParseError("fio's report has no client_stats: this is not the output of fio --client")
        said = "; ".join(splitter.messages[:3]) or "nothing"
        raise FioParseError(f"no fio client report in the output (fio said: {said})")
    return reports[-1], list(splitter.messages)


def parse_output(text: str, expected: list[str] | None = None) -> dict[str, Any]:
    """fio's client output -> the result (see the module doc). ``expected``: the servers the
    run asked for (``host:port``), so those that gave nothing are named."""
    report, messages = _report(text)
    hosts: dict[str, list[tuple[Mapping[str, Any], str]]] = {}
    addresses: dict[str, tuple[str, int]] = {}
    total_entries: list[tuple[Mapping[str, Any], str]] = []
    for index, entry in enumerate(report["client_stats"]):
        where = f"client_stats[{index}]"
        if not isinstance(entry, Mapping):
            raise FioParseError(f"{where}: not an object")
        if entry.get("jobname") == ALL_CLIENTS:
            total_entries.append((entry, where))
            continue
        host = entry.get("hostname")
        if not isinstance(host, str) or not host:
            raise FioParseError(f"{where}: no hostname (not a fio client report)")
        port = _count(entry.get("port"), f"{where}.port")
        name = server_name(host, port)
        hosts.setdefault(name, []).append((entry, where))
        addresses[name] = (host, port)
    per_host = []
    for name, entries in hosts.items():
        host, port = addresses[name]
        per_host.append({"server": name, "host": host, "port": port, **_sum_entries(entries)})
    if expected is not None:
        # in the order the run named them (fio's is the order they finished)
        order = {name: index for index, name in enumerate(expected)}
        per_host.sort(key=lambda h: order.get(h["server"], len(order)))
    if total_entries:
        total = _sum_entries(total_entries)
        total["jobs"] = sum(h["jobs"] for h in per_host)
        total["source"] = "fio's own total"
    elif len(per_host) == 1:
        total = {key: value for key, value in per_host[0].items() if key not in ("server", "host", "port")}
        total["source"] = "the one server's figures"
    else:
        total = _sum_entries([e for entries in hosts.values() for e in entries])
        total["source"] = "racperf's sum of the servers (fio gave no total)"
    result: dict[str, Any] = {"hosts": per_host, "total": total}
    for direction in ("read", "write"):
        result[f"{direction}_iops"] = total[direction]["iops"]
        result[f"{direction}_bw_kib_s"] = total[direction]["bw_kib_s"]
    result["total_iops"] = total["read"]["iops"] + total["write"]["iops"] + total["trim"]["iops"]
    disks = []
    for index, disk in enumerate(report.get("disk_util") or []):
        if not isinstance(disk, Mapping):
            continue
        where = f"disk_util[{index}]"
        host = disk.get("hostname")
        disks.append(
            {
                "server": server_name(host, _count(disk.get("port"), f"{where}.port")) if isinstance(host, str) else "",
                "name": str(disk.get("name") or "")[:64],
                "util_pct": _figure(disk.get("util"), f"{where}.util"),
                "read_ios": _count(disk.get("read_ios"), f"{where}.read_ios"),
                "write_ios": _count(disk.get("write_ios"), f"{where}.write_ios"),
            }
        )
    result["disk_util"] = disks
    if expected is not None:
        result["servers_expected"] = list(expected)
        result["missing_servers"] = [s for s in expected if s not in hosts]
    result["fio_version"] = str(report.get("fio version") or "")[:40]
    # the servers' echo of their job headers ("<host> job: (g=0): rw=...") says nothing new
    result["messages"] = [m for m in messages if not m.startswith("<")][:20]
    figures.check_finite(result, "fio client result", error=FioParseError)
    return result


def succeeded(result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
    """Every server asked for gave figures, no job reported an error, and fio exited 0 (fio's
    client exits 0 when one of several servers could not be reached: the figures decide)."""
    if result is None:
        return False, f"fio gave no client report (exit status {exit_status})"
    problems = []
    missing = list(result.get("missing_servers") or [])
    if missing:
        problems.append(
            "no figures from fio server "
            + ", ".join(missing)
            + " (not reached, or its job failed there; the other servers' figures are kept)"
        )
    for host in result.get("hosts") or []:
        if host.get("error"):
            problems.append(f"fio server {host.get('server')}: a job ended with error {host.get('error')}")
    if exit_status != 0:
        problems.append(f"fio exited with status {exit_status}")
    if not result.get("hosts"):
        problems.append("no server gave figures")
    if problems:
        return False, "; ".join(problems)
    return True, f"{len(result['hosts'])} server(s)"
