"""The planned matrix (Oracle's ORION documentation: the ``-run`` levels are shorthands for
``-run advanced`` with fixed options, ``-num_disks`` sets the range of loads): with ``n``
disks, small loads 0..5n, large loads 0..2n; ``basic`` (``simple``) tests the small loads
with no large I/O, then the large loads with no small I/O (7n+1 data points, (0,0) counted as
ORION counts it); ``detailed`` (``normal``) every combination ((5n+1)(2n+1)); ``row``
(``oltp``: ``-num_large 0``) the small loads at the fixed large load; ``col`` (``dss``:
``-num_small 0``, 240 s per point) the large loads at the fixed small load; ``point`` one point;
``max`` every combination up to ``num_small`` x ``num_large``. ORION's own estimates in the
published outputs (9 minutes for ``simple`` on one disk, 23 for ``advanced`` basic on three)
are exactly (data points x duration + 1 minute). The planned duration adds about 2 minutes of
cache warming per data point with large I/O unless ``cache_size`` is 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from racperf_tui.tools.orion.config import OrionConfig, orion_config

#: about this long of cache warming before each data point with large I/O (unless -cache_size 0)
CACHE_WARMING_S = 120.0
#: ORION's own estimates are (data points x duration) plus this
ORION_ESTIMATE_EXTRA_S = 60.0
#: the hard limit: planned x this + HARD_LIMIT_SLACK_S (the model is an estimate)
HARD_LIMIT_FACTOR = 1.5
HARD_LIMIT_SLACK_S = 600.0


@dataclass(frozen=True)
class DataPoint:
    """One data point in ORION's order: its loads, its planned start and length (warming
    included)."""

    small: int
    large: int
    start_s: float
    length_s: float


def load_levels(config: Mapping[str, Any] | OrionConfig) -> tuple[list[int], list[int]]:
    """(small loads, large loads) of the matrix's range: 0..5n and 0..2n for n disks."""
    cfg = orion_config(config)
    n = cfg.disks
    return list(range(0, 5 * n + 1)), list(range(0, 2 * n + 1))


def planned_matrix(config: Mapping[str, Any] | OrionConfig) -> list[tuple[int, int]]:
    """The (small, large) data points ORION will test, in its order, as its summary's "Total
    Data Points" counts them (the (0, 0) point of a basic matrix included)."""
    cfg = orion_config(config)
    small, large = load_levels(cfg)
    matrix = cfg.effective("matrix")
    if matrix == "basic":
        return [(s, 0) for s in small] + [(0, l) for l in large[1:]]
    if matrix == "detailed":
        return [(s, l) for l in large for s in small]
    if matrix == "row":
        return [(s, int(cfg.effective("num_large") or 0)) for s in small]
    if matrix == "col":
        return [(int(cfg.effective("num_small") or 0), l) for l in large]
    if matrix == "point":
        return [(int(cfg.num_small or 0), int(cfg.num_large or 0))]
    # max: every combination up to the maximum loads given (an upper bound)
    return [(s, l) for l in range(int(cfg.num_large or 0) + 1) for s in range(int(cfg.num_small or 0) + 1)]


def schedule(config: Mapping[str, Any] | OrionConfig) -> list[DataPoint]:
    """The data points with their planned times: duration each, plus cache warming before each
    one with large I/O unless cache_size is 0."""
    cfg = orion_config(config)
    duration = float(cfg.effective("duration"))
    warm = 0.0 if cfg.cache_size == 0 else CACHE_WARMING_S
    points = []
    clock = 0.0
    for small, large in planned_matrix(cfg):
        length = duration + (warm if large > 0 else 0.0)
        points.append(DataPoint(small, large, clock, length))
        clock += length
    return points


def planned_duration_s(config: Mapping[str, Any] | OrionConfig) -> float:
    """Total Data Points x duration + cache warming per large data point (unless cache_size 0)."""
    return sum(p.length_s for p in schedule(config))


def orion_estimate_s(config: Mapping[str, Any] | OrionConfig) -> float:
    """What ORION itself will print as its estimate: data points x duration + 1 minute."""
    cfg = orion_config(config)
    return len(planned_matrix(cfg)) * float(cfg.effective("duration")) + ORION_ESTIMATE_EXTRA_S


def hard_limit_s(config: Mapping[str, Any] | OrionConfig) -> float:
    """The planned duration x 1.5 + 10 minutes (the model is an estimate; a stuck ORION ends)."""
    cfg = orion_config(config)
    return max(planned_duration_s(cfg), orion_estimate_s(cfg)) * HARD_LIMIT_FACTOR + HARD_LIMIT_SLACK_S
