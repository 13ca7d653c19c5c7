"""The live stream parser on recorded json+ status streams (fio 3.33, --status-interval=1).

Expected figures are read off the recorded dumps by hand (see the comments): the parser
must difference consecutive cumulative dumps, including the clat_ns histogram bins.
"""

from __future__ import annotations

import json

import pytest

from racperf_tui.tools import fio
from racperf_tui.tools.fio import result as fio_result
from racperf_tui.tools.fio import stream as fio_stream
from racperf_tui.tools.fio.figures import histogram_percentiles
from racperf_tui.tools.fio.json_report import split_json_objects
from tests.helpers import FIXTURES

STATUS = FIXTURES / "fio" / "fio-3.33-randrw-status.jsonplus.json"
RAMP = FIXTURES / "fio" / "fio-3.33-randread-ramp-status.jsonplus.json"

METRIC_KEYS = {
    f"{d}_{m}" for d in ("read", "write") for m in ("iops", "bw_kib_s", "clat_p50_us", "clat_p99_us", "clat_p99.9_us")
}


def stream(text: str, config: dict | None = None) -> list:
    parser = fio.TOOL.stream_parser(config or {})
    samples = []
    for line in text.splitlines():
        samples.extend(parser.feed(line))
    samples.extend(parser.finish())
    return samples


def test_one_sample_per_dump_with_exact_metric_keys() -> None:
    samples = stream(STATUS.read_text())
    assert len(samples) == 4
    for sample in samples:
        assert set(sample.metrics) == METRIC_KEYS


def test_interval_iops_is_the_difference_of_two_dumps() -> None:
    samples = stream(STATUS.read_text())
    second = samples[1]
    # dump 1: read total_ios 12890, io_kbytes 51548, runtime 894 ms; write 5474 / 21892
    # dump 2: read total_ios 26625, io_kbytes 106496, runtime 1894 ms; write 11384 / 45536
    assert second.metrics["read_iops"] == pytest.approx((26625 - 12890) / 1.0)
    assert second.metrics["write_iops"] == pytest.approx((11384 - 5474) / 1.0)
    assert second.metrics["read_bw_kib_s"] == pytest.approx(106496 - 51548)
    assert second.metrics["write_bw_kib_s"] == pytest.approx(45536 - 21892)
    assert second.extra["interval_s"] == pytest.approx(1.0)
    # the first interval runs from the start: 12890 I/Os in 894 ms of job runtime
    assert samples[0].metrics["read_iops"] == pytest.approx(12890 / 0.894)
    # the final report covers a partial interval: 43009 - 41510 reads in 3001 - 2894 ms
    assert samples[3].metrics["read_iops"] == pytest.approx((43009 - 41510) / 0.107)
    assert samples[3].extra["interval_s"] == pytest.approx(0.107)


def test_sample_time_is_fio_clock_not_arrival() -> None:
    samples = stream(STATUS.read_text())
    # elapsed 1 at timestamp_ms ...6808, then +999, +1999, +2123 ms
    assert [s.t for s in samples] == [1.0, 1.999, 2.999, 3.123]
    assert samples[0].extra["ramp"] is False
    assert "eta_s" not in samples[0].extra  # fio's "unknown" ETA (2**31 - 1) is dropped
    assert samples[2].extra["eta_s"] == 0 and samples[2].extra["progress_pct"] == 100.0


def test_interval_percentiles_come_from_the_bin_difference() -> None:
    text = STATUS.read_text()
    dumps, _ = split_json_objects(text)
    bins = [{int(k): v for k, v in d["jobs"][0]["read"]["clat_ns"]["bins"].items()} for d in dumps]
    diff = {k: v - bins[0].get(k, 0) for k, v in bins[1].items() if v - bins[0].get(k, 0) > 0}
    expected = histogram_percentiles(diff, [50, 99, 99.9])
    samples = stream(text)
    second = samples[1].metrics
    assert second["read_clat_p50_us"] == expected[50] / 1000
    assert second["read_clat_p99_us"] == expected[99] / 1000
    assert second["read_clat_p99.9_us"] == expected[99.9] / 1000
    # hand-checked figures for this interval (bins of 512 ns resolution here)
    assert (second["read_clat_p50_us"], second["read_clat_p99_us"]) == (48.896, 144.384)
    # not the cumulative ones: the cumulative p99.9 of dump 2 differs from the interval's
    cumulative = dumps[1]["jobs"][0]["read"]["clat_ns"]["percentile"]["99.900000"] / 1000
    assert second["read_clat_p99.9_us"] != cumulative


