"""Parsers for every output format fio writes, into one result shape.

Formats: JSON and json+ (one report, or ``--status-interval`` dumps back to back, with
non-JSON error lines around them), the normal text report of fio 2.x before 2.17
(``read : io=1394.2MB, bw=7926.4KB/s, iops=1981, runt=180113msec``) and of 2.17+
(``read: IOPS=6897, BW=53.1MiB/s (56.6MB/s)(2867MiB/53205msec)``), terse v3/v4/v5, and a
captured console log whose ``Jobs:`` status lines become ``"samples"``.

Result shape (every figure normalised: latencies in µs, bandwidth in KiB/s, amounts in KiB)::

    {"tool": "fio", "version": "3.33", "format": "json+",
     "jobs": [{"name", "groupid", "error", "rw", "jobs",
               "read": {"iops", "bw_kib_s", "io_kib", "runtime_ms", "total_ios",
                        "clat_us": {"min", "max", "mean", "stdev", "percentiles": {"99.00": ...}},
                        "lat_us": {...}, "slat_us": {...}, "bw_stats_kib_s": {...},
                        "iops_stats": {...}, "clat_bins_ns": {...} (json+ only)},
               "write": {...}, "trim": {...} (only when trim I/O was done),
               "cpu": {"usr_pct", "sys_pct", "ctx", "majf", "minf"},
               "iodepth_pct": {"1": 100.0, ..., ">=64": 0.0}, "iodepth_submit_pct": {...},
               "iodepth_complete_pct": {...},
               "lat_dist_pct": {"<=µs upper bound": pct, ...}, "issued": {...}}],
     "disk_util": [{"name", "read_ios", "write_ios", "read_merges", "write_merges",
                    "read_ticks_ms", "write_ticks_ms", "in_queue_ms", "util_pct"}],
     "messages": ["fio: ..."],              # non-report lines (errors, warnings)
     "samples": [...]}                       # console logs only

``format`` is one of json, json+, normal, normal-2.x, console, console-2.x, terse-v3/4/5.
Also present when the output has them: ``groups`` (text: the "Run status group" lines),
``status_dumps`` and ``truncated`` (JSON with --status-interval), ``options`` per job (JSON:
fio's "job options"), ``pid`` per job (text), ``mixed`` (unified_rw_reporting), ``total_err``
/ ``first_error`` (continue_on_error). Console samples: ``{"index", "jobs_running",
"files_open", "job_states", "progress_pct", "eta_s", "read_iops", "write_iops",
"read_bw_kib_s", "write_bw_kib_s"}`` as far as each status line has them.

Only the standard library is used; nothing here knows about hosts, runs or the UI.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

from racperf_tui.tools import figures
from racperf_tui.tools.figures import MAX_LINE_CHARS, OutputParseError, Warnings

#: fio's time unit words -> factor to microseconds
TIME_UNIT_TO_US: dict[str, float] = {"nsec": 0.001, "usec": 1.0, "msec": 1000.0, "sec": 1_000_000.0}

#: count suffixes of fio's num2str for non-byte figures (IOPS=18.3k, max=1179.3k)
_COUNT_SUFFIX: dict[str, float] = {"": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}

_BINARY_PREFIX_EXP: dict[str, int] = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}

PERCENTILE_KEY_FORMAT = "{:.2f}"


class FioParseError(OutputParseError):
    """Output that is not a fio report, or a report with an impossible figure; the message
    says what was expected and where (``jobs[0].read.iops: -5000.0 is negative``)."""


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


# ----------------------------------------------------------------------------------------
# units


def parse_count(text: str) -> float:
    """``'18.3k'`` -> 18300.0; fio prints large counts and latencies with 1000-based suffixes."""
    match = re.fullmatch(r"\s*(-?[\d.]+)\s*([kKmMGTP]?)\s*", text)
    if not match:
        raise FioParseError(f"{text[:40]!r} is not a number")
    return _num(match.group(1)) * _COUNT_SUFFIX[match.group(2)]


def _num(text: str | float) -> float:
    """A figure fio printed -> float; FioParseError when no fio prints it ("1.2.3", a
    400-digit number that float() would make inf, a negative one)."""
    number = figures.finite_number(text) if isinstance(text, str) else float(text)
    if number is None or not math.isfinite(number):
        shown = text[:40] + "..." if isinstance(text, str) and len(text) > 40 else text
        raise FioParseError(f"{shown!r} is no figure fio prints")
    return number


def _int(text: str | int) -> int:
    """A count fio printed -> int (see :func:`_num`)."""
    if isinstance(text, int):
        return text
    number = _num(text)
    if number != int(number):
        raise FioParseError(f"{text!r} is not a whole number")
    return int(number)


def size_to_kib(value: float, unit: str, legacy: bool = False) -> float:
    """Convert ``value`` in fio's size ``unit`` (KiB, MiB, kB, MB, KB, B, ...) to KiB.

    fio 2.17+ prints binary units (KiB, MiB) and decimal ones (kB, MB: 1000-based). fio
    before 2.17 printed KB/MB/GB but meant 1024-based: pass ``legacy=True`` for those.
    """
    unit = unit.strip()
    if unit.endswith("/s"):
        unit = unit[:-2].strip()
    unit = unit.replace(" ", "")
    if unit in ("", "B"):
        return value / 1024.0
    if not unit.endswith("B"):
        raise FioParseError(f"{unit!r} is not a size unit like KiB, MiB, kB, MB")
    prefix = unit[:-1]
    if prefix.endswith("i"):
        return value * 1024.0 ** _BINARY_PREFIX_EXP[prefix[:-1].upper()] / 1024.0
    exp = _BINARY_PREFIX_EXP.get(prefix.upper())
    if exp is None:
        raise FioParseError(f"{unit!r} is not a size unit like KiB, MiB, kB, MB")
    base = 1024.0 if legacy else 1000.0
    kib = value * base**exp / 1024.0
    if not math.isfinite(kib):
        raise FioParseError(f"{value:g} {unit} is beyond any size")
    return kib


def percentile_key(pct: float) -> str:
    """The result's percentile key: 99.9 -> ``'99.90'``."""
    return PERCENTILE_KEY_FORMAT.format(pct)


