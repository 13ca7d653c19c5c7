"""The state behind the live iostat panel: per-device history, saturation, sort and filter.

Pure Python (no textual import), so the rules can be tested and reused without a terminal.
The panel feeds it one :class:`IostatReport` per tick and reads back the rows to show.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from racperf_tui.core.diskstats import QueueFacts
from racperf_tui.core.iostat import IostatReport, IostatRow

#: Samples of history kept per device and metric; bounded so memory stays flat.
HISTORY_LEN = 240

#: The refresh intervals the keys step through, in seconds.
INTERVALS_S: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)

#: Sort orders: name -> (key of a row, descending?).
SORT_KEYS: dict[str, tuple[Callable[[IostatRow], float | str], bool]] = {
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

SPARK_BLOCKS = "▁▂▃▄▅▆▇█"

_DIGIT_RUNS = re.compile(r"(\d+)")


@lru_cache(maxsize=4096)
def natural_key(name: str) -> tuple:
    """Sort key putting loop2 before loop10, sda before sdb, nvme0n1 before nvme1n1.

    Digit runs compare as numbers; (is-number, value) pairs keep str and int apart so any
    two names compare, and the name itself breaks remaining ties (sda01 vs sda1). Cached:
    the same few names are sorted every tick.
    """
    parts = _DIGIT_RUNS.split(name)
    return tuple((1, int(part), "") if index % 2 else (0, 0, part)
                 for index, part in enumerate(parts)) + ((0, 0, name),)


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


@dataclass(frozen=True, slots=True)
class SaturationRules:
    """When a device counts as saturated.

    Either %util >= ``util_pct`` with avgqu-sz >= ``queue_near_frac`` x its queue depth, or
    await >= ``await_over_svctm`` x svctm (and above ``await_min_ms``, so 0.3 ms vs 0.05 ms on
    an idle SSD is not flagged): requests spend their time queued, not being served. Either must
    hold for ``consecutive`` samples in a row, so one burst does not raise the flag.
    """

    util_pct: float = 90.0
    queue_near_frac: float = 0.8
    await_over_svctm: float = 5.0
    await_min_ms: float = 5.0
    consecutive: int = 3


@dataclass(slots=True)
class DeviceState:
    """Everything the panel knows about one device across ticks."""

    name: str  # display name (device-mapper names mapped)
    row: IostatRow
    kernel_name: str = ""  # the /proc/diskstats name, for sysfs
    facts: QueueFacts | None = None
    history: dict[str, deque[float]] = field(default_factory=dict)
    queue_full_streak: int = 0
    queueing_streak: int = 0
    saturation_reason: str = ""  # empty: not saturated
    seen_tick: int = 0
    samples: int = 0  # values appended to history so far (sparklines extend incrementally)
    spark_cache: dict[str, tuple] = field(default_factory=dict)  # owned by the table

    @property
    def saturated(self) -> bool:
        return bool(self.saturation_reason)

    def effective_queue_depth(self) -> int | None:
        """The depth a full queue reaches: SCSI queue_depth, else the block layer's nr_requests."""
        if self.facts is None:
            return None
        return self.facts.queue_depth or self.facts.nr_requests


class IostatModel:
    """Feeds on reports; answers which rows to show, in which order, with which flags."""

    def __init__(self, rules: SaturationRules | None = None, history_len: int = HISTORY_LEN,
                 facts_of: Callable[[str], QueueFacts | None] | None = None) -> None:
        """``facts_of(kernel_name)`` reads a new device's queue facts (None: unknown)."""
        self.rules = rules or SaturationRules()
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

    # ---- feeding -------------------------------------------------------------------------
    def update(self, report: IostatReport, *, record_history: bool = True) -> None:
        """Take one report. ``record_history=False`` for the since-boot report (not a sample)."""
        self.tick += 1
        self.last_report = report
        for row in report.rows:
            state = self.devices.get(row.device)
            if state is None:
                state = DeviceState(row.device, row, history={
                    name: deque(maxlen=self.history_len) for name in SPARK_METRICS})
                state.kernel_name = row.kernel_name or row.device
                if self.facts_of is not None:
                    state.facts = self.facts_of(state.kernel_name)
                self.devices[row.device] = state
            state.row = row
            state.seen_tick = self.tick
            if record_history:
                for name, (value_of, _scale) in SPARK_METRICS.items():
                    state.history[name].append(value_of(row))
                state.samples += 1
                self._judge(state)
        # Devices that disappeared (hot-unplug, loop detach) leave with their history.
        for name in [n for n, s in self.devices.items() if s.seen_tick != self.tick]:
            del self.devices[name]

    def _judge(self, state: DeviceState) -> None:
        """Update the saturation streaks and the reason text of one device."""
        rules, row = self.rules, state.row
        depth = state.effective_queue_depth()
        queue_full = (row.util_pct >= rules.util_pct and depth is not None
                      and row.avgqu_sz >= rules.queue_near_frac * depth)
        queueing = (row.await_ms >= rules.await_min_ms
                    and row.await_ms >= rules.await_over_svctm * max(row.svctm_ms, 1e-9))
        state.queue_full_streak = state.queue_full_streak + 1 if queue_full else 0
        state.queueing_streak = state.queueing_streak + 1 if queueing else 0
        if state.queue_full_streak >= rules.consecutive:
            # Say which limit: a loop or NVMe device has no SCSI queue_depth, only nr_requests.
            limit = "queue depth" if state.facts is not None and state.facts.queue_depth else "nr_requests"
            state.saturation_reason = (
                f"%util {row.util_pct:.0f}, avgqu-sz {row.avgqu_sz:.1f} near {limit} {depth}"
                f" for {state.queue_full_streak} samples: device full")
        elif state.queueing_streak >= rules.consecutive:
            state.saturation_reason = (
                f"await {row.await_ms:.1f} ms >= {rules.await_over_svctm:g}x svctm {row.svctm_ms:.1f} ms"
                f" for {state.queueing_streak} samples: queueing, not service")
        else:
            state.saturation_reason = ""

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

    def saturated(self) -> list[DeviceState]:
        """Every saturated device, filtered or not (a hidden saturated disk still matters)."""
        return sorted((s for s in self.devices.values() if s.saturated), key=lambda s: natural_key(s.name))


def sparkline(values: list[float], width: int, scale_max: float | None) -> str:
    """The last ``width`` values as block characters, right-aligned, padded with spaces.

    ``scale_max`` fixes the top (100 for %util); None scales to the largest value shown.
    """
    if width <= 0:
        return ""
    shown = values[-width:]
    top = scale_max if scale_max is not None else max(shown, default=0.0)
    if top <= 0:
        top = 1.0
    last = len(SPARK_BLOCKS) - 1
    factor = last / top
    blocks = SPARK_BLOCKS
    # Rates are never negative; values above a fixed top (a rounding 100.01 %) clamp.
    chars = "".join([blocks[min(int(value * factor + 0.5), last)] for value in shown])
    return chars.rjust(width)


def format_number(value: float, width: int, decimals: int = 2) -> str:
    """Right-aligned in ``width``: fewer decimals, then k/M/G suffixes, before overflowing."""
    for places in range(decimals, -1, -1):
        text = f"{value:.{places}f}"
        if len(text) <= width:
            return text.rjust(width)
    for suffix, factor in (("k", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)):
        text = f"{value / factor:.0f}{suffix}"
        if len(text) <= width:
            return text.rjust(width)
    return ("#" * width)
