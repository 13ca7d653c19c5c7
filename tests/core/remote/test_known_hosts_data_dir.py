"""racperf's own known_hosts follows ``--data-dir`` (issue 10): a key accepted in the dashboard
started with ``--data-dir D`` is written to D/known_hosts, not to the environment's data dir,
and the detached supervisors of a run under D find it there; ``racperf nodes
--accept-new-host-keys --data-dir D`` records into D/known_hosts too. Against a real OpenSSH
sshd, the dashboard on a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.cluster import load_cluster
from racperf_tui.core.store import Store
from racperf_tui.orchestration.cluster_monitor import ClusterMonitor
from racperf_tui.ui.dialogs.host_key_dialog import HostKeyDialog
from racperf_tui.ui.tabs.cluster_panel import ClusterPanel
from tests.helpers.cluster_helpers import REPO, racperf, remote_runs  # noqa: F401 (fixture)
from tests.helpers.cluster_panel import PanelApp
from tests.helpers.sshd_helpers import Sshd


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the environment's data dir, the --data-dir one); no ~/.ssh, no agent."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    default = tmp_path / "env-data"
    monkeypatch.setenv("RACPERF_DATA_DIR", str(default))
    yield default, tmp_path / "D"
    ssh.close_all()


def cluster_file(tmp_path: Path, server: Sshd) -> Path:
    """rac1 without a known_hosts of its own: racperf's file (and ~/.ssh's) are consulted."""
    path = tmp_path / "cluster.toml"
    path.write_text(
        f'[[node]]\nname = "rac1"\nhost = "{server.host}"\nport = {server.port}\nuser = "{server.user}"\n'
        f'identity = "{server.user_key}"\ninterconnect = "127.0.0.1"\n'
    )
    return path


def test_nodes_accept_new_host_keys_records_into_the_data_dir_given(
    sshd: Sshd, tmp_path: Path, dirs: tuple[Path, Path]
) -> None:
    default, data = dirs
    done = racperf(
        "nodes", "--cluster", str(cluster_file(tmp_path, sshd)), "--accept-new-host-keys", "--data-dir", str(data)
    )
    assert done.returncode == 0, done.stderr
    assert (data / "known_hosts").read_text() == sshd.known_hosts.read_text()
    assert f"in {data / 'known_hosts'}" in done.stderr and sshd.host_fingerprint() in done.stderr
    assert not (default / "known_hosts").exists()


def _drain(fd: int, output: bytearray, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                output += os.read(fd, 65536)
            except OSError:
                return


@pytest.mark.slow
def test_a_key_accepted_under_data_dir_is_in_it_and_its_supervisors_use_it(
    sshd: Sshd,
    tmp_path: Path,
    dirs: tuple[Path, Path],
    remote_runs: Path,  # noqa: F811
) -> None:
    default, data = dirs
    cluster = cluster_file(tmp_path, sshd)
    argv = [sys.executable, "-m", "racperf_tui", "--data-dir", str(data), "--cluster", str(cluster)]
    env = dict(os.environ, TERM="xterm-256color", PYTHONPATH=str(REPO))
    pid, fd = pty.fork()
    if pid == 0:
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
            os.chdir(REPO)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    output = bytearray()
    try:
        deadline = time.monotonic() + 30
        while b"SHA256:" not in output:  # the dialog of rac1's unknown key, on the Cluster tab
            assert time.monotonic() < deadline, output[-800:]
            _drain(fd, output, 0.1)
        _drain(fd, output, 0.5)  # the dialog's bindings are live once it has painted
        os.write(fd, b"a")
        deadline = time.monotonic() + 15
        while not (data / "known_hosts").exists():
            assert time.monotonic() < deadline, output[-800:]
            _drain(fd, output, 0.1)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    assert (data / "known_hosts").read_text() == sshd.known_hosts.read_text()
    assert not (default / "known_hosts").exists()

    # the environment's data dir knows no key of rac1: refused before anything runs
    refused = racperf("pair", "probe", "--server-node", "rac1", "--cluster", str(cluster), "--server", "port=0")
    assert refused.returncode == 3, refused.stderr
    assert "host key unknown" in refused.stderr and str(default / "known_hosts") in refused.stderr
    # under D both detached supervisors (the server's on rac1) connect with D's key
    done = racperf(
        "pair", "probe", "--server-node", "rac1", "--cluster", str(cluster), "--data-dir", str(data),
        "--server", "port=0", "--set", "duration_s=1", "--set", "interval_s=0.5",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    head = json.loads(done.stdout.splitlines()[0])
    with Store.open(data) as store:
        server = store.get_run(head["server_run_id"])
        client = store.get_run(head["client_run_id"])
    assert server.host == "rac1" and server.state is RunState.SUCCEEDED, server.message
    assert client.state is RunState.SUCCEEDED and head["port"] > 0


def asking_threads() -> list[int]:
    """The threads inside host_key_dialog.ask_in_thread now."""
    found = []
    for ident, frame in sys._current_frames().items():
        walk = frame
        while walk is not None:
            if walk.f_code.co_name == "ask_in_thread":
                found.append(ident)
                break
            walk = walk.f_back
    return found


async def test_an_app_that_ends_with_the_host_key_dialog_open_leaves_no_thread_waiting(
    sshd: Sshd, tmp_path: Path, dirs: tuple[Path, Path]
) -> None:
    """The dialog is asked from a worker thread: an app ended with it open (ctrl+q, a test that
    failed) answers it "rejected", else that thread waits for ever and the process never exits."""
    default, _ = dirs
    cluster = cluster_file(tmp_path, sshd)
    panel = ClusterPanel(cluster, 0.5, monitor=ClusterMonitor(load_cluster(cluster).nodes, 0.5, backoff_s=(5.0, 30.0)))
    app = PanelApp(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        deadline = time.monotonic() + 20
        while not isinstance(app.screen, HostKeyDialog):
            assert time.monotonic() < deadline, panel.monitor.states()
            await pilot.pause(0.05)
        assert asking_threads()  # the worker waiting for the answer
    deadline = time.monotonic() + 10
    while asking_threads():
        assert time.monotonic() < deadline, f"the asking thread still waits after the app ended ({app.is_running=})"
        time.sleep(0.05)
    assert not (default / "known_hosts").exists()  # ended unanswered: nothing trusted
