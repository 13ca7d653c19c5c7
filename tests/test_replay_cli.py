"""``racperf replay`` and ``racperf --from`` refuse what cannot be played back in one line,
before any screen opens."""

from __future__ import annotations

import subprocess
from pathlib import Path

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from tests.helpers import racperf_cmd


def racperf(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*racperf_cmd(), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_replay_names_what_cannot_be_replayed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with Store.open(data) as store:
        running = store.create_run("fio", "local", "/tmp/x", {}, ["fio"], None)
        store.set_state(running, RunState.RUNNING)
        store.add_sample(running, Sample(1.0, {"read_iops": 1.0}))
        empty = store.create_run("fio", "local", "/tmp/x", {}, ["fio"], None)
        store.set_state(empty, RunState.FAILED)
        # a pair's end is its pair's replay: said of the pair, whichever end was named
        server = store.create_run("probe", "local", None, {"role": "server"}, ["probe"], None)
        store.set_state(server, RunState.SUCCEEDED)
        client = store.create_run("probe", "local", None, {"role": "client", "peer_run_id": server}, ["probe"], None)
        store.set_state(client, RunState.RUNNING)
        store.add_sample(client, Sample(1.0, {"throughput_mbit_s": 900.0}))
    for args, said in (
        (["42"], "racperf replay: no run 42 in the store\n"),
        ([str(running)], f"racperf replay: run {running} is still running: watch it live in the Runs tab\n"),
        ([str(empty)], f"racperf replay: run {empty} (fio, failed) recorded no samples: nothing to replay\n"),
        (["--group", "7"], "racperf replay: no run group 7 in the store\n"),
        (
            [str(server)],
            f"racperf replay: the pair's client (run {client}) is still running: watch it live in the Network tab\n",
        ),
    ):
        proc = racperf("replay", *args, "--data-dir", data)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", said)
    proc = racperf("replay", "1", "2", "3", "--data-dir", data)
    assert proc.returncode == 2 and "one run, or two side by side" in proc.stderr
    proc = racperf("replay", "1", "--speed", "0", "--data-dir", data)
    assert proc.returncode == 2 and "--speed must be > 0, got 0" in proc.stderr


def test_from_an_archive_without_reports_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("nothing here\n")
    proc = racperf("--from", tmp_path / "empty.txt", tmp_path / "missing")
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert lines[0] == f"racperf: reading {tmp_path / 'empty.txt'} {tmp_path / 'missing'} ..."
    assert any(str(tmp_path / "missing") in line for line in lines[1:-1])
    assert lines[-1] == f"racperf: no iostat report in {tmp_path / 'empty.txt'} {tmp_path / 'missing'}"
