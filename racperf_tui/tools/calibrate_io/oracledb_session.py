"""``python -m racperf_tui.tools.calibrate_io.oracledb_session --connect DSN --user USER``: the
CALIBRATE_IO session through python-oracledb (thin mode, ``AUTH_MODE_SYSDBA``), printing what
sqlplus prints for the same statements, so one parser reads both.

Standard input: the session's statements as JSON (``[["query", SQL], ["block", PLSQL],
["heading", "ON"], ...]``, :func:`racperf_tui.tools.calibrate_io.statements`). The password is
read from $RACPERF_ORACLE_PASSWORD, never from the command line (which ``ps`` shows) or the
config (which the run records). A query prints its rows (columns joined by spaces; with
``heading ON`` a line of column names first), a block its DBMS_OUTPUT lines. The first error
ends the session the way ``WHENEVER SQLERROR EXIT SQL.SQLCODE`` ends sqlplus: ``ERROR at line
1:`` and the ``ORA-NNNNN: text`` line, exit status the number mod 256; an error of the driver
itself (``DPY-NNNN``: no listener, no password) names the connect string, exit status 1. No
traceback, whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from racperf_tui.tools.calibrate_io import PASSWORD_ENV

try:
    import oracledb
except ImportError:  # an optional dependency: the extra "oracle"
    oracledb = None  # type: ignore[assignment]

#: the DBMS_OUTPUT lines fetched per call after a block
_LINES_PER_FETCH = 100


def _out(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _error_code(error: Any) -> tuple[str, int]:
    """("ORA-56708", 56708) or ("DPY-6005", 6005) of a python-oracledb error."""
    detail = error.args[0] if error.args else None
    full = getattr(detail, "full_code", "") or ""
    code = getattr(detail, "code", 0) or 0
    if not full:
        text = str(error)
        full = text.split(":", 1)[0] if text[:4] in ("ORA-", "DPY-") else "DPY-0000"
    return full, int(code) if str(code).isdigit() else 0


def _print_rows(cursor: Any, heading: bool) -> None:
    if heading and cursor.description:
        _out(" ".join(column[0] for column in cursor.description))
    for row in cursor:
        _out(" ".join("" if value is None else str(value) for value in row))


def _print_dbms_output(cursor: Any) -> None:
    lines = cursor.arrayvar(str, _LINES_PER_FETCH)
    count = cursor.var(int)
    while True:
        cursor.callproc("dbms_output.get_lines", (lines, count))
        got = count.getvalue() or 0
        for line in lines.getvalue()[:got]:
            _out("" if line is None else line)
        if got < _LINES_PER_FETCH:
            return


def run_session(statements: list[list[str]], connect: str, user: str, password: str | None) -> int:
    """Run the statements; the exit status sqlplus would give."""
    if oracledb is None:
        _out(
            "racperf: python-oracledb is not installed (pip install 'racperf_tui[oracle]', or pip install oracledb); "
            "without connect, racperf runs sqlplus"
        )
        return 1
    where = f"(connect string {connect}, user {user} AS SYSDBA)"
    try:
        connection = oracledb.connect(
            user=user, password=password, dsn=connect, mode=oracledb.AUTH_MODE_SYSDBA, tcp_connect_timeout=10
        )
    except oracledb.Error as error:
        code, number = _error_code(error)
        _out("ERROR:")
        _out(f"{_one_line(error)} {where}")
        return number % 256 if code.startswith("ORA-") and number % 256 else 1
    heading = False
    try:
        with connection.cursor() as cursor:
            cursor.callproc("dbms_output.enable", (None,))
            for kind, text in statements:
                if kind == "heading":
                    heading = text.upper() == "ON"
                    continue
                try:
                    cursor.execute(text)
                    if kind == "query":
                        _print_rows(cursor, heading)
                    else:
                        _print_dbms_output(cursor)
                except oracledb.Error as error:
                    code, number = _error_code(error)
                    _out("ERROR at line 1:")
                    _out(_one_line(error) if code.startswith("ORA-") else f"{_one_line(error)} {where}")
                    return number % 256 if code.startswith("ORA-") and number % 256 else 1
    finally:
        try:
            connection.close()
        except oracledb.Error:
            pass
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__name__}", description="One CALIBRATE_IO session through python-oracledb."
    )
    parser.add_argument("--connect", required=True, help="host:port/service or a TNS alias")
    parser.add_argument("--user", default="sys", help="a SYSDBA user (default sys)")
    args = parser.parse_args(argv)
    try:
        statements = json.loads(sys.stdin.read(4 << 20) or "[]")
        if not isinstance(statements, list) or not all(
            isinstance(s, list) and len(s) == 2 and all(isinstance(p, str) for p in s) for s in statements
        ):
            raise ValueError("not a list of [kind, text] pairs")
    except ValueError as error:
        _out(f"racperf: the statements on standard input are not valid: {error}")
        return 1
    try:
        return run_session(statements, args.connect, args.user, os.environ.get(PASSWORD_ENV))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
