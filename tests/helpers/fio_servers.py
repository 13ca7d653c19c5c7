"""Real fio servers (``fio --server=127.0.0.1,PORT``) for the fio client/server tests, each in
its own session, stopped as a group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.helpers import reveals
from tests.helpers.sshd_helpers import _free_port


@reveals("needs_fio")
def start_fio_server(directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    for _ in range(5):
        port = _free_port()
        proc = subprocess.Popen(
            ["fio", f"--server=127.0.0.1,{port}"],
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return proc, port
            except OSError:
                time.sleep(0.05)
        stop_fio_server(proc)
    raise RuntimeError("no fio server would start")


def stop_fio_server(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        proc.wait()
