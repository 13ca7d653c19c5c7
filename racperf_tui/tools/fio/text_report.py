"""fio's normal (human) report, of 2.x before 2.17 (``read : io=1394.2MB, bw=7926.4KB/s``)
and of 2.17+ (``read: IOPS=6897, BW=53.1MiB/s``), alone or inside a captured console log
whose ``Jobs:`` lines become samples -> the result shape of :mod:`racperf_tui.tools.fio.formats`."""

from __future__ import annotations

import re
from typing import Any

from racperf_tui.tools import figures
from racperf_tui.tools.figures import MAX_LINE_CHARS, Warnings
from racperf_tui.tools.fio.figures import (
    TIME_UNIT_TO_US,
    FioParseError,
    bucket_label,
    parse_count,
    percentile_key,
    read_count,
    read_figure,
    rw_from_directions,
    size_to_kib,
)
from racperf_tui.tools.fio.status_line import STATUS_RE, parse_status_line

_JOB_HEADER_RE = re.compile(
    r"^(?P<name>\S.*?): \(groupid=(?P<gid>\d+), jobs=(?P<jobs>\d+)\): err=\s*(?P<err>\d+)"
    r"(?:\s*\((?P<errtext>[^)]*)\))?: pid=(?P<pid>\d+)"
)
_JOB_DESC_RE = re.compile(r"^(?P<name>\S.*?): \(g=(?P<gid>\d+)\): rw=(?P<rw>[^,]+),")
_DIR_NEW_RE = re.compile(
    r"^\s*(?P<dir>read|write|trim)\s*:\s*IOPS=(?P<iops>[\d.]+[kMGTP]?),\s*"
    r"BW=(?P<bw1>[\d.]+)(?P<bu1>[KMGTPE]?i?B)/s(?:\s*\((?P<bw2>[\d.]+)(?P<bu2>[kKMGTPE]?i?B)/s\))?"
    r"\s*\((?P<io>[\d.]+)(?P<iou>[kKMGTPE]?i?B)/(?P<rt>\d+)msec\)"
)
_DIR_OLD_RE = re.compile(
    r"^\s*(?P<dir>read|write|trim)\s*:\s*io=(?P<io>[\d.]+)(?P<iou>[KMGTP]?B),\s*"
    r"bw=(?P<bw>[\d.]+)(?P<bu>[KMGTP]?B)/s,\s*iops=(?P<iops>[\d.]+[kKMG]?),\s*runt=\s*(?P<rt>\d+)msec"
)
_LAT_RE = re.compile(
    r"^\s*(?P<kind>slat|clat|lat)\s*\((?P<unit>nsec|usec|msec|sec)\)\s*:\s*min=\s*(?P<min>[\d.]+[kKMG]?),\s*"
    r"max=\s*(?P<max>[\d.]+[kKMG]?),\s*avg=\s*(?P<avg>[\d.]+[kKMG]?),\s*(?:stdev|dev)=\s*(?P<dev>[\d.]+[kKMG]?)"
)
_PCT_HEADER_RE = re.compile(r"^\s*(?P<kind>slat|clat|lat) percentiles \((?P<unit>nsec|usec|msec|sec)\):")
# (?<!...): a match starts only where a number starts; without it findall retried every digit
# of a long digit run, each scanning the rest of the run (quadratic)
_PCT_ITEM_RE = re.compile(r"(?<![\d.])(\d+\.\d+)th=\[\s*(\d+)\]")
_PCT_ITEMS_RE = re.compile(r"(?<![\d>])(>=\d+|\d+)=([\d.]+)%")
_BW_STATS_RE = re.compile(
    r"^\s*bw\s*\(\s*(?P<unit>[KMGT]?i?B)\s*/s\)\s*:\s*min=\s*(?P<min>[\d.]+),\s*max=\s*(?P<max>[\d.]+),\s*"
    r"per=\s*(?P<per>[\d.]+)%,\s*avg=\s*(?P<avg>[\d.]+),\s*(?:stdev|dev)=\s*(?P<dev>[\d.]+)(?:,\s*samples=\s*(?P<n>\d+))?"
)
_IOPS_STATS_RE = re.compile(
    r"^\s*iops\s*:\s*min=\s*(?P<min>[\d.]+),\s*max=\s*(?P<max>[\d.]+),\s*avg=\s*(?P<avg>[\d.]+),\s*"
    r"stdev=\s*(?P<dev>[\d.]+)(?:,\s*samples=\s*(?P<n>\d+))?"
)
_LAT_DIST_RE = re.compile(r"^\s*lat \((?P<unit>nsec|usec|msec|sec)\)\s*:\s*(?P<items>(?:>=)?\d+=.*)$")
_CPU_RE = re.compile(
    r"^\s*cpu\s*:\s*usr=(?P<usr>[\d.]+)%,\s*sys=(?P<sys>[\d.]+)%,\s*ctx=(?P<ctx>\d+),\s*"
    r"majf=(?P<majf>\d+),\s*minf=(?P<minf>\d+)"
)
_DEPTH_RE = re.compile(r"^\s*(?P<kind>IO depths|submit|complete)\s*:\s*(?P<items>.*)$")
_ISSUED_NEW_RE = re.compile(r"^\s*issued rwts?:\s*total=(?P<total>[\d,]+?),?\s+short=(?P<short>[\d,]+?),?\s+dropped=")
_ISSUED_OLD_RE = re.compile(r"^\s*issued\s*:\s*total=r=(?P<r>\d+)/w=(?P<w>\d+)/d=(?P<d>\d+)")
_GROUP_RE = re.compile(r"^Run status group (?P<gid>\d+) \(all jobs\):")
_GROUP_NEW_RE = re.compile(
    r"^\s*(?P<dir>READ|WRITE|TRIM): bw=(?P<bw1>[\d.]+)(?P<bu1>[KMGTPE]?i?B)/s"
    r"(?:\s*\((?P<bw2>[\d.]+)(?P<bu2>[kKMGTPE]?i?B)/s\))?"
    r".*?io=(?P<io1>[\d.]+)(?P<iu1>[kKMGTPE]?i?B)(?:\s*\((?P<io2>[\d.]+)(?P<iu2>[kKMGTPE]?i?B)\))?,\s*"
    r"run=(?P<mint>\d+)-(?P<maxt>\d+)msec"
)
_GROUP_OLD_RE = re.compile(
    r"^\s*(?P<dir>READ|WRITE|TRIM): io=(?P<io>[\d.]+)(?P<iou>[KMGTP]?B),\s*aggrb=(?P<bw>[\d.]+)(?P<bu>[KMGTP]?B)/s,"
    r".*mint=(?P<mint>\d+)msec,\s*maxt=(?P<maxt>\d+)msec"
)
_DISK_RE = re.compile(
    r"^\s*(?P<name>[^\s:]+): ios=(?P<rios>\d+)/(?P<wios>\d+),\s*merge=(?P<rm>\d+)/(?P<wm>\d+),\s*"
    r"ticks=(?P<rt>\d+)/(?P<wt>\d+)(?:,\s*in_queue=(?P<q>\d+))?,\s*util=(?P<util>[\d.]+)%"
)
_VERSION_RE = re.compile(r"^fio-(\d[\w.\-]*)\s*$")


