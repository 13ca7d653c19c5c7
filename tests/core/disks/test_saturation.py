"""Queue saturation on every kind of device, in levels (ok, busy, queueing, saturated): the
stated rule (SaturationRules.describe) is the one the model applies, latency is judged against
the device's own low-load await and never under the floor, levels hold by hysteresis, and real
fio on real loop devices (one with a real ceiling: a blkio throttle under a direct-I/O loop)
is judged right: no flag at iodepth 1-8 unthrottled, saturated at the ceiling and at a full
queue."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from racperf_tui.core.disks.diskstats import QueueFacts, read_queue_facts
from racperf_tui.core.disks.iostat_math import IostatRow
from racperf_tui.core.disks.iostat_model import IostatModel
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from racperf_tui.core.disks.saturation import SaturationRules
from tests.helpers import needs_fio
from tests.helpers.fio_helpers import randread_argv
from tests.helpers.loopdev import loop_device, needs_blkio_throttle, needs_loop, throttled_loop

T0 = 1_700_000_000.0


@dataclass
class Report:
    rows: list[IostatRow] = field(default_factory=list)
    wall_time: float = T0


def row(
    name: str,
    *,
    r_s: float = 100.0,
    util: float = 50.0,
    avgqu: float = 0.5,
    await_ms: float = 1.0,
    svctm: float = 1.0,
    kb: float | None = None,
) -> IostatRow:
    kb = r_s * 8 if kb is None else kb
    return IostatRow(
        name, r_s, 0.0, kb, 0.0, 0.0, 0.0, 16.0, avgqu, await_ms, await_ms, 0.0, svctm, util, kernel_name=name
    )


def model_of(facts: dict[str, QueueFacts], rules: SaturationRules | None = None) -> IostatModel:
    return IostatModel(rules or SaturationRules(), facts_of=lambda name: facts.get(name))


def feed(model: IostatModel, rows: list[IostatRow], times: int = 1) -> None:
    for _ in range(times):
        model.update(Report(rows, T0 + model.tick))


SCSI_DISK = QueueFacts(queue_depth=32, nr_requests=64, scheduler="mq-deadline", rotational=True)
LOOP = QueueFacts(None, 128, "none", True)
NVME = QueueFacts(None, 1023, "none", False, nr_hw_queues=4)


def test_a_sub_millisecond_ratio_is_no_cue() -> None:
    """The DBA's false alarm: a loop device at iodepth 8, await 0.22 ms = 7.1x svctm."""
    model = model_of({"loop4": LOOP})
    feed(model, [row("loop4", r_s=30000, util=60, avgqu=0.6, await_ms=0.02, svctm=0.02)], 5)
    feed(model, [row("loop4", r_s=36000, util=70, avgqu=7.9, await_ms=0.22, svctm=0.031)], 20)
    loop4 = model.devices["loop4"]
    assert (loop4.level, loop4.saturation_reason, loop4.flagged) == ("ok", "", False)


def test_queueing_is_judged_against_the_devices_own_low_load_await() -> None:
    model = model_of({"sdd": SCSI_DISK})
    feed(model, [row("sdd", r_s=150, util=60, avgqu=0.7, await_ms=5.0, svctm=4.0)], 5)
    # 2.2x its own 5 ms with 2.4 outstanding: queueing, after 3 samples in a row
    feed(model, [row("sdd", r_s=160, util=97, avgqu=2.4, await_ms=11.0, svctm=4.0)], 2)
    assert model.devices["sdd"].level == "ok"  # two samples are not a level yet
    feed(model, [row("sdd", r_s=160, util=97, avgqu=2.4, await_ms=11.0, svctm=4.0)])
    sdd = model.devices["sdd"]
    assert sdd.level == "queueing" and sdd.flagged
    assert sdd.saturation_reason == "queueing: await 11.00 ms with avgqu-sz 2.4, 2.2x its low-load await 5.00 ms"
    assert sdd.verdict.since == T0 + 5  # the first sample of the three
    # a device with no low-load await seen: no queueing cue (6.28 ms may be its service time)
    fresh = model_of({"sdd": SCSI_DISK})
    feed(fresh, [row("sdd", util=80, avgqu=2.39, await_ms=6.28, svctm=2.56)], 10)
    assert fresh.devices["sdd"].level == "ok"


