"""How a run group's nodes' samples line up in time: each node's samples resampled to whole
seconds of the wall clock, so the group's total of a second is what every node did in that
same second (not each node's n-th interval: nodes that started 2 s apart would add up
intervals 2 s apart, and a final partial interval would be taken for a whole one).

The rule:

- A node's sample covers the span ``[end - length, end)`` where ``end`` is the run's
  RUNNING time (``started_at``, the supervisor's clock: one clock for every node, whatever
  the nodes' own clocks say) plus the sample's ``t``, and ``length`` its ``interval_s`` when
  the tool says (fio), else the time since the node's previous sample (the first: since the
  run started). Its figures hold over the whole span.
- A node's figures for the wall-clock second ``[S, S+1)``: a rate (IOPS, bandwidth) is what
  the node did in that second, the sum of each covering span's rate times the part of the
  second it covers (a node that started or ended mid-second counts for the part it ran); a
  level (latency) is the mean of the covering spans' values weighted by how much of the
  second each covers; a state (progress) is the last covering span's value.
- Second S is counted once every node still running has samples covering it to its end
  (a node not finished with no sample yet holds every second back); a finished node counts
  for what its samples cover and nothing after. A second no node covers is not given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from racperf_tui.core.contract.events import Sample

__all__ = ["Span", "NodeTimeline", "RATE", "LEVEL", "STATE", "complete_until", "first_second", "second_figures"]


@dataclass(frozen=True, slots=True)
class Span:
    """The wall-clock time one sample covers (epoch seconds) and its figures."""

    begin: float
    end: float
    figures: dict[str, float]


class NodeTimeline:
    """A node's samples as the spans they cover (see the module doc), added as they come."""

    def __init__(self, started_at: float) -> None:
        self.started_at = started_at
        self.spans: list[Span] = []
        self._last_t: float | None = None

    def add(self, sample: Sample, figures: dict[str, float]) -> None:
        end = self.started_at + sample.t
        length = sample.interval_s
        if length is None:
            length = sample.t - (self._last_t if self._last_t is not None else 0.0)
        self._last_t = sample.t
        # not clipped to the previous span: a rate's I/O counts for the time its own sample
        # says, so every counted I/O is in the seconds once (the tool's clock and the
        # supervisor's differ by milliseconds)
        if length > 0:
            self.spans.append(Span(end - length, end, figures))


def complete_until(spans_by_node: Mapping[str, Sequence[Span]], finished: Iterable[str]) -> int | None:
    """The first whole second not yet complete (every second before it is; see the module
    doc); None when no second is (a running node without a sample)."""
    done = set(finished)
    running_ends = [spans[-1].end if spans else None for node, spans in spans_by_node.items() if node not in done]
    if any(end is None for end in running_ends):
        return None
    if running_ends:
        return math.floor(min(end for end in running_ends if end is not None))
    ends = [spans[-1].end for spans in spans_by_node.values() if spans]
    return math.ceil(max(ends)) if ends else None


def first_second(spans_by_node: Mapping[str, Sequence[Span]]) -> int | None:
    """The first whole second any node's samples cover."""
    begins = [spans[0].begin for spans in spans_by_node.values() if spans]
    return math.floor(min(begins)) if begins else None


#: how a figure is resampled to a second (see the module doc)
RATE, LEVEL, STATE = "rate", "level", "state"


def second_figures(
    spans: Sequence[Span], second: int, kind: Callable[[str], str], start_index: int = 0
) -> tuple[dict[str, float], int]:
    """A node's figures for the second ``[second, second+1)`` (empty when no span covers it;
    ``kind``: RATE, LEVEL or STATE of a figure's key) and the index of the first span that
    may cover a later second (pass it back as ``start_index`` for the next second: the spans
    are walked once over a whole run)."""
    lo, hi = float(second), float(second + 1)
    index = start_index
    while index < len(spans) and spans[index].end <= lo:
        index += 1
    weighted: dict[str, float] = {}
    covered: dict[str, float] = {}
    latest: dict[str, float] = {}
    scan = index
    while scan < len(spans) and spans[scan].begin < hi:
        span = spans[scan]
        overlap = min(hi, span.end) - max(lo, span.begin)
        if overlap > 0:
            for key, value in span.figures.items():
                weighted[key] = weighted.get(key, 0.0) + value * overlap
                covered[key] = covered.get(key, 0.0) + overlap
                latest[key] = value
        scan += 1
    figures: dict[str, float] = {}
    for key, total in weighted.items():
        how = kind(key)
        figures[key] = total if how == RATE else latest[key] if how == STATE else total / covered[key]
    return figures, index
