"""fio config: validation messages, presets and their exact command lines, raw arguments,
refusal of options that run commands, --readonly, the write guard on block devices."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from racperf_tui.core import units
from racperf_tui.tools import fio
from racperf_tui.tools.fio import config as fio_config
from racperf_tui.tools.fio import scratch as fio_scratch
from racperf_tui.tools.fio.config import FioConfig
from racperf_tui.tools.fio.plan import FioPlanError
from tests.helpers import needs_root
from tests.helpers.fio_helpers import job_text, judged, planned_argv
from tests.helpers.loopdev import loop_device, needs_loop


@pytest.fixture
def scratch_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """$TMPDIR -> a private dir, so the default scratch file is ours; yields its dir.

    racperf skips a tmpfs $TMPDIR for its scratch file, so on a machine whose /tmp is tmpfs
    the private dir goes under /var/tmp instead."""
    base = tmp_path
    if fio_scratch._fs_type(str(tmp_path)) in ("tmpfs", "ramfs"):
        base = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="racperf-test-"))
    monkeypatch.setenv("TMPDIR", str(base))
    scratch = base / f"racperf-scratch-{os.geteuid()}"  # one per user: see test_two_users_...
    assert fio_scratch.default_scratch_dir() == str(scratch)
    try:
        yield scratch
    finally:
        if base != tmp_path:
            shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------------------- presets


PRESET_ARGV = {
    "oltp": "--name=racperf --filename={t} --rw=randrw --rwmixread=70 --bs=8k --ioengine=psync --iodepth=1 "
    "--numjobs=4 --direct=1 --size=256M --runtime=60 --time_based --group_reporting",
    "8k-randread": "--readonly --name=racperf --filename={t} --rw=randread --bs=8k --ioengine=psync --iodepth=1 "
    "--numjobs=1 --direct=1 --size=256M --runtime=60 --time_based --group_reporting",
    "8k-randwrite": "--name=racperf --filename={t} --rw=randwrite --bs=8k --ioengine=psync --iodepth=1 "
    "--numjobs=1 --direct=1 --size=256M --runtime=60 --time_based --group_reporting",
    "1m-seqread": "--readonly --name=racperf --filename={t} --rw=read --bs=1m --ioengine=psync --iodepth=1 "
    "--numjobs=1 --direct=1 --size=256M --runtime=60 --time_based --group_reporting",
    "1m-seqwrite": "--name=racperf --filename={t} --rw=write --bs=1m --ioengine=psync --iodepth=1 "
    "--numjobs=1 --direct=1 --size=256M --runtime=60 --time_based --group_reporting",
    "latency": "--name=racperf --filename={t} --rw=randwrite --bs=4k --ioengine=libaio --iodepth=1 "
    "--numjobs=1 --direct=1 --size=256M --runtime=60 --time_based --ramp_time=5 --group_reporting",
    "iops": "--readonly --name=racperf --filename={t} --rw=randread --bs=4k --ioengine=libaio --iodepth=32 "
    "--numjobs=1 --direct=1 --size=256M --runtime=60 --time_based --group_reporting",
    "throughput": "--readonly --name=racperf --filename={t} --rw=read --bs=64k --ioengine=libaio --iodepth=32 "
    "--numjobs=16 --direct=1 --size=256M --runtime=60 --time_based --group_reporting",
}


def test_preset_command_lines(scratch_tmp: Path) -> None:
    assert list(fio_config.PRESETS) == list(PRESET_ARGV) + ["custom"]
    target = str(scratch_tmp / "fio.scratch")
    assert fio_scratch.default_scratch_target() == target
    for name, expected in PRESET_ARGV.items():
        cfg = fio_config.preset_config(name)
        assert cfg.validate() == [], name
        prefix = "fio --output-format=json+ --status-interval=1 "
        assert cfg.command_preview() == prefix + expected.format(t=target), name
        assert name in fio_config.PRESET_DESCRIPTIONS


def test_presets_are_editable_copies(scratch_tmp: Path) -> None:
    cfg = fio_config.preset_config("oltp")
    cfg.numjobs = 8
    cfg.extra_args.append("--norandommap")
    assert fio_config.preset_config("oltp").numjobs == 4 and fio_config.PRESETS["oltp"].extra_args == []
    assert "--numjobs=8" in cfg.argv() and cfg.argv()[-1] == "--norandommap"
    with pytest.raises(KeyError, match="unknown fio preset 'nope'; known: oltp"):
        fio_config.preset_config("nope")


def test_custom_preset_needs_options() -> None:
    cfg = fio_config.preset_config("custom")
    assert cfg.validate() == ["extra_args: custom mode needs fio options or a job file"]
    cfg.extra_args = ["--name=x", "--rw=randwrite", "--filename=/tmp/x", "--size=1m"]
    assert cfg.validate() == []
    assert cfg.argv() == [
        "fio",
        "--output-format=json+",
        "--status-interval=1",
        "--name=x",
        "--rw=randwrite",
        "--filename=/tmp/x",
        "--size=1m",
    ]


def test_dict_round_trip_and_command_preview_is_shell_quoted(tmp_path: Path) -> None:
    cfg = FioConfig(target=str(tmp_path / "my file"), size="16m", runtime_s=2, extra_args=["--description=a b"])
    again = FioConfig.from_dict(cfg.to_dict())
    assert again == cfg
    preview = cfg.command_preview()
    assert shlex.split(preview) == cfg.argv()
    assert f"'--filename={tmp_path}/my file'" in preview


def test_sub_second_status_interval_gets_a_unit() -> None:
    # fio reads "--status-interval=0.5" as 0 and never dumps; "500ms" works
    assert "--status-interval=500ms" in FioConfig(status_interval_s=0.5).argv()
    assert "--status-interval=2" in FioConfig(status_interval_s=2.0).argv()


def test_form_strings_are_accepted(scratch_tmp: Path) -> None:
    cfg = FioConfig.from_dict(
        {"runtime_s": "30", "iodepth": "16", "numjobs": "2", "direct": "false", "time_based": "true", "rwmixread": "50"}
    )
    assert cfg.validate() == []
    argv = cfg.argv()
    assert {"--runtime=30", "--iodepth=16", "--numjobs=2", "--direct=0", "--rwmixread=50"} <= set(argv)


# ---------------------------------------------------------------------------- validation


def test_validation_names_each_bad_field(tmp_path: Path) -> None:
    cfg = FioConfig(
        target=str(tmp_path / "no" / "such" / "f"),
        size="lots",
        runtime_s="abc",
        ramp_time_s=-1,
        bs="9q",
        rw="sideways",
        rwmixread=101,
        ioengine="magic",
        iodepth=0,
        numjobs="x",
        direct="maybe",
        status_interval_s=0,
    )
    errors = cfg.validate()
    assert errors == [
        "status_interval_s: 0 is not a number of seconds between 0.1 and 3600",
        f"target: directory {tmp_path}/no/such does not exist",
        "size: 'lots' is not a size like 256m, 1g, 10% (0 is not allowed)",
        "runtime_s: 'abc' is not a whole number of seconds (0 to 604800)",
        "ramp_time_s: -1 is not a whole number of seconds (0 to 86400)",
        "bs: '9q' is not a size like 4k, 8k, 1m",
        "rw: 'sideways' is not one of read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, "
        "trimwrite",
        "rwmixread: 101 is not a percentage from 0 to 100",
        "ioengine: 'magic' is not one of psync, sync, pvsync, pvsync2, vsync, libaio, io_uring, posixaio, mmap, "
        "null (other engines: use custom mode)",
        "iodepth: 0 is not a whole number from 1 to 65536",
        "numjobs: 'x' is not a whole number from 1 to 4096",
        "direct: 'maybe' is not true or false",
    ]
    with pytest.raises(ValueError, match=r"bs: '9q' is not a size like 4k, 8k, 1m"):
        fio.build_argv(cfg.to_dict())


@pytest.mark.parametrize("bs", ["4k", "8K", "1m", "512", "64KiB", "4k,8k"])
def test_good_block_sizes(bs: str, scratch_tmp: Path) -> None:
    assert FioConfig(bs=bs).validate() == []


def test_time_based_needs_runtime_and_size_needed_for_new_file(tmp_path: Path) -> None:
    errors = FioConfig(target=str(tmp_path / "new"), size="", runtime_s=0, time_based=True).validate()
    assert "runtime_s: a time_based run needs a runtime of at least 1 s" in errors
    assert "size: needed for a new file or a directory (e.g. 256m)" in errors


def test_read_of_a_new_file_lays_it_out_but_never_touches_an_existing_one(tmp_path: Path) -> None:
    new = tmp_path / "new.dat"
    argv = planned_argv(
        {"extra_args": ["--name=t", f"--filename={new}", "--size=2m", "--rw=randread"]}, tmp_path / "r1"
    )
    assert "--readonly" in argv and new.stat().st_size == 2 * 1024 * 1024
    short = tmp_path / "datafile.dbf"
    short.write_bytes(b"precious")
    planned_argv(FioConfig(target=str(short), size="2m", rw="read"), tmp_path / "r2")
    assert short.read_bytes() == b"precious"  # a user's file is never written; fio will say it is short
    planned_argv(FioConfig(target=str(tmp_path / "w"), size="1m", rw="write"), tmp_path / "r3")
    # a write job's new file is allocated as fio would (the jail binds the file, so fio must
    # find it long enough and never unlink it), not written
    written = (tmp_path / "w").stat()
    assert written.st_size == 1 << 20 and written.st_blocks * 512 >= 1 << 20
    assert (tmp_path / "w").read_bytes() == bytes(1 << 20)


# ---------------------------------------------------------------------------- raw arguments


def test_raw_args_get_racperf_output_options_and_readonly(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = planned_argv(
        {"extra_args": ["--name=t", f"--filename={tmp_path}/x", "--rw=randread", "--bs=4k", "--size=1m"]}, run
    )
    assert argv == [
        shutil.which("fio"),
        "--output-format=json+",
        "--status-interval=1",
        "--readonly",
        f"--aux-path={run}",
        f"{run}/job.fio",
    ]
    assert (run / "job.fio").read_text().splitlines()[1:] == [
        "[t]",
        f"filename={tmp_path}/x",
        "rw=randread",
        "bs=4k",
        "size=1m",
    ]
    # the user's status interval is kept; output-format is always racperf's json+
    argv = planned_argv(
        {
            "extra_args": [
                "--output-format=json",
                "--status-interval=2",
                "--name=t",
                "--size=1m",
                "--readonly",
                f"--filename={tmp_path}/x",
            ]
        },
        run,
    )
    assert argv[1:3] == ["--output-format=json+", "--status-interval=2"]
    # fio's default rw is read: no rw given -> read-only
    assert "--readonly" in planned_argv({"extra_args": ["--name=t", "--size=1m", f"--filename={tmp_path}/x"]}, run)
    assert "--readonly" not in planned_argv(
        {"extra_args": ["--name=t", "--rw", "randwrite", "--size=1m", f"--filename={tmp_path}/y"]}, run
    )
    assert "--readonly" not in planned_argv({"extra_args": ["--name=t", "--rw=trim", f"--filename={tmp_path}/x"]}, run)
    # `racperf run fio --target T -- ARGS` (racperf run passes target=None when absent)
    assert "filename=/tmp/y" in job_text(
        {"extra_args": ["--name=t", "--rw=write", "--size=1m"], "destructive": False, "target": "/tmp/y"}, run
    )


@pytest.mark.parametrize(
    "arg, reason",
    [
        ("--exec_prerun=touch /tmp/pwned", "runs a program before the job"),
        ("--exec_postrun=/bin/true", "runs a program after the job"),
        ("--trigger=reboot", "runs a program"),
        ("--trigger-file=/tmp/t", "when a file appears"),
        ("--trigger-timeout=10", "at a time"),
        ("--trigger-remote=reboot", "on a remote fio server"),
        ("--ioengine=exec", "runs a program"),
        ("--ioengine=external:/tmp/x.so", "loads code from a library"),
        ("--server", "starts a fio server"),
        ("--client=host", "sends jobs to remote fio servers"),
        ("--daemonize=/tmp/pid", "detaches fio"),
        ("--output=/tmp/out", "writes fio's report to a file"),
        ("-exec_prerun=/bin/true", "runs a program before the job"),
    ],
)
def test_options_that_run_commands_are_refused_in_args(arg: str, reason: str) -> None:
    cfg = {"extra_args": ["--name=t", arg, "--size=1m"]}
    with pytest.raises(ValueError, match="racperf refuses it") as info:
        fio.build_argv(cfg)
    assert reason in str(info.value)


def test_refusal_says_which_argument() -> None:
    with pytest.raises(FioPlanError) as info:
        fio.build_argv({"extra_args": ["--name=t", "--exec_prerun", "rm -rf /"]})
    assert info.value.problems == [
        "argument 2 ('--exec_prerun'): fio option exec_prerun=rm -rf / runs a program "
        "before the job; racperf refuses it"
    ]


def test_options_that_run_commands_are_refused_in_job_files(tmp_path: Path) -> None:
    included = tmp_path / "more.fio"
    included.write_text("ioengine=exec ; a comment\nprogram=/bin/sh\n")
    job = tmp_path / "job.fio"
    job.write_text(
        "; a comment\n[global]\nrw=randread\nsize=1m\n\n[a]\nfilename=/tmp/x\n"
        "exec_postrun=/bin/rm -rf /\ninclude more.fio\n"
    )
    with pytest.raises(FioPlanError) as info:
        fio.build_argv({"job_file": str(job)})
    problems = "\n".join(info.value.problems)
    assert f"job file {job}, option exec_postrun=/bin/rm -rf / runs a program after the job" in problems
    assert f"job file {job}, option ioengine=exec runs a program" in problems
    # a job file given positionally among raw args is checked the same way
    with pytest.raises(ValueError, match="exec_postrun"):
        fio.build_argv({"extra_args": ["--output-format=json", str(job)]})


def test_job_file_read_only_and_missing(tmp_path: Path) -> None:
    job = tmp_path / "ok.fio"
    job.write_text(
        f"[global]\nrw=randread\nruntime=5s\n[a]\nfilename={tmp_path}/x\nsize=1m\n[b]\nrw=read\n"
        f"filename={tmp_path}/y\nsize=1m\n"
    )
    cfg = FioConfig.from_dict({"job_file": str(job)})
    assert cfg.custom and cfg.validate() == []
    planned = fio.invocation(cfg)
    assert "--readonly" in planned.argv and planned.hard_limit_s == pytest.approx(5 * 1.1 + 60)
    assert [(t.path, t.access) for t in planned.targets] == [(f"{tmp_path}/x", "read"), (f"{tmp_path}/y", "read")]
    job.write_text(f"[a]\nrw=randread\nfilename={tmp_path}/x\n[b]\nrw=randwrite\nfilename={tmp_path}/y\n")
    assert "--readonly" not in fio.build_argv(cfg)
    # a command-line rw before the job file is a global default: the job file's own rw wins
    assert "--readonly" not in fio.build_argv({"job_file": str(job), "extra_args": ["--rw=read"]})
    assert FioConfig.from_dict({"job_file": str(tmp_path / "nope.fio")}).validate() == [
        f"job_file: {tmp_path}/nope.fio does not exist or is not a regular file"
    ]


def test_hard_limit(scratch_tmp: Path) -> None:
    assert fio.TOOL.hard_limit_s(fio_config.preset_config("latency").to_dict()) == pytest.approx(65 * 1.1 + 60)
    planned = fio.invocation(
        {"extra_args": ["--name=t", "--runtime=2m", "--ramp_time=500ms", "--size=1m", f"--filename={scratch_tmp}/x"]}
    )
    assert planned.hard_limit_s == pytest.approx(120.5 * 1.1 + 60)
    assert fio.invocation({"extra_args": ["--name=t", "--size=1g", f"--filename={scratch_tmp}/x"]}).hard_limit_s == 3600


def test_install_hint_and_tool_protocol() -> None:
    assert fio.install_hint == "apt-get install fio / dnf install fio / yum install fio"
    assert fio.TOOL.name == "fio" and fio.TOOL.install_hint == fio.install_hint
    assert "apt-get install fio" in fio.missing_fio_message()
    for method in ("build_argv", "stream_parser", "parse_result", "succeeded", "hard_limit_s"):
        assert callable(getattr(fio.TOOL, method))


# ---------------------------------------------------------------------------- scratch file


def test_default_scratch_file_is_created_for_a_read_preset(scratch_tmp: Path, tmp_path: Path) -> None:
    cfg = fio_config.preset_config("8k-randread")
    cfg.size = "4m"
    target = scratch_tmp / "fio.scratch"
    assert f"filename={target}" in job_text(cfg, tmp_path / "run")
    assert target.stat().st_size == 4 * 1024 * 1024
    assert target.read_bytes()[:4096] != bytes(4096)  # real data, not a sparse hole
    mtime = target.stat().st_mtime_ns
    planned_argv(cfg, tmp_path / "run")
    assert target.stat().st_mtime_ns == mtime  # big enough already: left alone


def test_read_in_a_directory_lays_out_fios_file_names(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    cfg = FioConfig(target=str(data), size="1m", rw="randread", numjobs=2, name="dirjob")
    assert f"directory={data}" in job_text(cfg, tmp_path / "run")
    assert sorted(p.name for p in data.iterdir()) == ["dirjob.0.0", "dirjob.1.0"]


def test_write_preset_allocates_its_scratch_file(scratch_tmp: Path, tmp_path: Path) -> None:
    cfg = fio_config.preset_config("8k-randwrite")
    planned_argv(cfg, tmp_path / "run")
    scratch = (scratch_tmp / "fio.scratch").stat()
    assert scratch_tmp.is_dir() and scratch.st_size == 256 << 20 == units.size_bytes(cfg.size)
    assert scratch.st_blocks * 512 >= 256 << 20  # allocated as fio would, in place for the jail


def test_filename_colons_are_escaped(tmp_path: Path) -> None:
    target = tmp_path / "a:b"
    assert f"--filename={tmp_path}/a\\:b" in FioConfig(target=str(target)).argv()


# ---------------------------------------------------------------------------- write guard


@needs_loop
def test_write_to_a_block_device_with_a_filesystem_is_refused(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    with loop_device(image, size_mib=16) as loop:
        with open(loop.path, "r+b") as dev:
            dev.write(b"XFSB")  # an XFS superblock magic at byte 0
            dev.flush()
            os.fsync(dev.fileno())
        cfg = FioConfig(target=loop.path, size="", rw="randwrite", runtime_s=1)
        assert cfg.validate() == []
        run = tmp_path / "run"
        with pytest.raises(ValueError, match=rf"refusing to write to {loop.path} .*\n.*XFS") as info:
            planned_argv(cfg, run)
        assert "--destructive" in str(info.value)
        # the same through raw arguments and a job file
        with pytest.raises(ValueError, match="XFS"):
            planned_argv({"extra_args": ["--name=t", f"--filename={loop.path}", "--rw=write"]}, run)
        job = tmp_path / "w.fio"
        job.write_text(f"[w]\nfilename={loop.path}\nrw=randrw\n")
        with pytest.raises(ValueError, match="XFS"):
            planned_argv({"job_file": str(job)}, run)
        # reads need no clearance and run with --readonly; the override is explicit
        assert "--readonly" in planned_argv(FioConfig(target=loop.path, size="", rw="randread", runtime_s=1), run)
        cfg.destructive = True
        result = judged(cfg, run)
        assert f"filename={loop.path}" in result.invocation.files["job.fio"]
        assert [t.path for t, _v in result.guard.overridden] == [loop.path]


# ---------------------------------------------------------------------------- scratch dir safety (H10)


def test_scratch_dir_is_private_and_refused_when_not_ours(scratch_tmp: Path, tmp_path: Path) -> None:
    """The scratch dir sits in a shared temp dir: a symlink planted there (by another user)
    pointing at a datafile must not be written through by the write presets."""
    datafile = tmp_path / "system01.dbf"
    datafile.write_bytes(b"ORACLE DATA" * 100)
    run = tmp_path / "run"
    cfg = fio_config.preset_config("8k-randwrite")
    planned_argv(cfg, run)
    assert stat.S_IMODE(scratch_tmp.stat().st_mode) == 0o700  # created private
    (scratch_tmp / "fio.scratch").unlink()  # laid out by the run; now another user's link there
    (scratch_tmp / "fio.scratch").symlink_to(datafile)
    with pytest.raises(ValueError, match=r"the scratch file .*fio\.scratch is not a regular file"):
        planned_argv(fio_config.preset_config("8k-randwrite"), run)
    (scratch_tmp / "fio.scratch").unlink()
    scratch_tmp.chmod(0o777)
    with pytest.raises(ValueError, match=r"is writable by other users \(mode 777\)"):
        planned_argv(fio_config.preset_config("oltp"), run)
    scratch_tmp.rmdir()
    scratch_tmp.symlink_to(tmp_path)  # the directory itself pointing at the data's directory
    with pytest.raises(ValueError, match="is a symbolic link"):
        planned_argv(fio_config.preset_config("oltp"), run)
    assert datafile.read_bytes() == b"ORACLE DATA" * 100
    scratch_tmp.unlink()
    if os.geteuid() == 0:  # created first by another user (CI runs as root: chown works)
        scratch_tmp.mkdir(mode=0o700)
        os.chown(scratch_tmp, 54321, -1)
        with pytest.raises(ValueError, match=r"belongs to uid 54321, not to you \(uid 0\)"):
            planned_argv(fio_config.preset_config("oltp"), run)


def _tree_state(root: Path) -> dict[str, tuple[int, int, int, int, bytes]]:
    """uid, gid, mode, mtime and content of ``root`` and everything under it (lstat)."""
    state = {}
    for path in [root, *sorted(root.rglob("*"))]:
        info = path.lstat()
        body = path.read_bytes() if stat.S_ISREG(info.st_mode) else b""
        state[str(path.relative_to(root.parent))] = (info.st_uid, info.st_gid, info.st_mode, info.st_mtime_ns, body)
    return state


@needs_root
def test_two_users_scratch_dirs_do_not_collide(scratch_tmp: Path) -> None:
    """root and oracle on one DB node both run racperf: oracle's scratch dir there first
    (private, with its scratch file) neither blocks root's runs nor is touched by them."""
    other_uid = 54321  # oracle's usual uid
    base = scratch_tmp.parent
    other_dirs = [base / f"racperf-scratch-{other_uid}", base / "racperf-scratch"]  # + the old shared name
    for other_dir in other_dirs:
        other_dir.mkdir(mode=0o700)
        (other_dir / "fio.scratch").write_bytes(b"oracle's scratch file " * 64)
        for path in (other_dir / "fio.scratch", other_dir):
            os.chown(path, other_uid, other_uid)
    before = {str(d): _tree_state(d) for d in other_dirs}

    assert scratch_tmp.name == "racperf-scratch-0" and scratch_tmp not in other_dirs
    read_cfg = fio_config.preset_config("8k-randread")
    read_cfg.size = "1m"
    run = base / "run"
    assert f"filename={scratch_tmp / 'fio.scratch'}" in job_text(read_cfg, run)
    assert f"filename={scratch_tmp / 'fio.scratch'}" in job_text(fio_config.preset_config("oltp"), run)
    mine = scratch_tmp.lstat()
    assert (mine.st_uid, stat.S_ISDIR(mine.st_mode), stat.S_IMODE(mine.st_mode)) == (0, True, 0o700)
    # the read laid it out at 1 MiB; oltp writes, so it is grown in place to oltp's size
    assert (scratch_tmp / "fio.scratch").stat().st_size == units.size_bytes(fio_config.preset_config("oltp").size)
    assert (scratch_tmp / "fio.scratch").stat().st_uid == 0

    assert {str(d): _tree_state(d) for d in other_dirs} == before
    assert sorted(p.name for p in base.iterdir()) == sorted(
        ["racperf-scratch", "racperf-scratch-0", f"racperf-scratch-{other_uid}", "run"]
    )
