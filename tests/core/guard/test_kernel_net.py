"""The kernel enforces the judged plan: a deliberately wrong model (the guard clears file A, fio
writes B) is stopped by the jail's read-only mounts, nodev and Landlock, with real fio and real
victims (an ext4 loop device reached through a node made outside /dev, a file with an ASM
header, a file of ``nobody``), and each layer on its own stops a write it was not given."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.guard import landlock, strict_mounts
from racperf_tui.core.guard.devjail import jail_argv, kernel_net
from racperf_tui.core.store import Store
from racperf_tui.orchestration import supervisor
from racperf_tui.orchestration.run_plan import JudgedRun
from racperf_tui.orchestration.runs import run_foreground
from tests.helpers import REPO, needs_fio
from tests.helpers.loopdev import asm_file, ext4_loop_device, loop_device, make_sparse_image, needs_loop, sha256_of

pytestmark = [pytest.mark.timeout(120), pytest.mark.root]

NOBODY = 65534


def _wrong_model(monkeypatch: pytest.MonkeyPatch, cleared: Path, written: str) -> None:
    """The supervisor's guard judges the plan writing ``cleared`` (and clears it), then the
    job file fio runs names ``written`` instead: what a wrong model of fio would do."""
    real_judge = supervisor.judge_run

    def judge_then_swap(*args: object, **kwargs: object) -> JudgedRun:
        judged = real_judge(*args, **kwargs)  # type: ignore[arg-type]
        files = {name: text.replace(str(cleared), written) for name, text in judged.invocation.files.items()}
        assert files != dict(judged.invocation.files), "the job file names the cleared path"
        return dataclasses.replace(judged, invocation=dataclasses.replace(judged.invocation, files=files))

    monkeypatch.setattr(supervisor, "judge_run", judge_then_swap)


def _fio_writes(target: Path) -> dict:
    return {"extra_args": ["--name=wrong", f"--filename={target}", "--size=1m", "--rw=write", "--bs=64k"]}


@pytest.fixture
def cleared(tmp_path: Path) -> Path:
    """The file the guard clears: new, in a directory of its own."""
    directory = tmp_path / "cleared"
    directory.mkdir()
    return directory / "a.img"


def _run_wrong(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cleared: Path, victim: str) -> tuple[RunState, str]:
    _wrong_model(monkeypatch, cleared, victim)
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    record = run_foreground("fio", _fio_writes(cleared), data)
    with Store.open(data) as store:
        safety = store.raw_output(record.id, "safety")
    assert "read-only mounts: every mount read-only and nodev" in safety
    return record.state, record.message or ""


@needs_fio
def test_wrong_model_cannot_overwrite_a_file_with_an_asm_header(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cleared: Path
) -> None:
    victim = asm_file(tmp_path / "asm.img")
    before = sha256_of(victim)
    state, message = _run_wrong(monkeypatch, tmp_path, cleared, str(victim))
    assert sha256_of(victim) == before
    assert state is RunState.FAILED
    assert message.startswith("the kernel refused a write the write guard did not clear"), message
    assert "Read-only file system" in message and str(victim) in message


@needs_fio
def test_wrong_model_cannot_overwrite_a_file_of_nobody(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cleared: Path
) -> None:
    victim = tmp_path / "theirs.dat"
    victim.write_bytes(b"nobody's data\n" * 100_000)
    os.chown(victim, NOBODY, NOBODY)
    before = sha256_of(victim)
    state, message = _run_wrong(monkeypatch, tmp_path, cleared, str(victim))
    assert sha256_of(victim) == before and victim.stat().st_uid == NOBODY
    assert state is RunState.FAILED and "Read-only file system" in message, message


@needs_fio
def test_wrong_model_cannot_create_a_file_next_to_the_cleared_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cleared: Path
) -> None:
    neighbour = cleared.parent / "b.img"
    state, message = _run_wrong(monkeypatch, tmp_path, cleared, str(neighbour))
    assert not neighbour.exists()
    assert state is RunState.FAILED and "Read-only file system" in message, message


@needs_fio
@needs_loop
def test_wrong_model_cannot_write_an_ext4_device_through_a_node_made_outside_dev(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cleared: Path
) -> None:
    with ext4_loop_device(tmp_path) as device:
        rdev = os.stat(device).st_rdev
        node = tmp_path / "disk"
        os.mknod(node, stat.S_IFBLK | 0o600, rdev)
        before = sha256_of(device)
        state, message = _run_wrong(monkeypatch, tmp_path, cleared, str(node))
        assert sha256_of(device) == before
    assert state is RunState.FAILED, message
    # nodev on every mount: the node cannot even be opened
    assert "Permission denied" in message and str(node) in message, message


@needs_fio
def test_the_cleared_file_is_written_and_the_record_names_every_layer(tmp_path: Path, cleared: Path) -> None:
    data = tmp_path / "data"
    record = run_foreground("fio", _fio_writes(cleared), data)
    assert record.state is RunState.SUCCEEDED, record.message
    assert cleared.stat().st_size == 1 << 20
    with Store.open(data) as store:
        safety = store.raw_output(record.id, "safety")
    assert f"writable: {cleared}, {data / 'runs' / str(record.id)}" in safety or str(cleared) in safety
    abi = landlock.landlock_abi()[0]
    assert f"Landlock (ABI {abi}): writes only to {cleared}" in safety
    assert f"Landlock (ABI {abi}): executes only " in safety


# ------------------------------------------------------------------- each layer on its own


def _in_child(action: Callable[[], None]) -> int:
    """Run ``action`` in a forked child (the namespace and Landlock stay there); its exit
    status: 0 when it returned, the errno of the OSError it raised."""
    child = os.fork()
    if child == 0:
        code = 99
        try:
            action()
            code = 0
        except OSError as exc:
            code = exc.errno or 98
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    return os.waitstatus_to_exitcode(status)


def _write(path: Path) -> None:
    with open(path, "r+b") as file:
        file.write(b"X")


@pytest.fixture
def victim(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "victim"
    path.write_bytes(b"precious")
    yield path
    assert path.read_bytes() == b"precious"


@pytest.mark.parametrize("use_mount_setattr", [True, False], ids=["mount_setattr", "remount-each"])
def test_read_only_mounts_alone_refuse_with_erofs(victim: Path, tmp_path: Path, use_mount_setattr: bool) -> None:
    allowed = tmp_path / "allowed"
    allowed.write_bytes(b"")

    def jail() -> None:
        strict_mounts.enter_private_namespace()
        strict_mounts.make_all_read_only(use_mount_setattr=use_mount_setattr)
        strict_mounts.bind_writable(str(allowed))
        _write(allowed)
        _write(victim)

    assert _in_child(jail) == 30  # EROFS
    assert allowed.read_bytes() == b"X"


def test_landlock_alone_refuses_with_eacces(victim: Path, tmp_path: Path) -> None:
    abi, why = landlock.landlock_abi()
    if not abi:
        pytest.skip(why)
    allowed = tmp_path / "allowed"
    allowed.write_bytes(b"")
    workdir = tmp_path / "work"
    workdir.mkdir()

    def restricted() -> None:
        landlock.restrict_self(abi, landlock.WriteRules((str(allowed),), (str(workdir),)), None)
        _write(allowed)
        (workdir / "made").write_text("ok")
        try:
            (tmp_path / "elsewhere").write_text("no")
        except PermissionError:
            pass
        else:
            os._exit(97)
        _write(victim)

    assert _in_child(restricted) == 13  # EACCES
    assert allowed.read_bytes() == b"X" and (workdir / "made").read_text() == "ok"
    assert not (tmp_path / "elsewhere").exists()


def test_landlock_restricts_execution_to_the_program_and_its_loader(tmp_path: Path) -> None:
    plan = landlock.exec_plan(sys.executable)
    assert plan.allowed is not None and os.path.realpath(sys.executable) in plan.allowed
    loader = landlock.elf_interpreter(os.path.realpath(sys.executable))
    assert loader and os.path.realpath(loader) in plan.allowed
    done = subprocess.run(
        jail_argv([sys.executable, "-c", "import subprocess; subprocess.run(['/bin/true'])"], [], [str(tmp_path)]),
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert done.returncode == 1 and "PermissionError" in done.stderr, done.stderr
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\n")
    assert landlock.exec_plan(str(script)).allowed is None


def test_kernel_net_names_what_it_gives(tmp_path: Path) -> None:
    net = kernel_net(["fio"], ["/dev/loop9"], [str(tmp_path)])
    assert net.jailed and not net.missing
    assert net.active[0] == f"read-only mounts: every mount read-only and nodev for the run; writable: {tmp_path}"
    assert net.active[1] == "device jail: /dev holds only /dev/loop9"


def test_a_missing_write_target_is_made_as_fio_would(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "file.img"
    done = subprocess.run(
        jail_argv([sys.executable, "-c", f"open({str(target)!r}, 'r+b').write(b'ok')"], [], [str(target)]),
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == b"ok"
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700


def test_make_sparse_image_is_untouched_by_a_jail_that_did_not_clear_it(tmp_path: Path) -> None:
    image = make_sparse_image(tmp_path / "img", 1)
    before = sha256_of(image)
    done = subprocess.run(
        jail_argv(["dd", "if=/dev/zero", f"of={image}", "bs=4k", "count=1", "conv=notrunc"], [], []),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0 and "Read-only file system" in done.stderr
    assert sha256_of(image) == before


def test_landlock_stops_a_write_through_another_namespace_root(victim: Path, tmp_path: Path) -> None:
    """/proc/PID/root of a process outside the jail leads to the host's mounts, which are not
    read-only; Landlock follows the file, not the path, and refuses it."""
    if not landlock.landlock_abi()[0]:
        pytest.skip(landlock.landlock_abi()[1])
    escape = f"/proc/{os.getpid()}/root{victim}"
    code = f"open({escape!r}, 'r+b').write(b'X')"
    (tmp_path / "run").mkdir()
    done = subprocess.run(
        jail_argv([sys.executable, "-c", code], [], [str(tmp_path / "run")]),
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert done.returncode == 1 and "PermissionError: [Errno 13]" in done.stderr, done.stderr


@needs_loop
def test_a_device_cleared_for_reading_reads_but_is_not_written(tmp_path: Path) -> None:
    """A cleared node made outside /dev is bound without nodev so it opens; cleared for reading
    only, Landlock refuses to open it for writing (without Landlock only the write watch would)."""
    if not landlock.landlock_abi()[0]:
        pytest.skip(landlock.landlock_abi()[1])
    image = make_sparse_image(tmp_path / "dev.img", 4)
    with loop_device(image) as loop:
        node = tmp_path / "node"
        os.mknod(node, stat.S_IFBLK | 0o600, os.stat(loop.path).st_rdev)
        before = sha256_of(loop.path)
        code = (
            f"import sys; open({str(node)!r}, 'rb').read(4096); print('read', flush=True); "
            f"open({str(node)!r}, 'r+b').write(b'X')"
        )
        (tmp_path / "run").mkdir()
        done = subprocess.run(
            jail_argv([sys.executable, "-c", code], [str(node)], [str(tmp_path / "run")]),
            capture_output=True,
            text=True,
            timeout=30,
            cwd=REPO,
        )
        assert sha256_of(loop.path) == before
    assert done.stdout == "read\n" and "PermissionError: [Errno 13]" in done.stderr, done.stderr


def test_the_working_directory_is_the_writable_bind(tmp_path: Path) -> None:
    """A tool started in the run's directory writes there by relative names (ORION's result
    files): its working directory must be the writable bind, not the read-only mount beneath."""
    run = tmp_path / "run"
    run.mkdir()
    code = "open('result.txt', 'w').write('ok')"
    done = subprocess.run(
        jail_argv([sys.executable, "-c", code], [], [str(run)]),
        capture_output=True,
        text=True,
        timeout=30,
        cwd=run,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert (run / "result.txt").read_text() == "ok"
