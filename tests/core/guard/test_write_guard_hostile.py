"""A second hostile pass over the rebuilt guard (fio's own parsing, the write guard, the jail):
what got through, as regression tests against real fio, real loop devices and real files, and
the variations tried that were refused (so they stay refused).

Found:
- ``fio --showcmd`` (racperf's screening of a job file) loads the job's ioengine library when a
  section has an option fio's main table does not know (an engine option): code ran while the
  job file was only being read.
- ``$ncpus`` / ``$mb_memory`` / ``$pagesize`` with arithmetic make fio run ``which bc`` and
  ``echo ... | bc`` through the shell and $PATH, while racperf only reads the job.
- An allowed engine name with blanks ("psync ", " io_uring"): racperf stripped them and
  allowed it, fio does not and dlopen()s the name from the library path (LD_LIBRARY_PATH).
- A job name that is a symbolic link in the working directory to a regular file: fio
  (``lstat``) writes the link's target, racperf (``isfile``, which follows it) checked
  ``NAME.0.0``.
- racperf's own layout of a read-only job's new file wrote through a symbolic link planted at
  ``FILE.racperf-layout``.
- In a plan that also writes (no ``--readonly``), a read job on an existing file shorter than
  its size: fio lays the file out again (unlinks and rewrites it), and racperf had judged it a
  read.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.orchestration.run_plan import judge_run
from racperf_tui.tools import fio
from tests.helpers import needs_fio, racperf_cmd
from tests.helpers.loopdev import asm_file, ext4_loop_device, needs_loop
from tests.helpers.loopdev import sha256_of as digest

pytestmark = [needs_fio, needs_loop]


@pytest.fixture(scope="module")
def ext4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A loop device carrying ext4 (which `racperf check-target` refuses)."""
    with ext4_loop_device(tmp_path_factory.mktemp("ext4")) as path:
        yield path


def run_fio(
    args: list[str], tmp_path: Path, env: dict[str, str] | None = None, cwd: Path | str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        racperf_cmd() + ["run", "fio", "--data-dir", str(tmp_path / "data"), "--", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=cwd or tmp_path,
    )


EVIL_SO = """
#include <stdio.h>
__attribute__((constructor)) static void boom(void) { FILE *f = fopen("MARKER", "w"); if (f) fclose(f); }
"""


@pytest.fixture
def evil_library(tmp_path: Path) -> Path:
    source = tmp_path / "evil.c"
    source.write_text(EVIL_SO.replace("MARKER", str(tmp_path / "MARKER")))
    library = tmp_path / "evil.so"
    if subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], capture_output=True).returncode != 0:
        pytest.skip("no C compiler to build the library fio would load")
    return library


# ---------------------------------------------------------------------------- commands run as root


@pytest.mark.parametrize(
    "text",
    [
        # an engine option (unknown to fio's main table) makes fio load the engine while parsing
        "[x]\nioengine={lib}\nhipri\nfilename={scratch}\nsize=64k\n",
        "[global]\nioengine={lib}\n[x]\nnosuchoption=1\nfilename={scratch}\nsize=64k\n",
        "[x]\nioengine = {lib} ; the engine\nsqthread_poll=1\nfilename={scratch}\nsize=64k\n",
        "[x]\nioengine=${{ENG}}\nfixedbufs\nfilename={scratch}\nsize=64k\n",
        "[x]\ninclude eng.inc\nhipri\nfilename={scratch}\nsize=64k\n",
    ],
)
def test_reading_a_job_file_never_loads_its_engine(text: str, tmp_path: Path, evil_library: Path) -> None:
    (tmp_path / "eng.inc").write_text(f"ioengine={evil_library}\n")
    job = tmp_path / "engine.fio"
    job.write_text(text.format(lib=evil_library, scratch=tmp_path / "x"))
    done = run_fio([str(job)], tmp_path, env=dict(os.environ, ENG=str(evil_library)))
    assert done.returncode == 2, (done.stdout[-300:], done.stderr)
    assert "ioengine" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "MARKER").exists(), "fio loaded the library while racperf read the job file"


@pytest.mark.parametrize("spelled", ["psync ", "libaio\t", " io_uring"])
def test_an_allowed_engine_with_blanks_never_loads_a_library(spelled: str, tmp_path: Path, evil_library: Path) -> None:
    """fio does not strip the engine name: "psync " is no built-in engine, so fio dlopen()s
    "psync " from the library path (LD_LIBRARY_PATH=$ORACLE_HOME/lib on a database node,
    writable by the oracle user)."""
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    (lib_dir / spelled).write_bytes(evil_library.read_bytes())
    env = dict(os.environ, LD_LIBRARY_PATH=str(lib_dir))
    done = run_fio(
        ["--name=t", f"--filename={tmp_path / 'x'}", "--rw=read", "--size=64k", f"--ioengine={spelled}"],
        tmp_path,
        env=env,
    )
    assert done.returncode == 2 and "ioengine" in done.stderr, done.stderr
    job = tmp_path / "blank.fio"
    job.write_text(f"[t]\nfilename={tmp_path / 'x'}\nrw=read\nsize=64k\nioengine={spelled}\n")
    done = run_fio([str(job)], tmp_path, env=env)  # fio strips a job file line's end, not its "= "
    assert done.returncode == (0 if spelled == spelled.lstrip() else 2), done.stderr
    assert not (tmp_path / "MARKER").exists(), f"fio loaded {lib_dir / spelled}"


