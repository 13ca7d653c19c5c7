"""iostat math: hand-computed figures, counter wraps, hot-plug, re-registration, device
selection, and a property: no counter pair ever yields a negative or absurd figure."""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racperf_tui.core.disks.diskstats import DeviceCounters, QueueFacts
from racperf_tui.core.disks.iostat_math import COLUMNS, compute_row
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from tests.helpers import TESTS_DIR

FIXTURES = TESTS_DIR / "fixtures" / "sysstat"
WRAP = 1 << 32


def counters(name: str = "sda", major: int = 8, minor: int = 0, **values: int) -> DeviceCounters:
    base = dict(
        rd_ios=0,
        rd_merges=0,
        rd_sectors=0,
        rd_ticks=0,
        wr_ios=0,
        wr_merges=0,
        wr_sectors=0,
        wr_ticks=0,
        ios_pgr=0,
        tot_ticks=0,
        rq_ticks=0,
    )
    base.update(values)
    return DeviceCounters(major, minor, name, **base)


def line(c: DeviceCounters) -> str:
    stats = c[3 : 3 + c.stat_fields]
    return f"{c.major:4d} {c.minor:7d} {c.name} " + " ".join(str(v) for v in stats)


def write_root(root: Path, uptime_cs: int, devices: list[DeviceCounters], whole: list[str] | None = None) -> Path:
    """A sysstat-style root; `whole` devices get a sys/block dir (with a stat file)."""
    (root / "proc").mkdir(parents=True, exist_ok=True)
    (root / "proc/uptime").write_text(f"{uptime_cs // 100}.{uptime_cs % 100:02d} 0.00\n")
    (root / "proc/diskstats").write_text("".join(line(c) + "\n" for c in devices))
    block = root / "sys/block"
    if block.exists():
        shutil.rmtree(block)
    block.mkdir(parents=True)
    for name in whole if whole is not None else [c.name for c in devices]:
        (block / name.replace("/", "!")).mkdir()
        (block / name.replace("/", "!") / "stat").write_text("0\n")
    return root


# -- one row, by hand ---------------------------------------------------------------------------


def test_row_by_hand_with_discards_and_flushes() -> None:
    prev = counters(
        rd_ios=100,
        rd_merges=10,
        rd_sectors=1000,
        rd_ticks=500,
        wr_ios=50,
        wr_merges=5,
        wr_sectors=800,
        wr_ticks=300,
        tot_ticks=1000,
        rq_ticks=2000,
        dc_ios=10,
        dc_sectors=400,
        dc_ticks=100,
        fl_ios=7,
        fl_ticks=999,
    )
    cur = counters(
        rd_ios=300,
        rd_merges=30,
        rd_sectors=5000,
        rd_ticks=1500,
        wr_ios=150,
        wr_merges=25,
        wr_sectors=2800,
        wr_ticks=1300,
        tot_ticks=1500,
        rq_ticks=4000,
        dc_ios=60,
        dc_sectors=2400,
        dc_ticks=600,
        fl_ios=70,
        fl_ticks=99999,
    )
    row = compute_row("sda", cur, prev, 200)  # 2.00 s
    assert row.r_s == 100.0 and row.w_s == 50.0
    assert row.rkb_s == 1000.0 and row.wkb_s == 500.0  # sectors / 2 per second
    assert row.rrqm_s == 10.0 and row.wrqm_s == 10.0
    nr_ios = 200 + 100 + 50  # reads + writes + discards; flushes do not count
    assert row.avgrq_sz == (4000 + 2000 + 2000) / nr_ios  # sectors
    assert row.await_ms == (1000 + 1000 + 500) / nr_ios
    assert row.r_await_ms == 5.0 and row.w_await_ms == 10.0
    assert row.avgqu_sz == 1.0  # 2000 ms of queue time in 2 s
    assert row.util_pct == 25.0  # 500 ms busy in 2 s
    assert row.svctm_ms == 500 / nr_ios
    assert list(row.as_dict()) == ["device", *COLUMNS]


def test_idle_interval_is_all_zero() -> None:
    c = counters(rd_ios=5, rd_sectors=40, rd_ticks=3, tot_ticks=3)
    assert compute_row("sda", c, c, 100).values() == (0.0,) * len(COLUMNS)


def test_32_bit_tick_counters_wrap() -> None:
    prev = counters(rd_ios=10, rd_ticks=WRAP - 10, tot_ticks=WRAP - 100, rq_ticks=WRAP - 1)
    cur = counters(rd_ios=20, rd_ticks=20, tot_ticks=400, rq_ticks=999)
    row = compute_row("sda", cur, prev, 100)
    assert row.r_await_ms == 3.0  # 30 ms over 10 reads
    assert row.util_pct == 50.0  # 500 ms busy in 1 s
    assert row.avgqu_sz == 1.0


