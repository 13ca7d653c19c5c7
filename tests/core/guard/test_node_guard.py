"""The write guard on another node (core/remote/node_facts.py, SshHost.judge_targets, check-target
--ssh) against a real OpenSSH sshd on 127.0.0.1: the node is this very machine, so for every
case the local guard's tests cover, the verdict judged from the facts gathered over SSH must
equal the local one, word for word. Also: a hostile path runs nothing on the node, and a node
whose facts are partly unreadable (a non-root login, a node without /sys/block) refuses writes
saying what it could not check."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.core.contract.invocation import READ, WRITE, Invocation, Target
from racperf_tui.core.guard import target_guard
from racperf_tui.core.guard.devjail import jail_argv, unjail_argv
from racperf_tui.core.guard.safety import check_write_target
from racperf_tui.core.guard.target_guard import GuardVerdict
from racperf_tui.core.guard.write_watch import WriteWatch
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.node_facts import NodeStat, _lay_out_sysfs, _sections, _stat_answer, check_write_targets
from racperf_tui.core.remote.node_net import NO_LANDLOCK_ON_NODES, NetReport
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import RemoteProcess, SshHost
from tests.helpers import racperf_cmd
from tests.helpers.loopdev import (
    LoopDevice,
    loop_device,
    make_sparse_image,
    mounted,
    needs_loop,
    stacked_loop,
    swap_on,
    write_at,
)
from tests.helpers.sshd_helpers import Sshd

pytestmark = pytest.mark.timeout(120)

MIB = 1 << 20


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    yield
    ssh.close_all()


def _target(server: Sshd) -> SshTarget:
    return SshTarget.parse(server.spec, identity=str(server.user_key), known_hosts=[str(server.known_hosts)])


@pytest.fixture
def host(sshd: Sshd) -> SshHost:
    return SshHost(_target(sshd))


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[LoopDevice]:
    with loop_device(tmp_path / "blank.img", 64) as device:
        yield device


def _shape(verdict: GuardVerdict) -> dict[str, object]:
    return {
        "refused": [(t.path, t.access, v) for t, v in verdict.refused],
        "blocked": verdict.blocked,
        "overridden": [(t.path, t.access, v) for t, v in verdict.overridden],
        "device_nodes": verdict.device_nodes,
    }


def _both(host: SshHost, path: str, access: str = WRITE) -> tuple[GuardVerdict, GuardVerdict]:
    """(local, remote) verdicts on one target; they must be equal."""
    targets = [Target(path, access, "filename")]
    local = target_guard.judge(targets)
    remote = host.judge_targets(targets)
    assert _shape(remote) == _shape(local)
    assert remote.message() == local.message()
    return local, remote


def _reasons(verdict: GuardVerdict) -> list[str]:
    return [reason for _, v in verdict.refused for reason in v.reasons] + verdict.blocked


@contextlib.contextmanager
def _holding_open(path: str, mode: str = "<>") -> Iterator[int]:
    """Another process (a sleep) holding PATH open (read-write by default); yields its pid."""
    child = subprocess.Popen(["sh", "-c", f'exec 3{mode}"$1"; exec sleep 60', "holder", path])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if os.path.realpath(f"/proc/{child.pid}/fd/3") == os.path.realpath(path):
                    if Path(f"/proc/{child.pid}/comm").read_text().strip() == "sleep":
                        break
            except OSError:
                pass
            time.sleep(0.02)
        yield child.pid
    finally:
        child.kill()
        child.wait()


# ---------------------------------------------------------------------------------------------
# the local guard's cases: the remote verdict equals the local one


@needs_loop
def test_free_loop_device_allowed_on_the_node(host: SshHost, loop: LoopDevice) -> None:
    local, remote = _both(host, loop.path)
    assert remote.allowed and remote.device_nodes == [loop.path]


@needs_loop
def test_mounted_ext4_loop_device_refused_on_the_node(host: SshHost, tmp_path: Path) -> None:
    image = make_sparse_image(tmp_path / "ext4.img", 32)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    with loop_device(image) as device, mounted(device.path, tmp_path / "mnt") as mount_point:
        local, remote = _both(host, device.path)
    assert not remote.allowed
    reasons = _reasons(remote)
    assert f"{device.path} ({device.major}:{device.minor}) is mounted on {mount_point}" in reasons
    assert any("ext2/3/4 file system (magic 0xEF53 at byte 1080)" in r for r in reasons)


@needs_loop
def test_swap_on_a_loop_refused_on_the_node(host: SshHost, loop: LoopDevice) -> None:
    try:
        with swap_on(loop.path):
            local, remote = _both(host, loop.path)
    except RuntimeError as exc:
        pytest.skip(f"swapon not permitted here: {exc}")
    assert f"{loop.path} ({loop.major}:{loop.minor}) is in use as swap ({loop.path} in /proc/swaps)" in _reasons(remote)


@needs_loop
def test_loop_stacked_on_a_loop_refused_on_the_node(host: SshHost, loop: LoopDevice) -> None:
    with stacked_loop(loop.path, MIB) as upper:
        local, remote = _both(host, loop.path)
        upper_local, upper_remote = _both(host, upper.path)
    reason = next(r for r in _reasons(remote) if "is in use by" in r)
    assert reason == (
        f"{loop.path} ({loop.major}:{loop.minor}) is in use by {upper.name} ({upper.major}:{upper.minor}, "
        f"loop device backed by {loop.path} from byte {MIB}): writing underneath a loop device corrupts what it holds"
    )
    # the upper one writes through the lower one, which nothing else uses: allowed, as locally
    assert upper_remote.allowed and upper_remote.device_nodes == [upper.path]


@needs_loop
def test_device_held_open_for_writing_refused_on_the_node(host: SshHost, loop: LoopDevice) -> None:
    with _holding_open(loop.path) as pid:
        local, remote = _both(host, loop.path)
    assert f"{loop.path} ({loop.major}:{loop.minor}) is held open by process {pid} (sleep)" in _reasons(remote)
    local, remote = _both(host, loop.path)  # once it is gone, free again
    assert remote.allowed


def test_file_held_open_refused_on_the_node(host: SshHost, tmp_path: Path) -> None:
    datafile = tmp_path / "system01.dbf"
    datafile.write_bytes(b"\0" * 8192)
    with _holding_open(str(datafile)) as pid:
        local, remote = _both(host, str(datafile))
    assert f"{datafile} is held open by process {pid} (sleep)" in _reasons(remote)


@needs_loop
def test_device_held_from_another_mount_namespace_refused_on_the_node(
    host: SshHost, tmp_path: Path, loop: LoopDevice
) -> None:
    """A process in a mount namespace of its own (a systemd service with PrivateTmp, a
    container) holds the device through a node it made outside /dev: its open file's mount id
    is in no table of the login's namespace, so the node's mountinfo of that namespace is read
    (as the local guard reads it) to know the node lies on a file system safe to stat."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) not installed")
    node = tmp_path / "n"
    os.mknod(node, 0o600 | 0o060000, os.makedev(loop.major, loop.minor))
    child = subprocess.Popen(["unshare", "-m", "sh", "-c", 'exec 3<>"$1"; exec sleep 60', "holder", str(node)])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if os.readlink(f"/proc/{child.pid}/fd/3") == str(node):
                    break
            except OSError:
                pass
            time.sleep(0.02)
        assert os.readlink(f"/proc/{child.pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt")
        local, remote = _both(host, loop.path)
    finally:
        child.kill()
        child.wait()
    assert f"{loop.path} ({loop.major}:{loop.minor}) is held open by process {child.pid} (sleep)" in _reasons(remote)