def histogram_percentiles(bins: dict[int, int], pcts: Iterable[float]) -> dict[float, float]:
    """Percentiles of a latency histogram, the way fio computes them from its own bins.

    ``bins`` maps a bucket's value (ns, the key fio writes in json+) to its count. For each
    percentile p the value is that of the first bucket where the running count reaches
    p % of the total (fio's calc_clat_percentiles), so the result equals fio's own
    percentiles for the same bins. Empty histogram -> empty dict.
    """
    total = sum(bins.values())
    if total <= 0:
        return {}
    wanted = sorted(pcts)
    out: dict[float, float] = {}
    running = 0
    index = 0
    for value in sorted(bins):
        running += bins[value]
        while index < len(wanted) and running >= total * wanted[index] / 100.0:
            out[wanted[index]] = float(value)
            index += 1
        if index == len(wanted):
            break
    for pct in wanted[index:]:
        out[pct] = float(max(bins))
    return out


# ----------------------------------------------------------------------------------------
# incremental JSON object splitting (shared with the live stream parser)

#: a JSON string token or a brace; the regex engine skips everything else in C
_JSON_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[{}]')
#: first character of any line of fio's pretty-printed JSON
_JSON_LINE_START = set('"{}[]-0123456789')
#: a bare literal alone on a line (an array element) is JSON too
_JSON_LITERAL_LINE = re.compile(r"^\s*(true|false|null)\s*,?\s*$")


#: non-JSON lines kept per output (the rest are only counted)
MAX_MESSAGES = 1000


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