@pytest.fixture
def fake_bc(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH finds a `bc` (and a `which`) that leave a marker."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, real in (("bc", "/usr/bin/bc"), ("which", "/usr/bin/which")):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\ntouch {tmp_path / "MARKER"}\n[ -x {real} ] && exec {real} "$@"\nexit 0\n')
        script.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}")


@pytest.mark.parametrize("how", ["job file", "command line"])
def test_keyword_arithmetic_never_runs_bc(how: str, tmp_path: Path, fake_bc: dict[str, str]) -> None:
    scratch = tmp_path / "x"
    if how == "job file":
        job = tmp_path / "bc.fio"
        job.write_text(f"[t]\nfilename={scratch}\nrw=read\nsize=64k\nruntime=1\nnumjobs=$ncpus/2\n")
        args = [str(job)]
    else:
        args = ["--name=t", f"--filename={scratch}", "--rw=read", "--size=64k", "--runtime=1", "--description=$ncpus+1"]
    done = run_fio(args, tmp_path, env=fake_bc)
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "MARKER").exists(), "fio ran a command (bc) while racperf read the job"


# ---------------------------------------------------------------------------- writes that got through


def test_job_name_that_is_a_symlink_to_a_protected_file(tmp_path: Path) -> None:
    """fio uses the job name as the file when lstat() says it is not a regular file: a
    symbolic link is not, whatever it points to."""
    asm = asm_file(tmp_path / "asm.dat")
    (tmp_path / "lun").symlink_to(asm)
    before = digest(asm)
    done = run_fio(["--name=lun", "--rw=write", "--bs=64k", "--size=1m"], tmp_path)
    assert done.returncode == 2 and "Oracle ASM disk header" in done.stderr, (done.stdout[-300:], done.stderr)
    assert digest(asm) == before
    assert not (tmp_path / "lun.0.0").exists()


def test_layout_of_a_new_read_file_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    asm = asm_file(tmp_path / "asm.dat")
    (tmp_path / "bench.dat.racperf-layout").symlink_to(asm)
    before = digest(asm)
    done = run_fio(["--name=r", f"--filename={tmp_path / 'bench.dat'}", "--rw=read", "--size=1m"], tmp_path)
    assert "Traceback" not in done.stderr
    assert digest(asm) == before and asm.stat().st_size == 4 << 20
    if done.returncode == 0:  # laid out: a real file of its own, not the link
        assert (tmp_path / "bench.dat").is_file() and not (tmp_path / "bench.dat").is_symlink()


def test_read_job_of_a_writing_plan_never_lays_out_a_protected_file(tmp_path: Path) -> None:
    """Without --readonly (another job writes), fio unlinks and rewrites a read job's file when
    it is shorter than the job's size."""
    asm = asm_file(tmp_path / "asm.dat")
    before = digest(asm)
    done = run_fio(
        [
            "--name=w",
            f"--filename={tmp_path / 'scratch.dat'}",
            "--rw=write",
            "--size=1m",
            "--name=r",
            f"--filename={asm}",
            "--rw=read",
            "--size=8m",
        ],
        tmp_path,
    )
    assert done.returncode == 2 and "Oracle ASM disk header" in done.stderr, (done.stdout[-300:], done.stderr)
    assert digest(asm) == before and asm.stat().st_size == 4 << 20


def test_read_job_of_a_writing_plan_never_lays_out_a_file_held_open(tmp_path: Path) -> None:
    datafile = tmp_path / "users01.dbf"
    datafile.write_bytes(b"ORACLE" * 1000)
    holder = subprocess.Popen([sys.executable, "-c", f"f = open({str(datafile)!r}, 'rb'); import time; time.sleep(60)"])
    try:
        for _ in range(50):
            if any(
                os.path.realpath(f"/proc/{holder.pid}/fd/{fd}") == str(datafile)
                for fd in os.listdir(f"/proc/{holder.pid}/fd")
            ):
                break
            time.sleep(0.1)
        done = run_fio(
            [
                "--name=w",
                f"--filename={tmp_path / 'scratch.dat'}",
                "--rw=write",
                "--size=1m",
                "--name=r",
                f"--filename={datafile}",
                "--rw=randread",
                "--size=1m",
            ],
            tmp_path,
        )
        assert done.returncode == 2 and f"held open by process {holder.pid}" in done.stderr, done.stderr
    finally:
        holder.kill()
        holder.wait()
    assert datafile.read_bytes() == b"ORACLE" * 1000


