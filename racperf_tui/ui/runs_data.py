"""What the runs UI reads from the store, in one place, and the live poller.

No widgets here: the poller runs in a worker thread and only builds immutable snapshots
(:class:`LiveRunState`) from the store's own types (RunRecord, Sample, RunState). Units,
labels and figures come from the run's tool description (:func:`description_of`), never
from a metric's name.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.tool import ToolDescription
from racperf_tui.core.disks.saturation import EPISODES_STREAM, FOREIGN_IO_STREAM, episodes_text, recorded_episodes
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.tools import tool_description
from racperf_tui.ui.messages import LiveRunState

#: tool name -> its description, once found (a tool is looked up once per racperf)
_DESCRIPTIONS: dict[str, ToolDescription] = {}


def description_of(tool: str) -> ToolDescription:
    """The description of a run's tool (units, formats, figures); a bare one, never an error,
    for a tool no longer installed: its recorded runs are still shown."""
    found = _DESCRIPTIONS.get(tool)
    if found is None:
        try:
            found = _DESCRIPTIONS[tool] = tool_description(tool)
        except Exception:
            return ToolDescription(name=tool)
    return found


def open_store(data_dir: str | os.PathLike[str] | None) -> Store:
    """The store under ``data_dir`` (or the default data dir)."""
    return Store.open(resolve_data_dir(data_dir))


@dataclass
class LivePoller:
    """Reads a run's new samples since the last poll and keeps the bounded series.

    One poll = one indexed query for samples after the last seq seen plus one row read for
    the run's state; both cheap enough to run every 50 ms. Create it on the thread that
    polls (the store watcher's, which lends its connection: :meth:`use_store`): SQLite
    connections stay on their thread. The run's tool description (found on this
    thread too: it may import the tool's module) says which metrics the view shows.
    """

    data_dir: Any
    run_id: Any
    history: int = 120
    after_seq: int = 0
    samples_seen: int = 0
    series: dict[str, deque[float]] = field(default_factory=dict)
    current: dict[str, float] = field(default_factory=dict)
    last_t: float | None = None
    last_extra: dict[str, Any] = field(default_factory=dict)
    recent: deque[Sample] = field(default_factory=lambda: deque(maxlen=120))
    saturation: tuple[str, ...] = ()  # the saturation episodes, then the foreign I/O seen
    _store: Store | None = None
    #: False when the store is the caller's (the watcher's): not closed here
    _own_store: bool = True
    _run: RunRecord | None = None
    _description: ToolDescription | None = None
    _data_version: int | None = None
    _last_state: LiveRunState | None = None
    _last_state_at: float = 0.0

    def poll(self) -> LiveRunState:
        """Read what is new and return the whole latest state.

        While nothing was committed to the store since the last poll (``PRAGMA data_version``),
        the last state is returned as it is (rebuilt once a second for the elapsed clock): the
        queries and the copies of every series were most of the live view's CPU during a run.
        """
        if self._store is None:
            self._store = open_store(self.data_dir)
            self._own_store = True
        version = self._store.data_version()
        if (
            version == self._data_version
            and self._last_state is not None
            and time.monotonic() - self._last_state_at < 1.0
        ):
            return self._last_state
        self._data_version = version
        self._run = self._store.get_run(self.run_id)
        if self._description is None:
            self._description = description_of(self._run.tool)
        for seq, sample in self._store.samples(self.run_id, after_seq=self.after_seq):
            self.after_seq = max(self.after_seq, seq)
            self.take(sample)
        episodes = recorded_episodes(self._store.raw_output(self.run_id, EPISODES_STREAM))
        foreign = self._store.raw_output(self.run_id, FOREIGN_IO_STREAM).strip().splitlines()
        self.saturation = (*episodes_text(episodes), *foreign[-1:])
        self._last_state, self._last_state_at = self.state(), time.monotonic()
        return self._last_state

    def take(self, sample: Sample) -> None:
        """One more sample into the series (the store's next, or a replay's: ui/replay.py)."""
        self.samples_seen += 1
        self.last_t = sample.t
        self.last_extra = dict(sample.extra)
        self.recent.append(sample)
        for key, value in sample.metrics.items():
            if value is None:
                continue
            self.series.setdefault(key, deque(maxlen=self.history)).append(float(value))
            self.current[key] = float(value)

    def replaying(self, run: RunRecord, description: ToolDescription, saturation: tuple[str, ...]) -> None:
        """Show ``run`` as recorded, fed by :meth:`take` instead of the store (a replay)."""
        self._run, self._description, self.saturation = run, description, saturation

    def state(self, now: float | None = None) -> LiveRunState:
        """The latest state as an immutable snapshot (new lists, safe to hand to the UI).
        ``now``: the wall-clock time it is shown at (a replay's: the run's start plus the
        frame's time), else the present."""
        run = self._run
        description = self._description or ToolDescription()
        now = time.time() if now is None else now
        elapsed = None
        if run is not None:
            elapsed = (run.ended_at or now) - run.started_at
        elif self.last_t is not None:
            elapsed = self.last_t
        extra = self.last_extra
        eta = _number(extra.get("eta_s"))
        progress = _number(extra.get("progress_pct"))
        planned = description.planned_duration_s(run.config) if run is not None else None
        if planned and elapsed is not None:
            if eta is None:
                eta = max(planned - elapsed, 0.0)
            if progress is None:
                progress = min(100.0, 100.0 * elapsed / planned)
        state = run.state if run is not None else None
        if state is RunState.SUCCEEDED:
            progress, eta = 100.0, 0.0
        elif state is not None and state.finished and planned and elapsed is not None:
            # fio's last report after a stop says 100 % / ETA 0: the bar shows how far it got
            progress, eta = min(100.0, 100.0 * elapsed / planned), None
        return LiveRunState(
            run_id=self.run_id,
            state=state,
            tool=run.tool if run is not None else "",
            metrics=tuple(description.live_metrics(list(self.series))),
            series={key: list(values) for key, values in self.series.items()},
            current=dict(self.current),
            samples_seen=self.samples_seen,
            last_sample_t=self.last_t,
            elapsed_s=elapsed,
            eta_s=eta,
            progress_pct=progress,
            job_states=_job_states_text(extra) if state is not None and not state.finished else "",
            polled_at_monotonic=time.monotonic(),
            run=run,
            samples=tuple(self.recent),
            extra=dict(extra),
            saturation=self.saturation,
        )

    def use_store(self, store: Store) -> None:
        """Read through ``store`` (the caller's connection, on the caller's thread)."""
        self._store, self._own_store = store, False

    def close(self) -> None:
        """Close the store connection when it is the poller's own (on the polling thread)."""
        if self._store is not None and self._own_store:
            self._store.close()
        self._store = None


def _number(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _job_states_text(extra: Mapping[str, Any]) -> str:
    """The jobs of the latest interval in one line: count, ramp, errors, ETA per job group.

    fio's json status dumps carry each job's error, elapsed time and ETA (the supervisor's
    parser puts them in ``extra["jobs"]``); a tool that reports state letters may put a
    string in ``extra["job_states"]`` instead.
    """
    text = extra.get("job_states")
    if text:
        return str(text)
    jobs = extra.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        return ""
    names: dict[str, int] = {}
    errors = []
    for job in jobs:
        if not isinstance(job, Mapping):
            continue
        name = str(job.get("name", "?"))
        names[name] = names.get(name, 0) + 1
        if job.get("error"):
            errors.append(f"{name}: error {job['error']}")
    parts = [", ".join(f"{name} x{count}" if count > 1 else name for name, count in names.items())]
    parts.append("ramping up" if extra.get("ramp") else "running")
    parts.extend(errors)
    return "  ".join(parts)


def where_it_ran(run: RunRecord) -> str:
    """ "on TARGET", "at NODE" where it ran elsewhere; a tool without a target (CALIBRATE_IO,
    the network tools) says only where it ran, never "on -"."""
    at = f"at {run.host}" if run.host and run.host != "local" else ""
    if run.target:
        return f"on {run.target} {at}".rstrip()
    return at or "on this host"
