"""Helpers shared by the iostat fidelity tests: read sysstat's output, map its columns to
ours, and list the figures that differ at sysstat's printed precision."""

from __future__ import annotations

import json

from racperf_tui.core.disks.iostat_math import IostatRow

#: sysstat 12 column -> how to print ours the way sysstat prints that column.
#: (areq-sz is printed in kB by sysstat 12: our avgrq-sz in sectors / 2.)
SYSSTAT_COLUMNS = {
    "r/s": lambda r: r.r_s,
    "w/s": lambda r: r.w_s,
    "rkB/s": lambda r: r.rkb_s,
    "wkB/s": lambda r: r.wkb_s,
    "rMB/s": lambda r: r.rkb_s / 1024,
    "wMB/s": lambda r: r.wkb_s / 1024,
    "rrqm/s": lambda r: r.rrqm_s,
    "wrqm/s": lambda r: r.wrqm_s,
    "r_await": lambda r: r.r_await_ms,
    "w_await": lambda r: r.w_await_ms,
    "aqu-sz": lambda r: r.avgqu_sz,
    "%util": lambda r: r.util_pct,
    "util": lambda r: r.util_pct,  # the JSON key
    "await": lambda r: r.await_ms,
    "areq-sz": lambda r: r.avgrq_sz / 2,
}

Report = list[tuple[str, dict[str, str]]]


def parse_sysstat_text(text: str) -> list[Report]:
    """iostat -x / -xs text output -> reports, each [(device, {column: printed figure})]."""
    reports: list[Report] = []
    columns: list[str] | None = None
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            columns = None
            continue
        if fields[0] in ("Device", "Device:"):
            columns = fields[1:]
            reports.append([])
            continue
        if columns is not None and len(fields) == len(columns) + 1:
            reports[-1].append((fields[0], dict(zip(columns, fields[1:]))))
    return reports


def parse_sysstat_json(text: str) -> list[Report]:
    """iostat -o JSON output -> reports (figures re-printed with 2 decimals, as in the file)."""
    doc = json.loads(text)
    reports: list[Report] = []
    for stats in doc["sysstat"]["hosts"][0]["statistics"]:
        report: Report = []
        for disk in stats["disk"]:
            report.append((disk["disk_device"], {k: f"{v:.2f}" for k, v in disk.items() if k != "disk_device"}))
        reports.append(report)
    return reports


def compare_report(
    expected: Report, rows: list[IostatRow], skip: frozenset[str] = frozenset(), label: str = ""
) -> list[str]:
    """Every difference between sysstat's report and ours: device sets and order, then each
    mapped column at 2 decimals. Devices in ``skip`` are left out on both sides."""
    problems: list[str] = []
    ours = {row.device: row for row in rows}
    expected_names = [d for d, _ in expected if d not in skip]
    our_names = [row.device for row in rows if row.device not in skip]
    if expected_names != our_names:
        problems.append(f"{label}: devices differ: sysstat {expected_names} racperf {our_names}")
    for device, figures in expected:
        if device in skip or device not in ours:
            continue
        row = ours[device]
        for column, printed in figures.items():
            getter = SYSSTAT_COLUMNS.get(column)
            if getter is None:
                continue
            mine = f"{getter(row):.2f}"
            if mine != printed:
                problems.append(f"{label} {device} {column}: sysstat {printed} racperf {mine}")
    return problems


def checked_columns(expected: list[Report]) -> int:
    """How many figures a comparison covers (to prove the test compared something)."""
    return sum(1 for report in expected for _, figures in report for column in figures if column in SYSSTAT_COLUMNS)
