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
fio's "job options") and ``global_options`` (JSON: fio's "global options"), ``pid`` per job
(text), ``mixed`` (unified_rw_reporting), ``total_err``
/ ``first_error`` (continue_on_error). Console samples: ``{"index", "jobs_running",
"files_open", "job_states", "progress_pct", "eta_s", "read_iops", "write_iops",
"read_bw_kib_s", "write_bw_kib_s"}`` as far as each status line has them.

Each format has its module: :mod:`~racperf_tui.tools.fio.json_report`, :mod:`~racperf_tui.tools.fio.text_report`
(normal text and console logs, whose status lines :mod:`~racperf_tui.tools.fio.status_line` reads),
:mod:`~racperf_tui.tools.fio.terse`; the figures they share are :mod:`~racperf_tui.tools.fio.figures`.
This module tells the formats apart. Only the standard library is used; nothing here knows
about hosts, runs or the UI.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from racperf_tui.tools.fio.figures import FioParseError
from racperf_tui.tools.fio.json_report import parse_json_report
from racperf_tui.tools.fio.terse import parse_terse
from racperf_tui.tools.fio.text_report import parse_text_report


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
