"""The state behind the live iostat panel: per-device history, saturation, sort and filter.

Pure Python (no textual import), so the rules can be tested and reused without a terminal.
The panel feeds it one :class:`IostatReport` per tick and reads back the rows to show.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from racperf_tui.core.disks.diskstats import QueueFacts, printable_name
from racperf_tui.core.disks.iostat_math import IostatReport, IostatRow
from racperf_tui.core.disks.saturation import (
    SATURATED,
    DeviceSample,
    Episode,
    QueueLimit,
    SaturationJudge,
    SaturationRules,
    Verdict,
    flag_text,
)

#: Samples of history kept per device and metric; bounded so memory stays flat.
HISTORY_LEN = 240

#: The refresh intervals the keys step through, in seconds.
INTERVALS_S: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)


#: Sort orders: name -> (key of a row, descending?).
@lru_cache(maxsize=4096)
def natural_key(name: str) -> tuple[object, ...]:
    """Sort key putting loop2 before loop10, sda before sdb, nvme0n1 before nvme1n1.

    Digit runs compare as numbers; (is-number, value) pairs keep str and int apart so any
    two names compare, and the name itself breaks remaining ties (sda01 vs sda1). Cached:
    the same few names are sorted every tick.
    """
    parts = _DIGIT_RUNS.split(name)
    return tuple((1, int(part), "") if index % 2 else (0, 0, part) for index, part in enumerate(parts)) + (
        (0, 0, name),
    )


SORT_KEYS: dict[str, tuple[Callable[[IostatRow], float | tuple[object, ...]], bool]] = {
    "%util": (lambda r: r.util_pct, True),
    "await": (lambda r: r.await_ms, True),
    "avgqu-sz": (lambda r: r.avgqu_sz, True),
    "name": (lambda r: natural_key(r.device), False),
}

#: What a sparkline can show: name -> (value of a row, fixed scale maximum or None for auto).
SPARK_METRICS: dict[str, tuple[Callable[[IostatRow], float], float | None]] = {
    "%util": (lambda r: r.util_pct, 100.0),
    "await": (lambda r: r.await_ms, None),
    "avgqu-sz": (lambda r: r.avgqu_sz, None),
    "IOPS": (lambda r: r.r_s + r.w_s, None),
    "MB/s": (lambda r: (r.rkb_s + r.wkb_s) / 1024.0, None),
}

#: Ended flagged episodes the model keeps (a run takes its own as they end).
EPISODES_KEPT = 200

SPARK_BLOCKS = "▁▂▃▄▅▆▇█"

_DIGIT_RUNS = re.compile(r"(\d+)")


@dataclass(frozen=True, slots=True)
class AwaitThresholds:
    """await colours: green below ``warn_ms``, amber up to ``crit_ms``, red above."""

    warn_ms: float = 5.0
    crit_ms: float = 10.0

    def __post_init__(self) -> None:
        if not 0 <= self.warn_ms <= self.crit_ms:
            raise ValueError(f"await thresholds: need 0 <= warn ({self.warn_ms}) <= crit ({self.crit_ms})")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> AwaitThresholds:
        """Read ``RACPERF_AWAIT_MS="WARN,CRIT"`` (e.g. ``"2,8"``); defaults when unset."""
        env = os.environ if environ is None else environ
        text = env.get("RACPERF_AWAIT_MS", "").strip()
        if not text:
            return cls()
        try:
            warn_text, crit_text = text.split(",")
            return cls(float(warn_text), float(crit_text))
        except ValueError as exc:
            raise ValueError(f"RACPERF_AWAIT_MS={text!r}: expected 'WARN,CRIT' in ms, e.g. '5,10' ({exc})") from None

    def level(self, await_ms: float) -> str:
        """'ok', 'warn' or 'crit' for one await figure."""
        if await_ms > self.crit_ms:
            return "crit"
        if await_ms >= self.warn_ms:
            return "warn"
        return "ok"


@dataclass(slots=True)
class DeviceState:
    """Everything the panel knows about one device across ticks."""

    name: str  # display name (device-mapper names mapped)
    row: IostatRow
    kernel_name: str = ""  # the /proc/diskstats name, for sysfs
    facts: QueueFacts | None = None
    history: dict[str, deque[float]] = field(default_factory=dict)
    judge: SaturationJudge | None = None  # the saturation rule's memory of this device
    queue_limit: int | None = None
    queue_limit_source: str = ""
    serves_many: bool = False  # IostatModel.serves_many, judged with queue_limit
    limit_of_facts: QueueFacts | None = None  # the facts queue_limit was judged from
    seen_tick: int = 0
    samples: int = 0  # values appended to history so far (sparklines extend incrementally)
    spark_cache: dict[str, tuple] = field(default_factory=dict)  # owned by the table
    label: str = ""  # the name fit to print (control characters escaped), made once

    def __post_init__(self) -> None:
        if not self.label:
            self.label = printable_name(self.name)

    @property
    def verdict(self) -> Verdict:
        return self.judge.verdict if self.judge is not None else Verdict()

    @property
    def level(self) -> str:
        return self.verdict.level

    @property
    def flagged(self) -> bool:
        """queueing or saturated: marked with '!' in every view."""
        return self.verdict.flagged

    @property
    def episode_load(self) -> str:
        """The benchmark's load when the current flagged episode began ('' if unknown)."""
        judge = self.judge
        return judge.episode.load if judge is not None and judge.episode is not None else ""

    def flag_text(self) -> str:
        """'loop1 saturated since 02:51:03 (at ...): reason', printable."""
        return flag_text(self.label, self.verdict, self.episode_load)

    @property
    def saturation_reason(self) -> str:
        """Why the device is at its level ('' when ok)."""
        return self.verdict.reason

    def effective_queue_depth(self) -> int | None:
        """The queue limit the last judgement used (IostatModel.queue_limit)."""
        return self.queue_limit


