"""fio's JSON and json+ output: :class:`JsonObjectSplitter` (complete top-level objects out
of output fed line by line, shared with the live stream parser) and the report reader
(:func:`parse_json_report`: the last complete report -> the result shape of
:mod:`racperf_tui.tools.fio.formats`)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from racperf_tui.tools import figures
from racperf_tui.tools.figures import OutputParseError
from racperf_tui.tools.fio.figures import (
    MAX_MESSAGES,
    FioParseError,
    bucket_label,
    percentile_key,
    version_of,
)


def _figure(value: Any, where: str, negative_ok: bool = False) -> float:
    return figures.figure(value, where, negative_ok=negative_ok, error=FioParseError)


def _count(value: Any, where: str, negative_ok: bool = False) -> int:
    return figures.count(value, where, negative_ok=negative_ok, error=FioParseError)


def _object(value: Any, where: str) -> dict[str, Any]:
    """A JSON sub-object ({} when absent or null); FioParseError when it is something else."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FioParseError(f"{where} is {type(value).__name__}, not an object")
    return value


#: a JSON string token or a brace; the regex engine skips everything else in C
_JSON_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[{}]')
#: first character of any line of fio's pretty-printed JSON
_JSON_LINE_START = set('"{}[]-0123456789')
#: a bare literal alone on a line (an array element) is JSON too
_JSON_LITERAL_LINE = re.compile(r"^\s*(true|false|null)\s*,?\s*$")


class JsonObjectSplitter:
    """Cuts fio's output, fed line by line, into complete top-level JSON objects.

    Tracks brace depth outside of strings. Lines outside any object are kept as
    ``messages`` (fio's error and warning lines). A line that cannot belong to fio's
    pretty-printed JSON (e.g. ``fio: io_u error ...`` written by stderr into the middle
    of a dump) is set aside as a message too instead of corrupting the object.
    """

    def __init__(self, decode: bool = True) -> None:
        """``decode=False``: :meth:`feed` returns each object's text undecoded (cheap when
        only the last of many dumps is wanted)."""
        self._decode_objects = decode
        self._depth = 0
        self._parts: list[str] = []
        #: the first MAX_MESSAGES non-JSON lines; ``message_count`` counts all of them
        self.messages: list[str] = []
        self.message_count = 0
        self.decode_errors: list[str] = []

    @property
    def in_object(self) -> bool:
        """True while an object has started and not yet ended."""
        return self._depth > 0

    def feed(self, line: str) -> list[Any]:
        """Consume one line; return the objects it completed (usually none or one)."""
        completed: list[Any] = []
        if self._depth > 0 and line.rstrip() == "{":
            # fio starts every report with "{" alone at column 0 (nested ones are indented):
            # the unfinished object before it (a stray "{" in a message, a dump cut short by
            # a kill) can never complete, so drop it and resynchronise here
            self.decode_errors.append("an unfinished object was dropped where a new report began")
            self._depth, self._parts = 0, []
        if self._depth > 0:
            stripped = line.lstrip()
            if stripped and stripped[0] not in _JSON_LINE_START and not _JSON_LITERAL_LINE.match(stripped):
                self._note(line.strip())
                return completed
        start = 0 if self._depth > 0 else None
        outside_from = 0  # where text outside any object starts on this line
        for match in _JSON_TOKEN_RE.finditer(line):
            token = match.group()
            if token == "{":
                if self._depth == 0:
                    start = match.start()
                    prefix = line[outside_from:start].strip()
                    if prefix:
                        self._note(prefix)
                self._depth += 1
            elif token == "}":
                if self._depth == 0:
                    continue
                self._depth -= 1
                if self._depth == 0:
                    self._parts.append(line[start : match.end()])
                    text = "\n".join(self._parts)
                    self._parts = []
                    obj = self.decode(text) if self._decode_objects else text
                    if obj is not None:
                        completed.append(obj)
                    start = None
                    outside_from = match.end()
        if self._depth > 0:
            self._parts.append(line[start:] if start is not None else line)
        else:
            rest = line[outside_from:].strip()
            if rest:
                self._note(rest)
        return completed

    def _note(self, message: str) -> None:
        # fio can print a line per failed I/O (continue_on_error): keep memory bounded
        self.message_count += 1
        if len(self.messages) < MAX_MESSAGES:
            self.messages.append(message)

    def decode(self, text: str) -> dict[str, Any] | None:
        """The object ``text`` holds, None (noted in ``decode_errors``) when it is not one."""
        try:
            obj = figures.load_json(text, "a fio JSON object")
        except OutputParseError as exc:
            self.decode_errors.append(str(exc))
            return None
        return obj if isinstance(obj, dict) else None

    def pending_text(self) -> str:
        """The unfinished object's text so far (a truncated dump)."""
        return "\n".join(self._parts)