def test_read_jobs_of_a_writing_plan_still_read_devices_and_plain_files(ext4: str, tmp_path: Path) -> None:
    """The fix judges a read job's regular files as writes only: reading a device (never laid
    out) next to a write job stays allowed, and so does a plain file of the user's."""
    plain = tmp_path / "plain.dat"
    plain.write_bytes(os.urandom(1 << 20))
    before = digest(ext4)
    done = run_fio(
        [
            "--name=w",
            f"--filename={tmp_path / 'scratch.dat'}",
            "--rw=write",
            "--size=1m",
            "--name=r",
            f"--filename={ext4}",
            "--rw=read",
            "--size=1m",
            "--name=p",
            f"--filename={plain}",
            "--rw=read",
            "--size=1m",
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert digest(ext4) == before


# ---------------------------------------------------------------------------- variations that held


@pytest.fixture
def spellings(ext4: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    node = tmp_path / "node"
    rdev = os.stat(ext4).st_rdev
    os.mknod(node, 0o600 | 0o060000, rdev)
    yield {"dev": ext4, "name": os.path.basename(ext4), "node": str(node), "tmp": str(tmp_path)}


HELD = [
    ["-name=t", "-filename={dev}", "-rw=write", "-size=1m"],  # single-dash long options
    ["--name", "t", "--filename", "{dev}", "--rw", "write", "--size", "1m"],  # --opt value
    ["--name=t", "--filename={node}", "--rw=write", "--size=1m"],  # a node made with mknod in /tmp
    ["--name=t", "--filename=:{tmp}/ok:{dev}", "--rw=write", "--size=1m"],  # leading ':' and a list
    ["--name={name}", "--directory=/dev", "--filename_format=$JOBNAME", "--rw=write", "--size=1m"],
    ["--name=t", "--filename={dev}", "--rw=randtrimwrite", "--size=1m"],
    ["--name=t", "--filename={dev}", "--rw=write", "--size=1m", "--readonly"],
    ["--name=t", "--filename={dev}", "--readwrite=trim", "--size=1m"],
]


@pytest.mark.parametrize("args", HELD)
def test_spellings_that_hold(args: list[str], spellings: dict[str, str], tmp_path: Path) -> None:
    before = digest(spellings["dev"])
    done = run_fio([a.format(**spellings) for a in args], tmp_path)
    assert done.returncode == 2 and "refusing to write to" in done.stderr, (done.stdout[-300:], done.stderr)
    assert "ext2/3/4" in done.stderr
    assert digest(spellings["dev"]) == before


@pytest.mark.parametrize(
    "files",
    [
        {"a.fio": "[global2]\nfilename={dev}\nrw=write\n[t]\nsize=1m\n"},  # [global2] is a global section
        {"a.fio": "[t]\nfilename={tmp}/ok\nrw=read\nsize=1m\n", "b.fio": "[u]\nfilename={dev}\nrw=write\nsize=1m\n"},
        {"a.fio": "[global]\nrw=write\n[t]\nfilename={tmp}/ok\nsize=1m\n[global]\nfilename={dev}\n[u]\nsize=1m\n"},
        {"a.fio": "[t]\nfilename={dev}\nrw=read\nsize=1m\nrw=write # the last one wins\n"},
    ],
)
def test_job_files_that_hold(files: dict[str, str], spellings: dict[str, str], tmp_path: Path) -> None:
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text.format(**spellings))
        paths.append(str(tmp_path / name))
    before = digest(spellings["dev"])
    done = run_fio(paths, tmp_path)
    assert done.returncode == 2 and f"refusing to write to {spellings['dev']}" in done.stderr, done.stderr
    assert digest(spellings["dev"]) == before


@pytest.mark.parametrize(
    "option, reason",
    [
        ("--mem=mmapshared:{asm}", "maps a file for I/O buffers"),
        ("--iomem=mmaphuge:{asm}", "maps a file for I/O buffers"),
        ("--zonemode=zbd", "reset zones"),
        ("--section=t", "runs only some sections"),
        ("--aux-path={tmp}", "state files outside"),
        ("--write_bw_log={asm}", "log files outside"),
        ("--ioengine=PSYNC", "not one of the engines"),
    ],
)
def test_options_that_hold(option: str, reason: str, tmp_path: Path) -> None:
    asm = asm_file(tmp_path / "asm.dat")
    before = digest(asm)
    done = run_fio(
        ["--name=t", f"--filename={tmp_path / 'ok'}", "--rw=read", "--size=64k", option.format(asm=asm, tmp=tmp_path)],
        tmp_path,
    )
    assert done.returncode == 2 and reason in done.stderr, done.stderr
    assert digest(asm) == before


@pytest.mark.parametrize("option", ["--directory= /dev", "--directory=/dev :/tmp", "--filename_format= /dev/x"])
def test_blanks_around_a_directory_are_refused(option: str, tmp_path: Path) -> None:
    """fio keeps them: ' /dev' is the relative directory ' ', not /dev, so racperf's check and
    fio's write would be about different paths."""
    with pytest.raises(ValueError, match="has blanks around a path"):
        judge_run(fio, "fio", {"extra_args": ["--name=t", option, "--rw=write", "--size=64k"]})
