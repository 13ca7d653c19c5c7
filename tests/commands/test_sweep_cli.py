"""``racperf sweep fio`` against a real ceiling (issue 18, "the finder"): a loop device whose
reads the kernel's blkio throttle (cgroup v1) caps at 2000 IOPS for the cgroup the sweep
starts in, so fio's IOPS stay near 2000 whatever the depth while its mean latency grows as
iodepth / 2000 (Little's law). Real fio, real recorded runs in one run group, 1 s points.

The cap's p99 is its dispatch rhythm, measured here: a few ms at iodepth 1-2, ~100 ms from
iodepth 4 on (the throttle releases I/Os in bursts); the p99 ceiling below sits between."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from racperf_tui.core.store import Store
from tests.helpers import REPO
from tests.helpers.blkio_throttle import ThrottledCgroup, needs_blkio_throttle, read_iops_capped
from tests.helpers.loopdev import LoopDevice, loop_device, needs_loop

CAP_IOPS = 2000

pytestmark = [needs_loop, needs_blkio_throttle, pytest.mark.skipif(not Path("/usr/bin/fio").exists(), reason="fio")]


def _sweep(cgroup: ThrottledCgroup, data: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    done = subprocess.run(
        [sys.executable, "-m", "racperf_tui", "sweep", "fio", "--data-dir", str(data), "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        preexec_fn=cgroup.enter,
    )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines()], done.stderr


@pytest.fixture
def capped_loop(tmp_path: Path) -> Any:
    with loop_device(tmp_path / "disk.img", size_mib=64) as loop:
        with read_iops_capped(loop.major, loop.minor, CAP_IOPS) as cgroup:
            yield loop, cgroup


_READ = ("--set", "rw=randread", "--set", "bs=4k", "--set", "ioengine=libaio", "--point-seconds", "1")


def test_every_point_runs_iops_stay_at_the_cap_and_latency_grows_as_depth_over_cap(
    capped_loop: tuple[LoopDevice, ThrottledCgroup], tmp_path: Path
) -> None:
    loop, cgroup = capped_loop
    data = tmp_path / "data"
    status, lines, stderr = _sweep(cgroup, data, "--target", loop.path, *_READ, "--iodepth", "1,2,4,8")
    assert status == 0, stderr
    points = [line for line in lines if line["type"] == "point"]
    assert [p["iodepth"] for p in points] == [1, 2, 4, 8]
    for point in points:
        depth = point["iodepth"]
        assert CAP_IOPS * 0.9 < point["iops"] < CAP_IOPS * 1.1, point
        # Little's law: the mean latency is the depth over the cap, so IOPS x latency = depth
        assert point["lat_mean_us"] == pytest.approx(depth / CAP_IOPS * 1e6, rel=0.2), point
        assert point["littles_law_outstanding"] == pytest.approx(depth, rel=0.2)
        assert point["configured_depth"] == depth and point["device"]["name"] == loop.name
    # the throttle holds the queue above the device: the loop device itself holds almost none
    deep = points[-1]
    assert deep["device"]["queue"] < 0.5 * deep["littles_law_outstanding"]
    assert "the queue is above the device" in deep["note"]
    (sweep,) = [line for line in lines if line["type"] == "sweep"]
    # flat from the first point: no later point gains 10 %, so the knee is iodepth 1
    assert sweep["knee"]["iodepth"] == 1 and sweep["ended"] is None
    (curve,) = sweep["curves"]
    assert curve["varying"] == "iodepth" and curve["fixed"] == {"numjobs": 1} and curve["knee"]["iodepth"] == 1
    with Store.open(data, read_only=True) as store:
        runs = store.group_runs(sweep["group_id"])
        assert [r.id for r in runs] == [p["run_id"] for p in points]
        assert [r.config["iodepth"] for r in runs] == [1, 2, 4, 8]
        stored = store.group_result(sweep["group_id"])
    assert stored is not None and stored["knee"]["run_id"] == points[0]["run_id"]


def test_the_p99_ceiling_makes_the_first_point_past_it_the_last(
    capped_loop: tuple[LoopDevice, ThrottledCgroup], tmp_path: Path
) -> None:
    loop, cgroup = capped_loop
    data = tmp_path / "data"
    status, lines, stderr = _sweep(
        cgroup, data, "--target", loop.path, *_READ, "--iodepth", "1,2,4,8,16", "--stop-p99-ms", "50"
    )
    assert status == 0, stderr
    points = [line for line in lines if line["type"] == "point"]
    assert [p["iodepth"] for p in points] == [1, 2, 4], [(p["iodepth"], p["lat_p99_us"]) for p in points]
    assert all(p["lat_p99_us"] < 50_000 for p in points[:-1]) and points[-1]["lat_p99_us"] > 50_000
    (sweep,) = [line for line in lines if line["type"] == "sweep"]
    assert sweep["best_under_ceiling"]["iodepth"] in (1, 2)
    assert sweep["best_under_ceiling"]["lat_p99_us"] < 50_000
    assert "passed the ceiling of 50 ms" in sweep["curves"][0]["stopped"]
    with Store.open(data, read_only=True) as store:
        assert len(store.group_runs(sweep["group_id"])) == 3


def test_stop_knee_ends_two_points_past_a_knee_found_midway(
    capped_loop: tuple[LoopDevice, ThrottledCgroup], tmp_path: Path
) -> None:
    """Each job is held to 500 IOPS by fio's own rate limit: 1, 2 and 4 jobs give 500, 1000 and
    2000 IOPS, then the cap: the knee is numjobs 4, and 8 and 16 gain nothing, so 32 never runs."""
    loop, cgroup = capped_loop
    data = tmp_path / "data"
    status, lines, stderr = _sweep(
        cgroup,
        data,
        "--target",
        loop.path,
        "--set",
        "rw=randread",
        "--set",
        "bs=4k",
        "--set",
        'extra_args=["--rate_iops=500"]',
        "--point-seconds",
        "1",
        "--numjobs",
        "1,2,4,8,16,32",
        "--stop-knee",
    )
    assert status == 0, stderr
    points = [line for line in lines if line["type"] == "point"]
    assert [p["numjobs"] for p in points] == [1, 2, 4, 8, 16], [(p["numjobs"], p["iops"]) for p in points]
    for point, expected in zip(points, (500, 1000, 2000, 2000, 2000)):
        assert expected * 0.85 < point["iops"] < expected * 1.15, point
    # rate-limited jobs idle between I/Os: Little's law shows less in flight than configured
    # until the cap makes them wait (16 jobs at 2000 IOPS: 8 ms each, 16 in flight)
    for point in points:
        kept = point["littles_law_outstanding"]
        assert kept == pytest.approx(point["iops"] * point["lat_mean_us"] / 1e6, abs=0.01)
        assert ("fio kept" in (point["note"] or "")) == (kept < 0.75 * point["configured_depth"]), point
    assert points[0]["littles_law_outstanding"] < 0.9 and "fio kept" not in (points[-1]["note"] or "")
    (sweep,) = [line for line in lines if line["type"] == "sweep"]
    (curve,) = sweep["curves"]
    assert curve["varying"] == "numjobs" and curve["knee"]["numjobs"] == 4 and sweep["knee"]["numjobs"] == 4
    assert "2 points past the knee (iodepth 1, numjobs 4)" in curve["stopped"]


def test_a_sweep_that_cannot_measure_what_it_says_is_refused_before_anything_runs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    target = tmp_path / "scratch"
    done = subprocess.run(
        [sys.executable, "-m", "racperf_tui", "sweep", "fio", "--data-dir", str(data), "--target", str(target)]
        + ["--set", "size=8m", "--iodepth", "1,2,4"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert "ioengine psync does one I/O at a time per job" in done.stderr and "Traceback" not in done.stderr
    assert not (data / "runs.sqlite3").exists()
