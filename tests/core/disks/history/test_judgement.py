"""The archive judged: saturation episodes by the live rule, await percentiles per I/O, the
busiest intervals and the hours, with every figure computed by hand (saturating_log.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from racperf_tui.core.disks.history.judgement import ArchiveJudge, verdict_dict
from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport
from racperf_tui.core.disks.history.summary import ArchiveSummary, DeviceSummary, await_key, weighted_percentile
from racperf_tui.core.disks.saturation import SaturationRules
from tests.helpers import FIXTURES
from tests.helpers.oswatcher_archive import H10, osw_hour, osw_name
from tests.helpers.saturating_log import saturating_log


def summarise(*paths: Path) -> dict[tuple[str, str], DeviceSummary]:
    judge = ArchiveJudge(SaturationRules())
    summary = ArchiveSummary()
    for item in read_history(list(paths)):
        assert isinstance(item, HistoryReport), item
        summary.add(item, judge.judge(item))
    summary.take_episodes(judge.finish())
    return summary.devices


def at(seconds: int) -> dt.datetime:
    return dt.datetime(2020, 6, 1, 10, 59, 50) + dt.timedelta(seconds=seconds)


def test_episodes_percentiles_busiest_and_hours_of_a_saturating_device(tmp_path: Path) -> None:
    log = tmp_path / "iostat.log"
    log.write_text(saturating_log())
    sdb = summarise(log)[("dbnode7", "sdb")]
    assert (sdb.intervals, sdb.since_boot, sdb.first, sdb.last) == (22, 1, at(1), at(22))
    # queueing from sample 6 (3 in a row: recognised at 8) until saturated takes over at 14;
    # saturated from 12 (the 3-sample window's medians: 1,010 IOPS at 8 outstanding, 1,000
    # at 2.5) until 20: sample 17's window still holds two plateau samples, 18-20 are below
    episodes = [(e.level, e.start, e.end, e.open) for e in sdb.episodes]
    assert episodes == [("queueing", at(6), at(14), False), ("saturated", at(12), at(20), False)]
    assert sdb.episodes[1].reason.startswith("no more throughput: 1,010 IOPS at avgqu-sz 8.0, 1,000 at 2.5")
    # per I/O: 1 ms x (500 x 5 + 500 x 6) = 5,500 I/Os, 2.5 ms x 5,000, 8 ms x 5,050, 12 ms x 1,010:
    # 16,560 in all; p50 needs 8,280 (reached at 2.5), p95 15,732 (past 15,550: 12). Per
    # interval the median would be 1 ms: 11 of the 22 intervals.
    assert sdb.ios == 16560
    assert sdb.percentiles() == {"p50": 2.5, "p95": 12.0, "p99": 12.0, "max": 12.0, "ios": 16560.0}
    # the since-boot report's 3,000 IOPS and 99 ms are nowhere
    busiest = sdb.busiest(sdb.by_iops)
    assert [(i.time, i.iops, i.level) for i in busiest] == [
        (at(11), 1010.0, "queueing"),
        (at(12), 1010.0, "queueing"),
        (at(13), 1010.0, "queueing"),
        (at(14), 1010.0, "saturated"),
        (at(15), 1010.0, "saturated"),
    ]
    assert busiest[0].where == f"{log}:59"
    # 10:59:51-59: 2,500 + 4,000 I/Os in 9 s, await (2,500 x 1 + 4,000 x 2.5) / 6,500;
    # 11:00:00-12: 1,000 + 6,060 + 3,000 I/Os in 13 s, (1,000 x 2.5 + 1,010 x 52 + 3,000) / 10,060
    hours = [(h["hour"], h["intervals"], h["iops"], h["mb_s"], h["await_ms"], h["worst"]) for h in sdb.hour_rows()]
    assert hours == [
        ("2020-06-01T10:00", 9, 722.22, 5.64, 1.92, "queueing"),
        ("2020-06-01T11:00", 13, 773.85, 6.05, 5.77, "saturated"),
    ]


def test_saturation_verdicts_per_report_as_live(tmp_path: Path) -> None:
    log = tmp_path / "iostat.log"
    log.write_text(saturating_log())
    judge = ArchiveJudge(SaturationRules())
    levels = []
    for report in read_history([log], frozenset({"sdb"})):
        assert isinstance(report, HistoryReport)
        (verdict,) = judge.judge(report)
        levels.append(verdict_dict(verdict, judge.clock("dbnode7")))
    assert levels[0] == {"level": "ok", "reason": "", "since": None}  # since boot: not judged
    assert [v["level"] for v in levels[1:]] == ["ok"] * 7 + ["queueing"] * 6 + ["saturated"] * 6 + ["ok"] * 3
    assert levels[8]["since"] == "2020-06-01T10:59:56"
    assert levels[14]["since"] == "2020-06-01T11:00:02"


def test_without_times_episodes_say_report_numbers(tmp_path: Path) -> None:
    log = tmp_path / "iostat.log"
    log.write_text("\n".join(line for line in saturating_log().splitlines() if not line.startswith("06/01/20")))
    sdb = summarise(log)[("dbnode7", "sdb")]
    # report 1 is since boot: sample N is report N + 1; each interval weighs as 1 s
    assert [(e.level, e.start, e.start_report, e.end_report) for e in sdb.episodes] == [
        ("queueing", None, 7, 15),
        ("saturated", None, 13, 21),
    ]
    assert sdb.percentiles()["p50"] == 2.5 and sdb.hours == {}


def test_oswatcher_snapshots_since_boot_reports_left_out(tmp_path: Path) -> None:
    (tmp_path / osw_name("racnode1", H10)).write_text(osw_hour("racnode1", H10, snapshots=2))
    sda = summarise(tmp_path)[("racnode1", "sda")]
    # snapshots at 10:00:00 and 10:00:30, each iostat -xk 1 3: r/s 10 (since boot), 11, 12;
    # 20 (since boot), 21, 22; every await 2 ms, 8 kB a request
    assert (sda.intervals, sda.since_boot) == (4, 2)
    assert [(i.time, i.iops) for i in sda.busiest(sda.by_iops)] == [
        (dt.datetime(2020, 6, 1, 10, 0, 32, tzinfo=dt.UTC), 22.0),
        (dt.datetime(2020, 6, 1, 10, 0, 31, tzinfo=dt.UTC), 21.0),
        (dt.datetime(2020, 6, 1, 10, 0, 2, tzinfo=dt.UTC), 12.0),
        (dt.datetime(2020, 6, 1, 10, 0, 1, tzinfo=dt.UTC), 11.0),
    ]
    assert sda.hour_rows() == [
        {"hour": "2020-06-01T10:00+00:00", "intervals": 4, "iops": 16.5, "mb_s": 0.13, "await_ms": 2.0, "worst": "ok"}
    ]
    assert sda.percentiles() == {"p50": 2.0, "p95": 2.0, "p99": 2.0, "max": 2.0, "ios": 66.0}


def test_real_sysstat_and_sar_outputs() -> None:
    # sysstat 12.6 here, iostat -xk -t 1 2: vda's second report r/s 110, w/s 0, d/s 0, r_await 0.06
    vda = summarise(FIXTURES / "iostat_history" / "real-12.6-xk-t.txt")[("vm", "vda")]
    assert (vda.intervals, vda.since_boot, vda.ios) == (1, 1, 110.0)
    assert vda.percentiles()["p50"] == vda.percentiles()["max"] == 0.06
    # sar -d has no r/s, w/s: requests from kB/s and the request size; no report is since boot
    sar = summarise(FIXTURES / "iostat_history" / "real-12.6-sar-d.txt")[("vm", "vda")]
    assert (sar.intervals, sar.since_boot, sar.unjudged) == (2, 0, 0)
    assert sar.percentiles()["max"] == 0.28


def test_weighted_percentile_and_bins() -> None:
    assert weighted_percentile({}, 50) is None
    assert weighted_percentile({1.0: 1.0, 2.0: 1.0}, 50) == 1.0  # nearest rank: half is reached at 1
    assert weighted_percentile({1.0: 1.0, 2.0: 1.0}, 50.1) == 2.0
    assert weighted_percentile({1.0: 1.0, 5.0: 99.0}, 1) == 1.0
    assert [await_key(v) for v in (0.126, 9.994, 12.34, 123.4, 1234.5)] == [0.13, 9.99, 12.3, 123.0, 1230.0]
