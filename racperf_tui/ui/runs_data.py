"""What the runs UI reads from the store, in one place, and the live poller.

No widgets here: the poller runs in a worker thread and only builds immutable snapshots
(:class:`LiveRunState`). :func:`field_of` reads a record whether it is a dataclass, a row or
a dict, so the screens do not depend on the store's record type.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Mapping

from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.store import Store
from racperf_tui.ui.messages import LiveRunState
from racperf_tui.ui.widgets.metric_sparkline import format_value

#: live metrics shown as sparklines: (metric key, label, unit shown); bandwidth is stored in
#: KiB/s and shown in MiB/s (see LIVE_DISPLAY_DIVISORS)
LIVE_METRICS: list[tuple[str, str, str]] = [
    ("read_iops", "read IOPS", ""),
    ("write_iops", "write IOPS", ""),
    ("read_bw_kib_s", "read BW", "MiB/s"),
    ("write_bw_kib_s", "write BW", "MiB/s"),
    ("read_clat_p50_us", "read clat p50", "µs"),
    ("read_clat_p99_us", "read clat p99", "µs"),
    ("read_clat_p99.9_us", "read clat p99.9", "µs"),
    ("write_clat_p50_us", "write clat p50", "µs"),
    ("write_clat_p99_us", "write clat p99", "µs"),
    ("write_clat_p99.9_us", "write clat p99.9", "µs"),
]

#: metric key -> divisor from the stored unit to the unit shown
LIVE_DISPLAY_DIVISORS: dict[str, float] = {"read_bw_kib_s": 1024.0, "write_bw_kib_s": 1024.0}

LIVE_STATES = ("pending", "running")

#: metric-name suffix -> the unit shown (another tool's metrics, named with their units)
_UNIT_SUFFIXES = (("_mib_s", "MiB/s"), ("_mbit_s", "Mbit/s"), ("_kib_s", "KiB/s"), ("_per_s", "/s"),
                  ("_kib", "KiB"), ("_bytes", "B"), ("_ms", "ms"), ("_us", "µs"), ("_pct", "%"),
                  ("_s", "s"))


def metric_label_and_unit(key: str) -> tuple[str, str]:
    """``throughput_mib_s`` -> ("throughput", "MiB/s"): the label and unit of another tool's
    metric (fio's have their own labels in LIVE_METRICS)."""
    for suffix, unit in _UNIT_SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)].replace("_", " "), unit
    return key.replace("_", " "), ""


def other_tool_metric_keys(keys: Iterable[str]) -> list[str]:
    """Another tool's metrics as shown: throughput first, and one rate where the tool records
    it twice (the probe: MiB/s, oratcptest's unit, and Mbit/s)."""
    keys = list(keys)
    keys = [key for key in keys if not (key.endswith("_mib_s") and key[:-6] + "_mbit_s" in keys)]
    return sorted(keys, key=lambda k: (not k.startswith("throughput"), k))


def field_of(record: Any, name: str, default: Any = None) -> Any:
    """``record.name`` or ``record[name]``, whichever the record offers; else ``default``."""
    if record is None:
        return default
    if isinstance(record, Mapping):
        return record.get(name, default)
    value = getattr(record, name, _MISSING)
    if value is not _MISSING:
        return value
    try:
        return record[name]
    except (KeyError, IndexError, TypeError):
        return default


_MISSING = object()


def state_text(state: Any) -> str:
    """A run state as its plain string (``RunState.RUNNING`` -> ``"running"``)."""
    value = getattr(state, "value", state)
    return str(value) if value is not None else "?"


def as_epoch(value: Any) -> float | None:
    """A timestamp stored as epoch seconds or ISO text -> epoch seconds."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None


def format_duration(seconds: float | None) -> str:
    """``73`` -> ``1m13s``; ``None`` -> ``-``."""
    if seconds is None or seconds < 0:
        return "-"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def open_store(data_dir: str | os.PathLike[str] | None) -> Any:
    """The store under ``data_dir`` (or the default data dir)."""
    return Store.open(resolve_data_dir(data_dir))


def config_of(run: Any) -> dict[str, Any]:
    """A run's config as a dict, whether stored as a dict or JSON text."""
    config = field_of(run, "config", {})
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            return {}
    return dict(config or {})