def test_histogram_percentiles_equal_fios_own() -> None:
    dumps, _ = split_json_objects(STATUS.read_text())
    for dump in dumps:
        clat = dump["jobs"][0]["write"]["clat_ns"]
        ours = histogram_percentiles({int(k): v for k, v in clat["bins"].items()}, [1, 50, 99, 99.9, 99.99])
        for pct, value in ours.items():
            assert value == clat["percentile"][f"{pct:f}"], pct


def test_runtime_weighted_mean_equals_final_iops() -> None:
    text = STATUS.read_text()
    samples = stream(text)
    result = fio_result.parse_output(text)
    final = result["jobs"][0]
    for d in ("read", "write"):
        assert fio_stream.interval_weighted_mean(samples, f"{d}_iops") == pytest.approx(final[d]["iops"], rel=1e-9)
    # the plain mean of the full intervals is close too, but not exact
    full = [s.metrics["read_iops"] for s in samples if s.extra["interval_s"] > 0.5]
    assert sum(full) / len(full) == pytest.approx(final["read"]["iops"], rel=0.02)


def test_ramp_dump_is_flagged_and_the_reset_is_not_a_negative_interval() -> None:
    samples = stream(RAMP.read_text(), {"ramp_time_s": 1})
    # the final report, a few ms after the last dump, is no sample of its own
    assert [s.extra["ramp"] for s in samples] == [True, False, False]
    # dump 1 (in the ramp): 14519 reads in 879 ms, no latency recorded during a ramp
    assert samples[0].metrics["read_iops"] == pytest.approx(14519 / 0.879)
    assert "read_clat_p50_us" not in samples[0].metrics
    # dump 2: counters restarted at ramp end: 17076 reads in 999 ms, not 17076 - 14519
    assert samples[1].metrics["read_iops"] == pytest.approx(17076 / 0.999)
    assert all(s.metrics["read_iops"] >= 0 for s in samples)
    final = fio_result.parse_output(RAMP.read_text())["jobs"][0]["read"]["iops"]
    assert fio_stream.interval_weighted_mean(samples, "read_iops") == pytest.approx(final, rel=0.01)
    # without the config the ramp is read from the job options fio echoes ("ramp_time": "1")
    assert [s.extra["ramp"] for s in stream(RAMP.read_text())] == [True, False, False]


def _dump(ts_ms: int, jobs: list[tuple[str, int, int, int]]) -> str:
    """A minimal fio JSON status dump: jobs of (name, runtime_ms, read total_ios, read KiB)."""
    return json.dumps(
        {
            "fio version": "fio-3.33",
            "timestamp_ms": ts_ms,
            "jobs": [
                {
                    "jobname": name,
                    "groupid": 0,
                    "error": 0,
                    "eta": 5,
                    "elapsed": ts_ms // 1000,
                    "read": {"total_ios": ios, "io_kbytes": kib, "runtime": rt},
                    "write": {"total_ios": 0, "io_kbytes": 0, "runtime": 0},
                }
                for name, rt, ios, kib in jobs
            ],
        },
        indent=2,
    )


def test_falling_counters_mean_a_reset_not_a_negative_interval() -> None:
    text = "\n".join([_dump(1000, [("j", 900, 9000, 36000)]), _dump(2000, [("j", 400, 3000, 12000)])])
    samples = stream(text)
    assert samples[1].metrics["read_iops"] == pytest.approx(3000 / 0.4)
    assert samples[1].metrics["read_bw_kib_s"] == pytest.approx(12000 / 0.4)


def test_dump_right_at_ramp_end_before_the_reset_is_still_ramp() -> None:
    text = "\n".join(
        [
            _dump(1000, [("j", 1000, 10000, 40000)]),
            _dump(2000, [("j", 2003, 20030, 80120)]),  # ramp (2 s) over, fio has not reset yet
            _dump(3000, [("j", 1000, 12000, 48000)]),  # reset: 1000 ms and 12000 I/Os since
            _dump(4000, [("j", 2000, 24500, 98000)]),
        ]
    )
    samples = stream(text, {"ramp_time_s": 2})
    assert [s.extra["ramp"] for s in samples] == [True, True, False, False]
    assert [round(s.metrics["read_iops"]) for s in samples] == [10000, 10000, 12000, 12500]
    assert fio_stream.interval_weighted_mean(samples, "read_iops") == pytest.approx(24500 / 2.0)