def _pick_binary(v1: str, u1: str, v2: str | None, u2: str | None) -> float:
    """2.17+ prints '53.1MiB/s (56.6MB/s)': use the binary figure (first unless kb_base=1000)."""
    if "i" not in u1 and v2 is not None and u2 is not None and "i" in u2:
        return size_to_kib(read_figure(v2), u2)
    return size_to_kib(read_figure(v1), u1)


def _parse_pct_items(items: str) -> dict[str, float]:
    """'1=100.0%, 2=0.0%, >=64=0.0%' -> {'1': 100.0, '2': 0.0, '>=64': 0.0}."""
    out = {}
    for key, value in _PCT_ITEMS_RE.findall(items):
        out[key] = read_figure(value)
    return out


def parse_text_report(text: str) -> dict[str, Any]:
    """The normal (human) report of fio 2.x or 3.x, possibly inside a console log -> result.

    Repeated reports (normal output with --status-interval) replace earlier ones per job
    (keyed by name and pid), so the last report wins. ``Jobs:`` status lines become samples.
    """
    lines = re.split(r"\r\n|\r|\n", text)
    version = ""
    legacy = False
    rw_by_name: dict[str, str] = {}
    jobs: dict[tuple[str, str], dict[str, Any]] = {}
    groups: dict[int, dict[str, Any]] = {}
    disks: dict[str, dict[str, Any]] = {}
    messages: list[str] = []
    samples: list[dict[str, Any]] = []
    job: dict[str, Any] | None = None
    direction: dict[str, Any] | None = None
    pct_target: tuple[dict[str, Any], str, float] | None = None
    group: dict[str, Any] | None = None
    section = "head"
    warnings = Warnings()
    for lineno, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE_CHARS:
            warnings.long_line(lineno, len(raw))
            continue
        try:
            line = raw.rstrip()
            if not line.strip():
                pct_target = None
                continue
            if pct_target is not None and line.lstrip().startswith("|"):
                block, kind, factor = pct_target
                for pct, value in _PCT_ITEM_RE.findall(line):
                    block.setdefault(f"{kind}_us", {}).setdefault("percentiles", {})[
                        percentile_key(read_figure(pct))
                    ] = read_figure(value) * factor
                continue
            pct_target = None
            if m := _VERSION_RE.match(line.strip()):
                version = m.group(1)
                continue
            if m := STATUS_RE.match(line.strip()):
                samples.append(parse_status_line(m, len(samples)))
                continue
            if m := _JOB_DESC_RE.match(line):
                rw_by_name.setdefault(m.group("name"), m.group("rw").strip())
                continue
            if m := _JOB_HEADER_RE.match(line):
                name = m.group("name")
                job = {
                    "name": name,
                    "groupid": read_count(m.group("gid")),
                    "error": read_count(m.group("err")),
                    "rw": rw_by_name.get(name, ""),
                    "jobs": read_count(m.group("jobs")),
                    "pid": read_count(m.group("pid")),
                }
                if m.group("errtext"):
                    job["error_text"] = m.group("errtext").strip()
                jobs[(name, m.group("pid"))] = job
                direction = None
                section = "job"
                continue
            if m := _GROUP_RE.match(line):
                group = {"groupid": read_count(m.group("gid"))}
                groups[group["groupid"]] = group
                section = "group"
                job = None
                continue
            if line.startswith("Disk stats"):
                section = "disk"
                continue
            if section == "job" and job is not None:
                if m := _DIR_NEW_RE.match(line):
                    direction = {
                        "iops": parse_count(m.group("iops")),
                        "bw_kib_s": _pick_binary(m.group("bw1"), m.group("bu1"), m.group("bw2"), m.group("bu2")),
                        "io_kib": size_to_kib(read_figure(m.group("io")), m.group("iou")),
                        "runtime_ms": read_figure(m.group("rt")),
                    }
                    job[m.group("dir")] = direction
                    continue
                if m := _DIR_OLD_RE.match(line):
                    legacy = True
                    direction = {
                        "iops": parse_count(m.group("iops")),
                        "bw_kib_s": size_to_kib(read_figure(m.group("bw")), m.group("bu"), legacy=True),
                        "io_kib": size_to_kib(read_figure(m.group("io")), m.group("iou"), legacy=True),
                        "runtime_ms": read_figure(m.group("rt")),
                    }
                    job[m.group("dir")] = direction
                    continue
                if (m := _LAT_RE.match(line)) and direction is not None:
                    factor = TIME_UNIT_TO_US[m.group("unit")]
                    block = direction.setdefault(f"{m.group('kind')}_us", {})
                    block.update(
                        {
                            "min": parse_count(m.group("min")) * factor,
                            "max": parse_count(m.group("max")) * factor,
                            "mean": parse_count(m.group("avg")) * factor,
                            "stdev": parse_count(m.group("dev")) * factor,
                        }
                    )
                    continue
                if (m := _PCT_HEADER_RE.match(line)) and direction is not None:
                    pct_target = (direction, m.group("kind"), TIME_UNIT_TO_US[m.group("unit")])
                    continue
                if (m := _BW_STATS_RE.match(line)) and direction is not None:
                    unit = m.group("unit")
                    conv = lambda v, unit=unit, legacy=legacy: size_to_kib(read_figure(v), unit, legacy=legacy)  # noqa: E731
                    direction["bw_stats_kib_s"] = {
                        "min": conv(m.group("min")),
                        "max": conv(m.group("max")),
                        "per_pct": read_figure(m.group("per")),
                        "mean": conv(m.group("avg")),
                        "stdev": conv(m.group("dev")),
                        "samples": read_count(m.group("n") or 0),
                    }
                    continue
                if (m := _IOPS_STATS_RE.match(line)) and direction is not None:
                    direction["iops_stats"] = {
                        "min": read_figure(m.group("min")),
                        "max": read_figure(m.group("max")),
                        "mean": read_figure(m.group("avg")),
                        "stdev": read_figure(m.group("dev")),
                        "samples": read_count(m.group("n") or 0),
                    }
                    continue
                if m := _LAT_DIST_RE.match(line):
                    factor = TIME_UNIT_TO_US[m.group("unit")]
                    dist = job.setdefault("lat_dist_pct", {})
                    for bound, pct in _parse_pct_items(m.group("items")).items():
                        label = bucket_label(bound, factor)
                        if label is None:
                            raise FioParseError(f"{bound[:40]!r} is not a latency bound")
                        dist[label] = pct
                    continue
                if m := _CPU_RE.match(line):
                    job["cpu"] = {
                        "usr_pct": read_figure(m.group("usr")),
                        "sys_pct": read_figure(m.group("sys")),
                        "ctx": read_count(m.group("ctx")),
                        "majf": read_count(m.group("majf")),
                        "minf": read_count(m.group("minf")),
                    }
                    continue
                if m := _DEPTH_RE.match(line):
                    key = {
                        "IO depths": "iodepth_pct",
                        "submit": "iodepth_submit_pct",
                        "complete": "iodepth_complete_pct",
                    }[m.group("kind")]
                    job[key] = _parse_pct_items(m.group("items"))
                    continue
                if m := _ISSUED_NEW_RE.match(line):
                    totals = [read_count(x) for x in m.group("total").split(",") if x]
                    job["issued"] = dict(zip(("read", "write", "trim", "sync"), totals))
                    continue
                if m := _ISSUED_OLD_RE.match(line):
                    job["issued"] = {
                        "read": read_count(m.group("r")),
                        "write": read_count(m.group("w")),
                        "trim": read_count(m.group("d")),
                    }
                    continue
            if section == "group" and group is not None:
                if m := _GROUP_NEW_RE.match(line):
                    io_kib = _pick_binary(m.group("io1"), m.group("iu1"), m.group("io2"), m.group("iu2"))
                    group[m.group("dir").lower()] = {
                        "bw_kib_s": _pick_binary(m.group("bw1"), m.group("bu1"), m.group("bw2"), m.group("bu2")),
                        "io_kib": io_kib,
                        "runtime_min_ms": read_figure(m.group("mint")),
                        "runtime_max_ms": read_figure(m.group("maxt")),
                    }
                    continue
                if m := _GROUP_OLD_RE.match(line):
                    group[m.group("dir").lower()] = {
                        "bw_kib_s": size_to_kib(read_figure(m.group("bw")), m.group("bu"), legacy=True),
                        "io_kib": size_to_kib(read_figure(m.group("io")), m.group("iou"), legacy=True),
                        "runtime_min_ms": read_figure(m.group("mint")),
                        "runtime_max_ms": read_figure(m.group("maxt")),
                    }
                    continue
            if section == "disk" and (m := _DISK_RE.match(line)):
                disks[m.group("name")] = {
                    "name": m.group("name"),
                    "read_ios": read_count(m.group("rios")),
                    "write_ios": read_count(m.group("wios")),
                    "read_merges": read_count(m.group("rm")),
                    "write_merges": read_count(m.group("wm")),
                    "read_ticks_ms": read_count(m.group("rt")),
                    "write_ticks_ms": read_count(m.group("wt")),
                    "in_queue_ms": read_count(m.group("q")) if m.group("q") else None,
                    "util_pct": read_figure(m.group("util")),
                }
                continue
            if line.startswith("fio:") or line.startswith("file:") or "error=" in line:
                messages.append(line.strip())
        except (FioParseError, KeyError) as exc:  # a figure no fio prints ("1.2.3", 400 digits)
            warnings.add(f"line {lineno}: {exc}; line skipped")
    if not jobs and not samples and not (version and (rw_by_name or groups or messages)):
        detail = f" ({warnings.items[0]})" if warnings.items else ""
        raise FioParseError(f"no fio job report ('NAME: (groupid=N, jobs=N): err=...') in the output{detail}")
    job_list = list(jobs.values())
    for entry in job_list:
        if not entry.get("rw"):
            entry["rw"] = rw_from_directions(entry)
        for d in ("read", "write"):
            entry.setdefault(d, {"iops": 0.0, "bw_kib_s": 0.0, "io_kib": 0.0, "runtime_ms": 0.0})
        for d in ("read", "write", "trim"):
            if d in entry and "total_ios" not in entry[d] and d in entry.get("issued", {}):
                entry[d]["total_ios"] = entry["issued"][d]
    result: dict[str, Any] = {
        "tool": "fio",
        "version": version,
        "format": ("console" if samples else "normal") + ("-2.x" if legacy else ""),
        "jobs": job_list,
        "disk_util": list(disks.values()),
        "groups": list(groups.values()),
        "messages": messages,
    }
    if samples:
        result["samples"] = samples
    warnings.into(result)
    figures.check_finite(result, "fio output", FioParseError)
    return result