def split_json_objects(text: str) -> tuple[list[dict[str, Any]], JsonObjectSplitter]:
    """All complete top-level JSON objects of ``text`` and the splitter (messages, leftovers)."""
    splitter = JsonObjectSplitter()
    objects: list[dict[str, Any]] = []
    for line in text.splitlines():
        objects.extend(splitter.feed(line))
    return objects, splitter


def _latency_block_us(block: dict[str, Any], factor: float, where: str) -> dict[str, Any]:
    """fio's {min, max, mean, stddev, percentile} (in ns or µs) -> our *_us dict."""
    out: dict[str, Any] = {
        "min": _figure(block.get("min", 0), f"{where}.min") * factor,
        "max": _figure(block.get("max", 0), f"{where}.max") * factor,
        "mean": _figure(block.get("mean", 0.0), f"{where}.mean") * factor,
        "stdev": _figure(block.get("stddev", block.get("stdev", 0.0)), f"{where}.stddev") * factor,
    }
    if "N" in block:
        out["n"] = _count(block["N"], f"{where}.N")
    pct = block.get("percentile")
    if isinstance(pct, dict):
        out["percentiles"] = {
            percentile_key(_percent_key(k, f"{where}.percentile")): _figure(v, f"{where}.percentile.{k}") * factor
            for k, v in pct.items()
        }
    return out


def _percent_key(key: str, where: str) -> float:
    """A percentile's key ("99.000000") -> 99.0; FioParseError when it is no percentage."""
    number = figures.finite_number(key)
    if number is None or number > 100:
        raise FioParseError(f"{where}: key {key[:40]!r} is not a percentile")
    return number


def json_direction(block: dict[str, Any], include_bins: bool = True, where: str = "read") -> dict[str, Any]:
    """One direction ("read", "write", "trim") of a fio JSON job -> our direction dict.

    FioParseError names the field (``where`` is the direction's path) when a figure is not a
    finite, non-negative number."""
    f = lambda key, default=0.0: _figure(block.get(key, default), f"{where}.{key}")  # noqa: E731
    if "io_kbytes" in block:
        io_kib = f("io_kbytes")
    else:  # fio 2.x JSON: "io_bytes" held KiB despite its name
        io_kib = f("io_bytes")
    out: dict[str, Any] = {"iops": f("iops"), "bw_kib_s": f("bw"), "io_kib": io_kib, "runtime_ms": f("runtime")}
    if "total_ios" in block:
        out["total_ios"] = _count(block["total_ios"], f"{where}.total_ios")
    for name in ("slat", "clat", "lat"):
        if f"{name}_ns" in block:
            lat = _object(block[f"{name}_ns"], f"{where}.{name}_ns")
            out[f"{name}_us"] = _latency_block_us(lat, 0.001, f"{where}.{name}_ns")
            bins = lat.get("bins")
            if include_bins and isinstance(bins, dict) and bins:
                out[f"{name}_bins_ns"] = {
                    str(
                        _count(
                            figures.finite_number(k) if isinstance(k, str) else k,
                            f"{where}.{name}_ns.bins key {k[:40]!r}",
                        )
                    ): _count(v, f"{where}.{name}_ns.bins.{k}")
                    for k, v in bins.items()
                }
        elif name in block and isinstance(block[name], dict):
            out[f"{name}_us"] = _latency_block_us(block[name], 1.0, f"{where}.{name}")
    if "bw_min" in block:
        out["bw_stats_kib_s"] = {
            "min": f("bw_min"),
            "max": f("bw_max"),
            "per_pct": f("bw_agg"),
            "mean": f("bw_mean"),
            "stdev": f("bw_dev"),
            "samples": _count(block.get("bw_samples", 0), f"{where}.bw_samples"),
        }
    if "iops_min" in block:
        out["iops_stats"] = {
            "min": f("iops_min"),
            "max": f("iops_max"),
            "mean": f("iops_mean"),
            "stdev": f("iops_stddev"),
            "samples": _count(block.get("iops_samples", 0), f"{where}.iops_samples"),
        }
    return out


