"""Every path a tool writes is a write target (ToolOption.access WRITES, orchestration/run_plan.py):
the probe server's ``write_file`` (opened O_TRUNC at start) and ``write_dir``, oratcptest's
``output=`` and ``file=``, judged by the write guard like fio's targets, whatever the tool's own
plan declares. Real victims (an ext4 loop device, an ASM-headed file), real run attempts, the
victim's bytes unchanged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.orchestration.run_plan import PlanRefused
from racperf_tui.orchestration.runs import launch_run, stop_run, wait_for_run
from tests.helpers import FAKES, racperf_cmd
from tests.helpers.loopdev import ext4_loop_device, make_sparse_image, needs_loop, sha256_of, write_at


def _asm_file(path: Path) -> Path:
    make_sparse_image(path, 4)
    write_at(path, 32, b"ORCLDISK")
    return path


def _probe_pair(data_dir: Path, *server: str) -> subprocess.CompletedProcess[str]:
    args = [f"--server={s}" for s in ("bind=127.0.0.1", "port=0", *server)]
    return subprocess.run(
        [
            *racperf_cmd(),
            "pair",
            "probe",
            "--data-dir",
            str(data_dir),
            *args,
            "--set",
            "host=127.0.0.1",
            "--set",
            "duration_s=1",
            "--set",
            "write=true",
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )


@needs_loop
def test_the_probe_server_does_not_truncate_an_ext4_device(tmp_path: Path, data_dir: Path) -> None:
    with ext4_loop_device(tmp_path) as device:
        before = sha256_of(device)
        done = _probe_pair(data_dir, f"write_file={device}")
        assert done.returncode != 0
        assert f"refusing to write to {device} (write_file=)" in done.stderr, done.stderr
        assert "carries an ext2/3/4 file system" in done.stderr
        assert "write_file=" in done.stderr
        assert sha256_of(device) == before


@needs_loop
def test_the_probe_server_does_not_truncate_an_asm_file(tmp_path: Path, data_dir: Path) -> None:
    victim = _asm_file(tmp_path / "asm.img")
    before = sha256_of(victim)
    done = _probe_pair(data_dir, f"write_file={victim}")
    assert done.returncode != 0 and "ASM" in done.stderr, done.stderr
    assert sha256_of(victim) == before and victim.stat().st_size == 4 << 20


def test_a_write_dir_that_does_not_exist_under_dev_is_refused(data_dir: Path) -> None:
    with pytest.raises(PlanRefused, match="/dev/racperf-no-such-dir"):
        launch_run("probe", {"role": "server", "port": 0, "write_dir": "/dev/racperf-no-such-dir"}, data_dir=data_dir)


def test_a_cleared_write_file_is_written_and_recorded_as_a_target(tmp_path: Path, data_dir: Path) -> None:
    """The probe server writing into a fresh file runs (the guard clears it) and the run's
    plan lists the file as a write target, as fio's are."""
    fresh = tmp_path / "ring.dat"
    done = _probe_pair(data_dir, f"write_file={fresh}")
    assert done.returncode == 0, done.stderr
    server = json.loads(done.stdout.splitlines()[-1])
    assert server["state"] == "succeeded" and fresh.stat().st_size > 0
    shown = subprocess.run(
        [*racperf_cmd(), "runs", "show", str(server["run_id"]), "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"write {fresh}" in shown.stdout.replace("  ", " ") or str(fresh) in shown.stdout, shown.stdout


@pytest.fixture
def fake_oratcptest(tmp_path: Path) -> dict[str, str]:
    jar = tmp_path / "oratcptest.jar"
    jar.write_bytes(b"PK\x03\x04")
    return {"java": str(FAKES / "oratcptest"), "jar_path": str(jar)}


@needs_loop
@pytest.mark.parametrize(("role", "option"), [("client", "output"), ("server", "file")])
def test_oratcptest_files_are_write_targets(
    tmp_path: Path, data_dir: Path, fake_oratcptest: dict[str, str], role: str, option: str
) -> None:
    victim = _asm_file(tmp_path / "asm.img")
    before = sha256_of(victim)
    config = {**fake_oratcptest, "role": role, "host": "127.0.0.1", "port": 1, option: str(victim)}
    with pytest.raises(PlanRefused, match=rf"{victim} \({option}=\)") as refused:
        launch_run("oratcptest", config, data_dir=data_dir)
    assert "ASM" in str(refused.value)
    assert sha256_of(victim) == before


def test_a_relative_written_path_is_made_absolute_where_it_was_typed(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The supervisor runs in /; ``write_file=ring.dat`` means the caller's directory."""
    monkeypatch.chdir(tmp_path)
    run_id = launch_run(
        "probe", {"role": "server", "port": 0, "bind": "127.0.0.1", "write_file": "ring.dat"}, data_dir=data_dir
    )
    try:
        record = wait_for_run(run_id, data_dir, 1.0)
        assert record.config["write_file"] == str(tmp_path / "ring.dat")
    finally:
        stop_run(run_id, data_dir, grace_s=1.0)
    assert wait_for_run(run_id, data_dir, 10).state in (RunState.STOPPED, RunState.SUCCEEDED, RunState.FAILED)
