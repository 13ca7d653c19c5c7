"""The saturation rule: how loaded one device is, in four levels, each with its stated reason.

One rule for every view of iostat (the Disks tab, the cluster view, the run views and
``racperf iostat --saturation``): pure Python, fed one sample of a device at a time.

- ok;
- busy: %util >= ``busy_util_pct``. Harmless on a device that serves many I/Os at once (NVMe,
  SSD arrays, loop, virtio, dm/md over several paths), where %util 100 is no limit;
- queueing: requests wait: avgqu-sz > ``queueing_min_qu`` and await >= ``queueing_ratio`` x
  the device's own await at low load (avgqu-sz <= 1) in this session, and never under
  ``latency_floor_ms``: a ratio on sub-millisecond figures (0.22 ms = 7x a 0.03 ms svctm on a
  loop device) is no evidence of waiting, and svctm none at all on a device that serves many
  I/Os at once. Before any low-load sample, no queueing cue (the other levels still apply);
- saturated: the device gives no more for more load, or its queue is at its limit:
  - queue full: avgqu-sz >= ``full_frac`` x the device's queue limit (nr_requests,
    queue_depth, ... see IostatModel.queue_limit);
  - no more throughput: at at least twice the outstanding I/O of a lower load this device
    carried in this session, IOPS and MB/s are less than ``knee_flat`` above what they were
    there, while await rose by ``knee_rise`` or more and is at or above the floor.

A level begins after ``consecutive`` samples in a row at it or above, and ends after
``release`` samples in a row below it; the reason keeps its kind (queue full, no more
throughput, ...) while that kind held within the last ``release`` samples, so it does not flip
from one second to the next.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

OK, BUSY, QUEUEING, SATURATED = "ok", "busy", "queueing", "saturated"

#: The levels, lowest first.
LEVELS: tuple[str, ...] = (OK, BUSY, QUEUEING, SATURATED)

#: Levels that flag a device ("!"); busy alone does not.
FLAGGED_LEVELS = frozenset((QUEUEING, SATURATED))

_RANK = {level: rank for rank, level in enumerate(LEVELS)}

#: RACPERF_SATURATION keys -> SaturationRules fields.
ENV_KEYS: dict[str, str] = {
    "busy": "busy_util_pct",
    "queueing": "queueing_ratio",
    "full": "full_frac",
    "samples": "consecutive",
    "knee": "knee_rise",
    "flat": "knee_flat",
    "floor": "latency_floor_ms",
    "release": "release",
}
_INTEGER_FIELDS = frozenset(("consecutive", "release"))

#: Low-load awaits kept per device for its baseline (the median of these).
BASELINE_SAMPLES = 120
#: Samples kept per load band (powers of two of avgqu-sz), and how old they may be.
BAND_SAMPLES = 20
BAND_MAX_AGE = 600


@dataclass(frozen=True, slots=True)
class SaturationRules:
    """The thresholds of the rule (module docstring); :meth:`describe` states them."""

    busy_util_pct: float = 90.0
    queueing_ratio: float = 2.0
    queueing_min_qu: float = 1.0
    full_frac: float = 0.8
    knee_rise: float = 0.3
    knee_flat: float = 0.05
    knee_window: int = 3
    latency_floor_ms: float = 2.0
    consecutive: int = 3
    release: int = 3

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> SaturationRules:
        """From RACPERF_SATURATION="busy=90,queueing=2,full=0.8,samples=3,knee=0.3,flat=0.05,
        floor=2,release=3"; ValueError names a bad entry."""
        text = (environ if environ is not None else os.environ).get("RACPERF_SATURATION", "").strip()
        if not text:
            return cls()
        values: dict[str, float | int] = {}
        for part in text.split(","):
            key, _, raw = part.partition("=")
            field_name = ENV_KEYS.get(key.strip())
            try:
                number = float(raw)
            except ValueError:
                number = float("nan")
            if field_name is None or not math.isfinite(number) or number <= 0:
                raise ValueError(
                    f"RACPERF_SATURATION: {part.strip()!r}: expected KEY=NUMBER > 0 with KEY one of "
                    f"{', '.join(ENV_KEYS)} (e.g. busy=90,queueing=2,full=0.8,samples=3,knee=0.3,floor=2)"
                )
            values[field_name] = max(1, int(number)) if field_name in _INTEGER_FIELDS else number
        return cls(**values)  # type: ignore[arg-type]

    def describe(self) -> str:
        """The rule in words, the same the code applies (footer, help, tooltip, iostat --help)."""
        return (
            f"saturated = queue full (avgqu-sz >= {self.full_frac:g} x the queue limit) or no more throughput "
            f"(at >= 2x the outstanding I/O of a lower load seen, IOPS and MB/s up < {self.knee_flat:.0%} "
            f"while await rose >= {self.knee_rise:.0%}); queueing = await >= {self.queueing_ratio:g} x the "
            f"device's own await at low load (avgqu-sz <= 1; none before one is seen) with avgqu-sz > "
            f"{self.queueing_min_qu:g}; "
            f"no latency cue under {self.latency_floor_ms:g} ms on any device; busy = %util >= "
            f"{self.busy_util_pct:g} (harmless on devices that serve many I/Os at once); a level begins "
            f"after {self.consecutive} samples in a row and ends after {self.release} below it"
        )

    def short(self) -> str:
        """The rule in the few words an 80-column alert line has room for."""
        return (
            f"! = qu>={self.full_frac:g}xlimit | flat IOPS at 2x load | await>={self.queueing_ratio:g}x"
            f"own,>={self.latency_floor_ms:g}ms"
        )


