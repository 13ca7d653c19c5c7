"""JSON that every reader accepts: NaN and Infinity (which Python's json writes by default and
strict readers reject) become null, tuples become lists, and json.dumps is told allow_nan=False
so nothing non-standard can slip out. Every command prints through here."""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (recursively)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """json.dumps of :func:`finite` ``value``, strict."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)
