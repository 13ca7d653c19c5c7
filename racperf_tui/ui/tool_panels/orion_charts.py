"""ORION's figures against load, as charts and tables: the live points measured in diskstats
and a finished run's matrices (IOPS against small load, MB/s against large load, latency
against load), its latency histogram, and a heat table of a detailed matrix."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.widget import Widget
from textual.widgets import Label, Static

from racperf_tui.tools.orion.live import PointFigures
from racperf_tui.ui.widgets.chart import Chart, Series

#: the heat table's colours, from the smallest value of a matrix to its largest
HEAT = ("#1f3b73", "#2c6e8f", "#2f9e7a", "#9fbf3b", "#e0a526", "#d9542b")
#: at most this many lines on one chart (one per large load, or per small load)
MAX_LINES = 6


def _grouped(points: Sequence[tuple[float, float, float]], name: str) -> list[Series]:
    """(group, x, y) triples -> one line per group, x ascending; at most MAX_LINES groups."""
    groups: dict[float, list[tuple[float, float]]] = {}
    for group, x, y in points:
        if math.isfinite(y):
            groups.setdefault(group, []).append((x, y))
    out = []
    for group in sorted(groups)[:MAX_LINES]:
        pairs = sorted(groups[group])
        out.append(Series(f"{name}={group:g}", [p[0] for p in pairs], [p[1] for p in pairs]))
    return out


def live_point_series(points: Sequence[PointFigures]) -> tuple[list[Series], list[Series], list[Series]]:
    """(IOPS by small load, MB/s by large load, latency ms by small load) of the points done."""
    iops = _grouped([(p.large, p.small, p.figures.iops) for p in points if p.small], "large")
    mbps = _grouped([(p.small, p.large, p.figures.mbps) for p in points if p.large], "small")
    latency = _grouped([(p.large, p.small, p.figures.await_ms) for p in points if p.small], "large")
    return iops, mbps, latency


def matrix_series(matrix: Mapping[str, Any] | None, by: str, divisor: float = 1.0) -> list[Series]:
    """An ORION matrix (``values[i][j]`` at large_loads[i], small_loads[j]) as lines: by
    "small" (x = small load, a line per large load) or by "large" (x = large load, a line per
    small load); untested cells left out."""
    if not isinstance(matrix, Mapping):
        return []
    smalls, larges, values = matrix.get("small_loads") or [], matrix.get("large_loads") or [], matrix.get("values")
    if not isinstance(values, list):
        return []
    triples = []
    for i, large in enumerate(larges):
        row = values[i] if i < len(values) and isinstance(values[i], list) else []
        for j, small in enumerate(smalls):
            value = row[j] if j < len(row) else None
            if isinstance(value, (int, float)):
                if by == "small":
                    triples.append((float(large), float(small), value / divisor))
                else:
                    triples.append((float(small), float(large), value / divisor))
    return _grouped(triples, "large" if by == "small" else "small")


def heat_table(matrix: Mapping[str, Any], title: str, decimals: int = 0) -> Table:
    """A matrix as a table, each value coloured by its magnitude within the matrix."""
    smalls, larges = matrix.get("small_loads") or [], matrix.get("large_loads") or []
    values = matrix.get("values") or []
    cells = [v for row in values for v in row if isinstance(v, (int, float))]
    low, high = (min(cells), max(cells)) if cells else (0.0, 0.0)
    table = Table(title=title, title_justify="left", box=None, padding=(0, 1), show_edge=False)
    table.add_column("large\\small", justify="right", style="bold")
    for small in smalls:
        table.add_column(str(small), justify="right")
    for i, large in enumerate(larges):
        row = values[i] if i < len(values) else []
        shown: list[Text | str] = [str(large)]
        for j in range(len(smalls)):
            value = row[j] if j < len(row) else None
            if not isinstance(value, (int, float)):
                shown.append(Text("·", style="dim"))
                continue
            step = 0 if high == low else int((value - low) / (high - low) * (len(HEAT) - 1) + 0.5)
            shown.append(Text(f"{value:,.{decimals}f}", style=f"bold white on {HEAT[step]}"))
        table.add_row(*shown)
    return table


def histogram_text(histogram: Sequence[Mapping[str, Any]], width: int = 40) -> Text:
    """ORION's latency histogram as bars: the buckets holding I/Os, reads and writes."""
    rows = [r for r in histogram if (r.get("read") or 0) or (r.get("write") or 0)]
    text = Text()
    if not rows:
        text.append("no I/O in the histogram", style="dim")
        return text
    most = max(max(int(r.get("read") or 0), int(r.get("write") or 0)) for r in rows) or 1
    for row in rows:
        bucket = f"{row.get('low_us', '?')}-{row.get('high_us', '?')} us"
        for kind, style in (("read", "cyan"), ("write", "magenta")):
            count = int(row.get(kind) or 0)
            if not count and kind == "write":
                continue
            bar = "█" * max(1, round(count / most * width)) if count else ""
            text.append(f"{bucket:>18} {kind:<5} ", style="bold" if kind == "read" else "")
            text.append(bar, style=style)
            text.append(f" {count:,}\n")
    return text


def is_detailed(matrix: Any) -> bool:
    """A matrix with values at more than one small and more than one large load (ORION's
    detailed, max), not a basic one (its small row and large column)."""
    if not isinstance(matrix, Mapping) or not isinstance(matrix.get("values"), list):
        return False
    rows = [row for row in matrix["values"] if isinstance(row, list)]
    filled_rows = sum(1 for row in rows if sum(isinstance(v, (int, float)) for v in row) > 1)
    return filled_rows > 1


class HeatTable(Static):
    """A matrix of figures coloured by magnitude."""

    DEFAULT_CSS = """
    HeatTable {
        height: auto;
        margin-bottom: 1;
    }
    """

    def __init__(self, matrix: Mapping[str, Any], title: str, decimals: int = 0, **kwargs: Any) -> None:
        super().__init__(heat_table(matrix, title, decimals), **kwargs)


def result_widgets(result: Mapping[str, Any] | None) -> list[Widget]:
    """A finished ORION run's charts, histogram and heat tables (its result's shape)."""
    result = result or {}
    widgets: list[Widget] = []
    small_x, large_x = "small load (outstanding I/Os)", "large load (outstanding I/Os)"
    for title, y_label, x_label, series in (
        ("IOPS against small load", "IOPS", small_x, matrix_series(result.get("iops"), "small")),
        ("MB/s against large load", "MB/s", large_x, matrix_series(result.get("mbps"), "large")),
        ("latency against small load (ms)", "ms", small_x, matrix_series(result.get("lat"), "small", 1000.0)),
    ):
        if series:
            chart = Chart(title, x_label=x_label, y_label=y_label, classes="orion-chart")
            chart.plot(series)
            widgets.append(chart)
    histogram = result.get("histogram")
    if isinstance(histogram, list) and histogram:
        at = result.get("histogram_at") or {}
        widgets.append(
            Label(f"latency histogram @ small={at.get('small', '?')} large={at.get('large', '?')}", classes="section")
        )
        widgets.append(Static(histogram_text(histogram), classes="orion-histogram"))
    for key, title, decimals in (("iops", "IOPS", 0), ("mbps", "MB/s", 2), ("lat", "latency (us)", 0)):
        if is_detailed(result.get(key)):
            widgets.append(HeatTable(result[key], f"{title}: large load (rows) x small load (columns)", decimals))
    return widgets
