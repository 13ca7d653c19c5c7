"""DBMS_RESOURCE_MANAGER.CALIBRATE_IO through ``sqlplus -S -L / as sysdba``.

A run is one sqlplus session fed a script on standard input: the preconditions first (SYSDBA,
timed_statistics, asynchronous I/O on the datafiles, no calibration IN PROGRESS, the CDB root),
each printed as a ``racperf:check:NAME:VALUE`` line; a PL/SQL block that stops with a
racperf error naming the fix when one fails; then the calibration, its DBMS_OUTPUT lines
(``max_iops = 13070``, ``latency  = 10.868``, ``max_mbps = 1200``) and the row it left in
DBA_RSRC_IO_CALIBRATE. ``WHENEVER SQLERROR EXIT`` ends the session at the first error; sqlplus'
exit status is the error number mod 256, so the ORA-NNNNN in the output is what is reported.

The host's own limit is checked before anything starts: asynchronous I/O slots
(/proc/sys/fs/aio-nr near aio-max-nr gives ORA-56708 although the datafiles are fine).

Result (``parse_output``, also ``racperf parse calibrate_io FILE`` on saved sqlplus output)::

    {"tool": "calibrate_io", "start_time", "end_time", "max_iops", "max_mbps", "max_pmbps",
     "latency_ms", "num_physical_disks", "checks": {...}, "error": "ORA-56708: ..." | None}

with only the keys the output has.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from racperf_tui.core.events import Sample
from racperf_tui.core.invocation import Invocation, ToolNotFound
from racperf_tui.core.tool import MetricSpec, ToolDescription, options_from_dataclass
from racperf_tui.tools.base import OptionsConfig
from racperf_tui.tools.figures import OutputParseError

name = "calibrate_io"
install_hint = (
    "sqlplus comes with the Oracle Database home: set oracle_home (or $ORACLE_HOME) to the "
    "home of the instance to calibrate"
)

#: what each precondition's failure means and how to fix it (ORA- numbers from Oracle's docs)
CHECK_FIXES: dict[str, str] = {
    "sysdba": "CALIBRATE_IO needs SYSDBA: run as the oracle software owner (OS authentication), or give a "
    "connect string of a SYSDBA user",
    "timed_statistics": "timed_statistics is FALSE (ORA-56709): ALTER SYSTEM SET timed_statistics=TRUE",
    "async_datafiles": "no datafile has asynchronous I/O (ORA-56708): set filesystemio_options=SETALL (or "
    "ASYNCH) and disk_asynch_io=TRUE in the spfile and restart the instance; check "
    "V$IOSTAT_FILE.ASYNCH_IO",
    "calibration_status": "a calibration is already IN PROGRESS (one at a time per database): wait for it, "
    "see V$IO_CALIBRATION_STATUS",
    "con_name": "connected to a pluggable database: calibrate from the CDB root (CDB$ROOT)",
    "aio": "the host is out of asynchronous I/O slots (ORA-56708): /proc/sys/fs/aio-nr is near "
    "aio-max-nr; raise fs.aio-max-nr (sysctl) or stop what holds them",
}
#: Oracle's errors of CALIBRATE_IO, named with their fix
ORA_FIXES: dict[str, str] = {
    "ORA-56708": CHECK_FIXES["async_datafiles"],
    "ORA-56709": CHECK_FIXES["timed_statistics"],
    "ORA-56713": "insufficient Resource Manager privileges: connect AS SYSDBA",
    "ORA-01031": CHECK_FIXES["sysdba"],
    "ORA-01034": "the instance is not started (ORACLE_SID and ORACLE_HOME point at a stopped instance)",
    "ORA-12162": "ORACLE_SID is not set or wrong",
}
#: aio slots a calibration wants free (Oracle opens many asynchronous I/O contexts per disk)
AIO_SLOTS_NEEDED = 4096
_CHECK_RE = re.compile(r"^racperf:check:(?P<name>[a-z_]+):(?P<value>.*)$")
_REFUSED_RE = re.compile(r"racperf:refused:(?P<name>[a-z_]+)")
_OUTPUT_RE = re.compile(r"^\s*(?P<key>max_iops|max_mbps|latency)\s*=\s*(?P<value>-?\d+(?:\.\d+)?)\s*$")
_ORA_RE = re.compile(r"\b(?P<code>ORA-\d{5}): ?(?P<text>[^\n]{0,300})")
_ROW_RE = re.compile(
    r"^(?P<start>\d{2}-[A-Z]{3}-\d{2,4} \d{2}:\d{2}:\d{2})\s+(?P<end>\d{2}-[A-Z]{3}-\d{2,4} "
    r"\d{2}:\d{2}:\d{2})\s+(?P<nums>(?:\d+(?:\.\d+)?\s*){5})$"
)


@dataclass
class CalibrateIoConfig(OptionsConfig):
    """One calibration of the instance ``sid`` of ``oracle_home``."""

    sid: str = ""
    oracle_home: str = ""
    sqlplus: str = ""
    num_physical_disks: int = 1
    max_latency: int = 20
    duration_estimate_s: int = 600

    tool_name: ClassVar[str] = "calibrate_io"

    def _normalise(self) -> None:
        self.sid = str(self.sid or os.environ.get("ORACLE_SID", "")).strip()
        self.oracle_home = str(self.oracle_home or os.environ.get("ORACLE_HOME", "")).strip()
        for key in ("num_physical_disks", "max_latency", "duration_estimate_s"):
            try:
                setattr(self, key, int(getattr(self, key)))
            except (TypeError, ValueError):
                raise ValueError(f"calibrate_io: {key} must be a whole number, got {getattr(self, key)!r}") from None

    def validate(self) -> None:
        if not self.sid or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_$#+]{0,63}", self.sid):
            raise ValueError(f"calibrate_io: sid {self.sid!r} is not an ORACLE_SID (set sid, or $ORACLE_SID)")
        if not self.oracle_home:
            raise ValueError("calibrate_io: oracle_home is not set (set oracle_home, or $ORACLE_HOME)")
        if not 1 <= self.num_physical_disks <= 100_000:
            raise ValueError(f"calibrate_io: num_physical_disks must be 1 to 100000, got {self.num_physical_disks}")
        if not 10 <= self.max_latency <= 10_000:
            raise ValueError(
                f"calibrate_io: max_latency must be 10 to 10000 ms (Oracle refuses less than 10), "
                f"got {self.max_latency}"
            )
        if not 60 <= self.duration_estimate_s <= 86_400:
            raise ValueError("calibrate_io: duration_estimate_s must be 60 to 86400")

    def sqlplus_path(self) -> str:
        return self.sqlplus or os.path.join(self.oracle_home, "bin", "sqlplus")


_HELP = {
    "sid": "the instance to calibrate (ORACLE_SID; default $ORACLE_SID)",
    "oracle_home": "its Oracle home (default $ORACLE_HOME)",
    "sqlplus": "the sqlplus program (default ORACLE_HOME/bin/sqlplus)",
    "num_physical_disks": "approximate number of physical disks under the datafiles",
    "max_latency": "the latency (ms) the IOPS figure must keep, at least 10",
    "duration_estimate_s": "how long it may take before racperf stops it (its hard limit is twice this)",
}
OPTIONS = options_from_dataclass(CalibrateIoConfig, _HELP)
METRICS = (MetricSpec("elapsed_s", "elapsed", "s", decimals=0, chart="elapsed"),)
DESCRIPTION = ToolDescription(
    name=name,
    summary="Oracle's own I/O calibration, from inside the database",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
)


def _config(config: Mapping[str, Any]) -> CalibrateIoConfig:
    return CalibrateIoConfig.from_mapping({k: v for k, v in config.items() if k not in ("destructive",)})


def sql_script(cfg: CalibrateIoConfig) -> str:
    """The whole session: checks (stopping at the first that fails), calibration, its row."""
    return f"""WHENEVER SQLERROR EXIT SQL.SQLCODE
