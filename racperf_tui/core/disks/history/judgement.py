"""The saturation rule (core/disks/saturation.py) applied to an archive's reports, as live.

Each host's devices get one SaturationJudge each, fed the archive's intervals in the order
read (each host's in time order): the same thresholds, streaks and reasons as the Disks tab.
What differs from live, and why:

- a since-boot report (the first of each iostat invocation, e.g. the first of each
  OSWatcher snapshot's three) is no sample of a moment: it is not fed (its devices are ok);
- an archive carries no queue limit (no sysfs of that node then): the "queue full" cue never
  fires; "no more throughput", queueing and busy do. NVMe devices (by name) serve many I/Os
  at once, as live;
- the judge's clock is the report's own time (seconds since the epoch; a time without zone
  taken as UTC and given back without zone); a report without a time is counted in reports:
  its episodes have no start or end time, only report numbers;
- the samples are fed one after the other: a gap between two snapshots (OSWatcher's 28 s) is
  not a reset: the rule counts samples, and those are the samples of the device there are;
- a device without r/s and w/s (``sar -d``) is judged on IOPS = 2 x (rkB/s + wkB/s) /
  avgrq-sz: its read and write requests (sysstat 12's areq-sz counts discards too, so this
  is below tps when the device discarded); with no request size either, it is not judged.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from racperf_tui.core.disks.history.report import HistoryReport, HistoryRow
from racperf_tui.core.disks.saturation import (
    OK,
    DeviceSample,
    Episode,
    QueueLimit,
    SaturationJudge,
    SaturationRules,
    Verdict,
)

_EPOCH = dt.datetime(1970, 1, 1)
#: what differs from live, said once wherever an archive's judgement is shown
ARCHIVE_RULE_NOTE = (
    "an archive has no queue limits (queue full never fires); since-boot reports are not judged "
    "nor counted; samples are fed in order, gaps between snapshots included"
)
_NOT_JUDGED = Verdict()

# racperf's columns (iostat_math.COLUMNS) by index
R_S, W_S, RKB_S, WKB_S, AVGRQ_SZ, AVGQU_SZ, AWAIT, UTIL = 0, 1, 2, 3, 6, 7, 8, 12


def iops_of(values: tuple[float | None, ...]) -> float | None:
    """r/s + w/s; where the file has no r/s, w/s (sar -d), the read and write requests its
    kB/s and request size make (0 when it moved nothing); None when neither is known."""
    r_s, w_s = values[R_S], values[W_S]
    if r_s is not None and w_s is not None:
        return r_s + w_s
    size, rkb, wkb = values[AVGRQ_SZ], values[RKB_S], values[WKB_S]
    if rkb is None or wkb is None:
        return None
    if rkb + wkb == 0:
        return 0.0
    return 2.0 * (rkb + wkb) / size if size else None


def mb_s_of(values: tuple[float | None, ...]) -> float:
    return ((values[RKB_S] or 0.0) + (values[WKB_S] or 0.0)) / 1024.0


def seconds_of(when: dt.datetime) -> float:
    """The judge's clock: seconds since the epoch (a time without a zone taken as UTC)."""
    return when.timestamp() if when.tzinfo is not None else (when - _EPOCH).total_seconds()


@dataclass(slots=True)
class HostClock:
    """How one host's judge clock reads back: the zone of its times, or report numbers."""

    zone: dt.tzinfo | None = None
    timed: bool = False
    reports: int = 0  # the host's reports so far (the clock of reports without a time)

    def time_of(self, seconds: float) -> dt.datetime | None:
        if not self.timed:
            return None
        if self.zone is None:
            return _EPOCH + dt.timedelta(seconds=seconds)
        return dt.datetime.fromtimestamp(seconds, self.zone)


@dataclass(frozen=True, slots=True)
class ArchiveEpisode:
    """One flagged episode of a device in an archive, with its times as the archive has them."""

    host: str
    device: str
    level: str
    reason: str
    start: dt.datetime | None
    end: dt.datetime | None
    # without times: the host's report numbers (1 = its first, since-boot ones counted)
    start_report: int | None
    end_report: int | None
    open: bool  # still going when the archive ends

    def as_dict(self) -> dict[str, object]:
        duration = (self.end - self.start).total_seconds() if self.start and self.end else None
        return {
            "device": self.device,
            "level": self.level,
            "reason": self.reason,
            "start": None if self.start is None else self.start.isoformat(timespec="seconds"),
            "end": None if self.end is None else self.end.isoformat(timespec="seconds"),
            "duration_s": duration,
            "start_report": self.start_report,
            "end_report": self.end_report,
            "open": self.open,
        }


@dataclass
class ArchiveJudge:
    """Feeds each report's devices to their judges; keeps every host's episodes."""

    rules: SaturationRules
    judges: dict[tuple[str, str], SaturationJudge] = field(default_factory=dict)
    clocks: dict[str, HostClock] = field(default_factory=dict)
    episodes: list[ArchiveEpisode] = field(default_factory=list)

    def clock(self, host: str) -> HostClock:
        clock = self.clocks.get(host)
        if clock is None:
            clock = self.clocks[host] = HostClock()
        return clock

    def judge(self, report: HistoryReport) -> list[Verdict]:
        """Each row's verdict after this report (ok for a since-boot report: not judged)."""
        clock = self.clock(report.host)
        clock.reports += 1
        if report.since_boot:
            return [_NOT_JUDGED] * len(report.rows)
        if report.time is not None:
            clock.timed, clock.zone = True, report.time.tzinfo
            now = seconds_of(report.time)
        else:
            now = float(clock.reports)
        return [self._feed(report.host, row, now) for row in report.rows]

    def _feed(self, host: str, row: HistoryRow, now: float) -> Verdict:
        key = (host, row.device)
        judge = self.judges.get(key)
        if judge is None:
            judge = self.judges[key] = SaturationJudge(self.rules, row.device)
        values = row.values
        iops = iops_of(values)
        if iops is None:
            return judge.verdict
        qu, util = values[AVGQU_SZ] or 0.0, values[UTIL] or 0.0
        if not (qu == 0 and iops == 0 and util < self.rules.busy_util_pct and judge.feed_idle()):
            limit = QueueLimit(None, "no queue limit in an archive", row.device.startswith("nvme"))
            judge.feed(DeviceSample(qu, iops, mb_s_of(values), values[AWAIT] or 0.0, util, now), limit)
        for episode in judge.take_finished():
            self._keep(host, episode, is_open=False)
        return judge.verdict

    def _keep(self, host: str, episode: Episode, is_open: bool) -> None:
        clock = self.clock(host)
        self.episodes.append(
            ArchiveEpisode(
                host,
                episode.device,
                episode.level,
                episode.reason,
                clock.time_of(episode.since),
                clock.time_of(episode.until),
                None if clock.timed else int(episode.since),
                None if clock.timed else int(episode.until),
                is_open,
            )
        )

    def finish(self) -> list[ArchiveEpisode]:
        """Every episode, those still going when the archive ends included (open)."""
        for (host, _device), judge in self.judges.items():
            if judge.episode is not None:
                self._keep(host, judge.episode, is_open=True)
                judge.episode = None
        return self.episodes


def verdict_dict(verdict: Verdict, clock: HostClock) -> dict[str, object]:
    """{"level", "reason", "since"} as live's --json: since the ISO time the level began
    (null when ok, or when the archive has no times)."""
    since = clock.time_of(verdict.since) if verdict.level != OK else None
    return {
        "level": verdict.level,
        "reason": verdict.reason,
        "since": None if since is None else since.isoformat(timespec="seconds"),
    }
