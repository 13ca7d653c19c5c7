"""The run supervisor end to end: real detached processes, signals, psutil and SQLite, with
the fake tool tests/fakes/faketool.py driving tests/fakes/fakebench.py."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.orchestration.runs import ToolNotFound, follow_run, launch_run, run_foreground, stop_run, wait_for_run
from tests.helpers.proc_helpers import (
    FAKE_TOOL,
    REPO,
    ensure_repo_importable,
    group_pids,
    kill_group_quietly,
    kill_quietly,
    live,
    read_pidfile,
    wait_until,
    zombie_children,
)

ensure_repo_importable()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A store directory; every run still unfinished at the end is killed (supervisor and
    benchmark group) so no test leaves processes behind."""
    d = tmp_path / "data"
    d.mkdir()
    yield d
    with Store.open(d) as store:
        for run in store.list_runs():
            kill_quietly(run.supervisor_pid if run.supervisor_pid != os.getpid() else None)
            kill_group_quietly(run.benchmark_pgid)


def bench(*args: str) -> dict:
    return {"extra_args": list(args)}


def wait_state(data: Path, run_id: int, timeout_s: float = 20.0):
    record = wait_for_run(run_id, data, timeout_s)
    assert record.state.finished, f"run {run_id} still {record.state.value} after {timeout_s} s"
    return record


def wait_running(store: Store, run_id: int, samples: int = 1) -> None:
    wait_until(
        lambda: store.get_run(run_id).state is RunState.RUNNING and store.sample_count(run_id) >= samples,
        15,
        what=f"run {run_id} running with {samples} samples",
    )


# ---------------------------------------------------------------------------- foreground


def test_foreground_run_records_everything(data: Path) -> None:
    live_samples: list[Sample] = []
    record = run_foreground(
        FAKE_TOOL, bench("--samples", "4", "--stderr", "a warning"), data, live_samples.append, target="/tmp/nowhere"
    )
    assert record.state is RunState.SUCCEEDED, record.message
    assert record.exit_status == 0 and record.message == "ok"
    assert record.target == "/tmp/nowhere" and record.tool == FAKE_TOOL
    assert record.tool_version == "fakebench 1.0"
    assert record.argv[-2:] == ["--stderr", "a warning"] and record.argv[0] == sys.executable
    assert record.supervisor_pid == os.getpid()
    assert [s.metrics["value"] for s in live_samples] == [1.0, 2.0, 3.0, 4.0]
    with Store.open(data) as store:
        assert [s for _, s in store.samples(record.id)] == live_samples
        assert store.result(record.id) == {"ok": True, "samples": 4}
        assert store.raw_output(record.id).count("SAMPLE ") == 4
        assert store.raw_output(record.id, "stderr") == "a warning\n"
    assert zombie_children() == []


def test_failed_run_is_judged_by_the_tool(data: Path) -> None:
    record = run_foreground(FAKE_TOOL, bench("--samples", "1", "--fail-result", "--stderr", "disk gone"), data)
    assert record.state is RunState.FAILED and record.exit_status == 0
    assert record.message == "result says not ok; stderr: disk gone"
    record = run_foreground(FAKE_TOOL, bench("--samples", "1", "--exit", "5"), data)
    assert record.state is RunState.FAILED and record.exit_status == 5
    assert "exit status 5" in record.message


def test_hostile_output_never_stalls_the_reader(data: Path) -> None:
    """A 5 MB line, invalid UTF-8, '\\r'-only status lines and a last line without newline in
    one run: every sample still parsed, the result found, the raw output complete."""
    args = ("--big-line", str(5 * 1024 * 1024), "--bad-utf8", "--cr", "--samples", "3", "--no-newline")
    started = time.monotonic()
    record = run_foreground(FAKE_TOOL, bench(*args), data)
    assert time.monotonic() - started < 10
    assert record.state is RunState.SUCCEEDED, record.message
    with Store.open(data) as store:
        values = [s.metrics["value"] for _, s in store.samples(record.id)]
        assert values == [1.5, 1.0, 2.0, 3.0]  # the bad-UTF-8 line, then the '\r' lines
        raw = store.raw_output(record.id)
        assert len(raw) == 5 * 1024 * 1024 + len(raw.split("\n", 1)[1]) + 1
        assert "\ufffd\ufffd bad bytes" in raw
        assert raw.endswith('RESULT {"ok": true, "samples": 3}')
        assert store.result(record.id) == {"ok": True, "samples": 3}