def test_busy_is_a_level_of_its_own_not_a_flag() -> None:
    model = model_of({"sdd": SCSI_DISK, "nvme0n1": NVME})
    for count in range(3):
        feed(
            model,
            [row("sdd", util=99, avgqu=0.9, await_ms=1, svctm=1), row("nvme0n1", util=100, avgqu=6, await_ms=0.5)],
        )
        if count < 2:
            assert model.devices["sdd"].level == "ok"  # one burst is not a level
    assert model.devices["sdd"].saturation_reason == "busy: %util 99 (no latency cue: requests do not wait)"
    nvme = model.devices["nvme0n1"]
    assert (nvme.level, nvme.flagged) == ("busy", False)
    assert nvme.saturation_reason == "busy: %util 100 (harmless: this device serves many I/Os at once)"
    assert model.flagged() == []


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
    assert model.devices["dm-0"].saturation_reason == (
        "queue full: avgqu-sz 60.0 of its limit 64 (its 2 paths/members (sdb, sdc)), %util 100"
    )


def plateau_rows(scale: float, iops: float = 2000.0) -> list[list[IostatRow]]:
    """A device at its ceiling: ``iops`` at avgqu-sz 4 and at 16, await 4x higher."""
    low = [row("nvme0n1", r_s=iops, util=100, avgqu=4, await_ms=4 / iops * 1000 * scale)]
    high = [row("nvme0n1", r_s=iops, util=100, avgqu=16, await_ms=16 / iops * 1000 * scale)]
    return [low] * 3 + [high] * 4


def test_no_more_throughput_for_more_load_is_saturated_and_stays_so_at_the_plateau() -> None:
    model = model_of({"nvme0n1": NVME})
    for rows in plateau_rows(1.0):
        feed(model, rows)
    nvme = model.devices["nvme0n1"]
    assert nvme.level == "saturated"
    assert nvme.saturation_reason == (
        "no more throughput: 2,000 IOPS at avgqu-sz 16.0, 2,000 at 4.0; await 2.00 -> 8.00 ms"
    )
    since = nvme.verdict.since
    # the load stays at the plateau: no new episode, the same reason (the complaint)
    feed(model, plateau_rows(1.0)[-1], 30)
    assert (nvme.level, nvme.verdict.since) == ("saturated", since)
    assert nvme.saturation_reason.startswith("no more throughput: 2,000 IOPS at avgqu-sz 16.0")
    # more load that does buy throughput is no plateau
    climbing = model_of({"nvme0n1": NVME})
    for rows in plateau_rows(1.0)[:3]:
        feed(climbing, rows)
    feed(climbing, [row("nvme0n1", r_s=7000, util=100, avgqu=16, await_ms=2.3)], 6)
    assert climbing.devices["nvme0n1"].level == "busy"


def test_a_plateau_under_the_latency_floor_is_no_cue_unless_the_floor_is_lowered() -> None:
    """The same shape at 0.1 -> 0.4 ms (a fast NVMe, or a CPU-bound loop device)."""
    for floor, level in ((None, "busy"), ("0.1", "saturated")):
        rules = SaturationRules.from_env({"RACPERF_SATURATION": f"floor={floor}"} if floor else {})
        model = model_of({"nvme0n1": NVME}, rules)
        for rows in plateau_rows(1.0, iops=40000):
            feed(model, rows)
        assert model.devices["nvme0n1"].level == level, floor