@dataclass(frozen=True, slots=True)
class DeviceSample:
    """What the rule reads of one device over one interval."""

    avgqu_sz: float
    iops: float
    mb_s: float
    await_ms: float
    util_pct: float
    wall_time: float


#: An idle interval, as the window of recent samples keeps it.
IDLE = DeviceSample(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class QueueLimit:
    """The depth a full queue of the device reaches, and where that figure comes from."""

    depth: int | None
    source: str
    serves_many: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    """A device's level now, why, and since when (wall-clock seconds)."""

    level: str = OK
    reason: str = ""
    since: float = 0.0

    @property
    def flagged(self) -> bool:
        return self.level in FLAGGED_LEVELS

    def as_dict(self) -> dict[str, object]:
        return {"level": self.level, "reason": self.reason, "since": self.since}


@dataclass(slots=True)
class Episode:
    """One spell of a device at a flagged level: when it began and ended, why, at what load."""

    device: str
    level: str
    reason: str
    since: float
    until: float
    load: str = ""  # the benchmark's load when it began ("fio point iodepth=32", "run at 4,200 IOPS")

    def as_dict(self) -> dict[str, object]:
        return {
            "device": self.device,
            "level": self.level,
            "reason": self.reason,
            "since": self.since,
            "until": self.until,
            "load": self.load,
        }


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _band(avgqu_sz: float) -> int | None:
    """The load band of an avgqu-sz: powers of two (1-2, 2-4, ...; below 0.25, none)."""
    return math.floor(math.log2(avgqu_sz)) if avgqu_sz >= 0.25 else None


@dataclass(slots=True)
class SaturationJudge:
    """The rule's memory of one device: its low-load await, the throughput it gave at each
    load band, the streaks and the current verdict. ``feed`` one sample per interval."""

    rules: SaturationRules
    name: str = ""
    verdict: Verdict = field(default_factory=Verdict)
    baseline: deque[float] = field(default_factory=lambda: deque(maxlen=BASELINE_SAMPLES))
    bands: dict[int, deque[tuple[int, DeviceSample]]] = field(default_factory=dict)
    recent: deque[DeviceSample] = field(default_factory=deque)
    streaks: list[int] = field(default_factory=lambda: [0] * len(LEVELS))
    streak_began: list[float] = field(default_factory=lambda: [0.0] * len(LEVELS))
    below: int = 0
    kind: str = ""  # the episode's reason kind ("queue full", ...)
    held: dict[str, tuple[int, str, int]] = field(default_factory=dict)  # kind -> (tick, reason, level rank)
    tick: int = 0
    finished: list[Episode] = field(default_factory=list)  # ended episodes not yet taken
    episode: Episode | None = None
    load_note: str = ""
    _baseline_median: float | None = None

    def baseline_ms(self) -> float | None:
        """The device's await at low load in this session (median), None before any."""
        if self._baseline_median is None and self.baseline:
            self._baseline_median = _median(list(self.baseline))
        return self._baseline_median

    def feed_idle(self) -> bool:
        """An idle interval (no I/O, nothing outstanding, %util under busy) of a device that is
        ok with no streak: nothing can change but the window, so only that moves (most devices
        of a host are idle on most ticks). False: not that case, :meth:`feed` it."""
        if self.verdict.level != OK or self.below or any(self.streaks[1:]):
            return False
        self.tick += 1
        self.recent.append(IDLE)
        if len(self.recent) > self.rules.knee_window:
            self.recent.popleft()
        return True

    def feed(self, sample: DeviceSample, limit: QueueLimit) -> Verdict:
        rules = self.rules
        self.tick += 1
        window = rules.knee_window
        recent = self.recent
        recent.append(sample)
        if len(recent) > window:
            recent.popleft()
        if 0 < sample.avgqu_sz <= 1.0 and sample.iops > 0 and sample.await_ms > 0:
            self.baseline.append(sample.await_ms)
            self._baseline_median = None
        kinds = self._kinds(sample, limit)
        band = _band(sample.avgqu_sz)
        if band is not None and sample.iops > 0:
            self.bands.setdefault(band, deque(maxlen=BAND_SAMPLES)).append((self.tick, sample))
        for kind, (level, reason) in kinds.items():
            self.held[kind] = (self.tick, reason, _RANK[level])
        self._step(max((_RANK[level] for level, _ in kinds.values()), default=0), sample.wall_time)
        return self.verdict

    # ---- the conditions ------------------------------------------------------------------
    def _kinds(self, sample: DeviceSample, limit: QueueLimit) -> dict[str, tuple[str, str]]:
        """Every condition that holds on this sample: kind -> (level, reason)."""
        rules = self.rules
        found: dict[str, tuple[str, str]] = {}
        qu = sample.avgqu_sz
        if limit.depth is not None and qu >= rules.full_frac * limit.depth:
            found["queue full"] = (
                SATURATED,
                f"queue full: avgqu-sz {qu:.1f} of its limit {limit.depth} ({limit.source}), "
                f"%util {sample.util_pct:.0f}",
            )
        plateau = self._plateau()
        if plateau:
            found["no more throughput"] = (SATURATED, plateau)
        base = self.baseline_ms() if qu > rules.queueing_min_qu and sample.await_ms >= rules.latency_floor_ms else None
        if base is not None and sample.await_ms >= rules.queueing_ratio * base:
            # No low-load await seen yet, no queueing cue: 7 ms at 1.4 outstanding is a
            # queue on one device and the plain service time of another.
            found["queueing"] = (
                QUEUEING,
                f"queueing: await {sample.await_ms:.2f} ms with avgqu-sz {qu:.1f}, "
                f"{sample.await_ms / base:.1f}x its low-load await {base:.2f} ms",
            )
        if sample.util_pct >= rules.busy_util_pct:
            note = (
                "harmless: this device serves many I/Os at once"
                if limit.serves_many
                else "no latency cue: requests do not wait"
            )
            found["busy"] = (BUSY, f"busy: %util {sample.util_pct:.0f} ({note})")
        return found

    def _plateau(self) -> str:
        """'no more throughput: ...' when the recent load is at least twice a lower load this
        device carried and gives no more IOPS nor MB/s, only latency; else ''."""
        rules = self.rules
        recent = self.recent
        if len(recent) < rules.knee_window or max(s.await_ms for s in recent) < rules.latency_floor_ms:
            return ""  # too few samples, or sub-floor latency (no median can be above the max)
        now_qu = _median([s.avgqu_sz for s in recent])
        top = _band(now_qu)
        if top is None:
            return ""  # next to nothing outstanding (the common case: checked first)
        now_await = _median([s.await_ms for s in recent])
        if now_await < rules.latency_floor_ms:
            return ""  # sub-floor latency: no cue, however flat the throughput
        now_iops = _median([s.iops for s in recent])
        now_mb = _median([s.mb_s for s in recent])
        oldest_tick = self.tick - BAND_MAX_AGE
        for band in sorted(b for b in self.bands if b < top):
            kept = [s for tick, s in self.bands[band] if tick >= oldest_tick]
            if len(kept) < rules.knee_window:
                continue
            low_qu = _median([s.avgqu_sz for s in kept])
            low_iops = _median([s.iops for s in kept])
            low_mb = _median([s.mb_s for s in kept])
            low_await = _median([s.await_ms for s in kept])
            if (
                now_qu >= 2 * low_qu
                and low_iops > 0
                and now_iops < low_iops * (1 + rules.knee_flat)
                and (low_mb <= 0 or now_mb < low_mb * (1 + rules.knee_flat))
                and now_await >= low_await * (1 + rules.knee_rise)
            ):
                return (
                    f"no more throughput: {now_iops:,.0f} IOPS at avgqu-sz {now_qu:.1f}, {low_iops:,.0f} at "
                    f"{low_qu:.1f}; await {low_await:.2f} -> {now_await:.2f} ms"
                )
        return ""

    # ---- levels over time ----------------------------------------------------------------
    def _step(self, candidate: int, now: float) -> None:
        """Move the verdict by the streaks (hysteresis) and keep the reason's kind."""
        rules = self.rules
        streaks = self.streaks
        if candidate == 0 and self.verdict.level == OK and streaks[1] == 0:
            # ok, and nothing above ok building up (streaks fall with the rank): only the ok
            # streak moves; the verdict stays as it is (an archive feeds millions of these)
            if streaks[0] == 0:
                self.streak_began[0] = now
            streaks[0] += 1
            self.below = 0
            return
        for rank in range(len(LEVELS)):
            if candidate >= rank:
                if self.streaks[rank] == 0:
                    self.streak_began[rank] = now
                self.streaks[rank] += 1
            else:
                self.streaks[rank] = 0
        current = _RANK[self.verdict.level]
        reached = max((r for r in range(len(LEVELS)) if self.streaks[r] >= rules.consecutive), default=0)
        self.below = self.below + 1 if candidate < current else 0
        if reached > current:
            level, since = reached, self.streak_began[reached]
        elif current > 0 and self.below >= rules.release:
            level, since = reached, self.streak_began[reached] if reached else now
        else:
            level, since = current, self.verdict.since
        if level != current:
            self.kind = ""
        reason = self._reason(level) if level else ""
        self._record(LEVELS[level], reason, since, now)
        self.verdict = Verdict(LEVELS[level], reason, since)

    def _reason(self, rank: int) -> str:
        """The episode's reason kind while it held within the last ``release`` samples (its
        latest figures); else the kind of this level that held last."""
        recent_tick = self.tick - self.rules.release
        kind = self.kind
        if kind in self.held and self.held[kind][0] > recent_tick and self.held[kind][2] == rank:
            return self.held[kind][1]
        at_level = [(tick, k) for k, (tick, _reason, r) in self.held.items() if r == rank]
        if not at_level:
            return self.verdict.reason
        _tick, self.kind = max(at_level)
        return self.held[self.kind][1]

    def _record(self, level: str, reason: str, since: float, now: float) -> None:
        """Open, extend or close the flagged episode (kept for the run that is live)."""
        episode = self.episode
        if episode is not None and episode.level != level:
            episode.until = now
            self.finished.append(episode)
            self.episode = episode = None
        if level in FLAGGED_LEVELS:
            if episode is None:
                self.episode = Episode(self.name, level, reason, since, now, self.load_note)
            else:
                episode.until = now

    def take_finished(self) -> list[Episode]:
        """The episodes that ended since the last call (the caller keeps them)."""
        done, self.finished = self.finished, []
        return done


def clock(wall_time: float) -> str:
    """HH:MM:SS, local time: when an episode began, as the views print it."""
    return time.strftime("%H:%M:%S", time.localtime(wall_time))


def flag_text(name: str, verdict: Verdict, load: str = "") -> str:
    """One flagged device as every view lists it: 'loop1 saturated since 02:51:03 (at fio
    iodepth=32): no more throughput: ...'."""
    at = f" (at {load})" if load else ""
    return f"{name} {verdict.level} since {clock(verdict.since)}{at}: {verdict.reason}"


#: The raw output stream of a run that holds its saturation episodes (orchestration/
#: saturation_watch.py writes it; runs show and the run view read it).
EPISODES_STREAM = "saturation"
#: ... and the one that says the LUN carried I/O the benchmark did not issue (a line each time
#: the excess grows; the last says the most).
FOREIGN_IO_STREAM = "foreign_io"


def recorded_episodes(stream_text: str) -> list[dict[str, Any]]:
    """The episodes of a run's ``saturation`` stream (the last record written wins: each
    holds every episode so far); [] when there are none or the record is unreadable."""
    last = stream_text.strip().splitlines()[-1] if stream_text.strip() else ""
    try:
        episodes = json.loads(last) if last.startswith("[") else []
    except ValueError:
        return []
    return [e for e in episodes if isinstance(e, dict)] if isinstance(episodes, list) else []


def episodes_text(episodes: list[dict[str, Any]]) -> list[str]:
    """One line per episode, as ``racperf runs show`` prints them."""
    lines = []
    for episode in episodes:
        began = time.strftime("%H:%M:%S", time.localtime(float(episode.get("since", 0))))
        lasted = max(0.0, float(episode.get("until", 0)) - float(episode.get("since", 0)))
        at = f" at {episode['load']}" if episode.get("load") else ""
        lines.append(
            f"{episode.get('device', '?')} {episode.get('level', '?')} from {began} for {lasted:.0f} s{at}: "
            f"{episode.get('reason', '')}"
        )
    return lines
