"""Host keys seen for the first time, against a real OpenSSH sshd: the offer in the refusal,
recorded in racperf's own known_hosts (DATA_DIR/known_hosts) only once the user accepted it in
the dialog (Pilot, the Cluster tab), a second connection with no dialog, a rejected key never
written, a changed key never offered and refused naming both fingerprints and the file:line
on record; ``racperf nodes --accept-new-host-keys`` for first contact only."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from textual.app import App

from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.cluster import load_cluster
from racperf_tui.core.remote.ssh import HostKeyError, SshTarget
from racperf_tui.orchestration.cluster_monitor import ClusterMonitor
from racperf_tui.ui.dialogs.host_key_dialog import HostKeyDialog
from racperf_tui.ui.tabs.cluster_panel import ClusterPanel
from tests.helpers.cluster_helpers import racperf
from tests.helpers.cluster_panel import PanelApp
from tests.helpers.sshd_helpers import Sshd


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """No ~/.ssh, no agent; racperf's data dir (its known_hosts) in the test's directory."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("RACPERF_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    yield
    ssh.close_all()


def own_known_hosts(tmp_path: Path) -> Path:
    return tmp_path / "data" / "known_hosts"


def target(server: Sshd) -> SshTarget:
    """The node with no known_hosts of its own: racperf's file and ~/.ssh/known_hosts."""
    return SshTarget.parse(server.spec, identity=str(server.user_key))


def cluster_file(tmp_path: Path, server: Sshd) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text(
        f'[[node]]\nname = "rac1"\nhost = "{server.host}"\nport = {server.port}\nuser = "{server.user}"\n'
        f'identity = "{server.user_key}"\n'
    )
    return path


def other_key_line(tmp_path: Path, server: Sshd) -> tuple[str, str]:
    """A known_hosts line for the node with a key that is not its own, and that key's fingerprint."""
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    key_type, key_data = Path(f"{other}.pub").read_text().split()[:2]
    fingerprint = subprocess.run(
        ["ssh-keygen", "-l", "-f", f"{other}.pub"], check=True, capture_output=True, text=True
    ).stdout.split()[1]
    return f"[127.0.0.1]:{server.port} {key_type} {key_data}", fingerprint


def test_the_refusal_carries_the_offer_and_recording_it_trusts_the_node(sshd: Sshd, tmp_path: Path) -> None:
    with pytest.raises(HostKeyError) as caught:
        ssh.connect(target(sshd), fresh=True)
    offer = caught.value.offer
    assert offer is not None and not caught.value.changed
    assert (offer.host, offer.algorithm, offer.fingerprint) == (
        f"[127.0.0.1]:{sshd.port}",
        "ssh-ed25519",
        sshd.host_fingerprint(),
    )
    assert offer.file == str(own_known_hosts(tmp_path))
    assert not own_known_hosts(tmp_path).exists()  # a refusal writes nothing
    path = ssh.record_host_key(offer)
    assert path == own_known_hosts(tmp_path) and path.stat().st_mode & 0o777 == 0o600
    # the line is the node's own host key, as the fixture's known_hosts has it
    assert path.read_text() == sshd.known_hosts.read_text()
    connection = ssh.connect(target(sshd), fresh=True)
    assert connection.run("echo trusted")[1] == b"trusted\n"
    connection.close()


def test_a_record_without_its_last_newline_gets_one_before_the_new_line(sshd: Sshd, tmp_path: Path) -> None:
    own_known_hosts(tmp_path).parent.mkdir(parents=True)
    own_known_hosts(tmp_path).write_text("# kept\nother.example ssh-ed25519 AAAA")
    with pytest.raises(HostKeyError) as caught:
        ssh.connect(target(sshd), fresh=True)
    assert caught.value.offer is not None
    ssh.record_host_key(caught.value.offer)
    lines = own_known_hosts(tmp_path).read_text().splitlines()
    assert lines[:2] == ["# kept", "other.example ssh-ed25519 AAAA"]
    assert lines[2] == sshd.known_hosts.read_text().strip()


def test_a_changed_key_names_both_fingerprints_and_the_line_on_record(sshd: Sshd, tmp_path: Path) -> None:
    line, recorded_fingerprint = other_key_line(tmp_path, sshd)
    own_known_hosts(tmp_path).parent.mkdir(parents=True)
    own_known_hosts(tmp_path).write_text(f"# racperf\nunrelated.example ssh-ed25519 AAAAC3Nza\n{line}\n")
    with pytest.raises(HostKeyError) as caught:
        ssh.connect(target(sshd), fresh=True)
    error = caught.value
    assert error.changed and error.offer is None  # never offered for acceptance
    message = str(error)
    assert "HAS CHANGED" in message
    assert sshd.host_fingerprint() in message and recorded_fingerprint in message
    assert f"{own_known_hosts(tmp_path)}:3" in message  # the third line holds the old key
    assert [(k.line, k.fingerprint) for k in error.recorded] == [(3, recorded_fingerprint)]
    assert f"{own_known_hosts(tmp_path)}:3" in error.summary and sshd.host_fingerprint() in error.summary


# ---- the dialog, from the Cluster tab -----------------------------------------------------