class IostatModel:
    """Feeds on reports; answers which rows to show, in which order, with which flags."""

    def __init__(
        self,
        rules: SaturationRules | None = None,
        history_len: int = HISTORY_LEN,
        facts_of: Callable[[str], QueueFacts | None] | None = None,
    ) -> None:
        """``facts_of(kernel_name)`` reads a new device's queue facts (None: unknown)."""
        self.rules_error = ""
        if rules is None:
            try:
                rules = SaturationRules.from_env()
            except ValueError as exc:  # a typo in the environment: said, and the defaults used
                self.rules_error = f"{exc}; using the defaults"
                rules = SaturationRules()
        self.rules = rules
        self.facts_of = facts_of
        self.history_len = history_len
        self.devices: dict[str, DeviceState] = {}
        self.tick = 0
        self.sort_key = "%util"
        self.show_partitions = False
        self.name_pattern = ""
        self.benchmark_only = False
        self.benchmark_devices: set[str] = set()
        self.last_report: IostatReport | None = None
        #: the benchmark's load, said by the view that knows it ("fio iodepth=32"), kept
        #: with each episode that begins while it is set
        self.load_note = ""
        self.episodes: deque[Episode] = deque(maxlen=EPISODES_KEPT)  # ended flagged episodes

    # ---- feeding -------------------------------------------------------------------------
    def update(self, report: IostatReport, *, record_history: bool = True) -> None:
        """Take one report. ``record_history=False`` for the since-boot report (not a sample)."""
        self.tick += 1
        self.last_report = report
        spark_values = [(name, value_of) for name, (value_of, _scale) in SPARK_METRICS.items()]
        for row in report.rows:
            state = self.devices.get(row.device)
            if state is None:
                state = DeviceState(
                    row.device, row, history={name: deque(maxlen=self.history_len) for name in SPARK_METRICS}
                )
                state.kernel_name = row.kernel_name or row.device
                if self.facts_of is not None:
                    state.facts = self.facts_of(state.kernel_name)
                self.devices[row.device] = state
            state.row = row
            state.seen_tick = self.tick
            if record_history:
                history = state.history
                for name, value_of in spark_values:
                    history[name].append(value_of(row))
                state.samples += 1
                self._judge(state, report.wall_time)
        # Devices that disappeared (hot-unplug, loop detach) leave with their history.
        for name in [n for n, s in self.devices.items() if s.seen_tick != self.tick]:
            del self.devices[name]

    def queue_limit(self, state: DeviceState) -> tuple[int | None, str]:
        """(the depth a full queue reaches, where that figure comes from)."""
        return self._limit_of(state.kernel_name or state.name, state.facts, 0)

    def _limit_of(self, name: str, facts: QueueFacts | None, depth: int) -> tuple[int | None, str]:
        if facts is None:
            return None, "queue facts unknown"
        if facts.slaves and depth < 4 and self.facts_of is not None:
            # a dm / md device is as full as the paths or members below it, together
            limits = [self._limit_of(slave, self.facts_of(slave), depth + 1)[0] for slave in facts.slaves]
            if all(limit is not None for limit in limits):
                return sum(limit for limit in limits if limit is not None), (
                    f"its {len(limits)} {'path' if len(limits) == 1 else 'paths/members'} ({', '.join(facts.slaves)})"
                )
        if facts.queue_depth:
            return facts.queue_depth, "SCSI queue_depth"
        if facts.nr_hw_queues and facts.nr_hw_queues > 1 and facts.nr_requests and name.startswith("nvme"):
            return facts.nr_hw_queues * facts.nr_requests, (
                f"{facts.nr_hw_queues} hardware queues x nr_requests {facts.nr_requests}"
            )
        if facts.nr_requests:
            return facts.nr_requests, "nr_requests"
        return None, "no queue limit in sysfs"

    def serves_many(self, state: DeviceState) -> bool:
        """A device that serves many I/Os at once (NVMe, several blk-mq hardware queues, a
        dm/md device over several paths or members): its %util and await/svctm say little."""
        facts = state.facts
        name = state.kernel_name or state.name
        return name.startswith("nvme") or (
            facts is not None and bool(len(facts.slaves) > 1 or (facts.nr_hw_queues or 0) > 1)
        )

    def _judge(self, state: DeviceState, wall_time: float) -> None:
        """Feed one sample of a device to its saturation judge (core/disks/saturation.py)."""
        facts = state.facts
        if facts is None or facts.slaves or state.limit_of_facts is not facts:
            # A device's own queue facts decide; those of a dm/md's paths are read each time.
            state.queue_limit, state.queue_limit_source = self.queue_limit(state)
            state.serves_many = self.serves_many(state)
            state.limit_of_facts = facts
        judge = state.judge
        if judge is None:
            judge = state.judge = SaturationJudge(self.rules, state.name)
        row = state.row
        if (
            row.avgqu_sz == 0
            and row.r_s + row.w_s == 0
            and row.util_pct < self.rules.busy_util_pct
            and judge.feed_idle()
        ):
            return
        judge.load_note = self.load_note
        judge.feed(
            DeviceSample(
                row.avgqu_sz, row.r_s + row.w_s, (row.rkb_s + row.wkb_s) / 1024.0, row.await_ms, row.util_pct, wall_time
            ),
            QueueLimit(state.queue_limit, state.queue_limit_source, state.serves_many),
        )
        if judge.finished:
            self.episodes.extend(judge.take_finished())

    def refresh_facts(self) -> None:
        """Re-read every device's queue facts (an admin may have changed the scheduler)."""
        if self.facts_of is not None:
            for state in self.devices.values():
                state.facts = self.facts_of(state.kernel_name)

    # ---- what to show --------------------------------------------------------------------
    def set_benchmark_devices(self, names: set[str]) -> None:
        """The devices a running benchmark touches ("sdb", "/dev/sdb", "/dev/mapper/data1")."""
        self.benchmark_devices = {n.removeprefix("/dev/").removeprefix("mapper/") for n in names}

    def matches(self, state: DeviceState) -> bool:
        """Does this device pass the current filters?"""
        if state.row.is_partition and not self.show_partitions:
            return False
        if self.benchmark_only and not ({state.name, state.kernel_name} & self.benchmark_devices):
            return False
        pattern = self.name_pattern
        if pattern:
            if any(ch in pattern for ch in "*?["):
                return fnmatch.fnmatchcase(state.name, pattern)
            return pattern in state.name
        return True

    def visible(self) -> list[DeviceState]:
        """The devices to show, filtered and sorted (ties broken by name, so order is stable)."""
        value_of, descending = SORT_KEYS[self.sort_key]
        shown = sorted((s for s in self.devices.values() if self.matches(s)), key=lambda s: natural_key(s.name))
        if self.sort_key != "name":
            shown.sort(key=lambda s: value_of(s.row), reverse=descending)
        return shown

    def flagged(self) -> list[DeviceState]:
        """Every flagged device (queueing or saturated), filtered or not (a hidden saturated
        disk still matters): saturated first, then by name."""
        return sorted(
            (s for s in self.devices.values() if s.flagged),
            key=lambda s: (s.level != SATURATED, natural_key(s.name)),
        )

    def episodes_so_far(self) -> list[Episode]:
        """The flagged episodes of this session: ended ones, then those still going."""
        going = [s.judge.episode for s in self.devices.values() if s.judge is not None and s.judge.episode is not None]
        return [*self.episodes, *going]


