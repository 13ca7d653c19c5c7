"""Messages the runs UI posts between its poller threads and its widgets.

The live view's poller posts one :class:`RunLiveUpdate` per poll. Each carries the whole
latest state (sparkline series included), so when the UI is busy a newer update may replace
the one still queued without losing anything: the Toolong way of keeping a fast producer
from flooding a slower consumer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from racperf_tui.core.tool import MetricSpec


@dataclass(frozen=True, slots=True)
class LiveRunState:
    """Everything the live view shows of one run at one moment.

    ``series`` maps a metric name to its recent per-interval values (bounded, oldest first);
    ``current`` maps a metric name to its latest value. ``last_sample_t`` is the run clock
    (seconds) of the newest sample and ``polled_at_monotonic`` the moment the poller read it,
    which the latency benchmark uses.
    """

    run_id: Any
    state: str
    #: the run's tool, and the metrics its description says the view shows (label, unit, format)
    tool: str = ""
    metrics: tuple[MetricSpec, ...] = ()
    series: dict[str, list[float]] = field(default_factory=dict)
    current: dict[str, float] = field(default_factory=dict)
    samples_seen: int = 0
    last_sample_t: float | None = None
    elapsed_s: float | None = None
    eta_s: float | None = None
    progress_pct: float | None = None
    job_states: str = ""
    polled_at_monotonic: float = 0.0
    error: str = ""


class RunLiveUpdate(Message):
    """The latest state of a live run; supersedes an older one for the same run still queued."""

    def __init__(self, live: LiveRunState) -> None:
        super().__init__()
        self.live = live

    def can_replace(self, message: Message) -> bool:
        """Textual drops this message in favour of a newer update of the same run."""
        return isinstance(message, RunLiveUpdate) and message.live.run_id == self.live.run_id


class RunLaunched(Message):
    """A run was started from the form; the panel opens its live view."""

    def __init__(self, run_id: Any) -> None:
        super().__init__()
        self.run_id = run_id


class RunsChanged(Message):
    """The set of runs (or their states) may have changed; the panel refreshes its list."""
