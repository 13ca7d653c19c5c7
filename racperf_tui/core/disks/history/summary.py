"""An archive judged at a glance (``racperf iostat --from PATH --summary``): per host and
device, the busiest intervals, the saturation episodes (judgement.py), the await percentiles
and an hour-by-hour line.

Bounded memory whatever the archive's length: per device a few busiest intervals, one line
per hour, and the awaits as a weighted histogram of their values (to 0.01 ms below 10 ms, to
three significant digits above: 10.0-99.9 to 0.1 ms, 100-999 to 1 ms, ...), never the list.

Await percentiles are of the I/Os, not of the intervals: an interval's await (the mean of
the I/Os it completed; a file has no single I/O's latency) counts once per I/O it completed,
(r/s + w/s) x its length in seconds; an idle interval counts for nothing. The pN is the
smallest await such that at least N % of the I/Os had that await or less (nearest rank).
An interval whose length the file does not say (a plain ``iostat -x`` without ``-t``) weighs
as 1 s. Since-boot reports are left out of every figure: they cover the time since boot, not
an interval of the archive.
"""

from __future__ import annotations

import datetime as dt
import heapq
from dataclasses import dataclass, field

from racperf_tui.core.disks.history.judgement import AVGQU_SZ, AWAIT, UTIL, ArchiveEpisode, iops_of, mb_s_of, seconds_of
from racperf_tui.core.disks.history.report import HistoryReport
from racperf_tui.core.disks.saturation import LEVELS, OK, Verdict

#: busiest intervals kept per device and measure
BUSIEST = 5
PERCENTILES = (50, 95, 99)
_RANK = {level: rank for rank, level in enumerate(LEVELS)}

WEIGHTING = (
    "per I/O: each interval's await counts (r/s + w/s) x its seconds times (an interval of "
    "unknown length as 1 s); idle intervals and since-boot reports do not count; nearest rank"
)


def await_key(ms: float) -> float:
    """The histogram's bin of an await: 0.01 ms below 10 ms, three significant digits above."""
    return round(ms, 2) if ms < 10.0 else float(f"{ms:.3g}")


def weighted_percentile(histogram: dict[float, float], percent: float) -> float | None:
    """The smallest value whose cumulative weight reaches ``percent`` % of the total."""
    total = sum(histogram.values())
    if total <= 0:
        return None
    needed = total * percent / 100.0
    running = 0.0
    ordered = sorted(histogram)
    for value in ordered:
        running += histogram[value]
        if running >= needed * (1 - 1e-12):
            return value
    return ordered[-1]


@dataclass(slots=True)
class Interval:
    """One busy interval, as the summary lists it."""

    time: dt.datetime | None
    where: str  # FILE:LINE of its report
    iops: float
    mb_s: float
    await_ms: float | None
    avgqu_sz: float | None
    util_pct: float | None
    level: str

    def as_dict(self) -> dict[str, object]:
        return {
            "time": None if self.time is None else self.time.isoformat(timespec="seconds"),
            "where": self.where,
            "iops": round(self.iops, 2),
            "mb_s": round(self.mb_s, 2),
            "await_ms": None if self.await_ms is None else round(self.await_ms, 2),
            "avgqu-sz": None if self.avgqu_sz is None else round(self.avgqu_sz, 2),
            "%util": None if self.util_pct is None else round(self.util_pct, 2),
            "level": self.level,
        }


@dataclass(slots=True)
class Hour:
    """One hour of one device: sums from which its means come."""

    intervals: int = 0
    seconds: float = 0.0
    ios: float = 0.0
    kilobytes: float = 0.0
    await_ios: float = 0.0  # sum of await x I/Os (the I/O-weighted mean's numerator)
    await_weight: float = 0.0
    worst: int = 0

    def as_dict(self, hour: dt.datetime) -> dict[str, object]:
        return {
            "hour": hour.isoformat(timespec="minutes"),
            "intervals": self.intervals,
            "iops": round(self.ios / self.seconds, 2) if self.seconds else None,
            "mb_s": round(self.kilobytes / 1024.0 / self.seconds, 2) if self.seconds else None,
            "await_ms": round(self.await_ios / self.await_weight, 2) if self.await_weight else None,
            "worst": LEVELS[self.worst],
        }


