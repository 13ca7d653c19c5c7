"""A hostile review of fio job files for a run on another node (branch nodejobs) and of the
pair's free port on a node (branch smallfixes), over a real OpenSSH sshd (this machine as the
node) with real fio.

Each test names the hole it closes:

- fio before 3.15 (RHEL/OL 7 ship 3.7) reads a job file line in pieces of 4095 bytes
  (``fgets(string, 4096, f)``, 8192 since 3.15): the piece after the cut is a line of its
  own. A line racperf screened as ``description=...`` hid ``ioengine=external:LIB`` for such a
  fio; an engine option on the next line makes fio dlopen the library while racperf's
  ``--showcmd`` reads the file (measured with a fio-3.14 built from source: the library's
  constructor ran). racperf's own job file carries the same risk for a long value typed on the
  command line (its line is cut the same way when fio reads it back).
- fio uses a job's name as its file when the name is something other than a regular file in
  fio's working directory (init.c ``exists_and_not_regfile``). racperf asked this machine's
  working directory; on a node fio ran in the login's home, so a directory there named like
  the job turned ``directory=D`` + ``[NAME]`` into D/NAME, a file the write guard never saw.
- a job file or include in /proc or /sys is a regular file whose read can block for ever or
  take what it reads from someone else (/proc/kmsg eats the kernel log's lines): refused
  before it is opened, here and for a node.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost
from racperf_tui.orchestration.run_plan import judge_run
from racperf_tui.tools import fio
from racperf_tui.tools.fio import options as fio_options
from racperf_tui.tools.fio.plan import FioPlanError
from tests.helpers.cluster_helpers import isolated_home, remote_runs  # noqa: F401
from tests.helpers.sshd_helpers import Sshd, start_sshd

pytestmark = [pytest.mark.usefixtures("isolated_home", "remote_runs")]

FIO = shutil.which("fio") or "/usr/bin/fio"
#: this machine's cache of its own fio's table (taken before isolated_home moves the cache)
USER_CACHE = fio_options._cache_dir()
#: fio before 3.15 reads a job file line in pieces of this many bytes (fgets with 4096)
OLD_FIO_PIECE = 4095

EVIL_SO = """
#include <stdio.h>
__attribute__((constructor)) static void boom(void) { FILE *f = fopen("MARKER", "w"); if (f) fclose(f); }
"""


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = start_sshd(tmp_path_factory.mktemp("review-sshd"))
    try:
        yield server
    finally:
        server.stop()


def host_of(server: Sshd, name: str = "rac1") -> SshHost:
    target = SshTarget(server.host, server.user, server.port, str(server.user_key), (str(server.known_hosts),))
    return SshHost(target, name=name)


def local_table_file() -> Path:
    """This machine's fio table in this machine's cache (read once if it is not there)."""
    local = USER_CACHE / f"fio-options-{fio_options._cache_key(FIO)}.json"
    if not local.exists():
        saved = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(USER_CACHE.parent)
        try:
            fio_options.option_table(FIO)
        finally:
            os.environ["XDG_CACHE_HOME"] = saved or ""
    return local


@pytest.fixture(autouse=True)
def local_table() -> None:
    """The test's cache holds this machine's table: no test reads it cold."""
    slot = fio_options._cache_dir() / f"fio-options-{fio_options._cache_key(FIO)}.json"
    if not slot.exists():
        slot.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local_table_file(), slot)


def seed_node_table(host: SshHost) -> None:
    """The node is this machine: its fio's table is this machine's (tests/test_fio_node_jobs.py
    proves them equal), put in the node's cache slot so no test reads it cold over SSH."""
    slot = fio_options._cache_dir() / f"fio-options-{fio_options._remote_cache_key(FIO, host)}.json"
    if not slot.exists():
        slot.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local_table_file(), slot)


@pytest.fixture
def host(node: Sshd) -> Iterator[SshHost]:
    there = host_of(node)
    seed_node_table(there)
    yield there
    ssh.close_all()


@pytest.fixture
def evil_library(tmp_path: Path) -> Path:
    source = tmp_path / "evil.c"
    source.write_text(EVIL_SO.replace("MARKER", str(tmp_path / "MARKER")))
    library = tmp_path / "evil.so"
    if subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], capture_output=True).returncode != 0:
        pytest.skip("no C compiler to build the library fio would load")
    return library


def _hidden_engine_line(library: Path) -> str:
    """A description line whose piece after fio 3.14's cut is ``ioengine=external:LIB``."""
    head = "description="
    return head + "A" * (OLD_FIO_PIECE - len(head)) + f"ioengine=external:{library}"