def test_asm_file_refused_on_the_node(host: SshHost, tmp_path: Path) -> None:
    asm_file = make_sparse_image(tmp_path / "asm_disk1", 4)
    write_at(asm_file, 32, b"ORCLDISK")
    local, remote = _both(host, str(asm_file))
    assert any(
        r.startswith(f"{asm_file} carries an Oracle ASM disk header (ORCLDISK at byte 32)") for r in _reasons(remote)
    )


@needs_loop
def test_asm_loop_and_its_backup_header_refused_on_the_node(host: SshHost, tmp_path: Path) -> None:
    """The primary header on one, only the backup (allocation unit 1, 4 MiB AUs) on the other:
    the node's blocks are read at the offsets the guard asks for."""
    primary = make_sparse_image(tmp_path / "asm_primary.img", 16)
    write_at(primary, 32, b"ORCLDISK")
    write_at(primary, 0x48, b"DATA_0000".ljust(32, b"\0") + b"DATA".ljust(32, b"\0"))
    backup = make_sparse_image(tmp_path / "asm_backup.img", 16)
    write_at(backup, 2 * 4 * MIB - 2 * 4096 + 32, b"ORCLDISK")
    with loop_device(primary) as first, loop_device(backup) as second:
        _, remote_first = _both(host, first.path)
        _, remote_second = _both(host, second.path)
    assert any("ORCLDISK at byte 32) (disk DATA_0000 of diskgroup DATA)" in r for r in _reasons(remote_first))
    assert any(f"ORCLDISK at byte {2 * 4 * MIB - 2 * 4096 + 32}" in r for r in _reasons(remote_second))


