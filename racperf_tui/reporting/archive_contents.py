"""What a report of an iostat archive says (``racperf report --from PATH``): the archive read
(core/disks/history/reader.py), judged by the live rule (judgement.ArchiveJudge) and summed up
(summary.ArchiveSummary) exactly as ``racperf iostat --from --summary`` does, plus what the
summary does not keep: each device's figures over time for the charts, and the provenance.

The charts' points are kept in bounded memory whatever the archive's length: bucket means whose
size doubles (adjacent buckets merged) whenever charts.MAX_POINTS are held, so the
chart draws them as they are and its title says the one bucket size.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from racperf_tui import __version__
from racperf_tui.core.disks.history.archive import Source, container_of
from racperf_tui.core.disks.history.judgement import AVGQU_SZ, AWAIT, UTIL, ArchiveJudge, iops_of, mb_s_of
from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport, Problem
from racperf_tui.core.disks.history.summary import ArchiveSummary, DeviceSummary
from racperf_tui.core.disks.saturation import LEVELS, OK, SaturationRules
from racperf_tui.reporting.charts import MAX_POINTS
from racperf_tui.reporting.contents import ReportRefused, Series

_HASH_CHUNK = 1 << 20
#: the charts of a device: (title, unit, the lines' labels)
CHARTS = (
    ("IOPS", "IOPS", ("IOPS",)),
    ("Throughput", "MB/s", ("MB/s",)),
    ("await", "ms", ("await",)),
    ("%util and avgqu-sz", "", ("%util", "avgqu-sz")),
)


@dataclass(slots=True)
class Bucketed:
    """A line's points as bucket means of ``size`` consecutive points, bounded in number."""

    size: int = 1
    points: list[tuple[float, float]] = field(default_factory=list)
    pending: list[tuple[float, float]] = field(default_factory=list)

    def add(self, t: float, value: float) -> None:
        self.pending.append((t, value))
        if len(self.pending) < self.size:
            return
        self.points.append((self.pending[-1][0], sum(v for _t, v in self.pending) / len(self.pending)))
        self.pending.clear()
        # at MAX_POINTS (even: every point has its pair), so the chart gets at most MAX_POINTS
        # and draws them as they are
        if len(self.points) >= MAX_POINTS:
            pairs = zip(self.points[0::2], self.points[1::2])
            self.points = [(b[0], (a[1] + b[1]) / 2) for a, b in pairs]
            self.size *= 2

    def means(self) -> list[tuple[float, float]]:
        tail = self.pending
        extra = [(tail[-1][0], sum(v for _t, v in tail) / len(tail))] if tail else []
        return self.points + extra


@dataclass
class DeviceCharts:
    """One device's figures over the archive's time, as seconds since the host's first time."""

    lines: dict[str, Bucketed] = field(
        default_factory=lambda: {label: Bucketed() for _t, _u, ls in CHARTS for label in ls}
    )

    def series(self, start: dt.datetime | None) -> list[Series]:
        since = "seconds since " + (start.isoformat(timespec="seconds") if start is not None else "the first report")
        out = []
        for title, unit, labels in CHARTS:
            size = max(self.lines[label].size for label in labels)
            shown = title + (f", each point the mean of {size} intervals" if size > 1 else "")
            out.append(Series(shown, unit, {label: self.lines[label].means() for label in labels}, x_title=since))
        return out


@dataclass(frozen=True)
class FileRead:
    path: str
    size_bytes: int  # -1: unreadable
    sha256: str  # or why it could not be read


@dataclass
class SourceSeen:
    """One file of the archive as read: its reports, their host and span."""

    name: str
    format: str  # what it was read as (iostat -x, sar -d) and from (OSWatcher file, gzip, ...)
    hosts: set[str] = field(default_factory=set)
    reports: int = 0
    since_boot: int = 0
    first: dt.datetime | None = None
    last: dt.datetime | None = None


@dataclass(frozen=True)
class DeviceVerdict:
    host: str
    device: str
    level: str
    when: str  # the first episode at that level: its span, or "-"
    reason: str


@dataclass
class ArchiveReport:
    paths: list[str]
    summary: ArchiveSummary
    rules: SaturationRules
    files: list[FileRead]
    sources: list[SourceSeen]
    problems: list[Problem]
    charts: dict[tuple[str, str], list[Series]]
    generated_at: float = field(default_factory=time.time)
    racperf_version: str = __version__

    def verdicts(self) -> list[DeviceVerdict]:
        """Per host and device, the worst level it reached and when (its first episode there)."""
        out = []
        for host, devices in self.summary.hosts().items():
            for device in devices:
                out.append(_device_verdict(host, device))
        return sorted(out, key=lambda v: -LEVELS.index(v.level))


