"""CALIBRATE_IO watched live: the second session's V$IO_CALIBRATION_STATUS answers as samples
while the emulator calibrates, and the devices under the datafiles (files on a mounted loop
device, ASM disks on loop devices, a recorded /sys with device-mapper and partitions)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.core.store import Store
from racperf_tui.tools import calibrate_io
from tests.helpers import FAKES, needs_root, racperf_cmd
from tests.helpers.loopdev import loop_device, make_sparse_image, mounted, needs_loop


@pytest.fixture
def oracle_home(tmp_path: Path) -> Path:
    home = tmp_path / "dbhome_1"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "sqlplus").symlink_to(FAKES / "sqlplus")
    return home


def run_calibration(home: Path, tmp_path: Path, seconds: float, **env: str) -> tuple[list[dict], dict]:
    """``racperf run calibrate_io`` with a second session every second: (samples, result line)."""
    environment = dict(os.environ, FAKE_SQLPLUS_CALIBRATE_S=str(seconds), FAKE_SQLPLUS_STATE_DIR=str(tmp_path), **env)
    done = subprocess.run(
        racperf_cmd()
        + ["run", "calibrate_io", "--data-dir", str(tmp_path / "data"), "--set", "sid=ORCL"]
        + ["--set", f"oracle_home={home}", "--set", "status_interval_s=1", "--set", "num_physical_disks=2"],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return [line for line in lines if line["type"] == "sample"], lines[-1]


def test_the_second_session_reports_in_progress_and_elapsed_while_it_runs(oracle_home: Path, tmp_path: Path) -> None:
    samples, last = run_calibration(oracle_home, tmp_path, 6)
    # the start, then one per answer of the second session (every 1 s, a logon each)
    assert samples[0]["metrics"] == {"elapsed_s": 0.0, "in_progress": 1.0}
    answers = samples[1:]
    assert len(answers) >= 2, samples
    assert all(s["status"] == "IN PROGRESS" and s["metrics"]["in_progress"] == 1.0 for s in answers)
    elapsed = [s["metrics"]["elapsed_s"] for s in answers]
    assert elapsed == sorted(elapsed) and 0 < elapsed[0] and elapsed[-1] <= 6.5
    assert [s["t"] for s in samples] == sorted(s["t"] for s in samples)
    result = last["result"]
    assert last["state"] == "succeeded"
    assert (result["max_iops"], result["max_mbps"], result["max_pmbps"], result["latency_ms"]) == (
        13070,
        1200,
        690,
        10.868,
    )
    assert result["num_physical_disks"] == 2
    # what the second session saw is kept with the run, each change once
    with Store.open(tmp_path / "data") as store:
        assert store.raw_output(1, "companion:status") == "racperf:status:IN PROGRESS|2022-09-04 18:02:55\n"
    # and the emulator is READY again, its calibration_time the end of this one
    status_script = calibrate_io.sqlplus_script(calibrate_io.STATUS_STATEMENTS)
    after = subprocess.run(
        [str(oracle_home / "bin" / "sqlplus"), "-S", "-L", "/ as sysdba"],
        input=status_script,
        capture_output=True,
        text=True,
        timeout=30,
        env=dict(os.environ, ORACLE_SID="ORCL", ORACLE_HOME=str(oracle_home), FAKE_SQLPLUS_STATE_DIR=str(tmp_path)),
    )
    state, when = after.stdout.strip().removeprefix("racperf:status:").split("|")
    assert state == "READY" and time.strftime("%Y-%m-%d") in when, after.stdout


def test_the_status_answers_in_the_live_view_state(tmp_path: Path) -> None:
    """The parser alone, on a clock: what each answer of the second session becomes."""
    now = [100.0]
    parser = calibrate_io.CalibrateIoStreamParser(root=tmp_path, clock=lambda: now[0])
    assert parser.companion_output("status", "racperf:status:READY|2022-09-04 18:02:55\n", 0) == []  # checks
    now[0] = 101.0
    (start,) = parser.feed("racperf:calibrate:start:2026-12-01 12:00:00")
    assert (start.t, start.extra["status"]) == (1.0, "IN PROGRESS")
    now[0] = 166.5
    (answer,) = parser.companion_output("status", "\nracperf:status:IN PROGRESS|2022-09-04 18:02:55\n", 0)
    assert answer.metrics == {"elapsed_s": 65.5, "in_progress": 1.0}
    assert answer.extra["job_states"] == (
        "V$IO_CALIBRATION_STATUS: IN PROGRESS, calibrating for 1m05s, last calibration 2022-09-04 18:02:55"
    )
    failed = "SELECT 'racperf:status:'\n*\nERROR at line 1:\nORA-01034: ORACLE not available\n"
    (unreadable,) = parser.companion_output("status", failed, 10)
    assert unreadable.extra["job_states"] == "V$IO_CALIBRATION_STATUS unreadable: ORA-01034: ORACLE not available"
    assert unreadable.extra["status"] == "IN PROGRESS"  # the last one known
    parser.feed("max_iops = 13070")
    assert parser.companion_output("status", "racperf:status:READY|2026-12-01 12:01:05\n", 0) == []


@needs_loop
def test_the_devices_under_datafiles_on_a_file_system_and_asm_disks(oracle_home: Path, tmp_path: Path) -> None:
    """Datafiles on an ext4 loop device: its device; ASM disks given as a device and as a
    symlink (/dev/oracleasm/disks/X, /dev/mapper/X are links or nodes): theirs. The emulator
    really reads them while it calibrates: the devices' read counters move."""
    image = make_sparse_image(tmp_path / "fs.img", 64)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    with loop_device(image) as fs_loop, mounted(fs_loop.path, tmp_path / "oradata") as mount:
        datafile = mount / "system01.dbf"
        with open(datafile, "wb") as handle:
            handle.write(os.urandom(1 << 20) * 16)
        before = _reads(fs_loop.name)
        samples, last = run_calibration(oracle_home, tmp_path, 3, FAKE_SQLPLUS_DATAFILES=str(datafile))
        assert last["result"]["devices"] == [fs_loop.name]
        assert samples[0]["type"] == "sample"
        assert _reads(fs_loop.name) - before >= 50, "the emulator's reads did not reach the device"
    with loop_device(tmp_path / "asm.img", 32) as asm_loop:
        disks = tmp_path / "oracleasm" / "disks"
        disks.mkdir(parents=True)
        (disks / "DATA1").symlink_to(asm_loop.path)
        before = _reads(asm_loop.name)
        _, last = run_calibration(
            oracle_home,
            tmp_path,
            2,
            FAKE_SQLPLUS_DATAFILES="+DATA/ORCL/DATAFILE/system.257.1126",
            FAKE_SQLPLUS_ASM_DISKS=f"{disks / 'DATA1'},/dev/oracleasm/disks/GONE",
        )
        result = last["result"]
        assert result["asm_disks"] == [str(disks / "DATA1"), "/dev/oracleasm/disks/GONE"]
        assert result["devices"] == [asm_loop.name]
        assert result["devices_unresolved"] == ["/dev/oracleasm/disks/GONE"]
        assert _reads(asm_loop.name) - before >= 30


