"""fio job files for a run on another node, and the node's option table in one command, over a
real OpenSSH sshd (this machine as the node) with real fio.

The job file and everything it includes are read here, as fio here resolves them, and the
node's fio plans from copies in a private directory there (tools/fio/plan.py NodeJobFiles):
an include the node has but this machine lacks is refused, one that exists both from the
working directory and beside the job file is the working directory's (fio's order), a
``${NAME}`` is this machine's value, a relative file name is refused (fio would take it from
its working directory on the node), a FIFO ends nothing, the write guard judges the node's
devices. The node's sshd sets a variable of its own (``SetEnv``) that a job file must never
see. The module's node reads the node's option table cold once, in one command, and leaves it
in the worker's cache for the other tests."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.core.contract.hosts import BriefOutput
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost
from racperf_tui.core.store import Store
from racperf_tui.orchestration.run_plan import PlanRefused, judge_run
from racperf_tui.tools import fio
from racperf_tui.tools.fio import options as fio_options
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf, remote_runs  # noqa: F401
from tests.helpers.loopdev import loop_device, make_sparse_image, mounted, needs_loop
from tests.helpers.sshd_helpers import Sshd, sshd_answers, start_sshd

# every test plans on a node over a real sshd; the first reads the node's option table cold
pytestmark = [pytest.mark.usefixtures("isolated_home", "remote_runs"), pytest.mark.slow]

FIO = shutil.which("fio") or "/usr/bin/fio"
#: this machine's own cache of its fio's table (taken before isolated_home moves HOME): the
#: local side of the comparison, read cold only when no test here ever read it
USER_CACHE = fio_options._cache_dir()
#: what the node's login has and this machine's environment must not
NODE_ONLY = ("RACPERF_NODE_ONLY", "/node/only")


class CountingHost(SshHost):
    """The node, counting the commands racperf runs there (a real SshHost)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.commands: list[list[str]] = []

    def run_briefly(self, argv: list[str], timeout_s: float, **kwargs: object) -> BriefOutput:
        self.commands.append(argv)
        return super().run_briefly(argv, timeout_s, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    """An sshd whose sessions get RACPERF_NODE_ONLY (SetEnv; a SIGHUP re-reads the config)."""
    server = start_sshd(tmp_path_factory.mktemp("node-sshd"))
    config = server.directory / "sshd_config"
    # into the config's one SetEnv line: sshd keeps the first
    config.write_text(config.read_text().replace("SetEnv ", f"SetEnv {NODE_ONLY[0]}={NODE_ONLY[1]} ", 1))
    os.kill(server.pid, signal.SIGHUP)
    time.sleep(0.5)
    assert sshd_answers("127.0.0.1", server.port, 10.0)
    try:
        yield server
    finally:
        server.stop()


def host_of(server: Sshd, name: str = "rac1") -> CountingHost:
    target = SshTarget(server.host, server.user, server.port, str(server.user_key), (str(server.known_hosts),))
    return CountingHost(target, name=name)


@pytest.fixture
def host(node: Sshd) -> Iterator[CountingHost]:
    yield host_of(node)
    ssh.close_all()


def test_the_nodes_option_table_is_read_in_one_command_and_equals_the_local_one(
    host: CountingHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cold, no cache: the key (version, checksum) and then the whole table in one command;
    the table equals the one this machine's fio gives locally (the node is this machine)."""
    fio_options._memo.clear()
    key = fio_options._remote_cache_key(FIO, host)
    cache = fio_options._cache_dir() / f"fio-options-{key}.json"
    cache.unlink(missing_ok=True)
    host.commands.clear()
    started = time.monotonic()
    there = fio_options.option_table(FIO, host)
    took = time.monotonic() - started
    assert len(host.commands) == 2, host.commands  # the cache key, then the table
    assert host.commands[1][:2] == ["sh", "-c"] and "racperf-fio-table" in host.commands[1]
    with monkeypatch.context() as local:
        local.setenv("XDG_CACHE_HOME", str(USER_CACHE.parent))
        here = fio_options.option_table(FIO)
    assert there == here
    assert len(there.names) > 200 and there.names["readwrite"] == "rw" and there.args["stonewall"] == "optional"
    assert {"psync", "libaio", "exec"} <= there.builtin_engines
    assert there.engine_options["libaio"] and "hipri" in there.engine_options["io_uring"]
    assert cache.exists()  # the other tests find it
    print(f"the node's option table cold: {took:.1f} s in {len(host.commands)} commands")


def _job(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_job_file_with_includes_and_a_variable_is_read_here_and_planned_by_the_node(
    host: CountingHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The include beside the job file, a nested one by a relative path, ``${NAME}`` set here:
    the node's fio reads the copies; the plan's copies are the Invocation's files."""
    monkeypatch.chdir(tmp_path)
    jobs = tmp_path / "jobs"
    (jobs / "more").mkdir(parents=True)
    data = tmp_path / "data.img"
    data.write_bytes(os.urandom(1 << 20))
    _job(jobs / "more" / "deep.fio", "bs=64k\n")
    _job(jobs / "common.fio", "size=1m\ninclude more/deep.fio\n")
    job = _job(jobs / "main.fio", "[global]\ninclude common.fio ; shared\n[r]\nfilename=${RACPERF_DATA}\nrw=read\n")
    monkeypatch.setenv("RACPERF_DATA", str(data))
    before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob("racperf-fiojob.*"))
    planned = fio.invocation({"job_file": str(job)}, None, host)
    (only,) = planned.detail.jobs
    assert only.options == {"size": "1m", "bs": "64k", "filename": str(data), "rw": "read"}
    assert [(t.path, t.access) for t in planned.targets] == [(str(data), "read")]
    assert "--readonly" in planned.argv
    assert planned.files["input-1-main.fio"] == (
        "[global]\ninclude input-2-common.fio\n[r]\nfilename=${RACPERF_DATA}\nrw=read\n"
    )
    assert planned.files["input-2-common.fio"] == "size=1m\ninclude input-3-deep.fio\n"
    assert planned.files["input-3-deep.fio"] == "bs=64k\n"
    # nothing of the planning left on the node
    assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob("racperf-fiojob.*")) <= before


def test_an_include_is_the_one_fio_here_would_read(
    host: CountingHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fio tries ``include NAME`` from its working directory first, then beside the including
    file: with both there the working directory's is read, as fio here would; on the node it
    runs in a directory of its own, so no file of the node's working directory takes part."""
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    _job(jobs / "inc.fio", "size=2m\n")
    _job(cwd / "inc.fio", "size=1m\n")
    job = _job(jobs / "main.fio", "[r]\nfilename=/dev/null\nrw=read\ninclude inc.fio\n")
    monkeypatch.chdir(cwd)
    local = fio.invocation({"job_file": str(job)})
    there = fio.invocation({"job_file": str(job)}, None, host)
    assert local.detail.jobs[0].options["size"] == there.detail.jobs[0].options["size"] == "1m"
    (cwd / "inc.fio").unlink()
    assert fio.invocation({"job_file": str(job)}, None, host).detail.jobs[0].options["size"] == "2m"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "[a]\nrw=read\nfilename=data.img\n[b]\nrw=read\nsize=1m\n[c]\nrw=read\ndirectory=rel\n",
            ["job [a]: file 'data.img'", "job [b]: file 'b.0.0'", "job [c]: file 'rel/c.0.0'"],
        ),
        (
            "[r]\nrw=read\nfilename=/dev/null\ninclude nowhere.fio\ninclude fifo\ninclude evil.fio\n",
            [
                "include 'nowhere.fio': no such file",
                "include fifo: not a regular file",
                "ioengine='external:/tmp/x.so'",
            ],
        ),
        (
            "[r]\nrw=read\nfilename=/dev/null\nbs=${A B}\ndescription=${LD_PRELOAD}\n; \xe9t\xe9\n",
            ["${A B} in", "${LD_PRELOAD} in", "dynamic loader", "is not UTF-8 text (byte"],
        ),
    ],
    ids=["relative", "includes", "for-the-node"],
)
def test_what_a_node_cannot_be_given_as_read_here_is_refused(
    host: CountingHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, words: list[str]
) -> None:
    """Relative file names (a file name, a job's default JOB.0.0, a relative directory); an
    include missing here, a FIFO (which would never end), a library engine; what cannot go
    to the node as it was read: a variable that is no name or one of the dynamic loader's,
    a file that is not UTF-8."""
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "fifo")
    _job(tmp_path / "evil.fio", "ioengine=external:/tmp/x.so\n")
    job = tmp_path / "job.fio"
    job.write_bytes(text.encode("latin-1"))
    started = time.monotonic()
    with pytest.raises(ValueError) as refused:
        fio.invocation({"job_file": str(job)}, None, host)
    said = str(refused.value)
    assert [word for word in words if word not in said] == [], said
    assert time.monotonic() - started < 20  # the FIFO ended nothing
    if "file '" in words[0]:
        assert said.count("needs absolute file names") == 3
        assert "from its working directory, not from the job file's" in said


