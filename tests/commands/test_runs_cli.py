"""``racperf run`` and ``racperf runs`` as a user runs them: real subprocesses, real store."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.orchestration.runs import launch_run
from racperf_tui.tools import orion
from tests.helpers import FAKES, FIXTURES, needs_fio, needs_root, racperf_cmd
from tests.helpers.proc_helpers import FAKE_TOOL, ensure_repo_importable, kill_group_quietly, kill_quietly, wait_until

ensure_repo_importable()
RACPERF = racperf_cmd()


def racperf(*args: str, data: Path | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    extra = ["--data-dir", str(data)] if data is not None else []
    argv = [*RACPERF, args[0], *extra, *args[1:]]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    yield d
    if (d / "runs.sqlite3").is_file() and (d / "runs.sqlite3").read_bytes()[:6] == b"SQLite":
        with Store.open(d) as store:
            for run in store.list_runs():
                kill_quietly(run.supervisor_pid)
                kill_group_quietly(run.benchmark_pgid)


def test_run_prints_json_lines_and_records_the_run(data: Path) -> None:
    out = racperf("run", FAKE_TOOL, "--target", "/tmp/t", "--", "--samples", "3", data=data)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["type"] for line in lines] == ["sample", "sample", "sample", "result"]
    assert [line["metrics"] for line in lines[:3]] == [{"value": 1.0}, {"value": 2.0}, {"value": 3.0}]
    ts = [line["t"] for line in lines[:3]]
    assert ts == sorted(ts) and all(isinstance(t, float) and 0 <= t < 10 for t in ts)
    final = lines[-1]
    assert final["result"] == {"ok": True, "samples": 3}
    assert final["run_id"] == 1 and final["state"] == "succeeded"
    with Store.open(data) as store:
        run = store.get_run(1)
        assert run.config == {"extra_args": ["--samples", "3"], "destructive": False, "target": "/tmp/t"}
        assert run.target == "/tmp/t" and run.state is RunState.SUCCEEDED


def test_run_tool_options_after_double_dash_are_the_tools(data: Path) -> None:
    """'--target' after '--' belongs to the tool, not to racperf."""
    out = racperf("run", FAKE_TOOL, "--destructive", "--", "--samples", "1", "--target", "x", data=data)
    assert out.returncode != 0  # fakebench rejects --target: proves it got it
    with Store.open(data) as store:
        run = store.get_run(1)
        assert run.config == {"extra_args": ["--samples", "1", "--target", "x"], "destructive": True, "target": None}
        assert run.state is RunState.FAILED and "exit status 2" in run.message


def test_run_exit_status_when_the_tool_fails(data: Path) -> None:
    out = racperf("run", FAKE_TOOL, "--", "--samples", "1", "--fail-result", data=data)
    assert out.returncode == 1
    assert json.loads(out.stdout.splitlines()[-1])["state"] == "failed"
    assert "failed: result says not ok" in out.stderr


def test_run_refuses_a_bad_config_with_exit_2(data: Path) -> None:
    out = racperf("run", FAKE_TOOL, "--", "--invalid", data=data)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.strip() == f"racperf run {FAKE_TOOL}: extra_args: --invalid is not a fakebench option"


def test_run_unknown_tool(data: Path) -> None:
    out = racperf("run", "nosuchtool", data=data)
    assert out.returncode == 2 and "unknown tool 'nosuchtool'" in out.stderr


def test_run_stopped_by_sigint_records_a_clean_stop(data: Path) -> None:
    proc = subprocess.Popen(
        [
            *RACPERF,
            "run",
            "--data-dir",
            str(data),
            FAKE_TOOL,
            "--",
            "--samples",
            "-1",
            "--interval",
            "0.05",
            "--final-on-term",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert json.loads(proc.stdout.readline())["type"] == "sample"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130
    final = json.loads(out.splitlines()[-1])
    assert final["state"] == "stopped" and final["result"]["terminated"] is True


def _record_two_runs(data: Path) -> None:
    assert racperf("run", FAKE_TOOL, "--target", "/dev/fake", "--", "--samples", "3", data=data).returncode == 0
    assert racperf("run", FAKE_TOOL, "--", "--samples", "1", "--exit", "4", data=data).returncode == 1


def test_runs_list_table(data: Path) -> None:
    out = racperf("runs", data=data)
    assert out.returncode == 0 and out.stdout.startswith("no runs recorded yet")
    _record_two_runs(data)
    out = racperf("runs", data=data)
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()]
    assert rows[0] == ["ID", "TOOL", "HOST", "TARGET", "STATE", "STARTED", "DURATION"]
    assert [r[0] for r in rows[1:]] == ["2", "1"]
    assert rows[1][1:5] == [FAKE_TOOL, "local", "-", "failed"]
    assert rows[2][1:5] == [FAKE_TOOL, "local", "/dev/fake", "succeeded"]
    assert rows[2][-1].endswith("s") and float(rows[2][-1][:-1]) < 10
    out = racperf("runs", "list", "--limit", "1", "--json", data=data)
    assert [json.loads(line)["id"] for line in out.stdout.splitlines()] == [2]


def test_runs_show(data: Path) -> None:
    _record_two_runs(data)
    out = racperf("runs", "show", "1", data=data)
    assert out.returncode == 0, out.stderr
    fields = dict(line.split(":", 1) for line in out.stdout.splitlines()[1:] if not line.startswith("  "))
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    assert fields["state"] == "succeeded" and fields["exit status"] == "0"
    assert fields["samples"] == "3" and fields["target"] == "/dev/fake"
    assert fields["tool version"] == "fakebench 1.0"
    assert fields["command"].endswith("fakebench.py --samples 3")
    assert json.loads(fields["config"]) == {
        "destructive": False,
        "extra_args": ["--samples", "3"],
        "target": "/dev/fake",
    }
    assert "  ok: True" in out.stdout and "  samples: 3" in out.stdout
    shown = json.loads(racperf("runs", "show", "2", "--json", data=data).stdout)
    assert shown["run"]["exit_status"] == 4 and shown["sample_count"] == 1
    missing = racperf("runs", "show", "99", data=data)
    assert missing.returncode == 1 and "no run with id 99" in missing.stderr


def test_runs_list_and_show_print_durations_as_the_ui_does(data: Path) -> None:
    """One format for how long a run took, in ``racperf runs`` as in the UI (core.units)."""
    took = {"12.3s": 12.34, "4m05s": 245.2, "1h02m": 3725.0}
    with Store.open(data) as store:
        for seconds in took.values():
            run_id = store.create_run("fio", "local", "/u02/fio.dat", {}, ["fio"], "fio-3.33")
            store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
            store._conn.execute(
                "UPDATE runs SET started_at = 1764000000.0, ended_at = ? WHERE id = ?", (1764000000.0 + seconds, run_id)
            )
    listed = racperf("runs", data=data)
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split()[-1] for line in listed.stdout.splitlines()[1:]}
    assert rows == {"1": "12.3s", "2": "4m05s", "3": "1h02m"}
    for run_id, text in zip(("1", "2", "3"), took):
        shown = racperf("runs", "show", run_id, data=data)
        assert f"duration:     {text}\n" in shown.stdout


def test_runs_export_json_and_csv(data: Path, tmp_path: Path) -> None:
    _record_two_runs(data)
    doc = json.loads(racperf("runs", "export", "1", "--format", "json", data=data).stdout)
    assert doc["run"]["id"] == 1 and doc["run"]["state"] == "succeeded"
    assert [s["metrics"]["value"] for s in doc["samples"]] == [1.0, 2.0, 3.0]
    assert [s["seq"] for s in doc["samples"]] == [1, 2, 3]
    assert doc["result"] == {"ok": True, "samples": 3}
    out = racperf("runs", "export", "1", "--format", "csv", data=data)
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[0] == ["t", "value"]
    assert [float(r[1]) for r in rows[1:]] == [1.0, 2.0, 3.0]
    assert [float(r[0]) for r in rows[1:]] == [s["t"] for s in doc["samples"]]
    target = tmp_path / "run1.csv"
    assert racperf("runs", "export", "1", "--format", "csv", "-o", str(target), data=data).returncode == 0
    assert target.read_text() == out.stdout
    assert json.loads((tmp_path / "run1.result.json").read_text()) == {"ok": True, "samples": 3}


def test_an_orion_runs_csv_export_is_its_data_points(data: Path, tmp_path: Path) -> None:
    """ORION's result is its matrices: the CSV has a row per data point measured (the 19c
    sample: 5 small-I/O points at large 0, 2 large-I/O points at small 0), its progress
    samples go beside it."""
    folder = FIXTURES / "orion" / "reconstructed-19c"
    files = {p.name: p.read_text() for p in folder.glob("o19_*")}
    result = orion.parse_result_files((folder / "o19-stdout.txt").read_text(), files)
    with Store.open(data) as store:
        run_id = store.create_run("orion", "local", None, {"run": "simple"}, ["orion"], "19.3")
        store.add_sample(run_id, Sample(t=1.0, metrics={"progress_pct": 50.0}))
        store.set_result(run_id, result)
        store.set_state(run_id, RunState.SUCCEEDED, exit_status=0)
    out = racperf("runs", "export", str(run_id), "--format", "csv", data=data)
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader(io.StringIO(out.stdout)))
    assert rows[0] == ["small_outstanding", "large_outstanding", "iops", "mbps", "latency_us"]
    iops, lat, mbps = result["iops"], result["lat"], result["mbps"]
    expected = [
        [str(small), "0", str(iops["values"][0][j]), "", str(lat["values"][0][j])]
        for j, small in enumerate(iops["small_loads"])
    ] + [
        [str(mbps["small_loads"][0]), str(large), "", str(mbps["values"][i][0]), ""]
        for i, large in enumerate(mbps["large_loads"])
    ]
    assert rows[1:] == expected
    assert rows[5] == ["5", "0", "48211.0", "", "103.67"] and rows[7] == ["0", "2", "", "1532.417", ""]
    target = tmp_path / "orion.csv"
    assert racperf("runs", "export", str(run_id), "--format", "csv", "-o", str(target), data=data).returncode == 0
    assert target.read_text() == out.stdout
    samples = list(csv.reader((tmp_path / "orion.samples.csv").open()))
    assert samples == [["t", "progress_pct"], ["1.0", "50.0"]]
    assert json.loads((tmp_path / "orion.result.json").read_text())["max_small_iops"] == 48211.25


def test_runs_marks_a_vanished_supervisor_interrupted_and_stops_a_live_one(data: Path) -> None:
    live_id = launch_run(
        FAKE_TOOL, {"extra_args": ["--samples", "-1", "--interval", "0.05", "--final-on-term"]}, data_dir=data
    )
    doomed_id = launch_run(FAKE_TOOL, {"extra_args": ["--samples", "-1", "--interval", "0.05"]}, data_dir=data)
    with Store.open(data) as store:
        wait_until(lambda: store.sample_count(live_id) and store.sample_count(doomed_id), 15, what="samples")
        doomed = store.get_run(doomed_id)
        os.kill(doomed.supervisor_pid, signal.SIGKILL)
        wait_until(
            lambda: (
                not os.path.exists(f"/proc/{doomed.supervisor_pid}/stat")
                or open(f"/proc/{doomed.supervisor_pid}/stat").read().split(") ")[1][0] == "Z"
            ),
            5,
            what="the supervisor to die",
        )
    out = racperf("runs", data=data)
    states = {line.split()[0]: line.split()[4] for line in out.stdout.splitlines()[1:]}
    assert states == {str(live_id): "running", str(doomed_id): "interrupted"}
    out = racperf("runs", "stop", str(live_id), data=data)
    assert out.returncode == 0 and out.stdout.strip() == f"run {live_id}: stopped"
    with Store.open(data) as store:
        assert store.get_run(live_id).state is RunState.STOPPED
        assert store.result(live_id)["terminated"] is True
    out = racperf("runs", "stop", str(doomed_id), data=data)
    # nothing was stopped: a script must not read that as success
    assert out.returncode == 3 and out.stdout == ""
    assert out.stderr.strip() == (f"racperf runs stop: run {doomed_id} had already interrupted: nothing to stop")


def test_data_dir_from_the_environment(tmp_path: Path) -> None:
    env = dict(os.environ, RACPERF_DATA_DIR=str(tmp_path / "envdata"))
    out = subprocess.run(
        [*RACPERF, "run", FAKE_TOOL, "--", "--samples", "1"], capture_output=True, text=True, env=env, timeout=30
    )
    assert out.returncode == 0, out.stderr
    with Store.open(tmp_path / "envdata") as store:
        assert [r.id for r in store.list_runs()] == [1]


def test_run_into_a_closed_pipe_stops_the_benchmark_cleanly(data: Path) -> None:
    """`racperf run ... | head -2`: once nobody reads, the run is stopped, not left running."""
    proc = subprocess.Popen(
        [
            *RACPERF,
            "run",
            "--data-dir",
            str(data),
            FAKE_TOOL,
            "--",
            "--samples",
            "-1",
            "--interval",
            "0.02",
            "--final-on-term",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdout.readline()
        proc.stdout.readline()
        proc.stdout.close()
        proc.wait(timeout=20)
    finally:
        proc.kill()
        proc.wait()
    with Store.open(data) as store:
        run = store.get_run(1)
        assert run.state is RunState.STOPPED, run.message
        assert run.message == "stopped: the output consumer went away"
        assert store.result(1)["terminated"] is True


def test_run_tool_not_installed_says_how_to_install(data: Path) -> None:
    out = racperf("run", FAKE_TOOL, "--", "--missing-executable", data=data)
    assert out.returncode == 127 and out.stdout == ""
    assert out.stderr.strip() == (
        "racperf run: tests.fakes.faketool: 'racperf-no-such-tool-xyz' not found on "
        "PATH; install it: it is a test fake: tests/fakes/fakebench.py"
    )


def test_a_store_that_is_not_a_database_is_named(data: Path) -> None:
    data.mkdir()
    (data / "runs.sqlite3").write_bytes(b"this is not sqlite" * 100)
    for args in (("runs",), ("run", FAKE_TOOL, "--", "--samples", "1")):
        out = racperf(*args, data=data)
        assert out.returncode == 2, out.stderr
        assert f"cannot use the run store {data / 'runs.sqlite3'}: file is not a database" in out.stderr
        assert "Traceback" not in out.stderr


# ---------------------------------------------------------------- acceptance fixes (H10)


def test_pair_tools_take_set_keys_and_refuse_raw_options(data: Path) -> None:
    """'racperf run iperf3 -- -c HOST' used to say "config needs 'host'": the tool's options
    were silently dropped. Now: a clear refusal naming --set, and --set works."""
    out = racperf("run", "iperf3", "--", "-c", "127.0.0.2", "-t", "2", data=data)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == (
        "racperf run iperf3: iperf3 takes its settings as --set KEY=VALUE (e.g. racperf run iperf3 "
        "--set host=10.0.0.2 --set duration_s=30), not as options after '--' (got '-c 127.0.0.2 -t 2'); "
        "see 'racperf run iperf3 --help'"
    )
    out = racperf("run", "iperf3", "--set", "duration_s", data=data)
    assert out.returncode == 2 and "--set 'duration_s': expected KEY=VALUE" in out.stderr


def test_unreachable_iperf3_and_probe_say_why_first(data: Path) -> None:
    """127.0.0.2 with nothing listening: the tool's own reason leads the message, the run is
    recorded as failed, no traceback."""
    port = "5599"
    out = racperf(
        "run", "iperf3", "--set", "host=127.0.0.2", "--set", f"port={port}", "--set", "duration_s=2", data=data
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr
    final = json.loads(out.stdout.splitlines()[-1])
    assert final["state"] == "failed"
    assert final["message"].startswith("iperf3: error - unable to connect to server")
    out = racperf(
        "run",
        "probe",
        "--set",
        "host=127.0.0.2",
        "--set",
        f"port={port}",
        "--set",
        "duration_s=2",
        "--set",
        "interval_s=1",
        data=data,
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr
    final = json.loads(out.stdout.splitlines()[-1])
    assert final["message"] == f"probe: Failed to connect to 127.0.0.2:{port}: Connection refused"
    with Store.open(data) as store:
        runs = {r.tool: r for r in store.list_runs()}
        assert runs["iperf3"].config == {"host": "127.0.0.2", "port": 5599, "duration_s": 2}
        assert runs["iperf3"].state is RunState.FAILED and runs["probe"].state is RunState.FAILED


def test_probe_run_with_set_keys_streams_samples(data: Path) -> None:
    from racperf_tui.tools.probe.server import __file__ as server_file

    server = subprocess.Popen(
        [sys.executable, server_file, "--bind", "127.0.0.1", "--port", "0", "--once"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = server.stdout.readline()
        port = line.rsplit(":", 1)[1].split()[0]
        out = racperf(
            "run",
            "probe",
            "--set",
            "host=127.0.0.1",
            "--set",
            f"port={port}",
            "--set",
            "mode=ASYNC",
            "--set",
            "duration_s=1.5",
            "--set",
            "interval_s=0.5",
            data=data,
        )
        assert out.returncode == 0, out.stderr
        lines = [json.loads(x) for x in out.stdout.splitlines()]
        samples = [x for x in lines if x["type"] == "sample"]
        assert len(samples) >= 2 and all(s["metrics"]["throughput_mib_s"] > 0 for s in samples)
        assert lines[-1]["result"]["mode"] == "ASYNC" and lines[-1]["result"]["avg_throughput_mib_s"] > 0
    finally:
        kill_group_quietly(server.pid)
        server.wait(timeout=5)


@needs_fio
def test_fio_failure_message_leads_with_fios_words_and_target_from_filename(data: Path, tmp_path: Path) -> None:
    out = racperf(
        "run", "fio", "--", "--name=t", f"--filename={tmp_path / 'f.dat'}", "--size=1M", "--bogus=3", data=data
    )
    assert out.returncode == 2  # refused before anything runs or is recorded
    assert out.stderr == "racperf run fio: argument 4 ('--bogus=3'): fio has no option 'bogus'\n"
    out = racperf(
        "run",
        "fio",
        "--",
        "--name=t",
        f"--filename={tmp_path / 'f.dat'}",
        "--size=1M",
        "--rw=write",
        "--ioengine=libaio",
        "--iodepth=1",
        "--direct=1",
        "--bs=1",
        data=data,
    )
    assert out.returncode == 1
    message = json.loads(out.stdout.splitlines()[-1])["message"]
    assert message.startswith("job t: error 22 (Invalid argument)") and "stderr: fio: io_u error" in message
    out = racperf(
        "run", "fio", "--", "--name=t", "--filename", str(tmp_path / "g.dat"), "--size=1M", "--rw=write", data=data
    )
    assert out.returncode == 0, out.stderr
    with Store.open(data) as store:
        assert [r.target for r in store.list_runs()] == [str(tmp_path / "g.dat"), str(tmp_path / "f.dat")]
    table = racperf("runs", data=data).stdout
    assert str(tmp_path / "g.dat") in table


def test_runs_show_gives_each_directions_latency(data: Path) -> None:
    """A DBA reads latency first: 'runs show' listed IOPS and KiB/s only."""
    with Store.open(data) as store:
        run_id = store.create_run("fio", "local", "/u02/fio.dat", {}, ["fio"], "fio-3.33")
        store.set_result(
            run_id,
            {
                "tool": "fio",
                "jobs": [
                    {
                        "name": "oltp",
                        "read": {
                            "iops": 16021.2,
                            "bw_kib_s": 128169.0,
                            "clat_us": {"mean": 61.43, "percentiles": {"99.00": 112.128, "99.90": 309.248}},
                        },
                        "write": {"iops": 0, "bw_kib_s": 0},
                    }
                ],
            },
        )
    out = racperf("runs", "show", str(run_id), data=data)
    assert out.returncode == 0, out.stderr
    assert "  job oltp read: 16,021.2 IOPS 128,169.0 KiB/s clat avg 61.4 p99 112.1 p99.9 309.2 µs\n" in out.stdout
    assert "job oltp write" not in out.stdout  # no I/O that way: no line


def test_a_truncated_store_is_named_with_what_to_do_and_left_untouched(data: Path, tmp_path: Path) -> None:
    """A store cut short (disk full, a bad copy): the message names the file, the reason and
    the way out; the file is not modified."""
    good = tmp_path / "good"
    out = racperf("run", FAKE_TOOL, "--", "--samples", "3", data=good)
    assert out.returncode == 0, out.stderr
    whole = (good / "runs.sqlite3").read_bytes()
    assert len(whole) > 8192
    data.mkdir()
    (data / "runs.sqlite3").write_bytes(whole[: 8192 + 100])
    before = (data / "runs.sqlite3").read_bytes()
    for args in (("runs",), ("runs", "show", "1"), ("runs", "export", "1", "--format", "csv")):
        out = racperf(*args, data=data)
        assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
        assert out.stderr.startswith(f"racperf runs: cannot use the run store {data / 'runs.sqlite3'}: ")
        assert out.stderr.rstrip().endswith(
            "nothing was changed: keep a copy of it, move it aside and racperf starts a new store, "
            "or use --data-dir DIR elsewhere ('sqlite3 FILE .recover' may salvage its runs)"
        )
    assert (data / "runs.sqlite3").read_bytes() == before
    (data / "runs.sqlite3").unlink()  # the fixture's teardown opens the store it finds


def test_oratcptest_headless_uses_the_jar_remembered_in_its_data_dir(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The panel remembers the jar in the data dir it was given; 'racperf run oratcptest
    --data-dir D' looked only in the default one ("jar path is not configured")."""
    import socket

    fake = FAKES / "oratcptest"
    jar = tmp_path / "oratcptest.jar"
    jar.write_bytes(b"PK\x03\x04")
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"oratcptest.jar_path": str(jar), "oratcptest.java": str(fake)}))
    monkeypatch.delenv("RACPERF_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # the default dir: empty
    monkeypatch.setenv("RACPERF_FAKE_TIMESCALE", "0.05")
    with socket.socket() as probe_port:
        probe_port.bind(("127.0.0.1", 0))
        port = probe_port.getsockname()[1]
    server = subprocess.Popen(
        [str(fake), "-jar", str(jar), "-server", "127.0.0.1", f"-port={port}"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert "OraTcpTest server started." in server.stdout.readline()
        out = racperf(
            "run",
            "oratcptest",
            "--set",
            "host=127.0.0.1",
            "--set",
            f"port={port}",
            "--set",
            "duration_s=4",
            "--set",
            "interval_s=1",
            data=data,
        )
        assert out.returncode == 0, out.stderr
        samples = [json.loads(x) for x in out.stdout.splitlines() if '"sample"' in x]
        assert len(samples) == 4 and all(s["metrics"]["throughput_mib_s"] > 0 for s in samples)
        with Store.open(data) as store:
            run = store.list_runs()[0]
            assert run.argv[:3] == [str(fake), "-jar", str(jar)]
    finally:
        kill_group_quietly(server.pid)
        server.wait(timeout=5)


# ---------------------------------------------------------------- a hostile store and data dir


def _store_with_runs(data: Path, runs: int = 3) -> Path:
    for _ in range(runs):
        out = racperf("run", FAKE_TOOL, "--", "--samples", "40", data=data)
        assert out.returncode == 0, out.stderr
    return data / "runs.sqlite3"


def test_page_corruption_is_named_with_what_to_do_and_left_untouched(data: Path) -> None:
    path = _store_with_runs(data)
    with Store.open(data) as store:
        store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert store._conn.execute("PRAGMA page_count").fetchone()[0] >= 6
    with open(path, "r+b") as f:  # garbage over every page but the first (the schema)
        f.seek(4096)
        f.write(b"\xa5" * (path.stat().st_size - 4096))
    before = path.read_bytes()
    for args in (
        ("runs",),
        ("runs", "show", "2"),
        ("runs", "export", "2"),
        ("runs", "export", "2", "--format", "csv"),
        ("runs", "stop", "2"),
    ):
        out = racperf(*args, data=data)
        assert out.returncode == 2 and out.stdout == "", (args, out.stdout, out.stderr)
        assert "Traceback" not in out.stderr
        assert out.stderr.startswith(f"racperf runs: cannot use the run store {path}: "), out.stderr
        assert "keep a copy of it, move it aside" in out.stderr and "--data-dir DIR elsewhere" in out.stderr
    assert path.read_bytes() == before
    path.unlink()  # the fixture's teardown opens the store it finds


def test_a_directory_where_the_store_belongs_is_named(data: Path) -> None:
    (data / "runs.sqlite3").mkdir(parents=True)
    for args in (("runs",), ("runs", "show", "1"), ("runs", "export", "1"), ("run", FAKE_TOOL, "--", "--samples", "1")):
        out = racperf(*args, data=data)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert (
            f"the run store {data / 'runs.sqlite3'} is a directory: move it aside, or use --data-dir DIR elsewhere"
        ) in out.stderr
    assert sorted(p.name for p in data.iterdir()) == ["runs.sqlite3"]
    (data / "runs.sqlite3").rmdir()  # the fixture's teardown opens the store it finds


def test_reading_commands_never_create_a_store(tmp_path: Path) -> None:
    data = tmp_path / "nothing-here"
    out = racperf("runs", data=data)
    assert out.returncode == 0 and out.stdout.strip() == f"no runs recorded yet in {data}"
    for action in ("show", "export"):
        out = racperf("runs", action, "1", data=data)
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.strip() == f"racperf runs {action}: no run store in {data} (no runs recorded there)"
    assert not data.exists()
    data.mkdir()
    out = racperf("runs", "export", "1", data=data)
    assert out.returncode == 1 and list(data.iterdir()) == []


def _in_a_read_only_bind_mount(source: Path, mount_point: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run argv in a private mount namespace where mount_point is source, mounted read-only:
    nothing leaks into the test host's mounts."""
    mount_point.mkdir(exist_ok=True)
    script = 'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && shift 2 && exec "$@"'
    return subprocess.run(
        ["unshare", "--mount", "sh", "-c", script, "sh", str(source), str(mount_point), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_root  # a read-only bind mount in a mount namespace of its own
def test_a_store_on_a_read_only_mount_is_read_and_run_says_why_it_cannot(data: Path, tmp_path: Path) -> None:
    _store_with_runs(data, runs=2)
    # a copy from another node: the store file alone, a dir we cannot write
    copy = tmp_path / "copied"
    copy.mkdir()
    (copy / "runs.sqlite3").write_bytes((data / "runs.sqlite3").read_bytes())
    with Store.open(data) as store:
        expected_samples = [s.metrics for _, s in store.samples(2)]
    ro = tmp_path / "ro"
    for source in (copy, data):
        listing = _in_a_read_only_bind_mount(source, ro, [*RACPERF, "runs", "--data-dir", str(ro)])
        assert listing.returncode == 0, listing.stderr
        assert [line.split()[0] for line in listing.stdout.splitlines()[1:]] == ["2", "1"]
        assert all(line.split()[4] == "succeeded" for line in listing.stdout.splitlines()[1:])
        exported = _in_a_read_only_bind_mount(source, ro, [*RACPERF, "runs", "export", "--data-dir", str(ro), "2"])
        assert exported.returncode == 0, exported.stderr
        assert [s["metrics"] for s in json.loads(exported.stdout)["samples"]] == expected_samples
        assert len(expected_samples) == 40
        shown = _in_a_read_only_bind_mount(source, ro, [*RACPERF, "runs", "show", "--data-dir", str(ro), "1"])
        assert shown.returncode == 0 and "samples:      40" in shown.stdout, shown.stderr
        run = _in_a_read_only_bind_mount(
            source, ro, [*RACPERF, "run", "--data-dir", str(ro), FAKE_TOOL, "--", "--samples", "1"]
        )
        assert run.returncode == 2 and run.stdout == "" and "Traceback" not in run.stderr
        assert run.stderr.strip() == (
            f"racperf run: cannot write the run store in {ro}: Read-only file system (a read-only "
            f"data dir can still be read with 'racperf runs'; to record runs, use --data-dir DIR "
            f"on a writable disk)"
        )
        stop = _in_a_read_only_bind_mount(source, ro, [*RACPERF, "runs", "stop", "--data-dir", str(ro), "1"])
        assert stop.returncode == 2 and "cannot write the run store" in stop.stderr
    assert sorted(p.name for p in copy.iterdir()) == ["runs.sqlite3"]


def test_names_with_terminal_escapes_are_printed_escaped(data: Path, tmp_path: Path) -> None:
    """A target named with an escape sequence (a hostile file name) never reaches the terminal raw."""
    hostile = tmp_path / "x\x1b[2Jy.dat"
    with Store.open(data) as store:
        run_id = store.create_run("fio", "local", str(hostile), {"extra_args": []}, ["fio", str(hostile)], None)
        store.set_state(run_id, RunState.FAILED, message="bad \x1b]0;title\x07 name")
    for args in (("runs",), ("runs", "show", str(run_id))):
        out = racperf(*args, data=data).stdout
        assert "\x1b" not in out and "\\x1b[2Jy.dat" in out, out
