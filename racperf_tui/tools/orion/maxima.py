"""Where ORION reached each of its maxima, and the latency there: the summary's maximum with
its data point (small and large I/O loads), read in the result's matrices; the matrices as
tables and as data points (one per cell measured). Read by the result view
(tools/orion/result_sections.py), ``racperf report`` and ``racperf runs export``.

ORION's summary says the maximum (``max_small_iops``, ``max_large_mbps``, ``min_small_latency_us``)
and the point it was reached at (``..._at``: ``{"small": N, "large": M}``); the latency at that
point is the cell of its ``lat`` matrix (µs, as the result parser converts it), and the IOPS
and MB/s there are the ``iops`` and ``mbps`` matrices' cells.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from racperf_tui.core.contract.tool import MetricSpec

#: (the figure, its point, what it is, its unit)
MAXIMA = (
    ("max_small_iops", "max_small_iops_at", "highest small-I/O IOPS", "IOPS"),
    ("max_large_mbps", "max_large_mbps_at", "highest large-I/O MB/s", "MB/s"),
    ("min_small_latency_us", "min_small_latency_at", "lowest small-I/O latency", "µs"),
)
#: decimals a maximum is said with, by its unit (ORION prints latency to the hundredth of a µs)
DECIMALS = {"IOPS": 0, "MB/s": 1, "µs": 2}

#: the maxima as ORION's declared result figures (``ToolDescription.results``): the first is the
#: runs list's figure; a comparison's rows and the criteria read them all. A minimum is better
#: lower, a maximum higher
RESULTS = tuple(
    MetricSpec(key, label, unit, decimals=DECIMALS[unit], better="lower" if key.startswith("min_") else "higher")
    for key, _at, label, unit in MAXIMA
)


@dataclass(frozen=True)
class OrionMaximum:
    label: str
    value: float
    unit: str
    small: int | None
    large: int | None
    latency_us: float | None
    iops: float | None
    mbps: float | None


def orion_maxima(result: Mapping[str, Any] | None) -> list[OrionMaximum]:
    """Each maximum the result has, with its point and the matrices' figures there ([] for a
    result that is not ORION's)."""
    result = result or {}
    out = []
    for key, at_key, label, unit in MAXIMA:
        value = result.get(key)
        if not _number(value):
            continue
        found = result.get(at_key)
        at: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        small, large = at.get("small"), at.get("large")
        out.append(
            OrionMaximum(
                label,
                float(value),
                unit,
                small if isinstance(small, int) else None,
                large if isinstance(large, int) else None,
                _cell(result.get("lat"), small, large),
                _cell(result.get("iops"), small, large),
                _cell(result.get("mbps"), small, large),
            )
        )
    return out


def _cell(matrix: Any, small: Any, large: Any) -> float | None:
    """The matrix's value at (small, large): its rows are large loads, its columns small ones."""
    if not isinstance(matrix, Mapping) or not isinstance(small, int) or not isinstance(large, int):
        return None
    smalls, larges, values = matrix.get("small_loads"), matrix.get("large_loads"), matrix.get("values")
    if not isinstance(smalls, list) or not isinstance(larges, list) or not isinstance(values, list):
        return None
    if small not in smalls or large not in larges:
        return None
    row = values[larges.index(large)] if larges.index(large) < len(values) else None
    column = smalls.index(small)
    value = row[column] if isinstance(row, list) and column < len(row) else None
    return float(value) if _number(value) else None


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: ORION's matrices (the result's ``iops``, ``mbps``, ``lat``), their titles, units, decimals
MATRICES = (
    ("iops", "small-I/O IOPS", "IOPS", 0),
    ("mbps", "large-I/O MB/s", "MB/s", 1),
    ("lat", "small-I/O latency", "µs", 1),
)


@dataclass(frozen=True)
class OrionMatrix:
    """One of ORION's matrices as a table: a row per large-I/O load, a column per small-I/O
    load (outstanding I/Os), None where the data point was not run."""

    key: str
    title: str
    unit: str
    decimals: int
    small_loads: list[int]
    large_loads: list[int]
    values: list[list[float | None]]


def orion_matrices(result: Mapping[str, Any] | None) -> list[OrionMatrix]:
    """The matrices the result has, each whole ([] for a result that is not ORION's)."""
    out = []
    for key, title, unit, decimals in MATRICES:
        matrix = (result or {}).get(key)
        if not isinstance(matrix, Mapping):
            continue
        smalls, larges, values = matrix.get("small_loads"), matrix.get("large_loads"), matrix.get("values")
        if not isinstance(smalls, list) or not isinstance(larges, list) or not isinstance(values, list):
            continue
        rows = [
            [float(v) if _number(v) else None for v in (row if isinstance(row, list) else [])][: len(smalls)]
            for row in values[: len(larges)]
        ]
        out.append(OrionMatrix(key, title, unit, decimals, smalls, larges, rows))
    return out


@dataclass(frozen=True)
class OrionDataPoint:
    """One data point ORION measured: its loads (outstanding small and large I/Os) and the
    matrices' figures there (None where a matrix has no value for it)."""

    small: int
    large: int
    iops: float | None
    mbps: float | None
    latency_us: float | None


def orion_data_points(result: Mapping[str, Any] | None) -> list[OrionDataPoint]:
    """Every (small, large) load that any matrix has a value at, by large load then small."""
    figures: dict[tuple[int, int], dict[str, float]] = {}
    for matrix in orion_matrices(result):
        for large, row in zip(matrix.large_loads, matrix.values):
            for small, value in zip(matrix.small_loads, row):
                if value is not None:
                    figures.setdefault((large, small), {})[matrix.key] = value
    return [
        OrionDataPoint(small, large, cell.get("iops"), cell.get("mbps"), cell.get("lat"))
        for (large, small), cell in sorted(figures.items())
    ]


#: the data points' columns in an export (the loads in outstanding I/Os; latency in µs)
DATA_POINT_COLUMNS = ("small_outstanding", "large_outstanding", "iops", "mbps", "latency_us")


def data_point_rows(result: Mapping[str, Any] | None) -> list[tuple[Any, ...]]:
    """The data points as rows of :data:`DATA_POINT_COLUMNS`."""
    return [(p.small, p.large, p.iops, p.mbps, p.latency_us) for p in orion_data_points(result)]
