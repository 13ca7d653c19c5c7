"""The SSH host (core/remote/ssh_host.py) against a real OpenSSH sshd on 127.0.0.1, i.e. this very
machine, so ps here sees the node's processes: quoting (nothing a word holds runs), env, cwd,
stdin, files there and back, exit statuses, a stop, and a remote benchmark that dies with its
link (the connection dropped, the client killed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import RemoteProcess, SshHost, exit_code, shell_line
from tests.helpers import REPO
from tests.helpers.sshd_helpers import Sshd

HOSTILE = [
    "a b",
    "it's",
    'say "hi"',
    "x; touch PWNED1",
    "$(touch PWNED2)",
    "`touch PWNED3`",
    "$HOME",
    "*",
    "-n",
    "tab\there",
    "new\nline",
    "back\\slash",
    "|| touch PWNED4 &",
]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    yield
    ssh.close_all()


def target(server: Sshd) -> SshTarget:
    return SshTarget.parse(server.spec, identity=str(server.user_key), known_hosts=[str(server.known_hosts)])


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A remote base directory whose name is hostile too."""
    path = tmp_path / "remote base 'q' $(touch PWNED5);x"
    path.mkdir()
    return path


@pytest.fixture
def host(sshd: Sshd, base: Path) -> SshHost:
    return SshHost(target(sshd), remote_base=str(base))


def run_to_end(proc: RemoteProcess, timeout_s: float = 30.0) -> tuple[int, bytes, bytes]:
    out = {"stdout": b"", "stderr": b""}
    deadline = time.monotonic() + timeout_s
    while not proc.finished:
        assert time.monotonic() < deadline, "did not finish"
        for stream, chunk in proc.read(0.2):
            out[stream] += chunk
        proc.tick()
    status = proc.reap()
    proc.close()
    return status, out["stdout"], out["stderr"]


