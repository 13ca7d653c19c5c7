"""Verdicts on a measured network against the guidance DBAs use (pure functions, no UI).

- RAC private interconnect: 1 GbE at least, 10 GbE recommended. A link "meets" a class when
  the measured TCP throughput reaches 90 % of its line rate (TCP/IP framing leaves ~94 % of
  the line rate as payload; 90 % allows for that and a little noise).
- Data Guard: the network must carry the redo rate with headroom; the usual sizing is
  ``required Mbit/s = (redo MB/s / 0.7) x 8`` (the link at most 70 % busy with redo).
"""

from __future__ import annotations

from dataclasses import dataclass

GBE_1_MBIT_S = 1000.0
GBE_10_MBIT_S = 10000.0
#: share of the line rate a link must deliver to meet its class
MEETS_SHARE = 0.9
#: Data Guard sizing: redo may use at most this share of the link
DATAGUARD_UTILISATION = 0.7


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


def interconnect_verdict(measured_mbit_s: float) -> Verdict:
    """Measured throughput against the 1 GbE / 10 GbE interconnect guidance."""
    measured = format_rate(measured_mbit_s)
    if measured_mbit_s >= GBE_10_MBIT_S * MEETS_SHARE:
        return Verdict("good", f"measured {measured}: meets 10 GbE guidance (recommended for the RAC interconnect)")
    if measured_mbit_s >= GBE_1_MBIT_S * MEETS_SHARE:
        return Verdict(
            "warning",
            f"measured {measured}: meets 1 GbE guidance (the minimum), "
            "below the 10 GbE recommended for the RAC interconnect",
        )
    return Verdict("bad", f"measured {measured}: below 1 GbE guidance, too slow for a RAC interconnect")


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
