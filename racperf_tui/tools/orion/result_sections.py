"""ORION's result laid out for the result view (``OrionDescription.result_sections``): in
Summary each maximum with the data point it was reached at and the figures there, the small
I/Os' latency lines and the test's settings, labelled with their units; in Details the matrices
as tables (a row per large load, a column per small load), the latency histogram and the LUNs.
No raw key and no Python list reaches the view."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from racperf_tui.core.contract.tool import MetricSpec, ResultTable, figure_table
from racperf_tui.tools.orion.maxima import DECIMALS, orion_matrices, orion_maxima

#: the maxima table's columns after its figure (each maximum has its own unit: said in the cell)
_FIGURE = MetricSpec("value", "figure")
_SMALL = MetricSpec("small", "at small", decimals=0)
_LARGE = MetricSpec("large", "at large", decimals=0)
_LATENCY = MetricSpec("latency_us", "latency", "µs", decimals=1)
_IOPS = MetricSpec("iops", "IOPS", "IOPS", decimals=0)
_MBPS = MetricSpec("mbps", "MB/s", "MB/s", decimals=1)
#: (result key, label) of the test's settings, in the order the Summary says them
_SETTINGS = (
    ("version", "ORION version"),
    ("testname", "test name"),
    ("run_stamp", "run stamp"),
    ("commandline", "ORION's options"),
    ("size_small_kb", "small I/O size (KB)"),
    ("size_large_kb", "large I/O size (KB)"),
    ("io_types", "I/O types"),
    ("simulate", "simulated array"),
    ("write_pct", "writes (%)"),
    ("cache_size", "array cache"),
    ("duration_s", "seconds per data point"),
    ("total_data_points", "data points"),
)
_LATENCY_COLUMNS = tuple(
    MetricSpec(key, label, "µs", decimals=1) for key, label in (("avg", "avg"), ("min", "min"), ("max", "max"))
) + (MetricSpec("stdev", "std dev", "µs", decimals=1), _SMALL, _LARGE)


def _figure(value: float, unit: str) -> str:
    decimals = DECIMALS.get(unit, 2)
    return f"{value:,.{decimals}f} {unit}"


def maxima_table(result: Mapping[str, Any]) -> ResultTable:
    """Each maximum ORION said, where it was reached, and the matrices' figures there."""
    rows = tuple(
        (
            (m.label,),
            (_figure(m.value, m.unit), m.small, m.large, m.latency_us, m.iops, m.mbps),
        )
        for m in orion_maxima(result)
    )
    title = "Maxima, the data point each was reached at (outstanding small and large I/Os) and the figures there"
    return ResultTable(title, ("",), (_FIGURE, _SMALL, _LARGE, _LATENCY, _IOPS, _MBPS), rows, key="maxima")


def latency_table(result: Mapping[str, Any]) -> ResultTable:
    """The small I/Os' latency lines ORION printed (11.2 on), each at its data point."""
    rows = []
    for line in result.get("latencies") or []:
        if not isinstance(line, Mapping):
            continue
        found = line.get("at")
        at: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        values = tuple(line.get(spec.key) for spec in _LATENCY_COLUMNS[:4]) + (at.get("small"), at.get("large"))
        rows.append(((f"small {line.get('kind', '?')}",), values))
    return ResultTable("Small I/O latency", ("",), _LATENCY_COLUMNS, tuple(rows), key="latency")


def settings_table(result: Mapping[str, Any]) -> ResultTable:
    rows = [(label, str(result[key])) for key, label in _SETTINGS if result.get(key) not in (None, "")]
    if "orion_estimate_s" in result:
        rows.append(("ORION's own estimate (min)", f"{float(result['orion_estimate_s']) / 60:g}"))
    return figure_table(rows, title="The test", key="settings")


def matrix_tables(result: Mapping[str, Any]) -> list[ResultTable]:
    """ORION's matrices as they are: a row per large load, a column per small load; a row
    with no value (a basic matrix's small-I/O row at large loads never run) left out."""
    tables = []
    for matrix in orion_matrices(result):
        columns = tuple(MetricSpec(f"s{small}", str(small), decimals=matrix.decimals) for small in matrix.small_loads)
        rows = tuple(
            ((str(large),), tuple(row))
            for large, row in zip(matrix.large_loads, matrix.values)
            if any(v is not None for v in row)
        )
        unit = "" if matrix.unit in matrix.title else f" ({matrix.unit})"
        title = f"{matrix.title}{unit}: large outstanding I/Os (rows) x small outstanding I/Os (columns)"
        tables.append(ResultTable(title, ("large \\ small",), columns, rows, tab="Details", key=matrix.key))
    return tables


def histogram_table(result: Mapping[str, Any]) -> ResultTable:
    found = result.get("histogram_at")
    at: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    columns = (
        MetricSpec("read", "reads", decimals=0),
        MetricSpec("read_cum_pct", "reads cum.", "%", decimals=2),
        MetricSpec("write", "writes", decimals=0),
        MetricSpec("write_cum_pct", "writes cum.", "%", decimals=2),
    )
    buckets = [row for row in result.get("histogram") or [] if isinstance(row, Mapping)]
    # from the first bucket holding an I/O to the last: ORION prints every bucket from 0 µs
    held = [i for i, row in enumerate(buckets) if row.get("read") or row.get("write")]
    buckets = buckets[held[0] : held[-1] + 1] if held else []
    rows = tuple(
        ((f"{row.get('low_us', '?')} - {row.get('high_us', '?')} µs",), tuple(row.get(spec.key) for spec in columns))
        for row in buckets
    )
    title = f"Latency histogram at small {at.get('small', '?')}, large {at.get('large', '?')} outstanding"
    return ResultTable(title, ("bucket",), columns, rows, tab="Details", key="histogram")


def luns_table(result: Mapping[str, Any]) -> ResultTable:
    rows = tuple(
        ((str(lun.get("name", "?")),), (lun["size_bytes"] / 2**30 if isinstance(lun.get("size_bytes"), int) else None,))
        for lun in result.get("luns") or []
        if isinstance(lun, Mapping)
    )
    return ResultTable(
        "LUNs", ("LUN",), (MetricSpec("size", "size", "GiB", decimals=1),), rows, tab="Details", key="luns"
    )


def result_sections(result: Mapping[str, Any]) -> list[ResultTable]:
    return [
        maxima_table(result),
        latency_table(result),
        settings_table(result),
        *matrix_tables(result),
        histogram_table(result),
        luns_table(result),
    ]


def result_notes(result: Mapping[str, Any]) -> list[str]:
    """Where the latency was converted to µs (ORION's own failure is the run's message)."""
    notes = []
    lat = result.get("lat")
    if isinstance(lat, Mapping) and lat.get("printed_unit") == "ms":
        notes.append(f"latency: ORION printed ms ({lat.get('unit_from', '')}), shown here in µs")
    return notes