def test_jobs_without_group_reporting_are_summed_each_on_its_own_clock() -> None:
    text = "\n".join(
        [
            _dump(1000, [("a", 1000, 1000, 4000), ("b", 500, 100, 400)]),
            _dump(2000, [("a", 2000, 3000, 12000), ("b", 1500, 1100, 4400)]),
            _dump(2300, [("a", 2000, 3000, 12000), ("b", 1800, 1400, 5600)]),  # a has finished
        ]
    )
    samples = stream(text)
    assert samples[0].metrics["read_iops"] == pytest.approx(1000 + 200)
    assert samples[1].metrics["read_iops"] == pytest.approx(2000 + 1000)
    assert samples[2].metrics["read_iops"] == pytest.approx(300 / 0.3)
    assert samples[2].extra["interval_s"] == pytest.approx(0.3)
    assert "read_clat_p50_us" not in samples[0].metrics  # plain json: no bins, no percentiles
    assert samples[2].extra["eta_s"] == 5


def test_foreign_lines_inside_and_between_dumps_do_not_break_the_stream() -> None:
    lines = STATUS.read_text().splitlines()
    # an error line written into the middle of the second dump (stderr merged), a warning
    # before it, and all dumps of one line (a 5 MB line is just a long line)
    second_start = [i for i, line in enumerate(lines) if line == "{"][1]
    noisy = (
        lines[:second_start]
        + ["fio: io_u error on file x: Input/output error"]
        + lines[second_start : second_start + 40]
        + ["fio: pid=1, err=5/file:io_u.c:1845"]
        + lines[second_start + 40 :]
    )
    parser = fio.TOOL.stream_parser({})
    samples = [s for line in noisy for s in parser.feed(line)]
    assert len(samples) == 4
    assert samples[1].metrics["read_iops"] == pytest.approx(13735)
    assert "fio: pid=1, err=5/file:io_u.c:1845" in parser.messages
    assert samples[1].extra["messages"] == [
        "fio: io_u error on file x: Input/output error",
        "fio: pid=1, err=5/file:io_u.c:1845",
    ]
    one_line = "".join(line.strip() for line in lines)
    assert len(stream(one_line)) == 4


def test_a_stray_brace_in_a_message_does_not_swallow_the_next_dumps() -> None:
    lines = STATUS.read_text().splitlines()
    parser = fio.TOOL.stream_parser({})
    samples = [s for line in ["fio: odd message {"] + lines for s in parser.feed(line)]
    assert len(samples) == 4
    assert samples[1].metrics["read_iops"] == pytest.approx(13735)


def test_a_flood_of_error_lines_stays_bounded() -> None:
    lines = STATUS.read_text().splitlines()
    second_start = [i for i, line in enumerate(lines) if line == "{"][1]
    flood = [f"fio: io_u error on file x: Input/output error: read offset={i}" for i in range(5000)]
    parser = fio.TOOL.stream_parser({})
    samples = [s for line in lines[:second_start] + flood + lines[second_start:] for s in parser.feed(line)]
    assert len(samples) == 4
    assert len(samples[1].extra["messages"]) == 20 and samples[1].extra["messages_omitted"] == 4980
    assert len(parser.messages) == 1000
    assert "messages" not in samples[2].extra


def test_truncated_stream_and_garbage() -> None:
    text = STATUS.read_text()
    cut = text[: len(text) // 2]
    assert len(stream(cut)) == 2  # the half-written third dump is not an interval
    assert stream("\x00\xff garbage }}} {{ \n not json") == []
    parser = fio.TOOL.stream_parser({})
    assert parser.feed("{") == [] and parser.feed("}") == []  # an object without jobs


def test_a_final_report_ms_after_the_last_dump_is_no_sample_of_0_iops_and_mib_s() -> None:
    """A run stopped 5 ms after a status dump (recorded: fio 3.33, OLTP preset, 4 jobs with
    group_reporting, SIGTERM): the last live sample said IOPS 0 beside 3.1 MiB/s. fio reads a
    running job's counters one by one, so in a status dump io_kbytes may lag total_ios by
    an I/O or two (here 532152 KiB = 66519 x 8 KiB for 66521 I/Os); over 5 ms that lag is
    the whole "interval": 0 I/Os, 16 KiB."""
    text = "\n".join(
        [
            _dump(1796116070101, [("racperf", 2882, 66521, 532152)]),
            _dump(1796116070121, [("racperf", 2887, 66521, 532168)]),
        ]
    )
    samples = stream(text)
    assert all(s.extra["interval_s"] >= 0.05 for s in samples), [s.extra["interval_s"] for s in samples]
    assert all((s.metrics["read_iops"] == 0) == (s.metrics["read_bw_kib_s"] == 0) for s in samples)
