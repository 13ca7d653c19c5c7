"""Ways around racperf's protections found in the safety review (each a real reproduction)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from racperf_tui.core.remote.cluster import load_cluster
from racperf_tui.core.remote.node_runs import NodeRun, stop_node_run
from racperf_tui.core.remote.ssh import connect
from racperf_tui.core.remote.ssh_host import remote_run_prefix
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf, remote_runs  # noqa: F401 (fixtures)
from tests.helpers.sshd_helpers import Sshd

NOBODY = 65534


def _as_nobody(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.usefixtures("isolated_home", "remote_runs")
def test_runs_stop_on_a_node_never_signals_for_another_users_fake_watchdog(sshd: Sshd, tmp_path: Path) -> None:
    """Any local user of the node can start a process whose argv looks like racperf's watchdog
    (the run's name, HOST-HASH-ID, is in every real watchdog's /proc cmdline) and write the
    tracker file ``/tmp/MARK.PID`` the stop reads as root: its first word became the process
    group the stop TERMs and KILLs (``1``: kill -- -1, every process of the node)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run the other user's process")
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    data = tmp_path / "data"
    (data / "runs").mkdir(parents=True)
    name = f"{remote_run_prefix(data / 'runs')}5"
    mark = f"racperf-{name}-0123456789ab"
    # not racperf's: a root process of its own (an Oracle background process, say)
    victim = subprocess.Popen(["setsid", "sleep", "300"], stdin=subprocess.DEVNULL)
    fake = _as_nobody(["sh", "-c", "sleep 300", "racperf-watchdog", mark, "1", "0", "exec fio", "0"])
    tracker = Path(os.environ.get("TMPDIR") or "/tmp") / f"{mark}.{fake.pid}"
    try:
        time.sleep(0.3)
        tracker.write_text(f"{victim.pid}:1 {victim.pid}:{psutil.Process(victim.pid).create_time()}\n")
        os.chown(tracker, NOBODY, NOBODY)
        done = racperf("runs", "stop", "5", "--node", "rac1", "--cluster", str(cluster), "--data-dir", str(data))
        time.sleep(0.3)
        assert victim.poll() is None, f"the stop signalled a process not racperf's: {done.stdout} {done.stderr}"
        assert done.returncode == 3 and "nothing of run 5 runs on rac1" in done.stderr
        # and the stop itself, given that process, refuses it (not only the listing)
        connection = connect(load_cluster(cluster).node("rac1").ssh_target())
        with pytest.raises(OSError, match="not a watchdog of this user's"):
            stop_node_run(connection, NodeRun(name, 5, True, fake.pid, mark), grace_s=1)
        assert victim.poll() is None
    finally:
        for p in (victim, fake):
            p.kill()
            p.wait()
        tracker.unlink(missing_ok=True)


