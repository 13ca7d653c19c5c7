"""Saved iostat -x text of each sysstat generation -> racperf's column set, figures asserted."""

from __future__ import annotations

import datetime as dt
import json
import subprocess

import pytest

from racperf_tui.core.disks.history.columns import UnknownHeader, column_set
from racperf_tui.core.disks.history.report import HistoryReport, Problem
from racperf_tui.core.disks.history.sysstat_text import read_iostat_text
from racperf_tui.core.disks.iostat_math import COLUMNS
from tests.helpers import FIXTURES, racperf_cmd
from tests.helpers.iostat_oracle import parse_sysstat_text

HISTORY = FIXTURES / "iostat_history"
SYSSTAT = FIXTURES / "sysstat"


def read(name: str, text: str | None = None) -> tuple[list[HistoryReport], list[Problem]]:
    lines = (text if text is not None else (HISTORY / name).read_text()).splitlines()
    items = list(read_iostat_text(name, lines))
    return [i for i in items if isinstance(i, HistoryReport)], [i for i in items if isinstance(i, Problem)]


def row(report: HistoryReport, device: str) -> dict[str, float | None]:
    found = next(r for r in report.rows if r.device == device)
    return dict(zip(COLUMNS, found.values))


def test_sysstat7_sectors_halved_to_kilobytes() -> None:
    reports, problems = read("sysstat-7.0-x-sectors.txt")
    assert problems == []
    assert len(reports) == 2
    first, second = reports
    assert (first.host, first.since_boot, first.time, first.interval_s) == ("dbnode1", True, None, None)
    assert second.since_boot is False
    sda = row(first, "sda")
    assert sda["rkB/s"] == 8.0 and sda["wkB/s"] == 44.0  # 16 and 88 rsec/s
    assert sda["avgrq-sz"] == 26.0 and sda["avgqu-sz"] == 0.02 and sda["await"] == 5.0
    assert sda["r_await"] is None and sda["w_await"] is None  # not in 7.x: not invented
    assert sda["svctm"] == 2.0 and sda["%util"] == 0.8
    assert row(second, "sdb")["rkB/s"] == 640.0


def test_sysstat5_time_lines_dated_by_the_banner_across_midnight() -> None:
    reports, problems = read("sysstat-5.0-x-t-time-only.txt")
    assert problems == []
    assert [r.time for r in reports] == [dt.datetime(2009, 6, 1, 23, 59, 58), dt.datetime(2009, 6, 2, 0, 0, 3)]
    assert reports[1].interval_s == 5.0
    assert row(reports[1], "sda")["rkB/s"] == 32.0  # the file's rkB/s (it has rsec/s too)


def test_sysstat9_en_us_am_pm_four_digit_years() -> None:
    reports, problems = read("sysstat-9.0-xk-t-ampm.txt")
    assert problems == []
    assert [r.time for r in reports] == [dt.datetime(2012, 6, 1, 11, 59, 59), dt.datetime(2012, 6, 1, 12, 0, 4)]
    assert [r.interval_s for r in reports] == [None, 5.0]
    sda = row(reports[1], "sda")
    assert (sda["r/s"], sda["rkB/s"], sda["avgrq-sz"], sda["await"], sda["r_await"], sda["w_await"]) == (
        100.0,
        6400.0,
        128.0,
        10.0,
        8.0,
        14.0,
    )


def test_sysstat10_megabytes_times_1024_two_digit_years_24_hours() -> None:
    reports, problems = read("sysstat-10.1-xm-t-24h.txt")
    assert problems == []
    assert [r.time for r in reports] == [dt.datetime(2012, 6, 1, 23, 59, 58), dt.datetime(2012, 6, 2, 0, 0, 3)]
    sdc = row(reports[0], "sdc")
    assert sdc["rkB/s"] == 1024.0 and sdc["wkB/s"] == 512.0
    assert row(reports[1], "sdc")["rkB/s"] == 2560.0


