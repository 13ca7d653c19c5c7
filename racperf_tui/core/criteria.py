"""Acceptance criteria: what a DBA states once and every comparison then judges, pass or fail.

A criteria file is text, one criterion a line, ``#`` comments::

    # sign-off of the new array, 8k random read
    read_iops >= 20000 at read_clat_p99_us <= 5000
    write_clat_mean_us <= 2000
    received_mbit_s >= 9000        # the interconnect (iperf3)

A criterion is one or more conditions joined by ``at`` (or ``and``): all must hold in the same
run. A condition is ``METRIC OP NUMBER`` with OP one of ``>= <= > < ==``; the metric is a key of
the tool's result figures (``racperf runs compare`` lists them) and the number is in the unit
the key names (``_us``: µs, ``_kib_s``: KiB/s, ``_mbit_s``: Mbit/s); ``_`` and ``,`` may group
digits. A run that has not the figure gets "n/a" for that criterion, never a pass.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from racperf_tui.core.textio.bounded_read import read_text_bounded

#: a criteria file is a few lines: more is not one
MAX_CRITERIA_BYTES = 64 * 1024

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_NUMBER = r"[-+]?[0-9][0-9_,]*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_CONDITION = re.compile(rf"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(>=|<=|==|>|<)\s*({_NUMBER})\s*$")
_JOINER = re.compile(r"\s+(?:at|and)\s+")


class CriteriaError(ValueError):
    """A criteria file that cannot be read or a line that is not a criterion (names file:line)."""


@dataclass(frozen=True)
class Condition:
    metric: str
    op: str
    value: float

    def holds(self, figure: float) -> bool:
        return _OPS[self.op](figure, self.value)

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"


@dataclass(frozen=True)
class Criterion:
    """Conditions that must all hold in one run; ``text`` as the file wrote it."""

    text: str
    conditions: tuple[Condition, ...]

    def judge(self, figures: Mapping[str, float]) -> Verdict:
        """pass, fail, or n/a (a figure the run has not), with the figures it read."""
        seen: dict[str, float | None] = {}
        for condition in self.conditions:
            value = figures.get(condition.metric)
            seen[condition.metric] = value if value is not None and math.isfinite(value) else None
        if any(value is None for value in seen.values()):
            return Verdict(self, "n/a", seen)
        ok = all(condition.holds(seen[condition.metric]) for condition in self.conditions)  # type: ignore[arg-type]
        return Verdict(self, "pass" if ok else "fail", seen)


@dataclass(frozen=True)
class Verdict:
    criterion: Criterion
    outcome: str  # "pass" | "fail" | "n/a"
    figures: dict[str, float | None]

    def to_json(self) -> dict[str, object]:
        return {"criterion": self.criterion.text, "outcome": self.outcome, "figures": self.figures}

    def figures_text(self) -> str:
        """The figures it read: ``read_iops 20,311.0; read_clat_p99_us 4,100.0`` (- for none)."""
        return "; ".join(
            f"{metric} {'-' if value is None else f'{value:,.1f}'}" for metric, value in self.figures.items()
        )


def parse_criteria(text: str, source: str = "criteria") -> list[Criterion]:
    """Every criterion of a criteria file's text; CriteriaError names ``source:line``."""
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        conditions = []
        for part in _JOINER.split(line):
            match = _CONDITION.match(part)
            if not match:
                raise CriteriaError(
                    f"{source}:{number}: {part.strip()!r} is not a condition: write METRIC OP NUMBER, "
                    f"e.g. 'read_iops >= 20000' (OP: >= <= > < ==; several joined by 'at')"
                )
            metric, op, number_text = match.groups()
            conditions.append(Condition(metric, op, float(number_text.replace("_", "").replace(",", ""))))
        found.append(Criterion(line, tuple(conditions)))
    if not found:
        raise CriteriaError(f"{source}: no criterion in it (one per line: 'read_iops >= 20000')")
    return found


def load_criteria(path: str | Path) -> list[Criterion]:
    """The criteria of a file of at most 64 KiB: a regular file or a pipe (``<(...)``), never a
    device, a kernel file (/proc/kmsg reads for ever) or a FIFO nobody writes to (bounded_read)."""
    try:
        text = read_text_bounded(path, MAX_CRITERIA_BYTES)
    except (OSError, ValueError) as error:
        raise CriteriaError(f"{path}: cannot read the criteria: {error}") from None
    return parse_criteria(text, str(path))
