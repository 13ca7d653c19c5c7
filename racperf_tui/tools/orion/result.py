"""ORION's output formats.
Results (:func:`parse_output`, :func:`parse_result_files`, :func:`parse_path`) from 11.1 to 19c:
the summary figures, the latency lines and histogram (11.2+), the matrices of the CSV files,
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from racperf_tui.core.textio.bounded_read import read_regular_text_bounded

VERSION_RE = re.compile(r"ORION(?:: ORacle IO Numbers --)? VERSION\s+(\S+)", re.IGNORECASE)
STAMP_RE = re.compile(r"^\s*(?P<name>\S+?)_(?P<date>\d{8})_(?P<time>\d{4})\s*$")
ESTIMATE_RE = re.compile(r"(?:Calibration|Test) will take approximately (?P<n>\d+(?:\.\d+)?) minutes?")
_AT = r"@\s*Small=(?P<small>\d+)\s+and\s+Large=(?P<large>\d+)"
_NUM = r"[-+]?\d+(?:\.\d+)?"
MAX_MBPS_RE = re.compile(rf"Maximum Large MBPS\s*=\s*(?P<v>{_NUM})\s*{_AT}")
MAX_IOPS_RE = re.compile(rf"Maximum Small IOPS\s*=\s*(?P<v>{_NUM})\s*{_AT}")
MIN_LAT_RE = re.compile(rf"Minimum Small Latency\s*=\s*(?P<v>{_NUM})\s*(?P<unit>usecs|us|msecs|ms)?\s*{_AT}")
_LAT_LINE_RE = re.compile(
    rf"Small (?P<kind>Read|Write) Latency:\s*avg\s*=\s*(?P<avg>{_NUM})\s*us,\s*min\s*=\s*(?P<min>{_NUM})\s*us,"
    rf"\s*max\s*=\s*(?P<max>{_NUM})\s*us,\s*std dev\s*=\s*(?P<stdev>{_NUM})\s*us\s*{_AT}"
)
_HIST_HEAD_RE = re.compile(rf"Latency Histogram\s*{_AT}")
_HIST_ROW_RE = re.compile(
    r"^\s*(?P<low>\d+)\s*-\s*(?P<high>\d+)\s*us\s*:\s*(?P<read>\d+)(?:\s*\(\s*(?P<rpct>[\d.]+)\s*%\s*\))?"
    r"\s+(?P<write>\d+)(?:\s*\(\s*(?P<wpct>[\d.]+)\s*%\s*\))?\s*$"
)
_SUMMARY_KV_RE = re.compile(r"^(?P<key>[A-Z][A-Za-z /]+?)\s*:\s*,?\s*(?P<value>.*?)\s*$")

#: ORION's own failures -> what the user does about them
_FAILURES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"Failed to allocate shared global region with large pages"),
        "ORION could not allocate its shared memory with huge pages: run with --set hugenotneeded=true "
        "(-hugenotneeded), or configure huge pages (vm.nr_hugepages and the memlock limit)",
    ),
    (
        re.compile(r"Failure in opening \.lun file|could not open .*\.lun", re.IGNORECASE),
        "ORION could not open its .lun file: give the testname without .lun (ORION adds it) and run it "
        "where <testname>.lun is (racperf writes it into the run's directory)",
    ),
    (
        re.compile(r"error while loading shared libraries"),
        "ORION cannot load Oracle's libraries: ORACLE_HOME and LD_LIBRARY_PATH=$ORACLE_HOME/lib must name "
        "the home ORION belongs to (--set oracle_home=DIR)",
    ),
    (re.compile(r"Error in input parameters"), "ORION refused its options (see orion -help)"),
)


class OrionError(ValueError):
    """ORION stopped with one of its own errors; the message names the fix."""


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


def _at(match: re.Match[str]) -> dict[str, int]:
    return {"small": int(match["small"]), "large": int(match["large"])}


def _release(version: str) -> tuple[int, ...]:
    """(major, minor) of a version string: 11.1.0.7.0 -> (11, 1); RDBMS_19.3.0.0.0DBRU_... -> (19, 3)."""
    match = re.search(r"(\d+)\.(\d+)", version or "")
    return (int(match[1]), int(match[2])) if match else ()


def failure(text: str) -> str | None:
    """ORION's own failure in its output, said with the fix; None when there is none."""
    for pattern, fix in _FAILURES:
        for line in text.splitlines():
            if pattern.search(line):
                return f"{line.strip()}: {fix}"
    return None


