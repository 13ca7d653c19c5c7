"""Foreign I/O: the run's target device moved more than the benchmark says it issued.

The benchmark's samples say what it did (fio: read/write bandwidth and IOPS); the device's
diskstats say what reached it. Both are averaged over the last ``WINDOW_S`` seconds (their
intervals are not aligned). Bytes are compared, not requests: the kernel splits and merges
requests, never bytes. Past the margin, ``MARGIN_FRAC`` of the benchmark's bandwidth plus
``MARGIN_KIB_S``, for ``CONSECUTIVE`` checks in a row, something else loads the LUN: said with
the excess in IOPS and MB/s. Only for direct I/O (buffered I/O reads ahead and writes back).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

WINDOW_S = 5.0
MARGIN_FRAC = 0.2
MARGIN_KIB_S = 1024.0
CONSECUTIVE = 3


@dataclass(frozen=True, slots=True)
class Figures:
    """IOPS and KiB/s at a moment (monotonic seconds)."""

    at: float
    iops: float
    kib_s: float


def _mean(series: deque[Figures], since: float) -> Figures | None:
    kept = [f for f in series if f.at >= since]
    if len(kept) < 2:
        return None
    return Figures(kept[-1].at, sum(f.iops for f in kept) / len(kept), sum(f.kib_s for f in kept) / len(kept))


@dataclass(slots=True)
class ForeignIoCheck:
    """Feed :meth:`benchmark` and :meth:`device` as figures come; :attr:`note` says the worst
    excess seen ('' while none)."""

    device_name: str
    benchmark_figures: deque[Figures] = field(default_factory=lambda: deque(maxlen=64))
    device_figures: deque[Figures] = field(default_factory=lambda: deque(maxlen=64))
    streak: int = 0
    worst_iops: float = 0.0
    note: str = ""

    def benchmark(self, figures: Figures) -> None:
        self.benchmark_figures.append(figures)

    def device(self, figures: Figures) -> bool:
        """The device's figures of the last interval; True when this check newly found (or
        raised) foreign I/O."""
        self.device_figures.append(figures)
        since = figures.at - WINDOW_S
        bench, dev = _mean(self.benchmark_figures, since), _mean(self.device_figures, since)
        if bench is None or dev is None:
            self.streak = 0
            return False
        excess_kib = dev.kib_s - bench.kib_s
        if excess_kib <= MARGIN_FRAC * bench.kib_s + MARGIN_KIB_S:
            self.streak = 0
            return False
        self.streak += 1
        excess_iops = max(0.0, dev.iops - bench.iops)
        if self.streak < CONSECUTIVE or excess_iops <= self.worst_iops:
            return False
        self.worst_iops = excess_iops
        self.note = (
            f"the LUN carried I/O racperf did not issue: {excess_iops:,.0f} IOPS, {excess_kib / 1024:,.1f} MB/s "
            f"({self.device_name}: {dev.iops:,.0f} IOPS, the benchmark: {bench.iops:,.0f}, over {WINDOW_S:g} s)"
        )
        return True
