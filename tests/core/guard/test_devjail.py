"""The device jail on real loop devices: real fio reads an allowed device, a device not
allowed is not there (and unchanged after a dd at it), /dev/null works, the host's /dev is
untouched, and the jail execs (the pid started is the command, signals reach it)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.core.guard.devjail import EXIT_UNAVAILABLE, devjail_available, jail_argv, plan_nodes, unjail_argv
from racperf_tui.core.guard.safety import check_write_target
from tests.helpers import REPO, needs_fio
from tests.helpers.loopdev import LoopDevice, loop_device, needs_loop, write_at
from tests.helpers.loopdev import sha256_of as _sha256

pytestmark = [pytest.mark.timeout(60), pytest.mark.root, needs_loop]

MIB = 1 << 20


def _jailed(allowed: list[str], argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(jail_argv(argv, allowed), capture_output=True, text=True, timeout=30, cwd=REPO, **kwargs)


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.fixture
def allowed(tmp_path: Path) -> Iterator[LoopDevice]:
    image = tmp_path / "allowed.img"
    with loop_device(image, 16) as device:
        write_at(image, 0, b"RACPERF-ALLOWED!" * 4096)
        yield device


@pytest.fixture
def forbidden(tmp_path: Path) -> Iterator[LoopDevice]:
    image = tmp_path / "forbidden.img"
    with loop_device(image, 16) as device:
        write_at(image, 0, b"precious data..." * 4096)
        yield device


def test_available_here() -> None:
    assert devjail_available() == (True, "")


@needs_fio
def test_fio_reads_an_allowed_device(allowed: LoopDevice, forbidden: LoopDevice) -> None:
    done = _jailed(
        [allowed.path],
        [
            "fio",
            "--name=jailed",
            f"--filename={allowed.path}",
            "--rw=read",
            "--bs=4k",
            "--size=1M",
            "--output-format=json",
        ],
    )
    assert done.returncode == 0, done.stderr
    job = json.loads(done.stdout[done.stdout.index("{") :])["jobs"][0]
    assert job["error"] == 0 and job["read"]["io_bytes"] == MIB


@needs_fio
def test_fio_cannot_reach_a_device_not_allowed(allowed: LoopDevice, forbidden: LoopDevice) -> None:
    before = _sha256(forbidden.path)
    done = _jailed(
        [allowed.path],
        [
            "fio",
            "--name=escape",
            f"--filename={forbidden.path}",
            "--rw=write",
            "--bs=4k",
            "--size=1M",
            "--output-format=json",
        ],
    )
    assert done.returncode != 0
    assert "Read-only file system" in done.stdout + done.stderr or "No such file" in done.stdout + done.stderr
    assert _sha256(forbidden.path) == before


def test_only_allowed_nodes_exist_and_dev_is_read_only(allowed: LoopDevice, forbidden: LoopDevice) -> None:
    code = f"""
import errno, json, os
out = {{}}
for name, flags in (("read", os.O_RDONLY), ("write", os.O_WRONLY)):
    try:
        os.close(os.open({forbidden.path!r}, flags))
        out[name] = "opened"
    except OSError as exc:
        out[name] = errno.errorcode[exc.errno]
try:
    open("/dev/loop-typo", "w")
    out["create"] = "created"
except OSError as exc:
    out["create"] = errno.errorcode[exc.errno]
with open("/dev/null", "w") as null:
    null.write("x" * 4096)
with open("/dev/zero", "rb") as zero:
    out["zero"] = zero.read(8).hex()
with open({allowed.path!r}, "rb") as disk:
    out["head"] = disk.read(16).decode()
with open("/dev/shm/scratch", "w") as shm:
    shm.write("ok")
st = os.stat({allowed.path!r})
out["rdev"] = [os.major(st.st_rdev), os.minor(st.st_rdev)]
out["dev"] = sorted(os.listdir("/dev"))
out["fd"] = os.readlink("/dev/fd")
print(json.dumps(out))
"""
    done = _jailed([allowed.path], _python(code))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["read"] == out["write"] == "ENOENT"
    assert out["create"] == "EROFS"
    assert out["zero"] == "00" * 8 and out["head"] == "RACPERF-ALLOWED!"
    assert out["rdev"] == [allowed.major, allowed.minor]
    assert out["dev"] == sorted(
        ["fd", "full", allowed.name, "null", "random", "shm", "stderr", "stdin", "stdout", "urandom", "zero"]
    )
    assert out["fd"] == "/proc/self/fd"


def test_dd_at_a_device_not_allowed_leaves_it_unchanged(allowed: LoopDevice, forbidden: LoopDevice) -> None:
    before = _sha256(forbidden.path)
    done = _jailed([allowed.path], ["dd", "if=/dev/zero", f"of={forbidden.path}", "bs=4k", "count=16", "conv=notrunc"])
    assert done.returncode != 0
    assert forbidden.path in done.stderr
    assert _sha256(forbidden.path) == before


def test_host_dev_is_unaffected(allowed: LoopDevice, forbidden: LoopDevice) -> None:
    dev_before = sorted(os.listdir("/dev"))
    mounts_before = Path("/proc/self/mountinfo").read_text()
    done = _jailed([allowed.path], _python("import os; os.listdir('/dev')"))
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir("/dev")) == dev_before
    assert Path("/proc/self/mountinfo").read_text() == mounts_before
    assert stat.S_ISBLK(os.stat(forbidden.path).st_mode) and not os.path.exists("/dev/shm/scratch")


def test_links_become_nodes_at_the_given_path(tmp_path: Path, allowed: LoopDevice) -> None:
    """/dev/mapper/NAME -> ../loopN is made a node at /dev/mapper/NAME (its directory created);
    ~/mydisk -> /dev/loopN, outside /dev, stays as it is and leads to the node it names."""
    if not os.path.isdir("/dev/mapper"):
        pytest.skip("no /dev/mapper here")
    mapper = f"/dev/mapper/racperf{os.getpid()}-test1"
    mydisk = tmp_path / "mydisk"
    mydisk.symlink_to(allowed.path)
    os.symlink(allowed.path, mapper)
    try:
        nodes = {node.path: node for node in plan_nodes([mapper, str(mydisk)])}
        code = f"""
