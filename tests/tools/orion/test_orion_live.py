"""ORION's live inference (tools/orion/live.py): the LUNs' devices through device-mapper,
multipath and partitions (a recorded sysfs tree and a real loop device), the load of each
data point from diskstats deltas, the outstanding I/O by Little's law against the plan, and the
stream parser that feeds the model the answers of the run's diskstats companion and records it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.disks.diskstats import DeviceCounters, DiskSnapshot, read_snapshot
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost
from racperf_tui.orchestration.companions import CompanionRunner
from racperf_tui.tools import orion
from racperf_tui.tools.orion import live as orion_live
from racperf_tui.tools.orion.live import LunDevices
from racperf_tui.tools.orion.stream import DISKSTATS_COMPANION, live_model
from tests.helpers.loopdev import loop_device, needs_loop
from tests.helpers.sshd_helpers import Sshd


def _sysfs_tree(root: Path) -> None:
    """/dev/mapper/data1 -> dm-3, a multipath device over sdb and the partition sdc1; sdb1."""
    block = root / "sys" / "block"
    for name in ("dm-3", "sdb", "sdc"):
        (block / name).mkdir(parents=True)
        (block / name / "stat").write_text("0 " * 17)
    for disk, part in (("sdb", "sdb1"), ("sdc", "sdc1")):
        (block / disk / part).mkdir()
        (block / disk / part / "partition").write_text("1\n")
    (block / "dm-3" / "slaves").mkdir()
    (block / "dm-3" / "slaves" / "sdb").symlink_to("../../sdb")
    (block / "dm-3" / "slaves" / "sdc1").symlink_to("../../sdc/sdc1")
    (block / "dm-3" / "dm").mkdir()
    (block / "dm-3" / "dm" / "name").write_text("data1\n")
    classes = root / "sys" / "class" / "block"
    classes.mkdir(parents=True)
    for name, target in (("dm-3", "dm-3"), ("sdb", "sdb"), ("sdc", "sdc"), ("sdb1", "sdb/sdb1"), ("sdc1", "sdc/sdc1")):
        (classes / name).symlink_to(f"../../block/{target}")
    (root / "dev" / "mapper").mkdir(parents=True)
    (root / "dev" / "mapper" / "data1").symlink_to("../dm-3")
    (root / "dev" / "disk" / "by-id").mkdir(parents=True)
    (root / "dev" / "disk" / "by-id" / "wwn-1-part1").symlink_to("../../sdb1")


def test_a_multipath_lun_resolves_to_its_dm_device_and_the_paths_below(tmp_path: Path) -> None:
    _sysfs_tree(tmp_path)
    found = orion_live.lun_devices("/dev/mapper/data1", tmp_path)
    # the dm device counts ORION's I/O once; sdb and sdc1 (and sdc, its disk) see it again
    assert found == LunDevices("/dev/mapper/data1", "dm-3", ("sdb", "sdc1", "sdc"))
    assert orion_live.lun_devices("/dev/dm-3", tmp_path).device == "dm-3"


def test_a_partition_lun_adds_its_disk(tmp_path: Path) -> None:
    _sysfs_tree(tmp_path)
    assert orion_live.lun_devices("/dev/sdb1", tmp_path) == LunDevices("/dev/sdb1", "sdb1", ("sdb",))
    assert orion_live.lun_devices("/dev/disk/by-id/wwn-1-part1", tmp_path).all == ("sdb1", "sdb")


def test_a_missing_lun_says_why(tmp_path: Path) -> None:
    _sysfs_tree(tmp_path)
    found = orion_live.lun_devices("/dev/mapper/nope", tmp_path)
    assert found.device is None and found.problem.startswith("/dev/mapper/nope: ") and found.all == ()


@needs_loop
def test_a_real_loop_device_and_a_file_lun(tmp_path: Path) -> None:
    with loop_device(tmp_path / "a.img", 16) as loop:
        assert orion_live.lun_devices(loop.path) == LunDevices(loop.path, loop.name, ())
    file_lun = tmp_path / "lun.img"
    file_lun.write_bytes(b"\0" * 4096)
    # a file LUN: the device of the file system holding it (its I/O is counted there)
    found = orion_live.lun_devices(str(file_lun))
    st = os.stat(file_lun)
    link = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
    if link.exists():
        assert found.device == link.resolve().name
    else:  # overlay and tmpfs have no block device
        assert found.device is None and "no sysfs entry" in found.problem


# --------------------------------------------------------------------------- the model


def _counters(name: str, ios: int, kib_each: int, ticks_ms: int, rq_ticks_ms: int | None = None) -> DeviceCounters:
    return DeviceCounters(
        253, 3, name, ios, 0, ios * kib_each * 2, ticks_ms, 0, 0, 0, 0, 0, 0,
        ticks_ms if rq_ticks_ms is None else rq_ticks_ms,
    )  # fmt: skip


def _snapshot(at_s: float, **devices: DeviceCounters) -> DiskSnapshot:
    return DiskSnapshot(at_s, at_s, dict(devices), uptime_cs=int(round(at_s * 100)))


def test_little_s_law_gives_the_outstanding_small_ios_of_the_planned_point() -> None:
    # basic matrix on 2 disks: (0,0), (1,0) ... (10,0), then (0,1) ... (0,4): 15 points
    config = {"run": "advanced", "lun": ["/dev/mapper/data1"], "num_disks": 2}
    model = live_model(config, [LunDevices("/dev/mapper/data1", "dm-3", ("sdb",))])
    assert len(model.points) == 15 and model.loads_of(11) == (10, 0)
    model.observe(_snapshot(100.0, **{"dm-3": _counters("dm-3", 0, 8, 0), "sdb": _counters("sdb", 0, 8, 0)}), 11)
    assert model.headline() == "waiting for ORION's first data point"  # no interval yet
    # 2000 8 KiB reads in 2 s, 10 ms each: 1000 IOPS x 10 ms = 10 in flight
    model.observe(
        _snapshot(102.0, **{"dm-3": _counters("dm-3", 2000, 8, 20000), "sdb": _counters("sdb", 2000, 8, 20000)}), 11
    )
    current = model.current
    assert current is not None
    assert current.iops == pytest.approx(1000) and current.await_ms == pytest.approx(10)
    assert current.requests_in_flight == pytest.approx(10) and current.avgqu_sz == pytest.approx(10)
    assert current.mbps == pytest.approx(1000 * 8 / 1024)
    # sdb is shown, not added (it sees the same I/O)
    assert set(model.rows) == {"dm-3", "sdb"} and model.devices == ["dm-3"]
    outstanding = model.outstanding()
    assert outstanding is not None and outstanding.small == pytest.approx(10) and outstanding.agrees
    assert model.headline() == "data point 11 of 15 (small 10, large 0), about 10 small I/Os outstanding (planned 10)"


def test_large_ios_split_by_the_block_layer_count_as_orion_s_ios() -> None:
    config = {"run": "advanced", "lun": ["/dev/loop4"], "num_disks": 1}
    model = live_model(config, [LunDevices("/dev/loop4", "loop4")])
    assert len(model.points) == 8 and model.loads_of(8) == (0, 2)
    model.observe(_snapshot(10.0, loop4=_counters("loop4", 0, 512, 0)), 8)
    # 2 large I/Os of 1 MiB outstanding = 4 requests of 512 KiB in flight: 400 req/s x 10 ms
    model.observe(_snapshot(11.0, loop4=_counters("loop4", 400, 512, 4000)), 8)
    found = model.outstanding()
    assert found is not None and found.large == pytest.approx(2) and found.small is None and found.agrees
    assert model.headline().endswith("about 2.0 large I/Os outstanding (planned 2)")


def test_load_beyond_the_plan_is_foreign_and_kept_per_point() -> None:
    """Point 4 (small 3) plans 3 x 8 KiB in flight; the LUN carries 50 x 8 KiB: 47 beyond the
    plan, 94 % of its 10,000 IOPS. Named each second, kept per point once seen 2 s."""
    config = {"run": "advanced", "lun": ["/dev/sdb"], "num_disks": 2, "duration": 10}
    model = live_model(config, [LunDevices("/dev/sdb", "sdb")])
    ios = ticks = 0
    model.observe(_snapshot(0.0, sdb=_counters("sdb", ios, 8, ticks)), 4)
    for at in (1.0, 2.0, 3.0):
        ios, ticks = ios + 10000, ticks + 50000  # 10,000 IOPS x 5 ms = 50 in flight
        model.observe(_snapshot(at, sdb=_counters("sdb", ios, 8, ticks)), 4)
    assert model.point == 4 and model.foreign is not None
    assert (
        model.foreign.text()
        == "the LUN carried I/O ORION did not issue: about 9,400 IOPS / 47 outstanding beyond the plan"
    )
    assert model.foreign_warnings() == [
        "data point 4 (small 3, large 0): the LUN carried I/O ORION did not issue: about 9,400 IOPS / "
        "47 outstanding beyond the plan for 3 s; its figures are depressed by it"
    ]
    # what ORION plans (3 in flight, and up to twice as many) is no foreign load
    model = live_model(config, [LunDevices("/dev/sdb", "sdb")])
    ios = ticks = 0
    model.observe(_snapshot(0.0, sdb=_counters("sdb", ios, 8, ticks)), 4)
    for at in (1.0, 2.0, 3.0):
        ios, ticks = ios + 1000, ticks + 6000  # 6 in flight
        model.observe(_snapshot(at, sdb=_counters("sdb", ios, 8, ticks)), 4)
    assert model.foreign is None and model.foreign_warnings() == []


def test_a_stopped_run_keeps_its_partial_point_without_the_idle_tail() -> None:
    config = {"run": "advanced", "lun": ["/dev/sdb"], "num_disks": 1, "duration": 10, "matrix": "row", "num_large": 0}
    model = live_model(config, [LunDevices("/dev/sdb", "sdb")])
    ios = ticks = 0
    model.observe(_snapshot(0.0, sdb=_counters("sdb", ios, 8, ticks)), 1)
    for at in range(1, 5):  # 4 s of point 2 (small 1), then ORION is stopped: 3 idle seconds
        ios, ticks = ios + 1000, ticks + 1000
        model.observe(_snapshot(float(at), sdb=_counters("sdb", ios, 8, ticks)), 2)
    for at in range(5, 8):
        model.observe(_snapshot(float(at), sdb=_counters("sdb", ios, 8, ticks)), 2)
    model.finish(stopped=True)
    (point,) = model.completed
    assert (point.number, point.small, point.partial) == (2, 1, True)
    assert point.figures.seconds == 4.0 and point.figures.iops == pytest.approx(1000)
    assert model.headline() == (
        "ORION stopped: 1 of 6 data points measured in diskstats, the last (data point 2, small 1, large 0) "
        "partly: 4 s of 10"
    )
    record = orion_live.recorded(model)
    assert record["partial"] == [2] and orion_live.recorded_points(record)[0].partial


def test_each_point_s_figures_come_from_its_own_window() -> None:
    config = {"run": "advanced", "lun": ["/dev/sdb"], "num_disks": 1, "matrix": "row", "num_large": 0}
    config["duration"] = 3
    model = live_model(config, [LunDevices("/dev/sdb", "sdb")])
    assert model.points == [(s, 0) for s in range(6)]
    ios = ticks = 0
    at = 0.0
    model.observe(_snapshot(at, sdb=_counters("sdb", ios, 8, ticks)), 1)  # (0, 0): not charted
    for number in range(2, 7):
        small = number - 1
        for _ in range(3):  # 3 s per point: 500 * small IOPS, 2 ms each -> small in flight
            at += 1.0
            ios += 500 * small
            ticks += 500 * small * 2
            model.observe(_snapshot(at, sdb=_counters("sdb", ios, 8, ticks)), number)
    model.finish()
    assert [(p.number, p.small) for p in model.completed] == [(n, n - 1) for n in range(2, 7)]
    for point in model.completed:
        # each window is the intervals measured at its point
        assert point.figures.requests_in_flight == pytest.approx(point.small, rel=0.01)
        assert point.figures.await_ms == pytest.approx(2.0)
        assert point.figures.iops == pytest.approx(500 * point.small)


def test_after_its_last_point_orion_is_not_said_to_wait_for_its_first() -> None:
    """The LUN idle once the last point ended (ORION writes its results): the headline says
    what was measured, not "waiting for ORION's first data point" (as it did, issue 18)."""
    config = {"run": "advanced", "lun": ["/dev/sdb"], "num_disks": 1, "matrix": "row", "num_large": 0}
    config["duration"] = 3
    model = live_model(config, [LunDevices("/dev/sdb", "sdb")])
    ios = ticks = 0
    at = 0.0
    model.observe(_snapshot(at, sdb=_counters("sdb", ios, 8, ticks)), 1)
    for number in range(2, 7):
        for _ in range(3):
            at += 1.0
            ios += 500 * (number - 1)
            ticks += 500 * (number - 1) * 2
            model.observe(_snapshot(at, sdb=_counters("sdb", ios, 8, ticks)), number)
    for _ in range(4):  # idle: the last point is over
        at += 1.0
        model.observe(_snapshot(at, sdb=_counters("sdb", ios, 8, ticks)), 6)
    assert [p.number for p in model.completed] == [2, 3, 4, 5, 6] and not model.point
    assert model.headline() == "5 of 6 data points measured; no point running now"


def test_counters_missing_or_no_time_give_no_figures() -> None:
    a = _snapshot(5.0, sdb=_counters("sdb", 10, 8, 10))
    assert orion_live.window_figures(a, a, ["sdb"]) is None
    assert orion_live.window_figures(a, _snapshot(6.0), ["sdb"]) is None
    model = live_model({"lun": "/dev/x"}, [LunDevices("/dev/x", None, (), "gone")])
    model.observe(read_snapshot(), 1)
    assert model.devices == [] and model.current is None
    assert orion_live.luns_of({"lun": "/dev/x"}) == ["/dev/x"] and orion_live.luns_of({}) == []


# --------------------------------------------------------------------------- recorded by the run


def _diskstats_line(minor: int, name: str, ios: int, ticks_ms: int, busy_ms: int) -> str:
    """A 20-field /proc/diskstats line of 8 KiB reads (16 sectors each)."""
    return f"253 {minor} {name} {ios} 0 {ios * 16} {ticks_ms} 0 0 0 0 0 {busy_ms} {ticks_ms} 0 0 0 0 0 0"


def _answer(uptime_s: float, ios: int, ticks_ms: int) -> str:
    """What ``cat /proc/uptime /proc/diskstats`` prints: the dm device, its two paths
    sharing its I/O, and a disk of no LUN."""
    lines = [f"{uptime_s:.2f} 12345.67"]
    lines.append(_diskstats_line(3, "dm-3", ios, ticks_ms, ticks_ms // 2))
    lines.append(_diskstats_line(16, "sdb", ios // 2, ticks_ms // 2, ticks_ms // 4))
    lines.append(_diskstats_line(32, "sdc", ios // 2, ticks_ms // 2, ticks_ms // 4))
    lines.append(_diskstats_line(33, "sdc1", ios // 2, ticks_ms // 2, ticks_ms // 4))
    lines.append(_diskstats_line(48, "sdd", 999, 999, 999))
    return "\n".join(lines) + "\n"


def test_the_stream_parser_infers_and_records_each_point_from_the_companion_s_diskstats(tmp_path: Path) -> None:
    """The diskstats companion's answers, recorded texts, at a fake clock: the row matrix of
    one disk, 10 s a point (point 3 is small 2 from 20 s, point 4 small 3 from 30 s)."""
    _sysfs_tree(tmp_path)
    config = {"run": "advanced", "lun": ["/dev/mapper/data1"], "num_disks": 1, "matrix": "row", "num_large": 0}
    config["duration"] = 10
    now = [0.0]
    parser = orion.OrionStreamParser(config, clock=lambda: now[0], root=tmp_path)
    companion = DISKSTATS_COMPANION
    assert companion.argv == ["cat", "/proc/uptime", "/proc/diskstats"] and companion.interval_s == 1.0
    assert parser.feed("Calibration will take approximately 2 minutes.")
    records = []
    # (clock s, uptime s, dm-3's reads, their ticks): 1000 IOPS at 2 ms while point 3 runs
    # (2 in flight), then 1500 IOPS at 2 ms in point 4 (3 in flight)
    for at, uptime, ios, ticks in ((21.0, 1000.0, 0, 0), (25.0, 1004.0, 4000, 8000), (29.0, 1008.0, 8000, 16000)):
        now[0] = at
        (sample,) = parser.companion_output("diskstats", _answer(uptime, ios, ticks), 0)
        assert sample.extra["data_point"] == 3 and sample.extra["phase"] == "running"
        records.append(sample.extra["orion_live"])
    # no interval yet, then the first I/O after the estimate opens the clock's point
    assert records[0]["headline"] == "waiting for ORION's first data point"
    assert (
        records[1]["headline"] == "data point 3 of 6 (small 2, large 0), about 2.0 small I/Os outstanding (planned 2)"
    )
    outstanding = records[1]["outstanding"]
    assert outstanding["small"] == pytest.approx(2.0) and outstanding["kib"] == pytest.approx(16.0)
    assert outstanding["agrees"] and records[1]["foreign"] is None
    rows = {row["shown"]: row for row in records[1]["rows"]}
    assert list(rows) == ["dm-3 (data1)", "  sdb", "  sdc1", "  sdc"]  # sdd is no LUN's
    assert rows["dm-3 (data1)"]["r_s"] == pytest.approx(1000.0) and rows["dm-3 (data1)"]["await_ms"] == 2.0
    assert rows["  sdb"]["r_s"] == pytest.approx(500.0) and rows["dm-3 (data1)"]["lun"] == "/dev/mapper/data1"
    assert records[1]["points"] == []  # no point done yet
    # 1500 IOPS from 1008 s: 3 in flight against 2 is no visible change (under 1.5x), so
    # point 3 ends by the schedule, at the answer nearest its 10 s: 1008 s
    now[0] = 35.0
    (sample,) = parser.companion_output("diskstats", _answer(1014.0, 17000, 34000), 0)
    assert sample.extra["data_point"] == 4 and len(sample.extra["orion_live"]["points"]) == 1
    assert sample.metrics["lun_iops"] == 1500.0 and sample.metrics["lun_await_ms"] == 2.0
    assert sample.extra["devices"] == ["dm-3", "sdb", "sdc1", "sdc"]
    now[0] = 36.0
    (sample,) = parser.companion_output("diskstats", _answer(1015.0, 18500, 37000), 0)
    assert sample.extra["data_point"] == 4
    record = sample.extra["orion_live"]
    assert record["headline"].endswith("about 3.0 small I/Os outstanding (planned 3)")
    # point 3 completed: its window 1000 s to 1008 s of uptime
    fields = ["number", "small", "large", "seconds", "iops", "mbps", "await_ms", "avgqu_sz"]
    assert record["point_fields"] == [*fields, "requests_in_flight", "kib_in_flight"]
    # 1000 IOPS of 8 KiB (7.812 MB/s) at 2 ms: 2 in flight, 16 KiB; the kernel's queue says 2 too
    assert record["points"] == [[3, 2, 0, 8.0, 1000.0, 7.812, 2.0, 2.0, 2.0, 16.0]]
    # ORION's results: the last point closes at the last answer
    now[0] = 37.0
    (done,) = parser.feed("Maximum Small IOPS=1500 @ Small=3 and Large=0")
    final = done.extra["orion_live"]
    assert final["finished"] and final["headline"] == "ORION finished: 2 of 6 data points measured in diskstats"
    fourth = orion_live.recorded_points(final)[1]
    assert (fourth.number, fourth.small) == (4, 3)
    assert fourth.figures.seconds == 7.0 and fourth.figures.iops == 1500.0
    assert fourth.figures.requests_in_flight == pytest.approx(3.0) and fourth.figures.kib_in_flight == 24.0
    # after the results, answers still coming are not ORION's load
    assert parser.companion_output("diskstats", _answer(1016.0, 18500, 37000), 0) == []


def test_a_failed_or_garbled_diskstats_answer_records_nothing(tmp_path: Path) -> None:
    _sysfs_tree(tmp_path)
    parser = orion.OrionStreamParser({"run": "simple", "lun": ["/dev/mapper/data1"]}, root=tmp_path)
    assert parser.companion_output("diskstats", "cat: /proc/diskstats: No such file or directory\n", 1) == []
    assert parser.companion_output("diskstats", "", 0) == []
    assert parser.companion_output("other", _answer(1.0, 0, 0), 0) == []
    # a stopped ORION: what was measured is closed and recorded by finish()
    (sample,) = parser.companion_output("diskstats", _answer(1.0, 0, 0), 0)
    assert sample.extra["orion_live"]["rows"] == []  # one answer: no interval yet
    (ended,) = parser.finish()
    assert ended.extra["phase"] == "ended" and ended.extra["orion_live"]["finished"]


def test_orion_s_invocation_reads_diskstats_beside_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "orion").write_text("#!/bin/sh\n")
    (home / "bin" / "orion").chmod(0o755)
    planned = orion.invocation({"run": "simple", "lun": ["/dev/mapper/data1"], "oracle_home": str(home)})
    assert planned.companions == (DISKSTATS_COMPANION,)


@needs_loop
@pytest.mark.timeout(120)
def test_the_diskstats_companion_answers_over_ssh_as_on_the_local_host(
    tmp_path: Path, sshd: Sshd, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The companion as the supervisor runs it on a node (a real sshd on 127.0.0.1): its
    answers reach the parser, the LUN's row is measured, and no answer is kept as raw output;
    one loop (one channel) gives them all."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    target = SshTarget.parse(sshd.spec, identity=str(sshd.user_key), known_hosts=[str(sshd.known_hosts)])
    try:
        with loop_device(tmp_path / "lun.img", 16) as loop:
            parser = orion.OrionStreamParser({"run": "simple", "lun": [loop.path]})
            kept: list[tuple[str, str]] = []
            run_dir = tmp_path / "runs" / "7"
            run_dir.mkdir(parents=True)
            runner = CompanionRunner(
                SshHost(target, remote_base=str(tmp_path / "remote")),
                Invocation(argv=["true"], companions=(DISKSTATS_COMPANION,)),
                run_dir,
                parser,
                record=lambda stream, text: kept.append((stream, text)),
            )
            samples = []
            deadline = time.monotonic() + 60
            while len(samples) < 2:
                assert time.monotonic() < deadline, f"{len(samples)} answers in 60 s"
                samples += runner.poll()
                time.sleep(0.05)
            runner.close()
        records = [s.extra["orion_live"] for s in samples]
        assert records[0]["rows"] == []
        (row,) = records[1]["rows"]  # a loop device has no devices below it
        assert row["shown"] == loop.name and row["lun"] == loop.path and row["util_pct"] == 0.0
        assert kept == [] and runner.failures == 0 and runner.runs == 1
    finally:
        ssh.close_all()
