"""ORION's result laid out for the result view and the CSV export, on the 11.1.0.7 matrices
(latency printed in ms) and on a failed run's result."""

from __future__ import annotations

from racperf_tui.tools import orion
from racperf_tui.tools.orion.maxima import DATA_POINT_COLUMNS, data_point_rows
from racperf_tui.tools.orion.result_sections import result_sections
from tests.helpers import FIXTURES


def test_the_11_1_matrices_are_tables_in_microseconds_and_data_points() -> None:
    result = orion.parse_path(FIXTURES / "orion" / "11.1.0.7")
    tables = {table.key: table for table in result_sections(result)}
    # lat.csv says 0.43 (ms, 11.1): the table says µs, like every later release
    assert tables["lat"].title.startswith("small-I/O latency (µs)")
    assert tables["lat"].cells() == [["0", "430.0", "450.0", "550.0", "670.0", "800.0"]]
    assert tables["iops"].cells() == [["0", "2302", "4398", "5450", "6006", "6210"]]
    assert [spec.heading for spec in tables["iops"].columns] == ["1", "2", "3", "4", "5"]
    assert tables["mbps"].cells() == [["1", "271.6"], ["2", "374.3"]]
    assert tables["maxima"].rows == ()  # the matrices only: no summary said a maximum
    rows = data_point_rows(result)
    assert DATA_POINT_COLUMNS == ("small_outstanding", "large_outstanding", "iops", "mbps", "latency_us")
    assert rows[0] == (1, 0, 2302.0, None, 430.0) and rows[-2:] == [
        (0, 1, None, 271.58, None),
        (0, 2, None, 374.26, None),
    ]
    assert len(rows) == 7
    assert orion.TOOL.description.result_notes(result) == [
        "latency: ORION printed ms (guessed from the values (no version known)), shown here in µs"
    ]


def test_a_failed_run_has_empty_tables_and_no_data_points() -> None:
    failed = {"tool": "orion", "error": "ORION could not open its .lun file"}
    assert all(table.rows == () for table in result_sections(failed))
    assert data_point_rows(failed) == [] and orion.TOOL.description.data_points(failed) is None
    assert orion.TOOL.description.result_notes(failed) == []