def test_sysstat11_7_sizes_and_await_from_the_rates_decimal_commas_partitions() -> None:
    reports, problems = read("sysstat-11.7-x-t-iso-decimal-comma.txt")
    assert problems == []
    first = reports[0]
    assert first.time == dt.datetime(2019, 6, 1, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert reports[1].interval_s == 10.0
    sda = row(first, "sda")
    # avgrq-sz = 2 x (64 + 16) kB/s / (4 + 1) r+w/s; await = (4 x 2 + 1 x 12) / 5
    assert sda["avgrq-sz"] == 32.0 and sda["await"] == 4.0 and sda["avgqu-sz"] == 0.01
    assert sda["svctm"] == 1.0
    assert [r.device for r in first.rows] == ["sda", "sda1"]
    idle = row(reports[1], "sda")
    assert idle["avgrq-sz"] == 0.0 and idle["await"] == 0.0


def live_reports(roots: tuple[str, ...], options: tuple[str, ...]) -> list[dict[str, object]]:
    args = [a for root in roots for a in ("--root", str(SYSSTAT / root))]
    proc = subprocess.run(
        [*racperf_cmd(), "iostat", *args, *options, "--json", "1", str(len(roots))],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize(
    ("expected", "roots", "options"),
    [
        ("expected.iostat-x", ("root1", "root2"), ()),
        ("expected.iostat-x-p-ALL", ("root1", "root2"), ("-p", "ALL")),
        # sysstat's test build reads sdd from sys/block/sdd/stat there, racperf from
        # /proc/diskstats (test_iostat_vs_sysstat.py): sdd's figures differ at the source
        ("expected.iostat-x-ALL-flush", ("root3", "root4", "root5"), ("ALL",)),
    ],
)
def test_sysstat12_expected_output_equals_racperf_live_figures(
    expected: str, roots: tuple[str, ...], options: tuple[str, ...]
) -> None:
    """sysstat's own 12.x output of the roots, read back, gives the figures racperf computes
    from the same roots (to the printed precision: the file's figures are rounded)."""
    text = (SYSSTAT / expected).read_text()
    reports, problems = read(expected, text)
    assert problems == []
    live = live_reports(roots, options)
    assert len(reports) == len(live) == len(parse_sysstat_text(text))
    checked = 0
    for saved, computed in zip(reports, live):
        computed_rows = {d["device"]: d for d in computed["devices"]}  # type: ignore[attr-defined]
        for saved_row in saved.rows:
            if expected.endswith("flush") and saved_row.device == "sdd":
                continue
            figures = saved_row.as_dict()
            want = computed_rows[saved_row.device]
            assert figures["svctm"] is None  # sysstat 12 has none
            for key in ("r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "avgqu-sz", "r_await", "w_await", "%util"):
                assert figures[key] == pytest.approx(want[key], abs=0.006), (saved_row.device, key)
            rates = float(want["r/s"]) + float(want["w/s"])
            # avgrq-sz and await from rounded rates: the rounding error scales as 1/rate
            slack = 0.01 + (0.02 / rates * max(float(want["avgrq-sz"]), float(want["await"])) if rates else 0)
            assert figures["avgrq-sz"] == pytest.approx(want["avgrq-sz"], abs=max(slack, 0.02)), saved_row.device
            assert figures["await"] == pytest.approx(want["await"], abs=max(slack, 0.02)), saved_row.device
            checked += 1
    assert checked >= 10


def test_real_sysstat_outputs_here() -> None:
    """This machine's iostat (12.6): -x, -xk -t, -xm -t ISO, -x -t -p ALL."""
    for name in ("real-12.6-x.txt", "real-12.6-xk-t.txt", "real-12.6-xm-t-iso.txt", "real-12.6-x-t-pALL.txt"):
        reports, problems = read(name)
        assert problems == [], name
        assert len(reports) == 2 and reports[0].since_boot and not reports[1].since_boot
        assert all(r.host == "vm" and r.rows for r in reports)
        if "-t" in name:
            assert reports[1].interval_s == 1.0
    kilo, _ = read("real-12.6-xk-t.txt")
    loop0 = row(kilo[0], "loop0")
    # 12.x: avgrq-sz in sectors from the kB/s rates over every I/O, discards included
    assert loop0["avgrq-sz"] == pytest.approx(2 * (29418.72 + 267.27 + 61.51) / (910.66 + 19.86 + 0.00))
    assert loop0["await"] == pytest.approx((910.66 * 0.11 + 19.86 * 0.06) / (910.66 + 19.86))
    mega, _ = read("real-12.6-xm-t-iso.txt")
    assert row(mega[0], "loop0")["rkB/s"] == pytest.approx(28.72 * 1024)
    parts, _ = read("real-12.6-x-t-pALL.txt")
    assert any(r.device.startswith("loop0p") or r.device[-1].isdigit() for r in parts[0].rows)


def test_malformed_lines_named_and_skipped_the_rest_kept() -> None:
    text = (HISTORY / "sysstat-9.0-xk-t-ampm.txt").read_text().splitlines()
    text.insert(9, "sdz               0.00     3.00    2.00    six")  # a row cut short
    text.insert(
        10,
        "sdy               0.00     3.00    2.00    6.00    32.00    96.00    32.00     0.05    x  2.50 7.50 1.25 1.00",
    )
    reports, problems = read("cut.txt", "\n".join(text))
    assert [(p.source, p.line) for p in problems] == [("cut.txt", 10), ("cut.txt", 11)]
    assert "malformed device line" in problems[0].message
    assert len(reports) == 2 and [r.device for r in reports[0].rows] == ["sda", "dm-0"]


def test_a_truncated_last_line_is_named_and_the_report_kept() -> None:
    text = (HISTORY / "sysstat-7.0-x-sectors.txt").read_text()
    cut = text[: text.rindex("sdb") + 20]
    reports, problems = read("cut.txt", cut)
    assert len(reports) == 2 and [r.device for r in reports[1].rows] == ["sda"]
    assert len(problems) == 1 and problems[0].line == len(cut.splitlines())


def test_unknown_columns_are_not_read_wrong() -> None:
    with pytest.raises(UnknownHeader, match="tps"):
        column_set("tps kB/s rqm/s await areq-sz aqu-sz %util".split())
    reports, problems = read("xs", (SYSSTAT / "expected.iostat-xs").read_text())
    assert reports == [] and problems
    assert problems[0].message.startswith("iostat -xs (short) layout: tps and kB/s without the read/write split")
    with pytest.raises(UnknownHeader, match="not an iostat -x layout"):
        column_set("r/s w/s rkB/s wkB/s tps %util".split())


def test_a_long_line_and_a_long_report_are_linear() -> None:
    header = "Device            r/s     w/s     rkB/s     wkB/s  %util"
    rows = [f"sd{i}  1.00 2.00 3.00 4.00 5.00" for i in range(100_000)]
    text = "\n".join(["Linux 5.4 (h) \t01/01/20", "", "x" * 1_000_000, header, *rows, ""])
    reports, problems = read("big", text)
    assert len(reports) == 1 and len(reports[0].rows) == 100_000
    assert len(problems) == 1 and problems[0].line == 3
    assert row(reports[0], "sd99999")["avgrq-sz"] == pytest.approx(2 * 7 / 3)
