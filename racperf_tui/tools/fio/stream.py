"""fio's live output: ``--output-format=json+ --status-interval=N`` line by line -> one
Sample per interval (:class:`FioStreamParser`), and the interval-weighted mean that equals
fio's final figure (:func:`interval_weighted_mean`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from racperf_tui.core import units
from racperf_tui.core.contract.events import Sample
from racperf_tui.tools.fio.config import as_float, as_int
from racperf_tui.tools.fio.figures import histogram_percentiles
from racperf_tui.tools.fio.json_report import JsonObjectSplitter

#: fio never prints ETA this large: it means "unknown"
_ETA_UNKNOWN = 2**31 - 1
#: fio's non-JSON lines carried in one sample's extra (the rest are counted)
_MESSAGES_PER_SAMPLE = 20
#: slack between fio's runtime clock and its timestamp clock when comparing them
_CLOCK_TOLERANCE_MS = 50.0
#: a dump covering less of the jobs' runtime than this is no sample (see _on_dump)
_MIN_INTERVAL_MS = 50.0
#: fio ends the ramp in its I/O loop, a little after the runtime passes ramp_time
_RAMP_SLACK_MS = 250.0

#: per-interval latency percentiles reported in samples: metric suffix -> percentile
SAMPLE_PERCENTILES: dict[str, float] = {"p50": 50.0, "p99": 99.0, "p99.9": 99.9}
DIRECTIONS = ("read", "write")


@dataclass
class _DirState:
    total_ios: int = 0
    io_kib: float = 0.0
    runtime_ms: float = 0.0
    bins: dict[int, int] = field(default_factory=dict)


@dataclass
class _JobState:
    dirs: dict[str, _DirState] = field(default_factory=dict)
    ramp_done: bool = False


class FioStreamParser:
    """fio's ``--output-format=json+ --status-interval=N`` output, line by line -> Samples.

    Each status dump is cumulative since the start; a Sample is the difference between
    consecutive dumps. Rates divide by the difference of each job's own ``runtime`` (ms)
    -- the clock fio divides by for its final IOPS -- so the runtime-weighted mean of the
    samples' IOPS equals fio's final IOPS (exactly, for one job or group_reporting). The
    last dump (the final report) usually covers a partial interval; ``extra["interval_s"]``
    gives each sample's weight. Percentiles come from the difference of the json+
    ``clat_ns`` histogram bins, merged over jobs. ``t`` is seconds since fio started, from
    fio's own ``elapsed`` and ``timestamp_ms``, not from when the line arrived.

    Ramp: fio zeroes its counters when ramp_time ends. A dump is flagged
    ``extra["ramp"] = True`` until the reset is seen (the job's runtime restarted between
    two dumps) or the runtime is past the ramp; the first dump after the reset is differenced
    against zero. A ramp shorter than the status interval may leave the first sample flagged.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        cfg = config or {}
        ramp = cfg.get("ramp_time_s") if isinstance(cfg, Mapping) else None
        self._ramp_ms = float(as_int(ramp) or 0) * 1000.0
        self._splitter = JsonObjectSplitter()
        self._jobs: dict[tuple[int, str], _JobState] = {}
        self._first_ts_ms: float | None = None
        self._first_elapsed_s: float = 0.0
        self._prev_ts_ms: float | None = None
        self._messages_seen = 0
        self.dumps = 0
        self.last_report: dict[str, Any] | None = None

    @property
    def messages(self) -> list[str]:
        """Non-JSON lines seen so far (fio's errors and warnings)."""
        return self._splitter.messages

    def feed(self, line: str) -> list[Sample]:
        """One line of fio's output (without newline) -> Samples completed by it."""
        samples = []
        for obj in self._splitter.feed(line):
            if isinstance(obj.get("jobs"), list):
                try:
                    sample = self._on_dump(obj)
                except (TypeError, ValueError, OverflowError, AttributeError) as exc:
                    # a dump with an impossible field ("total_ios": 1e400, "jobs": [1]) is no
                    # interval: skip it (named in the messages) rather than lose the run's parser
                    self._splitter.decode_errors.append(f"status dump {self.dumps} skipped: {exc}")
                    continue
                if (
                    sample is not None
                    and math.isfinite(sample.t)
                    and all(math.isfinite(v) for v in sample.metrics.values())
                ):
                    samples.append(sample)
        return samples

    def finish(self) -> list[Sample]:
        """End of output: a truncated dump cannot be differenced; nothing is buffered."""
        return []

    def _ramp_ms_of(self, job: Mapping[str, Any]) -> float:
        if self._ramp_ms:
            return self._ramp_ms
        value = (job.get("job options") or {}).get("ramp_time")
        seconds = units.maybe_duration_s(str(value)) if value is not None else None
        return (seconds or 0.0) * 1000.0

    def _on_dump(self, report: dict[str, Any]) -> Sample | None:
        self.dumps += 1
        self.last_report = report
        ts_ms = as_float(report.get("timestamp_ms"))
        jobs = report["jobs"]
        elapsed = max((as_float(j.get("elapsed")) or 0.0) for j in jobs) if jobs else 0.0
        if self._first_ts_ms is None and ts_ms is not None:
            self._first_ts_ms, self._first_elapsed_s = ts_ms, elapsed
        t = (
            self._first_elapsed_s + (ts_ms - self._first_ts_ms) / 1000.0
            if ts_ms is not None and self._first_ts_ms is not None
            else elapsed
        )
        wall_dt_ms = ts_ms - self._prev_ts_ms if ts_ms is not None and self._prev_ts_ms is not None else None
        self._prev_ts_ms = ts_ms

        iops = {d: 0.0 for d in DIRECTIONS}
        bw = {d: 0.0 for d in DIRECTIONS}
        hist: dict[str, dict[int, int]] = {d: {} for d in DIRECTIONS}
        interval_ms = 0.0
        in_ramp = False
        job_info = []
        updates: list[tuple[_JobState, str, _DirState]] = []
        for index, job in enumerate(jobs):
            key = (index, str(job.get("jobname", "")))
            state = self._jobs.setdefault(key, _JobState())
            ramp_ms = self._ramp_ms_of(job)
            dir_blocks = {d: job.get(d) if isinstance(job.get(d), dict) else {} for d in DIRECTIONS}
            cur_rt = max((as_float(b.get("runtime")) or 0.0) for b in dir_blocks.values())
            prev_rt = max((s.runtime_ms for s in state.dirs.values()), default=0.0)
            reset = False
            if ramp_ms > 0 and not state.ramp_done:
                if (
                    state.dirs
                    and wall_dt_ms is not None
                    and cur_rt + _CLOCK_TOLERANCE_MS < prev_rt + wall_dt_ms
                    and cur_rt <= wall_dt_ms + _CLOCK_TOLERANCE_MS
                ):
                    # the runtime restarted between the dumps: fio zeroed its stats at ramp end
                    reset = state.ramp_done = True
                elif cur_rt > ramp_ms + _RAMP_SLACK_MS:
                    # past the ramp without a reset in view: it happened before the first dump
                    state.ramp_done = True
                else:
                    in_ramp = True
            for d in DIRECTIONS:
                block = dir_blocks[d]
                prev = state.dirs.get(d, _DirState())
                cur = _DirState(
                    total_ios=int(block.get("total_ios", 0) or 0),
                    io_kib=float(block.get("io_kbytes", block.get("io_bytes", 0)) or 0),
                    runtime_ms=float(block.get("runtime", 0) or 0),
                    bins={int(k): int(v) for k, v in ((block.get("clat_ns") or {}).get("bins") or {}).items()},
                )
                if reset or cur.total_ios < prev.total_ios or cur.runtime_ms < prev.runtime_ms:
                    prev = _DirState()  # counters restarted (end of ramp): this dump is all new
                d_rt = cur.runtime_ms - prev.runtime_ms
                if d_rt > 0:
                    iops[d] += (cur.total_ios - prev.total_ios) * 1000.0 / d_rt
                    bw[d] += (cur.io_kib - prev.io_kib) * 1000.0 / d_rt
                    interval_ms = max(interval_ms, d_rt)
                merged = hist[d]
                for value, count in cur.bins.items():
                    delta = count - prev.bins.get(value, 0)
                    if delta > 0:
                        merged[value] = merged.get(value, 0) + delta
                updates.append((state, d, cur))
            eta = as_float(job.get("eta"))
            info: dict[str, Any] = {
                "name": key[1],
                "error": int(job.get("error", 0) or 0),
                "elapsed_s": as_float(job.get("elapsed")),
            }
            if eta is not None and 0 <= eta < _ETA_UNKNOWN:
                info["eta_s"] = eta
            job_info.append(info)
        if interval_ms < _MIN_INTERVAL_MS:
            # nothing advanced (jobs not started yet), or a final report a few ms after the
            # last dump: fio reads a running job's counters one by one, so io_kbytes may lag
            # total_ios by an I/O, which over 5 ms reads as 0 IOPS beside MiB/s. Not a sample;
            # the next dump (if any) is differenced against the last real one.
            return None
        for state, d, cur in updates:
            state.dirs[d] = cur
        metrics: dict[str, float] = {}
        for d in DIRECTIONS:
            metrics[f"{d}_iops"] = iops[d]
            metrics[f"{d}_bw_kib_s"] = bw[d]
            pcts = histogram_percentiles(hist[d], SAMPLE_PERCENTILES.values())
            for suffix, pct in SAMPLE_PERCENTILES.items():
                if pct in pcts:
                    metrics[f"{d}_clat_{suffix}_us"] = pcts[pct] / 1000.0
        extra: dict[str, Any] = {
            "interval_s": interval_ms / 1000.0,
            "elapsed_s": elapsed,
            "ramp": in_ramp,
            "jobs": job_info,
            "dump": self.dumps,
        }
        if ts_ms is not None:
            extra["timestamp_ms"] = ts_ms  # fio's wall clock when it wrote the dump
        if wall_dt_ms is not None:
            extra["wall_interval_s"] = wall_dt_ms / 1000.0
        etas = [j["eta_s"] for j in job_info if "eta_s" in j]
        if etas:
            extra["eta_s"] = max(etas)
            if elapsed + extra["eta_s"] > 0:
                extra["progress_pct"] = min(100.0, 100.0 * elapsed / (elapsed + extra["eta_s"]))
        new_count = self._splitter.message_count - self._messages_seen
        if new_count > 0:
            kept = self._splitter.messages[self._messages_seen :][:_MESSAGES_PER_SAMPLE]
            extra["messages"] = kept
            if new_count > len(kept):
                extra["messages_omitted"] = new_count - len(kept)
            self._messages_seen = self._splitter.message_count
        return Sample(t=round(t, 3), metrics=metrics, extra=extra)


def interval_weighted_mean(samples: Iterable[Sample], metric: str, skip_ramp: bool = True) -> float:
    """Mean of ``metric`` over samples weighted by each sample's interval (fio runtime).

    This is the "mean of the live IOPS" that equals fio's final IOPS: the final dump covers
    a partial interval, so an unweighted mean would over-weight it.
    """
    total = weight = 0.0
    for sample in samples:
        if skip_ramp and sample.extra.get("ramp"):
            continue
        w = float(sample.extra.get("interval_s", 1.0))
        if metric in sample.metrics:
            total += sample.metrics[metric] * w
            weight += w
    return total / weight if weight else 0.0