def test_hard_limit_stops_the_run(data: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    config = bench("--samples", "-1", "--interval", "0.05", "--grandchildren", "1", "--pidfile", str(pidfile))
    config["hard_limit_s"] = 0.8
    started = time.monotonic()
    record = run_foreground(FAKE_TOOL, config, data)
    elapsed = time.monotonic() - started
    assert record.state is RunState.FAILED
    assert record.message == "hard limit of 0.8 s reached; stopped"
    assert record.exit_status == -signal.SIGTERM
    assert 0.8 <= elapsed < 5
    assert not any(live(pid) for pid in read_pidfile(pidfile, 2))


def test_bad_config_and_missing_tool_are_refused_before_anything_runs(data: Path) -> None:
    with pytest.raises(ValueError, match="--invalid is not a fakebench option"):
        launch_run(FAKE_TOOL, bench("--invalid"), data_dir=data)
    with pytest.raises(
        ToolNotFound, match="racperf-no-such-tool-xyz.*not found on PATH; install it: it is a test fake"
    ):
        run_foreground(FAKE_TOOL, {"missing_executable": True}, data)
    with pytest.raises(KeyError, match="unknown tool 'nosuchtool'"):
        launch_run("nosuchtool", {}, data_dir=data)
    with Store.open(data) as store:
        assert store.list_runs() == []


# ---------------------------------------------------------------------------- detached


def test_launched_run_survives_its_launcher_exiting(data: Path) -> None:
    """The launching process exits right after launch_run; the run goes on recording to its
    end in a supervisor that belongs to no one's terminal."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path;"
        "from racperf_tui.orchestration.runs import launch_run;"
        f"print(launch_run({FAKE_TOOL!r}, {{'extra_args': ['--samples', '12', '--interval', '0.05']}},"
        " data_dir=Path(sys.argv[2])))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(REPO), str(data)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    run_id = int(out.stdout)
    with Store.open(data) as store:
        sup = store.get_run(run_id).supervisor_pid
        assert sup is not None and live(sup)
        assert os.getsid(sup) != os.getsid(0), "the supervisor must not share our session"
        record = wait_state(data, run_id)
        assert record.state is RunState.SUCCEEDED, record.message
        assert store.sample_count(run_id) == 12
        assert store.result(run_id) == {"ok": True, "samples": 12}


LAUNCHER_ON_A_TERMINAL = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from racperf_tui.orchestration.runs import launch_run
run_id = launch_run(sys.argv[3], {"extra_args": ["--samples", "30", "--interval", "0.05"]},
                    data_dir=Path(sys.argv[2]))
print(run_id, flush=True)
time.sleep(60)
"""


def _take_controlling_terminal() -> None:
    # a login shell's default for the hang-up, whatever this worker process inherited or set
    # (an ignored signal stays ignored across exec: the launcher then outlived its terminal in
    # the full suite and passed alone)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_launched_run_survives_a_terminal_hangup(data: Path) -> None:
    """The SSH session drops: the launcher sits on a pseudo-terminal whose master we close, so
    the kernel sends SIGHUP to the launcher's session. The launcher dies; the run does not."""
    master, slave = os.openpty()
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER_ON_A_TERMINAL, str(REPO), str(data), FAKE_TOOL],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        preexec_fn=_take_controlling_terminal,
    )
    os.close(slave)
    try:
        buf = b""
        deadline = time.monotonic() + 30
        while b"\n" not in buf and time.monotonic() < deadline:
            buf += os.read(master, 1024)
        run_id = int(buf.split()[0])
        with Store.open(data) as store:
            wait_running(store, run_id, samples=2)
            os.close(master)
            master = -1
            assert launcher.wait(timeout=10) == -signal.SIGHUP, "the hang-up reached the launcher"
            before = store.sample_count(run_id)
            record = wait_state(data, run_id)
            assert record.state is RunState.SUCCEEDED, record.message
            assert store.sample_count(run_id) == 30 > before
    finally:
        if master >= 0:
            os.close(master)
        launcher.kill()
        launcher.wait()


