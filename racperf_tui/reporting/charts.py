"""A report's charts as SVG text, drawn by pygal (pure Python, SVG out, no browser or
native library: it installs from the offline bundle on any node).

pygal's SVG carries its CSS inline (the report's CSP allows inline styles) and, for its
tooltips, a script and comments naming its web site: both are taken out, so a chart is
static drawing that loads and runs nothing.
"""

from __future__ import annotations

import re

import pygal
from pygal.style import Style

from racperf_tui.reporting.contents import Series

#: a report's palette: distinct on paper and for the colour-blind (Okabe-Ito)
_STYLE = Style(
    background="white",
    plot_background="white",
    foreground="#222222",
    foreground_strong="#000000",
    foreground_subtle="#777777",
    colors=("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"),
    font_family="sans-serif",
    title_font_size=14,
    label_font_size=11,
    legend_font_size=11,
)
#: points drawn per line at most: a day's run at 1 s is 86,400 intervals, more than a page shows
#: and more than pygal draws in reasonable time; longer series are drawn as bucket means
MAX_POINTS = 1200
_SCRIPT = re.compile(r"<script\b.*?</script>", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


def series_svg(series: Series, *, width: int = 900, height: int = 300) -> str:
    """One chart: the series' lines over seconds since the run started, its unit on the axis."""
    longest = max((len(points) for points in series.lines.values()), default=0)
    per_point = -(-longest // MAX_POINTS) if longest > MAX_POINTS else 1
    title = series.title + (f" ({series.unit})" if series.unit and series.unit != series.title else "")
    if per_point > 1:
        title += f", each point the mean of {per_point} intervals"
    chart = pygal.XY(
        style=_STYLE,
        js=[],
        disable_xml_declaration=True,
        width=width,
        height=height,
        show_dots=False,
        stroke_style={"width": 1.5},
        title=title,
        x_title=series.x_title,
        y_title=series.unit or None,
        legend_at_bottom=True,
        truncate_legend=-1,
        show_x_guides=False,
        value_formatter=axis_number,
    )
    for label, points in series.lines.items():
        chart.add(label, [(round(t, 3), value) for t, value in bucket_means(points, per_point)])
    return _static(chart.render(is_unicode=True))


def axis_number(value: float) -> str:
    """An axis label: whole numbers from 100 up (grouped), three significant digits below
    (await 0.071 ms is not 0.1)."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def bucket_means(points: list[tuple[float, float]], size: int) -> list[tuple[float, float]]:
    """Consecutive ``size`` points as one (their last time, their mean value)."""
    if size <= 1:
        return points
    return [
        (bucket[-1][0], sum(value for _t, value in bucket) / len(bucket))
        for bucket in (points[i : i + size] for i in range(0, len(points), size))
    ]


def _static(svg: str) -> str:
    return _COMMENT.sub("", _SCRIPT.sub("", svg))
