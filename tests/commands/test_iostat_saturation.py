"""``racperf iostat --saturation``: the Disks tab's rule in the headless command, on a replayed
root (every figure known) and on a real loop device with a real ceiling under real fio."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from datetime import datetime
from pathlib import Path

from tests.helpers import needs_fio, racperf_cmd
from tests.helpers.dashboard_root import DISKS, LOADS, ReplayRoot
from tests.helpers.fio_helpers import randread_argv
from tests.helpers.loopdev import needs_blkio_throttle, throttled_loop


def racperf_iostat(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*racperf_cmd(), "iostat", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def replayed_roots(tmp_path: Path, ticks: int) -> list[Path]:
    """``ticks`` + 1 snapshots of a root one second apart under LOADS (sdb's queue full); the
    first has one second of counters (its report is the one since boot)."""
    root = ReplayRoot(tmp_path / "live", DISKS)
    roots = []
    for index in range(ticks + 1):
        root.tick(LOADS)
        roots.append(shutil.copytree(root.path, tmp_path / f"root{index}"))
    return roots


def test_json_has_each_devices_level_reason_and_since(tmp_path: Path) -> None:
    roots = replayed_roots(tmp_path, 4)
    proc = racperf_iostat(*[a for r in roots for a in ("--root", r)], "--json", "--saturation")
    assert proc.returncode == 0, proc.stderr
    reports = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(reports) == 5
    # since boot: no sample of now, every device ok
    assert {d["device"]: d["saturation"] for d in reports[0]["devices"]}["sdb"] == {
        "level": "ok",
        "reason": "",
        "since": None,
    }
    levels = [{d["device"]: d["saturation"]["level"] for d in r["devices"]} for r in reports[1:]]
    assert [lv["sdb"] for lv in levels] == ["ok", "ok", "saturated", "saturated"]  # 3 samples in a row
    assert all(lv["sda"] == "ok" and lv["nvme0n1"] == "ok" for lv in levels)
    sdb = {d["device"]: d["saturation"] for d in reports[-1]["devices"]}["sdb"]
    assert sdb["reason"] == "queue full: avgqu-sz 31.5 of its limit 32 (SCSI queue_depth), %util 100"
    assert datetime.fromisoformat(sdb["since"]).tzinfo is not None
    # without the option the devices are as before
    plain = racperf_iostat("--root", roots[0], "--json")
    assert "saturation" not in json.loads(plain.stdout)["devices"][0]


def test_text_has_a_saturation_column_and_a_line_per_device_not_ok(tmp_path: Path) -> None:
    roots = replayed_roots(tmp_path, 3)
    proc = racperf_iostat(*[a for r in roots for a in ("--root", r)], "--saturation", "-y", "sdb", "sda")
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().split("\n\n")[-1].splitlines()
    assert last[0].endswith("%util saturation")
    assert last[1].startswith("sda ") and last[1].endswith(" ok")
    assert last[2].startswith("sdb ") and last[2].endswith(" saturated")
    assert last[3].startswith("! sdb saturated since ") and last[3].endswith(
        ": queue full: avgqu-sz 31.5 of its limit 32 (SCSI queue_depth), %util 100"
    )


def test_a_bad_tuning_is_a_usage_error(tmp_path: Path) -> None:
    roots = replayed_roots(tmp_path, 1)
    proc = racperf_iostat("--root", roots[0], "--saturation", env={"RACPERF_SATURATION": "floor=zero"})
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("racperf iostat: RACPERF_SATURATION: 'floor=zero': expected KEY=NUMBER > 0")


@needs_fio
@needs_blkio_throttle
def test_a_loop_device_at_its_ceiling_is_saturated_live(tmp_path: Path) -> None:
    """2,000 IOPS at most: fio at iodepth 1, then 32; racperf iostat judges it every second."""
    with throttled_loop(tmp_path / "disk.img", iops=2000) as ceiling:
        name = ceiling.device.name
        iostat = subprocess.Popen(
            [*racperf_cmd(), "iostat", "--json", "--saturation", "-y", name, "1", "13"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for iodepth, seconds in ((1, 5), (32, 8)):
            subprocess.run(
                randread_argv(ceiling.device.path, iodepth, seconds),
                capture_output=True,
                check=True,
                preexec_fn=ceiling.join,
                timeout=60,
            )
        out, err = iostat.communicate(timeout=60)
    assert iostat.returncode == 0, err
    judged = [
        (d["r/s"], d["avgqu-sz"], d["saturation"]) for line in out.splitlines() for d in json.loads(line)["devices"]
    ]
    assert len(judged) == 13, judged
    assert all(s["level"] in ("ok", "busy") for _iops, qu, s in judged[:4]), judged
    last = judged[-1][2]
    assert last["level"] == "saturated" and last["reason"].startswith("no more throughput: "), judged
    assert time.time() - datetime.fromisoformat(last["since"]).timestamp() < 30