def test_a_variable_is_this_machines_never_the_nodes(
    host: CountingHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The node's login sets RACPERF_NODE_ONLY; here it is unset: fio makes it empty, as it
    would here, and the file is this machine's path, not the node's value."""
    monkeypatch.delenv(NODE_ONLY[0], raising=False)
    target = tmp_path / "x.img"
    target.write_bytes(b"\0" * 4096)
    job = _job(tmp_path / "job.fio", f"[r]\nrw=read\nsize=4k\nfilename={tmp_path}${{{NODE_ONLY[0]}}}/x.img\n")
    planned = fio.invocation({"job_file": str(job)}, None, host)
    assert [t.path for t in planned.targets] == [str(target)]
    answer = host.run_briefly(["sh", "-c", f'printf %s "${NODE_ONLY[0]}"'], 10)
    assert answer.stdout == NODE_ONLY[1]  # the node has it: the job never saw it


@needs_loop
def test_the_write_guard_judges_a_job_files_device_on_the_node(
    host: CountingHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = make_sparse_image(tmp_path / "ext4.img", 32)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True, capture_output=True)
    with loop_device(image) as device, mounted(device.path, tmp_path / "mnt") as mount_point:
        _job(tmp_path / "lun.inc", f"filename={device.path}\n")
        job = _job(tmp_path / "job.fio", "[w]\nrw=randwrite\nsize=1m\ninclude lun.inc\n")
        monkeypatch.chdir(tmp_path)
        with pytest.raises(PlanRefused) as refused:
            judge_run(fio, "fio", {"job_file": str(job)}, host=host)
    message = str(refused.value)
    assert f"{device.path} ({device.major}:{device.minor}) is mounted on {mount_point}" in message


@pytest.fixture
def two_nodes(node: Sshd, tmp_path: Path) -> Iterator[Path]:
    """rac1 and rac2 in a cluster file: the module's sshd and a second one. rac2's option
    table is rac1's (the same fio: the first test proved the node's read equals it)."""
    second = start_sshd(tmp_path / "sshd2")
    tables = {
        name: fio_options._remote_cache_key(FIO, host_of(server, name))
        for name, server in (("rac1", node), ("rac2", second))
    }
    cache = fio_options._cache_dir()
    if (cache / f"fio-options-{tables['rac1']}.json").exists():
        shutil.copyfile(cache / f"fio-options-{tables['rac1']}.json", cache / f"fio-options-{tables['rac2']}.json")
    path = tmp_path / "cluster.toml"
    path.write_text('[cluster]\nname = "test"\n\n' + node_table("rac1", node) + node_table("rac2", second))
    try:
        yield path
    finally:
        second.stop()


@pytest.mark.timeout(240)
def test_a_job_file_runs_on_two_nodes_as_a_group(two_nodes: Path, tmp_path: Path) -> None:
    """`racperf run fio --node rac1 --node rac2 --set job_file=...`: each node reads 1 MiB
    through the job file's include; the run's directory on each node holds the copies."""
    data_file = tmp_path / "data.img"
    data_file.write_bytes(os.urandom(1 << 20))
    _job(tmp_path / "common.fio", "size=1m\nbs=64k\n")
    job = _job(tmp_path / "main.fio", f"[global]\ninclude common.fio\n[r]\nfilename={data_file}\nrw=read\n")
    data = tmp_path / "data"
    done = racperf(
        "run", "fio", "--node", "rac1", "--node", "rac2", "--cluster", str(two_nodes), "--data-dir", str(data),
        "--set", f"job_file={job}", timeout_s=200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    results = {line["node"]: line["result"] for line in lines if line["type"] == "result"}
    assert set(results) == {"rac1", "rac2"}
    for result in results.values():
        assert sum(j["read"]["io_kib"] for j in result["jobs"]) == 1024
    with Store.open(data) as store:
        runs = store.list_runs()
        assert sorted(run.host for run in runs) == ["rac1", "rac2"]
        for run in runs:
            assert store.raw_output(run.id, "file:input-2-common.fio") == "size=1m\nbs=64k\n"
            assert "include input-2-common.fio" in (store.raw_output(run.id, "file:input-1-main.fio") or "")


@needs_loop
@pytest.mark.timeout(180)
def test_a_job_file_writes_a_free_loop_device_the_nodes_guard_cleared(node: Sshd, tmp_path: Path) -> None:
    """The include names a free loop device: the node's guard clears it, the node's fio writes
    1 MiB there through racperf's job file, inside the node's net (write watch, jail)."""
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('[cluster]\nname = "test"\n\n' + node_table("rac1", node))
    image = make_sparse_image(tmp_path / "lun.img", 16)
    with loop_device(image) as device:
        _job(tmp_path / "lun.inc", f"filename={device.path}\n")
        job = _job(tmp_path / "job.fio", "[w]\nrw=write\nbs=64k\nsize=1m\ndirect=1\ninclude lun.inc\n")
        data = tmp_path / "data"
        done = racperf(
            "run", "fio", "--node", "rac1", "--cluster", str(cluster), "--data-dir", str(data),
            "--set", f"job_file={job}", timeout_s=150,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])["result"]
    assert sum(j["write"]["io_kib"] for j in result["jobs"]) == 1024
    with open(image, "rb") as handle:
        written = handle.read(2 << 20)
    assert written[: 1 << 20].count(0) < (1 << 20) // 2 and written[1 << 20 :] == bytes(1 << 20)
    with Store.open(data) as store:
        (record,) = store.list_runs()
        safety = json.loads(store.raw_output(record.id, "safety") or "{}")
    assert [(t["path"], t["access"]) for t in safety["targets"]] == [(device.path, "write")]
    shown = racperf("runs", "show", str(record.id), "--data-dir", str(data))
    assert "on rac1" in shown.stdout and "write watch on the node" in shown.stdout