WHENEVER OSERROR EXIT FAILURE
SET SERVEROUTPUT ON SIZE UNLIMITED
SET LINESIZE 200 PAGESIZE 100 FEEDBACK OFF VERIFY OFF TRIMSPOOL ON TAB OFF
SET HEADING OFF
SELECT 'racperf:check:sysdba:' || SYS_CONTEXT('USERENV', 'ISDBA') FROM dual;
SELECT 'racperf:check:timed_statistics:' || UPPER(value) FROM v$parameter WHERE name = 'timed_statistics';
SELECT 'racperf:check:filesystemio_options:' || UPPER(value) FROM v$parameter WHERE name = 'filesystemio_options';
SELECT 'racperf:check:async_datafiles:' || COUNT(*) FROM v$datafile f, v$iostat_file i
 WHERE f.file# = i.file_no AND i.filetype_name = 'Data File' AND i.asynch_io = 'ASYNC_ON';
SELECT 'racperf:check:calibration_status:' || status FROM v$io_calibration_status;
DECLARE
  n NUMBER;
  v VARCHAR2(64);
BEGIN
  IF SYS_CONTEXT('USERENV', 'ISDBA') <> 'TRUE' THEN
    RAISE_APPLICATION_ERROR(-20001, 'racperf:refused:sysdba');
  END IF;
  SELECT UPPER(value) INTO v FROM v$parameter WHERE name = 'timed_statistics';
  IF v <> 'TRUE' THEN RAISE_APPLICATION_ERROR(-20002, 'racperf:refused:timed_statistics'); END IF;
  SELECT COUNT(*) INTO n FROM v$datafile f, v$iostat_file i
   WHERE f.file# = i.file_no AND i.filetype_name = 'Data File' AND i.asynch_io = 'ASYNC_ON';
  IF n = 0 THEN RAISE_APPLICATION_ERROR(-20003, 'racperf:refused:async_datafiles'); END IF;
  SELECT status INTO v FROM v$io_calibration_status;
  IF v = 'IN PROGRESS' THEN RAISE_APPLICATION_ERROR(-20004, 'racperf:refused:calibration_status'); END IF;
  BEGIN
    v := SYS_CONTEXT('USERENV', 'CON_NAME');
  EXCEPTION WHEN OTHERS THEN
    v := NULL;  -- 11g has no containers
  END;
  DBMS_OUTPUT.PUT_LINE('racperf:check:con_name:' || v);
  IF v IS NOT NULL AND v NOT IN ('CDB$ROOT', SYS_CONTEXT('USERENV', 'DB_NAME')) THEN
    RAISE_APPLICATION_ERROR(-20005, 'racperf:refused:con_name');
  END IF;
