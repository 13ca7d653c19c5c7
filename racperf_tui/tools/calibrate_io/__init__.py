"""DBMS_RESOURCE_MANAGER.CALIBRATE_IO through ``sqlplus -S -L / as sysdba``, or through
python-oracledb (thin mode, SYSDBA) when it is installed and a ``connect`` string is given.

A run is one database session fed a list of statements (:func:`statements`): the
preconditions first (SYSDBA, timed_statistics, asynchronous I/O on the datafiles, no
calibration IN PROGRESS, the CDB root), each printed as a ``racperf:check:NAME:VALUE`` line,
the datafiles (V$DATAFILE) and the ASM disks under them (V$ASM_DISK_STAT) as
``racperf:datafile:PATH`` / ``racperf:asm_disk:PATH`` lines; a PL/SQL block that stops with a
racperf error naming the fix when one fails; then the calibration, its DBMS_OUTPUT lines
(``max_iops = 13070``, ``latency  = 10.868``, ``max_mbps = 1200``) and the row it left in
DBA_RSRC_IO_CALIBRATE. ``WHENEVER SQLERROR EXIT`` ends the session at the first error; sqlplus'
exit status is the error number mod 256, so the ORA-NNNNN in the output is what is reported.

While the calibration runs (it prints nothing for minutes) a second session, the run's
companion ``status``, reads V$IO_CALIBRATION_STATUS every ``status_interval_s``: each answer
is a Sample (``elapsed_s``, ``in_progress``; ``extra["status"]`` IN PROGRESS / READY / NOT
AVAILABLE, ``extra["calibration_time"]``, ``extra["devices"]``).

The devices under the datafiles: a datafile on a file system is on its mount's device, an ASM
disk path (/dev/mapper/X, /dev/oracleasm/disks/X, /dev/sdX) is a device; each with the devices
under it (a partition's disk, a dm device's slaves), resolved on this machine
(:func:`devices_under`), as the run's ``devices`` (kernel names, as iostat shows them).

The host's own limit is checked before anything starts: asynchronous I/O slots
(/proc/sys/fs/aio-nr near aio-max-nr gives ORA-56708 although the datafiles are fine).

Result (``parse_output``, also ``racperf parse calibrate_io FILE`` on saved sqlplus output)::

    {"tool": "calibrate_io", "start_time", "end_time", "max_iops", "max_mbps", "max_pmbps",
     "latency_ms", "num_physical_disks", "checks": {...}, "datafiles": [...], "asm_disks": [...],
     "error": "ORA-56708: ..."}

with only the keys the output has; a run's result adds ``devices`` (and
``devices_unresolved``: paths this machine does not have).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import Companion, Invocation, ToolNotFound
from racperf_tui.core.contract.tool import HOME, RUNS, MetricSpec, ToolDescription, options_from_dataclass
from racperf_tui.core.guard.isolated_python import isolated_module_argv
from racperf_tui.core.textio.bounded_read import read_regular_text_bounded
from racperf_tui.tools.base import OptionsConfig, on_another_node
from racperf_tui.tools.calibrate_io.rsrc_table import read_table
from racperf_tui.tools.figures import OutputParseError

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

name = "calibrate_io"
install_hint = (
    "sqlplus comes with the Oracle Database home: set oracle_home (or $ORACLE_HOME) to the "
    "home of the instance to calibrate; or give connect (host:port/service) with python-oracledb "
    "installed (pip install 'racperf_tui[oracle]')"
)
#: the module python-oracledb sessions run in (a program of its own: ``python -m``)
ORACLEDB_SESSION_MODULE = "racperf_tui.tools.calibrate_io.oracledb_session"
#: where the python-oracledb session reads the password (never on a command line or in a config)
PASSWORD_ENV = "RACPERF_ORACLE_PASSWORD"

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
#: Oracle's errors of CALIBRATE_IO and of the logon, named with their fix
ORA_FIXES: dict[str, str] = {
    "ORA-56708": CHECK_FIXES["async_datafiles"] + "; or the host ran out of asynchronous I/O slots (aio-nr near "
    "aio-max-nr: raise fs.aio-max-nr)",
    "ORA-56709": CHECK_FIXES["timed_statistics"],
    "ORA-56713": "insufficient Resource Manager privileges: connect AS SYSDBA",
    "ORA-56705": CHECK_FIXES["calibration_status"],
    "ORA-01031": CHECK_FIXES["sysdba"],
    "ORA-01017": "the logon was refused: the OS user is not in the OSDBA group (dba), or the password is wrong",
    "ORA-01034": "the instance is not started (ORACLE_SID and ORACLE_HOME point at a stopped instance)",
    "ORA-12162": "ORACLE_SID is not set or wrong",
    "DPY-6005": "the listener cannot be reached at that address: check host, port and that the listener runs",
    "DPY-4001": f"no password: set {PASSWORD_ENV} in the environment racperf is started from",
}
#: aio slots a calibration wants free (Oracle opens many asynchronous I/O contexts per disk)
AIO_SLOTS_NEEDED = 4096
#: datafiles and ASM disks looked at (a database has at most 65533 datafiles)
MAX_PATHS = 65536
#: V$IO_CALIBRATION_STATUS.STATUS values
STATUSES = ("IN PROGRESS", "READY", "NOT AVAILABLE")
_CHECK_RE = re.compile(r"^racperf:check:(?P<name>[a-z_]+):(?P<value>.*)$")
_PATH_RE = re.compile(r"^racperf:(?P<kind>datafile|asm_disk):(?P<path>\S.{0,4000})$")
_STATUS_RE = re.compile(r"^racperf:status:(?P<status>[A-Z ]{1,20})\|(?P<time>[0-9: -]{0,19})\s*$")
_REFUSED_RE = re.compile(r"racperf:refused:(?P<name>[a-z_]+)")
#: racperf's own python-oracledb session saying why it could not run (no driver, bad input)
_SESSION_ERROR_RE = re.compile(r"^racperf: (?P<text>.{1,500})$", re.MULTILINE)
_OUTPUT_RE = re.compile(r"^\s*(?P<key>max_iops|max_mbps|latency)\s*=\s*(?P<value>-?\d+(?:\.\d+)?)\s*$")
_ORA_RE = re.compile(r"\b(?P<code>(?:ORA-\d{5}|DPY-\d{4})): ?(?P<text>[^\n]{0,300})")
#: a connect string with a password in it: user/password@...
_PASSWORD_IN_CONNECT_RE = re.compile(r"^[^@/]*/[^@]*@")


@dataclass
class CalibrateIoConfig(OptionsConfig):
    """One calibration of the instance ``sid`` of ``oracle_home`` (sqlplus), or of the
    database ``connect`` reaches (python-oracledb)."""

    sid: str = ""
    oracle_home: str = ""
    sqlplus: str = ""
    connect: str = ""
    user: str = "sys"
    num_physical_disks: int = 1
    max_latency: int = 20
    status_interval_s: float = 5.0
    duration_estimate_s: int = 600

    tool_name: ClassVar[str] = "calibrate_io"

    def _normalise(self) -> None:
        self.sid = str(self.sid or os.environ.get("ORACLE_SID", "")).strip()
        self.oracle_home = str(self.oracle_home or os.environ.get("ORACLE_HOME", "")).strip()
        self.connect = str(self.connect or "").strip()
        self.user = str(self.user or "sys").strip()
        for key in ("num_physical_disks", "max_latency", "duration_estimate_s"):
            value = getattr(self, key)
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = float("nan")
            if not number.is_integer():
                raise ValueError(f"calibrate_io: {key} must be a whole number, got {value!r}") from None
            setattr(self, key, int(number))
        try:
            self.status_interval_s = float(self.status_interval_s)
        except (TypeError, ValueError):
            raise ValueError(
                f"calibrate_io: status_interval_s must be a number of seconds, got {self.status_interval_s!r}"
            ) from None

    def validate(self) -> None:
        if self.connect:
            if _PASSWORD_IN_CONNECT_RE.match(self.connect) or any(c.isspace() for c in self.connect):
                raise ValueError(
                    "calibrate_io: connect must be host:port/service or a TNS alias, without user or password "
                    f"(it is recorded with the run; the password goes in ${PASSWORD_ENV})"
                )
            if not re.fullmatch(r"[A-Za-z0-9_$#]{1,128}", self.user):
                raise ValueError(f"calibrate_io: user {self.user!r} is not a database user name")
        else:
            if not self.sid or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_$#+]{0,63}", self.sid):
                raise ValueError(f"calibrate_io: sid {self.sid!r} is not an ORACLE_SID (set sid, or $ORACLE_SID)")
            if not self.oracle_home:
                raise ValueError("calibrate_io: oracle_home is not set (set oracle_home, or $ORACLE_HOME)")
        if not 1 <= self.num_physical_disks <= 100_000:
            raise ValueError(
                f"calibrate_io: num_physical_disks must be 1 to 100000 (the disks under the datafiles), "
                f"got {self.num_physical_disks}"
            )
        if not 10 <= self.max_latency <= 10_000:
            raise ValueError(
                f"calibrate_io: max_latency must be 10 to 10000 ms (Oracle refuses less than 10), "
                f"got {self.max_latency}"
            )
        if not 1 <= self.status_interval_s <= 600:
            raise ValueError(
                f"calibrate_io: status_interval_s must be 1 to 600 s (each is a logon), got {self.status_interval_s:g}"
            )
        if not 60 <= self.duration_estimate_s <= 86_400:
            raise ValueError("calibrate_io: duration_estimate_s must be 60 to 86400")

    def sqlplus_path(self) -> str:
        return self.sqlplus or os.path.join(self.oracle_home, "bin", "sqlplus")


_HELP = {
    "sid": "the instance to calibrate (ORACLE_SID; default $ORACLE_SID)",
    "oracle_home": "its Oracle home (default $ORACLE_HOME)",
    "sqlplus": "the sqlplus program (default ORACLE_HOME/bin/sqlplus)",
    "connect": "host:port/service or a TNS alias: use python-oracledb (thin mode, SYSDBA) instead of "
    f"sqlplus; password in ${PASSWORD_ENV}",
    "user": "the SYSDBA user for connect",
    "num_physical_disks": "approximate number of physical disks under the datafiles",
    "max_latency": "the latency (ms) the IOPS figure must keep, at least 10",
    "status_interval_s": "how often a second session reads V$IO_CALIBRATION_STATUS",
    "duration_estimate_s": "how long it may take before racperf stops it (its hard limit is twice this)",
}
OPTIONS = options_from_dataclass(
    CalibrateIoConfig,
    _HELP,
    kinds={
        "oracle_home": "path",
        "sqlplus": "path",
        "num_physical_disks": "count",
        "max_latency": "count",
        "status_interval_s": "duration",
        "duration_estimate_s": "duration",
    },
    access={"oracle_home": HOME, "sqlplus": RUNS},
    units={"max_latency": "ms"},
)
METRICS = (
    MetricSpec("elapsed_s", "calibrating for", "s", decimals=0, chart="elapsed"),
    MetricSpec("in_progress", "IN PROGRESS (V$IO_CALIBRATION_STATUS)", "", decimals=0, chart="in_progress"),
)
RESULTS = (
    MetricSpec("max_iops", "max IOPS", "IOPS", decimals=0),
    MetricSpec("max_mbps", "max MB/s", "MB/s", decimals=0),
    MetricSpec("max_pmbps", "max MB/s of one process", "MB/s", decimals=0),
    MetricSpec("latency_ms", "latency at max IOPS", "ms", decimals=3),
    MetricSpec("num_physical_disks", "physical disks", "", decimals=0),
)


class CalibrateIoDescription(ToolDescription):
    """The calibration's plan is its estimate: Oracle does not say how long it takes."""

    def planned_duration_s(self, config: Mapping[str, Any]) -> float | None:
        try:
            return float(config.get("duration_estimate_s", 600))
        except (TypeError, ValueError):
            return None


