"""Reading /proc/diskstats, /proc/uptime and sysfs under a root directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from racperf_tui.core.disks.diskstats import (
    DeviceCounters,
    QueueFacts,
    block_devices,
    classify_partitions,
    dm_names,
    parse_diskstats,
    parse_uptime_cs,
    partitions_of,
    read_queue_facts,
    read_snapshot,
    snapshot_from_text,
)
from tests.helpers import TESTS_DIR

FIXTURES = TESTS_DIR / "fixtures" / "sysstat"

LINE_14 = "   8       0 sda 49601 2822 3195498 623970 12180 9784 821088 117109 0 32862 714408"
LINE_18 = "  65      32 sds 386 416 8554 100 727 820 8746 3902 0 762 7902 1 2 3 4"
LINE_20 = "  65       0 sdq 49401 2722 3195008 622070 0 0 0 0 3 32562 714008 8638 547 362610 123000 77 88"
LINE_7 = "   3       1 hda1 71 142 3 24"


def make_root(tmp_path: Path, diskstats: str, uptime: str = "100.25 50.00\n") -> Path:
    (tmp_path / "proc").mkdir(parents=True, exist_ok=True)
    (tmp_path / "proc/diskstats").write_text(diskstats)
    (tmp_path / "proc/uptime").write_text(uptime)
    return tmp_path


def test_14_18_20_and_old_7_field_lines(tmp_path: Path) -> None:
    root = make_root(tmp_path, "\n".join([LINE_14, LINE_18, LINE_20, LINE_7]) + "\n")
    snap = read_snapshot(root)
    assert snap.errors == []
    assert snap.uptime_cs == 10025 and snap.uptime_s == pytest.approx(100.25)
    sda, sds, sdq, hda1 = (snap.devices[n] for n in ("sda", "sds", "sdq", "hda1"))
    assert (sda.major, sda.minor, sda.rd_ios, sda.rq_ticks, sda.dc_ios, sda.fl_ios) == (8, 0, 49601, 714408, 0, 0)
    assert sda.stat_fields == 11
    assert (sds.dc_ios, sds.dc_merges, sds.dc_sectors, sds.dc_ticks, sds.fl_ios) == (1, 2, 3, 4, 0)
    assert sds.stat_fields == 15
    assert (sdq.ios_pgr, sdq.dc_sectors, sdq.fl_ios, sdq.fl_ticks) == (3, 362610, 77, 88)
    assert sdq.stat_fields == 17
    assert (hda1.rd_ios, hda1.rd_sectors, hda1.wr_ios, hda1.wr_sectors, hda1.stat_fields) == (71, 142, 3, 24, 4)
    assert list(snap.devices) == ["sda", "sds", "sdq", "hda1"]  # the file's order


def test_fields_beyond_20_are_ignored_like_sysstat(tmp_path: Path) -> None:
    snap = read_snapshot(make_root(tmp_path, LINE_20 + " 5 6 7\n"))
    assert snap.errors == []
    assert snap.devices["sdq"].fl_ticks == 88


def test_malformed_lines_are_reported_with_file_and_line_and_others_kept(tmp_path: Path) -> None:
    text = "\n".join([LINE_14, "garbage here", LINE_18.replace("727", "7x7"), "", LINE_20]) + "\n"
    root = make_root(tmp_path, text)
    snap = read_snapshot(root)
    assert sorted(snap.devices) == ["sda", "sdq"]
    path = os.path.join(root, "proc/diskstats")
    assert len(snap.errors) == 2
    assert snap.errors[0].startswith(f"{path}:2: ")
    assert "garbage here" in snap.errors[0]
    assert snap.errors[1].startswith(f"{path}:3: not a number")


def test_duplicate_device_lines_keep_the_first(tmp_path: Path) -> None:
    snap = read_snapshot(make_root(tmp_path, LINE_14 + "\n" + LINE_14.replace("49601", "1") + "\n"))
    assert snap.devices["sda"].rd_ios == 49601
    assert snap.errors and ":2: device 'sda' listed twice" in snap.errors[0]


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    snap = read_snapshot(tmp_path)
    assert snap.devices == {}
    assert any(e.startswith(os.path.join(tmp_path, "proc/diskstats") + ": cannot read") for e in snap.errors)
    assert any(e.startswith(os.path.join(tmp_path, "proc/uptime") + ": cannot read") for e in snap.errors)
    bad_uptime = read_snapshot(make_root(tmp_path, LINE_14 + "\n", uptime="soon\n"))
    assert bad_uptime.devices["sda"].rd_ios == 49601
    assert bad_uptime.errors == [f"{os.path.join(tmp_path, 'proc/uptime')}:1: not an uptime: 'soon'"]


def test_uptime_in_centiseconds_as_sysstat_reads_it() -> None:
    assert parse_uptime_cs("7192.55 29212.05\n") == 719255
    assert parse_uptime_cs("12 3") == 1200
    with pytest.raises(ValueError):
        parse_uptime_cs("-1.00 2")


def test_unchanged_lines_reuse_the_previous_counters(tmp_path: Path) -> None:
    first_text = LINE_14 + "\n" + LINE_18 + "\n"
    first, lines, _ = parse_diskstats(first_text)
    snap = read_snapshot(make_root(tmp_path, first_text))
    changed = LINE_14 + "\n" + LINE_18.replace("727", "728") + "\n"
    (tmp_path / "proc/diskstats").write_text(changed)
    again = read_snapshot(tmp_path, previous=snap)
    assert again.devices["sda"] is snap.devices["sda"]
    assert again.devices["sds"] is not snap.devices["sds"]
    assert again.devices["sds"].wr_ios == 728
    assert first["sds"] == snap.devices["sds"]
    assert isinstance(lines[LINE_14], DeviceCounters)


def test_live_proc_is_readable() -> None:
    snap = read_snapshot(Path("/"))
    assert snap.uptime_s > 0
    assert not [e for e in snap.errors if "diskstats" in e]


# -- sysfs ----------------------------------------------------------------------------------


def test_whole_devices_and_partitions_from_sysstat_fixture_lists() -> None:
    root = FIXTURES / "root1"
    assert block_devices(root) == {
        "dm-2",
        "sda",
        "sdb",
        "sdc",
        "sdd",
        "sde",
        "sdq",
        "sdr",
        "sds",
        "sr0",
    }  # read from sys/block/_list
    parts = classify_partitions(["sda", "sda1", "sda12", "sdq", "dm-2"], root)
    assert parts == {"sda": False, "sda1": True, "sda12": True, "sdq": False, "dm-2": False}
    assert sorted(partitions_of("sda", root)) == sorted(f"sda{i}" for i in range(1, 13))
    assert partitions_of("sdc", root) == []  # sys/block/sdc/device has no stat file


def test_cciss_slash_is_bang_in_sysfs() -> None:
    root = FIXTURES / "root6"
    parts = classify_partitions(["cciss/c0d0", "cciss/c0d0p1", "xvdq"], root)
    assert parts == {"cciss/c0d0": False, "cciss/c0d0p1": True, "xvdq": False}
    assert partitions_of("cciss/c0d0", root) == ["cciss/c0d0p1", "cciss/c0d0p2"]


def test_partitions_guessed_by_name_without_sysfs(tmp_path: Path) -> None:
    names = ["sda", "sda1", "nvme0n1", "nvme0n1p2", "dm-0", "md127", "loop3", "mmcblk0", "mmcblk0p1", "sdb9"]
    parts = classify_partitions(names, tmp_path)
    assert [n for n in names if parts[n]] == ["sda1", "nvme0n1p2", "mmcblk0p1"]


def make_queue(base: Path, depth: str | None, nr: str, sched: str, rot: str) -> None:
    (base / "queue").mkdir(parents=True)
    (base / "queue/nr_requests").write_text(nr + "\n")
    (base / "queue/scheduler").write_text(sched + "\n")
    (base / "queue/rotational").write_text(rot + "\n")
    if depth is not None:
        (base / "device").mkdir()
        (base / "device/queue_depth").write_text(depth + "\n")


def test_queue_facts(tmp_path: Path) -> None:
    block = tmp_path / "sys/block"
    make_queue(block / "sda", "32", "64", "[mq-deadline] kyber bfq none", "1")
    (block / "sda/sda1").mkdir()
    make_queue(block / "nvme0n1", None, "1023", "[none] mq-deadline", "0")
    make_queue(block / "cciss!c0d0", "16", "128", "noop", "1")
    assert read_queue_facts("sda", tmp_path) == QueueFacts(32, 64, "mq-deadline", True)
    assert read_queue_facts("sda1", tmp_path) == QueueFacts(32, 64, "mq-deadline", True)
    assert read_queue_facts("nvme0n1", tmp_path) == QueueFacts(None, 1023, "none", False)
    assert read_queue_facts("cciss/c0d0", tmp_path) == QueueFacts(16, 128, "noop", True)
    assert read_queue_facts("sdz", tmp_path) == QueueFacts(None, None, None, None)


def test_queue_facts_of_a_live_device() -> None:
    block = Path("/sys/block")
    names = [n for n in os.listdir(block) if (block / n / "queue/nr_requests").exists()] if block.is_dir() else []
    if not names:
        pytest.skip("no block device with a queue in this machine's sysfs")
    facts = read_queue_facts(names[0])
    assert facts.nr_requests is not None and facts.nr_requests > 0
    assert facts.rotational in (True, False)


def test_dm_names_from_sysfs_and_dev_mapper(tmp_path: Path) -> None:
    (tmp_path / "sys/block/dm-0/dm").mkdir(parents=True)
    (tmp_path / "sys/block/dm-0/dm/name").write_text("vg-root\n")
    (tmp_path / "sys/block/dm-3").mkdir(parents=True)
    (tmp_path / "dev/mapper").mkdir(parents=True)
    os.symlink("../dm-3", tmp_path / "dev/mapper/test1")
    os.symlink("../dm-0", tmp_path / "dev/mapper/other-name-for-0")
    assert dm_names(tmp_path) == {"dm-0": "vg-root", "dm-3": "test1"}


def test_a_companions_answer_after_a_hosts_note_is_read() -> None:
    """On an SSH node the write watch says "racperf-TOKEN net watch; jail" before the command's
    own output (ORION's diskstats companion there gave no live figures for it)."""
    body = (
        "29537.23 16488.25\n"
        + "   7       0 loop0 23458780 9 1145102824 3465658 2313429 1368232 57183390 674977 0 672388 4144450\n"
    )
    plain = snapshot_from_text(body, 0.0)
    noted = snapshot_from_text("racperf-9ca9a515bd44 net watch; jail\n" + body, 0.0)
    assert noted.uptime_cs == plain.uptime_cs == 2953723
    assert noted.errors == plain.errors == []
    assert noted.devices["loop0"] == plain.devices["loop0"]
    bad = snapshot_from_text("racperf-x note\nnot an uptime\n", 0.0)
    assert bad.uptime_cs == 0 and bad.errors[0].startswith("output:2: not an uptime")