def planned_duration_s(config: Mapping[str, Any]) -> float | None:
    """runtime + ramp_time from a fio-like config (or a network tool's duration_s), in
    seconds, when it says so."""
    def seconds(value: Any) -> float | None:
        if value in (None, ""):
            return None
        text = str(value).strip().lower()
        factor = 1.0
        for suffix, mult in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
            if text.endswith(suffix):
                text, factor = text[: -len(suffix)], mult
                break
        try:
            return float(text) * factor
        except ValueError:
            return None

    # fio's runtime; the network tools' test duration
    runtime = seconds(config.get("runtime") or config.get("runtime_s") or config.get("duration_s"))
    if runtime is None:
        return None
    return runtime + (seconds(config.get("ramp_time") or config.get("ramp_time_s")) or 0.0)


def sample_parts(row: Any) -> tuple[int, float, dict[str, float], dict[str, Any]]:
    """(seq, t, metrics, extra) from whatever ``Store.samples`` yields per sample."""
    if isinstance(row, (tuple, list)) and len(row) == 2 and not isinstance(row[1], (int, float)):
        seq, sample = row
    else:
        seq, sample = field_of(row, "seq", 0), field_of(row, "sample", row)
    metrics = field_of(sample, "metrics", {}) or {}
    if isinstance(metrics, str):
        metrics = json.loads(metrics)
    extra = field_of(sample, "extra", {}) or {}
    if isinstance(extra, str):
        extra = json.loads(extra)
    return int(seq or 0), float(field_of(sample, "t", 0.0) or 0.0), dict(metrics), dict(extra)


def _rate_text(mbit_s: float) -> str:
    """A network rate in at most 11 characters (the runs list's figure column)."""
    if mbit_s >= 99_950:
        return f"{mbit_s / 1000:.0f} Gbit/s"
    return f"{mbit_s / 1000:.1f} Gbit/s" if mbit_s >= 1000 else f"{mbit_s:.0f} Mbit/s"


def network_figure(values: Mapping[str, Any]) -> str:
    """The figure of a network sample or result (iperf3, probe, oratcptest, netperf): its
    throughput in Mbit/s, else its latency (RTT / RR tests), else ''."""
    def number(key: str) -> float | None:
        value = values.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    mbit_s = next((v for v in (number("received_mbit_s"), number("throughput_mbit_s")) if v), None)
    if mbit_s is None:
        mib_s = number("avg_throughput_mib_s") or number("throughput_mib_s")
        mbit_s = mib_s * 1024 * 1024 * 8 / 1e6 if mib_s else None
    if mbit_s:
        return _rate_text(mbit_s)
    latency_ms = number("avg_latency_ms") or number("latency_ms")
    if latency_ms:
        return f"{latency_ms:.3f} ms"
    trans = number("trans_per_s")
    if trans:
        return f"{format_value(trans)} tr/s"
    return ""


def sample_figure(metrics: Mapping[str, Any]) -> str:
    """The runs list's figure for a running run's latest sample: fio's total IOPS, or a
    network tool's rate / latency."""
    if "read_iops" in metrics or "write_iops" in metrics:
        iops = float(metrics.get("read_iops") or 0) + float(metrics.get("write_iops") or 0)
        return f"{format_value(iops)} IOPS"
    return network_figure(metrics)


def key_figure(result: Mapping[str, Any] | None) -> str:
    """The one number the runs list shows for a finished run (total fio IOPS, or a network
    tool's rate / latency)."""
    if not result:
        return ""
    if "jobs" not in result:
        return network_figure(result)
    jobs = result.get("jobs") or []
    total_iops = 0.0
    for job in jobs:
        for direction in ("read", "write"):
            total_iops += float((job.get(direction) or {}).get("iops") or 0.0)
    if not jobs:
        return ""
    return f"{format_value(total_iops)} IOPS"