def test_util_is_not_capped_like_sysstat_12_6() -> None:
    """io_ticks can run ahead of /proc/uptime; sysstat 12.6 prints e.g. 116.47 (checked
    against the binary in test_iostat_vs_sysstat)."""
    row = compute_row("sda", counters(rd_ios=1, tot_ticks=1200), counters(), 100)
    assert row.util_pct == 120.0


def test_32_bit_kernel_sector_counter_wrap_is_a_small_step() -> None:
    prev = counters(rd_ios=10, rd_sectors=WRAP - 8)
    cur = counters(rd_ios=11, rd_sectors=8)
    row = compute_row("sda", cur, prev, 100)
    assert row.rkb_s == 8.0


# -- samples over time: interval, hot-plug, re-registration ----------------------------------


def test_first_report_since_boot_then_intervals_from_uptime(tmp_path: Path) -> None:
    a = write_root(tmp_path / "a", 100_000, [counters(rd_ios=1000)])
    b = write_root(tmp_path / "b", 100_250, [counters(rd_ios=1500)])
    c = write_root(tmp_path / "c", 100_250, [counters(rd_ios=1501)])
    sampler = IostatSampler([a, b, c])
    first, second, third = sampler.sample(), sampler.sample(), sampler.sample()
    assert first.since_boot and first.interval_s == 1000.0 and first.rows[0].r_s == 1.0
    assert not second.since_boot and second.interval_s == 2.5 and second.rows[0].r_s == 200.0
    assert third.interval_s == 0.01 and third.rows[0].r_s == 100.0  # same uptime: 1 cs


def test_without_uptime_no_since_boot_figures_then_wall_clock_intervals(tmp_path: Path) -> None:
    root = write_root(tmp_path, 1000, [counters(rd_ios=100)])
    (root / "proc/uptime").unlink()
    sampler = IostatSampler([root])
    first = sampler.sample()
    assert first.rows == [] and any("proc/uptime: cannot read" in e for e in first.errors)
    write_root(root, 1000, [counters(rd_ios=150)])
    (root / "proc/uptime").unlink()
    second = sampler.sample()
    assert 0 < second.interval_s < 5 and second.rows[0].r_s > 0


def test_hotplug_new_vanished_and_returning_devices(tmp_path: Path) -> None:
    sda = counters(rd_ios=100)
    sdb = counters("sdb", 8, 16, rd_ios=50)
    sdc = counters("sdc", 8, 32, rd_ios=40)
    r1 = write_root(tmp_path / "1", 1000, [sda, sdb])
    r2 = write_root(tmp_path / "2", 1100, [sda._replace(rd_ios=200), sdc])  # sdb gone, sdc new
    r3 = write_root(tmp_path / "3", 1200, [sda._replace(rd_ios=300), sdb._replace(rd_ios=70), sdc])
    sampler = IostatSampler([r1, r2, r3])
    sampler.sample()
    second = {r.device: r for r in sampler.sample().rows}
    assert sorted(second) == ["sda", "sdc"]
    assert second["sdc"].r_s == 40.0  # new device: all its I/O happened in this interval
    third = {r.device: r for r in sampler.sample().rows}
    # sysstat keeps two sample slots per device, used alternately; sdb's "previous" slot was
    # never filled (it was away for that sample): it counts from zero, as in sysstat
    assert third["sdb"].r_s == 70.0
    assert third["sdc"].r_s == 0.0


def test_reregistered_device_counts_from_zero(tmp_path: Path) -> None:
    """sysstat's test: fewer I/Os and every non-zero sector counter lower."""
    before = counters(rd_ios=5000, rd_sectors=80000, wr_ios=100, wr_sectors=900, rd_ticks=7000)
    after = counters(rd_ios=30, rd_sectors=240, wr_ios=0, wr_sectors=0, rd_ticks=60)
    r1 = write_root(tmp_path / "1", 1000, [before])
    r2 = write_root(tmp_path / "2", 1200, [after])
    sampler = IostatSampler([r1, r2])
    sampler.sample()
    row = sampler.sample().rows[0]
    assert row.r_s == 15.0 and row.rkb_s == 60.0 and row.r_await_ms == 2.0


