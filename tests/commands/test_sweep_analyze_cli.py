"""``racperf sweep analyze`` (issue 18): fio JSON outputs already on disk, laid out as bench-fio
does (a directory per target and mode, a file per point), made here by real fio: several
iodepths and numjobs, with and without group_reporting, options given globally (before
--name) or per job, json and json+. The file names lie on purpose: the load comes from each
file's own job options. Plus a log and a broken JSON file in the tree, and the fixtures."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO

FIXTURES = REPO / "tests" / "fixtures" / "fio"

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio")


def _fio(output: Path, scratch: Path, iodepth: int, numjobs: int, *, grouped: bool = True, **how: str) -> None:
    job = [f"--filename={scratch}", "--size=4m", "--rw=randread", "--bs=4k", "--ioengine=libaio"]
    load = [f"--iodepth={iodepth}", f"--numjobs={numjobs}"]
    argv = ["fio", "--output-format=" + how.get("format", "json"), f"--output={output}", "--runtime=300ms"]
    argv += ["--time_based"] + (["--group_reporting"] if grouped else [])
    # "global": the load before --name, so fio reports it under "global options" only
    argv += load + ["--name=pt"] + job if how.get("where") == "global" else ["--name=pt"] + job + load
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


def _analyze(*paths: Path | str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "racperf_tui", "sweep", "analyze", "--json", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


@pytest.fixture(scope="module")
def bench_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bench")
    scratch = root / "scratch.dat"
    scratch.write_bytes(b"\0" * (4 << 20))
    mode = root / "bench" / "scratch" / "randread-4k"
    mode.mkdir(parents=True)
    # bench-fio names a file MODE-IODEPTH-NUMJOBS.json: every name here says 99-99
    _fio(mode / "randread-99-99-a.json", scratch, 1, 1)
    _fio(mode / "randread-99-99-b.json", scratch, 2, 1, format="json+")
    _fio(mode / "randread-99-99-c.json", scratch, 4, 1, where="global")
    _fio(mode / "randread-99-99-d.json", scratch, 1, 2, grouped=False)
    _fio(mode / "randread-99-99-e.json", scratch, 2, 2, grouped=False, where="global")
    _fio(mode / "randread-99-99-f.json", scratch, 4, 2)
    (mode / "randread_lat.1.log").write_text("0, 120, 0, 4096, 0\n")
    (mode / "broken.json").write_text('{"fio version": "fio-3.33", "jobs": [')
    return root / "bench"


def test_the_tree_gives_every_curve_both_ways_with_the_load_from_the_options(bench_tree: Path) -> None:
    status, out, stderr = _analyze(bench_tree)
    assert status == 0, stderr
    shapes = [
        (c["rw"], c["bs"], c["varying"], c["fixed"], [(p["iodepth"], p["numjobs"]) for p in c["points"]])
        for c in out["curves"]
    ]
    assert shapes == [
        ("randread", "4k", "iodepth", {"numjobs": 1}, [(1, 1), (2, 1), (4, 1)]),
        ("randread", "4k", "iodepth", {"numjobs": 2}, [(1, 2), (2, 2), (4, 2)]),
        ("randread", "4k", "numjobs", {"iodepth": 1}, [(1, 1), (1, 2)]),
        ("randread", "4k", "numjobs", {"iodepth": 2}, [(2, 1), (2, 2)]),
        ("randread", "4k", "numjobs", {"iodepth": 4}, [(4, 1), (4, 2)]),
    ]
    by_file = {Path(p["source"]).name: p for c in out["curves"] for p in c["points"]}
    assert by_file["randread-99-99-b.json"]["percentiles_from"] == "bins"  # json+
    assert by_file["randread-99-99-a.json"]["percentiles_from"] == "one job"
    # without group_reporting fio lists each of the two jobs: one point of both
    two = by_file["randread-99-99-d.json"]
    raw = json.loads((bench_tree / "scratch" / "randread-4k" / "randread-99-99-d.json").read_text())
    assert len(raw["jobs"]) == 2 and two["percentiles_from"] == "weighted"
    assert two["iops"] == pytest.approx(sum(job["read"]["iops"] for job in raw["jobs"]))
    for point in by_file.values():
        assert point["littles_law_outstanding"] == pytest.approx(point["iops"] * point["lat_mean_us"] / 1e6, abs=1e-3)
        assert point["configured_depth"] == point["iodepth"] * point["numjobs"]
    for curve in out["curves"]:  # the knee as stated, recomputed from the printed points
        iops = [p["iops"] for p in curve["points"]]
        lowest = next(i for i, v in enumerate(iops) if all(later < v * 1.1 for later in iops[i + 1 :]))
        assert curve["knee"] == (curve["points"][lowest] if lowest < len(iops) - 1 else None)
    skipped = {Path(s["source"]).name: s["why"] for s in out["skipped"]}
    assert list(skipped) == ["broken.json"]  # the log is passed over, not a point
    assert "no complete fio JSON report" in skipped["broken.json"]


def test_fixtures_and_text_output(bench_tree: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "racperf_tui", "sweep", "analyze", "--p99-ceiling-ms", "50", str(bench_tree / "scratch")]
        + [str(FIXTURES / "fio-3.33-randrw-2jobs.json")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("randread 4k, iodepth rising") == 2 and " IOPS by iodepth" in done.stdout
    assert "<- knee" in done.stdout  # the chart marks it
    assert "knee: " in done.stdout and "highest IOPS with p99 under 50 ms" in done.stdout
    assert "\x1b[" not in done.stdout  # plain text, no colours
    # the fixtures: one randrw 8k point and one randread 4k point alone make no curve
    status, out, stderr = _analyze(
        FIXTURES / "fio-3.33-randrw-2jobs.json", FIXTURES / "fio-3.33-randread.jsonplus.json"
    )
    assert status == 1 and out["curves"] == [] and "no curve in" in stderr and "2 fio load point(s) read" in stderr


def test_a_missing_path_and_a_file_that_is_not_fio_json_are_named(tmp_path: Path) -> None:
    status, _, stderr = _analyze(tmp_path / "nope")
    assert status == 2 and f"{tmp_path / 'nope'}: no such file or directory" in stderr
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    status, out, stderr = _analyze(text)
    assert status == 1 and out["skipped"] == [
        {"source": str(text), "why": "not fio JSON output (--output-format=json or json+)"}
    ]
    assert "Traceback" not in stderr
