"""Verdicts on a measured network against the guidance DBAs use (pure functions, no UI).

- RAC private interconnect: 1 GbE at least, 10 GbE recommended. A link "meets" a class when
  the measured TCP throughput reaches 90 % of its line rate (TCP/IP framing leaves ~94 % of
  the line rate as payload; 90 % allows for that and a little noise).
- Data Guard: the network must carry the redo rate with headroom; the usual sizing is
  ``required Mbit/s = (redo MB/s / 0.7) x 8`` (the link at most 70 % busy with redo).
- Stalls and dips: a link that carried its rate most of the time but stopped for seconds is
  no interconnect to trust (Cache Fusion waits on every block of those seconds; a stall of
  the CSS misstime evicts a node), and a median or a mean hides it. Each measured interval is
  judged against the pair's median interval: under ``STALL_SHARE`` (5 %) it is a *stall* (the
  link carried ~nothing), under ``DIP_SHARE`` (50 %) a *dip*; consecutive intervals of one
  kind are one event, said with when (seconds into the test, and the clock time) and how
  long. A stall makes the verdict "bad", a dip at least "warning". The resolution is the
  interval: a stall shorter than an interval shows as a dip, and TCP's retransmission backoff
  makes a stall of the traffic outlast the outage of the link (a 2 s outage is seen as 2-4 s).
  Intervals shorter than half the usual one (a tool's last sliver) are not judged.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

GBE_1_MBIT_S = 1000.0
GBE_10_MBIT_S = 10000.0
#: share of the line rate a link must deliver to meet its class
MEETS_SHARE = 0.9
#: Data Guard sizing: redo may use at most this share of the link
DATAGUARD_UTILISATION = 0.7
#: an interval under this share of the median interval is a stall (the link carried ~nothing)
STALL_SHARE = 0.05
#: an interval under this share of the median interval (and no stall) is a dip
DIP_SHARE = 0.5
#: intervals shorter than this share of the usual interval are not judged (a last sliver)
JUDGED_INTERVAL_SHARE = 0.5
#: the levels of a verdict, mildest first
LEVELS = ("good", "warning", "bad")


def required_mbit_s(redo_mb_s: float) -> float:
    """Bandwidth Data Guard needs for ``redo_mb_s`` of redo: (redo MB/s / 0.7) x 8 Mbit/s."""
    if redo_mb_s < 0:
        raise ValueError(f"redo rate must be >= 0 MB/s, not {redo_mb_s:g}")
    return redo_mb_s / DATAGUARD_UTILISATION * 8


def format_rate(mbit_s: float) -> str:
    """1234.5 -> "1.23 Gbit/s", 812.3 -> "812 Mbit/s"."""
    if mbit_s >= 1000:
        return f"{mbit_s / 1000:.2f} Gbit/s"
    if mbit_s >= 10:
        return f"{mbit_s:.0f} Mbit/s"
    return f"{mbit_s:.2f} Mbit/s"


@dataclass(frozen=True, slots=True)
class Verdict:
    """``level``: "good", "warning" or "bad" (how to colour it); ``text``: one sentence."""

    level: str
    text: str


@dataclass(frozen=True, slots=True)
class IntervalRate:
    """One measured interval of a test: seconds since the test started, its throughput."""

    start_s: float
    end_s: float
    mbit_s: float

    @property
    def length_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True, slots=True)
class ThroughputDrop:
    """Consecutive intervals of one kind ("stall" or "dip") under the test's median."""

    kind: str
    start_s: float
    end_s: float
    intervals: int
    lowest_mbit_s: float
    median_mbit_s: float

    @property
    def length_s(self) -> float:
        return self.end_s - self.start_s

    def text(self, started_at: float | None = None) -> str:
        """ "stalled for 3.0 s at 4.0-7.0 s (02:41:15-02:41:18): 3 intervals at ~0 Mbit/s"; the
        clock times when ``started_at`` (the test's start, epoch s) is known."""
        when = f"{self.start_s:.1f}-{self.end_s:.1f} s"
        if started_at is not None:
            clock = [time.strftime("%H:%M:%S", time.localtime(started_at + t)) for t in (self.start_s, self.end_s)]
            when += f" ({clock[0]}-{clock[1]})"
        count = f"{self.intervals} interval{'s' if self.intervals != 1 else ''}"
        if self.kind == "stall":
            most = format_rate(self.lowest_mbit_s)
            return f"STALLED for {self.length_s:.1f} s at {when}: {count} at ~0 ({most} at most)"
        share = self.lowest_mbit_s / self.median_mbit_s if self.median_mbit_s else 0.0
        return (
            f"dipped to {format_rate(self.lowest_mbit_s)} ({share:.0%} of the median) for {self.length_s:.1f} s "
            f"at {when}: {count}"
        )

    def to_json(self) -> dict[str, float | int | str]:
        return {
            "kind": self.kind,
            "start_s": round(self.start_s, 3),
            "end_s": round(self.end_s, 3),
            "length_s": round(self.length_s, 3),
            "intervals": self.intervals,
            "lowest_mbit_s": round(self.lowest_mbit_s, 3),
        }