def test_other_counter_decreases_are_never_absurd(tmp_path: Path) -> None:
    """rd_ios lower but sectors higher: sysstat prints ~9.2e18 r/s here; we treat the device
    as re-registered."""
    r1 = write_root(tmp_path / "1", 1000, [counters(rd_ios=5000, rd_sectors=100)])
    r2 = write_root(tmp_path / "2", 1100, [counters(rd_ios=10, rd_sectors=200)])
    sampler = IostatSampler([r1, r2])
    sampler.sample()
    row = sampler.sample().rows[0]
    assert row.r_s == 10.0 and row.rkb_s == 100.0


# -- which devices ---------------------------------------------------------------------------


def test_device_selection_like_sysstat(tmp_path: Path) -> None:
    devices = [
        counters("sdb", 8, 16, rd_ios=5),
        counters("sdb1", 8, 17, rd_ios=5),
        counters("sda", 8, 0, rd_ios=9),
        counters("sda1", 8, 1, rd_ios=3),
        counters("sdc", 8, 32),
        counters("dm-0", 253, 0, wr_ios=4),
    ]
    root = write_root(tmp_path, 500, devices, whole=["sda", "sdb", "sdc", "dm-0"])
    (root / "sys/block/sda/sda1").mkdir()
    (root / "sys/block/sda/sda1/stat").write_text("0\n")

    def names(**options: object) -> list[str]:
        return [r.device for r in IostatSampler([root], **options).sample().rows]

    assert names() == ["dm-0", "sda", "sdb"]  # whole, used, alphabetical
    assert names(devices=["sdc", "sdb1"]) == ["sdb1", "sdc"]  # named: idle shown too
    assert names(devices=["ALL"]) == ["dm-0", "sda", "sdb", "sdc"]
    assert names(partitions=True) == ["sdb", "sdb1", "sda", "sda1", "sdc", "dm-0"]  # file order
    assert names(partitions_of=["sda"]) == ["sda", "sda1"]
    assert names(devices=["/dev/sdb"]) == ["sdb"]
    rows = IostatSampler([root], partitions=True).sample().rows
    assert [r.device for r in rows if r.is_partition] == ["sdb1", "sda1"]


def test_skip_idle_hides_devices_without_io_in_the_interval(tmp_path: Path) -> None:
    r1 = write_root(tmp_path / "1", 500, [counters(rd_ios=1), counters("sdb", 8, 16, rd_ios=1)])
    r2 = write_root(tmp_path / "2", 600, [counters(rd_ios=2), counters("sdb", 8, 16, rd_ios=1)])
    sampler = IostatSampler([r1, r2], skip_idle=True)
    assert [r.device for r in sampler.sample().rows] == ["sda", "sdb"]
    assert [r.device for r in sampler.sample().rows] == ["sda"]


def test_old_partition_lines_are_skipped_in_extended_mode(tmp_path: Path) -> None:
    root = write_root(tmp_path, 500, [counters(rd_ios=3)], whole=["sda"])
    with open(root / "proc/diskstats", "a") as f:
        f.write("   8       1 sda1 71 142 3 24\n")
    rows = IostatSampler([root], partitions=True).sample().rows
    assert [r.device for r in rows] == ["sda"]


def test_dm_names(tmp_path: Path) -> None:
    root = write_root(tmp_path, 500, [counters("dm-3", 253, 3, rd_ios=10), counters(rd_ios=1)])
    (root / "dev/mapper").mkdir(parents=True)
    os.symlink("../dm-3", root / "dev/mapper/test1")
    assert [r.device for r in IostatSampler([root], dm_names=True).sample().rows] == ["test1", "sda"]
    rows = IostatSampler([root], dm_names=True, devices=["test1"]).sample().rows
    assert [(r.device, r.kernel_name) for r in rows] == [("test1", "dm-3")]
    assert [r.device for r in IostatSampler([root]).sample().rows] == ["dm-3", "sda"]


def test_dm_name_of_sysstat_fixture_like_expected_iostat_n(tmp_path: Path) -> None:
    """sysstat's expected.iostat-N shows dm-2 of root1 as 'virtualhd'."""
    root = tmp_path / "root1"
    shutil.copytree(FIXTURES / "root1", root)
    os.chmod(root / "sys/block/dm-2", 0o755)
    (root / "sys/block/dm-2/dm").mkdir()
    (root / "sys/block/dm-2/dm/name").write_text("virtualhd\n")
    expected = [l.split()[0] for l in (FIXTURES / "expected.iostat-N").read_text().splitlines()[3:] if l.strip()]
    rows = IostatSampler([root], partitions=True, dm_names=True).sample().rows
    assert [r.device for r in rows] == expected


