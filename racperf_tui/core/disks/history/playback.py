"""An iostat archive played back as the Disks tab shows the present (``racperf --from``).

Every report of the paths (reader.read_history) becomes the :class:`IostatReport` live
sampling would have made of that interval, each host's in time order; showing the archive at
a moment feeds each host's :class:`IostatModel` (the live tab's: sparklines, sort, the
saturation judge with its hysteresis) the reports up to that moment, in order, exactly as the
live tab is fed one report per interval. Going on feeds only the new reports; going back
starts the host's model again from a copy kept on the way (its judge's history is the
sequence: the copy is the model as it was after that many reports).

Reports are kept in memory, about 540 bytes per device per report (measured: 200,000 rows,
108 MB): a day of OSWatcher at its default 30 s snapshots (8,640 reports) of 50 devices is
about 230 MB per host. ``racperf iostat --from`` streams instead, in bounded memory.
"""

from __future__ import annotations

import bisect
import copy
import datetime as dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport, HistoryRow, Problem
from racperf_tui.core.disks.iostat_math import IostatReport, IostatRow
from racperf_tui.core.disks.iostat_model import IostatModel

#: how many reports apart a host's model is kept for going back: a copy costs about 70 ms and
#: 1.5 MB (50 devices), feeding a report about 1.5 ms, so a step back near the end of a day of
#: OSWatcher (8,640 reports) costs under half a second instead of 13 s from the start
CHECKPOINT_EVERY = 256

#: the host of reports whose file names no host (a plain ``iostat -x -t`` log without banner)
UNKNOWN_HOST = "(host unknown)"
_PARTITION = re.compile(r"^(?P<disk>.+?)p?\d+$")


def _partitions(rows: list[HistoryRow]) -> set[str]:
    """The names in one report that are a partition of another name in it (sda1 of sda,
    nvme0n1p2 of nvme0n1): iostat -p lists both, and the Disks tab hides partitions."""
    names = {row.device for row in rows}
    found = set()
    for name in names:
        match = _PARTITION.match(name)
        if match and match["disk"] in names and match["disk"] != name:
            found.add(name)
    return found


def as_iostat_report(report: HistoryReport, wall_time: float) -> IostatReport:
    """``report`` as live sampling would have made it; a figure the file lacks is NaN (the
    table shows '-', the saturation judge finds nothing in it: nothing is invented)."""
    partitions = _partitions(report.rows)
    rows = [
        IostatRow._make(
            (
                row.device,
                *(math.nan if value is None else value for value in row.values),
                row.device in partitions,
                row.device,
            )
        )
        for row in report.rows
    ]
    return IostatReport(wall_time, report.interval_s or 0.0, rows, [], since_boot=report.since_boot)


@dataclass
class HostSeries:
    """One host's reports in time order and the model they are fed to."""

    host: str
    times: list[float] = field(default_factory=list)  # seconds from the archive's start
    reports: list[IostatReport] = field(default_factory=list)
    model: IostatModel = field(default_factory=IostatModel)
    new_model: Callable[[], IostatModel] = IostatModel
    #: how many reports the model was fed
    fed: int = 0
    #: the model as it was after every CHECKPOINT_EVERY reports (reports fed -> a copy)
    checkpoints: dict[int, IostatModel] = field(default_factory=dict)

    def show_until(self, at_s: float) -> bool:
        """Feed the model the reports up to ``at_s``; True when what it shows changed. Going
        back starts again from the last checkpoint at or before that report."""
        count = bisect.bisect_right(self.times, at_s)
        if count == self.fed:
            return False
        if count < self.fed:
            kept = max((n for n in self.checkpoints if n <= count), default=0)
            start = copy.deepcopy(self.checkpoints[kept]) if kept else self.new_model()
            self.model = _same_view(start, self.model)
            self.fed = kept
        for report in self.reports[self.fed : count]:
            self.model.update(report, record_history=not report.since_boot)
            self.fed += 1
            if self.fed % CHECKPOINT_EVERY == 0 and self.fed not in self.checkpoints:
                self.checkpoints[self.fed] = copy.deepcopy(self.model)
        return True

    @property
    def current(self) -> IostatReport | None:
        return self.reports[self.fed - 1] if self.fed else None


def _same_view(model: IostatModel, before: IostatModel) -> IostatModel:
    """A new model with the view settings of the one it replaces (sort, filters)."""
    model.sort_key = before.sort_key
    model.show_partitions = before.show_partitions
    model.name_pattern = before.name_pattern
    return model


@dataclass
class ArchivePlayback:
    """Every host of an archive, on one timeline (see the module doc)."""

    hosts: dict[str, HostSeries]
    frames: tuple[float, ...]
    origin: dt.datetime | None
    problems: list[Problem]

    @classmethod
    def read(
        cls,
        paths: list[Path],
        devices: frozenset[str] | None = None,
        new_model: Callable[[], IostatModel] = IostatModel,
    ) -> ArchivePlayback:
        """Read the paths (problems kept, named by file and line). Reports without a time
        (iostat without ``-t``) follow the one before by their interval (1 s when unknown)."""
        hosts: dict[str, HostSeries] = {}
        problems: list[Problem] = []
        timed: list[tuple[str, dt.datetime | None, HistoryReport]] = []
        for item in read_history(paths, devices):
            if isinstance(item, Problem):
                problems.append(item)
            else:
                timed.append((item.host or UNKNOWN_HOST, item.time, item))
        known = [when for _host, when, _report in timed if when is not None]
        origin = min(known, key=_epoch) if known else None
        start = _epoch(origin) if origin is not None else 0.0
        last: dict[str, float] = {}
        for host, when, report in timed:
            series = hosts.setdefault(host, HostSeries(host, model=new_model(), new_model=new_model))
            if when is not None:
                at = _epoch(when)
            else:
                at = last.get(host, start - 1.0) + (report.interval_s or 1.0)
            if series.times and at < series.times[-1] + start:
                problems.append(Problem(report.source, report.line, "a report older than the one before: skipped"))
                continue
            last[host] = at
            series.times.append(at - start)
            series.reports.append(as_iostat_report(report, at))
        frames = tuple(sorted({t for series in hosts.values() for t in series.times}))
        return cls(hosts, frames, origin, problems)

    def show_until(self, at_s: float) -> list[str]:
        """Every host's model fed up to ``at_s``; the hosts whose figures changed."""
        return [name for name, series in self.hosts.items() if series.show_until(at_s)]


def _epoch(when: dt.datetime) -> float:
    """Seconds since the epoch; a time without a zone is the local time it was written in."""
    return when.timestamp()
