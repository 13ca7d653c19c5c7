"""`racperf runs compare`: real fio runs, capped by rate_iops so the figures are known, compared
side by side; the differences, the noise verdict and the criteria checked against the store."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from racperf_tui.core.store import Store
from racperf_tui.tools.fio import result_figures
from tests.helpers import needs_fio, racperf_cmd

pytestmark = needs_fio


def racperf(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*racperf_cmd(), *args[:2], "--data-dir", str(data_dir), *args[2:]],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs 1 and 3 capped at 1,000 IOPS, run 2 at 2,000: 4 s of 4k random reads each."""
    data_dir = tmp_path_factory.mktemp("compare")
    target = data_dir / "f.dat"
    for rate in (1000, 2000, 1000):
        done = racperf(
            data_dir,
            "run",
            "fio",
            "--",
            "--name=cmp",
            f"--filename={target}",
            "--size=16m",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=psync",
            f"--rate_iops={rate}",
            "--runtime=4",
            "--time_based",
        )
        assert done.returncode == 0, done.stderr
    return data_dir


def test_the_capped_runs_compare_as_their_caps_say(three_runs: Path) -> None:
    done = racperf(three_runs, "runs", "compare", "1", "2", "3", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["baseline"] == 1 and [r["id"] for r in doc["runs"]] == [1, 2, 3]
    assert doc["differs"] == {"rate_iops": ["1000", "2000", "1000"]}
    rows = {row["metric"]: row for row in doc["rows"]}
    # a read-only job: no write rows (zero in every run)
    assert "write_iops" not in rows and "read_clat_p99_us" in rows
    iops = rows["read_iops"]
    assert iops["unit"] == "IOPS" and iops["better"] == "higher"
    assert iops["values"][0] == pytest.approx(1000, rel=0.03)
    assert iops["values"][1] == pytest.approx(2000, rel=0.03)
    assert iops["diff_pct"][0] is None
    assert iops["diff_pct"][1] == pytest.approx(100, abs=6)
    assert abs(iops["diff_pct"][2]) < 3
    # twice the cap is far outside the runs' own wandering; the same cap is not
    assert iops["significant"] == [None, True, False]
    bw = rows["read_bw_kib_s"]
    assert bw["unit"] == "MiB/s" and bw["values"][1] == pytest.approx(2000 * 4 / 1024, rel=0.03)
    assert rows["read_clat_mean_us"]["better"] == "lower"
    assert rows["read_clat_mean_us"]["significant"] == [None, None, None]  # no per-interval mean: unknown

    # the figures are the store's results, read the one way
    with Store.open(three_runs, read_only=True) as store:
        figures = result_figures(store.result(2))
    assert iops["values"][1] == pytest.approx(figures["read_iops"])
    assert rows["read_clat_p99_us"]["values"][1] == pytest.approx(figures["read_clat_p99_us"])


def test_the_text_table_says_better_and_significant_in_full_figures(three_runs: Path) -> None:
    done = racperf(three_runs, "runs", "compare", "1", "2", "--baseline", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("baseline: run 2 (fio on ")
    assert "differ in rate_iops: 1000 | 2000" in lines
    iops_line = next(line for line in lines if line.startswith("read IOPS"))
    assert "(base)" in lines[3] and "#2 (base)" in lines[3]
    # rate_iops 1000 against 2000: -50 % give or take fio's rate keeping under load (996 vs 1,998
    # was -50.1 %)
    said = re.search(r"(-\d+\.\d)% worse\*", iops_line)
    assert said and -52.0 <= float(said.group(1)) <= -48.0, iops_line
    assert any(line.startswith("* larger than twice") for line in lines)


def test_criteria_pass_or_fail_per_run_with_the_figure(three_runs: Path, tmp_path: Path) -> None:
    criteria = tmp_path / "signoff.txt"
    criteria.write_text("# two thousand or nothing\nread_iops >= 1900 at read_clat_p99_us <= 1e9\nread_iops > 0\n")
    done = racperf(three_runs, "runs", "compare", "1", "2", "--criteria", str(criteria), "--json")
    assert done.returncode == 5  # run 1 fails the first
    verdicts = json.loads(done.stdout)["criteria"]
    assert [[v["outcome"] for v in run] for run in verdicts] == [["fail", "pass"], ["pass", "pass"]]
    assert verdicts[0][0]["figures"]["read_iops"] == pytest.approx(1000, rel=0.03)
    one = racperf(three_runs, "runs", "compare", "2", "--criteria", str(criteria))
    assert one.returncode == 0 and "#2: PASS" in one.stdout


@pytest.mark.parametrize(
    ("args", "said", "status"),
    [
        (["1", "99"], "no run with id 99", 1),
        (["1"], "at least two runs", 2),
        (["1", "2", "--baseline", "3"], "baseline 3 is not one of the runs compared (1, 2)", 2),
        (["1", "2", "--criteria", "/proc/kmsg"], "/proc/kmsg: cannot read the criteria", 2),
    ],
)
def test_a_bad_request_is_one_line(three_runs: Path, args: list[str], said: str, status: int) -> None:
    done = racperf(three_runs, "runs", "compare", *args)
    assert done.returncode == status
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""
