"""``racperf run fio`` in a terminal that hangs up: a real pty (the master closed is the hang-up),
real fio, the real store. The run must end STOPPED with fio's final report and every sample,
and the command must end without a traceback."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from racperf_tui.tools import load_tool
from tests.helpers import needs_fio


def _run_in_a_pty_then_hang_up(argv: list[str], stderr_file: Path | None, samples_first: int) -> tuple[int, bytes]:
    """Start argv on a new pty (stdin/stdout, and stderr unless stderr_file), read until it has
    printed ``samples_first`` sample lines, close the master; return (wait status, output)."""
    pid, master = pty.fork()
    if pid == 0:  # the child: become the command (nothing else runs here)
        try:
            if stderr_file is not None:
                fd = os.open(stderr_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 2)
            os.execv(sys.executable, argv)
        finally:
            os._exit(127)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while seen.count(b'"type": "sample"') < samples_first and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:  # EIO: the child already went
                    break
    finally:
        os.close(master)  # the hang-up: the kernel sends SIGHUP, the slave now gives EIO
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, seen
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("racperf run did not end within 60 s of the hang-up")


@needs_fio
@pytest.mark.parametrize("stderr_to_file", [False, True], ids=["stderr-on-tty", "stderr-in-file"])
def test_a_hang_up_stops_fio_cleanly_and_keeps_every_sample(tmp_path: Path, stderr_to_file: bool) -> None:
    data = tmp_path / "data"
    err = tmp_path / "stderr.txt" if stderr_to_file else None
    argv = [
        sys.executable,
        "-m",
        "racperf_tui",
        "run",
        "--data-dir",
        str(data),
        "fio",
        "--",
        "--name=hup",
        f"--filename={tmp_path / 'hup.dat'}",
        "--size=8m",
        "--rw=randread",
        "--bs=4k",
        "--runtime=60",
        "--time_based",
    ]
    status, seen = _run_in_a_pty_then_hang_up(argv, err, samples_first=2)
    assert seen.count(b'"type": "sample"') >= 2, seen[-500:]
    # stopped by a signal: 130, as documented; not a crash
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 130, status
    if err is not None:
        text = err.read_text()
        assert "Traceback" not in text and "Errno 5" not in text, text
    with Store.open(data) as store:
        (run,) = store.list_runs()
        assert run.state is RunState.STOPPED, run.message
        assert run.message == "stopped by SIGHUP"
        result = store.result(run.id)
        stored = [s.metrics for _, s in store.samples(run.id)]
        raw = store.raw_output(run.id)
        assert run.duration_s < 30  # the hang-up ended it, not fio's 60 s runtime
    # fio's final report, after the SIGTERM
    assert result is not None and result["jobs"][0]["read"]["io_kib"] > 0
    # every sample fio printed is stored: re-parsing the stored raw output gives the same ones
    parser = load_tool("fio").TOOL.stream_parser({})
    reparsed = [s.metrics for line in raw.splitlines() for s in parser.feed(line)]
    reparsed += [s.metrics for s in parser.finish()]
    assert len(stored) >= 2 and stored == reparsed