def parse_text(text: str) -> dict[str, Any]:
    """ORION's stdout or summary.txt -> the figures it holds (no "tool" key; may be empty)."""
    out: dict[str, Any] = {}
    lines = text.splitlines()
    latencies: list[dict[str, Any]] = []
    histogram: list[dict[str, Any]] = []
    in_histogram = False
    for index, line in enumerate(lines):
        if "version" not in out:
            match = VERSION_RE.search(line)
            if match:
                out["version"] = match[1]
                continue
        if "testname" not in out:
            stamp = STAMP_RE.match(line)
            if stamp and index < 6:
                out["testname"], out["run_stamp"] = stamp["name"], f"{stamp['date']}_{stamp['time']}"
                continue
        match = ESTIMATE_RE.search(line)
        if match:
            out["estimate_s"] = float(match["n"]) * 60
            continue
        match = MAX_MBPS_RE.search(line)
        if match:
            out["max_large_mbps"], out["max_large_mbps_at"] = _number(match["v"]), _at(match)
            in_histogram = False
            continue
        match = MAX_IOPS_RE.search(line)
        if match:
            out["max_small_iops"], out["max_small_iops_at"] = _number(match["v"]), _at(match)
            in_histogram = False
            continue
        match = MIN_LAT_RE.search(line)
        if match:
            unit = match["unit"] or ""
            value = float(match["v"])
            # 11.1 printed unitless milliseconds; 11.2 and later "usecs"
            out["min_small_latency_us"] = round(value * 1000, 3) if unit in ("", "ms", "msecs") else value
            out["min_small_latency_at"] = _at(match)
            out["min_small_latency_printed_unit"] = unit or "ms (unitless)"
            in_histogram = False
            continue
        match = _LAT_LINE_RE.search(line)
        if match:
            latencies.append(
                {
                    "kind": match["kind"].lower(),
                    **{k: _number(match[k]) for k in ("avg", "min", "max", "stdev")},
                    "at": _at(match),
                }
            )
            continue
        match = _HIST_HEAD_RE.search(line)
        if match:
            out["histogram_at"] = _at(match)
            in_histogram = True
            continue
        row = _HIST_ROW_RE.match(line)
        if row and (in_histogram or histogram):
            entry: dict[str, Any] = {
                "low_us": int(row["low"]),
                "high_us": int(row["high"]),
                "read": int(row["read"]),
                "write": int(row["write"]),
            }
            if row["rpct"] is not None:
                entry["read_cum_pct"] = float(row["rpct"])
            if row["wpct"] is not None:
                entry["write_cum_pct"] = float(row["wpct"])
            histogram.append(entry)
            continue
        kv = _SUMMARY_KV_RE.match(line.strip())
        if kv:
            key, kv_value = kv["key"].strip(), str(kv["value"])
            if key == "Test":
                out.setdefault("testname", kv_value)
            elif key == "Small IO size":
                out["size_small_kb"] = _first_int(kv_value)
            elif key == "Large IO size":
                out["size_large_kb"] = _first_int(kv_value)
            elif key == "IO Types":
                out["io_types"] = kv_value
            elif key == "Simulated Array Type":
                out["simulate"] = kv_value.lower()
            elif key == "Write":
                out["write_pct"] = _first_int(kv_value)
            elif key == "Cache Size":
                out["cache_size"] = kv_value
            elif key == "Duration for each Data Point":
                out["duration_s"] = _first_int(kv_value)
            elif key == "Small Columns":
                out["small_columns"] = _int_list(kv_value)
            elif key == "Large Columns":
                out["large_columns"] = _int_list(kv_value)
            elif key == "Total Data Points":
                out["total_data_points"] = _first_int(kv_value)
        if line.strip() == "Commandline:" and index + 1 < len(lines):
            out["commandline"] = lines[index + 1].strip()
        if line.strip().startswith("Name:") and "Size:" in line:
            match = re.match(r"^\s*Name:\s*(\S+)\s+Size:\s*(\d+)", line)
            if match:
                out.setdefault("luns", []).append({"name": match[1], "size_bytes": int(match[2])})
    if latencies:
        # the lines after "Maximum Small IOPS" (the loaded point) come first; the minimum
        # latency point's follow: both are kept in "latencies"
        out["latencies"] = latencies
        for kind in ("read", "write"):
            first = next((l for l in latencies if l["kind"] == kind), None)
            if first is not None:
                out[f"small_{kind}_latency_us"] = {k: first[k] for k in ("avg", "min", "max", "stdev", "at")}
    if histogram:
        out["histogram"] = histogram
    return out


def _first_int(text: str) -> int | None:
    match = re.search(r"\d+", text)
    return int(match[0]) if match else None


