"""Queue saturation on every kind of device: the stated rule (SaturationRules.describe) is the
one the model applies, the queue limit says where it comes from, and a loop device loaded by
real fio at iodepth 32 and 64 is flagged."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from racperf_tui.core.disks.diskstats import QueueFacts, read_queue_facts
from racperf_tui.core.disks.iostat_math import IostatRow
from racperf_tui.core.disks.iostat_model import IostatModel, SaturationRules
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from tests.helpers import needs_fio
from tests.helpers.loopdev import loop_device, needs_loop


@dataclass
class Report:
    rows: list[IostatRow] = field(default_factory=list)


def row(
    name: str,
    *,
    r_s: float = 100.0,
    util: float = 50.0,
    avgqu: float = 0.5,
    await_ms: float = 1.0,
    svctm: float = 1.0,
    kb: float = 800.0,
) -> IostatRow:
    return IostatRow(
        name, r_s, 0.0, kb, 0.0, 0.0, 0.0, 16.0, avgqu, await_ms, await_ms, 0.0, svctm, util, kernel_name=name
    )


def model_of(facts: dict[str, QueueFacts], rules: SaturationRules | None = None) -> IostatModel:
    return IostatModel(rules or SaturationRules(), facts_of=lambda name: facts.get(name))


SCSI_DISK = QueueFacts(queue_depth=32, nr_requests=64, scheduler="mq-deadline", rotational=True)


def test_the_seed_example_is_flagged() -> None:
    """sdd: avgqu-sz 2.39, await 6.28, svctm 2.56, %util 97.42, "near full load"."""
    model = model_of({"sdd": SCSI_DISK})
    for _ in range(3):
        model.update(Report([row("sdd", util=97.42, avgqu=2.39, await_ms=6.28, svctm=2.56)]))
    state = model.devices["sdd"]
    assert state.saturation_reason == ("queueing: await 6.28 ms = 2.5x svctm 2.56 ms with avgqu-sz 2.4, for 3 samples")


def test_one_burst_is_not_a_flag_and_busy_is_weak_where_the_device_serves_many() -> None:
    model = model_of({"sdd": SCSI_DISK, "nvme0n1": QueueFacts(None, 1023, "none", False, nr_hw_queues=4)})
    for count in range(3):
        model.update(
            Report(
                [
                    row("sdd", util=99, avgqu=0.9, await_ms=1, svctm=1),
                    row("nvme0n1", util=100, avgqu=6, await_ms=0.5, svctm=0.01),
                ]
            )
        )
        if count < 2:
            assert not model.devices["sdd"].saturated
    assert model.devices["sdd"].saturation_reason == "busy: %util 99 for 3 samples"
    # an NVMe at %util 100 with 6 outstanding: busy says little, and await/svctm nothing
    assert model.devices["nvme0n1"].saturation_reason == (
        "busy: %util 100 for 3 samples (a weak signal: this device serves many I/Os at once)"
    )


def test_queue_limits_say_where_they_come_from() -> None:
    facts = {
        "sdb": SCSI_DISK,
        "sdc": SCSI_DISK,
        "dm-0": QueueFacts(None, 128, None, True, slaves=("sdb", "sdc")),
        "nvme0n1": QueueFacts(None, 1023, "none", False, nr_hw_queues=4),
        "loop0": QueueFacts(None, 128, "none", True),
    }
    model = model_of(facts)
    model.update(Report([row(name) for name in facts]))
    limits = {name: model.queue_limit(state) for name, state in model.devices.items()}
    assert limits == {
        "sdb": (32, "SCSI queue_depth"),
        "sdc": (32, "SCSI queue_depth"),
        "dm-0": (64, "its 2 paths/members (sdb, sdc)"),
        "nvme0n1": (4092, "4 hardware queues x nr_requests 1023"),
        "loop0": (128, "nr_requests"),
    }
    # a multipath device is full when its paths are, together
    for _ in range(3):
        model.update(Report([row("dm-0", util=100, avgqu=60, await_ms=40, svctm=1)]))
    assert model.devices["dm-0"].saturation_reason.startswith(
        "queue full: avgqu-sz 60.0 near its limit 64 (its 2 paths/members (sdb, sdc))"
    )


def test_the_knee_from_recent_history_on_any_device() -> None:
    """Load climbs (ORION's data points, fio's iodepth): IOPS stop rising while avgqu-sz and
    await keep rising. An NVMe device, where no other rule works."""
    model = model_of({"nvme0n1": QueueFacts(None, 1023, "none", False, nr_hw_queues=4)})
    for avgqu, iops in [(4, 40000), (4, 40100), (4, 39900), (8, 40200), (8, 40000), (8, 40100)]:
        model.update(
            Report(
                [
                    row(
                        "nvme0n1",
                        r_s=iops,
                        util=100,
                        avgqu=avgqu,
                        await_ms=avgqu / iops * 1000,
                        svctm=0.025,
                        kb=iops * 8,
                    )
                ]
            )
        )
    reason = model.devices["nvme0n1"].saturation_reason
    assert reason.startswith("knee: avgqu-sz 4.0 -> 8.0 and await 0.10 -> 0.20 ms, IOPS 40000 -> 40100"), reason
    # still climbing IOPS: no knee
    climbing = model_of({"nvme0n1": QueueFacts(None, 1023, "none", False, nr_hw_queues=4)})
    for avgqu, iops in [(4, 40000)] * 3 + [(8, 78000)] * 3:
        climbing.update(
            Report([row("nvme0n1", r_s=iops, util=100, avgqu=avgqu, await_ms=0.1, svctm=0.025, kb=iops * 8)])
        )
    assert "knee" not in climbing.devices["nvme0n1"].saturation_reason


def test_thresholds_are_configurable_and_the_rule_text_is_the_rule() -> None:
    rules = SaturationRules.from_env({"RACPERF_SATURATION": "busy=80,queueing=3,samples=2"})
    assert (rules.busy_util_pct, rules.queueing_ratio, rules.consecutive) == (80.0, 3.0, 2)
    with pytest.raises(ValueError, match="RACPERF_SATURATION: 'bogus=1'"):
        SaturationRules.from_env({"RACPERF_SATURATION": "bogus=1"})
    text = rules.describe()
    assert "%util >= 80" in text and "await >= 3 x svctm" in text and "2 samples in a row" in text
    model = model_of({"sdd": SCSI_DISK}, rules)
    for _ in range(2):
        model.update(Report([row("sdd", util=85, avgqu=2.39, await_ms=6.28, svctm=2.56)]))
    assert model.devices["sdd"].saturation_reason == "busy: %util 85 for 2 samples"  # 2.45x < 3x


def test_facts_read_hardware_queues_and_slaves_from_sysfs(tmp_path: Path) -> None:
    block = tmp_path / "sys" / "block"
    for name, files in {
        "dm-3": {"queue/nr_requests": "128", "slaves/sdb": "", "slaves/sdc": ""},
        "nvme0n1": {"queue/nr_requests": "1023", "mq/0/cpu_list": "0", "mq/1/cpu_list": "1"},
    }.items():
        for rel, text in files.items():
            path = block / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if text or not rel.startswith("slaves/"):
                path.write_text(text + "\n")
            else:
                path.mkdir()
    assert read_queue_facts("dm-3", tmp_path).slaves == ("sdb", "sdc")
    assert read_queue_facts("nvme0n1", tmp_path).nr_hw_queues == 2


@needs_fio
@needs_loop
@pytest.mark.parametrize("iodepth", [32, 64])
def test_a_loop_device_loaded_at_high_iodepth_is_flagged(iodepth: int, tmp_path: Path) -> None:
    """Real fio (libaio, direct) on a real loop device, the panel's sampler and model: the
    device is flagged while fio runs, and the reason names its figures."""
    with loop_device(tmp_path / "disk.img", size_mib=256) as loop:
        subprocess.run(
            ["dd", "if=/dev/urandom", f"of={loop.path}", "bs=1M", "count=64", "oflag=direct"],
            check=True,
            capture_output=True,
        )
        fio = subprocess.Popen(
            [
                "fio",
                "--name=sat",
                f"--filename={loop.path}",
                "--rw=randread",
                "--bs=4k",
                "--ioengine=libaio",
                f"--iodepth={iodepth}",
                "--direct=1",
                "--size=64m",
                "--runtime=12",
                "--time_based",
                "--readonly",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            sampler = IostatSampler(partitions=True)
            model = IostatModel(SaturationRules(), facts_of=sampler.queue_facts)
            model.update(sampler.sample(), record_history=False)
            reasons: list[str] = []
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not any(reasons):
                time.sleep(1.0)
                model.update(sampler.sample())
                state = model.devices.get(loop.name)
                reasons.append(state.saturation_reason if state else "")
        finally:
            fio.terminate()
            fio.wait(timeout=30)
    assert any(reasons), [
        (s.name, s.row.avgqu_sz, s.row.util_pct) for s in model.devices.values() if s.name.startswith("loop")
    ]
    reason = next(r for r in reasons if r)
    assert reason.startswith(("queueing:", "busy:", "queue full:", "knee:")), reason
    assert os.path.basename(loop.path) == loop.name