def _reads(name: str) -> int:
    for line in Path("/proc/diskstats").read_text().splitlines():
        fields = line.split()
        if fields[2] == name:
            return int(fields[3])
    raise AssertionError(f"{name} not in /proc/diskstats")


def _sys_block(root: Path, name: str, dev: str, parent: str = "", slaves: tuple[str, ...] = ()) -> None:
    """A device in a recorded /sys: its directory, /sys/class/block and /sys/dev/block links."""
    base = root / "sys/devices/virtual/block" if name.startswith("dm-") else root / "sys/devices/pci0000:00/block"
    directory = base / parent / name if parent else base / name
    directory.mkdir(parents=True)
    (directory / "dev").write_text(dev + "\n")
    if parent:
        (directory / "partition").write_text("1\n")
    if slaves:
        (directory / "slaves").mkdir()
        for slave in slaves:
            (directory / "slaves" / slave).mkdir()
    (root / "sys/class/block").mkdir(parents=True, exist_ok=True)
    (root / "sys/dev/block").mkdir(parents=True, exist_ok=True)
    (root / "sys/class/block" / name).symlink_to(directory)
    (root / "sys/dev/block" / dev).symlink_to(directory)


def test_devices_under_a_recorded_root(tmp_path: Path) -> None:
    """A recorded machine: a multipath device dm-3 over sdb and sdc (ASM disk /dev/mapper/DATA1
    -> ../dm-3), a partition sdd1 (/dev/sdd1), datafiles on /u02 (xfs on an LVM volume dm-5
    over a partition sde1) and on a btrfs /u03 (an anonymous 0:47, named by its source /dev/sdf)."""
    root = tmp_path / "root"
    for name, dev, parent, slaves in (
        ("sdb", "8:16", "", ()),
        ("sdc", "8:32", "", ()),
        ("sdd", "8:48", "", ()),
        ("sdd1", "8:49", "sdd", ()),
        ("sde", "8:64", "", ()),
        ("sde1", "8:65", "sde", ()),
        ("sdf", "8:80", "", ()),
        ("dm-3", "253:3", "", ("sdb", "sdc")),
        ("dm-5", "253:5", "", ("sde1",)),
    ):
        _sys_block(root, name, dev, parent, slaves)
    (root / "dev/mapper").mkdir(parents=True)
    for node in ("dm-3", "dm-5", "sdd1", "sdf"):
        (root / "dev" / node).write_text("")  # a recorded root's nodes are plain files
    (root / "dev/mapper/DATA1").symlink_to("../dm-3")
    (root / "u02/oradata/ORCL").mkdir(parents=True)
    (root / "u02/oradata/ORCL/system01.dbf").write_text("")
    (root / "u03/oradata").mkdir(parents=True)
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mountinfo").write_text(
        "22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw\n"
        "60 22 253:5 / /u02 rw,relatime shared:30 - xfs /dev/mapper/vg-u02 rw,attr2\n"
        "61 22 0:47 / /u03 rw,relatime shared:31 - btrfs /dev/sdf rw,space_cache\n"
    )
    devices, unresolved = calibrate_io.devices_under(
        [
            "/dev/mapper/DATA1",
            "/dev/sdd1",
            "/u02/oradata/ORCL/system01.dbf",
            "/u02/oradata/ORCL/sysaux01.dbf",  # not there yet: its directory is, so its mount is known
            "/u03/oradata/users01.dbf",
            "/u09/elsewhere/undo01.dbf",  # another node's path: no guess
            "+DATA/ORCL/DATAFILE/x.256.1",
        ],
        root,
    )
    assert devices == ["dm-3", "sdb", "sdc", "sdd1", "sdd", "dm-5", "sde1", "sde", "sdf"]
    assert unresolved == ["/u09/elsewhere/undo01.dbf", "+DATA/ORCL/DATAFILE/x.256.1"]