@pytest.mark.parametrize("where", ["here", "node"])
def test_a_line_an_older_fio_reads_in_two_pieces_is_refused_before_fio_reads_it(
    where: str, request: pytest.FixtureRequest, tmp_path: Path, evil_library: Path
) -> None:
    """fio 3.33 reads one description line (the plan was accepted); fio 3.14 reads its tail as
    ``ioengine=external:LIB`` and loads LIB at ``hipri`` (an engine option): refused, naming the
    line and fio's smaller buffer, before any fio reads the file."""
    on = request.getfixturevalue("host") if where == "node" else None
    job = tmp_path / "job.fio"
    head = "[r]\nrw=read\nfilename=/dev/null\nsize=4k\nioengine=pvsync2\n"
    job.write_text(head + _hidden_engine_line(evil_library) + "\nhipri\n")
    with pytest.raises(FioPlanError) as refused:
        fio.invocation({"job_file": str(job)}, None, on)
    said = str(refused.value)
    assert f"job file {job}, line 6: longer than" in said and "4094 bytes" in said, said
    assert not (tmp_path / "MARKER").exists()


def test_a_value_that_would_make_racperfs_own_job_file_line_too_long_is_refused(
    tmp_path: Path, evil_library: Path
) -> None:
    """The same cut in racperf's job file: a description typed on the command line is written
    as one line, which fio before 3.15 reads back (and runs) in two pieces."""
    value = _hidden_engine_line(evil_library).removeprefix("description=")
    args = ["--name=r", "--rw=read", "--filename=/dev/null", "--size=4k", "--ioengine=pvsync2"]
    with pytest.raises(FioPlanError) as refused:
        fio.invocation({"extra_args": [*args, f"--description={value}", "--hipri"]})
    said = str(refused.value)
    assert "job [r]" in said.replace("command-line job 'r'", "job [r]") and "description" in said, said
    assert "4094 bytes" in said, said
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize("where", ["here", "node"])
@pytest.mark.parametrize("pseudo", ["/proc/self/status", "/sys/kernel/mm/transparent_hugepage/enabled"])
def test_a_proc_or_sys_file_is_never_read_as_a_job_file(
    where: str, pseudo: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """As an include and as the job file itself: refused naming the file system, before it is
    opened (/proc/kmsg, a regular file too, would block racperf's planning and eat the kernel
    log's lines; it is not read here for that reason)."""
    if not os.path.isfile(pseudo):
        pytest.skip(f"{pseudo} is not here")
    on = request.getfixturevalue("host") if where == "node" else None
    job = tmp_path / "job.fio"
    job.write_text(f"[r]\nrw=read\nfilename=/dev/null\nsize=4k\ninclude {pseudo}\n")
    for job_file, words in ((str(job), f"include {pseudo}: "), (pseudo, f"job file {pseudo}: ")):
        with pytest.raises(FioPlanError) as refused:
            fio.invocation({"job_file": job_file}, None, on)
        said = str(refused.value)
        assert words in said and "a pseudo-file of the kernel" in said, said


@pytest.mark.slow
def test_a_job_named_like_a_directory_in_the_nodes_home_writes_the_file_racperf_judged(
    host: SshHost, tmp_path: Path
) -> None:
    """``directory=D`` and a job ``[NAME]`` without ``filename=``: fio writes D/NAME.0.0, or
    D/NAME when NAME is not a regular file in fio's working directory. The node's login home
    holds a directory NAME: the run (planned, judged, started as the supervisor does) writes
    D/NAME.0.0, the target the node's guard judged, and never D/NAME (a file holding data)."""
    name = "racperf-review-" + secrets.token_hex(4)
    in_home = Path(host.run_briefly(["sh", "-c", 'printf %s "$HOME"'], 10).stdout) / name
    in_home.mkdir()
    try:
        directory = tmp_path / "d"
        directory.mkdir()
        precious = directory / name
        precious.write_bytes(b"data" * 1024)
        job = tmp_path / "job.fio"
        job.write_text(f"[{name}]\ndirectory={directory}\nrw=write\nsize=4k\nbs=4k\n")
        run_dir = tmp_path / "data" / "runs" / "1"
        run_dir.mkdir(parents=True)
        started = time.monotonic()
        judged = judge_run(fio, "fio", {"job_file": str(job)}, str(run_dir), host)
        planned_s = time.monotonic() - started
        assert [t.path for t in judged.invocation.targets] == [f"{directory}/{name}.0.0"]
        host.put_files(run_dir, dict(judged.invocation.files))
        process = host.start(judged.invocation, run_dir)
        output = b""
        deadline = time.monotonic() + 60
        while not process.finished and time.monotonic() < deadline:
            output += b"".join(data for stream, data in process.read(0.5) if stream == "stdout")
        assert process.reap() == 0, output[-500:]
        ran_s = time.monotonic() - started - planned_s
        print(f"planned and judged on the node in {planned_s:.1f} s, run in {ran_s:.1f} s")
        (job_result,) = json.loads(output[output.index(b"{") :])["jobs"]
        assert job_result["write"]["io_kbytes"] == 4
        assert precious.read_bytes() == b"data" * 1024
        assert (directory / f"{name}.0.0").stat().st_size == 4096
    finally:
        in_home.rmdir()
