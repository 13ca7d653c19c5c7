"""What a report says, gathered from the store: the verdict, each run's figures, series,
devices, conditions and digests, and the comparison when there are several runs.

Everything here is read from what the run recorded (its record, samples, result, raw streams:
``conditions``, ``iostat``, ``saturation``, ``foreign_io``, ``safety``, ``file:NAME``), never
from this machine now: a report written a month later, elsewhere, says the same.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from racperf_tui import __version__
from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.quantities import result_throughput_mbit_s, throughput_intervals
from racperf_tui.core.contract.tool import MetricSpec, ResultTable, ToolDescription
from racperf_tui.core.criteria import Criterion, Verdict
from racperf_tui.core.disks.iostat_record import IOSTAT_STREAM, IostatInterval, recorded_iostat
from racperf_tui.core.disks.saturation import EPISODES_STREAM, FOREIGN_IO_STREAM, recorded_episodes
from racperf_tui.core.net_guidance import Verdict as NetVerdict
from racperf_tui.core.net_guidance import interconnect_verdict, throughput_drops
from racperf_tui.core.store import GroupNotFound, RunRecord, Store
from racperf_tui.orchestration.compare import Comparison, compare_runs
from racperf_tui.orchestration.run_conditions import CONDITIONS_STREAM, last_json_object
from racperf_tui.reporting.figures import full
from racperf_tui.tools import tool_description
from racperf_tui.tools.orion.maxima import OrionMatrix, OrionMaximum, orion_matrices, orion_maxima

#: the raw streams a digest is given of: what the benchmark printed and the files it wrote
DIGESTED_PREFIXES = ("stdout", "stderr", "result:")


class ReportRefused(ValueError):
    """A run that cannot be reported (failed, empty); the message is one line naming it."""


@dataclass(frozen=True)
class Figure:
    """A headline figure: its spec and the value in the stored unit."""

    spec: MetricSpec
    value: float

    @property
    def text(self) -> str:
        return full(self.spec, self.value)


@dataclass(frozen=True)
class Series:
    """One chart's lines over the run: (seconds since start, value in the shown unit)."""

    title: str
    unit: str
    lines: dict[str, list[tuple[float, float]]]
    x_title: str = "seconds since the run started"


@dataclass(frozen=True)
class DeviceSummary:
    """A device's iostat over the run: mean and peak of the figures a DBA reads first."""

    name: str
    intervals: int
    mean: dict[str, float]
    peak: dict[str, float]


@dataclass(frozen=True)
class Digest:
    stream: str
    size_bytes: int
    sha256: str


@dataclass
class ReportRun:
    record: RunRecord
    description: ToolDescription
    result: dict[str, Any] | None
    figures: list[Figure]
    #: what the figures are when they are not the result's (a run still going)
    figures_note: str
    tables: list[ResultTable]
    notes: list[str]
    series: list[Series]
    iostat: list[IostatInterval]
    devices: list[DeviceSummary]
    iostat_series: list[Series]
    episodes: list[dict[str, Any]]
    foreign_io: list[str]
    conditions: dict[str, Any] | None
    safety: dict[str, Any] | None
    files: dict[str, str]
    digests: list[Digest]
    sample_count: int
    verdicts: list[Verdict] = field(default_factory=list)
    network: NetVerdict | None = None
    orion: list[OrionMaximum] = field(default_factory=list)
    matrices: list[OrionMatrix] = field(default_factory=list)

    @property
    def unfinished(self) -> bool:
        return self.record.state in (RunState.PENDING, RunState.RUNNING)


@dataclass(frozen=True)
class Knee:
    """A sweep's knee, from the run group a reported run belongs to."""

    group_id: int
    iops: float | None
    lat_mean_us: float | None
    lat_p99_us: float | None
    point: dict[str, Any]


@dataclass
class Report:
    runs: list[ReportRun]
    criteria: list[Criterion]
    comparison: Comparison | None
    knees: list[Knee]
    generated_at: float
    racperf_version: str = __version__

    @property
    def outcome(self) -> str:
        """PASS (every criterion passed in every run), FAIL, or '' without criteria."""
        if not self.criteria:
            return ""
        every = [v.outcome for run in self.runs for v in run.verdicts]
        return "PASS" if every and all(outcome == "pass" for outcome in every) else "FAIL"


