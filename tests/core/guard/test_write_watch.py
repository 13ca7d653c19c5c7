"""The write watch on real loop devices and real processes: found by number whatever node was
opened, only for writing, only when not cleared; under a SupervisedProcess and a Supervisor the
offender's whole tree is killed within a second and the device is unchanged."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.guard.write_watch import Violation, WriteWatch
from racperf_tui.core.process import SupervisedProcess
from racperf_tui.core.store import Store
from racperf_tui.orchestration.supervisor import Supervisor
from tests.helpers.loopdev import LoopDevice, loop_device, needs_loop, write_at
from tests.helpers.loopdev import sha256_of as _sha256
from tests.helpers.proc_helpers import FAKE_TOOL, ensure_repo_importable, live, wait_until

ensure_repo_importable()

pytestmark = [pytest.mark.timeout(60), pytest.mark.root, needs_loop]

MIB = 1 << 20


def _devno(device: LoopDevice) -> tuple[int, int]:
    return (device.major, device.minor)


@pytest.fixture
def cleared(tmp_path: Path) -> Iterator[LoopDevice]:
    with loop_device(tmp_path / "cleared.img", 8) as device:
        yield device


@pytest.fixture
def uncleared(tmp_path: Path) -> Iterator[LoopDevice]:
    image = tmp_path / "uncleared.img"
    with loop_device(image, 8) as device:
        write_at(image, 0, b"precious data..." * 4096)
        yield device


@contextlib.contextmanager
def _holder(path: str, flags: str) -> Iterator[tuple[int, int]]:
    """Another process holding PATH open with FLAGS ("os.O_RDONLY"...); yields (pid, fd)."""
    code = f"import os, sys\nfd = os.open({path!r}, {flags})\nprint(fd, flush=True)\nsys.stdin.read()\n"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        yield child.pid, int(child.stdout.readline())
    finally:
        child.kill()
        child.wait(timeout=10)


def test_only_uncleared_devices_open_for_writing_count(
    tmp_path: Path, cleared: LoopDevice, uncleared: LoopDevice
) -> None:
    node = tmp_path / "n"  # the uncleared device through a node outside /dev
    os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(uncleared.major, uncleared.minor))
    watch = WriteWatch({_devno(cleared)})
    with (
        _holder(cleared.path, "os.O_RDWR") as writes_cleared,
        _holder(uncleared.path, "os.O_RDONLY") as reads_uncleared,
        _holder(str(node), "os.O_WRONLY") as writes_uncleared,
        _holder(str(tmp_path / "f"), "os.O_RDWR | os.O_CREAT") as writes_a_file,
    ):
        pids = [writes_cleared[0], reads_uncleared[0], writes_uncleared[0], writes_a_file[0], 999999999]
        found = watch.check(pids)
        assert found == [
            Violation(
                pid=writes_uncleared[0],
                comm="python",
                fd=writes_uncleared[1],
                path=str(node),
                major=uncleared.major,
                minor=uncleared.minor,
            )
        ]
        assert str(found[0]) == (
            f"python (pid {writes_uncleared[0]}) opened {node} "
            f"({uncleared.major}:{uncleared.minor}) for writing, which the write guard "
            "did not clear"
        )
        assert WriteWatch({_devno(cleared), _devno(uncleared)}).check(pids) == []
    watch.close()


def test_a_mount_made_meanwhile_is_seen(tmp_path: Path, uncleared: LoopDevice) -> None:
    """The watch keeps its mount table only until mountinfo changes: a tmpfs mounted after the
    first check, holding a node of the uncleared device, is still looked into."""
    watch = WriteWatch(set())
    assert watch.check([os.getpid()]) == []
    mount_point = tmp_path / "late"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "racperf-late", str(mount_point)], check=True)
    try:
        node = mount_point / "disk"
        os.mknod(node, 0o600 | stat.S_IFBLK, os.makedev(uncleared.major, uncleared.minor))
        with _holder(str(node), "os.O_WRONLY") as (pid, _):
            assert [v.path for v in watch.check([pid])] == [str(node)]
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)
        watch.close()


def _writer_code(path: str, log: Path) -> str:
    """Opens PATH for writing after 0.3 s, logs when, and writes only 3 s later."""
    return (
        "import os, time\n"
        "time.sleep(0.3)\n"
        f"fd = os.open({path!r}, os.O_WRONLY)\n"
        f"open({str(log)!r}, 'w').write(str(time.monotonic()))\n"
        "time.sleep(3)\n"
        "os.pwrite(fd, b'\\xaa' * 4096, 0)\n"
        "os.fsync(fd)\n"
        "time.sleep(600)\n"
    )


def test_supervised_process_killed_at_an_uncleared_open(
    tmp_path: Path, cleared: LoopDevice, uncleared: LoopDevice
) -> None:
    before = _sha256(uncleared.path)
    log = tmp_path / "opened"
    proc = SupervisedProcess(
        [sys.executable, "-c", _writer_code(uncleared.path, log)], write_watch=WriteWatch({_devno(cleared)})
    )
    killed_at = None
    with proc:
        while not proc.finished and time.monotonic() - (proc.started_monotonic or 0) < 10:
            proc.read(0.1)
            proc.tick()
            if proc.violations and killed_at is None:
                killed_at = time.monotonic()
        status = proc.reap()
    assert killed_at is not None
    assert status == -signal.SIGKILL
    opened_at = float(log.read_text())
    assert killed_at - opened_at < 1.0
    assert [(v.pid, v.path, v.major, v.minor) for v in proc.violations] == [
        (proc.pid, uncleared.path, uncleared.major, uncleared.minor)
    ]
    assert _sha256(uncleared.path) == before


def test_writing_a_cleared_device_goes_on(cleared: LoopDevice) -> None:
    code = (
        f"import os, time\nfd = os.open({cleared.path!r}, os.O_RDWR)\ntime.sleep(0.8)\nos.pwrite(fd, b'x' * 4096, 0)\n"
    )
    with SupervisedProcess([sys.executable, "-c", code], write_watch=WriteWatch({_devno(cleared)})) as proc:
        while not proc.finished:
            proc.read(0.1)
            proc.tick()
        assert proc.reap() == 0
    assert proc.violations == []


def test_supervisor_kills_the_tree_and_records_why(tmp_path: Path, cleared: LoopDevice, uncleared: LoopDevice) -> None:
    """The offender is a grandchild in its own session, as fio's workers are; the leader
    samples on.  The whole tree dies at once and the run says who opened what."""
    before = _sha256(uncleared.path)
    log, pidfile = tmp_path / "writer.log", tmp_path / "pids"
    config = {
        "extra_args": [
            "--samples",
            "-1",
            "--interval",
            "0.1",
            "--writer",
            uncleared.path,
            "--writer-log",
            str(log),
            "--pidfile",
            str(pidfile),
        ]
    }
    data = tmp_path / "data"
    data.mkdir()
    with Store.open(data) as store:
        run_id = store.create_run(FAKE_TOOL, "local", uncleared.path, config, [], None)
        record = Supervisor(
            store, run_id, handle_signals=False, log=lambda _msg: None, write_watch=WriteWatch({_devno(cleared)})
        ).run()
    ended_at = time.time()
    _, writer_pid, opened_at = log.read_text().split()
    leader_pid = int(pidfile.read_text().split()[0])
    assert record.state is RunState.FAILED
    assert record.message == (
        f"killed: python (pid {writer_pid}) opened {uncleared.path} "
        f"({uncleared.major}:{uncleared.minor}) for writing, which the write guard did "
        "not clear"
    )
    assert record.exit_status == -signal.SIGKILL
    assert ended_at - float(opened_at) < 1.5  # detection, SIGKILL, reaping and the store write
    wait_until(lambda: not live(int(writer_pid)) and not live(leader_pid), 2, what="the tree gone")
    assert _sha256(uncleared.path) == before


def test_supervisor_command_line_takes_the_cleared_devices(
    tmp_path: Path, cleared: LoopDevice, uncleared: LoopDevice
) -> None:
    """What a detached run uses: --cleared MAJ:MIN turns the watch on."""
    before = _sha256(uncleared.path)
    config = {
        "extra_args": [
            "--samples",
            "-1",
            "--interval",
            "0.1",
            "--writer",
            uncleared.path,
            "--writer-log",
            str(tmp_path / "writer.log"),
        ]
    }
    data = tmp_path / "data"
    data.mkdir()
    with Store.open(data) as store:
        run_id = store.create_run(FAKE_TOOL, "local", uncleared.path, config, [], None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "racperf_tui.orchestration.supervisor",
            "--data-dir",
            str(data),
            "--run-id",
            str(run_id),
            "--cleared",
            f"{cleared.major}:{cleared.minor}",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1, done.stderr
    with Store.open(data) as store:
        record = store.get_run(run_id)
    assert record.state is RunState.FAILED and record.message.startswith("killed: python (pid ")
    assert f"opened {uncleared.path} ({uncleared.major}:{uncleared.minor}) for writing" in record.message
    assert _sha256(uncleared.path) == before
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "racperf_tui.orchestration.supervisor",
            "--data-dir",
            str(data),
            "--run-id",
            str(run_id),
            "--cleared",
            "loop7",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bad.returncode == 2 and "expected MAJOR:MINOR" in bad.stderr