def test_hysteresis_keeps_the_level_and_the_reason_kind() -> None:
    """A full queue that eases for a sample or two now and then: one episode, one kind."""
    model = model_of({"sdb": SCSI_DISK})
    full = row("sdb", r_s=3000, util=100, avgqu=31.5, await_ms=10.5, svctm=0.33)
    easing = row("sdb", r_s=3000, util=100, avgqu=24.0, await_ms=8.0, svctm=0.33)
    feed(model, [full], 3)
    sdb = model.devices["sdb"]
    assert sdb.saturation_reason == "queue full: avgqu-sz 31.5 of its limit 32 (SCSI queue_depth), %util 100"
    since = sdb.verdict.since
    for pattern in ([easing], [full], [easing, easing], [full]):
        for one in pattern:
            feed(model, [one])
            assert (sdb.level, sdb.verdict.since) == ("saturated", since)
            assert sdb.saturation_reason.startswith("queue full: avgqu-sz 31.5")
    # three samples below: the level goes down to what the last three share
    feed(model, [easing], 3)
    assert sdb.level == "busy", sdb.saturation_reason
    assert len(model.episodes) == 1 and model.episodes[0].level == "saturated"


def test_episodes_say_when_they_began_and_at_what_load() -> None:
    model = model_of({"sdb": SCSI_DISK})
    model.load_note = "fio iodepth=64"
    feed(model, [row("sdb", r_s=3000, util=100, avgqu=31.5, await_ms=10.5)], 4)
    sdb = model.devices["sdb"]
    assert sdb.episode_load == "fio iodepth=64"
    assert sdb.flag_text().startswith("sdb saturated since ") and "(at fio iodepth=64): queue full" in sdb.flag_text()
    model.load_note = ""
    feed(model, [row("sdb", r_s=10, util=1, avgqu=0.01, await_ms=1)], 3)
    assert sdb.level == "ok"
    [episode] = model.episodes_so_far()
    assert (episode.level, episode.since, episode.until, episode.load) == (
        "saturated",
        T0 + 0,
        T0 + 6,
        "fio iodepth=64",
    )


def test_an_idle_device_ends_its_episode_and_is_judged_again_when_loaded() -> None:
    """Idle intervals take a short path (most devices of a host, most ticks): the same verdicts."""
    model = model_of({"sdb": SCSI_DISK})
    full = row("sdb", r_s=3000, util=100, avgqu=31.5, await_ms=10.5)
    idle = row("sdb", r_s=0, util=0, avgqu=0, await_ms=0, svctm=0)
    feed(model, [full], 3)
    sdb = model.devices["sdb"]
    assert sdb.level == "saturated"
    feed(model, [idle], 2)
    assert sdb.level == "saturated"  # hysteresis: the idle path is not taken while flagged
    feed(model, [idle], 1)
    assert sdb.level == "ok" and [e.until for e in model.episodes] == [T0 + 5]
    feed(model, [idle], 10)
    feed(model, [full], 3)
    assert sdb.level == "saturated" and sdb.verdict.since == T0 + 16


def test_thresholds_are_configurable_and_the_rule_text_is_the_rule() -> None:
    rules = SaturationRules.from_env(
        {"RACPERF_SATURATION": "busy=80,queueing=3,samples=2,full=0.9,knee=0.5,flat=0.1,floor=1,release=4"}
    )
    assert (rules.busy_util_pct, rules.queueing_ratio, rules.consecutive, rules.full_frac) == (80.0, 3.0, 2, 0.9)
    assert (rules.knee_rise, rules.knee_flat, rules.latency_floor_ms, rules.release) == (0.5, 0.1, 1.0, 4)
    for bad in ("bogus=1", "floor=-1", "busy=x"):
        with pytest.raises(ValueError, match=f"RACPERF_SATURATION: '{bad}': expected KEY=NUMBER > 0"):
            SaturationRules.from_env({"RACPERF_SATURATION": bad})
    text = rules.describe()
    assert "%util >= 80" in text and "await >= 3 x the device's own await at low load" in text
    assert "no latency cue under 1 ms" in text and "after 2 samples in a row and ends after 4 below it" in text
    model = model_of({"sdd": SCSI_DISK}, rules)
    feed(model, [row("sdd", util=85, avgqu=0.5, await_ms=3.0)], 3)
    feed(model, [row("sdd", util=85, avgqu=2.39, await_ms=6.28)], 2)
    assert model.devices["sdd"].level == "busy"  # 2.1x < 3x its own 3 ms


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


