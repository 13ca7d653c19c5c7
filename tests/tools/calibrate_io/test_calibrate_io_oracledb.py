"""CALIBRATE_IO through python-oracledb (thin mode, SYSDBA) when a connect string is given. No
database answers here, so the path is tested as far as it goes: the driver absent, no
password, a closed port on 127.0.0.1; each a clear message naming the connect string, never a
traceback."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.core.guard.isolated_python import module_of_argv
from racperf_tui.tools import calibrate_io
from racperf_tui.tools.calibrate_io import oracledb_session as calibrate_io_oracledb
from tests.helpers import racperf_cmd

oracledb = pytest.importorskip("oracledb")


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(tmp_path: Path, *settings: str, password: str | None = None) -> tuple[subprocess.CompletedProcess[str], dict]:
    env = {k: v for k, v in os.environ.items() if k != calibrate_io.PASSWORD_ENV}
    if password is not None:
        env[calibrate_io.PASSWORD_ENV] = password
    done = subprocess.run(
        racperf_cmd() + ["run", "calibrate_io", "--data-dir", str(tmp_path / "data"), *settings],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done, (lines[-1] if lines else {})


def test_the_plan_runs_the_oracledb_session_with_the_same_statements() -> None:
    planned = calibrate_io.TOOL.invocation({"connect": "db1:1521/ORCL", "num_physical_disks": 4})
    module = calibrate_io.ORACLEDB_SESSION_MODULE
    assert planned.argv[:2] == [sys.executable, "-I"]  # isolated: core/guard/isolated_python.py
    assert module_of_argv(list(planned.argv)) == (module, ["--connect", "db1:1521/ORCL", "--user", "sys"])
    cfg = calibrate_io._config({"connect": "db1:1521/ORCL", "num_physical_disks": 4})
    assert json.loads(planned.stdin or "") == [list(s) for s in calibrate_io.statements(cfg)]
    assert "num_physical_disks => 4," in json.dumps(json.loads(planned.stdin or ""))
    (status,) = planned.companions
    assert json.loads(status.stdin or "") == [list(s) for s in calibrate_io.STATUS_STATEMENTS]
    assert status.argv == planned.argv and status.interval_s == 5.0


def test_the_driver_absent_is_said_with_the_way_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """How Python itself says a module is not importable (sys.modules[name] = None)."""
    monkeypatch.setitem(sys.modules, "oracledb", None)
    monkeypatch.setattr(calibrate_io.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ToolNotFound, match=r"connect needs python-oracledb, which is not installed \(pip install"):
        calibrate_io.TOOL.invocation({"connect": "db1:1521/ORCL"})
    monkeypatch.setattr(calibrate_io_oracledb, "oracledb", None)
    printed = io.StringIO()
    with redirect_stdout(printed):
        status = calibrate_io_oracledb.run_session([["query", "SELECT 1 FROM dual"]], "db1:1521/ORCL", "sys", "x")
    assert status == 1
    result = calibrate_io.parse_output(printed.getvalue())
    assert result["error"].startswith("python-oracledb is not installed (pip install 'racperf_tui[oracle]'")


def test_a_closed_port_is_a_clear_error_naming_the_connect_string(tmp_path: Path) -> None:
    dsn = f"127.0.0.1:{closed_port()}/ORCL"
    done, last = run(tmp_path, "--set", f"connect={dsn}", password="not-a-real-one")
    assert done.returncode == 1 and last["state"] == "failed", done.stdout + done.stderr
    message = last["message"]
    assert message.startswith("DPY-6005: cannot connect to database"), message
    assert f"(connect string {dsn}, user sys AS SYSDBA)" in message
    assert "the listener cannot be reached at that address" in message
    assert "Traceback" not in done.stdout + done.stderr and "not-a-real-one" not in done.stdout + done.stderr


def test_no_password_says_where_it_goes(tmp_path: Path) -> None:
    dsn = f"127.0.0.1:{closed_port()}/ORCL"
    done, last = run(tmp_path, "--set", f"connect={dsn}", "--set", "user=c##calib")
    assert done.returncode == 1
    assert last["message"].startswith(f"DPY-4001: no credentials specified (connect string {dsn}, user c##calib")
    assert f"set {calibrate_io.PASSWORD_ENV}" in last["message"]


def test_hostile_statements_on_stdin_are_refused_plainly() -> None:
    for text in ("not json", '{"a": 1}', '[["query"]]', "[[1, 2]]"):
        done = subprocess.run(
            [sys.executable, "-m", calibrate_io.ORACLEDB_SESSION_MODULE, "--connect", "x"],
            input=text,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 1 and done.stdout.startswith("racperf: the statements on standard input are not")
        assert "Traceback" not in done.stderr
