"""The entry point: a reader that goes away mid-output (`racperf ... | head`) is no traceback."""

from __future__ import annotations

import subprocess

import pytest

from tests.helpers import racperf_cmd


@pytest.mark.parametrize("args", [["run", "fio", "--help"], ["runs", "--help"], ["parse", "--help"]])
def test_a_closed_pipe_ends_quietly(args: list[str]) -> None:
    # the reader reads one line and closes: the rest of the help meets a closed pipe
    proc = subprocess.Popen([*racperf_cmd(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert first.startswith(b"usage: racperf")
    assert "Traceback" not in err and "BrokenPipeError" not in err