def throughput_drops(intervals: Sequence[IntervalRate]) -> list[ThroughputDrop]:
    """The stalls and dips of a test's intervals (the rule in the module's docstring), in order."""
    usual_length = statistics.median(i.length_s for i in intervals) if intervals else 0.0
    judged = [i for i in intervals if i.length_s >= usual_length * JUDGED_INTERVAL_SHARE]
    if not judged:
        return []
    median = statistics.median(i.mbit_s for i in judged)
    drops: list[ThroughputDrop] = []
    for interval in judged:
        if interval.mbit_s <= median * STALL_SHARE:
            kind = "stall"
        elif interval.mbit_s < median * DIP_SHARE:
            kind = "dip"
        else:
            continue
        last = drops[-1] if drops else None
        if last is not None and last.kind == kind and abs(last.end_s - interval.start_s) < usual_length * 0.5:
            drops[-1] = ThroughputDrop(
                kind,
                last.start_s,
                interval.end_s,
                last.intervals + 1,
                min(last.lowest_mbit_s, interval.mbit_s),
                median,
            )
        else:
            drops.append(ThroughputDrop(kind, interval.start_s, interval.end_s, 1, interval.mbit_s, median))
    return drops


def interconnect_verdict(
    measured_mbit_s: float, drops: Sequence[ThroughputDrop] = (), started_at: float | None = None
) -> Verdict:
    """Measured throughput against the 1 GbE / 10 GbE interconnect guidance, and the test's
    stalls (the verdict "bad") and dips (at least "warning"), each said with when and how long."""
    measured = format_rate(measured_mbit_s)
    if measured_mbit_s >= GBE_10_MBIT_S * MEETS_SHARE:
        verdict = Verdict("good", f"measured {measured}: meets 10 GbE guidance (recommended for the RAC interconnect)")
    elif measured_mbit_s >= GBE_1_MBIT_S * MEETS_SHARE:
        verdict = Verdict(
            "warning",
            f"measured {measured}: meets 1 GbE guidance (the minimum), "
            "below the 10 GbE recommended for the RAC interconnect",
        )
    else:
        verdict = Verdict("bad", f"measured {measured}: below 1 GbE guidance, too slow for a RAC interconnect")
    if not drops:
        return verdict
    level = "bad" if any(d.kind == "stall" for d in drops) else "warning"
    worst = max(verdict.level, level, key=LEVELS.index)
    said = "; ".join(d.text(started_at) for d in drops)
    return Verdict(worst, f"{verdict.text}; but the link {said}")


#: round-trip loss (% of UDP requests or datagrams) from which the path is suspect: Cache
#: Fusion resends a lost block after a timeout ("gc cr block lost" waits), so even a little
#: loss shows in the database's waits
LOSS_WARNING_PCT = 0.1
#: ... and from which it is bad
LOSS_BAD_PCT = 1.0


@dataclass(frozen=True, slots=True)
class MtuFinding:
    """A path's MTU check: each end's MTU towards the other and whether a don't-fragment
    datagram as large as the sending end's MTU allows got through (None: not checked)."""

    local_mtu: int | None
    remote_mtu: int | None
    probe_bytes: int | None
    arrived: bool | None
    note: str = ""

    @property
    def mismatch(self) -> bool:
        return self.local_mtu is not None and self.remote_mtu is not None and self.local_mtu != self.remote_mtu

    @classmethod
    def from_result(cls, result: Mapping[str, Any] | None) -> MtuFinding | None:
        """The check a client result carries in the keys a tool that checks the path's MTU
        gives it (the probe's UDP mode: ``mtu_local``, ``mtu_remote``, ``df_probe_bytes``,
        ``df_probe_ok``, ``mtu_note``); None for a result without one."""
        if not result or not isinstance(result.get("mtu_local"), int):
            return None
        remote, size, arrived = result.get("mtu_remote"), result.get("df_probe_bytes"), result.get("df_probe_ok")
        return cls(
            result["mtu_local"],
            remote if isinstance(remote, int) else None,
            size if isinstance(size, int) else None,
            arrived if isinstance(arrived, bool) else None,
            str(result.get("mtu_note") or ""),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "local": self.local_mtu,
            "remote": self.remote_mtu,
            "probe_bytes": self.probe_bytes,
            "arrived": self.arrived,
            "mismatch": self.mismatch,
            "note": self.note,
        }


def path_verdict(verdict: Verdict, loss_pct: float | None = None, mtu: MtuFinding | None = None) -> Verdict:
    """``verdict`` with the path's loss and MTU check added: a don't-fragment datagram at the
    MTU that never arrived or loss of LOSS_BAD_PCT makes it "bad", an MTU mismatch that
    still got through or loss of LOSS_WARNING_PCT at least "warning"."""
    levels = [verdict.level]
    said = []
    if loss_pct is not None and loss_pct >= LOSS_WARNING_PCT:
        levels.append("bad" if loss_pct >= LOSS_BAD_PCT else "warning")
        said.append(f"{loss_pct:.2f} % of UDP requests LOST")
    if mtu is not None and (mtu.arrived is False or mtu.mismatch):
        levels.append("bad" if mtu.arrived is False else "warning")
        said.append(mtu.note)
    if not said:
        return verdict
    return Verdict(max(levels, key=LEVELS.index), f"{verdict.text}; {'; '.join(said)}")


def dataguard_verdict(redo_mb_s: float, measured_mbit_s: float) -> Verdict:
    """Is the measured throughput enough for ``redo_mb_s`` of redo (Data Guard sizing)?"""
    needed = required_mbit_s(redo_mb_s)
    head = (
        f"redo {redo_mb_s:g} MB/s needs {needed:.1f} Mbit/s ((redo MB/s / 0.7) x 8); "
        f"measured {format_rate(measured_mbit_s)}"
    )
    if needed == 0:
        return Verdict("good", head + ": enough")
    if measured_mbit_s >= needed:
        return Verdict("good", f"{head}: enough ({measured_mbit_s / needed:.1f}x the need)")
    return Verdict("bad", f"{head}: NOT enough, short by {needed - measured_mbit_s:.1f} Mbit/s")
