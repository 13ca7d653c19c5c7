"""The sshd fixture is a real OpenSSH server: its known_hosts file verifies it, its user key
logs in, nothing else does, and it is gone after teardown."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.helpers.sshd_helpers import Sshd

needs_ssh_client = pytest.mark.skipif(shutil.which("ssh") is None, reason="OpenSSH client not installed")


def _ssh(server: Sshd, *command: str, key: bool = True) -> subprocess.CompletedProcess[str]:
    argv = [
        "ssh",
        "-F",
        "none",
        "-p",
        str(server.port),
        "-o",
        "BatchMode=yes",
        "-o",
        f"UserKnownHostsFile={server.known_hosts}",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "IdentitiesOnly=yes",
        "-o",
        "IdentityAgent=none",
    ]
    if key:
        argv += ["-i", str(server.user_key)]
    return subprocess.run(
        argv + [f"{server.user}@{server.host}", *command],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )


def test_the_fixture_listens_on_loopback_with_its_own_keys(sshd: Sshd) -> None:
    assert 20000 <= sshd.port <= 60000
    assert sshd.known_hosts.read_text().startswith(f"[127.0.0.1]:{sshd.port} ssh-ed25519 ")
    assert sshd.host_fingerprint().startswith("SHA256:")
    assert (sshd.directory / "sshd.pid").read_text().strip() == str(sshd.pid)


@needs_ssh_client
def test_openssh_logs_in_with_the_user_key_and_verifies_the_host_key(sshd: Sshd) -> None:
    out = _ssh(sshd, "echo", "hello")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "hello\n"


@needs_ssh_client
def test_no_key_no_login(sshd: Sshd) -> None:
    out = _ssh(sshd, "true", key=False)
    assert out.returncode == 255
    assert "Permission denied" in out.stderr


def test_teardown_stops_the_server(tmp_path) -> None:
    from tests.helpers.sshd_helpers import sshd_available, start_sshd

    if not sshd_available()[0]:
        pytest.skip(sshd_available()[1])
    server = start_sshd(tmp_path / "s")
    process = server.process
    assert process is not None and process.poll() is None
    server.stop()
    assert process.poll() is not None