# ----------------------------------------------------------------------------------------
# JSON / json+


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
            label = _bucket_label(bound, factor)
            if label is None:
                raise FioParseError(f"{where}.{key}: bucket {bound[:40]!r} is not a latency bound")
            dist[label] = _figure(pct, f"{where}.{key}.{bound}")
    return dist


def _bucket_label(bound: str, factor: float) -> str | None:
    """A latency-distribution bucket bound (``'750'``, ``'>=2000'``) in µs as a key; None
    when it is no bound."""
    bound = bound.strip()
    prefix = ""
    if bound.startswith(">="):
        prefix, bound = ">=", bound[2:]
    number = figures.finite_number(bound)
    if number is None:
        return None
    return prefix + _fmt_number(number * factor)


def _fmt_number(value: float) -> str:
    """Shortest faithful text of a number: 2.0 -> '2', 0.75 -> '0.75'."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text if text else "0"


def _text(value: Any) -> str:
    """A JSON value fio writes as a string (a name, an option): anything else as short text."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return str(value)
    return f"<{type(value).__name__}>"


def _version_of(text: str) -> str:
    return text[4:] if text.startswith("fio-") else text


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
        "version": _version_of(_text(report.get("fio version", ""))),
        "format": "json+" if plus else "json",
        "timestamp_ms": None if timestamp is None else _count(timestamp, "timestamp_ms"),
        "jobs": jobs,
        "disk_util": disks,
        "messages": list(messages or []),
    }
    if status_dumps > 1:
        result["status_dumps"] = status_dumps
    if truncated:
        result["truncated"] = True
    return result


# ----------------------------------------------------------------------------------------
# normal text (2.x before 2.17, and 2.17+)

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
        return size_to_kib(_num(v2), u2)
    return size_to_kib(_num(v1), u1)