def _int_list(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


def parse_csv(text: str) -> dict[str, Any]:
    """One of ORION's matrices -> ``{"small_loads", "large_loads", "values"}`` (``values[i][j]``
    at large_loads[i], small_loads[j]; None where not tested). Any text before the
    ``Large/Small`` row is skipped. ValueError when there is no such row."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.strip().lower().startswith("large/small")), None)
    if start is None:
        raise ValueError("not an ORION matrix: no 'Large/Small' row")
    header = [c.strip() for c in lines[start].split(",")]
    small_loads = [int(c) for c in header[1:] if c != ""]
    large_loads: list[int] = []
    values: list[list[float | None]] = []
    for line in lines[start + 1 :]:
        cells = [c.strip() for c in line.split(",")]
        if not cells or not cells[0]:
            if large_loads:
                break
            continue
        try:
            large = int(cells[0])
        except ValueError:
            break
        row: list[float | None] = []
        for j in range(len(small_loads)):
            cell = cells[j + 1] if j + 1 < len(cells) else ""
            row.append(float(cell) if cell else None)
        large_loads.append(large)
        values.append(row)
    return {"small_loads": small_loads, "large_loads": large_loads, "values": values}


def _lat_in_us(matrix: dict[str, Any], version: str | None) -> dict[str, Any]:
    """lat.csv is in ms in 11.1 and in us from 11.2. Without a version, a matrix whose every
    value is below 50 is taken as ms (no storage answers 8K reads in under 50 us on average
    from ORION's small-I/O loads, and none takes 50 ms)."""
    release = _release(version or "")
    cells = [v for row in matrix["values"] for v in row if v is not None]
    if release:
        in_ms = release < (11, 2)
        how = f"version {version}"
    else:
        in_ms = bool(cells) and max(cells) < 50
        how = "guessed from the values (no version known)"
    factor = 1000.0 if in_ms else 1.0
    values = [[None if v is None else round(v * factor, 3) for v in row] for row in matrix["values"]]
    return {**matrix, "values": values, "unit": "us", "printed_unit": "ms" if in_ms else "us", "unit_from": how}


_FILE_KINDS = ("summary.txt", "iops.csv", "mbps.csv", "lat.csv", "hist.txt", "trace.txt")
_RESULT_FILE_RE = re.compile(
    r"^(?P<prefix>.+?_\d{8}_\d{4})_(?P<kind>summary\.txt|iops\.csv|mbps\.csv|lat\.csv|"
    r"hist\.txt|trace\.txt)$"
)


def _group_files(files: Mapping[str, str]) -> tuple[str | None, dict[str, str]]:
    """(the newest <testname>_<date>_<time> prefix, kind -> text of its files)."""
    groups: dict[str, dict[str, str]] = {}
    for file_name, text in files.items():
        match = _RESULT_FILE_RE.match(os.path.basename(file_name))
        if match:
            groups.setdefault(match["prefix"], {})[match["kind"]] = text
    if not groups:
        return None, {}
    prefix = max(groups, key=lambda p: (p[-13:], p))
    return prefix, groups[prefix]


def parse_result_files(output: str, files: Mapping[str, str]) -> dict[str, Any]:
    """A finished run: ORION's stdout and the result files it wrote (name -> text) -> the result
    (see :func:`parse_output`). ORION's own failures give ``{"error": ...}`` naming the fix."""
    result: dict[str, Any] = {"tool": "orion"}
    prefix, kinds = _group_files(files)
    from_stdout = parse_text(output or "")
    from_summary = parse_text(kinds["summary.txt"]) if "summary.txt" in kinds else {}
    merged = {**from_stdout, **{k: v for k, v in from_summary.items() if v not in (None, [], {})}}
    if "hist.txt" in kinds and "histogram" not in merged:
        hist = parse_text(kinds["hist.txt"])
        for key in ("histogram", "histogram_at"):
            if key in hist:
                merged[key] = hist[key]
    version = merged.get("version")
    order = [
        "version",
        "testname",
        "run_stamp",
        "max_large_mbps",
        "max_large_mbps_at",
        "max_small_iops",
        "max_small_iops_at",
        "min_small_latency_us",
        "min_small_latency_at",
        "small_read_latency_us",
        "small_write_latency_us",
        "histogram_at",
        "histogram",
    ]
    for key in order:
        if key in merged:
            result[key] = merged[key]
    if prefix is not None:
        result.setdefault("testname", prefix[:-14])
        result.setdefault("run_stamp", prefix[-13:])
    for kind in ("iops", "mbps", "lat"):
        text = kinds.get(f"{kind}.csv")
        if text is None:
            continue
        try:
            matrix = parse_csv(text)
        except ValueError:
            continue
        result[kind] = _lat_in_us(matrix, version) if kind == "lat" else matrix
    for key, value in merged.items():
        if key not in result and key not in ("estimate_s",):
            result[key] = value
    if "estimate_s" in merged:
        result["orion_estimate_s"] = merged["estimate_s"]
    if prefix is not None:
        result["files"] = sorted(f"{prefix}_{kind}" for kind in kinds)
    problem = failure(output or "") or failure(kinds.get("summary.txt", "")) or failure(kinds.get("trace.txt", ""))
    if problem:
        result["error"] = problem
    return result


_FIGURES = ("max_large_mbps", "max_small_iops", "min_small_latency_us", "iops", "mbps", "lat")


def parse_output(text: str) -> dict[str, Any]:
    """ORION's captured stdout or a summary.txt -> ``{"tool": "orion", "version", "testname",
    "max_large_mbps", "max_large_mbps_at": {"small", "large"}, "max_small_iops",
    "max_small_iops_at", "min_small_latency_us", "min_small_latency_at",
    "small_read_latency_us": {"avg", "min", "max", "stdev", "at"}, "small_write_latency_us",
    "histogram": [{"low_us", "high_us", "read", "write"}], ...}``; with the result files
    (:func:`parse_result_files`, :func:`parse_path`) also ``"iops"``, ``"mbps"``, ``"lat"``.
    OrionError (a ValueError) for ORION's own failures, naming the fix, and for text that is
    not ORION's."""
    result = parse_result_files(text, {})
    if "error" in result:
        raise OrionError(result["error"])
    if not any(key in result for key in _FIGURES) and "version" not in result:
        raise ValueError(
            "not ORION output: no 'ORION' banner and no 'Maximum Large MBPS' / 'Maximum Small "
            "IOPS' / 'Minimum Small Latency' line"
        )
    return result


def parse_path(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``racperf parse orion PATH``: a run directory (its result files), a result file (its
    siblings of the same test found beside it), a CSV, or captured stdout."""
    target = Path(path)
    if target.is_dir():
        files = {
            p.name: read_regular_text_bounded(p)
            for p in sorted(target.iterdir())
            if p.is_file() and _RESULT_FILE_RE.match(p.name)
        }
        if not files:
            raise ValueError(f"{target}: no ORION result files (<testname>_<yyyymmdd>_<hhmm>_summary.txt ...)")
        stdout = target / "stdout.txt"
        result = parse_result_files(read_regular_text_bounded(stdout) if stdout.is_file() else "", files)
    else:
        text = read_regular_text_bounded(target)
        match = _RESULT_FILE_RE.match(target.name)
        if match:
            files = {
                p.name: read_regular_text_bounded(p)
                for p in sorted(target.parent.glob(f"{glob_escape(match['prefix'])}_*"))
                if p.is_file() and _RESULT_FILE_RE.match(p.name)
            }
            files[target.name] = text
            result = parse_result_files("", files)
        elif target.suffix.lower() == ".csv":
            matrix = parse_csv(text)
            kind = "lat" if target.stem.endswith("lat") else "mbps" if target.stem.endswith("mbps") else "iops"
            return {"tool": "orion", kind: _lat_in_us(matrix, None) if kind == "lat" else matrix}
        else:
            return parse_output(text)
    if "error" in result:
        raise OrionError(result["error"])
    return result


def glob_escape(text: str) -> str:
    return glob.escape(text)


def parse_result(output: str) -> dict[str, Any]:
    """Stdout only (the result files come through :func:`parse_result_files`)."""
    return parse_result_files(output, {})


def succeeded(result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
    """Judged by ORION's output: its own errors (with the fix), then its figures."""
    if not result:
        return False, f"no ORION output (exit status {exit_status})"
    if result.get("error"):
        return False, str(result["error"])
    if not any(key in result for key in _FIGURES):
        return False, f"ORION printed no results (exit status {exit_status})"
    if exit_status not in (0, None):
        return False, f"orion exited with status {exit_status}"
    figures = []
    if "max_small_iops" in result:
        figures.append(f"max {result['max_small_iops']} IOPS")
    if "max_large_mbps" in result:
        figures.append(f"max {result['max_large_mbps']} MB/s")
    if "min_small_latency_us" in result:
        figures.append(f"min latency {result['min_small_latency_us']} us")
    return True, ", ".join(figures) or "finished"