import json, os, stat
out = {{}}
for path in ({mapper!r}, {str(mydisk)!r}, {allowed.path!r}):
    st = os.stat(path)
    out[path] = [stat.S_ISBLK(st.st_mode), os.path.islink(path), os.major(st.st_rdev), os.minor(st.st_rdev)]
    with open(path, "rb") as disk:
        out[path].append(disk.read(16).decode())
print(json.dumps(out))
"""
        done = _jailed([mapper, str(mydisk)], _python(code))
    finally:
        os.unlink(mapper)
    assert set(nodes) == {mapper, allowed.path}
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    expected = [True, False, allowed.major, allowed.minor, "RACPERF-ALLOWED!"]
    assert out[mapper] == expected and out[allowed.path] == expected
    assert out[str(mydisk)] == [True, True, allowed.major, allowed.minor, "RACPERF-ALLOWED!"]


def test_exec_keeps_the_pid_and_signals_reach_the_command(allowed: LoopDevice) -> None:
    child = subprocess.Popen(
        jail_argv(_python("import os, time; print(os.getpid(), flush=True); time.sleep(30)"), [allowed.path]),
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert child.stdout is not None
        assert int(child.stdout.readline()) == child.pid
        assert Path(f"/proc/{child.pid}/ns/mnt").resolve() != Path("/proc/self/ns/mnt").resolve()
        started = time.monotonic()
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=5) == -signal.SIGTERM
        assert time.monotonic() - started < 2
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_host_guard_sees_a_device_held_open_inside_the_jail(allowed: LoopDevice) -> None:
    """The jailed process's fd is on the jail's tmpfs, a mount only its own namespace lists:
    the open-fd scan looks it up there and still finds the device."""
    child = subprocess.Popen(
        jail_argv(
            _python(f"import sys; f = open({allowed.path!r}, 'rb'); print('ready', flush=True); sys.stdin.read()"),
            [allowed.path],
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        verdict = check_write_target(allowed.path)
    finally:
        child.kill()
        child.wait()
    assert not verdict.allowed
    assert any(f"held open by process {child.pid} (" in reason for reason in verdict.reasons), verdict.reasons


def test_refuses_and_runs_nothing_when_it_cannot_build_the_jail(tmp_path: Path, allowed: LoopDevice) -> None:
    marker = tmp_path / "ran"
    touch = ["sh", "-c", f"touch {marker}"]
    missing = _jailed(["/dev/racperf-no-such-disk"], touch)
    assert missing.returncode == EXIT_UNAVAILABLE
    assert missing.stderr.startswith("racperf devjail: not running sh: --allow /dev/racperf-no-such-disk: ")
    not_a_device = _jailed(["/dev/shm"], touch)
    assert not_a_device.returncode == EXIT_UNAVAILABLE and "not a device node" in not_a_device.stderr
    # unprivileged: imported first (nobody cannot read the venv), then root is dropped
    code = (
        "import os, sys\n"
        "import locale, shutil\n"  # argparse imports them late; nobody cannot read this stdlib
        "from racperf_tui.core.guard import devjail\n"
        "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
        "print(devjail.devjail_available(), file=sys.stderr, flush=True)\n"
        f"sys.exit(devjail.main(['--allow', {allowed.path!r}, '--', *{touch!r}]))\n"
    )
    os.chmod(tmp_path, 0o777)
    unprivileged = subprocess.run(_python(code), capture_output=True, text=True, timeout=30, cwd=REPO)
    assert unprivileged.returncode == EXIT_UNAVAILABLE, unprivileged.stderr
    assert "(False, 'the device jail needs root" in unprivileged.stderr
    assert "racperf devjail: not running sh: the device jail needs root" in unprivileged.stderr
    assert not marker.exists()


def test_jail_argv_is_an_isolated_python_and_reads_back() -> None:
    argv = jail_argv(["fio", "--name=x"], ["/dev/loop5", "/dev/mapper/a"])
    assert argv[:2] == [sys.executable, "-I"]
    assert unjail_argv(argv) == (["fio", "--name=x"], ["/dev/loop5", "/dev/mapper/a"])
    assert unjail_argv(["fio", "--name=x"]) is None


def test_allowing_a_node_every_jail_has_is_not_an_error() -> None:
    """fio's own tests write /dev/full; the guard clears it like any device node."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "racperf_tui.core.guard.devjail",
            "--allow",
            "/dev/full",
            "--allow",
            "/dev/null",
            "--",
            "sh",
            "-c",
            "test -c /dev/full && test -c /dev/null",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