def test_replay_rereads_the_last_root_and_queue_facts(tmp_path: Path) -> None:
    root = write_root(tmp_path / "live", 1000, [counters(rd_ios=100)])
    (root / "sys/block/sda/queue").mkdir()
    (root / "sys/block/sda/queue/nr_requests").write_text("64\n")
    sampler = IostatSampler([root])
    assert sampler.sample().rows[0].r_s == 10.0
    write_root(root, 1100, [counters(rd_ios=150)])  # something else updates the root
    (root / "sys/block/sda/queue").mkdir()
    (root / "sys/block/sda/queue/nr_requests").write_text("64\n")
    report = sampler.sample()
    assert report.rows[0].r_s == 50.0
    assert sampler.queue_facts(report.rows[0].kernel_name) == QueueFacts(None, 64, None, None)


def test_idle_rows_are_reused(tmp_path: Path) -> None:
    root = write_root(tmp_path, 1000, [counters(rd_ios=100)])
    sampler = IostatSampler([root])
    sampler.sample()
    assert sampler.sample().rows[0] is sampler.sample().rows[0]


# -- property: never negative, never absurd ------------------------------------------------

big = st.integers(min_value=0, max_value=(1 << 64) - 1)
ticks = st.integers(min_value=0, max_value=WRAP - 1)


@st.composite
def device_counters(draw: st.DrawFn) -> DeviceCounters:
    values = (
        [draw(big) for _ in range(3)]
        + [draw(ticks)]
        + [draw(big) for _ in range(3)]
        + [
            draw(ticks),
            draw(st.integers(0, 1000)),
            draw(ticks),
            draw(ticks),
            draw(big),
            draw(big),
            draw(big),
            draw(ticks),
            draw(big),
            draw(ticks),
        ]
    )
    return DeviceCounters(8, 0, "sda", *values)


@settings(max_examples=150, deadline=None)
@given(device_counters(), device_counters(), st.integers(min_value=1, max_value=10_000))
def test_no_counter_pair_gives_negative_or_absurd_figures(
    tmp_path_factory: pytest.TempPathFactory, before: DeviceCounters, after: DeviceCounters, step_cs: int
) -> None:
    tmp = tmp_path_factory.mktemp("prop")
    r1 = write_root(tmp / "1", 10_000, [before])
    r2 = write_root(tmp / "2", 10_000 + step_cs, [after])
    sampler = IostatSampler([r1, r2], devices=["sda"])
    sampler.sample()
    row = sampler.sample().rows[0]
    itv_s = step_cs / 100
    for value in row.values():
        assert math.isfinite(value) and value >= 0
    # A rate never exceeds what the current counter alone (a device counting from zero)
    # or a 32-bit wrap could explain.
    assert row.r_s * itv_s <= max(after.rd_ios, WRAP) * 1.0000001
    assert row.rkb_s * 2 * itv_s <= max(after.rd_sectors, WRAP) * 1.0000001
    assert row.util_pct <= WRAP / itv_s / 10


@pytest.mark.parametrize(
    "options",
    [
        {"partitions": True},
        {},
        {"skip_idle": True},
        {"partitions": True, "skip_idle": True},
        {"partitions_of": ["sdaa", "sdad"]},
    ],
    ids=["p-ALL", "default", "z", "p-ALL-z", "p-list"],
)
def test_incremental_sampling_of_one_updated_root_equals_full_recomputation(tmp_path: Path, options: dict) -> None:
    """A root kept updated in place (live /proc, or `--root DIR` fed by something else) is
    sampled incrementally (only changed lines are parsed and recomputed); replaying the same
    data as separate roots recomputes everything. Both must give the same reports, through
    idle spells, hot-plug, re-registration and wraps (the random data of the binary test)."""
    import random

    from tests.helpers.iostat_binary import random_samples, write_roots

    samples = random_samples(7, 12, 30, with_partitions=True)
    samples += random_samples(8, 8, 30, with_partitions=True)[1:]  # (uptime may go back)
    # Whole-host idle spells of random length on top of the generator's per-device ones.
    rng = random.Random(3)
    for k in range(2, len(samples)):
        if rng.random() < 0.35:
            samples[k].devices = list(samples[k - 1].devices)
    full = IostatSampler(write_roots(samples, tmp_path / "replay"), **options)
    live_root = tmp_path / "live"
    incremental = IostatSampler([live_root], **options)
    reused = 0
    for sample in samples:
        sample.write_root(live_root)
        expected = full.sample()
        got = incremental.sample()
        assert [r.as_dict() for r in got.rows] == [r.as_dict() for r in expected.rows]
        assert [r.values() for r in got.rows] == [r.values() for r in expected.rows]
        snapshot = incremental._last_snapshot
        assert snapshot is not None
        if snapshot.changed is not None:
            reused += len(snapshot.devices) - len(snapshot.changed)
    assert reused > 100