@dataclass(slots=True)
class DeviceSummary:
    host: str
    device: str
    intervals: int = 0
    since_boot: int = 0
    unjudged: int = 0  # intervals with neither r/s + w/s nor a request size (no IOPS)
    first: dt.datetime | None = None
    last: dt.datetime | None = None
    awaits: dict[float, float] = field(default_factory=dict)
    max_await: float | None = None
    ios: float = 0.0
    by_iops: list[tuple[float, int, Interval]] = field(default_factory=list)  # min-heaps
    by_mb_s: list[tuple[float, int, Interval]] = field(default_factory=list)
    hours: dict[dt.datetime, Hour] = field(default_factory=dict)
    episodes: list[ArchiveEpisode] = field(default_factory=list)

    def percentiles(self) -> dict[str, object]:
        figures: dict[str, object] = {f"p{p}": weighted_percentile(self.awaits, p) for p in PERCENTILES}
        figures["max"] = self.max_await
        figures["ios"] = round(self.ios, 1)
        return figures

    def busiest(self, heap: list[tuple[float, int, Interval]]) -> list[Interval]:
        return [entry for _key, _seq, entry in sorted(heap, key=lambda item: (-item[0], -item[1]))]

    def as_dict(self) -> dict[str, object]:
        return {
            "device": self.device,
            "intervals": self.intervals,
            "since_boot_excluded": self.since_boot,
            "first": None if self.first is None else self.first.isoformat(timespec="seconds"),
            "last": None if self.last is None else self.last.isoformat(timespec="seconds"),
            "await_ms": self.percentiles(),
            "busiest": {
                "iops": [i.as_dict() for i in self.busiest(self.by_iops)],
                "mb_s": [i.as_dict() for i in self.busiest(self.by_mb_s)],
            },
            "episodes": [e.as_dict() for e in self.episodes],
            "hours": self.hour_rows(),
        }

    def hour_rows(self) -> list[dict[str, object]]:
        return [self.hours[h].as_dict(h) for h in sorted(self.hours, key=seconds_of)]


def _enters(heap: list[tuple[float, int, Interval]], key: float) -> bool:
    """Would this key be kept (an Interval is made only then: most intervals are not)?"""
    return len(heap) < BUSIEST or key > heap[0][0]


def _push(heap: list[tuple[float, int, Interval]], key: float, seq: int, entry: Interval) -> None:
    if len(heap) < BUSIEST:
        heapq.heappush(heap, (key, -seq, entry))
    elif key > heap[0][0]:
        heapq.heapreplace(heap, (key, -seq, entry))


@dataclass
class ArchiveSummary:
    """Takes the reports (and each row's verdict) one at a time; answers per host and device."""

    devices: dict[tuple[str, str], DeviceSummary] = field(default_factory=dict)
    seq: int = 0

    def add(self, report: HistoryReport, verdicts: list[Verdict]) -> None:
        self.seq += 1
        seconds = report.interval_s if report.interval_s else 1.0
        when = report.time
        hour = when.replace(minute=0, second=0, microsecond=0) if when is not None else None
        for row, verdict in zip(report.rows, verdicts):
            key = (report.host, row.device)
            device = self.devices.get(key)
            if device is None:
                device = self.devices[key] = DeviceSummary(report.host, row.device)
            if report.since_boot:
                device.since_boot += 1
                continue
            values = row.values
            iops = iops_of(values)
            if iops is None:
                device.unjudged += 1
                continue
            device.intervals += 1
            if when is not None:
                if device.first is None:
                    device.first = when
                device.last = when
            await_ms = values[AWAIT]
            ios = iops * seconds
            if await_ms is not None and ios > 0:
                bin_ = await_key(await_ms)
                device.awaits[bin_] = device.awaits.get(bin_, 0.0) + ios
                device.ios += ios
                if device.max_await is None or await_ms > device.max_await:
                    device.max_await = await_ms
            mb_s = mb_s_of(values)
            if (iops > 0 or mb_s > 0) and _enters(device.by_iops, iops) | _enters(device.by_mb_s, mb_s):
                entry = Interval(
                    when, f"{report.source}:{report.line}", iops, mb_s, await_ms, values[AVGQU_SZ], values[UTIL],
                    verdict.level,
                )  # fmt: skip
                _push(device.by_iops, iops, self.seq, entry)
                _push(device.by_mb_s, mb_s, self.seq, entry)
            if hour is not None:
                figures = device.hours.get(hour)
                if figures is None:
                    figures = device.hours[hour] = Hour()
                figures.intervals += 1
                figures.seconds += seconds
                figures.ios += ios
                figures.kilobytes += mb_s * 1024.0 * seconds
                if await_ms is not None and ios > 0:
                    figures.await_ios += await_ms * ios
                    figures.await_weight += ios
                figures.worst = max(figures.worst, _RANK[verdict.level])

    def take_episodes(self, episodes: list[ArchiveEpisode]) -> None:
        for episode in episodes:
            device = self.devices.get((episode.host, episode.device))
            if device is not None:
                device.episodes.append(episode)

    def hosts(self) -> dict[str, list[DeviceSummary]]:
        """Each host's devices, in the order first read."""
        out: dict[str, list[DeviceSummary]] = {}
        for (host, _device), summary in self.devices.items():
            out.setdefault(host, []).append(summary)
        return out


def is_idle(device: DeviceSummary) -> bool:
    """No I/O in any interval and never flagged: the text summary lists such devices by name only."""
    return (
        device.ios == 0
        and not device.by_iops
        and not device.episodes
        and all(h.worst == _RANK[OK] for h in device.hours.values())
    )
