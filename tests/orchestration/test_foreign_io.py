"""Foreign I/O on a run's LUN: the stated margin on figures, and real fio under the real
supervisor on a loop device while another fio, not racperf's, reads the same device."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from racperf_tui.core.disks.saturation import FOREIGN_IO_STREAM
from racperf_tui.core.store import Store
from racperf_tui.orchestration.foreign_io import Figures, ForeignIoCheck
from tests.helpers import needs_fio, racperf_cmd
from tests.helpers.fio_helpers import randread_argv
from tests.helpers.loopdev import loop_device, needs_loop


def fed(check: ForeignIoCheck, bench: tuple[float, float], dev: tuple[float, float], seconds: int) -> list[bool]:
    found = []
    for second in range(seconds):
        check.benchmark(Figures(float(second), *bench))
        found.append(check.device(Figures(second + 0.5, *dev)))
    return found


def test_within_the_margin_is_the_benchmarks_own() -> None:
    check = ForeignIoCheck("sdb")
    # 20 % + 1 MB/s over what fio says: request splits, metadata, rounding
    assert not any(fed(check, (1000.0, 8000.0), (1100.0, 8000.0 * 1.2 + 1000.0), 10))
    assert check.note == ""


def test_past_the_margin_for_three_checks_it_is_said_with_the_excess() -> None:
    check = ForeignIoCheck("sdb")
    found = fed(check, (4585.0, 36680.0), (16000.0, 128000.0), 6)
    # two figures of each are needed for a mean, then three checks in a row
    assert found == [False, False, False, True, False, False]
    assert check.note == (
        "the LUN carried I/O racperf did not issue: 11,415 IOPS, 89.2 MB/s "
        "(sdb: 16,000 IOPS, the benchmark: 4,585, over 5 s)"
    )


def racperf_run(data: Path, target: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *racperf_cmd(),
            "run",
            "fio",
            "--data-dir",
            str(data),
            "--target",
            target,
            *("--set", "rw=randread", "--set", "bs=4k", "--set", "ioengine=libaio", "--set", "iodepth=2"),
            *("--set", "runtime_s=10", "--set", "size=64m", "--set", "ramp_time_s=0"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@needs_fio
@needs_loop
def test_a_run_whose_lun_another_fio_loads_says_so(tmp_path: Path) -> None:
    with loop_device(tmp_path / "disk.img", size_mib=128) as loop:
        alone = racperf_run(tmp_path / "alone", loop.path)
        assert alone.wait(timeout=120) == 0, alone.stderr.read() if alone.stderr else ""
        shared = racperf_run(tmp_path / "shared", loop.path)
        time.sleep(2)
        other = subprocess.run(randread_argv(loop.path, 16, 6, name="foreign"), capture_output=True, timeout=60)
        assert other.returncode == 0, other.stderr
        assert shared.wait(timeout=120) == 0, shared.stderr.read() if shared.stderr else ""
    with Store.open(tmp_path / "alone") as store:
        [record] = store.list_runs()
        assert "did not issue" not in (record.message or ""), record.message
        assert store.raw_output(record.id, FOREIGN_IO_STREAM) == ""
    with Store.open(tmp_path / "shared") as store:
        [record] = store.list_runs()
        said = store.raw_output(record.id, FOREIGN_IO_STREAM).splitlines()
    assert said and said[-1].startswith("the LUN carried I/O racperf did not issue: "), said
    assert f"({loop.name}: " in said[-1]
    assert said[-1] in (record.message or ""), record.message
