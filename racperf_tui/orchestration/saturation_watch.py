"""A run's target devices judged by the saturation rule while it runs, episodes kept with it.

The supervisor of a local run that touches block devices polls this every tick; once a
second it samples /proc/diskstats for those devices (core/disks/iostat_sampler.py) and feeds
the Disks tab's model (core/disks/saturation.py). Each queueing or saturated episode is kept
with the benchmark's load when it began (its IOPS then, fio's iodepth x numjobs when the run
says them, ORION's data point, the sweep's point), and recorded in the run's store under the
raw stream ``saturation`` (one JSON list, written again as episodes begin and end), which
``racperf runs show`` lists. Each interval's iostat of those devices goes to the stream
``iostat`` (core/disks/iostat_record.py), so a report shows the devices over the whole run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.disks.diskstats import QueueFacts
from racperf_tui.core.disks.iostat_model import IostatModel
from racperf_tui.core.disks.iostat_record import IOSTAT_STREAM, iostat_line
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from racperf_tui.core.disks.saturation import EPISODES_STREAM, FOREIGN_IO_STREAM, Episode, SaturationRules
from racperf_tui.orchestration.foreign_io import Figures, ForeignIoCheck

#: Seconds between two samples of the target devices.
INTERVAL_S = 1.0


def load_of(config: Mapping[str, Any], sample: Sample | None, point: str = "") -> str:
    """The benchmark's load in words (what is known): ``point`` (a sweep's: 'sweep g7 point
    3 of 8'), fio's 'iodepth 32 x 1 job', ORION's data point ('ORION data point 3 of 8: small
    4, large 0'), the IOPS of its latest sample."""
    parts = [point] if point else []
    extra = sample.extra if sample is not None else {}
    if extra.get("data_point"):
        of = f" of {extra['data_points']}" if extra.get("data_points") else ""
        loads = f": small {extra['small']}, large {extra['large']}" if "small" in extra and "large" in extra else ""
        parts.append(f"ORION data point {extra['data_point']}{of}{loads}")
    iodepth, numjobs = config.get("iodepth"), config.get("numjobs")
    if iodepth not in (None, ""):
        jobs = int(str(numjobs)) if str(numjobs or "").isdigit() else 1
        parts.append(f"iodepth {iodepth} x {jobs} job{'s' if jobs != 1 else ''}")
    if sample is not None:
        iops = [value for key, value in sample.metrics.items() if key.endswith("_iops") and value is not None]
        if iops:
            parts.append(f"{sum(iops):,.0f} IOPS")
    return ", ".join(parts)


class SaturationWatch:
    """Poll with :meth:`poll` (cheap between samples); :meth:`episodes` says what was seen."""

    def __init__(
        self,
        devices: list[str],
        config: Mapping[str, Any],
        record: Callable[[str, str], None],
        *,
        target_device: str = "",
        point: str = "",
        rules: SaturationRules | None = None,
        sampler: IostatSampler | None = None,
        interval_s: float = INTERVAL_S,
    ) -> None:
        """``devices``: kernel names (block_devices.devices_reached); ``record(stream, text)``
        stores the episodes as the run's ``saturation`` stream and foreign I/O as its
        ``foreign_io`` stream. ``target_device``: the device the benchmark's own I/O lands on,
        compared with what it says it issued (orchestration/foreign_io.py; direct I/O only).
        ``point``: which point of a sweep the run is, said with its load."""
        self.devices = sorted(set(devices))
        self.config = config
        self.record = record
        self.interval_s = interval_s
        self.point = point
        self.sampler = sampler or IostatSampler(devices=self.devices, partitions=True)
        try:
            rules = rules or SaturationRules.from_env()
        except ValueError:
            rules = SaturationRules()  # the run goes on; the Disks tab says what is wrong
        self.model = IostatModel(rules, facts_of=self._facts)
        self.model.update(self.sampler.sample(), record_history=False)
        self._next = time.monotonic() + interval_s
        self._recorded: tuple[tuple[str, str, float], ...] = ()
        self.last_sample: Sample | None = None
        direct = str(config.get("direct", True)).lower() not in ("false", "0", "")
        self.foreign = ForeignIoCheck(target_device) if target_device and direct else None

    def _facts(self, name: str) -> QueueFacts | None:
        try:
            return self.sampler.queue_facts(name)
        except (OSError, ValueError):
            return None

    def saw(self, sample: Sample) -> None:
        """The benchmark's latest sample: its load is said with each episode that begins, and
        what it issued is compared with what its device did."""
        self.last_sample = sample
        if self.foreign is None or sample.extra.get("ramp"):
            return
        iops = [v for k, v in sample.metrics.items() if k.endswith("_iops") and v is not None]
        kib = [v for k, v in sample.metrics.items() if k.endswith("_bw_kib_s") and v is not None]
        if iops and kib:
            self.foreign.benchmark(Figures(time.monotonic(), sum(iops), sum(kib)))

    def heard(self, samples: list[Sample]) -> None:
        """Samples of the run's companions (ORION's data point as its LUNs' load measures it,
        not its clock's guess): the newest names the load an episode begins at."""
        if samples:
            self.last_sample = samples[-1]

    def poll(self) -> None:
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + self.interval_s
        self.model.load_note = load_of(self.config, self.last_sample, self.point)
        report = self.sampler.sample()
        if report.interval_s > 0:
            self.model.update(report)
            self._check_foreign(now)
            line = iostat_line(report.wall_time, report.interval_s, report.rows, self.devices)
            if line:
                self.record(IOSTAT_STREAM, line)
        # recorded as each begins or ends, so a live view shows it while it lasts
        if self._key() != self._recorded:
            self.flush()

    def _check_foreign(self, now: float) -> None:
        check = self.foreign
        state = self.model.devices.get(check.device_name) if check is not None else None
        if check is None or state is None:
            return
        row = state.row
        if check.device(Figures(now, row.r_s + row.w_s, row.rkb_s + row.wkb_s)):
            self.record(FOREIGN_IO_STREAM, check.note + "\n")

    def _key(self) -> tuple[tuple[str, str, float], ...]:
        return tuple((e.device, e.level, e.since) for e in self.episodes())

    def episodes(self) -> list[Episode]:
        return [e for e in self.model.episodes_so_far() if e.device in self.devices]

    def flush(self) -> None:
        """Record every episode so far (those still going end now, as far as the record says)."""
        episodes = self.episodes()
        self._recorded = self._key()
        if episodes:
            self.record(EPISODES_STREAM, json.dumps([episode.as_dict() for episode in episodes]) + "\n")
