"""A sweep stopped by a signal (issue 18): SIGINT to ``racperf sweep fio`` stops the point
running (its recorded run ends STOPPED), starts no further point, records the sweep's end in
the group's result (the points it completed; here none) and exits 130."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import NoStore, Store
from tests.helpers import REPO


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio")
@pytest.mark.timeout(180)
def test_sigint_stops_the_point_running_and_keeps_what_was_measured(tmp_path: Path) -> None:
    data = tmp_path / "data"
    target = tmp_path / "scratch.dat"
    target.write_bytes(b"\0" * (8 << 20))
    proc = subprocess.Popen(
        [sys.executable, "-m", "racperf_tui", "sweep", "fio", "--data-dir", str(data), "--target", str(target)]
        + ["--set", "rw=randread", "--set", "size=8m", "--set", "direct=false", "--numjobs", "1,2,4"]
        + ["--point-seconds", "60", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 90
        running = None
        while running is None and time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                with Store.open(data, read_only=True) as store:
                    running = next((r for r in store.list_runs() if r.state is RunState.RUNNING), None)
            except NoStore:
                continue
        assert running is not None, "the first point never started"
        time.sleep(1.5)  # fio is reading
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    lines = [json.loads(line) for line in out.splitlines()]
    (sweep,) = [line for line in lines if line["type"] == "sweep"]
    assert sweep["ended"] == "stopped" and sweep["curves"] == []
    with Store.open(data, read_only=True) as store:
        (run,) = store.group_runs(sweep["group_id"])  # no further point was started
        assert run.id == running.id and run.state is RunState.STOPPED
        assert store.group_result(sweep["group_id"])["ended"] == "stopped"  # type: ignore[index]