def test_the_watchdog_never_writes_through_a_link_another_user_planted_in_tmp(tmp_path: Path) -> None:
    """The watchdog (root, on the node) kept its tracker as ``/tmp/MARK.PID`` and rewrote it
    through ``/tmp/MARK.PID.new`` (also ``.ref``, ``.beat``): names any local user reads in
    /proc (the mark is the watchdog's argv) and plants as a symlink between two writes; where
    fs.protected_symlinks is 0 (kernels before 3.6, containers) root's ``>`` truncated the
    link's target: any file, a datafile included."""
    if os.geteuid() != 0:
        pytest.skip("needs root, as on the nodes")
    if Path("/proc/sys/fs/protected_symlinks").read_text().strip() != "0":
        pytest.skip("fs.protected_symlinks is on here: the kernel refuses the link")
    from racperf_tui.core.remote.ssh_host import WATCHDOG_SH

    precious = tmp_path / "system01.dbf"
    precious.write_text("precious data\n")
    mark = f"racperf-review-{os.getpid()}-0123456789ab"
    env = {**os.environ, "TMPDIR": "/tmp"}
    command = "sleep 2; sleep 3"  # a new process at 2 s: the tracker writes its list again
    watchdog = subprocess.Popen(
        ["sh", "-c", WATCHDOG_SH, "racperf-watchdog", mark, "1", "0", command, "3"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    planted = [Path(f"/tmp/{mark}.{watchdog.pid}{suffix}") for suffix in (".new", ".ref", ".beat")]
    try:
        time.sleep(1.0)  # the first list is written: .new renamed away, the name free again
        for link in planted:
            _as_nobody(["ln", "-s", str(precious), str(link)]).wait(10)
        assert watchdog.stdin is not None
        for _ in range(7):  # the client's heartbeat: the watchdog touches .beat on each
            watchdog.stdin.write(b"beat\n")
            watchdog.stdin.flush()
            time.sleep(0.5)
        watchdog.stdin.close()
        watchdog.wait(15)
        assert precious.read_text() == "precious data\n", "the watchdog wrote through another user's link"
    finally:
        if watchdog.poll() is None:
            watchdog.kill()
        for link in planted:
            if link.is_symlink():
                link.unlink()


@pytest.mark.skipif(subprocess.run(["which", "fio"], capture_output=True).returncode != 0, reason="no fio")
def test_client_mode_judges_the_file_the_server_writes_under_a_directory(tmp_path: Path) -> None:
    """With ``directory=`` a fio server puts the client's address before the name
    (fio's set_name_idx, unique_filename=1 by default): the job ``directory=D filename=f``
    judged D/f on the server's node while the server wrote D/127.0.0.1.f, a file nobody judged
    (and ``filename=`` absolute under a directory: D/127.0.0.1./D/f, directories made)."""
    from racperf_tui.tools import load_tool
    from tests.helpers.fio_servers import start_fio_server as _start_server
    from tests.helpers.fio_servers import stop_fio_server as _stop

    module = load_tool("fio_cs")
    served = tmp_path / "on-server"
    served.mkdir()
    (tmp_path / "cwd").mkdir()
    proc, port = _start_server(tmp_path / "cwd")
    try:
        for extra in (
            ["--name=j", f"--directory={served}", "--filename=f", "--rw=write", "--size=64k"],
            ["--name=j", f"--directory={served}", f"--filename={served}/g", "--rw=write", "--size=64k"],
        ):
            run_dir = tmp_path / f"run{len(list(tmp_path.glob('run*')))}"
            run_dir.mkdir()
            try:
                planned = module.TOOL.invocation({"servers": [f"127.0.0.1:{port}"], "extra_args": extra}, str(run_dir))
            except ValueError:
                continue  # refused: nothing written unjudged
            for name, text in planned.files.items():
                (run_dir / name).write_text(text)
            subprocess.run(planned.argv, cwd=run_dir, capture_output=True, timeout=60)
            judged = {os.path.realpath(t.path) for t in planned.targets}
            written = {os.path.realpath(p) for p in served.rglob("*") if p.is_file()}
            assert written <= judged, f"the server wrote {sorted(written - judged)}, judged only {sorted(judged)}"
    finally:
        _stop(proc)


@pytest.mark.skipif(subprocess.run(["which", "fio"], capture_output=True).returncode != 0, reason="no fio")
@pytest.mark.usefixtures("isolated_home")
def test_a_read_job_in_client_mode_never_rewrites_a_live_datafile_on_the_server(tmp_path: Path) -> None:
    """fio lays out a file a read job finds shorter than its size: it rewrites it whole
    (filesetup.c extend_file: new_layout for reads). The fio tool runs read-only plans with
    ``--readonly``, which fio's client does not send to its servers: a file held open by another
    process (a live datafile), cleared as a read target, was rewritten by the server."""
    from racperf_tui.orchestration.run_plan import judge_run
    from racperf_tui.tools import load_tool
    from tests.helpers.fio_servers import start_fio_server as _start_server
    from tests.helpers.fio_servers import stop_fio_server as _stop

    module = load_tool("fio_cs")
    data = tmp_path / "data.dbf"
    data.write_bytes(b"precious\n" * 100)
    (tmp_path / "cwd").mkdir()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    proc, port = _start_server(tmp_path / "cwd")
    with open(data, "rb") as handle:  # the database's open datafile
        holder = subprocess.Popen(["sleep", "300"], stdin=handle)
    try:
        config = {"servers": [f"127.0.0.1:{port}"], "target": str(data), "rw": "read", "size": "1m", "runtime_s": 1}
        try:
            judged = judge_run(module, "fio_cs", config, str(run_dir))
        except ValueError:
            return  # refused: nothing runs
        for name, text in judged.invocation.files.items():
            (run_dir / name).write_text(text)
        subprocess.run(judged.invocation.argv, cwd=run_dir, capture_output=True, timeout=60)
        assert data.read_bytes() == b"precious\n" * 100, "a read job in client mode rewrote the file"
    finally:
        holder.kill()
        holder.wait()
        _stop(proc)


@pytest.mark.usefixtures("isolated_home")
def test_runs_stop_on_a_node_never_signals_a_reused_watchdog_pid(sshd: Sshd, tmp_path: Path) -> None:
    """Between the listing and the stop the watchdog may end and its pid be reused: the stop
    took the group of any child of that pid that leads its own group (ps: ppid == pid, pid ==
    pgid) and TERMed and KILLed it. Here a process of this user without the mark, whose child
    leads its own session, stands in for the reused pid."""
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    other = subprocess.Popen(["sh", "-c", "setsid sleep 300 & wait"], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        children: list[psutil.Process] = []
        while not children and time.monotonic() < deadline:
            time.sleep(0.1)
            children = psutil.Process(other.pid).children()
        assert children
        connection = connect(load_cluster(cluster).node("rac1").ssh_target())
        mark = "racperf-vm-00000000-9-0123456789ab"
        try:
            stop_node_run(connection, NodeRun("vm-00000000-9", 9, True, other.pid, mark), grace_s=1)
        except OSError:
            pass
        time.sleep(0.3)
        assert children[0].is_running() and children[0].status() != psutil.STATUS_ZOMBIE, (
            "a process not racperf's was stopped"
        )
    finally:
        for child in psutil.Process(other.pid).children():
            child.kill()
        other.kill()
        other.wait()


def test_a_host_name_with_known_hosts_pattern_characters_is_never_offered_for_recording() -> None:
    """The offer's line is ``HOST TYPE KEY`` with HOST as given: a host 'rac1,*' (SshTarget.parse
    takes it; ~/.ssh/config's ``Host rac1*`` can give it a HostName) recorded the key for ``*``,
    every host, so whoever holds rac1's host key could then pass for any node."""
    import asyncssh

    from racperf_tui.core.remote.ssh import SshTarget, _host_key_message

    key = asyncssh.generate_private_key("ssh-ed25519").convert_to_public()
    for host in ("rac1,*", "*", "!rac2", "rac?"):
        error = _host_key_message(SshTarget.parse(host), 22, key, asyncssh.import_known_hosts(""), [], "127.0.0.1")
        assert error.offer is None, f"{host!r}: offered {error.offer.line if error.offer else ''}"
    plain = _host_key_message(SshTarget.parse("rac1"), 22, key, asyncssh.import_known_hosts(""), [], "127.0.0.1")
    assert plain.offer is not None and plain.offer.line.startswith("rac1 ssh-ed25519 ")


def test_a_loopback_server_of_a_client_on_another_node_is_judged_on_that_node(tmp_path: Path) -> None:
    """fio's client on node rac2 (--node) connects to 127.0.0.1 there: rac2's own server. A
    cluster file whose node rac1 is entered by 127.0.0.1 (this machine as a node, as the test
    fixtures do) had the targets judged on rac1, and rac2's files written unjudged."""
    from racperf_tui.core.contract.invocation import Target
    from racperf_tui.core.guard.target_guard import GuardVerdict
    from racperf_tui.orchestration import run_plan

    cluster = tmp_path / "cluster.toml"
    cluster.write_text('[[node]]\nname = "rac1"\nhost = "127.0.0.1"\n')
    asked: list[str] = []

    class Rac2:
        name = "rac2"
        remote = True

        def judge_targets(self, targets: list[Target], override: object) -> GuardVerdict:
            asked.extend(t.path for t in targets)
            return GuardVerdict()

    target = Target("/u01/oradata/x.dbf", "write", "filename= on fio server 127.0.0.1", node="127.0.0.1")
    run_plan._with_verdicts_elsewhere(GuardVerdict(), [target], False, str(cluster), Rac2())  # type: ignore[arg-type]
    assert asked == ["/u01/oradata/x.dbf"], "the loopback server's targets were not judged on the client's node"
