"""A chart's legend fits its width: entries go on as many heading lines as they need, whole,
and the plot below keeps its frame and x label within the chart's height (issue 21: at 80
columns the heading was cut and its last entries lost)."""

from __future__ import annotations

import re

import pytest

from racperf_tui.ui.widgets.chart import Series, heading_lines, render_chart

ANSI = re.compile(r"\x1b\[[0-9;]*m")
XS = [float(x) for x in range(60)]
SERIES = [Series(f"job{k} read IOPS (rac{k})", XS, [float(x * k) for x in XS]) for k in range(1, 7)]


@pytest.mark.parametrize(("width", "heading"), [(78, 3), (198, 1)])
def test_the_legend_takes_the_lines_it_needs_and_the_plot_the_rest(width: int, heading: int) -> None:
    lines = ANSI.sub("", render_chart(SERIES, width, 14, "IOPS per interval", "t (s)", "IOPS")).rstrip("\n").split("\n")
    assert len(lines) == 14
    assert max(len(line) for line in lines[:heading]) <= width
    legend = " ".join(lines[:heading])
    assert all(f"▬ job{k} read IOPS (rac{k})" in legend for k in range(1, 7))
    assert lines[heading].lstrip().startswith("┌") and "▬" not in lines[heading]  # the frame below it
    assert "t (s)" in lines[-1]


def test_heading_lines_never_split_an_entry() -> None:
    assert heading_lines("IOPS", ["a" * 10, "b" * 10, "c" * 10], 34) == [(" IOPS", [0, 1]), ("", [2])]
    assert heading_lines("", ["x" * 50], 20) == [(" ", [0])]  # wider than the chart: alone, cut at the edge