def panel_for(path: Path) -> ClusterPanel:
    # a backoff of 5 s: the node is sampled sooner only if accepting the key retries it at once
    monitor = ClusterMonitor(load_cluster(path).nodes, 0.5, backoff_s=(5.0, 30.0))
    return ClusterPanel(path, 0.5, monitor=monitor)


def dialog_ready(app: App[Any]) -> bool:
    """The host-key dialog is up, composed and its Reject button has the focus."""
    focused = app.focused
    return isinstance(app.screen, HostKeyDialog) and focused is not None and focused.id == "host-key-reject"


async def until(pilot, what, timeout_s: float = 20.0, why=lambda: "") -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if what():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"not within {timeout_s} s: {why()}")


async def test_unknown_key_dialog_accept_records_it_and_the_next_connection_asks_nothing(
    sshd: Sshd, tmp_path: Path
) -> None:
    path = cluster_file(tmp_path, sshd)
    panel = panel_for(path)
    app = PanelApp(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        # shown: mounted, its safe answer focused (a key pressed before that meets no dialog yet)
        await until(pilot, lambda: dialog_ready(app), why=lambda: panel.monitor.states())
        dialog = app.screen
        assert isinstance(dialog, HostKeyDialog)
        shown = " ".join(str(w.render()) for w in dialog.query("Static"))
        assert f"[127.0.0.1]:{sshd.port}" in shown and "ssh-ed25519" in shown
        assert sshd.host_fingerprint() in shown and str(own_known_hosts(tmp_path)) in shown
        assert not own_known_hosts(tmp_path).exists()  # nothing before the answer
        await pilot.press("a")
        accepted_at = time.monotonic()
        await until(pilot, lambda: panel.monitor.state("rac1").state == "ok", why=lambda: panel.monitor.states())
        assert time.monotonic() - accepted_at < 5.0  # retried at once, not after the 5 s backoff
        assert own_known_hosts(tmp_path).read_text() == sshd.known_hosts.read_text()
        assert panel.card("rac1").state is not None
    # a second racperf: the key is on record, no dialog
    panel = panel_for(path)
    app = PanelApp(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: panel.monitor.state("rac1").state == "ok", why=lambda: panel.monitor.states())
        await pilot.pause(0.3)
        assert not isinstance(app.screen, HostKeyDialog)
    assert own_known_hosts(tmp_path).read_text().count("\n") == 1


async def test_unknown_key_rejected_writes_nothing_and_is_not_asked_again(sshd: Sshd, tmp_path: Path) -> None:
    panel = panel_for(cluster_file(tmp_path, sshd))
    app = PanelApp(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: dialog_ready(app))
        await pilot.press("enter")  # the focus is on Reject: a stray enter trusts nothing
        await until(pilot, lambda: not isinstance(app.screen, HostKeyDialog))
        await pilot.pause(6.0)  # past the next attempt (5 s backoff)
        assert not isinstance(app.screen, HostKeyDialog)
        state = panel.monitor.state("rac1")
        assert state.state == "unreachable" and state.reason.startswith("host key unknown")
        assert sshd.host_fingerprint() in panel.card("rac1").render().plain
    assert not own_known_hosts(tmp_path).exists()


async def test_a_changed_key_gets_no_dialog_and_a_loud_refusal(sshd: Sshd, tmp_path: Path) -> None:
    line, recorded_fingerprint = other_key_line(tmp_path, sshd)
    own_known_hosts(tmp_path).parent.mkdir(parents=True)
    own_known_hosts(tmp_path).write_text(line + "\n")
    panel = panel_for(cluster_file(tmp_path, sshd))
    app = PanelApp(panel)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: panel.monitor.state("rac1").state == "unreachable")
        await pilot.pause(0.5)
        assert not isinstance(app.screen, HostKeyDialog)
        notices = [n.message for n in app._notifications]
        assert len(notices) == 1
        assert sshd.host_fingerprint() in notices[0] and recorded_fingerprint in notices[0]
        assert f"{own_known_hosts(tmp_path)}:1" in notices[0]
    assert own_known_hosts(tmp_path).read_text() == line + "\n"  # the record is left as it was


# ---- racperf nodes --accept-new-host-keys ---------------------------------------------------


def test_nodes_accept_new_records_a_first_contact_and_refuses_a_changed_key(sshd: Sshd, tmp_path: Path) -> None:
    path = cluster_file(tmp_path, sshd)
    done = racperf("nodes", "--cluster", str(path), "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["stage"] == "host key"
    assert not own_known_hosts(tmp_path).exists()
    done = racperf("nodes", "--cluster", str(path), "--accept-new-host-keys")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"recorded the new host key of rac1 ([127.0.0.1]:{sshd.port} ssh-ed25519 {sshd.host_fingerprint()})" in (
        done.stderr
    )
    assert own_known_hosts(tmp_path).read_text() == sshd.known_hosts.read_text()
    # a changed key is never accepted, not even with the option
    line, recorded_fingerprint = other_key_line(tmp_path, sshd)
    own_known_hosts(tmp_path).write_text(line + "\n")
    done = racperf("nodes", "--cluster", str(path), "--accept-new-host-keys")
    assert done.returncode == 1
    assert "HOST KEY HAS CHANGED" in done.stdout
    assert sshd.host_fingerprint() in done.stdout and recorded_fingerprint in done.stdout
    assert own_known_hosts(tmp_path).read_text() == line + "\n"