DESCRIPTION = CalibrateIoDescription(
    name=name,
    summary="Oracle's own I/O calibration, from inside the database",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
    live_panels=("calibration_devices",),
)


def _config(config: Mapping[str, Any]) -> CalibrateIoConfig:
    return CalibrateIoConfig.from_mapping({k: v for k, v in config.items() if k not in ("destructive",)})


# --------------------------------------------------------------------------- the statements
#: a statement of a session: ("query", SQL without ";") or ("block", PL/SQL ending in "END;")
Statement = tuple[str, str]
_ASYNC_COUNT = (
    "SELECT COUNT(*) FROM v$datafile f, v$iostat_file i\n"
    " WHERE f.file# = i.file_no AND i.filetype_name = 'Data File' AND i.asynch_io = 'ASYNC_ON'"
)


def statements(cfg: CalibrateIoConfig) -> list[Statement]:
    """The whole session: checks (stopping at the first that fails), the paths under the
    data, the calibration, its row. The same list for sqlplus and python-oracledb."""
    return [
        ("query", "SELECT 'racperf:check:sysdba:' || SYS_CONTEXT('USERENV', 'ISDBA') FROM dual"),
        (
            "query",
            "SELECT 'racperf:check:timed_statistics:' || UPPER(value) FROM v$parameter WHERE name = 'timed_statistics'",
        ),
        (
            "query",
            "SELECT 'racperf:check:filesystemio_options:' || UPPER(value) FROM v$parameter "
            "WHERE name = 'filesystemio_options'",
        ),
        (
            "query",
            "SELECT 'racperf:check:disk_asynch_io:' || UPPER(value) FROM v$parameter WHERE name = 'disk_asynch_io'",
        ),
        ("query", "SELECT 'racperf:check:async_datafiles:' || " + _ASYNC_COUNT[len("SELECT ") :]),
        (
            "query",
            "SELECT 'racperf:check:sync_datafiles:' || COUNT(*) FROM v$datafile f, v$iostat_file i\n"
            " WHERE f.file# = i.file_no AND i.filetype_name = 'Data File' AND i.asynch_io = 'ASYNC_OFF'",
        ),
        ("query", "SELECT 'racperf:check:calibration_status:' || status FROM v$io_calibration_status"),
        ("query", "SELECT 'racperf:datafile:' || name FROM v$datafile ORDER BY file#"),
        # the disks of the disk groups holding datafiles; the _STAT views do not rediscover disks
        (
            "query",
            "SELECT DISTINCT 'racperf:asm_disk:' || d.path FROM v$asm_disk_stat d, v$asm_diskgroup_stat g\n"
            " WHERE d.group_number = g.group_number AND g.name IN\n"
            "  (SELECT UPPER(SUBSTR(name, 2, INSTR(name || '/', '/') - 2)) FROM v$datafile WHERE name LIKE '+%')",
        ),
        (
            "block",
            f"""DECLARE
  n NUMBER;
  v VARCHAR2(64);
BEGIN
  IF SYS_CONTEXT('USERENV', 'ISDBA') <> 'TRUE' THEN
    RAISE_APPLICATION_ERROR(-20001, 'racperf:refused:sysdba');
  END IF;
  SELECT UPPER(value) INTO v FROM v$parameter WHERE name = 'timed_statistics';
  IF v <> 'TRUE' THEN RAISE_APPLICATION_ERROR(-20002, 'racperf:refused:timed_statistics'); END IF;
  {_ASYNC_COUNT.replace("SELECT COUNT(*)", "SELECT COUNT(*) INTO n")};
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
END;""",
        ),
        ("query", "SELECT 'racperf:calibrate:start:' || TO_CHAR(SYSTIMESTAMP, 'YYYY-MM-DD HH24:MI:SS') FROM dual"),
        (
            "block",
            f"""DECLARE
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
END;""",
        ),
        ("heading", "ON"),
        (
            "query",
            # a four-digit year: Oracle's own examples' 'DD-MON-YYY' prints 2026 as 026
            "SELECT TO_CHAR(start_time, 'YYYY-MM-DD HH24:MI:SS') start_time, "
            "TO_CHAR(end_time, 'YYYY-MM-DD HH24:MI:SS') end_time,\n"
            "       max_iops, max_mbps, max_pmbps, latency, num_physical_disks AS disks FROM dba_rsrc_io_calibrate",
        ),
    ]


