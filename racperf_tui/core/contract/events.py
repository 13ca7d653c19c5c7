"""The one vocabulary every tool, host and view speaks.

Units live in metric names: ``read_iops``, ``read_bw_kib_s``, ``read_clat_p99_us``,
``throughput_mib_s``, ``latency_ms``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Sample:
    """One interval's figures from a running benchmark.

    ``t`` is seconds since the run started (the tool's own clock when it prints one,
    else the time the line arrived); ``metrics`` maps unit-named keys to numbers.
    ``extra`` carries non-numeric context (job states, ETA text, the interval's wall time);
    ``extra["status"]``, a short word of the benchmark's own state ("IN PROGRESS"), is also
    printed in its JSON line.
    """

    t: float
    metrics: dict[str, float]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def interval_s(self) -> float | None:
        """The length of time this sample covers, when the tool says (fio's last dump covers a
        partial interval: a mean of rates over a run must be weighted by it)."""
        value = self.extra.get("interval_s")
        return float(value) if isinstance(value, (int, float)) else None

    def to_json(self) -> dict[str, Any]:
        """The headless JSON line of this sample: ``{"type": "sample", "t", ["interval_s"], "metrics",
        ["status"]}``."""
        line: dict[str, Any] = {"type": "sample", "t": round(self.t, 6)}
        if self.interval_s is not None:
            line["interval_s"] = round(self.interval_s, 6)
        line["metrics"] = self.metrics
        status = self.extra.get("status")
        if isinstance(status, str) and status:
            line["status"] = status[:80]
        return line


class RunState(str, enum.Enum):  # noqa: UP042 (str() of a member stays "RunState.X", as the store code expects)
    """Life cycle of a run as the store records it."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    STOPPED = "stopped"  # stopped by the user
    INTERRUPTED = "interrupted"  # its supervisor vanished (kill -9, power loss)

    @property
    def finished(self) -> bool:
        """True once the run can no longer change."""
        return self not in (RunState.PENDING, RunState.RUNNING)
