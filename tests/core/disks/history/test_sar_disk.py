"""``sar -d`` text of each generation -> reports in racperf's column set."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport, Problem
from racperf_tui.core.disks.iostat_math import COLUMNS
from tests.helpers import FIXTURES

HISTORY = FIXTURES / "iostat_history"


def read(path: Path) -> tuple[list[HistoryReport], list[Problem]]:
    items = list(read_history([path]))
    return [i for i in items if isinstance(i, HistoryReport)], [i for i in items if isinstance(i, Problem)]


def figures(report: HistoryReport, device: str) -> dict[str, float | None]:
    return dict(zip(COLUMNS, next(r for r in report.rows if r.device == device).values))


def test_sysstat9_sectors_am_pm_midnight_restart_averages_skipped() -> None:
    reports, problems = read(HISTORY / "sysstat-9.0-sar-d-ampm-restart.txt")
    assert problems == []
    assert [r.time for r in reports] == [
        dt.datetime(2012, 6, 2, 0, 0, 1),
        dt.datetime(2012, 6, 2, 0, 10, 1),
        dt.datetime(2012, 6, 2, 0, 30, 1),
    ]
    assert [r.interval_s for r in reports] == [600.0, 600.0, 600.0]
    assert all(r.host == "dbnode2" and not r.since_boot for r in reports)
    first = figures(reports[0], "dev8-0")
    assert first["rkB/s"] == 80.0 and first["wkB/s"] == 40.0  # rd_sec/s, wr_sec/s halved
    assert (first["avgrq-sz"], first["avgqu-sz"], first["await"], first["svctm"], first["%util"]) == (
        24.0,
        0.05,
        5.0,
        2.0,
        2.0,
    )
    assert first["r/s"] is None and first["r_await"] is None and first["rrqm/s"] is None  # sar has none


def test_sysstat12_real_sar_kilobyte_sizes_doubled_dev_first_or_last() -> None:
    for name in ("real-12.6-sar-d.txt", "real-12.6-sar-d-p-dev-last.txt"):
        reports, problems = read(HISTORY / name)
        assert problems == [], name
        assert reports and all(r.host == "vm" and r.interval_s == 1.0 for r in reports), name
    reports, _ = read(HISTORY / "real-12.6-sar-d.txt")
    vda = figures(reports[0], "vda")
    # 03:55:58 vda 32.00 tps 72.00 rkB/s 104.00 wkB/s 16.00 dkB/s 6.00 areq-sz 0.01 0.28 1.20
    assert (vda["rkB/s"], vda["wkB/s"], vda["avgrq-sz"], vda["avgqu-sz"], vda["await"], vda["%util"]) == (
        72.0,
        104.0,
        pytest.approx(12.0),
        0.01,
        0.28,
        1.2,
    )
    assert vda["svctm"] is None
    assert len(reports) == 2 and reports[1].time == dt.datetime(2026, 12, 2, 3, 55, 59)


def test_malformed_sar_line_named(tmp_path: Path) -> None:
    text = (HISTORY / "sysstat-9.0-sar-d-ampm-restart.txt").read_text().splitlines()
    text[4] = "12:00:01 AM   dev8-16      2.00      x     32.00     16.00      0.00      1.00      1.00      0.20"
    path = tmp_path / "sar.txt"
    path.write_text("\n".join(text) + "\n")
    reports, problems = read(path)
    assert [(p.line, p.message.split(":")[0]) for p in problems] == [(5, "malformed device line")]
    assert [row.device for row in reports[0].rows] == ["dev8-0"]
