"""racperf's SSH connections (core/remote/ssh.py) against a real OpenSSH sshd on 127.0.0.1: host keys
always verified (unknown refused with the fingerprint, changed refused loudly), racperf's own
known_hosts file in the data dir, identity files, one pooled connection per node, output as
bytes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.ssh import HostKeyError, SshError, SshTarget
from tests.helpers.sshd_helpers import Sshd


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ~/.ssh of the machine's user (config, known_hosts, keys) and no agent."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.setenv("RACPERF_DATA_DIR", str(tmp_path / "data"))
    yield home
    ssh.close_all()


def target(server: Sshd, **kw) -> SshTarget:
    kw.setdefault("identity", str(server.user_key))
    kw.setdefault("known_hosts", [str(server.known_hosts)])
    return SshTarget.parse(server.spec, **kw)


def test_parse_specs() -> None:
    assert SshTarget.parse("db1") == SshTarget("db1")
    assert SshTarget.parse("oracle@db1:2222") == SshTarget("db1", "oracle", 2222)
    assert SshTarget.parse("[fe80::1]:22").host == "fe80::1"
    assert SshTarget.parse("oracle@db1:2222").display == "oracle@db1:2222"
    for bad in ("", "a b", "db1:99999", "u@", "db1:x"):
        with pytest.raises(ValueError):
            SshTarget.parse(bad)


def test_connects_verified_and_runs_a_command_with_bytes_out(sshd: Sshd) -> None:
    conn = ssh.connect(target(sshd))
    status, out, err = conn.run("printf 'a\\377b\\n'; echo err >&2; exit 3")
    assert (status, out, err) == (3, b"a\xffb\n", b"err\n")
    assert conn.setup_s < 10
    assert ssh.connect(target(sshd)) is conn  # one connection per node
    assert conn.run("echo again")[1] == b"again\n"  # the invalid byte closed nothing


def test_racperf_own_known_hosts_file_in_the_data_dir(sshd: Sshd, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "known_hosts").write_text(sshd.known_hosts.read_text())
    conn = ssh.connect(SshTarget.parse(sshd.spec, identity=str(sshd.user_key)))
    assert conn.run("echo ok")[1] == b"ok\n"


def test_an_unknown_host_is_refused_with_its_fingerprint(sshd: Sshd, tmp_path: Path) -> None:
    with pytest.raises(HostKeyError) as caught:
        ssh.connect(SshTarget.parse(sshd.spec, identity=str(sshd.user_key)))
    message = str(caught.value)
    assert not caught.value.changed
    assert sshd.host_fingerprint() in message
    assert f"[127.0.0.1]:{sshd.port} is not known" in message
    assert f"ssh-keyscan -p {sshd.port} -t ed25519 127.0.0.1 >> {tmp_path / 'data' / 'known_hosts'}" in message


def test_a_changed_host_key_is_refused_loudly(sshd: Sshd, tmp_path: Path) -> None:
    import subprocess

    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    key_type, key_data = Path(f"{other}.pub").read_text().split()[:2]
    wrong = tmp_path / "wrong_known_hosts"
    wrong.write_text(f"[127.0.0.1]:{sshd.port} {key_type} {key_data}\n")
    with pytest.raises(HostKeyError) as caught:
        ssh.connect(target(sshd, known_hosts=[str(wrong)]))
    assert caught.value.changed
    assert "HAS CHANGED" in str(caught.value)
    assert sshd.host_fingerprint() in str(caught.value)


def test_a_key_the_node_does_not_know_is_refused(sshd: Sshd, tmp_path: Path) -> None:
    import subprocess

    other = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    with pytest.raises(SshError, match="login refused"):
        ssh.connect(target(sshd, identity=str(other)))


def test_nobody_listening(tmp_path: Path) -> None:
    from tests.helpers.sshd_helpers import _free_port

    with pytest.raises(SshError, match="cannot connect"):
        ssh.connect(SshTarget.parse(f"127.0.0.1:{_free_port()}", known_hosts=[str(tmp_path / "none")]))


def test_a_closed_connection_is_replaced_in_the_pool(sshd: Sshd) -> None:
    conn = ssh.connect(target(sshd))
    conn.abort()
    assert conn.closed
    again = ssh.connect(target(sshd))
    assert again is not conn and again.run("echo back")[1] == b"back\n"


def test_keepalive_is_configured(sshd: Sshd) -> None:
    conn = ssh.connect(target(sshd))
    assert conn._conn._keepalive_interval == ssh.KEEPALIVE_INTERVAL_S == 15
    assert conn._conn._keepalive_count_max == ssh.KEEPALIVE_COUNT_MAX == 3


def test_config_file_user_and_port_are_honoured(sshd: Sshd, isolated_home: Path) -> None:
    config = isolated_home / ".ssh" / "config"
    config.parent.mkdir()
    config.write_text(
        f"Host node1\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n  IdentityFile {sshd.user_key}\n"
    )
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts.read_text())
    started = time.monotonic()
    conn = ssh.connect(SshTarget.parse("node1"))
    assert conn.run("echo via-config")[1] == b"via-config\n"
    assert time.monotonic() - started < 10