def gather_report(store: Store, run_ids: Sequence[int], criteria: Sequence[Criterion] = ()) -> Report:
    """The report of ``run_ids`` (RunNotFound for an unknown id, ReportRefused for a failed or
    empty run); a run still going is reported as far as it went."""
    records = [store.get_run(run_id) for run_id in run_ids]
    for record in records:
        _check_reportable(store, record)
    runs = [_run(store, record, criteria) for record in records]
    comparison = compare_runs(store, [r.id for r in records]) if len(records) > 1 else None
    return Report(
        runs=runs,
        criteria=list(criteria),
        comparison=comparison,
        knees=_knees(store, records),
        generated_at=time.time(),
    )


def _check_reportable(store: Store, record: RunRecord) -> None:
    if record.state is RunState.FAILED:
        why = f": {record.message}" if record.message else ""
        raise ReportRefused(f"run {record.id} failed{why}: nothing to report")
    if store.result(record.id) is None and store.sample_count(record.id) == 0:
        state = "is still starting" if record.state is RunState.PENDING else f"{record.state.value} before any figure"
        raise ReportRefused(f"run {record.id} {state}: it has no figures to report")


def _description(tool: str) -> ToolDescription:
    try:
        return tool_description(tool)
    except Exception:
        return ToolDescription(name=tool)  # a tool no longer installed: its record still reads


def _run(store: Store, record: RunRecord, criteria: Sequence[Criterion]) -> ReportRun:
    description = _description(record.tool)
    result = store.result(record.id)
    samples = [sample for _seq, sample in store.samples(record.id)]
    found = description.result_figures(result)
    figures_note = ""
    if result is None:
        found = _interval_means(description, samples)
        figures_note = (
            f"No result yet: each figure is the mean of its {len(samples)} interval figures so far "
            "(a mean of interval percentiles is not the run's percentile)."
        )
    figures = [Figure(spec, found[spec.key]) for spec in description.results if found.get(spec.key)]
    iostat = recorded_iostat(store.raw_output(record.id, IOSTAT_STREAM))
    foreign = store.raw_output(record.id, FOREIGN_IO_STREAM).strip().splitlines()
    return ReportRun(
        record=record,
        description=description,
        result=result,
        figures=figures,
        figures_note=figures_note,
        tables=_tables(description, result),
        notes=description.result_notes(result),
        series=_series(description, samples),
        iostat=iostat,
        devices=_device_summaries(iostat),
        iostat_series=_iostat_series(iostat, record.started_at),
        episodes=recorded_episodes(store.raw_output(record.id, EPISODES_STREAM)),
        foreign_io=foreign[-1:],
        conditions=last_json_object(store.raw_output(record.id, CONDITIONS_STREAM)),
        safety=last_json_object(store.raw_output(record.id, "safety")),
        files=_files(store, record.id),
        digests=_digests(store, record.id),
        sample_count=len(samples),
        verdicts=[criterion.judge(found) for criterion in criteria],
        network=_network(description, record, result, samples),
        orion=orion_maxima(result),
        matrices=orion_matrices(result),
    )


def _tables(description: ToolDescription, result: dict[str, Any] | None) -> list[ResultTable]:
    """The tool's result tables, but ORION's matrices and maxima: the report lays them out itself."""
    if result is None:
        return []
    drawn = {matrix.key for matrix in orion_matrices(result)} | ({"maxima"} if orion_maxima(result) else set())
    return [table for table in description.result_sections(result) if table.key not in drawn]


def _interval_means(description: ToolDescription, samples: list[Sample]) -> dict[str, float]:
    """A run without a result (still going): each declared figure its samples carry, averaged."""
    found = {}
    for spec in description.results:
        values = [
            float(value)
            for sample in samples
            if isinstance(value := sample.metrics.get(spec.key), (int, float)) and not isinstance(value, bool)
        ]
        if values:
            found[spec.key] = sum(values) / len(values)
    return found


