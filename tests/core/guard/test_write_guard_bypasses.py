"""Every way a hostile tester got fio past the write guard, and every way an fio option ran a
command as root, as regression tests against real fio, a real ext4 loop device and real files.

Each refusal must name the option (or the target) and the reason; the device's checksum must
be unchanged; for command execution, no marker file may appear. The headless path
(``racperf run fio -- ...``) and the UI's launch path (``orchestration.run_plan.judge_run``, which the
form calls) are both exercised. A property test assembles random job files (comments,
includes, globals, aliases, several jobs, ${VAR}) and checks that none that writes the device
gets through.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from racperf_tui.orchestration.run_plan import PlanRefused, judge_run
from racperf_tui.tools import fio
from tests.helpers import needs_fio, racperf_cmd
from tests.helpers.loopdev import ext4_loop_device, loop_device, make_sparse_image, mounted, needs_loop, write_at
from tests.helpers.loopdev import sha256_of as digest

pytestmark = [needs_fio, needs_loop]


@pytest.fixture(scope="module")
def ext4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A loop device carrying ext4 (which `racperf check-target` refuses)."""
    with ext4_loop_device(tmp_path_factory.mktemp("ext4")) as path:
        yield path


def run_fio(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``racperf run fio -- ARGS``, headless."""
    return subprocess.run(
        racperf_cmd() + ["run", "fio", "--data-dir", str(tmp_path / "data"), "--", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )


def refused_headless(
    args: list[str], tmp_path: Path, device: str, *expected: str, env: dict[str, str] | None = None
) -> str:
    """Assert the headless run is refused with exit 2, naming each expected text, and the
    device is untouched; return the message."""
    before = digest(device)
    done = run_fio(args, tmp_path, env)
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr)
    for text in expected:
        assert text in done.stderr, (text, done.stderr)
    assert "Traceback" not in done.stderr
    assert digest(device) == before
    return done.stderr


def refused_in_ui_path(config: dict[str, object], *expected: str) -> str:
    with pytest.raises(PlanRefused if "refusing to write" in " ".join(expected) else ValueError) as info:
        judge_run(fio, "fio", config)
    for text in expected:
        assert text in str(info.value), (text, str(info.value))
    return str(info.value)


# ---------------------------------------------------------------------------- writes that got through


def test_job_file_inline_comment(ext4: str, tmp_path: Path) -> None:
    job = tmp_path / "lun.fio"
    job.write_text(f"[lun]\nfilename={ext4} ; scratch LUN\nrw=write\nsize=1m\n")
    refused_headless([str(job)], tmp_path, ext4, f"refusing to write to {ext4}", "ext2/3/4")
    refused_in_ui_path({"job_file": str(job)}, f"refusing to write to {ext4}", "ext2/3/4")


@pytest.mark.parametrize(
    "spelling",
    [
        ["--directory=/dev", "--filename={name}"],
        ["--filename_format=/dev/{name}"],
        ["--directory=/dev", "--filename_format=$jobname"],  # the job name is the device name
    ],
)
def test_directory_and_filename_format(spelling: list[str], ext4: str, tmp_path: Path) -> None:
    name = os.path.basename(ext4)
    args = [
        f"--name={name}" if "$jobname" in " ".join(spelling) else "--name=t",
        *[s.format(name=name) for s in spelling],
        "--rw=write",
        "--size=1m",
    ]
    refused_headless(args, tmp_path, ext4, f"refusing to write to {ext4}", "ext2/3/4")


def test_job_name_used_as_the_file(ext4: str, tmp_path: Path) -> None:
    """fio writes to the job name itself when it names something that is not a regular file."""
    name = os.path.basename(ext4)
    done = subprocess.run(
        racperf_cmd()
        + ["run", "fio", "--data-dir", str(tmp_path / "data"), "--", f"--name={name}", "--rw=write", "--size=1m"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/dev",
    )
    assert done.returncode == 2 and f"refusing to write to {ext4}" in done.stderr, done.stderr


def test_filename_from_an_include_and_from_an_environment_variable(ext4: str, tmp_path: Path) -> None:
    (tmp_path / "lun.inc").write_text(f"filename={ext4}\n")
    job = tmp_path / "inc.fio"
    job.write_text("[global]\nrw=randwrite\nsize=1m\n[a]\ninclude lun.inc\n")
    refused_headless([str(job)], tmp_path, ext4, f"refusing to write to {ext4}")
    env_job = tmp_path / "env.fio"
    env_job.write_text("[a]\nfilename=${LUN}\nrw=write\nsize=1m\n")
    refused_headless([str(env_job)], tmp_path, ext4, f"refusing to write to {ext4}", env=dict(os.environ, LUN=ext4))


def test_last_of_an_option_and_its_aliases_wins(ext4: str, tmp_path: Path) -> None:
    refused_headless(
        ["--name=t", f"--filename={ext4}", "--rw=read", "--readwrite=write", "--size=1m"],
        tmp_path,
        ext4,
        f"refusing to write to {ext4}",
        "rw=write",
    )


def test_each_job_has_its_own_rw(ext4: str, tmp_path: Path) -> None:
    scratch = tmp_path / "x"
    refused_headless(
        [
            "--name=a",
            f"--filename={ext4}",
            "--rw=write",
            "--size=1m",
            "--name=b",
            f"--filename={scratch}",
            "--rw=read",
            "--size=1m",
        ],
        tmp_path,
        ext4,
        f"refusing to write to {ext4}",
        "job 'a'",
    )


@pytest.mark.parametrize(
    "option, reason",
    [
        ("--read_iolog={log}", "replays an I/O log"),
        ("--replay_redirect={dev}", "replays an I/O log onto a device"),
        ("--write_iolog={log}", "writes an I/O log file"),
    ],
)
def test_iolog_replay_is_refused(option: str, reason: str, ext4: str, tmp_path: Path) -> None:
    log = tmp_path / "io.log"
    log.write_text(f"fio version 2 iolog\n{ext4} add\n{ext4} open\n{ext4} write 0 4096\n{ext4} close\n")
    refused_headless(
        ["--name=t", option.format(log=log, dev=ext4), "--size=1m"],
        tmp_path,
        ext4,
        option.split("=")[0].lstrip("-"),
        reason,
        "racperf refuses it",
    )


def test_profile_act_is_refused(ext4: str, tmp_path: Path) -> None:
    refused_headless(
        ["--profile=act", f"--device-names={ext4}"], tmp_path, ext4, "--profile", "loads a built-in profile"
    )


def test_short_output_option_on_a_read_only_run(ext4: str, tmp_path: Path) -> None:
    refused_headless(
        ["-o", ext4, "--name=t", f"--filename={tmp_path / 'x'}", "--size=1m", "--rw=read"],
        tmp_path,
        ext4,
        "short option -o is not passed to fio",
    )
    refused_headless(
        [f"--output={ext4}", "--name=t", f"--filename={tmp_path / 'x'}", "--size=1m"],
        tmp_path,
        ext4,
        "--output writes fio's report to a file",
    )


def test_headless_runs_check_regular_files(ext4: str, tmp_path: Path) -> None:
    # the backing file of a mounted loop device
    image = make_sparse_image(tmp_path / "backing.img", 16)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    with loop_device(image) as loop, mounted(loop.path, tmp_path / "mnt"):
        before = digest(str(image))
        done = run_fio(["--name=t", f"--filename={image}", "--rw=write", "--size=1m"], tmp_path)
        assert done.returncode == 2 and f"is the backing file of loop device {loop.name}" in done.stderr
        assert digest(str(image)) == before
    # a file carrying an ASM disk header
    asm = make_sparse_image(tmp_path / "asm.dat", 4)
    write_at(asm, 32, b"ORCLDISK")
    before = digest(str(asm))
    done = run_fio(["--name=t", f"--filename={asm}", "--rw=randwrite", "--size=1m"], tmp_path)
    assert done.returncode == 2 and "Oracle ASM disk header" in done.stderr
    assert digest(str(asm)) == before
    # a file another process holds open (a live datafile)
    datafile = tmp_path / "system01.dbf"
    datafile.write_bytes(b"ORACLE" * 1000)
    holder = subprocess.Popen([sys.executable, "-c", f"f = open({str(datafile)!r}, 'rb'); import time; time.sleep(60)"])
    try:
        deadline = 50
        while deadline and not any(
            os.path.realpath(f"/proc/{holder.pid}/fd/{fd}") == str(datafile)
            for fd in os.listdir(f"/proc/{holder.pid}/fd")
        ):
            import time

            time.sleep(0.1)
            deadline -= 1
        done = run_fio(["--name=t", f"--filename={datafile}", "--rw=write", "--size=1m"], tmp_path)
        assert done.returncode == 2 and f"is held open by process {holder.pid}" in done.stderr, done.stderr
    finally:
        holder.kill()
        holder.wait()
    assert datafile.read_bytes() == b"ORACLE" * 1000


@pytest.mark.parametrize(
    "args, reason",
    [
        (["--rw=read", "--unlink=1"], "unlink=1 deletes the job's files"),
        (["--rw=read", "--unlink_each_loop=1"], "unlink_each_loop=1 deletes the job's files"),
        (["--ioengine=filedelete"], "ioengine=filedelete deletes files"),
    ],
)
def test_read_only_runs_that_delete_are_refused(args: list[str], reason: str, tmp_path: Path) -> None:
    keep = tmp_path / "keep.dat"
    keep.write_bytes(b"x" * 65536)
    done = run_fio(["--name=t", f"--filename={keep}", "--size=64k", *args], tmp_path)
    assert done.returncode == 2 and reason in done.stderr, done.stderr
    assert keep.read_bytes() == b"x" * 65536


@pytest.mark.parametrize("rw", ["read", "write"])
def test_a_missing_dev_path_is_refused_for_reads_and_writes(rw: str, tmp_path: Path) -> None:
    typo = "/dev/mapper/racperf-no-such-lun"
    done = run_fio(["--name=t", f"--filename={typo}", f"--rw={rw}", "--size=1m"], tmp_path)
    assert done.returncode == 2 and f"{typo}" in done.stderr and "no such device" in done.stderr, done.stderr
    assert not os.path.exists(typo)
    # the override does not create it either
    with pytest.raises(ValueError, match="no such device"):
        judge_run(
            fio,
            "fio",
            {"extra_args": ["--name=t", f"--filename={typo}", f"--rw={rw}", "--size=1m"], "destructive": True},
        )


def test_override_lifts_only_the_named_device(ext4: str, tmp_path: Path) -> None:
    config = {"extra_args": ["--name=t", f"--filename={ext4}", "--rw=write", "--size=1m"]}
    refused_in_ui_path(config, f"refusing to write to {ext4}")
    other = {"extra_args": config["extra_args"], "destructive_targets": ["/dev/some-other-disk"]}
    refused_in_ui_path(other, f"refusing to write to {ext4}")
    lifted = judge_run(fio, "fio", {**config, "destructive_targets": [ext4]})
    assert [t.path for t, _ in lifted.guard.overridden] == [ext4] and lifted.guard.device_nodes == [ext4]
    # the override never unlocks command execution
    with pytest.raises(ValueError, match="exec_prerun"):
        judge_run(fio, "fio", {"extra_args": [*config["extra_args"], "--exec_prerun=/bin/true"], "destructive": True})


# ---------------------------------------------------------------------------- commands run as root


EVIL_SO = """
#include <stdio.h>
__attribute__((constructor)) static void boom(void) { FILE *f = fopen("MARKER", "w"); if (f) fclose(f); }
"""


@pytest.fixture
def evil_library(tmp_path: Path) -> Path:
    source = tmp_path / "evil.c"
    source.write_text(EVIL_SO.replace("MARKER", str(tmp_path / "MARKER")))
    library = tmp_path / "evil.so"
    compiled = subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], capture_output=True)
    if compiled.returncode != 0:
        pytest.skip("no C compiler to build the library fio would load")
    return library


@pytest.mark.parametrize(
    "make_args, reason",
    [
        (lambda m, lib: ["--exec_prer=touch " + str(m), "--name=t"], "exec_prerun"),
        (lambda m, lib: ["--name=t", "--exec_postru=touch " + str(m)], "exec_postrun"),
        (lambda m, lib: ["-B", "1", "-H", "touch " + str(m), "--name=t"], "short option -B"),
        (lambda m, lib: ["-S"], "short option -S"),
        (lambda m, lib: ["--server"], "starts a fio server"),
        (lambda m, lib: [f"--ioengine={lib}", "--name=t"], "loads code from a library"),
        (lambda m, lib: [f"--ioengin=external:{lib}", "--name=t"], "loads code from a library"),
        (
            lambda m, lib: ["--ioengin=exec", "--program=/usr/bin/touch", f"--arguments={m}", "--name=t"],
            "ioengine=exec runs a program",
        ),
        (lambda m, lib: ["--name=t", "--trigger-file=/tmp/x", f"--trigger=touch {m}"], "--trigger"),
        (lambda m, lib: ["--name=t", f"--exec_pre=touch {m}"], "exec_prerun"),
    ],
)
def test_options_that_run_commands(make_args, reason: str, tmp_path: Path, evil_library: Path) -> None:
    marker = tmp_path / "MARKER"
    args = make_args(marker, evil_library) + [f"--filename={tmp_path / 'x'}", "--size=64k", "--runtime=1"]
    done = run_fio(args, tmp_path)
    assert done.returncode == 2 and reason in done.stderr, done.stderr
    assert not marker.exists()


def test_job_file_engine_with_a_comment_and_append_terse(tmp_path: Path, evil_library: Path) -> None:
    marker = tmp_path / "MARKER"
    job = tmp_path / "exec.fio"
    job.write_text(
        f"[x]\nioengine=exec ;comment\nprogram=/usr/bin/touch\narguments={marker}\n"
        f"filename={tmp_path / 'x'}\nsize=64k\n"
    )
    done = run_fio([str(job)], tmp_path)
    assert done.returncode == 2 and "ioengine=exec runs a program" in done.stderr, done.stderr
    lib_job = tmp_path / "lib.fio"
    lib_job.write_text(f"[x]\nioengine={evil_library}\nfilename={tmp_path / 'x'}\nsize=64k\n")
    done = run_fio([str(lib_job)], tmp_path)
    assert done.returncode == 2 and "loads code from a library" in done.stderr, done.stderr
    evil = tmp_path / "evil.fio"
    evil.write_text(f"[x]\nexec_prerun=touch {marker}\nfilename={tmp_path / 'x'}\nsize=64k\n")
    done = run_fio(["--append-terse", str(evil)], tmp_path)
    assert done.returncode == 2 and "--append-terse" in done.stderr and "exec_prerun" in done.stderr, done.stderr
    assert not marker.exists()


# ---------------------------------------------------------------------------- random job files


SPELLINGS = ("path", "dir+name", "format")
WRITE_RW = ("write", "randwrite", "rw", "randrw", "trim", "trimwrite", "readwrite")
READ_RW = ("read", "randread")
HARMLESS = (
    "bs=4k",
    "iodepth=2",
    "direct=0",
    "norandommap",
    "blocksize=8k",
    "numjobs=1",
    "thread",
    "ioengine=psync",
    "runtime=1",
    "time_based=0",
    "group_reporting",
)


def _device_lines(spelling: str, device: str) -> list[str]:
    if spelling == "path":
        return [f"filename={device}"]
    if spelling == "dir+name":
        return ["directory=/dev", f"filename={os.path.basename(device)}"]
    return [f"filename_format={device}"]


def _written_paths(options: dict[str, str]) -> list[str]:
    """The model of fio's file naming the test trusts: filename (in directory) when set, else
    filename_format (in directory); a write rw writes them."""
    directory = options.get("directory")
    name = options.get("filename") or options.get("filename_format") or "jobname.0.0"
    path = f"{directory}/{name}" if directory else name
    return [os.path.normpath(path)] if options.get("rw", "read") not in READ_RW else []


@st.composite
def job_files(draw: st.DrawFn, device: str, scratch: str) -> tuple[str, str | None, bool]:
    """(job file text, include file text, whether some job writes the device): a [global]
    section maybe setting the target and rw, then jobs each maybe overriding them."""

    def section() -> tuple[list[str], dict[str, str]]:
        lines: list[str] = []
        options: dict[str, str] = {}
        target = draw(st.sampled_from(["device", "scratch", None]))
        rw = draw(st.sampled_from(WRITE_RW + READ_RW + (None,)))
        if target == "device":
            for line in _device_lines(draw(st.sampled_from(SPELLINGS)), device):
                lines.append(line)
                key, _, value = line.partition("=")
                options[key] = value
        elif target == "scratch":
            lines.append(f"filename={scratch}")
            options["filename"] = scratch
        if rw is not None:
            key = draw(st.sampled_from(["rw", "readwrite"]))
            lines.append(f"{key}={rw}")
            options["rw"] = rw
        lines += draw(st.lists(st.sampled_from(HARMLESS), max_size=3))
        lines = draw(st.permutations(lines))
        comment = draw(st.sampled_from(["", " ; a comment", " # note", "   "]))
        return [line + comment for line in lines], options

    text = ["; random job"]
    global_lines, global_options = section()
    if global_lines or draw(st.booleans()):
        text += ["[global]", "size=64k", *global_lines]
    else:
        global_options = {}
    writes_device = False
    include_text = None
    for index in range(draw(st.integers(1, 3))):
        lines, options = section()
        effective = {**global_options, **options}
        if not any(k in effective for k in ("filename", "filename_format")):
            lines.append(f"filename={scratch}")
            effective["filename"] = scratch
        if draw(st.booleans()) and include_text is None:
            include_text = "\n".join(lines) + "\n"
            lines = ["include lun.inc"]
        text += [f"[job{index}]", "size=64k", *lines]
        if device in _written_paths(effective):
            writes_device = True
    return "\n".join(text) + "\n", include_text, writes_device


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_random_job_files_never_reach_an_uncleared_device(data: st.DataObject, ext4: str, tmp_path: Path) -> None:
    scratch = str(tmp_path / "scratch.dat")
    text, include, writes_device = data.draw(job_files(ext4, scratch))
    job = tmp_path / "random.fio"
    job.write_text(text)
    if include is not None:
        (tmp_path / "lun.inc").write_text(include)
    try:
        judged = judge_run(fio, "fio", {"job_file": str(job)})
    except ValueError as refusal:
        if writes_device:
            assert f"refusing to write to {ext4}" in str(refusal), (text, include, str(refusal))
        return
    assert not writes_device, textwrap.indent(text + (include or ""), "  ")
    assert all(not (t.path == ext4 and t.access == "write") for t in judged.invocation.targets)


# ---------------------------------------------------------------------------- the kernel's net, wired


def test_a_cleared_device_runs_in_the_device_jail_with_the_write_watch(tmp_path: Path) -> None:
    """A blank loop device passes the guard; fio writes it from inside a private /dev that
    holds only that node, and the run's record says which protections were active."""
    image = make_sparse_image(tmp_path / "blank.img", 16)
    with loop_device(image) as loop:
        done = run_fio(
            [
                "--name=w",
                f"--filename={loop.path}",
                "--rw=randwrite",
                "--bs=4k",
                "--size=4m",
                "--runtime=1",
                "--time_based",
                "--direct=1",
            ],
            tmp_path,
        )
        assert done.returncode == 0, done.stderr
        shown = subprocess.run(
            racperf_cmd() + ["runs", "show", "1", "--data-dir", str(tmp_path / "data")],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    assert f"  write {loop.path}  (command-line job 'w' (rw=randwrite))" in shown
    assert f"  - device jail: /dev holds only {loop.path}" in shown
    assert "  - write watch: the run is killed if it opens an uncleared block device for writing" in shown
    assert "racperf_tui.core.guard.devjail --allow " + loop.path + " --write " + loop.path + " --write " in shown
    assert "  - read-only mounts: every mount read-only and nodev for the run; writable: " + loop.path in shown
    assert image.read_bytes()[: 1 << 20] != bytes(1 << 20)  # fio really wrote the device
