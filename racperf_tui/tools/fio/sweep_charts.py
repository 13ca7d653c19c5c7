"""A sweep curve's two charts (plotext), for ``racperf sweep`` (plain text) and the UI's sweep
view (ANSI colours): IOPS (and MiB/s) against the load with the knee marked, and p99 and p50
latency against IOPS. Each starts its y axis at zero, so a flat curve looks flat.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotext

from racperf_tui.tools.fio.load_points import LoadPoint
from racperf_tui.tools.fio.sweep_curves import Curve

#: the knee's mark on the IOPS chart
KNEE_MARK = "<- knee"


def _figure(width: int, height: int, colour: bool) -> object:
    figure = plotext.figure
    figure.clear()
    figure.plot_size(max(width, 20), max(height, 6))
    figure.theme("simple" if colour else "colorless")
    return figure


def _built(figure: object, colour: bool) -> str:
    text = figure.build().string()  # type: ignore[attr-defined]
    return text if colour else plotext.uncolorize(text)


def iops_chart(curve: Curve, width: int = 72, height: int = 14, *, colour: bool = False, mib_s: bool = False) -> str:
    """IOPS against the curve's varying load (MiB/s too on a right axis, ``mib_s``), the knee
    marked; its first line is its title."""
    figure = _figure(width, height - 1, colour)
    points = curve.points
    loads = [float(getattr(p, curve.varying)) for p in points]
    figure.legend(False)  # type: ignore[attr-defined]
    iops = figure.signal(loads, [p.iops for p in points], marker="dot")  # type: ignore[attr-defined]
    figure.draw(iops.label("IOPS").lines())  # type: ignore[attr-defined]
    figure.draw(figure.signal([loads[0]], [0.0], marker=" "))  # type: ignore[attr-defined]
    if mib_s:
        bandwidth = figure.signal(loads, [p.bw_kib_s / 1024 for p in points], marker="dot", yside="right")  # type: ignore[attr-defined]
        figure.draw(bandwidth.label("MiB/s").lines())  # type: ignore[attr-defined]
        figure.draw(figure.signal([loads[0]], [0.0], marker=" ", yside="right"))  # type: ignore[attr-defined]
    knee = curve.knee
    if knee is not None:  # drawn last, over the line, just under the knee's point
        at = (float(getattr(knee, curve.varying)), knee.iops * 0.9)
        figure.draw(figure.text(*at, KNEE_MARK))  # type: ignore[attr-defined]
    figure.label(curve.varying, axis="x")  # type: ignore[attr-defined]
    figure.label("IOPS", axis="y")  # type: ignore[attr-defined]
    title = f" IOPS{', MiB/s (right)' if mib_s else ''} by {curve.varying}"
    return title + "\n" + _built(figure, colour)


def _with_latency(points: Sequence[LoadPoint]) -> list[LoadPoint]:
    return [p for p in points if p.lat_p99_us is not None]


def latency_chart(curve: Curve, width: int = 72, height: int = 14, *, colour: bool = False) -> str | None:
    """p99 (the upper line) and p50 latency, in ms, against IOPS (p50 else the mean where a point has
    no p50); its first line is its title. None when no point has a p99."""
    points = _with_latency(curve.points)
    if not points:
        return None
    figure = _figure(width, height - 1, colour)
    figure.legend(False)  # type: ignore[attr-defined]
    iops = [p.iops for p in points]
    lower = [p.lat_p50_us if p.lat_p50_us is not None else p.lat_mean_us for p in points]
    for label, values in (("p99", [p.lat_p99_us for p in points]), ("p50", lower)):
        line = figure.signal(iops, [float(v or 0.0) / 1000 for v in values], marker="dot")  # type: ignore[attr-defined]
        figure.draw(line.label(label).lines())  # type: ignore[attr-defined]
    figure.draw(figure.signal([iops[0]], [0.0], marker=" "))  # type: ignore[attr-defined]
    figure.label("IOPS", axis="x")  # type: ignore[attr-defined]
    figure.label("ms", axis="y")  # type: ignore[attr-defined]
    return " p99, p50 ms by IOPS\n" + _built(figure, colour)


def chart_text(curve: Curve, width: int = 72, height: int = 14) -> str:
    """Both charts, one under the other, as plain text (``racperf sweep``)."""
    parts = [iops_chart(curve, width, height + 1)]
    latency = latency_chart(curve, width, height + 1)
    if latency is not None:
        parts.append(latency)
    return "\n".join(parts)
