"""DBA_RSRC_IO_CALIBRATE read by its header, as SQL*Plus and racperf's oracledb session print
it: any column set and order, prompts and echoed queries, wrapped records, NULLs, decimals,
the three-digit year of 'DD-MON-YYY' named."""

from __future__ import annotations

import pytest

from racperf_tui.tools import calibrate_io
from racperf_tui.tools.calibrate_io.rsrc_table import read_table
from racperf_tui.tools.figures import OutputParseError

#: 19c, linesize 80: a record of 8 columns wraps over two lines, its header and dashes too
WRAPPED_19C = f"""\
SQL> SELECT start_time, end_time, max_iops, max_mbps, max_pmbps, latency, num_physical_disks,
  2  additional_info FROM dba_rsrc_io_calibrate;

START_TIME                                                                  END_TIME
{"-" * 75} {"-" * 75}
  MAX_IOPS   MAX_MBPS  MAX_PMBPS    LATENCY NUM_PHYSICAL_DISKS ADDITIONAL_INFO
---------- ---------- ---------- ---------- ------------------ ----------------------------------------
01-DEC-26 02.14.07.123456 PM                                               01-DEC-26 02.23.41.654321 PM
     21453       1890        940     10.868                  4 io_calibrate_stats v2


SQL> exit
"""


def test_a_wrapped_19c_record_with_a_prompt_the_echoed_query_and_additional_info() -> None:
    result = calibrate_io.parse_output(WRAPPED_19C)
    assert result == {
        "tool": "calibrate_io",
        "start_time": "01-DEC-26 02.14.07.123456 PM",
        "start_iso": "2026-12-01T14:14:07",
        "end_time": "01-DEC-26 02.23.41.654321 PM",
        "end_iso": "2026-12-01T14:23:41",
        "max_iops": 21453,
        "max_mbps": 1890,
        "max_pmbps": 940,
        "latency_ms": 10.868,
        "num_physical_disks": 4,
        "additional_info": "io_calibrate_stats v2",
    }


def test_a_few_columns_in_another_order_under_a_user_prompt() -> None:
    text = (
        "RACPERF@orcl1> select latency, max_mbps, max_iops from dba_rsrc_io_calibrate;\n\n"
        "   LATENCY   MAX_MBPS   MAX_IOPS\n---------- ---------- ----------\n        .5       1890   1.3E+04\n"
        "1 row selected.\n\n"
        "Elapsed: 00:00:00.01\n"
    )
    assert calibrate_io.parse_output(text) == {
        "tool": "calibrate_io",
        "latency_ms": 0.5,
        "max_mbps": 1890,
        "max_iops": 13000,
    }


def test_a_null_column_is_read_by_its_place_and_left_out() -> None:
    text = (
        "START_TIME             END_TIME                 MAX_IOPS   MAX_MBPS  MAX_PMBPS    LATENCY      DISKS\n"
        "---------------------- ---------------------- ---------- ---------- ---------- ---------- ----------\n"
        "2026-12-01 14:14:07    2026-12-01 14:23:41         21453       1890                   9          2\n"
    )
    table = read_table(text.splitlines())
    assert table.figures == {
        "start_time": "2026-12-01 14:14:07",
        "start_iso": "2026-12-01T14:14:07",
        "end_time": "2026-12-01 14:23:41",
        "end_iso": "2026-12-01T14:23:41",
        "max_iops": 21453,
        "max_mbps": 1890,
        "latency_ms": 9,
        "num_physical_disks": 2,
    }
    assert table.warnings == []


def test_racperf_oracledb_session_layout() -> None:
    text = (
        "START_TIME END_TIME MAX_IOPS MAX_MBPS MAX_PMBPS LATENCY DISKS\n"
        "2026-12-01 14:14:07 2026-12-01 14:23:41 21453 1890 940 10.868 4\n"
    )
    result = calibrate_io.parse_output(text)
    assert (result["start_iso"], result["max_pmbps"], result["latency_ms"], result["num_physical_disks"]) == (
        "2026-12-01T14:14:07",
        940,
        10.868,
        4,
    )


def test_the_three_digit_year_is_named() -> None:
    text = (
        "START_TIME             END_TIME                 MAX_IOPS   MAX_MBPS\n"
        "---------------------- ---------------------- ---------- ----------\n"
        "01-DEC-026 14:14:07    01-DEC-026 14:23:41         21453       1890\n"
    )
    result = calibrate_io.parse_output(text)
    assert (result["start_time"], result["start_iso"], result["end_iso"]) == (
        "01-DEC-026 14:14:07",
        "2026-12-01T14:14:07",
        "2026-12-01T14:23:41",
    )
    assert result["warnings"][0] == (
        "line 3: START_TIME '01-DEC-026 14:14:07' has a three-digit year (TO_CHAR 'DD-MON-YYY' prints the "
        "last three digits of the year): read as 2026; racperf's own query asks for YYYY-MM-DD"
    )


def test_a_month_in_another_language_and_a_row_that_fits_nothing_are_named() -> None:
    text = (
        "START_TIME               MAX_IOPS\n------------------------ ----------\n01-MAI-2026 10:00:00         21453\n\n"
        "  MAX_IOPS   MAX_MBPS\n---------- ----------\n     21453 lots\n"
    )
    table = read_table(text.splitlines())
    assert table.figures == {"start_time": "01-MAI-2026 10:00:00", "max_iops": 21453}
    assert table.warnings == [
        "line 3: START_TIME '01-MAI-2026 10:00:00': month 'MAI' is not English (NLS_DATE_LANGUAGE): kept as printed",
        "line 7: a DBA_RSRC_IO_CALIBRATE row that does not fit its header (MAX_IOPS MAX_MBPS): skipped",
    ]


def test_no_rows_selected_says_no_calibration_completed() -> None:
    with pytest.raises(OutputParseError, match="no rows selected \\(no calibration has completed"):
        calibrate_io.parse_output("SQL> select * from dba_rsrc_io_calibrate;\n\nno rows selected\n\nSQL> exit\n")


def test_racperf_asks_for_a_four_digit_year() -> None:
    config = calibrate_io._config({"sid": "ORCL", "oracle_home": "/u01/app/oracle/product/19.0.0/dbhome_1"})
    query = next(sql for _kind, sql in calibrate_io.statements(config) if "dba_rsrc_io_calibrate" in sql)
    assert "TO_CHAR(start_time, 'YYYY-MM-DD HH24:MI:SS')" in query and "YYY " not in query.replace("YYYY", "")


def test_a_1_mb_figure_and_100_000_headers_are_read_in_linear_time() -> None:
    text = "  MAX_IOPS\n----------\n" + "1" * 1_000_000 + "\n" + "MAX_IOPS\n" * 100_000
    table = read_table(text.splitlines())
    assert table.figures == {}
    assert table.warnings == ["line 3: a DBA_RSRC_IO_CALIBRATE row that does not fit its header (MAX_IOPS): skipped"]
