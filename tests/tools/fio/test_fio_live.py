"""Real fio, short runs on temp files: the live stream parser on a running fio, the 2 %
fidelity of the live IOPS, and ``racperf run fio -- ARGS`` end to end.

"Mean of the live IOPS" here is the mean weighted by each sample's interval (fio's own
runtime clock, ``extra["interval_s"]``, also in the store and in ``racperf runs export``):
the last sample is fio's final report and covers a partial interval, and the first one
starts when the job starts, not when fio does, so an unweighted mean, or one weighted by
differences of ``t``, is off by up to a few per cent on a 2-3 s run.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.tools import fio
from racperf_tui.tools.fio import result as fio_result
from racperf_tui.tools.fio import stream as fio_stream
from tests.helpers import needs_fio, racperf_cmd
from tests.helpers.fio_helpers import planned_argv

pytestmark = needs_fio

READ_KEYS = {"read_iops", "read_bw_kib_s", "read_clat_p50_us", "read_clat_p99_us", "read_clat_p99.9_us"}
WRITE_KEYS = {k.replace("read", "write") for k in READ_KEYS}


def run_fio_live(argv: list[str]) -> tuple[list, list[float], str, int, float]:
    """Run fio, feeding its stdout line by line to a fresh stream parser as it arrives.
    Returns (samples, arrival time of each, whole stdout, exit status, exit time)."""
    parser = fio.TOOL.stream_parser({})
    samples, arrivals, lines = [], [], []
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            for sample in parser.feed(line.rstrip("\n")):
                samples.append(sample)
                arrivals.append(time.monotonic())
        status = proc.wait(timeout=30)
        ended = time.monotonic()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    samples.extend(parser.finish())
    return samples, arrivals, "".join(lines), status, ended


def test_live_samples_from_a_running_fio_match_its_final_report(tmp_path: Path) -> None:
    target = tmp_path / "live.dat"
    argv = planned_argv(
        {
            "extra_args": [
                "--name=live",
                f"--filename={target}",
                "--size=16m",
                "--rw=randrw",
                "--rwmixread=70",
                "--bs=4k",
                "--runtime=3",
                "--time_based",
            ]
        },
        tmp_path / "run",
    )
    samples, arrivals, output, status, ended = run_fio_live(argv)
    assert status == 0
    result = fio_result.parse_output(output)
    assert fio_result.succeeded(result, status) == (True, "ok")
    assert len(samples) >= 3
    assert arrivals[0] < ended - 1.0  # streamed while fio ran, not read at the end
    times = [s.t for s in samples]
    assert times == sorted(times) and 2.5 <= times[-1] <= 6.0
    for sample in samples:
        # iops and bandwidth always; percentiles only for a direction with completions in the
        # interval (the final report's partial interval can be a few ms long)
        assert {"read_iops", "read_bw_kib_s", "write_iops", "write_bw_kib_s"} <= set(sample.metrics)
        assert set(sample.metrics) <= READ_KEYS | WRITE_KEYS
        if sample.extra["interval_s"] < 0.2:
            continue
        assert set(sample.metrics) == READ_KEYS | WRITE_KEYS
        for d in ("read", "write"):
            m = sample.metrics
            assert m[f"{d}_iops"] > 0
            assert m[f"{d}_clat_p50_us"] <= m[f"{d}_clat_p99_us"] <= m[f"{d}_clat_p99.9_us"]
    assert sum(s.extra["interval_s"] >= 0.2 for s in samples) >= 3
    job = result["jobs"][0]
    for d in ("read", "write"):
        live_mean = fio_stream.interval_weighted_mean(samples, f"{d}_iops")
        assert live_mean == pytest.approx(job[d]["iops"], rel=0.02)
        live_bw = fio_stream.interval_weighted_mean(samples, f"{d}_bw_kib_s")
        assert live_bw == pytest.approx(job[d]["bw_kib_s"], rel=0.02)


def test_live_ramp_and_two_jobs_without_group_reporting(tmp_path: Path) -> None:
    target = tmp_path / "ramp.dat"
    argv = planned_argv(
        {
            "extra_args": [
                "--name=r",
                f"--filename={target}",
                "--size=16m",
                "--rw=randread",
                "--bs=4k",
                "--numjobs=2",
                "--ramp_time=1",
                "--runtime=2",
                "--time_based",
            ]
        },
        tmp_path / "run",
    )
    assert "--readonly" in argv and target.stat().st_size == 16 << 20  # laid out by racperf
    samples, _arrivals, output, status, _ended = run_fio_live(argv)
    assert status == 0
    result = fio_result.parse_output(output)
    assert len(result["jobs"]) == 2
    assert samples[0].extra["ramp"] is True and samples[-1].extra["ramp"] is False
    assert all(s.metrics["read_iops"] >= 0 for s in samples)
    final_sum = sum(j["read"]["iops"] for j in result["jobs"])
    assert fio_stream.interval_weighted_mean(samples, "read_iops") == pytest.approx(final_sum, rel=0.02)


def test_racperf_run_fio_end_to_end(tmp_path: Path) -> None:
    target = tmp_path / "e2e.dat"
    done = subprocess.run(
        racperf_cmd()
        + [
            "run",
            "fio",
            "--data-dir",
            str(tmp_path / "data"),
            "--",
            "--name=t",
            f"--filename={target}",
            "--size=16m",
            "--rw=randread",
            "--bs=4k",
            "--runtime=2",
            "--time_based",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    samples = [o for o in objects if o["type"] == "sample"]
    (result_line,) = [o for o in objects if o["type"] == "result"]
    assert objects[-1] is result_line and len(samples) >= 2
    for sample in samples:
        assert {"read_iops", "read_bw_kib_s", "write_iops", "write_bw_kib_s"} <= set(sample["metrics"])
        assert set(sample["metrics"]) <= READ_KEYS | {"write_iops", "write_bw_kib_s"}
        assert sample["metrics"]["write_iops"] == 0
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    assert result_line["state"] == "succeeded"
    result = result_line["result"]
    assert result["tool"] == "fio" and result["format"] == "json+"
    read = result["jobs"][0]["read"]
    assert read["io_kib"] > 0 and read["runtime_ms"] >= 1900
    # the stored samples are the printed ones, with their interval weights in "extra"
    export = subprocess.run(
        racperf_cmd()
        + ["runs", "--data-dir", str(tmp_path / "data"), "export", str(result_line["run_id"]), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert export.returncode == 0, export.stderr
    stored = json.loads(export.stdout)["samples"]
    assert [s["metrics"] for s in stored] == [s["metrics"] for s in samples]
    longest = max(stored, key=lambda s: s["extra"]["interval_s"])
    assert set(longest["metrics"]) == READ_KEYS | {"write_iops", "write_bw_kib_s"}
    assert longest["metrics"]["read_iops"] > 0
    # the printed lines carry the same weights: the mean of the live IOPS, weighted by the
    # interval each sample covers, is fio's final IOPS within 2 %
    assert [s["interval_s"] for s in samples] == [round(s["extra"]["interval_s"], 6) for s in stored]
    weighted = sum(s["metrics"]["read_iops"] * s["interval_s"] for s in samples) / sum(s["interval_s"] for s in samples)
    assert weighted == pytest.approx(read["iops"], rel=0.02)
    # and so does the CSV export, column interval_s
    csv_export = subprocess.run(
        racperf_cmd()
        + ["runs", "--data-dir", str(tmp_path / "data"), "export", str(result_line["run_id"]), "--format", "csv"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    rows = list(csv.DictReader(io.StringIO(csv_export.stdout)))
    assert [float(r["interval_s"]) for r in rows] == pytest.approx([s["interval_s"] for s in samples])
    assert [float(r["read_iops"]) for r in rows] == pytest.approx([s["metrics"]["read_iops"] for s in samples])


def test_racperf_run_fio_refuses_exec_options(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    done = subprocess.run(
        racperf_cmd()
        + [
            "run",
            "fio",
            "--data-dir",
            str(tmp_path / "data"),
            "--",
            "--name=t",
            f"--filename={tmp_path / 'x'}",
            "--size=1m",
            f"--exec_prerun=touch {marker}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert (
        f"argument 4 ('--exec_prerun=touch {marker}'): fio option exec_prerun=touch {marker} runs a program "
        "before the job; racperf refuses it"
    ) in done.stderr
    assert not marker.exists()


def test_racperf_run_fio_judges_failure_when_fio_exits_0(tmp_path: Path) -> None:
    done = subprocess.run(
        racperf_cmd()
        + [
            "run",
            "fio",
            "--data-dir",
            str(tmp_path / "data"),
            "--",
            "--name=full",
            "--filename=/dev/full",
            "--rw=write",
            "--size=64k",
            "--ignore_error=,ENOSPC",
            "--continue_on_error=write",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    result_line = json.loads(done.stdout.splitlines()[-1])
    assert result_line["exit_status"] == 0  # fio itself said all was well
    assert result_line["state"] == "failed" and "error 28" in result_line["message"]


def test_racperf_run_fio_without_fio_installed_says_how_to_install(tmp_path: Path) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    done = subprocess.run(
        racperf_cmd()
        + [
            "run",
            "fio",
            "--data-dir",
            str(tmp_path / "data"),
            "--",
            "--name=t",
            f"--filename={tmp_path / 'x'}",
            "--size=1m",
            "--rw=write",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": str(empty_bin)},
    )
    assert done.returncode == 127
    assert "apt-get install fio / dnf install fio / yum install fio" in done.stderr