#: the second session's one question, asked every status_interval_s
STATUS_STATEMENTS: list[Statement] = [
    (
        "query",
        "SELECT 'racperf:status:' || status || '|' || TO_CHAR(calibration_time, 'YYYY-MM-DD HH24:MI:SS') "
        "FROM v$io_calibration_status",
    )
]


def sqlplus_script(session: list[Statement]) -> str:
    """The statements as sqlplus reads them on stdin: settings first, a query ending with
    ";", a block with a "/" line, EXIT at the end."""
    lines = [
        "WHENEVER SQLERROR EXIT SQL.SQLCODE",
        "WHENEVER OSERROR EXIT FAILURE",
        "SET SERVEROUTPUT ON SIZE UNLIMITED",
        # a row wider than the line wraps: V$DATAFILE.NAME is up to 513 characters
        "SET LINESIZE 32767 FEEDBACK OFF VERIFY OFF TRIMOUT ON TRIMSPOOL ON TAB OFF",
        # no headings, no page breaks between the rows of racperf's own lines
        "SET HEADING OFF PAGESIZE 0",
    ]
    for kind, text in session:
        if kind == "heading":
            lines.append(f"SET HEADING {text} PAGESIZE {100 if text == 'ON' else 0}")
        elif kind == "block":
            lines += [text, "/"]
        else:
            lines.append(text + ";")
    lines.append("EXIT")
    return "\n".join(lines) + "\n"