@needs_loop
def test_backing_file_of_a_loop_refused_on_the_node(host: SshHost, loop: LoopDevice) -> None:
    local, remote = _both(host, str(loop.image))
    assert _reasons(remote) == [
        f"{loop.image} is the backing file of loop device {loop.name} ({loop.major}:{loop.minor}); "
        "writing it writes that device"
    ]


@needs_loop
def test_missing_dev_path_blocked_on_the_node_with_close_names(host: SshHost, loop: LoopDevice) -> None:
    typo = loop.path[:-1] + "x" + loop.path[-1]  # /dev/loopx3
    local, remote = _both(host, typo)
    assert remote.blocked and "no such device" in remote.blocked[0] and loop.path in remote.blocked[0]
    local, remote = _both(host, typo, READ)
    assert remote.blocked


def test_new_file_fifo_and_character_devices_on_the_node(host: SshHost, tmp_path: Path) -> None:
    """Only block devices and regular files are opened on the node: a FIFO (whose open would
    block) and a character device are judged by their stat alone, as here."""
    local, remote = _both(host, str(tmp_path / "new.dat"))
    assert remote.allowed
    local, remote = _both(host, "/dev/null")
    assert remote.allowed
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    local, remote = _both(host, str(fifo))
    assert remote.allowed and time.monotonic() - started < 30
    local, remote = _both(host, "/dev/tty")
    assert _reasons(remote)[0].startswith("/dev/tty is a character device (5:0)")


# ---------------------------------------------------------------------------------------------
# hostile paths, unreadable facts, the command


HOSTILE = ["a b", "it's", 'say "hi"', "x; touch PWNED1", "$(touch PWNED2)", "`touch PWNED3`", "-n", "new\nline"]


def test_hostile_paths_run_nothing_on_the_node(host: SshHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    paths = []
    for index, name in enumerate(HOSTILE):
        existing = tmp_path / f"{name} {index}"
        existing.write_bytes(b"\0" * 32 + (b"ORCLDISK" if index % 2 else b"") + b"\0" * 4096)
        paths += [str(existing), str(tmp_path / f"gone {name}"), f"/dev/{name}"]
    targets = [Target(path, WRITE, "filename") for path in paths]
    local, remote = target_guard.judge(targets), host.judge_targets(targets)
    assert _shape(remote) == _shape(local)
    assert len(remote.refused) == len(HOSTILE) // 2  # the files with an ASM header
    assert len(remote.blocked) == len(HOSTILE)  # the missing /dev names
    home = Path(os.environ["HOME"])
    for where in (tmp_path, home, Path("/")):
        assert not [p for p in where.iterdir() if p.name.startswith("PWNED")], where


def _login_as(sshd: Sshd, command: str) -> None:
    """Every login with the test key runs COMMAND (with $SSH_ORIGINAL_COMMAND), as sshd's
    authorized_keys ``command=`` option does."""
    key = sshd.authorized_keys.read_text().strip()
    quoted = command.replace("\\", "\\\\").replace('"', '\\"')
    sshd.authorized_keys.write_text(f'command="{quoted}" {key}\n')


@needs_loop
def test_node_seen_by_a_non_root_user_refuses_writes(sshd: Sshd, loop: LoopDevice) -> None:
    """Logged in as nobody: other users' open files cannot be listed and the device cannot be
    read; the guard refuses and says what it could not check, never allows blind."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) not installed")
    _login_as(sshd, 'exec setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$SSH_ORIGINAL_COMMAND"')
    remote = SshHost(_target(sshd)).judge_targets([Target(loop.path, WRITE, "filename")])
    assert not remote.allowed
    reasons = _reasons(remote)
    assert any(r.endswith("processes were not readable (run as root)") for r in reasons), reasons
    assert f"{loop.path} ({loop.major}:{loop.minor}) could not be read to look for signatures: Permission denied" in (
        reasons
    )
    assert check_write_target(loop.path).allowed  # here, as root, it is free


@needs_loop
def test_node_without_sysfs_refuses_writes(sshd: Sshd, loop: LoopDevice) -> None:
    """A node whose /sys/block cannot be read (here: an empty /sys in a mount namespace of its
    own): holders and partitions are unknown, so every existing write target is refused."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) not installed")
    _login_as(sshd, "exec unshare -m sh -c 'mount -t tmpfs none /sys && exec sh -c \"$SSH_ORIGINAL_COMMAND\"'")
    host = SshHost(_target(sshd))
    remote = host.judge_targets([Target(loop.path, WRITE, "filename")])
    assert not remote.allowed
    assert f"could not check the block devices (/sys/block) on {host.name}" in _reasons(remote)
    # without sysfs the device is known by its number only, as the local guard names it then
    assert remote.refused[0][1].kernel_name == f"{loop.major}:{loop.minor}"
    # a new file has nothing to destroy: still allowed
    assert host.judge_targets([Target(str(loop.image) + ".new", WRITE, "filename")]).allowed


