"""Recorded runs side by side: each declared result figure, its difference from a baseline, which
way is better, and whether the difference is larger than the runs' own noise.

The rows are the figures the runs' tools declare (``ToolDescription.results``, read by
``result_figures``: for fio the totals over its jobs), in the declared order, those that at
least one run has and is not zero in all of them. The noise of a run is the
interval-to-interval standard deviation of the same figure in its stored samples (the live
series: IOPS, bandwidth, latency percentiles); a difference is **significant** when it is
larger than twice the larger of the two runs' noise, and unknown (None) when either run has
no such series (a mean latency, a result-only figure).
Twice the noise, not the standard error of the mean: intervals of one run are not independent
draws (a cache warming, a queue building), and a DBA asks "is this outside what the run itself
wandered", not "is the mean known to 1 %".

Runs of different tools or configurations compare on the figures they share; ``differs`` says
what sets them apart (tool, node, target, tool version, and every config key whose value is not
the same in all of them: block size, depth, ...).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.contract.tool import MetricSpec, ToolDescription
from racperf_tui.core.criteria import Criterion, Verdict
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.tools import tool_description

#: samples before this many seconds into a run are its ramp, left out of the noise
NOISE_SKIP_FIRST = 1
#: a difference this many times the larger noise is significant
SIGNIFICANCE_NOISE_FACTOR = 2.0


class CompareError(ValueError):
    """Runs that cannot be compared (fewer than two, a baseline not among them)."""


@dataclass(frozen=True)
class Row:
    spec: MetricSpec
    values: list[float | None]
    diff_pct: list[float | None]
    noise: list[float | None]
    significant: list[bool | None]

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.spec.key,
            "label": self.spec.label,
            "unit": self.spec.unit,
            "values": [None if v is None else self.spec.shown(v) for v in self.values],
            "diff_pct": self.diff_pct,
            "better": self.spec.direction or None,
            "noise": [None if v is None else self.spec.shown(v) for v in self.noise],
            "significant": self.significant,
        }

    def cell(self, i: int, base: int) -> str:
        """Run ``i``'s figure as a table shows it: in full without its unit (the unit is the
        row's), then its difference from the ``base`` run, ``better`` / ``worse`` by the
        figure's direction, and ``*`` past the runs' noise."""
        value = self.values[i]
        text = self.spec.format(value).removesuffix(f" {self.spec.unit}") if value is not None else "-"
        diff = self.diff_pct[i]
        if i != base and diff is not None:
            text += f" {diff:+.1f}%"
            if self.spec.direction and round(diff, 1) != 0:  # "-0.0% worse" says nothing
                text += " better" if (diff > 0) == (self.spec.direction == "higher") else " worse"
            if self.significant[i]:
                text += "*"
        return text


@dataclass(frozen=True)
class Comparison:
    runs: list[RunRecord]
    baseline: int  # index into runs
    rows: list[Row]
    differs: dict[str, list[Any]]
    verdicts: list[list[Verdict]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": self.runs[self.baseline].id,
            "runs": [
                {
                    "id": run.id,
                    "tool": run.tool,
                    "host": run.host,
                    "target": run.target,
                    "state": run.state.value,
                    "started_at": run.started_at,
                    "duration_s": run.duration_s,
                    "tool_version": run.tool_version,
                }
                for run in self.runs
            ],
            "differs": self.differs,
            "rows": [row.to_json() for row in self.rows],
            "criteria": [[v.to_json() for v in run_verdicts] for run_verdicts in self.verdicts],
        }


def compare_runs(
    store: Store,
    run_ids: Sequence[int],
    baseline: int | None = None,
    criteria: Sequence[Criterion] = (),
) -> Comparison:
    """The comparison of ``run_ids`` (RunNotFound for an unknown id), the first run (or
    ``baseline``) as the baseline."""
    if len(run_ids) < 2 and not criteria:
        raise CompareError("compare needs at least two runs (or --criteria to judge one)")
    runs = [store.get_run(run_id) for run_id in run_ids]
    base = 0 if baseline is None else _index_of(run_ids, baseline)
    descriptions = {run.tool: _description(run.tool) for run in runs}
    figures = [descriptions[run.tool].result_figures(store.result(run.id)) for run in runs]
    series = [_series(store, run.id) for run in runs]
    rows = []
    for spec in _declared(runs, descriptions):
        values = [found.get(spec.key) for found in figures]
        if all(not value for value in values):
            continue  # no run has it, or none did any of it (a read-only job's write side)
        noise = [_noise(s.get(spec.key, [])) for s in series]
        rows.append(
            Row(
                spec=spec,
                values=values,
                diff_pct=[None if i == base else _diff_pct(values[base], value) for i, value in enumerate(values)],
                noise=noise,
                significant=[
                    None if i == base else _significant(values[base], value, noise[base], noise[i])
                    for i, value in enumerate(values)
                ],
            )
        )
    verdicts = [[criterion.judge(found) for criterion in criteria] for found in figures] if criteria else []
    return Comparison(runs=runs, baseline=base, rows=rows, differs=_differs(runs), verdicts=verdicts)


def unfinished(comparison: Comparison) -> list[RunRecord]:
    """The runs still going (compared as far as they went)."""
    return [run for run in comparison.runs if run.state in (RunState.PENDING, RunState.RUNNING)]


def _index_of(run_ids: Sequence[int], baseline: int) -> int:
    if baseline not in run_ids:
        raise CompareError(f"baseline {baseline} is not one of the runs compared ({', '.join(map(str, run_ids))})")
    return list(run_ids).index(baseline)


def _description(tool: str) -> ToolDescription:
    try:
        return tool_description(tool)
    except Exception:
        return ToolDescription(name=tool)  # a tool no longer installed: its runs still compare on nothing


def _declared(runs: Sequence[RunRecord], descriptions: dict[str, ToolDescription]) -> list[MetricSpec]:
    """Every declared result figure of the runs' tools, once, in the first tool's order."""
    seen: dict[str, MetricSpec] = {}
    for run in runs:
        for spec in descriptions[run.tool].results:
            seen.setdefault(spec.key, spec)
    return list(seen.values())


def _series(store: Store, run_id: int) -> dict[str, list[float]]:
    """Each metric's per-interval values, the ramp's first samples left out."""
    found: dict[str, list[float]] = {}
    for _seq, sample in store.samples(run_id)[NOISE_SKIP_FIRST:]:
        for key, value in sample.metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                found.setdefault(key, []).append(float(value))
    return found


def _noise(values: list[float]) -> float | None:
    return statistics.stdev(values) if len(values) >= 3 else None


def _diff_pct(base: float | None, value: float | None) -> float | None:
    if base is None or value is None or base == 0:
        return None
    return round((value - base) / abs(base) * 100.0, 2)


def _significant(base: float | None, value: float | None, base_noise: float | None, noise: float | None) -> bool | None:
    if base is None or value is None or base_noise is None or noise is None:
        return None
    return abs(value - base) > SIGNIFICANCE_NOISE_FACTOR * max(base_noise, noise)


#: config keys that say how a run was made, not what it measured
_NOT_CONDITIONS = frozenset({"host_spec", "destructive", "status_interval_s", "name"})


def _differs(runs: Sequence[RunRecord]) -> dict[str, list[Any]]:
    """What sets the runs apart: tool, node, target, tool version, and each config value that
    is not the same in all of them (None where a run's config does not set it: its default)."""
    differs: dict[str, list[Any]] = {}
    for label, values in (
        ("tool", [run.tool for run in runs]),
        ("node", [run.host for run in runs]),
        ("target", [run.target for run in runs]),
        ("tool_version", [run.tool_version for run in runs]),
    ):
        if len({repr(v) for v in values}) > 1:
            differs[label] = values
    configs = [_conditions(run.config) for run in runs]
    keys = sorted({key for config in configs for key in config} - _NOT_CONDITIONS)
    for key in keys:
        values = [config.get(key) for config in configs]
        if len({repr(v) for v in values}) > 1:
            differs[key] = values
    return differs


def _conditions(config: dict[str, Any]) -> dict[str, Any]:
    """A run's config with its raw ``--KEY=VALUE`` arguments (fio's command line) read as keys,
    so two runs that differ in ``--bs`` say ``bs``, not the whole argument list."""
    found = {key: value for key, value in config.items() if key != "extra_args"}
    extra = config.get("extra_args")
    if isinstance(extra, list):
        for word in extra:
            if isinstance(word, str) and word.startswith("--"):
                key, _, value = word[2:].partition("=")
                found[key] = value if value else True
    return found