def fio(path: str, iodepth: int, seconds: int, preexec=None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        randread_argv(path, iodepth, seconds), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=preexec
    )


def judged_while(
    name: str, steps: list[tuple[int, int]], path: str, preexec=None
) -> list[tuple[int, str, str, float, float, float]]:
    """Real fio at each (iodepth, seconds) in turn, the panel's sampler and model every
    second: (iodepth, level, reason, IOPS, avgqu-sz, await) per sample."""
    sampler = IostatSampler(partitions=True)
    model = IostatModel(SaturationRules(), facts_of=sampler.queue_facts)
    model.update(sampler.sample(), record_history=False)
    seen = []
    for iodepth, seconds in steps:
        job = fio(path, iodepth, seconds, preexec)
        try:
            for _ in range(seconds):
                time.sleep(1.0)
                model.update(sampler.sample())
                state = model.devices[name]
                seen.append(
                    (
                        iodepth,
                        state.level,
                        state.saturation_reason,
                        state.row.r_s,
                        state.row.avgqu_sz,
                        state.row.await_ms,
                    )
                )
        finally:
            job.terminate()
            job.wait(timeout=30)
    return seen


@needs_fio
@needs_loop
def test_no_flag_at_iodepth_1_to_8_on_an_unthrottled_loop_device(tmp_path: Path) -> None:
    """A loop device serves many I/Os at once: at iodepth 8 its await is a fraction of a
    millisecond however many times its svctm (the old rule flagged it within 3 s)."""
    with loop_device(tmp_path / "disk.img", size_mib=128) as loop:
        seen = judged_while(loop.name, [(1, 4), (4, 4), (8, 6)], loop.path)
    assert all(level in ("ok", "busy") for _depth, level, *_ in seen), seen
    assert max(iops for *_, iops, _qu, _await in seen) > 1000, seen  # fio did load it


@needs_fio
@needs_blkio_throttle
def test_a_device_at_its_ceiling_is_saturated_no_more_throughput(tmp_path: Path) -> None:
    """2,000 IOPS at most: iodepth 1 already reaches them; at 8 and 32 only await grows."""
    with throttled_loop(tmp_path / "disk.img", iops=2000) as ceiling:
        seen = judged_while(ceiling.device.name, [(1, 5), (8, 6), (32, 6)], ceiling.device.path, ceiling.join)
    at_32 = [s for s in seen if s[0] == 32]
    assert 1700 <= sorted(s[3] for s in at_32)[len(at_32) // 2] <= 2200, seen  # the ceiling held
    assert at_32[-1][1] == "saturated", seen
    assert at_32[-1][2].startswith("no more throughput: "), seen
    assert all(level in ("ok", "busy") for depth, level, *_ in seen if depth == 1), seen


@needs_fio
@needs_blkio_throttle
def test_a_queue_at_its_limit_is_saturated_queue_full(tmp_path: Path) -> None:
    """nr_requests 8 on the device at its ceiling, iodepth 64: the queue holds 8."""
    with throttled_loop(tmp_path / "disk.img", iops=2000) as ceiling:
        (Path("/sys/block") / ceiling.device.name / "queue" / "nr_requests").write_text("8")
        seen = judged_while(ceiling.device.name, [(64, 6)], ceiling.device.path, ceiling.join)
    assert seen[-1][1] == "saturated", seen
    assert seen[-1][2].startswith("queue full: avgqu-sz ") and "of its limit 8 (nr_requests)" in seen[-1][2], seen
