"""Load points as curves, and what a curve says: the knee, the best point under a latency
ceiling, and when a sweep walking up a curve should stop (vdbench's stopcurve).

The knee, stated so anyone can check it: along one curve (points in rising load), the lowest
point from which no later point raises IOPS by :data:`KNEE_GAIN` (10 %) or more; None when the
last point still gains (the curve has not flattened yet, or has a single point).

Pure: no I/O, no runs; :mod:`load_points` makes the points.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from racperf_tui.tools.fio.load_points import LoadPoint, LoadPointError, point_from_json

#: the gain in IOPS that still counts as "more load gives more"
KNEE_GAIN_TEXT = "10 %"
KNEE_GAIN = 0.10
#: --stop-knee: this many points past the knee without the gain end the curve
POINTS_PAST_KNEE = 2
VARYING = ("iodepth", "numjobs")


def knee_index(iops: Sequence[float]) -> int | None:
    """The knee of a curve's IOPS in load order (see the module doc)."""
    for index, value in enumerate(iops):
        if all(later < value * (1.0 + KNEE_GAIN) for later in iops[index + 1 :]):
            return index if index < len(iops) - 1 else None
    return None


def best_under(points: Iterable[LoadPoint], ceiling_p99_us: float | None) -> LoadPoint | None:
    """The point with the highest IOPS whose p99 latency is under the ceiling; None without a
    ceiling or when no point is under it."""
    if ceiling_p99_us is None:
        return None
    under = [p for p in points if p.lat_p99_us is not None and p.lat_p99_us < ceiling_p99_us]
    return max(under, key=lambda p: p.iops, default=None)


def stop_reason(points: Sequence[LoadPoint], stop_p99_us: float | None, stop_knee: bool) -> str | None:
    """Why a sweep walking up a curve stops after its last point so far, or None to go on:
    the last point's p99 passed the ceiling, or (``stop_knee``) the knee has
    :data:`POINTS_PAST_KNEE` points after it that did not gain."""
    if not points:
        return None
    last = points[-1]
    if stop_p99_us is not None and last.lat_p99_us is not None and last.lat_p99_us > stop_p99_us:
        return f"p99 {last.lat_p99_us / 1000:.3g} ms passed the ceiling of {stop_p99_us / 1000:g} ms"
    if stop_knee:
        knee = knee_index([p.iops for p in points])
        if knee is not None and len(points) - 1 - knee >= POINTS_PAST_KNEE:
            return (
                f"{POINTS_PAST_KNEE} points past the knee ({_load(points[knee])}) without a "
                f"{KNEE_GAIN_TEXT} gain in IOPS"
            )
    return None


def _load(point: LoadPoint) -> str:
    return f"iodepth {point.iodepth}, numjobs {point.numjobs}"


@dataclass(frozen=True, slots=True)
class Curve:
    """Points of one rw and bs, ``varying`` one parameter while the other stays ``fixed``,
    in rising load."""

    rw: str
    bs: str
    varying: str
    fixed: dict[str, int]
    points: tuple[LoadPoint, ...]
    ceiling_p99_us: float | None = None
    stopped: str | None = None

    @property
    def knee(self) -> LoadPoint | None:
        index = knee_index([p.iops for p in self.points])
        return None if index is None else self.points[index]

    @property
    def best_under_ceiling(self) -> LoadPoint | None:
        return best_under(self.points, self.ceiling_p99_us)

    def to_json(self) -> dict[str, Any]:
        knee = self.knee
        best = self.best_under_ceiling
        out: dict[str, Any] = {
            "rw": self.rw,
            "bs": self.bs,
            "varying": self.varying,
            "fixed": dict(self.fixed),
            "points": [p.to_json() for p in self.points],
            "knee": None if knee is None else knee.to_json(),
        }
        if self.ceiling_p99_us is not None:
            out["ceiling_p99_us"] = self.ceiling_p99_us
            out["best_under_ceiling"] = None if best is None else best.to_json()
        if self.stopped is not None:
            out["stopped"] = self.stopped
        return out


def curve_along(
    points: Sequence[LoadPoint],
    varying: str,
    ceiling_p99_us: float | None = None,
    stopped: str | None = None,
) -> Curve:
    """One curve from points that share rw, bs and the fixed parameter (a sweep's own walk)."""
    if varying not in VARYING:
        raise ValueError(f"varying must be one of {', '.join(VARYING)}, got {varying!r}")
    other = "numjobs" if varying == "iodepth" else "iodepth"
    first = points[0]
    ordered = tuple(sorted(points, key=lambda p: getattr(p, varying)))
    return Curve(first.rw, first.bs, varying, {other: getattr(first, other)}, ordered, ceiling_p99_us, stopped)


def without_repeats(points: Iterable[LoadPoint]) -> tuple[list[LoadPoint], list[dict[str, str]]]:
    """The points with one per rw, bs, iodepth and numjobs (the first seen); the others as
    ``{"source", "why"}``."""
    kept: dict[tuple[str, str, int, int], LoadPoint] = {}
    repeats: list[dict[str, str]] = []
    for point in points:
        key = (point.rw, point.bs, point.iodepth, point.numjobs)
        if key in kept:
            repeats.append(
                {
                    "source": point.source,
                    "why": f"the same rw, bs, iodepth and numjobs as {kept[key].source or 'an earlier point'}",
                }
            )
        else:
            kept[key] = point
    return list(kept.values()), repeats


def curves_of(points: Iterable[LoadPoint], ceiling_p99_us: float | None = None) -> list[Curve]:
    """Every curve in a set of points, both ways: grouped by rw and bs, one curve varying
    iodepth per numjobs value and one varying numjobs per iodepth value, each with at least
    two points. Call :func:`without_repeats` first when points may repeat a load."""
    by_kind: dict[tuple[str, str], list[LoadPoint]] = {}
    for point in points:
        by_kind.setdefault((point.rw, point.bs), []).append(point)
    curves: list[Curve] = []
    for (_rw, _bs), kind_points in sorted(by_kind.items()):
        for varying in VARYING:
            other = "numjobs" if varying == "iodepth" else "iodepth"
            lines: dict[int, list[LoadPoint]] = {}
            for point in kind_points:
                lines.setdefault(getattr(point, other), []).append(point)
            for _fixed, line in sorted(lines.items()):
                if len({getattr(p, varying) for p in line}) >= 2:
                    curves.append(curve_along(line, varying, ceiling_p99_us))
    return curves


def curve_from_json(data: Mapping[str, Any]) -> Curve:
    """A curve as :meth:`Curve.to_json` wrote it (a sweep group's result read back); ValueError
    (LoadPointError) naming what cannot be read."""
    try:
        return Curve(
            rw=str(data["rw"]),
            bs=str(data["bs"]),
            varying=str(data["varying"]),
            fixed={str(k): int(v) for k, v in dict(data["fixed"]).items()},
            points=tuple(point_from_json(p) for p in data["points"]),
            ceiling_p99_us=None if data.get("ceiling_p99_us") is None else float(data["ceiling_p99_us"]),
            stopped=data.get("stopped"),
        )
    except (KeyError, TypeError) as exc:
        raise LoadPointError(f"a sweep curve that cannot be read: {exc!r}") from None
