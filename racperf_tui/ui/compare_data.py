"""What the compare screen reads, in one place: the comparison of the marked runs
(orchestration/compare.py), their per-interval series for the overlaid charts, and the
criteria file the UI remembers.

No widgets here: :func:`load_comparison` runs in a worker thread with a store connection of
its own. The criteria file is remembered in settings.json (``compare.criteria_file``) like
racperf's other remembered paths, and vetted as the settings file is (owner and mode of the
file and every directory above it, core/guard/program_vetting.py) each time it is read: a
remembered file is read again on every compare, unseen, so another user must not be able to
change what passes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racperf_tui.core import settings
from racperf_tui.core.contract.events import Sample
from racperf_tui.core.criteria import CriteriaError, Criterion, load_criteria
from racperf_tui.core.guard.program_vetting import UntrustedPath, vet_file_for_reading
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.store import Store
from racperf_tui.orchestration.compare import Comparison, compare_runs
from racperf_tui.ui.runs_data import description_of
from racperf_tui.ui.widgets.chart import Series

#: the setting that remembers the criteria file (core/settings.py)
SETTING_CRITERIA_FILE = "compare.criteria_file"
#: charts of the compare screen: the first few of the tools' chart groups (IOPS, bandwidth, latency)
MAX_COMPARE_CHARTS = 4


@dataclass(frozen=True)
class CompareChart:
    """One overlaid chart: a line per run and metric of one unit."""

    title: str
    unit: str
    series: list[Series]


@dataclass(frozen=True)
class CompareData:
    """A comparison as the screen shows it; ``error`` instead when it could not be made."""

    comparison: Comparison | None = None
    charts: list[CompareChart] = field(default_factory=list)
    criteria_file: str | None = None
    error: str = ""
    #: why the criteria file could not be used (the figures are compared all the same)
    criteria_error: str = ""


def load_comparison(
    data_dir: Any, run_ids: Sequence[int], baseline: int | None, criteria_file: str | None
) -> CompareData:
    """The comparison of ``run_ids`` (``baseline`` among them) judged by the criteria file's
    criteria when one is named; a one-line ``error`` for a run that is gone, a criteria file
    that cannot be read or is not trusted, a store that cannot be read."""
    criteria_error = ""
    try:
        criteria = read_criteria(criteria_file) if criteria_file else []
    except CriteriaError as exc:
        criteria, criteria_error = [], str(exc)
    try:
        with Store.open(resolve_data_dir(data_dir), read_only=True) as store:
            comparison = compare_runs(store, run_ids, baseline, criteria)
            samples = {run.id: [sample for _seq, sample in store.samples(run.id)] for run in comparison.runs}
    except KeyError as exc:  # RunNotFound
        return CompareData(error=f"run {exc.args[0] if exc.args else '?'} is no longer in the store")
    except Exception as exc:  # noqa: BLE001 - one line on the screen, never a traceback
        return CompareData(error=str(exc) or type(exc).__name__)
    return CompareData(comparison, overlaid_charts(comparison, samples), criteria_file, criteria_error=criteria_error)


def overlaid_charts(comparison: Comparison, samples: dict[int, list[Sample]]) -> list[CompareChart]:
    """A chart per unit the runs' tools chart (IOPS, bandwidth, latency...), each with a line
    per run and metric (``#12 read IOPS``) over the seconds since its start; metrics that
    stayed 0 in every run (the idle direction) left out."""
    seen = [
        key
        for key in dict.fromkeys(k for run_samples in samples.values() for s in run_samples for k in s.metrics)
        if any(s.metrics.get(key) for run_samples in samples.values() for s in run_samples)
    ]
    description = description_of(comparison.runs[comparison.baseline].tool)
    charts = []
    for unit, specs in description.charts(seen)[:MAX_COMPARE_CHARTS]:
        lines = []
        for spec in specs:
            for run in comparison.runs:
                points = [
                    (s.t, spec.shown(value))
                    for s in samples.get(run.id, [])
                    if isinstance(value := s.metrics.get(spec.key), (int, float))
                ]
                if points:
                    label = f"#{run.id} {spec.label}" if len(specs) > 1 else f"#{run.id}"
                    lines.append(Series(label, [p[0] for p in points], [p[1] for p in points]))
        name = specs[0].label if len(specs) == 1 else (unit or ", ".join(spec.label for spec in specs))
        charts.append(
            CompareChart(f"{name} per interval" + (f" ({unit})" if unit and len(specs) == 1 else ""), unit, lines)
        )
    return charts


def read_criteria(path: str) -> list[Criterion]:
    """The criteria of a file the UI names or remembers, vetted first (CriteriaError says
    why not, naming the file)."""
    try:
        vet_file_for_reading(os.path.abspath(os.path.expanduser(path)), "the criteria file")
    except UntrustedPath as exc:
        raise CriteriaError(str(exc)) from None
    except OSError as exc:
        raise CriteriaError(f"{path}: cannot read the criteria: {exc.strerror or exc}") from None
    return load_criteria(os.path.expanduser(path))


def remembered_criteria_file(data_dir: Any) -> str | None:
    """The criteria file named last in the UI (None: none, or settings that cannot be read)."""
    try:
        found = settings.get(SETTING_CRITERIA_FILE, None, data_dir=data_dir)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, str) and found else None


def remember_criteria_file(data_dir: Any, path: str | None) -> str | None:
    """Check ``path`` (read and parsed: CriteriaError says why not) and remember it, absolute;
    None or "" forgets it. Returns what is remembered."""
    if not path:
        settings.set(SETTING_CRITERIA_FILE, None, data_dir=data_dir)
        return None
    absolute = str(Path(path).expanduser().absolute())
    read_criteria(absolute)
    settings.set(SETTING_CRITERIA_FILE, absolute, data_dir=data_dir)
    return absolute