def _parse_pct_items(items: str) -> dict[str, float]:
    """'1=100.0%, 2=0.0%, >=64=0.0%' -> {'1': 100.0, '2': 0.0, '>=64': 0.0}."""
    out = {}
    for key, value in _PCT_ITEMS_RE.findall(items):
        out[key] = _num(value)
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
                    block.setdefault(f"{kind}_us", {}).setdefault("percentiles", {})[percentile_key(_num(pct))] = (
                        _num(value) * factor
                    )
                continue
            pct_target = None
            if m := _VERSION_RE.match(line.strip()):
                version = m.group(1)
                continue
            if m := _STATUS_RE.match(line.strip()):
                samples.append(_parse_status_line(m, len(samples)))
                continue
            if m := _JOB_DESC_RE.match(line):
                rw_by_name.setdefault(m.group("name"), m.group("rw").strip())
                continue
            if m := _JOB_HEADER_RE.match(line):
                name = m.group("name")
                job = {
                    "name": name,
                    "groupid": _int(m.group("gid")),
                    "error": _int(m.group("err")),
                    "rw": rw_by_name.get(name, ""),
                    "jobs": _int(m.group("jobs")),
                    "pid": _int(m.group("pid")),
                }
                if m.group("errtext"):
                    job["error_text"] = m.group("errtext").strip()
                jobs[(name, m.group("pid"))] = job
                direction = None
                section = "job"
                continue
            if m := _GROUP_RE.match(line):
                group = {"groupid": _int(m.group("gid"))}
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
                        "io_kib": size_to_kib(_num(m.group("io")), m.group("iou")),
                        "runtime_ms": _num(m.group("rt")),
                    }
                    job[m.group("dir")] = direction
                    continue
                if m := _DIR_OLD_RE.match(line):
                    legacy = True
                    direction = {
                        "iops": parse_count(m.group("iops")),
                        "bw_kib_s": size_to_kib(_num(m.group("bw")), m.group("bu"), legacy=True),
                        "io_kib": size_to_kib(_num(m.group("io")), m.group("iou"), legacy=True),
                        "runtime_ms": _num(m.group("rt")),
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
                    conv = lambda v, unit=unit, legacy=legacy: size_to_kib(_num(v), unit, legacy=legacy)  # noqa: E731
                    direction["bw_stats_kib_s"] = {
                        "min": conv(m.group("min")),
                        "max": conv(m.group("max")),
                        "per_pct": _num(m.group("per")),
                        "mean": conv(m.group("avg")),
                        "stdev": conv(m.group("dev")),
                        "samples": _int(m.group("n") or 0),
                    }
                    continue
                if (m := _IOPS_STATS_RE.match(line)) and direction is not None:
                    direction["iops_stats"] = {
                        "min": _num(m.group("min")),
                        "max": _num(m.group("max")),
                        "mean": _num(m.group("avg")),
                        "stdev": _num(m.group("dev")),
                        "samples": _int(m.group("n") or 0),
                    }
                    continue
                if m := _LAT_DIST_RE.match(line):
                    factor = TIME_UNIT_TO_US[m.group("unit")]
                    dist = job.setdefault("lat_dist_pct", {})
                    for bound, pct in _parse_pct_items(m.group("items")).items():
                        label = _bucket_label(bound, factor)
                        if label is None:
                            raise FioParseError(f"{bound[:40]!r} is not a latency bound")
                        dist[label] = pct
                    continue
                if m := _CPU_RE.match(line):
                    job["cpu"] = {
                        "usr_pct": _num(m.group("usr")),
                        "sys_pct": _num(m.group("sys")),
                        "ctx": _int(m.group("ctx")),
                        "majf": _int(m.group("majf")),
                        "minf": _int(m.group("minf")),
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
                    totals = [_int(x) for x in m.group("total").split(",") if x]
                    job["issued"] = dict(zip(("read", "write", "trim", "sync"), totals))
                    continue
                if m := _ISSUED_OLD_RE.match(line):
                    job["issued"] = {
                        "read": _int(m.group("r")),
                        "write": _int(m.group("w")),
                        "trim": _int(m.group("d")),
                    }
                    continue
            if section == "group" and group is not None:
                if m := _GROUP_NEW_RE.match(line):
                    io_kib = _pick_binary(m.group("io1"), m.group("iu1"), m.group("io2"), m.group("iu2"))
                    group[m.group("dir").lower()] = {
                        "bw_kib_s": _pick_binary(m.group("bw1"), m.group("bu1"), m.group("bw2"), m.group("bu2")),
                        "io_kib": io_kib,
                        "runtime_min_ms": _num(m.group("mint")),
                        "runtime_max_ms": _num(m.group("maxt")),
                    }
                    continue
                if m := _GROUP_OLD_RE.match(line):
                    group[m.group("dir").lower()] = {
                        "bw_kib_s": size_to_kib(_num(m.group("bw")), m.group("bu"), legacy=True),
                        "io_kib": size_to_kib(_num(m.group("io")), m.group("iou"), legacy=True),
                        "runtime_min_ms": _num(m.group("mint")),
                        "runtime_max_ms": _num(m.group("maxt")),
                    }
                    continue
            if section == "disk" and (m := _DISK_RE.match(line)):
                disks[m.group("name")] = {
                    "name": m.group("name"),
                    "read_ios": _int(m.group("rios")),
                    "write_ios": _int(m.group("wios")),
                    "read_merges": _int(m.group("rm")),
                    "write_merges": _int(m.group("wm")),
                    "read_ticks_ms": _int(m.group("rt")),
                    "write_ticks_ms": _int(m.group("wt")),
                    "in_queue_ms": _int(m.group("q")) if m.group("q") else None,
                    "util_pct": _num(m.group("util")),
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
            entry["rw"] = _rw_from_directions(entry)
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


def _rw_from_directions(job: dict[str, Any]) -> str:
    has_r, has_w = "read" in job, "write" in job
    return "rw" if has_r and has_w else "write" if has_w else "read" if has_r else ""


_ETA_PART_RE = re.compile(r"(?<!\d)(\d+)([dhms])")
_COUNT_RE = re.compile(r"(?<!\w)(\w+)=(\d+)")
#: fio's status line (eta.c display_thread_status), in every version's shape:
#: ``Jobs: N (f=F)`` then optionally the rate or IOPS limits of the jobs -- 3.x / 2.17+
#: ``, MIN-MAX`` (num2str byte rates: ``0-1024KiB/s``, ``1024KiB/s-2048KiB/s``) or
#: ``, MIN-MAX IOPS``; 2.1x ``, CR=MAX/MIN KB/s`` or ``, CR=MAX/MIN IOPS`` -- then, while jobs
#: run and the ETA is known, ``: [RUN_STR][PCT][RATES][IOPS][eta ETA]`` (2.1x: the same
#: fields separated by blanks, ``[PCT done]``, ``[R/W/T /s]``, ``[R/W/T iops]``).
_STATUS_RE = re.compile(r"^Jobs:[ \t]*(?P<running>\d+)[ \t]*\((?P<counts>[^()]*)\)(?P<tail>.*)$")
#: one "[...]" field of the status line (no "[" inside, so "[[[[" costs O(n), not O(n²))
_STATUS_FIELD_RE = re.compile(r"\[([^\[\]]*)\]")
#: a num2str figure: number, SI/IEC prefix, unit (B/s, bit/s, or none for IOPS)
_N2S = r"(?P<{0}>\d+(?:\.\d+)?)(?P<{0}_unit>(?:[kKMGTPE]i?)?(?:B|bit)?(?:/s)?)"
_LIMIT_RATE_RE = re.compile(r"^" + _N2S.format("min") + r"[ \t]*-[ \t]*" + _N2S.format("max") + r"$")
_LIMIT_IOPS_RE = re.compile(r"^(?P<min>\d+)[ \t]*-[ \t]*(?P<max>\d+)[ \t]*IOPS$")
_LIMIT_CR_RE = re.compile(
    r"^CR=(?P<max>\d+(?:\.\d+)?)(?P<max_unit>[KMGTPE]?)/(?P<min>\d+(?:\.\d+)?)"
    r"(?P<min_unit>[KMGTPE]?)[ \t]*(?P<what>KB/s|IOPS)$"
)
_RATE_ITEM_RE = re.compile(r"(?<![\w.])([rwt])=(\d+(?:\.\d+)?)((?:[kKMGTPE]i?)?(?:B|bit))/s")
_IOPS_ITEM_RE = re.compile(r"(?<![\w.])([rwt])=(\d+(?:\.\d+)?)([kKMGTPE]?)(?![\w.])")
_RUN_STR_RE = re.compile(r"^(?:[A-Za-z_/](?:\(\d+\))?,?)+$")
#: job state letters of the run string (eta.c check_str_update)
JOB_STATES = {
    "P": "not created",
    "C": "created",
    "I": "initialized",
    "p": "pre-reading",
    "R": "seq read",
    "r": "random read",
    "W": "seq write",
    "w": "random write",
    "M": "seq mixed",
    "m": "random mixed",
    "D": "seq trim",
    "d": "random trim",
    "F": "fsyncing",
    "V": "verifying",
    "f": "finishing",
    "E": "exited",
    "/": "ramp",
    "_": "done",
    "K": "killed",
    "X": "error",
}
_DIRECTION_OF = {"r": "read", "w": "write", "t": "trim"}


def parse_eta_s(text: str) -> float | None:
    """fio's ETA text ``'01h:27m:00s'``, ``'00m:03s'``, ``'1d:02h:00m:00s'`` -> seconds;
    None when unknown (``'--'``, or whatever fio left in its buffer before the first ETA)."""
    total = 0.0
    parts = _ETA_PART_RE.findall(text)
    if not parts:
        return None
    for value, unit in parts:
        if len(value) > 6:
            return None
        total += int(value) * {"d": 86400, "h": 3600, "m": 60, "s": 1}[unit]
    return total


def _rate_kib_s(value: str, unit: str, legacy: bool = False) -> float:
    """A num2str rate ('56.5', 'MiB') -> KiB/s; 'bit' units are bits (fio's unit_base=1)."""
    unit = unit.replace("/s", "")
    if unit.endswith("bit"):
        return size_to_kib(_num(value), unit[:-3] + "B", legacy) / 8.0
    return size_to_kib(_num(value), unit or "B", legacy)


def _parse_status_line(match: re.Match[str], index: int) -> dict[str, Any]:
    """One ``Jobs:`` status line (any shape :data:`_STATUS_RE` describes) -> a sample dict."""
    sample: dict[str, Any] = {"index": index, "jobs_running": _int(match.group("running"))}
    counts = dict(_COUNT_RE.findall(match.group("counts")))
    if "f" in counts:
        sample["files_open"] = _int(counts["f"])
    tail = match.group("tail").strip()
    limits, _, rest = tail.partition(":") if not tail.startswith(":") else ("", ":", tail[1:])
    limits = limits.strip().lstrip(",").strip()
    if limits:
        _status_limits(limits, sample)
    for field in _STATUS_FIELD_RE.findall(rest):
        field = field.strip()
        if field.startswith("eta"):
            eta = parse_eta_s(field[3:])
            if eta is not None:
                sample["eta_s"] = eta
        elif field.endswith("% done") or field.endswith("%"):
            pct = figures.finite_number(field.replace("done", "").strip().rstrip("%"))
            if pct is not None and pct <= 100.0:
                sample["progress_pct"] = pct  # '-.-%': not known yet (ramp, start)
        elif field.upper().endswith("IOPS"):
            _status_iops(field[:-4].strip(), sample)
        elif field.endswith("/s"):
            _status_bw(field, sample)
        elif "job_states" not in sample and _RUN_STR_RE.match(field):
            sample["job_states"] = field
            sample["jobs_by_state"] = _count_states(field)
    return sample


def _count_states(run_str: str) -> dict[str, int]:
    """'m(3),_(1)' (condensed, fio >= 2.2) or '__mm_' (older) -> {'m': 3, '_': 1}."""
    out: dict[str, int] = {}
    for state, repeat in re.findall(r"([A-Za-z_/])(?:\((\d+)\))?", run_str):
        out[state] = out.get(state, 0) + (_int(repeat) if repeat else 1)
    return out


def _status_limits(text: str, sample: dict[str, Any]) -> None:
    """The jobs' rate or IOPS limits printed before the colon -> sample keys."""
    if m := _LIMIT_IOPS_RE.match(text):
        sample["iops_limit_min"], sample["iops_limit_max"] = _num(m.group("min")), _num(m.group("max"))
    elif m := _LIMIT_RATE_RE.match(text):
        # num2str prints 0 without a unit; the other end's unit says what it is
        unit = m.group("max_unit") or m.group("min_unit") or "B/s"
        sample["rate_limit_min_kib_s"] = _rate_kib_s(m.group("min"), m.group("min_unit") or unit)
        sample["rate_limit_max_kib_s"] = _rate_kib_s(m.group("max"), m.group("max_unit") or unit)
    elif m := _LIMIT_CR_RE.match(text):
        if m.group("what") == "IOPS":
            sample["iops_limit_min"] = _num(m.group("min")) * _COUNT_SUFFIX[m.group("min_unit")]
            sample["iops_limit_max"] = _num(m.group("max")) * _COUNT_SUFFIX[m.group("max_unit")]
        else:  # 2.1x printed KB/s meaning KiB/s
            sample["rate_limit_min_kib_s"] = size_to_kib(_num(m.group("min")), m.group("min_unit") + "KB", True)
            sample["rate_limit_max_kib_s"] = size_to_kib(_num(m.group("max")), m.group("max_unit") + "KB", True)


def _status_iops(field: str, sample: dict[str, Any]) -> None:
    """'r=14.5k,w=6195' (2.17+) or '1751/692/0' (2.1x read/write/trim)."""
    if "=" in field:
        for key, value, suffix in _IOPS_ITEM_RE.findall(field):
            sample[f"{_DIRECTION_OF[key]}_iops"] = _num(value) * _COUNT_SUFFIX[suffix]
    else:
        for name, value in zip(("read", "write", "trim"), field.split("/")):
            if value.strip():
                sample[f"{name}_iops"] = parse_count(value)


def _status_bw(field: str, sample: dict[str, Any]) -> None:
    """'r=56.5MiB/s,w=24.2MiB/s' (2.17+; bit/s with unit_base=1) or '7004KB/2768KB/0KB /s'
    (2.1x, 1024-based)."""
    if "=" in field:
        for key, value, unit in _RATE_ITEM_RE.findall(field):
            sample[f"{_DIRECTION_OF[key]}_bw_kib_s"] = _rate_kib_s(value, unit)
    else:
        values = field[:-2].strip().split("/")
        for name, value in zip(("read", "write", "trim"), values):
            m = re.fullmatch(r"\s*([\d.]+)\s*([KMGTP]?B)\s*", value)
            if m:
                sample[f"{name}_bw_kib_s"] = size_to_kib(_num(m.group(1)), m.group(2), legacy=True)


# ----------------------------------------------------------------------------------------
# terse v3 / v4 / v5

_TERSE_LAT_US_BOUNDS = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]
_TERSE_LAT_MS_BOUNDS = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"]
_TERSE_DEPTHS = ["1", "2", "4", "8", "16", "32", ">=64"]


def _terse_direction(f: list[str], version: int) -> dict[str, Any]:
    """One direction's fields of a terse line (41 fields, 47 in v5) -> direction dict."""
    it = iter(f)
    nxt = lambda: next(it)  # noqa: E731
    out: dict[str, Any] = {
        "io_kib": _num(nxt()),
        "bw_kib_s": _num(nxt()),
        "iops": _num(nxt()),
        "runtime_ms": _num(nxt()),
    }
    for kind in ("slat", "clat"):
        out[f"{kind}_us"] = {"min": _num(nxt()), "max": _num(nxt()), "mean": _num(nxt()), "stdev": _num(nxt())}
    pcts = {}
    for _ in range(20):
        item = nxt()
        if "=" in item:
            key, value = item.split("=", 1)
            pct = _num(key.rstrip("%"))
            if pct > 0:
                pcts[percentile_key(pct)] = _num(value)
    out["clat_us"]["percentiles"] = pcts
    out["lat_us"] = {"min": _num(nxt()), "max": _num(nxt()), "mean": _num(nxt()), "stdev": _num(nxt())}
    bw = {
        "min": _num(nxt()),
        "max": _num(nxt()),
        "per_pct": _num(nxt().rstrip("%")),
        "mean": _num(nxt()),
        "stdev": _num(nxt()),
    }
    if version >= 5:
        bw["samples"] = _int(nxt())
        out["iops_stats"] = {
            "min": _num(nxt()),
            "max": _num(nxt()),
            "mean": _num(nxt()),
            "stdev": _num(nxt()),
            "samples": _int(nxt()),
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
            version = _version_of(fields[1])
            job: dict[str, Any] = {"name": fields[2], "groupid": _int(fields[3]), "error": _int(fields[4])}
            pos = 5
            for d in ("read", "write", "trim")[:ndirs]:
                parsed = _terse_direction(fields[pos : pos + dir_len], terse_version)
                if d != "trim" or parsed["io_kib"] > 0:
                    job[d] = parsed
                pos += dir_len
            job["cpu"] = {
                "usr_pct": _num(fields[pos].rstrip("%")),
                "sys_pct": _num(fields[pos + 1].rstrip("%")),
                "ctx": _int(fields[pos + 2]),
                "majf": _int(fields[pos + 3]),
                "minf": _int(fields[pos + 4]),
            }
            pos += 5
            job["iodepth_pct"] = {k: _num(v.rstrip("%")) for k, v in zip(_TERSE_DEPTHS, fields[pos : pos + 7])}
            pos += 7
            dist = {}
            for bound, value in zip(_TERSE_LAT_US_BOUNDS, fields[pos : pos + 10]):
                dist[_bucket_label(bound, 1.0)] = _num(value.rstrip("%"))
            pos += 10
            for bound, value in zip(_TERSE_LAT_MS_BOUNDS, fields[pos : pos + 12]):
                dist[_bucket_label(bound, 1000.0)] = _num(value.rstrip("%"))
            pos += 12
            job["lat_dist_pct"] = dist
            while pos + 9 <= len(fields) and fields[pos] and not _is_number(fields[pos]):
                disk = fields[pos : pos + 9]
                disks[disk[0]] = {
                    "name": disk[0],
                    "read_ios": _int(disk[1]),
                    "write_ios": _int(disk[2]),
                    "read_merges": _int(disk[3]),
                    "write_merges": _int(disk[4]),
                    "read_ticks_ms": _int(disk[5]),
                    "write_ticks_ms": _int(disk[6]),
                    "in_queue_ms": _int(disk[7]),
                    "util_pct": _num(disk[8].rstrip("%")),
                }
                pos += 9
            if pos + 2 <= len(fields) and _is_number(fields[pos]) and _is_number(fields[pos + 1]):
                job["total_err"], job["first_error"] = _int(fields[pos]), _int(fields[pos + 1])
                pos += 2
            if pos < len(fields) and fields[pos]:
                job["description"] = ";".join(fields[pos:])
        except (ValueError, StopIteration, KeyError) as exc:
            warnings.add(f"terse v{terse_version} line {lineno}: bad field ({exc}); line skipped")
            continue
        job["rw"] = _rw_from_directions({k: v for k, v in job.items() if k in ("read", "write") and v["io_kib"] > 0})
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


# ----------------------------------------------------------------------------------------
# dispatch


def detect_format(text: str) -> str:
    """'json', 'terse' or 'text' for a saved fio output."""
    for line in _first_meaningful_lines(text):
        stripped = line.strip()
        if stripped.startswith("{"):
            return "json"
        if re.match(r"^[345];fio-", stripped):
            return "terse"
    # [ \t], not \s: \s crosses newlines, so every line start would rescan the blank lines after it
    if re.search(r'^[ \t]*"fio version"[ \t]*:', text, re.M):
        return "json"
    return "text"


def _first_meaningful_lines(text: str, limit: int = 200) -> Iterator[str]:
    for count, line in enumerate(text.splitlines()):
        if count >= limit:
            return
        if line.strip():
            yield line


def parse_any(text: str) -> dict[str, Any]:
    """Any saved fio output -> result dict; FioParseError says what was expected."""
    if not text.strip():
        raise FioParseError("empty output: expected fio JSON, normal text or terse output")
    kind = detect_format(text)
    if kind == "json":
        return parse_json_report(text)
    if kind == "terse":
        return parse_terse(text)
    try:
        return parse_text_report(text)
    except FioParseError:
        first = next(_first_meaningful_lines(text), "")[:80]
        raise FioParseError(
            "not fio output: expected JSON ('{\"fio version\": ...'), terse ('3;fio-...') or a normal "
            f"report ('NAME: (groupid=0, jobs=1): err= 0: ...'); first line is {first!r}"
        ) from None