def group_alive(pgid: int) -> list[str]:
    """Processes of the group, as ps on the host sees them (zombies left out)."""
    out = subprocess.run(["ps", "-eo", "pgid=,stat=,pid=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.split()[0] == str(pgid) and not line.split()[1].startswith("Z")]


def wait_gone(pgid: int, timeout_s: float) -> float:
    started = time.monotonic()
    while group_alive(pgid):
        assert time.monotonic() - started < timeout_s, f"still running: {group_alive(pgid)}"
        time.sleep(0.1)
    return time.monotonic() - started


def test_every_word_arrives_as_one_argument_and_runs_nothing(host: SshHost, tmp_path: Path, base: Path) -> None:
    inv = Invocation(["printf", "[%s]\\n", *HOSTILE], cwd=".")
    status, out, err = run_to_end(host.start(inv, tmp_path / "runs" / "1"))
    assert (status, err) == (0, b"")
    assert out.decode() == "".join(f"[{word}]\n" for word in HOSTILE)
    for root in (tmp_path, base, Path.home(), Path(host.remote_dir(tmp_path / "runs" / "1"))):
        assert not list(root.rglob("PWNED*")), root
    assert not list(Path("/").glob("PWNED*"))


def test_which(host: SshHost, tmp_path: Path) -> None:
    assert host.which("sh") in ("/bin/sh", "/usr/bin/sh")
    assert host.which("no-such-program-racperf") is None
    assert host.which("echo") is None  # a builtin is no program
    assert host.which("x; touch PWNED6") is None
    assert not list(Path.home().rglob("PWNED*"))


def test_env_cwd_stdin_and_files_there_and_back(host: SshHost, tmp_path: Path) -> None:
    directory = tmp_path / "runs" / "7"
    host.put_files(directory, {"job.txt": f"my dir is {directory}\n\xe9t\xe9\n"})
    remote = Path(host.remote_dir(directory))
    assert (remote / "job.txt").read_text() == f"my dir is {remote}\n\xe9t\xe9\n"  # the local dir mapped
    assert (remote / "job.txt").stat().st_mode & 0o777 == 0o600
    script = 'printf "%s|" "$RACPERF_X" "$(pwd)"; cat; cat "$1" > out_summary.txt; echo bad >&2'
    inv = Invocation(
        ["sh", "-c", script, "sh", str(directory / "job.txt")],
        env={"RACPERF_X": "v a l $(touch PWNED7)"},
        cwd=".",
        stdin="select 1;\n",
        result_files=("*_summary.txt",),
    )
    status, out, err = run_to_end(host.start(inv, directory))
    assert status == 0
    assert out.decode() == f"v a l $(touch PWNED7)|{remote}|select 1;\n"
    assert err == b"bad\n"
    assert host.fetch_files(directory, inv) == {"out_summary.txt": f"my dir is {remote}\n\xe9t\xe9\n"}
    with pytest.raises(ValueError, match="leave its directory"):
        host.put_files(directory, {"../x": "y"})
    assert not list(tmp_path.rglob("PWNED*"))


def test_merge_stderr(host: SshHost, tmp_path: Path) -> None:
    inv = Invocation(["sh", "-c", "echo out; echo err >&2"])
    status, out, err = run_to_end(host.start(inv, tmp_path / "r", merge_stderr=True))
    assert (status, out, err) == (0, b"out\nerr\n", b"")


def test_exit_status_and_signal_deaths(host: SshHost, tmp_path: Path) -> None:
    assert run_to_end(host.start(Invocation(["sh", "-c", "exit 7"]), tmp_path / "r"))[0] == 7
    assert run_to_end(host.start(Invocation(["sh", "-c", "kill -s TERM $$"]), tmp_path / "r"))[0] == -15
    assert exit_code(None, None) == 255 and exit_code(0, "KILL") == -9 and exit_code(255, None) == 255


def test_a_program_that_is_not_there(host: SshHost, tmp_path: Path) -> None:
    status, _, err = run_to_end(host.start(Invocation(["no-such-program-racperf"]), tmp_path / "r"))
    assert status == 127 and b"not found" in err


def test_a_stop_ends_the_remote_group(host: SshHost, tmp_path: Path) -> None:
    proc = host.start(Invocation(["sh", "-c", "sleep 300 & sleep 301; wait"]), tmp_path / "r")
    assert proc.remote_pgid and proc.remote_pgid > 0
    time.sleep(0.3)
    assert len(group_alive(proc.remote_pgid)) >= 3  # sh and both sleeps: its own group
    assert os.getpgid(proc.remote_pgid) == proc.remote_pgid
    proc.stop(grace_s=5)
    status, _, _ = run_to_end(proc)
    assert status == -15
    wait_gone(proc.remote_pgid, 5)


def test_a_stop_escalates_to_kill_after_the_grace(host: SshHost, tmp_path: Path) -> None:
    proc = host.start(Invocation(["sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"]), tmp_path / "r")
    while b"ready" not in b"".join(c for _, c in proc.read(1.0)):
        pass
    started = time.monotonic()
    proc.stop(grace_s=1)
    status, _, _ = run_to_end(proc)
    assert status == -9
    assert time.monotonic() - started < 5
    wait_gone(proc.remote_pgid, 5)


def test_a_dropped_connection_kills_the_remote_benchmark(sshd: Sshd, tmp_path: Path) -> None:
    conn = ssh.connect(target(sshd), fresh=True)
    host = SshHost(target(sshd), remote_base=str(tmp_path), connection=conn)
    proc = host.start(Invocation(["sh", "-c", "trap '' HUP PIPE; sleep 300"]), tmp_path / "r")
    time.sleep(0.3)
    assert group_alive(proc.remote_pgid)
    conn.abort()  # the TCP connection gone without a goodbye
    took = wait_gone(proc.remote_pgid, 10)
    assert took < 10
    assert proc.reap(5) == 255


CLIENT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from racperf_tui.core.contract.invocation import Invocation
    from racperf_tui.core.remote.ssh import SshTarget
    from racperf_tui.core.remote.ssh_host import SshHost
    host = SshHost(SshTarget.parse(sys.argv[1], identity=sys.argv[2], known_hosts=[sys.argv[3]]),
                   remote_base=sys.argv[4])
    proc = host.start(Invocation(["sh", "-c", "trap '' HUP PIPE TERM; sleep 300"]), Path(sys.argv[4]) / "r")
    print(proc.remote_pgid, flush=True)
    time.sleep(600)
""")


def test_a_killed_client_kills_the_remote_benchmark(sshd: Sshd, tmp_path: Path) -> None:
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT, sshd.spec, str(sshd.user_key), str(sshd.known_hosts), str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        pgid = int(client.stdout.readline())
        time.sleep(0.3)
        assert group_alive(pgid)
        client.send_signal(signal.SIGKILL)
        client.wait()
        # the benchmark ignores TERM: the watchdog's KILL after its 3 s grace ends it
        took = wait_gone(pgid, 10)
        assert 2.0 < took < 10
    finally:
        client.kill()
        client.wait()


def test_invalid_utf8_output_leaves_another_channel_running(host: SshHost, tmp_path: Path) -> None:
    slow = host.start(Invocation(["sh", "-c", "sleep 1.5; echo still-here"]), tmp_path / "a")
    garbage = host.start(
        Invocation(["sh", "-c", "printf '\\377\\376\\300\\n\\200'; head -c 100000 /dev/urandom"]), tmp_path / "b"
    )
    status, out, _ = run_to_end(garbage)
    assert status == 0 and out.startswith(b"\xff\xfe\xc0\n\x80") and len(out) == 100005
    assert run_to_end(slow) == (0, b"still-here\n", b"")
    assert slow.connection is garbage.connection and not slow.connection.closed


def test_shell_line_refuses_a_bad_env_name() -> None:
    with pytest.raises(ValueError, match="not a shell identifier"):
        shell_line(["true"], env={"A;B": "x"})
    assert shell_line(["a b"], cwd="/x y") == "cd -- '/x y' && exec 'a b' </dev/null"


def test_a_write_watch_runs_on_the_node(host: SshHost, tmp_path: Path) -> None:
    """The node's own write watch (and jail) wraps the command: tests/test_node_guard.py."""
    from racperf_tui.core.guard.write_watch import WriteWatch

    proc = host.start(Invocation(["echo", "watched"]), tmp_path / "r", write_watch=WriteWatch(set()))
    status, out, _ = run_to_end(proc)
    assert (status, out) == (0, b"watched\n") and proc.net is not None and proc.net.protections


def test_the_supervisor_runs_a_whole_invocation_on_the_ssh_host(sshd: Sshd, tmp_path: Path, base: Path) -> None:
    """The run contract unchanged: the supervisor, given an SshHost, writes the input file
    there, runs the tool with env, cwd and stdin there, parses its output into Samples and
    its result file (fetched back) into the result; the store records the host."""
    import json

    from racperf_tui.core.contract.events import RunState
    from racperf_tui.core.store import Store
    from racperf_tui.orchestration.supervisor import Supervisor

    host = SshHost(target(sshd), remote_base=str(base))
    config = {"lun": ["/dev/mapper/a b", "$(touch PWNED8)"], "home": "/u01/app/o'racle", "sql": "select 1;\n"}
    data = tmp_path / "data"
    with Store.open(data) as store:
        run_id = store.create_run("tests.fakes.contracttool", host.name, None, config, [], None)
        record = Supervisor(store, run_id, host=host, handle_signals=False, log=lambda m: None).run()
        assert record.state is RunState.SUCCEEDED, record.message
        assert record.host == host.name == sshd.spec
        result = store.result(run_id)
        samples = [s for _seq, s in store.samples(run_id)]
    remote = host.remote_dir(data / "runs" / str(run_id))
    assert result is not None and result["summary"] == {
        "env": "/u01/app/o'racle",
        "cwd": remote,
        "luns": ["/dev/mapper/a", "b", "$(touch", "PWNED8)"],
        "sql": "select 1;\n",
    }
    assert json.loads(Path(remote, "demo_summary.txt").read_text()) == result["summary"]
    assert [s.metrics["value"] for s in samples] == [4.0]
    assert not list(tmp_path.rglob("PWNED*"))


# ---- the remote process tree: what leaves the group with setsid() is stopped too ----------


def processes_with(word: str, program: str = "fio") -> list[str]:
    """Live processes (zombies left out) of ``program`` whose command line holds ``word``, as
    ps here sees them (the watchdog's shells carry the command line too: left out)."""
    out = subprocess.run(["ps", "-ww", "-eo", "stat=,pid=,sid=,args="], capture_output=True, text=True).stdout
    rows = [line.split(None, 3) for line in out.splitlines()]
    return [
        " ".join(r) for r in rows if len(r) == 4 and r[3].startswith(program + " ") and word in r[3] and "Z" not in r[0]
    ]


def wait_until(predicate, timeout_s: float, what: str) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout_s, f"not within {timeout_s} s: {what}"
        time.sleep(0.1)
    return time.monotonic() - started


def fio_job(tmp_path: Path) -> tuple[list[str], str]:
    """fio with two job processes on a temp file, for two minutes; the file name marks it."""
    data = tmp_path / f"tree-{os.getpid()}-{time.monotonic_ns()}.dat"
    argv = [
        "fio",
        "--name=tree",
        f"--filename={data}",
        "--size=8m",
        "--rw=randread",
        "--bs=4k",
        "--numjobs=2",
        "--time_based",
        "--runtime=120",
        "--rate_iops=50",
    ]
    return argv, data.name


def test_a_kill_ends_fio_workers_that_left_the_group(host: SshHost, tmp_path: Path) -> None:
    """fio's job processes call setsid(): a KILL to the group alone kills their parent and
    leaves them running (reparented); the watchdog's tracker KILLs them too."""
    argv, marker = fio_job(tmp_path)
    proc = host.start(Invocation(argv), tmp_path / "r")
    try:
        wait_until(lambda: len(processes_with(marker)) == 3, 20, "fio and its 2 workers")
        sessions = {line.split()[2] for line in processes_with(marker)}
        assert len(sessions) == 3  # each worker is a session of its own: out of the group
        time.sleep(1.2)  # the tracker's next pass has seen them
        proc.kill()
        took = wait_until(lambda: not processes_with(marker), 10, f"fio gone: {processes_with(marker)}")
        print(f"fio and its workers gone {took:.2f} s after the KILL")
        assert took < 5
        assert proc.reap(10) == -9
    finally:
        proc.close()


def test_a_lost_link_ends_fio_and_its_workers(sshd: Sshd, tmp_path: Path) -> None:
    conn = ssh.connect(target(sshd), fresh=True)
    host = SshHost(target(sshd), remote_base=str(tmp_path), connection=conn)
    argv, marker = fio_job(tmp_path)
    proc = host.start(Invocation(argv), tmp_path / "r")
    wait_until(lambda: len(processes_with(marker)) == 3, 20, "fio and its 2 workers")
    time.sleep(1.2)
    conn.abort()
    took = wait_until(lambda: not processes_with(marker), 10, f"fio gone: {processes_with(marker)}")
    print(f"fio and its workers gone {took:.2f} s after the link died")
    assert took < 10
    assert proc.reap(5) == 255 and proc.link_lost


def test_a_lost_link_ends_a_child_that_left_with_setsid_and_ignores_term(sshd: Sshd, tmp_path: Path) -> None:
    """The group's TERM cannot reach a setsid()'d grandchild, which ignores TERM anyway: the
    tracker's list gets it the KILL after the grace."""
    conn = ssh.connect(target(sshd), fresh=True)
    host = SshHost(target(sshd), remote_base=str(tmp_path), connection=conn)
    marker = f"{time.monotonic_ns() % 10**9}.5"
    script = f"trap '' TERM HUP; setsid sh -c \"trap '' TERM HUP; exec sleep {marker}\" & wait"
    proc = host.start(Invocation(["sh", "-c", script]), tmp_path / "r")
    wait_until(lambda: processes_with(marker, "sleep"), 10, "the sleep")
    (sleeper,) = processes_with(marker, "sleep")
    assert sleeper.split()[2] != str(proc.remote_pgid)  # another session
    time.sleep(1.2)
    conn.abort()
    took = wait_until(lambda: not processes_with(marker, "sleep"), 10, "the setsid'd sleep gone")
    print(f"the setsid'd child that ignores TERM gone {took:.2f} s after the link died")
    assert 2.0 < took < 10  # TERM ignored: KILL after the 3 s grace


def test_the_tracker_costs_little(host: SshHost, tmp_path: Path) -> None:
    """A look at ps a second (ps, awk and a sleep forked), a beat a second: the watchdog's
    subshells' CPU time over 5 s, from /proc, with their reaped children."""
    import psutil

    proc = host.start(Invocation(["sleep", "30"]), tmp_path / "r")
    try:
        time.sleep(1.5)  # the watchdog's subshells started, its first look at ps done
        leader = psutil.Process(proc.remote_pgid)
        watchdog = leader.parent()
        assert proc.mark in " ".join(watchdog.cmdline())
        subshells = [child for child in watchdog.children() if child.pid != leader.pid]
        # the tracker, the heartbeat's deadman, the stdin reader
        assert len(subshells) == 3, [(c.pid, c.cmdline()[:2]) for c in watchdog.children()]

        def cpu_s() -> float:
            return sum(sum(p.cpu_times()[:4]) for p in subshells)

        before = cpu_s()
        time.sleep(5)
        used = cpu_s() - before
        print(f"tracker, deadman and reader: {used * 1000:.0f} ms of CPU in 5 s, {len(psutil.pids())} processes")
        assert used < 0.25, f"{used:.2f} s of CPU in 5 s"
    finally:
        proc.stop(1)
        run_to_end(proc)


def test_without_ps_the_tracker_walks_proc_in_sh(tmp_path: Path) -> None:
    """The watchdog as the node's shell runs it, on a PATH without ps and awk: the /proc walk
    finds fio's workers, and a KILL line on its stdin ends all three."""
    import shutil

    from racperf_tui.core.remote.ssh_host import watchdog_command

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("sh", "setsid", "sleep", "mv", "rm", "mkdir", "rmdir", "fio"):
        os.symlink(shutil.which(program), bin_dir / program)
    argv, marker = fio_job(tmp_path)
    line = watchdog_command(shell_line(argv), "racperf-walk", 3, None)
    watchdog = subprocess.Popen(
        ["sh", "-c", line],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"PATH": str(bin_dir), "TMPDIR": str(tmp_path)},
    )
    try:
        wait_until(lambda: len(processes_with(marker)) == 3, 20, "fio and its 2 workers")
        tracked = tmp_path / f"racperf-walk.{watchdog.pid}" / "list"
        wait_until(lambda: tracked.exists() and len(tracked.read_text().split()) == 3, 5, "three tracked")
        pids = sorted(int(entry.split(":")[0]) for entry in tracked.read_text().split())
        assert pids == sorted(int(row.split()[1]) for row in processes_with(marker))
        assert watchdog.stdin is not None
        watchdog.stdin.write(b"KILL\n")
        watchdog.stdin.flush()
        took = wait_until(lambda: not processes_with(marker), 10, f"fio gone: {processes_with(marker)}")
        assert took < 5
        watchdog.stdin.close()
        assert watchdog.wait(10) == 128 + 9
        assert not tracked.exists()  # the watchdog cleans up after itself
    finally:
        watchdog.kill()
        watchdog.wait()


def test_a_link_cut_without_a_word_ends_the_remote_benchmark(netns_cluster_factory, tmp_path: Path) -> None:
    """The node's public link dropped (packets lost, no FIN, no RST): no EOF ever reaches
    the node's watchdog, the heartbeats stop, and its deadman ends fio and its workers."""
    from racperf_tui.core.remote.cluster import load_cluster

    made = netns_cluster_factory(1)
    node = load_cluster(made.cluster_file).node("n1")
    conn = ssh.connect(node.ssh_target(), fresh=True)
    host = SshHost(node.ssh_target(), remote_base=str(tmp_path), connection=conn)
    argv, marker = fio_job(tmp_path)
    proc = host.start(Invocation(argv), tmp_path / "r")
    assert proc.remote_pgid and proc.remote_pgid > 0
    try:
        wait_until(lambda: len(processes_with(marker)) == 3, 20, "fio and its 2 workers on n1")
        time.sleep(1.5)
        made.node("n1").cut()
        took = wait_until(lambda: not processes_with(marker), 15, f"fio gone: {processes_with(marker)}")
        print(f"fio and its workers gone {took:.2f} s after the link was cut")
        assert took < 10
        assert not conn.closed  # this side has not noticed yet: keepalives take 15 s during a run
    finally:
        made.node("n1").mend()
        conn.abort()
        proc.close()