def sql_script(cfg: CalibrateIoConfig) -> str:
    """The calibration session as sqlplus reads it."""
    return sqlplus_script(statements(cfg))


def oracledb_available() -> bool:
    return importlib.util.find_spec("oracledb") is not None


#: the system's part of sqlplus's PATH on another node (its own PATH is not known here)
NODE_SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


def aio_problem(root: Path = Path("/")) -> str | None:
    """Why the host's asynchronous I/O slots would fail a calibration, or None."""
    try:
        text = (
            read_regular_text_bounded(root / "proc/sys/fs/aio-nr")
            + "\n"
            + read_regular_text_bounded(root / "proc/sys/fs/aio-max-nr")
        )
    except OSError:
        return None
    return aio_problem_of(text)


def aio_problem_of(text: str) -> str | None:
    """:func:`aio_problem` from the text of aio-nr then aio-max-nr (a node's ``cat`` of both)."""
    try:
        used, limit = (int(word) for word in text.split()[:2])
    except ValueError:
        return None
    if limit - used < AIO_SLOTS_NEEDED:
        return f"aio-nr {used} of aio-max-nr {limit} ({limit - used} free): {CHECK_FIXES['aio']}"
    return None


# --------------------------------------------------------------------------- devices
def _read_first_line(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline(256).strip()
    except OSError:
        return ""


def _resolve_in_root(path: str, root: Path) -> Path | None:
    """``path`` (absolute, as the database names it) with its symlinks followed inside
    ``root`` (a link to /dev/dm-3 means ROOT/dev/dm-3); None when it does not exist there."""
    current = root / path.lstrip("/")
    for _ in range(40):
        if not os.path.lexists(current):
            return None
        if not current.is_symlink():
            return current
        target = os.readlink(current)
        current = (root / target.lstrip("/")) if target.startswith("/") else (current.parent / target)
        current = Path(os.path.normpath(current))
    return None


def _unescape_mountinfo(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _mountinfo(root: Path) -> list[str]:
    try:
        with open(root / "proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            return handle.readlines(4 << 20)
    except OSError:
        return []


def _mount_of(path: str, lines: list[str]) -> tuple[str, str] | None:
    """(major:minor, source) of the mount holding ``path``: the longest mount point that is
    a prefix of it in the lines of a mountinfo."""
    best: tuple[int, str, str] | None = None
    normal = os.path.normpath(path)
    for line in lines:
        fields = line.split()
        if " - " not in line or len(fields) < 5:
            continue
        mount_point = _unescape_mountinfo(fields[4])
        after = line.split(" - ", 1)[1].split()
        inside = normal == mount_point or normal.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= best[0]):
            best = (len(mount_point), fields[2], _unescape_mountinfo(after[1]) if len(after) > 1 else "")
    return (best[1], best[2]) if best else None


def _block_name(root: Path, major_minor: str) -> str | None:
    link = root / "sys/dev/block" / major_minor
    try:
        return link.resolve(strict=True).name
    except OSError:
        return None


def _with_devices_below(name: str, root: Path, found: list[str], depth: int = 0) -> None:
    """``name``, the disk of a partition, and every device under a dm or md device
    (multipath over paths, LVM over multipath), each once."""
    if name in found or depth > 8:
        return
    found.append(name)
    entry = root / "sys/class/block" / name
    try:
        real = entry.resolve(strict=True)
    except OSError:
        return
    if (real / "partition").exists() and (real.parent / "dev").exists():
        _with_devices_below(real.parent.name, root, found, depth + 1)
    slaves = real / "slaves"
    if slaves.is_dir():
        for slave in sorted(p.name for p in slaves.iterdir()):
            _with_devices_below(slave, root, found, depth + 1)


def device_of(path: str, root: Path = Path("/"), mountinfo: list[str] | None = None) -> str | None:
    """The kernel name of the block device ``path`` is on (a device node: itself; a file:
    its mount's device), or None when this machine does not have it."""
    real = _resolve_in_root(path, root)
    if real is None:
        if not os.path.isdir(root / os.path.dirname(path).lstrip("/")):
            return None  # neither the file nor its directory: not this machine's path
    else:
        try:
            st = os.stat(real)
        except OSError:
            st = None
        if st is not None and stat.S_ISBLK(st.st_mode):
            return _block_name(root, f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
        if (root / "sys/class/block" / real.name).exists() and real.parent.name in ("dev", "mapper"):
            return real.name  # a recorded root: its device nodes are plain files
    mount = _mount_of(path, _mountinfo(root) if mountinfo is None else mountinfo)
    if mount is None:
        return None
    name = _block_name(root, mount[0])
    if name is None and mount[1].startswith("/dev/"):
        # btrfs and friends show an anonymous 0:N: the mount's source names the device
        source = _resolve_in_root(mount[1], root)
        name = source.name if source is not None and (root / "sys/class/block" / source.name).exists() else None
    return name


def devices_under(paths: Iterable[str], root: Path = Path("/")) -> tuple[list[str], list[str]]:
    """(kernel names of the devices under ``paths``, each followed by those below it;
    the paths that are on no device here), as iostat names them."""
    found: list[str] = []
    unresolved: list[str] = []
    mountinfo = _mountinfo(root)
    for path in list(dict.fromkeys(paths))[:MAX_PATHS]:
        if not path.startswith("/"):
            unresolved.append(path)  # +DATA/...: an ASM file, its disks are listed apart
            continue
        name = device_of(path, root, mountinfo)
        if name is None:
            unresolved.append(path)
        else:
            _with_devices_below(name, root, found)
    return found, unresolved


def paths_to_watch(checks: Mapping[str, Any]) -> list[str]:
    """The datafiles on file systems and the ASM disks: the paths whose devices carry the load."""
    datafiles = [p for p in checks.get("datafiles", []) if p.startswith("/")]
    return list(dict.fromkeys(datafiles + list(checks.get("asm_disks", []))))


# --------------------------------------------------------------------------- parsing
def _status_text(status: str, calibration_time: str, elapsed_s: float | None) -> str:
    parts = [f"V$IO_CALIBRATION_STATUS: {status}"]
    if elapsed_s is not None:
        minutes, seconds = divmod(int(elapsed_s), 60)
        parts.append(f"calibrating for {minutes}m{seconds:02d}s")
    if calibration_time:
        parts.append(f"last calibration {calibration_time}")
    return ", ".join(parts)


class CalibrateIoStreamParser:
    """sqlplus prints nothing while CALIBRATE_IO runs: a sample when the calibration starts
    (after the checks passed: with the devices under the datafiles), then one per answer of
    the second session (the ``status`` companion)."""

    def __init__(self, root: Path = Path("/"), clock: Any = time.monotonic) -> None:
        self.root = root
        self.clock = clock
        self.created = clock()
        self.started_at: float | None = None
        self.finished = False
        self.datafiles: list[str] = []
        self.asm_disks: list[str] = []
        self.devices: list[str] = []
        self.status = ""
        self.calibration_time = ""

    def _extra(self, **more: Any) -> dict[str, Any]:
        extra: dict[str, Any] = {"devices": list(self.devices)}
        if self.started_at is not None:  # the paths the devices were found under (the live panel)
            extra["datafiles"] = list(self.datafiles)
            extra["asm_disks"] = list(self.asm_disks)
        if self.status:
            extra["status"] = self.status
        if self.calibration_time:
            extra["calibration_time"] = self.calibration_time
        extra.update(more)
        return extra

    def _elapsed(self) -> float | None:
        return None if self.started_at is None else round(self.clock() - self.started_at, 1)

    def feed(self, line: str) -> list[Sample]:
        text = line.strip()
        path = _PATH_RE.match(text)
        if path:
            paths = self.datafiles if path["kind"] == "datafile" else self.asm_disks
            if len(paths) < MAX_PATHS:
                paths.append(path["path"].strip())
            return []
        if text.startswith("racperf:calibrate:start:"):
            self.started_at = self.clock()
            self.devices, _ = devices_under(paths_to_watch(self._paths()), self.root)
            self.status = "IN PROGRESS"
            return [
                Sample(
                    t=self.started_at - self.created,
                    metrics={"elapsed_s": 0.0, "in_progress": 1.0},
                    extra=self._extra(phase="calibrating", job_states="CALIBRATE_IO started"),
                )
            ]
        if self.started_at is not None and not self.finished and _OUTPUT_RE.match(text):
            self.finished = True
        return []

    def _paths(self) -> dict[str, list[str]]:
        return {"datafiles": self.datafiles, "asm_disks": self.asm_disks}

    def companion_output(self, name: str, output: str, exit_status: int) -> list[Sample]:
        """The second session's answer: a Sample while the calibration runs."""
        if self.started_at is None or self.finished:
            return []  # the checks are still running, or the figures are in
        found = None
        for raw in output.splitlines()[:1000]:
            found = _STATUS_RE.match(raw.strip()) or found
        now = self.clock()
        elapsed = self._elapsed()
        if found is None:
            error = _ORA_RE.search(output)
            why = f"{error['code']}: {error['text'].strip()}" if error else f"no answer (exit status {exit_status})"
            return [
                Sample(
                    t=now - self.created,
                    metrics={"elapsed_s": elapsed or 0.0},
                    extra=self._extra(job_states=f"V$IO_CALIBRATION_STATUS unreadable: {why}"),
                )
            ]
        self.status = found["status"].strip()
        self.calibration_time = found["time"].strip()
        return [
            Sample(
                t=now - self.created,
                metrics={"elapsed_s": elapsed or 0.0, "in_progress": 1.0 if self.status == "IN PROGRESS" else 0.0},
                extra=self._extra(job_states=_status_text(self.status, self.calibration_time, elapsed)),
            )
        ]

    def finish(self) -> list[Sample]:
        return []


def parse_output(text: str) -> dict[str, Any]:
    """sqlplus output of a calibration (or of the DBA_RSRC_IO_CALIBRATE query alone) -> result.
    OutputParseError when it holds neither figures nor an error."""
    result: dict[str, Any] = {"tool": name}
    checks: dict[str, str] = {}
    paths: dict[str, list[str]] = {"datafiles": [], "asm_disks": []}
    for raw in text.splitlines()[:100_000]:
        line = raw.strip()
        if len(line) > 4096:
            continue
        check = _CHECK_RE.match(line)
        if check:
            checks[check["name"]] = check["value"].strip()
            continue
        path = _PATH_RE.match(line)
        if path:
            paths["datafiles" if path["kind"] == "datafile" else "asm_disks"].append(path["path"].strip())
            continue
        figure = _OUTPUT_RE.match(line)
        if figure:
            key = {"latency": "latency_ms"}.get(figure["key"], figure["key"])
            value = float(figure["value"])
            result[key] = int(value) if key != "latency_ms" and value.is_integer() else value
            continue
    table = read_table(text.splitlines()[:100_000])
    for key, printed in table.figures.items():
        result.setdefault(key, printed)  # DBMS_OUTPUT's figures are not rounded: they win
    if table.warnings:
        result["warnings"] = table.warnings
    if checks:
        result["checks"] = checks
    for key, found in paths.items():
        if found:
            result[key] = list(dict.fromkeys(found))
    refused = _REFUSED_RE.search(text)
    error = _ORA_RE.search(text)
    session_error = _SESSION_ERROR_RE.search(text)
    if session_error:
        result["error"] = session_error["text"].strip()
    elif refused:
        result["error"] = f"{refused['name']}: {_refusal(refused['name'], checks)}"
    elif error:
        code = error["code"]
        fix = ORA_FIXES.get(code)
        result["error"] = f"{code}: {error['text'].strip()}" + (f" ({fix})" if fix else "")
    if not any(k in result for k in ("max_iops", "max_mbps", "error")):
        if table.no_rows:
            raise OutputParseError(
                "DBA_RSRC_IO_CALIBRATE: no rows selected (no calibration has completed in this database)"
            )
        raise OutputParseError(
            "no CALIBRATE_IO figures (max_iops = ..., DBA_RSRC_IO_CALIBRATE row) and no ORA- error in the output"
        )
    return result


def _refusal(check: str, checks: Mapping[str, str]) -> str:
    """A refused precondition's fix, with the values that explain it."""
    fix = CHECK_FIXES.get(check, "a precondition failed")
    if check == "async_datafiles":
        said = [f"{key}={checks[key]}" for key in ("filesystemio_options", "disk_asynch_io") if checks.get(key)]
        if said:
            fix += f" (now {', '.join(said)})"
    return fix


class CalibrateIoTool:
    """The CALIBRATE_IO tool. It names no targets: the database reads its own datafiles (it
    only reads: CALIBRATE_IO issues random small and large reads)."""

    name = name
    install_hint = install_hint
    description = DESCRIPTION
    merge_stderr = True
    stop_grace_s = 10.0

    def __init__(self, root: Path = Path("/")) -> None:
        #: where the host's /proc and /sys are read (a recorded machine in tests)
        self.root = root

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
        """The calibration on ``host`` (this machine when None): its sqlplus looked for there."""
        cfg = _config(config)
        if cfg.connect:
            return self._oracledb_invocation(cfg)
        sqlplus = cfg.sqlplus_path()
        if on_another_node(host):
            try:
                found = host.run_briefly(["sh", "-c", '[ -f "$1" ] && [ -x "$1" ]', "racperf-sqlplus", sqlplus], 30.0)
            except OSError as exc:
                raise ToolNotFound(f"calibrate_io: cannot look for {sqlplus} on {host.name}: {exc}") from None
            if found.returncode != 0:
                raise ToolNotFound(
                    f"calibrate_io: {sqlplus} not found or not executable on {host.name}; {install_hint}"
                )
        elif not os.access(sqlplus, os.X_OK):
            raise ToolNotFound(f"calibrate_io: {sqlplus} not found or not executable; {install_hint}")
        home = cfg.oracle_home
        # this machine's PATH and LD_LIBRARY_PATH are not a node's: there, the home's and the
        # system's directories only
        remote = on_another_node(host)
        library_path = "" if remote else os.environ.get("LD_LIBRARY_PATH", "")
        path = NODE_SYSTEM_PATH if remote else os.environ.get("PATH", "")
        env = {
            "ORACLE_HOME": home,
            "ORACLE_SID": cfg.sid,
            "LD_LIBRARY_PATH": os.pathsep.join(p for p in (os.path.join(home, "lib"), library_path) if p),
            "PATH": os.pathsep.join((os.path.join(home, "bin"), path)),
        }
        argv = [sqlplus, "-S", "-L", "/ as sysdba"]
        return Invocation(
            argv=argv,
            env=env,
            cwd=".",
            stdin=sql_script(cfg),
            hard_limit_s=2.0 * cfg.duration_estimate_s + 60.0,
            notes=(
                f"calibrating instance {cfg.sid} ({cfg.num_physical_disks} disks, max_latency {cfg.max_latency} ms)",
            ),
            companions=(self._status_companion(argv, sqlplus_script(STATUS_STATEMENTS), cfg),),
        )

    def _oracledb_invocation(self, cfg: CalibrateIoConfig) -> Invocation:
        if not oracledb_available():
            raise ToolNotFound(
                "calibrate_io: connect needs python-oracledb, which is not installed "
                "(pip install 'racperf_tui[oracle]', or pip install oracledb); without connect, sqlplus is used"
            )
        argv = isolated_module_argv(ORACLEDB_SESSION_MODULE, "--connect", cfg.connect, "--user", cfg.user)
        return Invocation(
            argv=argv,
            cwd=".",
            stdin=json.dumps(statements(cfg)),
            hard_limit_s=2.0 * cfg.duration_estimate_s + 60.0,
            notes=(
                f"calibrating the database at {cfg.connect} as {cfg.user} AS SYSDBA through python-oracledb "
                f"({cfg.num_physical_disks} disks, max_latency {cfg.max_latency} ms)",
            ),
            companions=(self._status_companion(argv, json.dumps(STATUS_STATEMENTS), cfg),),
        )

    @staticmethod
    def _status_companion(argv: list[str], stdin: str, cfg: CalibrateIoConfig) -> Companion:
        return Companion(
            name="status",
            argv=list(argv),
            stdin=stdin,
            interval_s=cfg.status_interval_s,
            timeout_s=max(30.0, 3 * cfg.status_interval_s),
            first_after_s=min(cfg.status_interval_s, 2.0),
        )

    def prepare(self, config: Mapping[str, Any], planned: Invocation, host: Host | None = None) -> None:
        """The asynchronous I/O slots of the host the calibration runs on (here: under
        ``root``; on a node: its /proc, read there)."""
        if not on_another_node(host):
            problem = aio_problem(self.root)
        else:
            answer = host.run_briefly(["cat", "/proc/sys/fs/aio-nr", "/proc/sys/fs/aio-max-nr"], 10.0)
            problem = aio_problem_of(answer.stdout) if answer.returncode == 0 else None
        if problem:
            where = f" on {host.name}" if on_another_node(host) else ""
            raise ValueError(f"calibrate_io{where}: {problem}")

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        return self.invocation(config).argv

    def stream_parser(self, config: Mapping[str, Any]) -> CalibrateIoStreamParser:
        return CalibrateIoStreamParser(self.root)

    def parse_result(self, output: str) -> dict[str, Any]:
        """The output's result, with the devices under its datafiles on this machine."""
        result = parse_output(output)
        paths = paths_to_watch(result)
        if paths:
            result["devices"], unresolved = devices_under(paths, self.root)
            if unresolved:
                result["devices_unresolved"] = unresolved
        return result

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        if result is None:
            return False, f"no CALIBRATE_IO output could be read (session exit status {exit_status})"
        if result.get("error"):
            return False, str(result["error"])
        if exit_status != 0:
            return False, f"the session exited with status {exit_status} (an ORA- error's number mod 256)"
        if not result.get("max_iops"):
            return False, "CALIBRATE_IO printed no max_iops"
        return True, "ok"

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        return 2.0 * _config(config).duration_estimate_s + 60.0

    def tool_version(self, argv: list[str], host: Host | None = None) -> str | None:
        return None


TOOL = CalibrateIoTool()