def test_unreachable_node_blocks_every_target() -> None:
    host = SshHost(SshTarget.parse("127.0.0.1:1"))
    verdict = host.judge_targets([Target("/tmp/x", WRITE, "filename")])
    assert not verdict.allowed and verdict.blocked[0].startswith("/tmp/x (filename) on 127.0.0.1:1: cannot judge it")


@needs_loop
def test_check_target_over_ssh_prints_what_it_prints_here(sshd: Sshd, tmp_path: Path) -> None:
    image = make_sparse_image(tmp_path / "ext4.img", 32)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    free = make_sparse_image(tmp_path / "free.img", 16)
    with loop_device(image) as refused, loop_device(free) as allowed:
        paths = [refused.path, allowed.path, str(tmp_path / "new file")]
        node = ["--ssh", sshd.spec, "--identity", str(sshd.user_key), "--known-hosts", str(sshd.known_hosts)]
        outputs = []
        for extra in ([], node, ["--json"], ["--json", *node]):
            done = subprocess.run(
                [*racperf_cmd(), "check-target", *paths, *extra], capture_output=True, text=True, timeout=60
            )
            outputs.append((done.returncode, done.stdout))
    assert outputs[0] == outputs[1] and outputs[2] == outputs[3]
    assert outputs[0][0] == 3 and "is mounted" not in outputs[0][1] and "ext2/3/4" in outputs[0][1]
    rows = [json.loads(line) for line in outputs[3][1].splitlines()]
    assert [row["allowed"] for row in rows] == [False, True, True]
    connection = ssh.connect(_target(sshd))
    assert [v.allowed for v in check_write_targets(connection, "n", paths[1:])] == [True, True]