def _lat_dist_from_json(job: dict[str, Any], where: str) -> dict[str, float]:
    """latency_ns/us/ms buckets -> {"<upper bound in µs>": pct}."""
    dist: dict[str, float] = {}
    for key, factor in (("latency_ns", 0.001), ("latency_us", 1.0), ("latency_ms", 1000.0)):
        for bound, pct in _object(job.get(key), f"{where}.{key}").items():
            label = bucket_label(bound, factor)
            if label is None:
                raise FioParseError(f"{where}.{key}: bucket {bound[:40]!r} is not a latency bound")
            dist[label] = _figure(pct, f"{where}.{key}.{bound}")
    return dist


def _text(value: Any) -> str:
    """A JSON value fio writes as a string (a name, an option): anything else as short text."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return str(value)
    return f"<{type(value).__name__}>"


def parse_json_report(text: str) -> dict[str, Any]:
    """JSON / json+ output (one report or status dumps back to back) -> result.

    The last complete object carrying ``"jobs"`` wins: with --status-interval the final
    report comes last, and a dump cut short by a kill is skipped.
    """
    fast = _last_report_fast(text)
    if fast is not None:
        return fast
    splitter = JsonObjectSplitter(decode=False)
    texts: list[str] = []
    for line in text.splitlines():
        texts.extend(splitter.feed(line))
    # a long run holds thousands of dumps: decode from the end until a report is found
    dumps = sum(1 for t in texts if '"jobs"' in t)
    for candidate in reversed(texts):
        obj = splitter.decode(candidate)
        if obj is not None and isinstance(obj.get("jobs"), list):
            return json_report_to_result(
                obj, messages=splitter.messages, status_dumps=dumps, truncated=splitter.in_object
            )
    detail = f" ({splitter.decode_errors[-1]})" if splitter.decode_errors else ""
    raise FioParseError(f"no complete fio JSON report in the output{detail}")


#: fio starts each top-level report with "{" alone on a line; nested objects are indented
_REPORT_START_RE = re.compile(r"^\{[ \t]*\r?$", re.M)
#: lines of fio's output that cannot be part of its pretty-printed JSON
_FOREIGN_LINE_RE = re.compile(r"^(?![\s{}\[\]\"]).+$", re.M)


def _last_report_fast(text: str) -> dict[str, Any] | None:
    """The common case in one pass of C code: the last report decodes cleanly where it
    starts. None when it does not (cut short, foreign lines inside): take the slow path."""
    starts = [m.start() for m in _REPORT_START_RE.finditer(text)]
    if not starts:
        return None
    try:
        obj, end = figures.raw_decode(figures.strict_decoder(), text, starts[-1])
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("jobs"), list):
        return None
    messages = [line.strip() for line in _FOREIGN_LINE_RE.findall(text)][:MAX_MESSAGES]
    dumps = text.count('"fio version"')
    return json_report_to_result(obj, messages=messages, status_dumps=dumps)


def json_report_to_result(
    report: dict[str, Any], messages: list[str] | None = None, status_dumps: int = 1, truncated: bool = False
) -> dict[str, Any]:
    """One decoded fio JSON report -> result dict."""
    report_jobs = report["jobs"]
    for index, job in enumerate(report_jobs):
        if not isinstance(job, dict):
            raise FioParseError(f"jobs[{index}] is {type(job).__name__}, not a job object")
    plus = any(
        isinstance(job.get(d), dict) and isinstance(job[d].get("clat_ns"), dict) and "bins" in job[d]["clat_ns"]
        for job in report_jobs
        for d in ("read", "write", "trim")
    )
    jobs = []
    for index, job in enumerate(report_jobs):
        where = f"jobs[{index}]"
        options = _object(job.get("job options"), f"{where}.job options")
        entry: dict[str, Any] = {
            "name": _text(job.get("jobname", "")),
            "groupid": _count(job.get("groupid", 0), f"{where}.groupid"),
            "error": _count(job.get("error", 0), f"{where}.error"),
            "rw": _text(options.get("rw", "read")),
            "options": {str(k): _text(v) for k, v in options.items()},
        }
        for direction in ("read", "write", "trim", "mixed"):  # "mixed": unified_rw_reporting
            block = job.get(direction)
            if not isinstance(block, dict):
                continue
            parsed = json_direction(block, where=f"{where}.{direction}")
            if direction in ("read", "write") or parsed["io_kib"] > 0:
                entry[direction] = parsed
        if "usr_cpu" in job or "sys_cpu" in job:
            entry["cpu"] = {
                "usr_pct": _figure(job.get("usr_cpu", 0.0), f"{where}.usr_cpu"),
                "sys_pct": _figure(job.get("sys_cpu", 0.0), f"{where}.sys_cpu"),
                "ctx": _count(job.get("ctx", 0), f"{where}.ctx"),
                "majf": _count(job.get("majf", 0), f"{where}.majf"),
                "minf": _count(job.get("minf", 0), f"{where}.minf"),
            }
        for src, dst in (
            ("iodepth_level", "iodepth_pct"),
            ("iodepth_submit", "iodepth_submit_pct"),
            ("iodepth_complete", "iodepth_complete_pct"),
        ):
            if isinstance(job.get(src), dict):
                entry[dst] = {str(k): _figure(v, f"{where}.{src}.{k}") for k, v in job[src].items()}
        dist = _lat_dist_from_json(job, where)
        if dist:
            entry["lat_dist_pct"] = dist
        if "job_runtime" in job:
            entry["job_runtime_ms"] = _figure(job["job_runtime"], f"{where}.job_runtime")
        if "total_err" in job:
            entry["total_err"] = _count(job["total_err"], f"{where}.total_err")
            entry["first_error"] = _count(job.get("first_error", 0), f"{where}.first_error")
        jobs.append(entry)
    disks = []
    disk_list = report.get("disk_util")
    for index, disk in enumerate(disk_list if isinstance(disk_list, list) else []):
        where = f"disk_util[{index}]"
        disk = _object(disk, where)
        c = lambda key, disk=disk, where=where: _count(disk.get(key, 0), f"{where}.{key}")  # noqa: E731
        disks.append(
            {
                "name": _text(disk.get("name", "")),
                "read_ios": c("read_ios"),
                "write_ios": c("write_ios"),
                "read_merges": c("read_merges"),
                "write_merges": c("write_merges"),
                "read_ticks_ms": c("read_ticks"),
                "write_ticks_ms": c("write_ticks"),
                "in_queue_ms": c("in_queue"),
                "util_pct": _figure(disk.get("util", 0.0), f"{where}.util"),
            }
        )
    timestamp = report.get("timestamp_ms")
    result: dict[str, Any] = {
        "tool": "fio",
        "version": version_of(_text(report.get("fio version", ""))),
        "format": "json+" if plus else "json",
        "timestamp_ms": None if timestamp is None else _count(timestamp, "timestamp_ms"),
        "jobs": jobs,
        "disk_util": disks,
        "messages": list(messages or []),
    }
    global_options = report.get("global options")
    if global_options is not None:
        # what the command line gave before the first --name, or a job file's [global]: a
        # job's own options leave these out, so its iodepth may only be said here
        result["global_options"] = {str(k): _text(v) for k, v in _object(global_options, "global options").items()}
    if status_dumps > 1:
        result["status_dumps"] = status_dumps
    if truncated:
        result["truncated"] = True
    return result