def _device_verdict(host: str, device: DeviceSummary) -> DeviceVerdict:
    worst = max((LEVELS.index(row["worst"]) for row in device.hour_rows()), default=0)
    for episode in device.episodes:
        worst = max(worst, LEVELS.index(episode.level))
    level = LEVELS[worst]
    at_level = [e for e in device.episodes if e.level == level]
    if at_level:
        first = at_level[0]
        if first.start is not None and first.end is not None:
            when = f"{first.start.isoformat(timespec='seconds')} .. {first.end.isoformat(timespec='seconds')}"
        else:
            when = f"reports {first.start_report} .. {first.end_report}"
        return DeviceVerdict(host, device.device, level, when, first.reason)
    hours = [row for row in device.hour_rows() if row["worst"] == level and level != OK]
    when = f"in the hour of {hours[0]['hour']}" if hours else "-"
    return DeviceVerdict(host, device.device, level, when, "")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while data := f.read(_HASH_CHUNK):
            digest.update(data)
    return digest.hexdigest()


def files_of(paths: list[Path]) -> list[FileRead]:
    """Each file given, and each file inside a directory given: its size and sha256."""
    out = []
    for path in paths:
        found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for one in found:
            try:
                out.append(FileRead(str(one), one.stat().st_size, sha256_of(one)))
            except OSError as exc:  # the reader names it too, as a file not read
                out.append(FileRead(str(one), -1, f"unreadable: {exc.strerror}"))
    return out


def gather_archive(paths: list[Path], devices: frozenset[str] | None, rules: SaturationRules) -> ArchiveReport:
    """Read, judge and sum up the archive as ``iostat --from --summary`` does; ReportRefused
    when a path is missing or nothing in them is an iostat or sar report."""
    for path in paths:
        if not path.exists():
            raise ReportRefused(f"{path}: no such file or directory")
    files = files_of(paths)
    judge = ArchiveJudge(rules)
    summary = ArchiveSummary()
    problems: list[Problem] = []
    sources: dict[str, SourceSeen] = {}
    charts: dict[tuple[str, str], DeviceCharts] = {}
    starts: dict[str, dt.datetime] = {}

    def opened(source: Source, kind: str) -> None:
        sources[source.name] = SourceSeen(source.name, ", ".join(filter(None, (kind, container_of(source.name)))))

    for item in read_history(paths, devices, opened):
        if isinstance(item, Problem):
            problems.append(item)
            continue
        summary.add(item, judge.judge(item))
        _see(sources, item)
        if item.since_boot or item.time is None:
            continue
        start = starts.setdefault(item.host, item.time)
        _chart(charts, item, (item.time - start).total_seconds())
    summary.take_episodes(judge.finish())
    if not summary.devices:
        why = f" ({problems[0]})" if problems else ""
        raise ReportRefused(f"no iostat or sar -d report in {' '.join(str(p) for p in paths)}{why}")
    return ArchiveReport(
        [str(p) for p in paths],
        summary,
        rules,
        files,
        list(sources.values()),
        problems,
        {key: one.series(starts.get(key[0])) for key, one in charts.items()},
    )


def _see(sources: dict[str, SourceSeen], report: HistoryReport) -> None:
    seen = sources[report.source]
    seen.hosts.add(report.host)
    seen.reports += 1
    seen.since_boot += report.since_boot
    if report.time is not None:
        seen.first = seen.first or report.time
        seen.last = report.time


def _chart(charts: dict[tuple[str, str], DeviceCharts], report: HistoryReport, t: float) -> None:
    for row in report.rows:
        values = row.values
        iops = iops_of(values)
        if iops is None:
            continue
        key = (report.host, row.device)
        lines = (charts.get(key) or charts.setdefault(key, DeviceCharts())).lines
        lines["IOPS"].add(t, iops)
        lines["MB/s"].add(t, mb_s_of(values))
        for label, index in (("await", AWAIT), ("%util", UTIL), ("avgqu-sz", AVGQU_SZ)):
            value = values[index]
            if value is not None:
                lines[label].add(t, value)