@dataclass
class LivePoller:
    """Reads a run's new samples since the last poll and keeps the bounded series.

    One poll = one indexed query for samples after the last seq seen plus one row read for
    the run's state; both cheap enough to run every 50 ms. Create it on the thread that
    polls: SQLite connections stay on their thread.
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
    _store: Any = None
    _run: Any = None
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
        version = self._store.data_version()
        if (version == self._data_version and self._last_state is not None
                and time.monotonic() - self._last_state_at < 1.0):
            return self._last_state
        self._data_version = version
        self._run = self._store.get_run(self.run_id)
        for row in self._store.samples(self.run_id, after_seq=self.after_seq):
            seq, t, metrics, extra = sample_parts(row)
            self.after_seq = max(self.after_seq, seq)
            self.samples_seen += 1
            self.last_t = t
            self.last_extra = extra
            for key, value in metrics.items():
                if value is None:
                    continue
                self.series.setdefault(key, deque(maxlen=self.history)).append(float(value))
                self.current[key] = float(value)
        self._last_state, self._last_state_at = self.state(), time.monotonic()
        return self._last_state

    def state(self) -> LiveRunState:
        """The latest state as an immutable snapshot (new lists, safe to hand to the UI)."""
        run = self._run
        started = as_epoch(field_of(run, "started_at", None) or field_of(run, "start", None))
        ended = as_epoch(field_of(run, "ended_at", None) or field_of(run, "end", None))
        now = time.time()
        elapsed = None
        if started is not None:
            elapsed = (ended or now) - started
        elif self.last_t is not None:
            elapsed = self.last_t
        extra = self.last_extra
        eta = _number(extra.get("eta_s"))
        progress = _number(extra.get("progress_pct"))
        planned = planned_duration_s(config_of(run))
        if planned and elapsed is not None:
            if eta is None:
                eta = max(planned - elapsed, 0.0)
            if progress is None:
                progress = min(100.0, 100.0 * elapsed / planned)
        state = state_text(field_of(run, "state", "?"))
        if state not in LIVE_STATES and state == "succeeded":
            progress, eta = 100.0, 0.0
        elif state not in LIVE_STATES and planned and elapsed is not None:
            # fio's last report after a stop says 100 % / ETA 0: the bar shows how far it got
            progress, eta = min(100.0, 100.0 * elapsed / planned), None
        return LiveRunState(
            run_id=self.run_id,
            state=state,
            series={key: list(values) for key, values in self.series.items()},
            current=dict(self.current),
            samples_seen=self.samples_seen,
            last_sample_t=self.last_t,
            elapsed_s=elapsed,
            eta_s=eta,
            progress_pct=progress,
            job_states=_job_states_text(extra) if state in LIVE_STATES else "",
            polled_at_monotonic=time.monotonic(),
        )

    def close(self) -> None:
        """Close the store connection (on the polling thread)."""
        closer = getattr(self._store, "close", None)
        if closer is not None:
            closer()
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


def block_devices_of(target: str | os.PathLike[str] | None, sys_root: str = "/sys") -> list[str]:
    """Kernel names of the block devices I/O on ``target`` reaches (``["sda1", "sda"]``).

    A block device is named by its own major:minor; a file or directory by the device of the
    filesystem holding it (st_dev). A partition adds its whole disk; a device-mapper or md
    device adds the devices under it (``slaves``), because iostat shows all of them.
    """
    if not target:
        return []
    try:
        st = os.stat(target)
    except OSError:
        parent = Path(target).parent
        try:
            st = os.stat(parent)
        except OSError:
            return []
    dev = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    sys_dev = Path(sys_root) / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}"
    try:
        real = sys_dev.resolve(strict=True)
    except OSError:
        return []
    names: list[str] = [real.name]
    if (real / "partition").exists():
        names.append(real.parent.name)
    slaves = real / "slaves"
    if slaves.is_dir():
        names.extend(sorted(p.name for p in slaves.iterdir()))
    return _unique(names)


def _unique(names: Iterable[str]) -> list[str]:
    seen: list[str] = []
    for name in names:
        if name not in seen:
            seen.append(name)
    return seen
