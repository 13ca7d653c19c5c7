"""The report's charts: static SVG (no script, no comment naming a web site), long series drawn
as bucket means, axis labels that keep small figures readable."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from racperf_tui.reporting.charts import MAX_POINTS, axis_number, bucket_means, series_svg
from racperf_tui.reporting.contents import Series


def test_a_chart_is_static_svg_with_its_title_and_unit() -> None:
    svg = series_svg(Series("IOPS", "IOPS", {"read IOPS": [(1.0, 10458.0), (2.0, 10460.0)]}))
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "<script" not in svg and "<!--" not in svg and "http://pygal" not in svg
    assert re.findall(r"(?:href|src)=", svg) == []
    assert ">IOPS<" in svg and ">read IOPS<" in svg and "10,458" in svg


def test_a_day_at_one_second_is_drawn_as_bucket_means() -> None:
    points = [(float(t), float(t % 2)) for t in range(86_400)]
    svg = series_svg(Series("await", "ms", {"sdb": points}))
    per = -(-86_400 // MAX_POINTS)
    assert f"each point the mean of {per} intervals" in svg
    assert bucket_means([(1.0, 1.0), (2.0, 3.0), (3.0, 5.0)], 2) == [(2.0, 2.0), (3.0, 5.0)]
    assert bucket_means(points[:3], 1) == points[:3]


def test_axis_labels() -> None:
    assert [axis_number(v) for v in (15000.0, 100.0, 99.5, 0.0712)] == ["15,000", "100", "99.5", "0.0712"]
