"""The grammar of fio's ``Jobs:`` status line (eta.c display_thread_status) in every
version's shape -> one console sample: jobs running, files open, job states, progress, ETA,
IOPS, bandwidth and the jobs' rate limits."""

from __future__ import annotations

import re
from typing import Any

from racperf_tui.tools import figures
from racperf_tui.tools.fio.figures import COUNT_SUFFIX, parse_count, read_count, read_figure, size_to_kib

_ETA_PART_RE = re.compile(r"(?<!\d)(\d+)([dhms])")
_COUNT_RE = re.compile(r"(?<!\w)(\w+)=(\d+)")
#: fio's status line (eta.c display_thread_status), in every version's shape:
#: ``Jobs: N (f=F)`` then optionally the rate or IOPS limits of the jobs -- 3.x / 2.17+
#: ``, MIN-MAX`` (num2str byte rates: ``0-1024KiB/s``, ``1024KiB/s-2048KiB/s``) or
#: ``, MIN-MAX IOPS``; 2.1x ``, CR=MAX/MIN KB/s`` or ``, CR=MAX/MIN IOPS`` -- then, while jobs
#: run and the ETA is known, ``: [RUN_STR][PCT][RATES][IOPS][eta ETA]`` (2.1x: the same
#: fields separated by blanks, ``[PCT done]``, ``[R/W/T /s]``, ``[R/W/T iops]``).
STATUS_RE = re.compile(r"^Jobs:[ \t]*(?P<running>\d+)[ \t]*\((?P<counts>[^()]*)\)(?P<tail>.*)$")
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
        return size_to_kib(read_figure(value), unit[:-3] + "B", legacy) / 8.0
    return size_to_kib(read_figure(value), unit or "B", legacy)


def parse_status_line(match: re.Match[str], index: int) -> dict[str, Any]:
    """One ``Jobs:`` status line (any shape :data:`STATUS_RE` describes) -> a sample dict."""
    sample: dict[str, Any] = {"index": index, "jobs_running": read_count(match.group("running"))}
    counts = dict(_COUNT_RE.findall(match.group("counts")))
    if "f" in counts:
        sample["files_open"] = read_count(counts["f"])
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
        out[state] = out.get(state, 0) + (read_count(repeat) if repeat else 1)
    return out


def _status_limits(text: str, sample: dict[str, Any]) -> None:
    """The jobs' rate or IOPS limits printed before the colon -> sample keys."""
    if m := _LIMIT_IOPS_RE.match(text):
        sample["iops_limit_min"], sample["iops_limit_max"] = read_figure(m.group("min")), read_figure(m.group("max"))
    elif m := _LIMIT_RATE_RE.match(text):
        # num2str prints 0 without a unit; the other end's unit says what it is
        unit = m.group("max_unit") or m.group("min_unit") or "B/s"
        sample["rate_limit_min_kib_s"] = _rate_kib_s(m.group("min"), m.group("min_unit") or unit)
        sample["rate_limit_max_kib_s"] = _rate_kib_s(m.group("max"), m.group("max_unit") or unit)
    elif m := _LIMIT_CR_RE.match(text):
        if m.group("what") == "IOPS":
            sample["iops_limit_min"] = read_figure(m.group("min")) * COUNT_SUFFIX[m.group("min_unit")]
            sample["iops_limit_max"] = read_figure(m.group("max")) * COUNT_SUFFIX[m.group("max_unit")]
        else:  # 2.1x printed KB/s meaning KiB/s
            sample["rate_limit_min_kib_s"] = size_to_kib(read_figure(m.group("min")), m.group("min_unit") + "KB", True)
            sample["rate_limit_max_kib_s"] = size_to_kib(read_figure(m.group("max")), m.group("max_unit") + "KB", True)


def _status_iops(field: str, sample: dict[str, Any]) -> None:
    """'r=14.5k,w=6195' (2.17+) or '1751/692/0' (2.1x read/write/trim)."""
    if "=" in field:
        for key, value, suffix in _IOPS_ITEM_RE.findall(field):
            sample[f"{_DIRECTION_OF[key]}_iops"] = read_figure(value) * COUNT_SUFFIX[suffix]
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
                sample[f"{name}_bw_kib_s"] = size_to_kib(read_figure(m.group(1)), m.group(2), legacy=True)