@needs_root
def test_an_asmlib_disk_node_is_named_by_its_device_number(tmp_path: Path) -> None:
    """/dev/oracleasm/disks/X are block device nodes of their own (not links): the number names
    the device (here a node made for 8:49 in a recorded root whose /sys has sdd1)."""
    root = tmp_path / "root"
    _sys_block(root, "sdd", "8:48")
    _sys_block(root, "sdd1", "8:49", "sdd")
    (root / "dev/oracleasm/disks").mkdir(parents=True)
    os.mknod(root / "dev/oracleasm/disks/DATA2", 0o600 | 0o060000, os.makedev(8, 49))
    assert calibrate_io.devices_under(["/dev/oracleasm/disks/DATA2"], root) == (["sdd1", "sdd"], [])


def test_a_stop_ends_the_session_and_the_second_one(oracle_home: Path, tmp_path: Path) -> None:
    """SIGTERM to `racperf run` while IN PROGRESS: the run is recorded stopped, the session and
    any status session are gone, and the emulator's calibration with them."""
    environment = dict(os.environ, FAKE_SQLPLUS_CALIBRATE_S="60", FAKE_SQLPLUS_STATE_DIR=str(tmp_path))
    proc = subprocess.Popen(
        racperf_cmd()
        + ["run", "calibrate_io", "--data-dir", str(tmp_path / "data"), "--set", "sid=ORCL"]
        + ["--set", f"oracle_home={oracle_home}", "--set", "status_interval_s=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    try:
        assert proc.stdout is not None
        answers = 0
        for line in proc.stdout:
            answers += json.loads(line).get("status") == "IN PROGRESS"
            if answers >= 2:
                break
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    last = json.loads(rest.splitlines()[-1])
    assert last["type"] == "result" and last["state"] == "stopped" and last["message"] == "stopped by SIGTERM"
    assert not any(tmp_path.glob("fake-sqlplus-*.inprogress"))
    assert _processes_using(str(oracle_home)) == []


def _processes_using(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