def test_check_target_names_an_unreachable_node() -> None:
    done = subprocess.run(
        [*racperf_cmd(), "check-target", "/tmp/x", "--ssh", "127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stderr.startswith("racperf check-target: 127.0.0.1:1: ") and not done.stdout
    assert "Traceback" not in done.stderr
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------
# the kernel's net on the node: device jail and write watch (core/remote/node_net.py)


def _run_remote(proc: RemoteProcess, timeout_s: float = 30.0) -> tuple[int, str, str]:
    out = {"stdout": b"", "stderr": b""}
    deadline = time.monotonic() + timeout_s
    while not proc.finished:
        assert time.monotonic() < deadline, "did not finish"
        for stream, chunk in proc.read(0.2):
            out[stream] += chunk
        proc.tick()
    status = proc.reap()
    proc.close()
    return status, out["stdout"].decode(), out["stderr"].decode()


@needs_loop
def test_node_jail_holds_only_cleared_devices_and_the_watch_kills_an_uncleared_write(
    sshd: Sshd, tmp_path: Path
) -> None:
    """The run's target is loop A. In the jail /dev shows A, not B, and is read-only; every
    other mount is read-only and nodev: a node of B made outside /dev cannot be opened
    (EACCES), a file the run was not given cannot be written (EROFS), the run's directory can.
    B reached through /proc/PID/root (the host's mounts, which the jail does not cover) opened
    for writing is caught by the node's watch: the tree is killed, the violation names the
    process, the path and B."""
    host = SshHost(_target(sshd), remote_base=str(tmp_path / "runs"))
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    with loop_device(tmp_path / "a.img", 16) as cleared, loop_device(tmp_path / "b.img", 16) as other:
        node = tmp_path / "b-node"
        os.mknod(node, 0o600 | 0o060000, os.makedev(other.major, other.minor))
        script = (
            f'for p in {cleared.path} {other.path}; do [ -e "$p" ] && echo "$p shown" || echo "$p hidden"; done; '
            "touch /dev/racperf-x 2>&1 | sed 's/.*: //'; "
            '(exec 3<>"$1") 2>&1 | sed "s/.*: //"; '
            '(: > "$2") 2>&1 | sed "s/.*: //"; '
            "echo mine > mine && echo wrote; "
            'exec 3<>"$3"; echo opened; exec sleep 30'
        )
        # the host's mounts, seen through a process outside the jail: this test's
        escape = f"/proc/{os.getpid()}/root{other.path}"
        argv = ["sh", "-c", script, "holder", str(node), str(victim), escape]
        invocation = Invocation(argv, targets=[Target(cleared.path, WRITE, "t")], cwd=".")
        # the supervisor hands over the local jail's argv: the node's net replaces it
        argv = jail_argv(invocation.argv, [cleared.path])
        started = time.monotonic()
        proc = host.start(invocation, tmp_path / "run", write_watch=WriteWatch(set()), argv=argv)
        status, out, err = _run_remote(proc)
        took = time.monotonic() - started
    assert out.splitlines() == [
        f"{cleared.path} shown",
        f"{other.path} hidden",
        "Read-only file system",
        "Permission denied",
        "Read-only file system",
        "wrote",
        "opened",
    ], err
    assert victim.read_text() == "precious\n"
    assert status == -9 and took < 10, (status, took, err)
    assert proc.violations and proc.violations[0].path == other.path
    assert [p.read_text() for p in (tmp_path / "runs").glob("*/mine")] == ["mine\n"]
    assert (proc.violations[0].major, proc.violations[0].minor) == (other.major, other.minor)
    assert proc.violations[0].comm in ("sh", "sleep")
    assert str(proc.violations[0]).endswith("for writing, which the write guard did not clear")
    assert proc.net is not None and proc.net.protections == [
        "write watch on the node (every process of the run, by device number)",
        "device jail on the node: /dev holds only the cleared devices",
        "read-only mounts on the node: every mount read-only and nodev; writable: the run's write targets and its "
        "directory",
        NO_LANDLOCK_ON_NODES,
    ]


@needs_loop
def test_node_watch_leaves_a_cleared_write_alone(host: SshHost, tmp_path: Path, loop: LoopDevice) -> None:
    invocation = Invocation(
        ["sh", "-c", 'exec 3<>"$1"; sleep 2; echo done', "w", loop.path], targets=[Target(loop.path, WRITE, "t")]
    )
    proc = host.start(invocation, tmp_path / "run", write_watch=WriteWatch(set()))
    status, out, _ = _run_remote(proc)
    assert (status, out, proc.violations) == (0, "done\n", [])


def test_node_without_root_runs_watched_but_not_jailed(sshd: Sshd, tmp_path: Path) -> None:
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) not installed")
    _login_as(sshd, 'exec setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$SSH_ORIGINAL_COMMAND"')
    base = tmp_path / "runs"
    base.mkdir(mode=0o777)
    base.chmod(0o777)
    host = SshHost(_target(sshd), remote_base=str(base))
    proc = host.start(Invocation(["echo", "ran"]), tmp_path / "run", write_watch=WriteWatch(set()))
    status, out, _ = _run_remote(proc)
    assert (status, out) == (0, "ran\n")
    assert proc.net is not None
    assert proc.net.protections[1:] == [
        "device jail not active on the node: the device jail needs root",
        "read-only mounts not active on the node: the device jail needs root",
        NO_LANDLOCK_ON_NODES,
    ]


def test_unjail_argv_reads_back_jail_argv() -> None:
    argv = ["fio", "--name=x", "--", "-x"]
    assert unjail_argv(jail_argv(argv, ["/dev/a b", "--allow"])) == (argv, ["/dev/a b", "--allow"])
    assert unjail_argv(argv) is None
    assert unjail_argv([sys.executable, "-m", "racperf_tui.core.guard.devjail", "--other", "x", "--", "fio"]) is None


# ---------------------------------------------------------------------------------------------
# a hostile or broken node: what it sends stays under the temp root and never allows blind


def test_hostile_sysfs_names_stay_under_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    _lay_out_sysfs(
        root,
        "\n".join(
            [
                "D ..",
                "D a/b",
                "D .",
                "D sda",
                "F sda dev 8:0",
                "F sda uevent DEVNAME=sda",
                "F sda ../../../outside pwned",
                "F sda holders/x pwned",
                "P sda ../../../outside",
                "P sda sda1",
                "F sda/sda1 dev 8:1",
                "F sda/sda1 partition 1",
                "H sda ../../../outside",
                "H sda dm-0",
                "F nosuch dev 9:9",
                "garbage without a kind",
            ]
        ),
    )
    assert not outside.exists()
    made = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    assert made == [
        "sys",
        "sys/block",
        "sys/block/sda",
        "sys/block/sda/dev",
        "sys/block/sda/holders",
        "sys/block/sda/holders/dm-0",
        "sys/block/sda/sda1",
        "sys/block/sda/sda1/dev",
        "sys/block/sda/sda1/partition",
        "sys/block/sda/uevent",
        "sys/class",
        "sys/class/block",
        "sys/class/block/sda",
        "sys/class/block/sda1",
        "sys/dev",
        "sys/dev/block",
        "sys/dev/block/8:0",
        "sys/dev/block/8:1",
    ]
    for link in root.rglob("*"):
        if link.is_symlink():
            assert str(link.resolve()).startswith(str(root)), link  # dm-0's dangles inside the root


def test_broken_answers_refuse_rather_than_allow() -> None:
    assert _sections(b"no mark at all\n", "racperf-x") == {}
    assert _sections(b"racperf-x swaps\nracperf-x unreadable\nracperf-x end\n", "racperf-x") == {
        "swaps": None,
        "end": b"",
    }
    assert _stat_answer("stat: cannot statx '/x': No such file or directory") == errno.ENOENT
    assert _stat_answer("garbage 1 2") == errno.EIO
    block = _stat_answer("61b0 7 2 5 9 0")
    assert isinstance(block, NodeStat) and block.st_rdev == os.makedev(7, 2) and block.st_mode == 0o60660
    report = NetReport("racperf-m")
    for chunk in (b"racperf-m viol", b"ation 12 3 7:a /tmp/a b\nracperf-m comm f", b"io\nracperf-m violation x\n"):
        report.feed(chunk)
    assert [(v.pid, v.fd, v.major, v.minor, v.path, v.comm) for v in report.violations] == [
        (12, 3, 7, 10, "/tmp/a b", "fio")
    ]


# ---------------------------------------------------------------------------------------------
# the whole way: the supervisor runs fio on the node, judged and watched there


def _write_ios(device: LoopDevice) -> int:
    return int(Path(f"/sys/block/{device.name}/stat").read_text().split()[4])


def _fio_write(device: str) -> dict[str, object]:
    return {
        "extra_args": [
            "--name=w",
            f"--filename={device}",
            "--rw=write",
            "--bs=64k",
            "--size=4m",
            "--direct=1",
            "--ioengine=psync",
        ],
        "destructive": False,
        "target": None,
    }


@pytest.mark.slow  # a real fio run on the node
@needs_loop
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_supervisor_runs_fio_on_the_node_judged_and_watched_there(sshd: Sshd, tmp_path: Path) -> None:
    from racperf_tui.core.contract.events import RunState
    from racperf_tui.core.store import Store
    from racperf_tui.orchestration.supervisor import Supervisor

    host = SshHost(_target(sshd), remote_base=str(tmp_path / "runs"))
    image = make_sparse_image(tmp_path / "ext4.img", 32)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    with (
        loop_device(tmp_path / "free.img", 16) as free,
        loop_device(image) as taken,
        mounted(taken.path, tmp_path / "mnt"),
        Store.open(tmp_path / "data") as store,
    ):
        before = _write_ios(free), _write_ios(taken)
        records = []
        for device in (free, taken):
            run_id = store.create_run("fio", host.name, device.path, _fio_write(device.path), [], None)
            records.append(Supervisor(store, run_id, host=host, handle_signals=False, log=lambda m: None).run())
        after = _write_ios(free), _write_ios(taken)
    assert records[0].state is RunState.SUCCEEDED, records[0].message
    assert after[0] - before[0] >= 64  # 4 MiB in 64 KiB writes reached the free device
    assert records[1].state is not RunState.SUCCEEDED
    assert f"{taken.path} ({taken.major}:{taken.minor}) is mounted on" in (records[1].message or "")
    assert after[1] == before[1]  # nothing was written to the mounted one


def test_check_target_on_a_cluster_files_node(sshd: Sshd, tmp_path: Path) -> None:
    asm_file = make_sparse_image(tmp_path / "asm disk", 4)
    write_at(asm_file, 32, b"ORCLDISK")
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(
        "[[node]]\n"
        'name = "rac2"\n'
        'host = "127.0.0.1"\n'
        f'user = "{sshd.user}"\n'
        f"port = {sshd.port}\n"
        f'identity = "{sshd.user_key}"\n'
        f'known_hosts = "{sshd.known_hosts}"\n'
    )
    here = subprocess.run([*racperf_cmd(), "check-target", str(asm_file)], capture_output=True, text=True, timeout=60)
    there = subprocess.run(
        [*racperf_cmd(), "check-target", str(asm_file), "--node", "rac2", "--cluster", str(cluster)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (there.returncode, there.stdout) == (here.returncode, here.stdout) == (3, there.stdout)
    assert there.stdout.startswith(
        f"refusing to write to {asm_file}:\n  - {asm_file} carries an Oracle ASM disk header"
    )
    missing = subprocess.run(
        [*racperf_cmd(), "check-target", "/tmp/x", "--node", "rac9", "--cluster", str(cluster)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and "rac9" in missing.stderr and "Traceback" not in missing.stderr


@needs_loop
def test_node_that_answers_no_question_refuses_writes(sshd: Sshd, loop: LoopDevice, tmp_path: Path) -> None:
    """The node gives its base facts but fails every later question (here its login refuses
    them): each unanswered fact is named, the write refused, nothing crashes."""
    _login_as(sshd, 'case "$SSH_ORIGINAL_COMMAND" in *" bulk"*) exit 1;; esac; exec sh -c "$SSH_ORIGINAL_COMMAND"')
    host = SshHost(_target(sshd))
    verdict = host.judge_targets([Target(loop.path, WRITE, "filename"), Target(str(tmp_path), READ, "directory")])
    assert not verdict.allowed
    reasons = _reasons(verdict)
    assert f"could not check {loop.path} (stat: the node gave no answer) on {host.name}" in reasons
    assert check_write_target(loop.path).allowed  # here it is free


def test_node_jail_binds_only_the_file_the_guard_judged(sshd: Sshd, tmp_path: Path) -> None:
    """On the node too the judged file is bound by a descriptor of that file (sh: ``exec 8<``,
    its ``stat`` compared with the guard's, ``mount -c --bind /proc/self/fd/8``): the judged
    file is written; a file replaced by a link to another since the judgement runs nothing."""
    host = SshHost(_target(sshd), remote_base=str(tmp_path / "runs"))
    data = tmp_path / "data.img"
    data.write_bytes(b"\1" * 4096)
    st = os.stat(data)
    write = ["sh", "-c", 'printf judged | dd of="$1" conv=notrunc 2>/dev/null; echo wrote', "w", str(data)]
    invocation = Invocation(write, targets=[Target(str(data), WRITE, "t")])
    judged = {str(data): (st.st_dev, st.st_ino)}
    proc = host.start(invocation, tmp_path / "run", write_watch=WriteWatch(set()), judged=judged)
    status, out, err = _run_remote(proc)
    assert (status, out) == (0, "wrote\n"), err
    assert data.read_bytes()[:6] == b"judged"
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    data.unlink()
    data.symlink_to(victim)
    proc = host.start(invocation, tmp_path / "run2", write_watch=WriteWatch(set()), judged=judged)
    status, out, err = _run_remote(proc)
    assert status == 125 and out == "", (status, out, err)
    assert f"{data} is no longer the file the write guard judged" in err
    assert victim.read_text() == "precious\n"
