"""fio's terse output, versions 3, 4 and 5 (``--minimal``, ``--output-format=terse``): one
semicolon-separated line per job -> the result shape of :mod:`racperf_tui.tools.fio.formats`."""

from __future__ import annotations

import re
from typing import Any

from racperf_tui.tools import figures
from racperf_tui.tools.figures import MAX_LINE_CHARS, Warnings
from racperf_tui.tools.fio.figures import (
    MAX_MESSAGES,
    FioParseError,
    bucket_label,
    percentile_key,
    read_count,
    read_figure,
    rw_from_directions,
    version_of,
)

_TERSE_LAT_US_BOUNDS = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]
_TERSE_LAT_MS_BOUNDS = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"]
_TERSE_DEPTHS = ["1", "2", "4", "8", "16", "32", ">=64"]


def _terse_direction(f: list[str], version: int) -> dict[str, Any]:
    """One direction's fields of a terse line (41 fields, 47 in v5) -> direction dict."""
    it = iter(f)
    nxt = lambda: next(it)  # noqa: E731
    out: dict[str, Any] = {
        "io_kib": read_figure(nxt()),
        "bw_kib_s": read_figure(nxt()),
        "iops": read_figure(nxt()),
        "runtime_ms": read_figure(nxt()),
    }
    for kind in ("slat", "clat"):
        out[f"{kind}_us"] = {
            "min": read_figure(nxt()),
            "max": read_figure(nxt()),
            "mean": read_figure(nxt()),
            "stdev": read_figure(nxt()),
        }
    pcts = {}
    for _ in range(20):
        item = nxt()
        if "=" in item:
            key, value = item.split("=", 1)
            pct = read_figure(key.rstrip("%"))
            if pct > 0:
                pcts[percentile_key(pct)] = read_figure(value)
    out["clat_us"]["percentiles"] = pcts
    out["lat_us"] = {
        "min": read_figure(nxt()),
        "max": read_figure(nxt()),
        "mean": read_figure(nxt()),
        "stdev": read_figure(nxt()),
    }
    bw = {
        "min": read_figure(nxt()),
        "max": read_figure(nxt()),
        "per_pct": read_figure(nxt().rstrip("%")),
        "mean": read_figure(nxt()),
        "stdev": read_figure(nxt()),
    }
    if version >= 5:
        bw["samples"] = read_count(nxt())
        out["iops_stats"] = {
            "min": read_figure(nxt()),
            "max": read_figure(nxt()),
            "mean": read_figure(nxt()),
            "stdev": read_figure(nxt()),
            "samples": read_count(nxt()),
        }
    out["bw_stats_kib_s"] = bw
    return out


def parse_terse(text: str) -> dict[str, Any]:
    """Terse (``--minimal`` / ``--output-format=terse``) output, versions 3, 4 and 5 -> result."""
    jobs = []
    disks: dict[str, dict[str, Any]] = {}
    messages: list[str] = []
    version = ""
    terse_version = 3
    warnings = Warnings()
    for lineno, raw in enumerate(text.splitlines(), 1):
        if len(raw) > MAX_LINE_CHARS:
            warnings.long_line(lineno, len(raw))
            continue
        line = raw.strip()
        if not re.match(r"^[345];", line):
            if line and len(messages) < MAX_MESSAGES:
                messages.append(line)
            continue
        fields = line.split(";")
        terse_version = int(fields[0])
        dir_len = 47 if terse_version >= 5 else 41
        ndirs = 2 if terse_version == 3 else 3
        need = 5 + ndirs * dir_len + 5 + 7 + 10 + 12
        if len(fields) < need:
            # one line cut short (a killed run) must not lose the others: skipped, named
            warnings.add(
                f"terse v{terse_version} line {lineno}: {len(fields)} fields, expected at least {need}; line skipped"
            )
            continue
        try:
            version = version_of(fields[1])
            job: dict[str, Any] = {"name": fields[2], "groupid": read_count(fields[3]), "error": read_count(fields[4])}
            pos = 5
            for d in ("read", "write", "trim")[:ndirs]:
                parsed = _terse_direction(fields[pos : pos + dir_len], terse_version)
                if d != "trim" or parsed["io_kib"] > 0:
                    job[d] = parsed
                pos += dir_len
            job["cpu"] = {
                "usr_pct": read_figure(fields[pos].rstrip("%")),
                "sys_pct": read_figure(fields[pos + 1].rstrip("%")),
                "ctx": read_count(fields[pos + 2]),
                "majf": read_count(fields[pos + 3]),
                "minf": read_count(fields[pos + 4]),
            }
            pos += 5
            job["iodepth_pct"] = {k: read_figure(v.rstrip("%")) for k, v in zip(_TERSE_DEPTHS, fields[pos : pos + 7])}
            pos += 7
            dist = {}
            for bound, value in zip(_TERSE_LAT_US_BOUNDS, fields[pos : pos + 10]):
                dist[bucket_label(bound, 1.0)] = read_figure(value.rstrip("%"))
            pos += 10
            for bound, value in zip(_TERSE_LAT_MS_BOUNDS, fields[pos : pos + 12]):
                dist[bucket_label(bound, 1000.0)] = read_figure(value.rstrip("%"))
            pos += 12
            job["lat_dist_pct"] = dist
            while pos + 9 <= len(fields) and fields[pos] and not _is_number(fields[pos]):
                disk = fields[pos : pos + 9]
                disks[disk[0]] = {
                    "name": disk[0],
                    "read_ios": read_count(disk[1]),
                    "write_ios": read_count(disk[2]),
                    "read_merges": read_count(disk[3]),
                    "write_merges": read_count(disk[4]),
                    "read_ticks_ms": read_count(disk[5]),
                    "write_ticks_ms": read_count(disk[6]),
                    "in_queue_ms": read_count(disk[7]),
                    "util_pct": read_figure(disk[8].rstrip("%")),
                }
                pos += 9
            if pos + 2 <= len(fields) and _is_number(fields[pos]) and _is_number(fields[pos + 1]):
                job["total_err"], job["first_error"] = read_count(fields[pos]), read_count(fields[pos + 1])
                pos += 2
            if pos < len(fields) and fields[pos]:
                job["description"] = ";".join(fields[pos:])
        except (ValueError, StopIteration, KeyError) as exc:
            warnings.add(f"terse v{terse_version} line {lineno}: bad field ({exc}); line skipped")
            continue
        job["rw"] = rw_from_directions({k: v for k, v in job.items() if k in ("read", "write") and v["io_kib"] > 0})
        jobs.append(job)
    if not jobs:
        detail = f" ({warnings.items[0]})" if warnings.items else ""
        raise FioParseError(f"no terse line ('3;fio-x.y;...') in the output{detail}")
    result = {
        "tool": "fio",
        "version": version,
        "format": f"terse-v{terse_version}",
        "jobs": jobs,
        "disk_util": list(disks.values()),
        "messages": messages,
    }
    warnings.into(result)
    figures.check_finite(result, "fio terse output", FioParseError)
    return result


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