END;
/
SELECT 'racperf:calibrate:start:' || TO_CHAR(SYSTIMESTAMP, 'YYYY-MM-DD HH24:MI:SS') FROM dual;
DECLARE
  lat  NUMBER;
  iops PLS_INTEGER;
  mbps PLS_INTEGER;
BEGIN
  DBMS_RESOURCE_MANAGER.CALIBRATE_IO(num_physical_disks => {cfg.num_physical_disks},
                                     max_latency => {cfg.max_latency},
                                     max_iops => iops, max_mbps => mbps, actual_latency => lat);
  DBMS_OUTPUT.PUT_LINE('max_iops = ' || iops);
  DBMS_OUTPUT.PUT_LINE('latency  = ' || lat);
  DBMS_OUTPUT.PUT_LINE('max_mbps = ' || mbps);
END;
/
SET HEADING ON
SELECT TO_CHAR(start_time, 'DD-MON-YYY HH24:MI:SS') start_time, TO_CHAR(end_time, 'DD-MON-YYY HH24:MI:SS') end_time,
       max_iops, max_mbps, max_pmbps, latency, num_physical_disks AS disks FROM dba_rsrc_io_calibrate;
EXIT
"""


def aio_problem(root: Path = Path("/")) -> str | None:
    """Why the host's asynchronous I/O slots would fail a calibration, or None."""
    try:
        used = int((root / "proc/sys/fs/aio-nr").read_text().split()[0])
        limit = int((root / "proc/sys/fs/aio-max-nr").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if limit - used < AIO_SLOTS_NEEDED:
        return f"aio-nr {used} of aio-max-nr {limit} ({limit - used} free): {CHECK_FIXES['aio']}"
    return None


class CalibrateIoStreamParser:
    """sqlplus prints nothing while CALIBRATE_IO runs: one sample when the calibration starts
    (after the checks passed), so the live view knows it is under way."""

    def __init__(self) -> None:
        self.started = False
        self._t0: float | None = None

    def feed(self, line: str) -> list[Sample]:
        text = line.strip()
        if text.startswith("racperf:calibrate:start:"):
            self.started = True
            return [Sample(t=0.0, metrics={"elapsed_s": 0.0}, extra={"phase": "calibrating"})]
        return []

    def finish(self) -> list[Sample]:
        return []


def parse_output(text: str) -> dict[str, Any]:
    """sqlplus output of a calibration (or of the DBA_RSRC_IO_CALIBRATE query alone) -> result.
    OutputParseError when it holds neither figures nor an error."""
    result: dict[str, Any] = {"tool": name}
    checks: dict[str, str] = {}
    for raw in text.splitlines()[:100_000]:
        line = raw.strip()
        if len(line) > 4096:
            continue
        check = _CHECK_RE.match(line)
        if check:
            checks[check["name"]] = check["value"].strip()
            continue
        figure = _OUTPUT_RE.match(line)
        if figure:
            key = {"latency": "latency_ms"}.get(figure["key"], figure["key"])
            value = float(figure["value"])
            result[key] = int(value) if key != "latency_ms" and value.is_integer() else value
            continue
        row = _ROW_RE.match(line)
        if row:
            numbers = [float(n) for n in row["nums"].split()]
            result["start_time"], result["end_time"] = row["start"], row["end"]
            for key, value in zip(("max_iops", "max_mbps", "max_pmbps", "latency_ms", "num_physical_disks"), numbers):
                result.setdefault(key, int(value) if value.is_integer() else value)
    if checks:
        result["checks"] = checks
    refused = _REFUSED_RE.search(text)
    error = _ORA_RE.search(text)
    if refused:
        result["error"] = f"{refused['name']}: {CHECK_FIXES.get(refused['name'], 'a precondition failed')}"
    elif error:
        code = error["code"]
        fix = ORA_FIXES.get(code)
        result["error"] = f"{code}: {error['text'].strip()}" + (f" ({fix})" if fix else "")
    if not any(k in result for k in ("max_iops", "max_mbps", "error")):
        raise OutputParseError(
            "no CALIBRATE_IO figures (max_iops = ..., DBA_RSRC_IO_CALIBRATE row) and no ORA- error in the output"
        )
    return result


class CalibrateIoTool:
    """The CALIBRATE_IO tool. It names no targets: the database reads its own datafiles."""

    name = name
    install_hint = install_hint
    description = DESCRIPTION
    merge_stderr = True
    stop_grace_s = 10.0

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None) -> Invocation:
        cfg = _config(config)
        sqlplus = cfg.sqlplus_path()
        if not os.access(sqlplus, os.X_OK):
            raise ToolNotFound(f"calibrate_io: {sqlplus} not found or not executable; {install_hint}")
        home = cfg.oracle_home
        env = {
            "ORACLE_HOME": home,
            "ORACLE_SID": cfg.sid,
            "LD_LIBRARY_PATH": os.pathsep.join(
                p for p in (os.path.join(home, "lib"), os.environ.get("LD_LIBRARY_PATH", "")) if p
            ),
            "PATH": os.pathsep.join((os.path.join(home, "bin"), os.environ.get("PATH", ""))),
        }
        return Invocation(
            argv=[sqlplus, "-S", "-L", "/ as sysdba"],
            env=env,
            cwd=".",
            stdin=sql_script(cfg),
            hard_limit_s=2.0 * cfg.duration_estimate_s + 60.0,
            notes=(
                f"calibrating instance {cfg.sid} ({cfg.num_physical_disks} disks, max_latency {cfg.max_latency} ms)",
            ),
        )

    def prepare(self, config: Mapping[str, Any], planned: Invocation) -> None:
        problem = aio_problem()
        if problem:
            raise ValueError(f"calibrate_io: {problem}")

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        return self.invocation(config).argv

    def stream_parser(self, config: Mapping[str, Any]) -> CalibrateIoStreamParser:
        return CalibrateIoStreamParser()

    def parse_result(self, output: str) -> dict[str, Any]:
        return parse_output(output)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        if result is None:
            return False, f"no CALIBRATE_IO output could be read (sqlplus exit status {exit_status})"
        if result.get("error"):
            return False, str(result["error"])
        if exit_status != 0:
            return False, f"sqlplus exited with status {exit_status} (an ORA- error's number mod 256)"
        if not result.get("max_iops"):
            return False, "CALIBRATE_IO printed no max_iops"
        return True, "ok"

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        return 2.0 * _config(config).duration_estimate_s + 60.0

    def tool_version(self, argv: list[str]) -> str | None:
        return None


TOOL = CalibrateIoTool()
