"""CALIBRATE_IO through sqlplus: the emulator in tests/fakes/sqlplus reads racperf's script the
way sqlplus does and answers from a simulated instance; every precondition and Oracle error is
named with its fix; the sqlplus output of ../shared/samples parses to its figures."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.tools import calibrate_io
from racperf_tui.tools.figures import OutputParseError
from tests.helpers import FAKES, FIXTURES, racperf_cmd


@pytest.fixture
def oracle_home(tmp_path: Path) -> Path:
    home = tmp_path / "dbhome_1"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    (home / "bin" / "sqlplus").symlink_to(FAKES / "sqlplus")
    return home


def calibrate(home: Path, tmp_path: Path, *settings: str, **env: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    """``racperf run calibrate_io`` against the emulator: (the process, its last JSON line)."""
    environment = dict(os.environ, FAKE_SQLPLUS_CALIBRATE_S="0.5", FAKE_SQLPLUS_STATE_DIR=str(tmp_path), **env)
    done = subprocess.run(
        racperf_cmd()
        + [
            "run",
            "calibrate_io",
            "--data-dir",
            str(tmp_path / "data"),
            "--set",
            "sid=ORCL",
            "--set",
            f"oracle_home={home}",
            *settings,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done, (lines[-1] if lines else {})


def test_the_sample_parses_to_its_figures() -> None:
    text = (FIXTURES / "calibrate_io" / "dba_rsrc_io_calibrate.txt").read_text()
    assert calibrate_io.parse_output(text) == {
        "tool": "calibrate_io",
        "start_time": "04-SEP-022 17:53:24",
        "start_iso": "2022-09-04T17:53:24",
        "end_time": "04-SEP-022 18:02:55",
        "end_iso": "2022-09-04T18:02:55",
        "max_iops": 13070,
        "max_mbps": 1200,
        "max_pmbps": 690,
        "latency_ms": 11,
        "num_physical_disks": 2,
        "warnings": [
            f"line 3: {column} '04-SEP-022 {clock}' has a three-digit year (TO_CHAR 'DD-MON-YYY' prints the last "
            "three digits of the year): read as 2022; racperf's own query asks for YYYY-MM-DD"
            for column, clock in (("START_TIME", "17:53:24"), ("END_TIME", "18:02:55"))
        ],
    }


def test_dbms_output_with_a_fractional_latency_wins_over_the_rounded_row() -> None:
    text = (
        "max_iops = 13070\nlatency  = 10.868\nmax_mbps = 1200\n\n"
        + (FIXTURES / "calibrate_io" / "dba_rsrc_io_calibrate.txt").read_text()
    )
    result = calibrate_io.parse_output(text)
    assert (result["max_iops"], result["latency_ms"], result["max_mbps"], result["max_pmbps"]) == (
        13070,
        10.868,
        1200,
        690,
    )


def test_output_without_figures_or_errors_is_not_a_result() -> None:
    with pytest.raises(OutputParseError, match="no CALIBRATE_IO figures"):
        calibrate_io.parse_output("SQL*Plus: Release 19.0.0.0.0\n")


def test_a_calibration_end_to_end(oracle_home: Path, tmp_path: Path) -> None:
    done, last = calibrate(oracle_home, tmp_path, "--set", "num_physical_disks=2", "--set", "max_latency=20")
    assert done.returncode == 0, done.stderr
    result = last["result"]
    assert (result["max_iops"], result["max_mbps"], result["latency_ms"]) == (13070, 1200, 10.868)
    assert result["checks"] == {
        "sysdba": "TRUE",
        "timed_statistics": "TRUE",
        "filesystemio_options": "SETALL",
        "disk_asynch_io": "TRUE",
        "async_datafiles": "4",
        "sync_datafiles": "0",
        "calibration_status": "READY",
        "con_name": "CDB$ROOT",
    }
    # the emulator's DBA_RSRC_IO_CALIBRATE row holds this calibration's times and disks
    assert result["num_physical_disks"] == 2 and result["start_time"] <= result["end_time"]
    # racperf's query asks for a four-digit year: read by place, nothing to warn of
    assert result["start_iso"] == result["start_time"].replace(" ", "T") and "warnings" not in result
    names = ("system01", "sysaux01", "undotbs01", "users01")
    assert result["datafiles"] == [f"/u02/oradata/ORCL/{name}.dbf" for name in names]
    # this machine has no /u02: the paths are kept, no device is made up for them
    assert result["devices"] == [] and result["devices_unresolved"] == result["datafiles"]
    shown = subprocess.run(
        racperf_cmd() + ["runs", "show", "1", "--data-dir", str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    assert f"command:      {oracle_home}/bin/sqlplus -S -L '/ as sysdba'" in shown


def test_a_first_calibration_ever_starts_from_not_available(oracle_home: Path, tmp_path: Path) -> None:
    """V$IO_CALIBRATION_STATUS says NOT AVAILABLE before any calibration: not a refusal."""
    done, last = calibrate(oracle_home, tmp_path, FAKE_SQLPLUS_CALIBRATED="")
    assert done.returncode == 0, done.stderr
    assert last["result"]["checks"]["calibration_status"] == "NOT AVAILABLE"
    again, last = calibrate(oracle_home, tmp_path, FAKE_SQLPLUS_CALIBRATED="")
    assert again.returncode == 0 and last["result"]["checks"]["calibration_status"] == "READY"


def test_a_long_datafile_name_is_read_whole(oracle_home: Path, tmp_path: Path) -> None:
    """V$DATAFILE.NAME holds up to 513 characters; sqlplus wraps a row wider than LINESIZE."""
    long_name = "/u02/oradata/" + "x" * 480 + "/system01.dbf"
    done, last = calibrate(oracle_home, tmp_path, FAKE_SQLPLUS_DATAFILES=long_name)
    assert done.returncode == 0, done.stderr
    assert last["result"]["datafiles"] == [long_name]


@pytest.mark.parametrize(
    "env, expected",
    [
        (
            {"FAKE_SQLPLUS_TIMED_STATISTICS": "FALSE"},
            "timed_statistics: timed_statistics is FALSE (ORA-56709): ALTER SYSTEM SET timed_statistics=TRUE",
        ),
        ({"FAKE_SQLPLUS_ASYNC_FILES": "0"}, "async_datafiles: no datafile has asynchronous I/O (ORA-56708)"),
        (
            {"FAKE_SQLPLUS_FILESYSTEMIO_OPTIONS": "NONE"},
            "async_datafiles: no datafile has asynchronous I/O (ORA-56708): set filesystemio_options=SETALL",
        ),
        ({"FAKE_SQLPLUS_DISK_ASYNCH_IO": "FALSE"}, "async_datafiles: no datafile has asynchronous I/O"),
        ({"FAKE_SQLPLUS_ISDBA": "FALSE"}, "sysdba: CALIBRATE_IO needs SYSDBA"),
        ({"FAKE_SQLPLUS_CON_NAME": "PDB1"}, "con_name: connected to a pluggable database: calibrate from the CDB root"),
        (
            {"FAKE_SQLPLUS_FAIL": "ORA-56708"},
            "ORA-56708: Could not find any datafiles with asynchronous i/o capability "
            "(no datafile has asynchronous I/O",
        ),
    ],
)
def test_each_failure_is_named_with_its_fix(
    env: dict[str, str], expected: str, oracle_home: Path, tmp_path: Path
) -> None:
    done, last = calibrate(oracle_home, tmp_path, **env)
    assert done.returncode == 1
    assert last["state"] == "failed" and last["message"].startswith(expected), last["message"]
    assert "Traceback" not in done.stderr
    # no calibration ran: nothing left IN PROGRESS for the next one
    assert not any(tmp_path.glob("fake-sqlplus-*.inprogress"))


def test_a_refused_async_check_says_what_the_instance_has(oracle_home: Path, tmp_path: Path) -> None:
    _, last = calibrate(oracle_home, tmp_path, FAKE_SQLPLUS_FILESYSTEMIO_OPTIONS="DIRECTIO")
    assert last["message"].endswith("(now filesystemio_options=DIRECTIO, disk_asynch_io=TRUE)"), last["message"]
    assert last["result"]["checks"]["async_datafiles"] == "0"


@pytest.mark.parametrize(
    "env, code, text",
    [
        ({"FAKE_SQLPLUS_FAIL": "ORA-56713"}, 56713, "ORA-56713: Insufficient Resource Manager privileges"),
        ({"FAKE_SQLPLUS_FAIL": "ORA-56708"}, 56708, "ORA-56708: Could not find any datafiles"),
        ({"FAKE_SQLPLUS_LOGON_ERROR": "ORA-01017"}, None, "ORA-01017: invalid username/password; logon denied"),
        ({"FAKE_SQLPLUS_LOGON_ERROR": "ORA-01034"}, None, "ORA-01034: ORACLE not available (the instance is not"),
    ],
)
def test_oracle_errors_by_number_and_text(
    env: dict[str, str], code: int | None, text: str, oracle_home: Path, tmp_path: Path
) -> None:
    """sqlplus exits with the error number mod 256 (WHENEVER SQLERROR EXIT SQL.SQLCODE): 56713
    becomes 137, so the message is read from the ORA- line, never from the status."""
    done, last = calibrate(oracle_home, tmp_path, **env)
    assert done.returncode == 1 and last["state"] == "failed"
    assert last["message"].startswith(text), last["message"]
    assert last["exit_status"] == (code % 256 if code else 1)
    assert "Traceback" not in done.stderr


def test_one_calibration_at_a_time(oracle_home: Path, tmp_path: Path) -> None:
    environment = dict(os.environ, FAKE_SQLPLUS_CALIBRATE_S="6", FAKE_SQLPLUS_STATE_DIR=str(tmp_path))
    first = subprocess.Popen(
        racperf_cmd()
        + [
            "run",
            "calibrate_io",
            "--data-dir",
            str(tmp_path / "d1"),
            "--set",
            "sid=ORCL",
            "--set",
            f"oracle_home={oracle_home}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment,
    )
    try:
        deadline = time.monotonic() + 20
        while not any(tmp_path.glob("fake-sqlplus-*.inprogress")) and time.monotonic() < deadline:
            time.sleep(0.1)
        done, last = calibrate(oracle_home, tmp_path)
        assert done.returncode == 1
        assert last["message"].startswith("calibration_status: a calibration is already IN PROGRESS")
    finally:
        first.wait(timeout=30)
    assert first.returncode == 0


@pytest.mark.parametrize(
    "setting, expected",
    [
        ("max_latency=5", "max_latency must be 10 to 10000 ms"),
        ("max_latency=12.5", "max_latency: 12.5 is not a whole number of ms, 0 or more"),
        ("num_physical_disks=0", "num_physical_disks must be 1 to 100000"),
        ("num_physical_disks=two", "num_physical_disks: 'two' is not a whole number"),
        ("status_interval_s=0.5", "status_interval_s must be 1 to 600 s"),
        ("connect=sys/secret@db1:1521/ORCL", "connect must be host:port/service or a TNS alias, without user"),
    ],
)
def test_parameters_are_validated(setting: str, expected: str, oracle_home: Path, tmp_path: Path) -> None:
    done, _ = calibrate(oracle_home, tmp_path, "--set", setting)
    assert done.returncode == 2 and expected in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "secret" not in done.stderr


def test_a_missing_sqlplus(oracle_home: Path, tmp_path: Path) -> None:
    done, _ = calibrate(tmp_path / "no-home", tmp_path)
    assert done.returncode == 127 and "sqlplus not found or not executable" in done.stderr


def test_an_exhausted_aio_pool_is_refused_before_the_database_is_asked(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "proc/sys/fs").mkdir(parents=True)
    (root / "proc/sys/fs/aio-nr").write_text("65000\n")
    (root / "proc/sys/fs/aio-max-nr").write_text("65536\n")
    assert calibrate_io.aio_problem(root).startswith("aio-nr 65000 of aio-max-nr 65536 (536 free)")
    tool = calibrate_io.CalibrateIoTool(root)
    with pytest.raises(ValueError, match=r"^calibrate_io: aio-nr 65000 of aio-max-nr 65536 .*raise fs.aio-max-nr"):
        tool.prepare({}, tool.invocation({"sid": "ORCL", "oracle_home": "/x", "sqlplus": "/bin/true"}))
    (root / "proc/sys/fs/aio-nr").write_text("1000\n")
    assert calibrate_io.aio_problem(root) is None
    tool.prepare({}, tool.invocation({"sid": "ORCL", "oracle_home": "/x", "sqlplus": "/bin/true"}))


def test_parse_command(tmp_path: Path) -> None:
    done = subprocess.run(
        racperf_cmd() + ["parse", "calibrate-io", str(FIXTURES / "calibrate_io" / "dba_rsrc_io_calibrate.txt")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["max_iops"] == 13070
