"""fio's result laid out for the result view (``FioDescription.result_sections``): per job and
direction its IOPS and bandwidth, latencies, every completion latency percentile fio gives
(to 99.99), disk utilisation, and every other block fio reports (CPU, I/O depths, latency
distribution, bandwidth and IOPS statistics). Units and formats are the columns' MetricSpecs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from racperf_tui.core.contract.tool import MetricSpec, ResultTable, mapping_table, natural_key

DIRECTIONS = ("read", "write", "trim")
LATENCY_KINDS = (("slat_us", "slat"), ("clat_us", "clat"), ("lat_us", "lat"))
#: job keys shown in tables of their own
_SHOWN_JOB_KEYS = {"name", "read", "write", "trim", "sync", "error", "job_options", "job options"}
#: fio's three I/O depth histograms, shown side by side
_DEPTH_KEYS = (("iodepth_pct", "depth"), ("iodepth_submit_pct", "submit"), ("iodepth_complete_pct", "complete"))
_JOB_BLOCK_TITLES = {
    "cpu": "CPU",
    "lat_dist_pct": "latency distribution (% of I/Os <= µs)",
    "issued": "I/Os issued",
    "options": "job options",
}
#: per-direction blocks under Details (fio's bandwidth and IOPS statistics)
_DIRECTION_DETAIL_KEYS = ("bw_stats_kib_s", "iops_stats")

SUMMARY_COLUMNS = (
    MetricSpec("iops", "IOPS", decimals=1),
    MetricSpec("bw_kib_s", "BW", "MiB/s", divisor=1024.0, decimals=2),
    MetricSpec("bw_kib_s", "BW", "KiB/s", decimals=0),
    MetricSpec("io_kib", "I/O", "MiB", divisor=1024.0, decimals=1),
    MetricSpec("runtime_ms", "runtime", "s", divisor=1000.0, decimals=1),
)
LATENCY_COLUMNS = tuple(
    MetricSpec(key, label, "µs", decimals=1)
    for key, label in (("min", "min"), ("mean", "avg"), ("max", "max"), ("stdev", "stdev"))
)
DISK_UTIL_COLUMNS = (
    MetricSpec("read_ios", "read ios", decimals=0),
    MetricSpec("write_ios", "write ios", decimals=0),
    MetricSpec("util_pct", "util", "%", decimals=2),
)


def jobs_of(result: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    jobs = (result or {}).get("jobs")
    return [job for job in jobs if isinstance(job, Mapping)] if isinstance(jobs, list) else []


def active(direction: Any) -> bool:
    """Did the job do any I/O in this direction? (fio reports every direction, mostly zeros)."""
    if not isinstance(direction, Mapping) or not direction:
        return False
    return bool(direction.get("iops") or direction.get("io_kib") or direction.get("bw_kib_s"))


def _directions(job: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    return [(d, job[d]) for d in DIRECTIONS if active(job.get(d))]


def result_sections(result: Mapping[str, Any]) -> list[ResultTable]:
    jobs = jobs_of(result)
    summary_rows, latency_rows = [], []
    percentile_columns: list[tuple[str, Mapping[str, Any]]] = []
    for job in jobs:
        name = str(job.get("name", "?"))
        for direction, figures in _directions(job):
            summary_rows.append(((name, direction), tuple(figures.get(spec.key) for spec in SUMMARY_COLUMNS)))
            for key, kind in LATENCY_KINDS:
                lat = figures.get(key)
                if isinstance(lat, Mapping) and lat:
                    latency_rows.append(((name, direction, kind), tuple(lat.get(s.key) for s in LATENCY_COLUMNS)))
            percentiles = (figures.get("clat_us") or {}).get("percentiles") or {}
            if percentiles:
                percentile_columns.append((f"{name} {direction}", percentiles))
    keys = sorted({k for _, p in percentile_columns for k in p}, key=natural_key)
    tables = [
        ResultTable("IOPS and bandwidth", ("job", "dir"), SUMMARY_COLUMNS, tuple(summary_rows), key="summary"),
        ResultTable("Latency", ("job", "dir", "kind"), LATENCY_COLUMNS, tuple(latency_rows), key="latency"),
        ResultTable(
            "Completion latency percentiles (µs)",
            ("pct",),
            tuple(MetricSpec(name, name, decimals=1) for name, _ in percentile_columns),
            tuple(((str(k),), tuple(p.get(k) for _, p in percentile_columns)) for k in keys),
            tab="Percentiles",
            key="percentiles",
        ),
    ]
    tables += _job_details(jobs)
    for key, value in result.items():
        if key in ("jobs", "disk_util", "tool", "samples") or not isinstance(value, Mapping) or not value:
            continue
        tables.append(mapping_table(key.replace("_", " "), value))
    disks = [d for d in result.get("disk_util") or [] if isinstance(d, Mapping)]
    tables.append(
        ResultTable(
            "Disk utilisation",
            ("device",),
            DISK_UTIL_COLUMNS,
            tuple(((str(d.get("name", "?")),), tuple(d.get(s.key) for s in DISK_UTIL_COLUMNS)) for d in disks),
            tab="Details",
            key="disk-util",
        )
    )
    return tables


def result_notes(result: Mapping[str, Any]) -> list[str]:
    """Each job's error, then fio's own messages."""
    notes = [f"job {job.get('name', '?')}: error {job['error']}" for job in jobs_of(result) if job.get("error")]
    messages = result.get("messages")
    if isinstance(messages, list):
        notes.extend(str(m) for m in messages[:5])
    return notes


def _job_details(jobs: list[Mapping[str, Any]]) -> list[ResultTable]:
    """CPU, I/O depths, latency distribution...: whatever else each job carries. fio's summary
    has many small blocks; every block the parser kept (a dict of figures, or a dict of such
    dicts) is shown, so this stays complete without naming them all."""
    tables = []
    for job in jobs:
        name = job.get("name", "?")
        depths = {label: job[key] for key, label in _DEPTH_KEYS if isinstance(job.get(key), Mapping)}
        if depths:
            tables.append(_depth_table(f"{name}: I/O depths (% of I/Os)", depths))
        for key, value in job.items():
            if key in _SHOWN_JOB_KEYS or key in dict(_DEPTH_KEYS) or not isinstance(value, Mapping) or not value:
                continue
            title = f"{name}: {_JOB_BLOCK_TITLES.get(key, key.replace('_', ' '))}"
            tables.append(_latency_distribution(title, value) if key == "lat_dist_pct" else mapping_table(title, value))
        for direction, figures in _directions(job):
            stats = {
                key.replace("_", " "): figures[key]
                for key in _DIRECTION_DETAIL_KEYS
                if isinstance(figures.get(key), Mapping) and figures[key]
            }
            if stats:
                tables.append(mapping_table(f"{name}: {direction} bandwidth / IOPS statistics", stats))
    return tables


def _is_zero(figure: Any) -> bool:
    """A figure that reads as 0 (a number or numeric text); anything else counts as non-zero."""
    try:
        return float(figure) == 0.0
    except (TypeError, ValueError):
        return False


def _latency_distribution(title: str, dist: Mapping[str, Any]) -> ResultTable:
    """fio's latency buckets that hold I/Os, then one row standing for all the empty ones.

    fio has 32 buckets (2 ns to >= 2 s) and a run fills a handful; its own text report leaves
    the empty ones out too. Figures are shown as fio gave them: fio reports a bucket holding
    under 0.01 % of the I/Os as 0.01, never as 0, so only truly empty buckets are folded.
    """
    rows: list[tuple[tuple[str, ...], tuple[Any, ...]]] = []
    empty = 0
    for bound, figure in dist.items():
        if _is_zero(figure):
            empty += 1
        else:
            rows.append(((str(bound),), (float(figure) if not isinstance(figure, str) else figure,)))
    if empty:
        rows.append((("others" if rows else "all",), ("0",)))  # exactly 0: no rounding hides I/Os
    return ResultTable(title, ("",), (MetricSpec("value", "value", decimals=2),), tuple(rows), tab="Details")


def _depth_table(title: str, depths: Mapping[str, Mapping[str, Any]]) -> ResultTable:
    """Depth buckets as rows, the histograms (depth, submit, complete) as columns."""
    buckets = sorted({b for histogram in depths.values() for b in histogram}, key=natural_key)
    columns = tuple(MetricSpec(label, label, decimals=1) for label in depths)
    rows = tuple(((str(b),), tuple(h.get(b) for h in depths.values())) for b in buckets)
    return ResultTable(title, ("bucket",), columns, rows, tab="Details")
