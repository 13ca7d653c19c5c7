"""A real OpenSSH sshd on 127.0.0.1 for the SSH host's tests.

:func:`start_sshd` starts ``/usr/sbin/sshd -D -e`` with a config of its own in a temp dir:
throwaway host and user keys (ed25519), no PAM, ``PermitRootLogin prohibit-password``,
``AuthorizedKeysFile`` and ``PidFile`` in the temp dir, ``StrictModes no``, a random high port
on 127.0.0.1 only. It writes a known_hosts file holding its host key (as ``[127.0.0.1]:PORT``)
and stops (TERM, then KILL) on :meth:`Sshd.stop`. The ``sshd`` fixture in tests/conftest.py wraps it.
"""

from __future__ import annotations

import getpass
import os
import random
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from tests.helpers import reveals

SSHD = "/usr/sbin/sshd"
#: sshd refuses to start without its privilege separation directory (Debian's unit creates it)
PRIVSEP_DIR = Path("/run/sshd")


def sshd_available() -> tuple[bool, str]:
    """Can this machine run the fixture? (sshd and ssh-keygen installed)."""
    if not os.access(SSHD, os.X_OK):
        return False, f"{SSHD} not installed (apt-get install openssh-server)"
    if shutil.which("ssh-keygen") is None:
        return False, "ssh-keygen not installed"
    return True, ""


@dataclass
class Sshd:
    directory: Path
    port: int
    user: str
    host_key: Path  # private; .pub next to it
    user_key: Path  # private; .pub next to it, listed in authorized_keys
    known_hosts: Path
    authorized_keys: Path
    process: subprocess.Popen[bytes] | None = None
    log: Path = field(default_factory=Path)
    host: str = "127.0.0.1"

    @property
    def spec(self) -> str:
        """``user@127.0.0.1:PORT``, as ``--ssh`` takes it."""
        return f"{self.user}@{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def host_fingerprint(self) -> str:
        """``SHA256:...`` of the host key, as ssh-keygen -l prints it."""
        out = subprocess.run(
            ["ssh-keygen", "-l", "-f", f"{self.host_key}.pub"], check=True, capture_output=True, text=True
        ).stdout
        return out.split()[1]

    def stop(self) -> None:
        """KILL the sessions' processes (each connection's sshd is a session of its own and
        outlives the listener), then TERM the listener, KILL after 5 s."""
        if self.process is None:
            return
        try:
            children = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            children = []
        for child in children:
            try:
                child.kill()
            except psutil.Error:
                pass
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
    )


def _free_port() -> int:
    """A high port nothing listens on now (sshd may still lose a race: start_sshd retries)."""
    for _ in range(50):
        port = random.randint(20000, 60000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port on 127.0.0.1")


#: every login of a test's sshd runs root's rc files, which on this image run ``pyenv rehash``:
#: it waits up to 60 s for a lock file that a login killed mid-rehash (the tests kill sessions
#: and sshds on purpose) leaves behind for good, and every later login then waits the 60 s.
#: SHLVL=1: bash reads ~/.bashrc for a command sshd runs only as a top-level shell (SHLVL < 2
#: after its own +1); this image's (pyenv init, twice) cost every SSH command 0.24 s of CPU,
#: where a DB node's login is a few ms: a 2-node netperf matrix took 56 s, 29 s without it
LOGIN_SETTINGS = ("PYENV_REHASH_TIMEOUT=1", "SHLVL=1")


def write_config(
    directory: Path,
    port: int,
    host_key: Path,
    authorized_keys: Path,
    *,
    listen: tuple[str, ...] = ("127.0.0.1",),
    extra: str = "Subsystem sftp internal-sftp\nAcceptEnv LANG LC_*\n",
) -> Path:
    """A throwaway sshd's config: key logins only, its files in ``directory``."""
    config = directory / "sshd_config"
    config.write_text(
        f"Port {port}\n" + "".join(f"ListenAddress {address}\n" for address in listen) + f"HostKey {host_key}\n"
        f"PidFile {directory / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {authorized_keys}\n"
        "UsePAM no\n"
        "PermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "PubkeyAuthentication yes\n"
        "StrictModes no\n"
        "UseDNS no\n"
        "LogLevel VERBOSE\n"
        "MaxSessions 64\n"
        "MaxStartups 64\n"
        f"SetEnv {' '.join(LOGIN_SETTINGS)}\n" + extra
    )
    return config


def sshd_answers(address: str, port: int, timeout_s: float) -> bool:
    """sshd answers with its banner at address:port within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((address, port), timeout=1) as s:
                if s.recv(64).startswith(b"SSH-"):
                    return True
        except OSError:
            time.sleep(0.05)
    return False


def set_node_path(server: Sshd, *directories: Path | str, env: dict[str, str] | None = None) -> None:
    """The node's commands get PATH=directories (the login shell's rc files may add more in
    front, none of which holds the tools) and ``env`` (one SetEnv line: sshd keeps its first);
    sshd re-reads its config on SIGHUP."""
    config = server.directory / "sshd_config"
    lines = [line for line in config.read_text().splitlines() if not line.startswith("SetEnv ")]
    settings = ["PATH=" + ":".join(str(d) for d in directories)] + [f"{k}={v}" for k, v in (env or {}).items()]
    settings += [s for s in LOGIN_SETTINGS if s.split("=")[0] not in (env or {})]
    lines.append("SetEnv " + " ".join(settings))
    config.write_text("\n".join(lines) + "\n")
    os.kill(server.pid, signal.SIGHUP)
    time.sleep(0.5)
    assert sshd_answers(server.host, server.port, 10.0), "sshd did not come back after SIGHUP"


@reveals("needs_sshd")
def start_sshd(directory: Path) -> Sshd:
    """Keys, config, known_hosts in ``directory``; sshd started and answering."""
    directory.mkdir(parents=True, exist_ok=True)
    host_key = directory / "ssh_host_ed25519_key"
    user_key = directory / "id_ed25519"
    _keygen(host_key, "racperf-test-host")
    _keygen(user_key, "racperf-test-user")
    authorized_keys = directory / "authorized_keys"
    shutil.copyfile(f"{user_key}.pub", authorized_keys)
    if os.geteuid() == 0:
        PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    last_error = ""
    for _attempt in range(5):
        port = _free_port()
        config = write_config(directory, port, host_key, authorized_keys)
        log = directory / f"sshd-{port}.log"
        with open(log, "wb") as log_fh:
            process = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=log_fh,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        if sshd_answers("127.0.0.1", port, 10.0):
            key_type, key_data = Path(f"{host_key}.pub").read_text().split()[:2]
            known_hosts = directory / "known_hosts"
            known_hosts.write_text(f"[127.0.0.1]:{port} {key_type} {key_data}\n")
            return Sshd(
                directory, port, getpass.getuser(), host_key, user_key, known_hosts, authorized_keys, process, log
            )
        process.kill()
        process.wait()
        last_error = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"sshd did not start:\n{last_error}")