def test_kill_9_of_the_supervisor_takes_the_whole_group_within_7_s(data: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    run_id = launch_run(
        FAKE_TOOL,
        bench(
            "--samples", "-1", "--interval", "0.05", "--ignore-term", "--grandchildren", "3", "--pidfile", str(pidfile)
        ),
        data_dir=data,
    )
    with Store.open(data) as store:
        wait_running(store, run_id, samples=3)
        record = store.get_run(run_id)
        pids = read_pidfile(pidfile, 4)
        assert sorted(group_pids(record.benchmark_pgid)) == sorted(pids)
        os.kill(record.supervisor_pid, signal.SIGKILL)
        killed_at = time.monotonic()
        wait_until(lambda: not group_pids(record.benchmark_pgid), 7.0, what="the group to die")
        assert time.monotonic() - killed_at < 7.0
        assert not any(live(pid) for pid in pids)
        # the next start (any reader) marks it; the samples recorded so far stay readable
        count = store.sample_count(run_id)
        assert store.mark_interrupted_runs() == [run_id]
        interrupted = store.get_run(run_id)
        assert interrupted.state is RunState.INTERRUPTED
        assert f"pid {record.supervisor_pid}" in interrupted.message
        assert count >= 3 and store.sample_count(run_id) == count
        assert [s.metrics["value"] for _, s in store.samples(run_id)] == [float(i) for i in range(1, count + 1)]


def test_kill_9_of_the_supervisor_also_takes_processes_that_left_the_group(data: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    run_id = launch_run(
        FAKE_TOOL,
        bench("--samples", "-1", "--interval", "0.05", "--escape", "--grandchildren", "2", "--pidfile", str(pidfile)),
        data_dir=data,
    )
    with Store.open(data) as store:
        pids = read_pidfile(pidfile, 3)
        wait_running(store, run_id, samples=25)  # > 1 s: the tree was sampled at 0.05-1 s
        record = store.get_run(run_id)
        assert group_pids(record.benchmark_pgid) == [record.benchmark_pgid], "they did leave the group"
        os.kill(record.supervisor_pid, signal.SIGKILL)
        wait_until(lambda: not any(live(pid) for pid in pids), 7.0, what="the whole tree to die")


def test_stop_run_terms_the_benchmark_which_writes_its_final_report(data: Path) -> None:
    run_id = launch_run(FAKE_TOOL, bench("--samples", "-1", "--interval", "0.05", "--final-on-term"), data_dir=data)
    with Store.open(data) as store:
        wait_running(store, run_id, samples=3)
        assert stop_run(run_id, data) is RunState.STOPPED
        record = store.get_run(run_id)
        assert record.message == "stopped by SIGTERM" and record.exit_status == 0
        assert "FINAL report after SIGTERM\n" in store.raw_output(run_id)
        result = store.result(run_id)
        assert result["terminated"] is True and result["samples"] == store.sample_count(run_id)
        assert not live(record.supervisor_pid)
        assert not group_pids(record.benchmark_pgid)
        # stopping a finished run changes nothing
        assert stop_run(run_id, data) is RunState.STOPPED


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_the_supervisor_stops_the_run_cleanly(data: Path, sig: signal.Signals) -> None:
    run_id = launch_run(FAKE_TOOL, bench("--samples", "-1", "--interval", "0.05", "--final-on-term"), data_dir=data)
    with Store.open(data) as store:
        wait_running(store, run_id, samples=2)
        os.kill(store.get_run(run_id).supervisor_pid, sig)
        record = wait_state(data, run_id)
        assert record.state is RunState.STOPPED and record.message == f"stopped by {sig.name}"
        assert store.result(run_id)["terminated"] is True


def test_stop_run_kills_a_benchmark_that_ignores_term(data: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    run_id = launch_run(
        FAKE_TOOL,
        bench(
            "--samples", "-1", "--interval", "0.05", "--ignore-term", "--grandchildren", "2", "--pidfile", str(pidfile)
        ),
        data_dir=data,
    )
    with Store.open(data) as store:
        wait_running(store, run_id)
        pids = read_pidfile(pidfile, 3)
        started = time.monotonic()
        assert stop_run(run_id, data) is RunState.STOPPED
        elapsed = time.monotonic() - started
        record = store.get_run(run_id)
        assert record.exit_status == -signal.SIGKILL
        assert 1.5 <= elapsed < 6, "KILL comes after the tool's 1.5 s grace, not before"
        assert not any(live(pid) for pid in pids)


def test_follow_run_yields_live_samples_to_the_end(data: Path) -> None:
    run_id = launch_run(FAKE_TOOL, bench("--samples", "8", "--interval", "0.05"), data_dir=data)
    seen = [seq for seq, _ in follow_run(run_id, data, poll_s=0.02)]
    assert seen == list(range(1, 9))
    assert wait_state(data, run_id).state is RunState.SUCCEEDED


# ---------------------------------------------------------------------------- with real fio


def _fio_config(tmp_path: Path) -> dict:
    target = tmp_path / "fio.dat"
    with open(target, "wb") as fh:
        fh.truncate(16 * 1024 * 1024)
    return {
        "extra_args": [
            "--name=h3",
            f"--filename={target}",
            "--size=16m",
            "--rw=randread",
            "--bs=4k",
            "--numjobs=2",
            "--runtime=30",
            "--time_based",
        ],
        "destructive": False,
        "target": None,
    }


def fio_processes(main_pid: int) -> list[int]:
    """fio's main process and its job processes, which call setsid() and so leave the group:
    only the parent tree finds them."""
    import psutil

    main = psutil.Process(main_pid)
    jobs = main.children(recursive=True)
    assert len(jobs) >= 2, "2 job processes under fio's main process"
    assert all(os.getpgid(job.pid) != main_pid for job in jobs), "fio's jobs leave the group (setsid)"
    return [main_pid, *(job.pid for job in jobs)]


@pytest.mark.skipif(__import__("shutil").which("fio") is None, reason="fio not installed")
def test_real_fio_stopped_writes_its_final_report(data: Path, tmp_path: Path) -> None:
    run_id = launch_run("fio", _fio_config(tmp_path), data_dir=data)
    with Store.open(data) as store:
        wait_running(store, run_id, samples=1)
        record = store.get_run(run_id)
        workers = fio_processes(record.benchmark_pgid)
        assert stop_run(run_id, data) is RunState.STOPPED
        result = store.result(run_id)
        assert result is not None and result["jobs"], "fio's final report after SIGTERM was parsed"
        assert sum(job["read"]["iops"] for job in result["jobs"]) > 0
        assert not any(live(pid) for pid in workers)


@pytest.mark.skipif(__import__("shutil").which("fio") is None, reason="fio not installed")
def test_real_fio_workers_die_with_a_killed_supervisor(data: Path, tmp_path: Path) -> None:
    run_id = launch_run("fio", _fio_config(tmp_path), data_dir=data)
    with Store.open(data) as store:
        wait_running(store, run_id, samples=2)  # the supervisor has sampled the tree by then
        record = store.get_run(run_id)
        workers = fio_processes(record.benchmark_pgid)
        os.kill(record.supervisor_pid, signal.SIGKILL)
        wait_until(lambda: not any(live(pid) for pid in workers), 7.0, what="fio's processes to die")
        assert store.mark_interrupted_runs() == [run_id]
        assert store.sample_count(run_id) >= 1
