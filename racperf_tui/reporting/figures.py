"""Figures as a report prints them: in full, grouped by thousands, with their unit
(10,458 IOPS, never 10.5k): a reader checks them against the tool's own output."""

from __future__ import annotations

import math
from typing import Any

from racperf_tui.core.contract.tool import MetricSpec


def full(spec: MetricSpec, value: Any) -> str:
    """``value`` (in the stored unit) in the spec's unit, every digit, with the unit; text as
    it is; "-" when absent."""
    if isinstance(value, str):
        return value
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "-"
    if isinstance(value, int) and spec.divisor == 1:
        return f"{value:,} {spec.unit}".rstrip()
    return f"{spec.shown(value):,.{spec.decimals}f} {spec.unit}".rstrip()


def number(value: Any, decimals: int = 1, unit: str = "") -> str:
    """A plain figure in full with its unit ('-' when absent)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "-"
    return f"{value:,.{decimals}f} {unit}".rstrip()


def cell(spec: MetricSpec, value: Any) -> str:
    """A table cell under a heading that names the unit: the figure in full, without it."""
    return full(MetricSpec(spec.key, spec.label, "", spec.divisor, spec.decimals), value)