def sparkline(values: list[float], width: int, scale_max: float | None) -> str:
    """The last ``width`` values as block characters, right-aligned, padded with spaces.

    ``scale_max`` fixes the top (100 for %util); None scales to the largest value shown.
    """
    if width <= 0:
        return ""
    shown = values[-width:]
    top = scale_max if scale_max is not None else max((v for v in shown if v == v), default=0.0)
    if top <= 0:
        top = 1.0
    last = len(SPARK_BLOCKS) - 1
    factor = last / top
    blocks = SPARK_BLOCKS
    # Rates are never negative; values above a fixed top (a rounding 100.01 %) clamp.
    # a figure an archive does not carry is NaN (core/disks/history/playback.py): no block
    chars = "".join([blocks[min(int(value * factor + 0.5), last)] if value == value else " " for value in shown])
    return chars.rjust(width)


def format_number(value: float, width: int, decimals: int = 2) -> str:
    """Right-aligned in ``width``: fewer decimals, then k/M/G suffixes, before overflowing;
    '-' for NaN (a figure an archive does not carry)."""
    if value != value:
        return "-".rjust(width)
    for places in range(decimals, -1, -1):
        text = f"{value:.{places}f}"
        if len(text) <= width:
            return text.rjust(width)
    for suffix, factor in (("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)):
        text = f"{value / factor:.0f}{suffix}"
        if len(text) <= width:
            return text.rjust(width)
    return "#" * width
