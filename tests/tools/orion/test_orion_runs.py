"""ORION runs headless end to end: racperf run orion with the emulator (tests/fakes/orion,
installed as $ORACLE_HOME/bin/orion in a temporary ORACLE_HOME) on loop devices and files: the
samples, the result, the result files kept in the store, the write guard on every LUN, ORION's
own failures named with their fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from racperf_tui.core import settings
from racperf_tui.core.store import Store
from racperf_tui.tools import orion
from racperf_tui.tools.orion.oracle_home import SETTING_ORACLE_HOME
from tests.helpers import FAKES, FIXTURES, REPO, racperf_cmd
from tests.helpers.loopdev import loop_device, needs_loop
from tests.helpers.loopdev import sha256_of as _sha

S112 = FIXTURES / "orion" / "11.2.0.4-advanced-stdout.txt"


@pytest.fixture
def oracle_home(tmp_path: Path) -> Path:
    """A temporary ORACLE_HOME with the emulator as bin/orion."""
    home = tmp_path / "oracle_home"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    shutil.copy(FAKES / "orion", home / "bin" / "orion")
    os.chmod(home / "bin" / "orion", 0o755)
    return home


# --------------------------------------------------------------------------- whole runs


def _racperf_run(data: Path, settings_: list[str], env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "RACPERF_FAKE_ORION_POINT_S": "0.2", **env_extra}
    argv = [*racperf_cmd(), "run", "--data-dir", str(data), "orion"]
    for item in settings_:
        argv += ["--set", item]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)


def _lines(stdout: str) -> tuple[list[dict], dict]:
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return [l for l in lines if l["type"] == "sample"], next(l for l in lines if l["type"] == "result")


@needs_loop
def test_headless_advanced_run_on_loop_devices(tmp_path: Path, oracle_home: Path) -> None:
    data = tmp_path / "data"
    with loop_device(tmp_path / "a.img", 64) as a, loop_device(tmp_path / "b.img", 64) as b:
        done = _racperf_run(
            data,
            [
                "run=advanced",
                f"lun={a.path}",
                f"lun={b.path}",
                "num_disks=2",
                "size_small=8",
                "hugenotneeded=true",
                f"oracle_home={oracle_home}",
            ],
            {},
        )
        assert done.returncode == 0, done.stderr + done.stdout
    samples, result_line = _lines(done.stdout)
    assert result_line["state"] == "succeeded", result_line
    # the first sample with ORION's estimate (a diskstats answer may come before it)
    planned = next(s["metrics"] for s in samples if s["metrics"].get("planned_s"))
    assert planned["planned_s"] == orion.planned_duration_s({"run": "advanced", "lun": ["/x"], "num_disks": 2})
    assert planned["data_points"] == 15 and planned["progress_pct"] < 1
    progress = [s["metrics"]["progress_pct"] for s in samples]
    assert progress == sorted(progress) and progress[-1] == 100.0 and len(samples) >= 3
    result = result_line["result"]
    assert result["version"] == "11.2.0.4.0" and result["testname"] == "orion"
    assert result["max_small_iops"] > 0 and result["max_small_iops_at"]["large"] == 0
    assert 1 <= result["max_small_iops_at"]["small"] <= 10
    assert result["max_large_mbps"] > 0 and 1 <= result["max_large_mbps_at"]["large"] <= 4
    assert result["min_small_latency_us"] > 0 and result["small_read_latency_us"]["avg"] > 0
    assert sum(r["read"] for r in result["histogram"]) > 0
    assert result["iops"]["small_loads"] == list(range(1, 11)) and result["mbps"]["large_loads"] == [1, 2, 3, 4]
    assert result["total_data_points"] == 15
    with Store.open(data) as store:
        run_id = result_line["run_id"]
        assert store.raw_output(run_id, "file:orion.lun") == f"{a.path}\n{b.path}\n"
        names = [
            f"{result['testname']}_{result['run_stamp']}_{k}"
            for k in ("summary.txt", "iops.csv", "mbps.csv", "lat.csv", "hist.txt", "trace.txt")
        ]
        for name in names:
            assert store.raw_output(run_id, f"result:{name}"), name
        assert "Maximum Small IOPS" in store.raw_output(run_id, f"result:{names[0]}")
        safety = json.loads(store.raw_output(run_id, "safety"))
        assert [(t["path"], t["access"]) for t in safety["targets"]] == [(a.path, "read"), (b.path, "read")]
        assert safety["protections"][0].startswith("options: ORION's own") and not any(
            "fio" in p for p in safety["protections"]
        )
    # the ORACLE_HOME given once is remembered in this data dir
    assert settings.get(SETTING_ORACLE_HOME, data_dir=data) == str(oracle_home)
    # and racperf parse reads the run's directory
    parsed = orion.parse_path(data / "runs" / str(result_line["run_id"]))
    assert parsed["max_small_iops"] == result["max_small_iops"]


@needs_loop
def test_write_on_an_ext4_loop_device_is_refused_for_that_lun(tmp_path: Path, oracle_home: Path) -> None:
    data = tmp_path / "data"
    with loop_device(tmp_path / "fs.img", 64) as fs, loop_device(tmp_path / "blank.img", 64) as blank:
        subprocess.run(["mkfs.ext4", "-q", "-F", fs.path], check=True, capture_output=True)
        before = _sha(fs.path), _sha(blank.path)
        done = _racperf_run(
            data,
            [
                "run=advanced",
                f"lun={fs.path}",
                f"lun={blank.path}",
                "write=30",
                "hugenotneeded=true",
                f"oracle_home={oracle_home}",
            ],
            {},
        )
        assert done.returncode == 2, done.stderr + done.stdout
        assert f"refusing to write to {fs.path} (lun (-write 30))" in done.stderr and "ext2/3/4" in done.stderr
        assert blank.path not in done.stderr  # the blank LUN was judged too, and cleared
        assert (_sha(fs.path), _sha(blank.path)) == before
    assert not list((data / "runs").glob("*")) if (data / "runs").exists() else True


def test_write_on_a_blank_file_really_writes(tmp_path: Path, oracle_home: Path) -> None:
    """A -write run changes a blank LUN, every time: the emulator writes its own data, never
    the zeros it just read (one shared buffer did, and the checksum was unchanged 1 run in 3)."""
    data = tmp_path / "data"
    lun = tmp_path / "scratch.img"
    # in the run's directory (run 1 of a new data dir): the only place the jail lets ORION write
    io_log = data / "runs" / "1" / "io.log"
    with open(lun, "wb") as handle:
        handle.truncate(16 << 20)
    before = _sha(str(lun))
    done = _racperf_run(
        data,
        [
            "run=advanced",
            f"lun={lun}",
            "write=50",
            "matrix=point",
            "num_small=2",
            "num_large=1",
            "hugenotneeded=true",
            f"oracle_home={oracle_home}",
        ],
        {"RACPERF_FAKE_ORION_IO_LOG": str(io_log)},
    )
    assert done.returncode == 0, done.stderr + done.stdout
    _samples, result_line = _lines(done.stdout)
    assert result_line["result"]["small_write_latency_us"]["avg"] > 0
    writes = io_log.read_text().splitlines()
    small = [w for w in writes if w.endswith("bytes=8192 zero=False")]
    large = [w for w in writes if "bytes=1048576 zero=False" in w]
    # two small threads, each starting with a write; the large thread writes half of its I/Os
    assert len(small) >= 2 and large and not [w for w in writes if "zero=True" in w], writes[:5]
    assert _sha(str(lun)) != before


def test_missing_huge_pages_is_named_with_its_fix(tmp_path: Path, oracle_home: Path) -> None:
    lun = tmp_path / "lun.img"
    with open(lun, "wb") as handle:
        handle.truncate(8 << 20)
    data = tmp_path / "data"
    done = _racperf_run(data, [f"lun={lun}", f"oracle_home={oracle_home}"], {"RACPERF_FAKE_ORION_NO_HUGEPAGES": "1"})
    assert done.returncode == 1
    _samples, result_line = _lines(done.stdout)
    assert result_line["state"] == "failed"
    assert "Failed to allocate shared global region with large pages" in result_line["message"]
    assert "hugenotneeded=true" in result_line["message"] and "huge pages" in result_line["message"]
    # with -hugenotneeded the same machine runs
    # (and the ORACLE_HOME given once is remembered in this data dir: not given again)
    done = _racperf_run(
        data,
        [f"lun={lun}", "hugenotneeded=true", "cache_size=0"],
        {"RACPERF_FAKE_ORION_NO_HUGEPAGES": "1", "RACPERF_FAKE_ORION_POINT_S": "0.05", "ORACLE_HOME": ""},
    )
    assert done.returncode == 0, done.stderr + done.stdout


def test_a_missing_lun_file_is_named_with_its_fix(tmp_path: Path, oracle_home: Path) -> None:
    # racperf always writes <testname>.lun; ORION run by hand where it is missing says this
    done = subprocess.run(
        [str(oracle_home / "bin" / "orion"), "-run", "simple", "-testname", "calib.lun"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0 and "Failure in opening .lun file" in done.stdout
    result = orion.parse_result_files(done.stdout, {})
    ok, message = orion.succeeded(result, done.returncode)
    assert not ok and "Failure in opening .lun file" in message and "without .lun" in message


def test_emulator_versions_parse(tmp_path: Path, oracle_home: Path) -> None:
    """The emulator's 11.1 (figures in the files only) and 19c outputs read back."""
    lun = tmp_path / "lun.img"
    with open(lun, "wb") as handle:
        handle.truncate(8 << 20)
    (tmp_path / "t.lun").write_text(f"{lun}\n")
    for version in ("11.1", "19"):
        for old in tmp_path.glob("t_*"):
            old.unlink()
        env = dict(os.environ, RACPERF_FAKE_ORION_VERSION=version, RACPERF_FAKE_ORION_POINT_S="0.03")
        done = subprocess.run(
            [str(oracle_home / "bin" / "orion"), "-run", "simple", "-testname", "t", "-cache_size", "0"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stdout
        files = {p.name: p.read_text() for p in tmp_path.glob("t_*")}
        result = orion.parse_result_files(done.stdout, files)
        # 11.1 prints ms with 2 decimals: page-cache reads of a file may print 0.00
        assert result["max_small_iops"] > 0 and result["min_small_latency_us"] >= 0, version
        assert result["lat"]["unit"] == "us" and result["lat"]["values"][0][0] >= 0
        if version == "11.1":
            assert "Maximum" not in done.stdout and "Test will take approximately 9 minutes" in done.stdout
            assert result["lat"]["printed_unit"] == "ms" and not any(n.endswith("hist.txt") for n in files)
        else:
            assert result["version"].startswith("RDBMS_19") and "read_cum_pct" in result["histogram"][0]


def test_emulator_stdout_matches_the_real_layout(tmp_path: Path, oracle_home: Path) -> None:
    lun = tmp_path / "lun.img"
    with open(lun, "wb") as handle:
        handle.truncate(8 << 20)
    (tmp_path / "tlun.lun").write_text(f"{lun}\n")
    env = dict(os.environ, RACPERF_FAKE_ORION_POINT_S="0.03")
    done = subprocess.run(
        [
            str(oracle_home / "bin" / "orion"),
            "-run",
            "advanced",
            "-testname",
            "tlun",
            "-num_disks",
            "3",
            "-size_small",
            "8",
            "-size_large",
            "8",
            "-type",
            "rand",
            "-write",
            "30",
            "-cache_size",
            "0",
            "-hugenotneeded",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout
    real = S112.read_text().splitlines()
    emulated = done.stdout.splitlines()
    assert emulated[0] == real[0] and emulated[2:4] == real[2:4]  # banner, "23 minutes", cache line
    shape = lambda lines: [(l.split("=")[0].split(":")[0].strip() if l.strip() else "") for l in lines[4:]]  # noqa: E731
    assert shape(emulated) == shape(real)
