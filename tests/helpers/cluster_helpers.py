"""What the cluster tests share: an isolated HOME (no ~/.ssh of this machine's user, no agent),
a cluster file's [[node]] table for an sshd fixture, the run directories the node's side makes
(removed after), ``racperf`` as a subprocess."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.ssh_host import remote_run_prefix
from tests.helpers import reveals
from tests.helpers.sshd_helpers import Sshd, start_sshd

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """No ~/.ssh of this machine's user, no agent (here and in the detached supervisors). The
    cache (XDG_CACHE_HOME) stays the session's, shared by the test workers (tests/conftest.py
    fio_option_cache): fio's option table of a node is keyed by the node's name, fio's path,
    version and checksum, and reading it cold over SSH takes ~20 s a test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    yield home
    ssh.close_all()


def node_table(name: str, server: Sshd, **extra: str) -> str:
    fields = {
        "name": name,
        "host": server.host,
        "port": server.port,
        "user": server.user,
        "identity": str(server.user_key),
        "known_hosts": str(server.known_hosts),
        "interconnect": server.host,
        **extra,
    }
    body = "\n".join(f"{k} = {v if isinstance(v, int) else json.dumps(v)}" for k, v in fields.items())
    return f"[[node]]\n{body}\n"


def remote_base(server: Sshd | None = None) -> Path:
    """Where the node's side makes the run directories: its user's ~/.racperf/runs (the test
    nodes log in as this user, whatever HOME the test sets here)."""
    return Path(os.path.expanduser(f"~{server.user if server else getpass.getuser()}")) / ".racperf" / "runs"


@pytest.fixture
def remote_runs(tmp_path: Path):
    """The run directories the nodes' side made for this test's data dirs, removed after. Only
    this test's: the other test worker's runs live in the same ~/.racperf/runs (removing every
    directory new since the start deleted the other worker's running benchmark's files)."""
    base = remote_base()
    yield base
    if not base.exists():
        return
    mine = {remote_run_prefix(runs) for runs in tmp_path.rglob("runs") if runs.is_dir()}
    for path in base.glob("*"):
        if any(path.name.startswith(prefix) for prefix in mine):
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def two_nodes(sshd: Sshd, tmp_path: Path, isolated_home: Path, remote_runs: Path):  # noqa: F811
    """rac1 and rac2: two sshd on 127.0.0.1, in a cluster file."""
    second = start_sshd(tmp_path / "sshd2")
    path = tmp_path / "cluster.toml"
    path.write_text('[cluster]\nname = "test"\n\n' + node_table("rac1", sshd) + node_table("rac2", second))
    try:
        yield path
    finally:
        second.stop()


@reveals("subprocess_cli")
def racperf(*args: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "racperf_tui", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
    )