def _series(description: ToolDescription, samples: list[Sample]) -> list[Series]:
    """The result view's charts (metrics sharing a ``chart`` on one axis, one unit each)."""
    seen = list(dict.fromkeys(key for sample in samples for key in sample.metrics))
    out = []
    for unit, specs in description.charts(seen):
        lines = {
            spec.label: [
                (sample.t, spec.shown(float(sample.metrics[spec.key])))
                for sample in samples
                if isinstance(sample.metrics.get(spec.key), (int, float))
            ]
            for spec in specs
        }
        lines = {label: points for label, points in lines.items() if any(value for _t, value in points)}
        if lines:
            out.append(Series(_chart_title([spec.label for spec in specs]) or specs[0].chart, unit, lines))
    return out


def _chart_title(labels: list[str]) -> str:
    """What a chart's lines have in common, from their labels ("read IOPS", "write IOPS": IOPS;
    "read clat p50", "write clat p99": clat)."""
    common = [word for word in labels[0].split() if all(word in label.split() for label in labels[1:])]
    return " ".join(common)


#: the iostat figures a report charts and sums up, with their units
IOSTAT_FIGURES = (("await", "ms"), ("avgqu-sz", ""), ("%util", "%"), ("r/s", "IOPS"), ("w/s", "IOPS"))


def _device_summaries(iostat: list[IostatInterval]) -> list[DeviceSummary]:
    names = sorted({name for interval in iostat for name in interval.devices})
    out = []
    for name in names:
        rows = [interval.devices[name] for interval in iostat if name in interval.devices]
        mean = {key: sum(row.get(key, 0.0) for row in rows) / len(rows) for key, _unit in IOSTAT_FIGURES}
        peak = {key: max(row.get(key, 0.0) for row in rows) for key, _unit in IOSTAT_FIGURES}
        out.append(DeviceSummary(name, len(rows), mean, peak))
    return out


def _iostat_series(iostat: list[IostatInterval], started_at: float) -> list[Series]:
    names = sorted({name for interval in iostat for name in interval.devices})
    out = []
    for key, unit in IOSTAT_FIGURES[:3]:
        lines = {
            name: [
                (round(interval.t - started_at, 3), interval.devices[name][key])
                for interval in iostat
                if key in interval.devices.get(name, {})
            ]
            for name in names
        }
        if any(lines.values()):
            out.append(Series(f"device {key}", unit, lines))
    return out


def _files(store: Store, run_id: int) -> dict[str, str]:
    """The files racperf wrote for the run (fio's job file): the exact job run."""
    return {
        stream.removeprefix("file:"): store.raw_output(run_id, stream)
        for stream in store.raw_streams(run_id)
        if stream.startswith("file:")
    }


def _digests(store: Store, run_id: int) -> list[Digest]:
    out = []
    for stream in store.raw_streams(run_id):
        if stream.startswith(DIGESTED_PREFIXES):
            data = store.raw_output(run_id, stream).encode()
            out.append(Digest(stream, len(data), hashlib.sha256(data).hexdigest()))
    return out


def _network(
    description: ToolDescription, record: RunRecord, result: dict[str, Any] | None, samples: list[Sample]
) -> NetVerdict | None:
    """The interconnect verdict of a network run's measuring end (a tool whose figures say
    they measure throughput in a rate unit); None for anything else."""
    if not description.end_of(record.config):
        return None
    measured = result_throughput_mbit_s(description, result)
    if measured is None:
        return None
    drops = throughput_drops(throughput_intervals(description, samples))
    return interconnect_verdict(measured, drops, record.started_at)


def _knees(store: Store, records: list[RunRecord]) -> list[Knee]:
    out = []
    for group_id in dict.fromkeys(r.group_id for r in records if r.group_id is not None):
        try:
            result = store.group_result(group_id)
        except GroupNotFound:
            continue
        knee = (result or {}).get("knee")
        if isinstance(knee, dict):
            out.append(
                Knee(
                    group_id,
                    knee.get("iops"),
                    (result or {}).get("knee_lat_mean_us"),
                    (result or {}).get("knee_lat_p99_us"),
                    knee,
                )
            )
    return out
