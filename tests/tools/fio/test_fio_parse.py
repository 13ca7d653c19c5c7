"""fio result parsing: every format on recorded real outputs, with the numbers asserted.

Fixtures: tests/fixtures/fio (see its README.md; made with the fio here by make_fixtures.sh,
plus fio 2.17's real output and a reconstructed fio 2.1.10 report).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from racperf_tui.tools.fio import result as fio_result
from racperf_tui.tools.fio.figures import FioParseError, histogram_percentiles, parse_count, size_to_kib
from racperf_tui.tools.fio.json_report import split_json_objects
from racperf_tui.tools.fio.status_line import parse_eta_s
from tests.helpers import FIXTURES, racperf_cmd

FIO_FIXTURES = FIXTURES / "fio"


def load(name: str) -> str:
    return (FIO_FIXTURES / name).read_text()


def parse(name: str) -> dict:
    return fio_result.parse_output(load(name))


# ---------------------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("value", "unit", "legacy", "kib"),
    [
        (53.1, "MiB", False, 54374.4),
        (56.6, "MB", False, 56.6e6 / 1024),  # 2.17+ decimal MB
        (7926.4, "KB", True, 7926.4),  # before 2.17, KB meant KiB
        (1394.2, "MB", True, 1394.2 * 1024),
        (2032, "kB", False, 2032 * 1000 / 1024),
        (1024, "KiB", False, 1024.0),
        (4096, "B", False, 4.0),
        (1.5, "GiB", False, 1.5 * 1024 * 1024),
        (3542, "MiB/s", False, 3542 * 1024),
    ],
)
def test_size_units_normalise_to_kib(value: float, unit: str, legacy: bool, kib: float) -> None:
    assert size_to_kib(value, unit, legacy=legacy) == pytest.approx(kib)


def test_size_unit_rejects_garbage() -> None:
    with pytest.raises(FioParseError, match="'XB' is not a size unit"):
        size_to_kib(1, "XB")


@pytest.mark.parametrize(
    ("text", "value"),
    [("18.3k", 18300), ("1179.3k", 1179300), ("6897", 6897), ("17470k", 17_470_000), ("1.2M", 1_200_000)],
)
def test_counts_with_fio_suffixes(text: str, value: float) -> None:
    assert parse_count(text) == pytest.approx(value)


@pytest.mark.parametrize(("text", "seconds"), [("00m:03s", 3), ("01h:27m:00s", 5220), ("1d:02h:00m:01s", 93601)])
def test_eta_text(text: str, seconds: float) -> None:
    assert parse_eta_s(text) == seconds


# ---------------------------------------------------------------------------- text 2.17+


def test_fio_2_17_sample_text_report() -> None:
    result = parse("fio-2.17-randrw-4jobs.txt")
    assert result["tool"] == "fio" and result["version"] == "2.17"
    assert result["format"] == "console"  # it carries one "Jobs:" status line
    (job,) = result["jobs"]
    assert (job["name"], job["groupid"], job["error"], job["jobs"], job["rw"]) == ("iotest", 0, 0, 4, "randrw")
    read, write = job["read"], job["write"]
    assert read["iops"] == 6897
    assert read["bw_kib_s"] == pytest.approx(53.1 * 1024)  # the binary figure, not 56.6MB/s
    assert read["io_kib"] == pytest.approx(2867 * 1024)
    assert read["runtime_ms"] == 53205
    assert read["clat_us"]["min"] == 75 and read["clat_us"]["max"] == 16751
    assert read["clat_us"]["mean"] == pytest.approx(391.74)
    assert read["clat_us"]["stdev"] == pytest.approx(335.46)
    assert read["clat_us"]["percentiles"]["99.00"] == 1656
    assert read["clat_us"]["percentiles"]["99.90"] == 3312
    assert read["clat_us"]["percentiles"]["1.00"] == 80
    assert len(read["clat_us"]["percentiles"]) == 17
    assert read["lat_us"]["mean"] == pytest.approx(392.36)
    assert read["total_ios"] == 366973
    assert write["iops"] == 2956
    assert write["bw_kib_s"] == pytest.approx(23.2 * 1024)
    assert write["clat_us"]["percentiles"]["99.00"] == 1592
    assert write["total_ios"] == 157315
    assert job["lat_dist_pct"]["100"] == 6.81
    assert job["lat_dist_pct"]["2000"] == 3.53  # "lat (msec) : 2=3.53%"
    assert job["lat_dist_pct"]["20000"] == 0.01
    assert job["cpu"] == {"usr_pct": 1.31, "sys_pct": 19.35, "ctx": 744673, "majf": 0, "minf": 9}
    assert job["iodepth_pct"]["1"] == 100.0 and job["iodepth_pct"][">=64"] == 0.0
    assert job["iodepth_submit_pct"]["4"] == 100.0
    assert result["groups"][0]["read"]["io_kib"] == pytest.approx(2867 * 1024)
    assert result["groups"][0]["write"]["runtime_max_ms"] == 53205
    assert result["disk_util"] == []  # not published with that sample
    assert result["messages"].count("fio: os or kernel doesn't support IO scheduler switching") == 4
    (sample,) = result["samples"]
    assert sample["read_iops"] == 7486 and sample["write_iops"] == 3249
    assert sample["read_bw_kib_s"] == pytest.approx(58.5 * 1024)
    assert sample["progress_pct"] == 100.0 and sample["eta_s"] == 0 and sample["job_states"] == "m(4)"


def test_fio_3_text_two_jobs_nsec_and_disk_stats() -> None:
    result = parse("fio-3.33-randrw-2jobs.txt")
    assert result["format"] == "normal" and result["version"] == "3.33"
    first, second = result["jobs"]
    assert first["pid"] != second["pid"]
    assert first["read"]["iops"] == 17700  # "IOPS=17.7k"
    assert first["read"]["bw_kib_s"] == 138 * 1024
    assert first["read"]["io_kib"] == 139 * 1024
    assert first["read"]["clat_us"]["min"] == pytest.approx(0.691)  # nsec -> µs
    assert first["read"]["clat_us"]["max"] == pytest.approx(3675.2)  # "3675.2k" nsec
    assert first["read"]["clat_us"]["mean"] == pytest.approx(46.05232)
    assert first["read"]["clat_us"]["percentiles"]["99.00"] == pytest.approx(175.104)
    assert first["write"]["iops"] == 7527
    assert first["write"]["io_kib"] == pytest.approx(58.9 * 1024)
    assert first["write"]["clat_us"]["percentiles"]["99.90"] == pytest.approx(317.44)
    assert second["write"]["iops"] == 7649
    assert first["lat_dist_pct"]["0.75"] == 0.01 and first["lat_dist_pct"]["4000"] == 0.01
    assert first["cpu"]["sys_pct"] == 25.0
    (disk,) = result["disk_util"]
    assert disk == {
        "name": "vda",
        "read_ios": 16315,
        "write_ios": 5780,
        "read_merges": 5,
        "write_merges": 0,
        "read_ticks_ms": 1003,
        "write_ticks_ms": 3654,
        "in_queue_ms": 4659,
        "util_pct": 68.67,
    }
    assert result["groups"][0]["write"]["io_kib"] == 119 * 1024


def test_fio_3_text_write_only_usec_slat_and_mib_bw_stats() -> None:
    result = parse("fio-3.33-seqwrite-1m.txt")
    (job,) = result["jobs"]
    assert job["rw"] == "write"
    write = job["write"]
    assert write["iops"] == 3542 and write["bw_kib_s"] == 3542 * 1024 and write["runtime_ms"] == 1003
    assert write["slat_us"] == {"min": 30, "max": 1773, "mean": 66.71, "stdev": 39.84}
    assert write["clat_us"]["percentiles"]["99.99"] == 350225
    assert write["bw_stats_kib_s"]["mean"] == pytest.approx(3549 * 1024)  # "bw (  MiB/s)"
    assert write["iops_stats"]["samples"] == 2
    assert job["read"]["io_kib"] == 0  # a write job still has a (zero) read block
    assert job["lat_dist_pct"]["500000"] == 0.03  # "lat (msec) : 500=0.03%"
    assert job["issued"]["write"] == 3553


def test_repeated_text_reports_keep_the_last() -> None:
    result = parse("fio-3.33-randread-status.txt")
    (job,) = result["jobs"]  # the same job (name, pid) three times: one entry, the last report
    assert job["read"]["iops"] == 15700 and job["read"]["runtime_ms"] == 2001
    assert job["read"]["io_kib"] == 122 * 1024
    assert len(result["disk_util"]) == 1 and len(result["groups"]) == 1


@pytest.mark.parametrize(("unit", "factor"), [("nsec", 0.001), ("usec", 1.0), ("msec", 1000.0), ("sec", 1e6)])
def test_latency_units_of_the_text_report(unit: str, factor: float) -> None:
    text = (
        "fio-3.33\nj: (groupid=0, jobs=1): err= 0: pid=1: Mon Nov 30 02:53:34 2026\n"
        "  read: IOPS=10, BW=40.0KiB/s (41.0kB/s)(400KiB/10000msec)\n"
        f"    clat ({unit}): min=2, max=1.5k, avg=10.50, stdev=3.25\n"
        f"    clat percentiles ({unit}):\n"
        "     |  1.00th=[    2], 99.00th=[   12]\n"
    )
    clat = fio_result.parse_output(text)["jobs"][0]["read"]["clat_us"]
    assert clat["min"] == pytest.approx(2 * factor) and clat["max"] == pytest.approx(1500 * factor)
    assert clat["mean"] == pytest.approx(10.5 * factor) and clat["stdev"] == pytest.approx(3.25 * factor)
    assert clat["percentiles"] == {"1.00": pytest.approx(2 * factor), "99.00": pytest.approx(12 * factor)}


# ---------------------------------------------------------------------------- text before 2.17


def test_fio_2_1_text_report_with_1024_based_units() -> None:
    result = parse("fio-2.1.10-randrw-50jobs.txt")
    assert result["version"] == "2.1.10" and result["format"] == "console-2.x"
    (job,) = result["jobs"]
    assert job["jobs"] == 50 and job["rw"] == "randrw"
    read, write = job["read"], job["write"]
    assert read["iops"] == 1981
    assert read["bw_kib_s"] == pytest.approx(7926.4)
    assert read["io_kib"] == pytest.approx(1394.2 * 1024)
    assert read["runtime_ms"] == 180113
    assert read["clat_us"]["mean"] == pytest.approx(24323.79)
    assert read["clat_us"]["percentiles"]["99.00"] == 124_000  # percentiles header said msec
    assert read["bw_stats_kib_s"]["max"] == 537 and read["bw_stats_kib_s"]["per_pct"] == 2.0
    assert write["io_kib"] == 615280
    assert write["bw_kib_s"] == pytest.approx(3416.8)
    assert write["clat_us"]["percentiles"]["99.00"] == 40192
    assert job["issued"] == {"read": 356911, "write": 153820, "trim": 0}
    assert job["lat_dist_pct"]["1000"] == 4.87 and job["lat_dist_pct"]["750000"] == 0.01
    assert result["groups"][0]["read"]["bw_kib_s"] == 7926
    assert result["disk_util"][0]["util_pct"] == 99.99
    (sample,) = result["samples"]
    assert sample["jobs_running"] == 21 and sample["progress_pct"] == 3.4
    assert sample["read_bw_kib_s"] == 7004 and sample["write_bw_kib_s"] == 2768
    assert sample["read_iops"] == 1751 and sample["write_iops"] == 692
    assert sample["eta_s"] == 87 * 60


# ---------------------------------------------------------------------------- console log


def test_console_log_status_lines_become_samples() -> None:
    result = parse("fio-3.33-console.log")
    assert result["format"] == "console"
    samples = result["samples"]
    # "\r"-separated updates, including the bare "Jobs: 1 (f=1)" ones fio prints first
    assert len(samples) == 5
    detailed = [s for s in samples if "read_iops" in s]
    assert [s["progress_pct"] for s in detailed] == [60.0, 80.0, 100.0]
    assert detailed[0]["read_iops"] == 15400 and detailed[0]["write_iops"] == 6529
    assert detailed[0]["read_bw_kib_s"] == pytest.approx(60.1 * 1024)
    assert detailed[0]["eta_s"] == 2
    (job,) = result["jobs"]
    assert job["read"]["iops"] == 15700 and job["read"]["runtime_ms"] == 5001
    assert job["read"]["clat_us"]["max"] == pytest.approx(17470.0)


# ---------------------------------------------------------------------------- JSON / json+


def test_json_report_group_reporting() -> None:
    text = load("fio-3.33-randrw-2jobs.json")
    raw = json.loads(text)["jobs"][0]
    result = fio_result.parse_output(text)
    assert result["format"] == "json" and result["version"] == "3.33"
    (job,) = result["jobs"]
    assert job["rw"] == "randrw" and job["options"]["numjobs"] == "2"
    read = job["read"]
    assert read["iops"] == pytest.approx(39425.574426)
    assert read["bw_kib_s"] == 315404 and read["io_kib"] == 315720 and read["runtime_ms"] == 1001
    assert read["clat_us"]["mean"] == pytest.approx(raw["read"]["clat_ns"]["mean"] / 1000)
    assert read["clat_us"]["percentiles"]["99.00"] == pytest.approx(140.288)
    assert read["lat_us"]["max"] == pytest.approx(raw["read"]["lat_ns"]["max"] / 1000)
    assert job["write"]["iops"] == pytest.approx(16912.087912)
    assert "clat_bins_ns" not in read  # plain json has no histogram
    assert job["cpu"]["ctx"] == raw["ctx"]
    assert job["iodepth_pct"]["1"] == 100.0
    assert job["lat_dist_pct"]["0.75"] == raw["latency_ns"]["750"]
    assert job["lat_dist_pct"][">=2000000"] == raw["latency_ms"][">=2000"]
    assert result["disk_util"][0]["name"] == "vda" and result["disk_util"][0]["util_pct"] == pytest.approx(67.00925)


def test_json_plus_keeps_histogram_and_its_percentiles_match_fio() -> None:
    result = parse("fio-3.33-randread.jsonplus.json")
    assert result["format"] == "json+"
    read = result["jobs"][0]["read"]
    assert read["iops"] == pytest.approx(14765.234765)
    assert read["clat_us"]["percentiles"]["99.00"] == pytest.approx(122.368)
    bins = {int(k): v for k, v in read["clat_bins_ns"].items()}
    assert sum(bins.values()) == read["total_ios"]
    ours = histogram_percentiles(bins, [50.0, 99.0, 99.9])
    assert ours[99.0] / 1000 == pytest.approx(read["clat_us"]["percentiles"]["99.00"])
    assert ours[50.0] / 1000 == pytest.approx(read["clat_us"]["percentiles"]["50.00"])
    assert ours[99.9] / 1000 == pytest.approx(read["clat_us"]["percentiles"]["99.90"])


#: the shape of fio 2.2's JSON (reconstructed, trimmed): latencies in µs under "clat",
#: and "io_bytes" that held KiB despite its name (1779 I/Os of 4 KiB = 7116 KiB)
FIO_2_2_JSON = """
{
  "fio version" : "fio-2.2.10",
  "timestamp" : 1444144664,
  "time" : "Tue Oct  6 11:17:44 2015",
  "jobs" : [
    {
      "jobname" : "random-read",
      "groupid" : 0,
      "error" : 0,
      "eta" : 0,
      "elapsed" : 26,
      "read" : {
        "io_bytes" : 7116,
        "bw" : 275,
        "iops" : 68.99,
        "runtime" : 25788,
        "total_ios" : 1779,
        "short_ios" : 0,
        "drop_ios" : 0,
        "slat" : {"min" : 0, "max" : 0, "mean" : 0.00, "stddev" : 0.00},
        "clat" : {"min" : 210, "max" : 98110, "mean" : 14490.12, "stddev" : 9012.30,
                  "percentile" : {"1.000000" : 450, "99.000000" : 42752}},
        "lat" : {"min" : 211, "max" : 98111, "mean" : 14491.02, "stddev" : 9012.31}
      },
      "latency_us" : {"2" : 0.00, "250" : 0.06, "1000" : 0.11},
      "latency_ms" : {"2" : 0.30, ">=2000" : 0.00}
    }]
}
"""


def test_fio_2_json_units() -> None:
    result = fio_result.parse_output(FIO_2_2_JSON)
    assert result["version"] == "2.2.10"
    read = result["jobs"][0]["read"]
    assert read["io_kib"] == 7116 and read["bw_kib_s"] == 275 and read["total_ios"] == 1779
    assert read["clat_us"]["mean"] == pytest.approx(14490.12)  # already µs in fio 2.x
    assert read["clat_us"]["percentiles"] == {"1.00": 450, "99.00": 42752}
    assert result["jobs"][0]["lat_dist_pct"] == {"2": 0.0, "250": 0.06, "1000": 0.11, "2000": 0.3, ">=2000000": 0.0}
    assert fio_result.succeeded(result, 0) == (True, "ok")


def test_status_dumps_back_to_back_take_the_final_report() -> None:
    result = parse("fio-3.33-randrw-status.jsonplus.json")
    assert result["status_dumps"] == 4
    read = result["jobs"][0]["read"]
    assert read["iops"] == pytest.approx(14331.556148)  # the last (final) report's figure
    assert read["runtime_ms"] == 3001 and read["total_ios"] == 43009


def test_truncated_last_dump_falls_back_to_the_last_complete_one() -> None:
    text = load("fio-3.33-randrw-status.jsonplus.json")
    cut = text[: text.rindex('"fio version"') + 200]  # the final report cut short by a kill
    result = fio_result.parse_output(cut)
    assert result["truncated"] is True and result["status_dumps"] == 3
    assert result["jobs"][0]["read"]["total_ios"] == 41510


def test_error_lines_before_json_are_kept_as_messages() -> None:
    result = parse("fio-3.33-fail-notdir.json")
    assert result["messages"][0] == "file:filesetup.c:455, func=fstat, error=Not a directory"
    assert result["jobs"][0]["error"] == 20
    ok, why = fio_result.succeeded(result, 1)
    assert not ok and "job notdir: error 20 (Not a directory)" in why


def test_exit_status_zero_but_job_failed_is_a_failure() -> None:
    assert load("fio-3.33-fail-exit0.status").strip() == "exit 0"
    result = parse("fio-3.33-fail-exit0.json")
    ok, why = fio_result.succeeded(result, 0)
    assert not ok and "error 28" in why
    result["jobs"][0]["error"] = 0  # even without the error field: no write I/O was done
    ok, why = fio_result.succeeded(result, 0)
    assert not ok and why == "job full: no write I/O done"


def test_text_report_of_a_failed_job_still_parses() -> None:
    result = parse("fio-3.33-fail-notdir.txt")
    assert result["jobs"] == []
    assert any("err=20" in m for m in result["messages"])
    ok, why = fio_result.succeeded(result, 1)
    assert not ok and "no jobs" in why and "Not a directory" in why


def test_succeeded_on_a_good_run() -> None:
    assert fio_result.succeeded(parse("fio-3.33-randrw-2jobs.json"), 0) == (True, "ok")
    assert fio_result.succeeded(parse("fio-3.33-randrw-2jobs.json"), 1) == (False, "fio exited with status 1")
    assert fio_result.succeeded(None, 0)[0] is False


# ---------------------------------------------------------------------------- terse


def test_terse_v3_two_jobs() -> None:
    result = parse("fio-3.33-randrw-2jobs.terse.txt")
    assert result["format"] == "terse-v3" and result["version"] == "3.33"
    first, second = result["jobs"]
    assert first["name"] == "oltp" and first["error"] == 0
    assert first["read"]["io_kib"] == 139304 and first["read"]["bw_kib_s"] == 139164
    assert first["read"]["iops"] == 17395 and first["read"]["runtime_ms"] == 1001
    assert first["read"]["clat_us"]["mean"] == pytest.approx(47.192875)
    assert first["read"]["clat_us"]["percentiles"]["50.00"] == 43
    assert "0.00" not in first["read"]["clat_us"]["percentiles"]  # the unused "0%=0" slots
    assert second["read"]["iops"] == 17300
    assert first["write"]["iops"] > 0
    assert result["disk_util"][0]["name"] == "vda"


def test_terse_v5_has_iops_stats() -> None:
    result = parse("fio-3.33-randrw.terse-v5.txt")
    assert result["format"] == "terse-v5"
    (job,) = result["jobs"]
    assert job["read"]["iops"] == 12388 and job["read"]["io_kib"] == 49604
    assert job["read"]["clat_us"]["percentiles"]["1.00"] == 44
    assert job["read"]["iops_stats"]["samples"] >= 1
    assert job["cpu"]["usr_pct"] >= 0
    assert result["disk_util"][0]["name"] == "vda"


def test_terse_line_too_short_names_line_and_count() -> None:
    with pytest.raises(FioParseError, match=r"terse v3 line 1: 10 fields, expected at least 121"):
        fio_result.parse_output("3;fio-3.33;x;0;0;1;2;3;4;5\n")


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("text", ["", "hello world\n", "Jobs are fun\n"])
def test_not_fio_output_is_a_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match="fio"):
        fio_result.parse_output(text)


def test_json_without_a_report() -> None:
    with pytest.raises(ValueError, match="no complete fio JSON report"):
        fio_result.parse_output('{"fio version": "fio-3.33", "jobs": [')


def test_split_json_objects_handles_braces_in_strings() -> None:
    objects, splitter = split_json_objects('warn }\n{"a": "x}{", "b": {"c": "\\"}"}}{"d": 1}\ntrailer\n')
    assert objects == [{"a": "x}{", "b": {"c": '"}'}}, {"d": 1}]
    assert splitter.messages == ["warn }", "trailer"]


# ---------------------------------------------------------------------------- racperf parse fio


def test_racperf_parse_fio_cli_on_every_fixture(tmp_path: Path) -> None:
    names = [
        "fio-2.17-randrw-4jobs.txt",
        "fio-2.1.10-randrw-50jobs.txt",
        "fio-3.33-randrw-2jobs.json",
        "fio-3.33-randrw-status.jsonplus.json",
        "fio-3.33-randrw-2jobs.terse.txt",
        "fio-3.33-console.log",
    ]
    done = subprocess.run(
        racperf_cmd() + ["parse", "fio"] + [str(FIO_FIXTURES / n) for n in names],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["jobs"][0]["read"]["iops"] for r in results[:2]] == [6897, 1981]
    assert results[2]["jobs"][0]["read"]["bw_kib_s"] == 315404
    assert results[3]["status_dumps"] == 4
    assert results[4]["format"] == "terse-v3"
    assert len(results[5]["samples"]) == 5
    bad = tmp_path / "bad.txt"
    bad.write_text("not fio at all\n")
    done = subprocess.run(racperf_cmd() + ["parse", "fio", str(bad)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"racperf parse fio: {bad}: not fio output" in done.stderr
