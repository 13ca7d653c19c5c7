"""A finished fio report as load points: what load each job ran at (its iodepth and numjobs,
read from the job's own options, never from a file name) and what it gave (IOPS, bandwidth,
mean and percentile latency), with Little's law's outstanding I/O and the device's own queue
beside the configured depth. The points a sweep curve is made of (:mod:`sweep_curves`).

Pure: a result dict of :mod:`racperf_tui.tools.fio.formats` in, :class:`LoadPoint` out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from racperf_tui.tools.fio.figures import histogram_percentiles, percentile_key

#: the directions whose I/O a point adds up ("mixed": unified_rw_reporting)
_DIRECTIONS = ("read", "write", "trim", "mixed")
#: Little's law below this share of the configured depth: fio did not keep its depth in flight
KEPT_DEPTH_SHARE = 0.75
#: the device's queue below this share of what fio had in flight: the rest waited above it
DEVICE_QUEUE_SHARE = 0.5
_P50, _P99 = percentile_key(50.0), percentile_key(99.0)


@dataclass(frozen=True, slots=True)
class DeviceLoad:
    """The target device over a point, as fio's disk_util saw it: its busy share, the mean
    time an I/O spent in it and the mean number of I/Os in it (time in queue / run time)."""

    name: str
    util_pct: float
    await_ms: float | None
    queue: float | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "util_pct": self.util_pct, "await_ms": self.await_ms, "queue": self.queue}


@dataclass(frozen=True, slots=True)
class LoadPoint:
    """One load point: a job (its clones without group_reporting added up) at one iodepth
    and numjobs. Latency is fio's total latency (lat, else clat) mean; the percentiles are
    clat's (fio reports lat's only with lat_percentiles), merged from json+ bins when every
    job has them, else the IOPS-weighted mean of the jobs' (``percentiles_from`` says which).
    ``nodes``: how many nodes ran it at once (a sweep on several nodes adds them up)."""

    rw: str
    bs: str
    iodepth: int
    numjobs: int
    iops: float
    bw_kib_s: float
    lat_mean_us: float | None
    lat_p50_us: float | None = None
    lat_p99_us: float | None = None
    percentiles_from: str | None = None
    device: DeviceLoad | None = None
    nodes: int = 1
    source: str = ""
    run_id: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def configured_depth(self) -> int:
        """The I/Os the job was told to keep in flight: iodepth x numjobs (x nodes)."""
        return self.iodepth * self.numjobs * self.nodes

    @property
    def littles_law_outstanding(self) -> float | None:
        """Little's law: the I/Os in flight on average = IOPS x mean latency."""
        if self.lat_mean_us is None:
            return None
        return self.iops * self.lat_mean_us / 1e6

    @property
    def note(self) -> str | None:
        """Where the queue is, when Little's law parts from the configured depth or from the
        device's own queue; None when they agree."""
        outstanding = self.littles_law_outstanding
        if outstanding is None:
            return None
        notes = []
        if outstanding < KEPT_DEPTH_SHARE * self.configured_depth:
            notes.append(
                f"fio kept {outstanding:.1f} of the configured {self.configured_depth} I/Os in flight "
                "(a synchronous engine ignores iodepth; buffered I/O, a rate limit or the host's CPU hold it back)"
            )
        queue = self.device.queue if self.device is not None else None
        if queue is not None and outstanding >= 1.0 and queue < DEVICE_QUEUE_SHARE * outstanding:
            assert self.device is not None
            notes.append(
                f"the queue is above the device: fio had {outstanding:.1f} I/Os in flight, "
                f"{self.device.name} held {queue:.1f} (host, throttle, filesystem)"
            )
        return "; ".join(notes) or None

    def with_run(self, run_id: int, nodes: int = 1) -> LoadPoint:
        return replace(self, run_id=run_id, nodes=nodes)

    def to_json(self) -> dict[str, Any]:
        outstanding = self.littles_law_outstanding
        out: dict[str, Any] = {
            "rw": self.rw,
            "bs": self.bs,
            "iodepth": self.iodepth,
            "numjobs": self.numjobs,
            "configured_depth": self.configured_depth,
            "iops": self.iops,
            "bw_kib_s": self.bw_kib_s,
            "lat_mean_us": self.lat_mean_us,
            "lat_p50_us": self.lat_p50_us,
            "lat_p99_us": self.lat_p99_us,
            "percentiles_from": self.percentiles_from,
            "littles_law_outstanding": None if outstanding is None else round(outstanding, 3),
            "device": None if self.device is None else self.device.to_json(),
            "note": self.note,
        }
        if self.nodes != 1:
            out["nodes"] = self.nodes
        if self.run_id is not None:
            out["run_id"] = self.run_id
        if self.source:
            out["source"] = self.source
        out.update(self.extra)
        return out


#: the keys of :meth:`LoadPoint.to_json` that are worked out, not kept
_DERIVED = frozenset({"configured_depth", "littles_law_outstanding", "note"})


def point_from_json(data: Mapping[str, Any]) -> LoadPoint:
    """A point as :meth:`LoadPoint.to_json` wrote it (a sweep group's result read back);
    ValueError (LoadPointError) naming what is missing or wrong."""
    try:
        device = data.get("device")
        known = {f for f in LoadPoint.__dataclass_fields__ if f != "extra"}
        return LoadPoint(
            rw=str(data["rw"]),
            bs=str(data["bs"]),
            iodepth=int(data["iodepth"]),
            numjobs=int(data["numjobs"]),
            iops=float(data["iops"]),
            bw_kib_s=float(data["bw_kib_s"]),
            lat_mean_us=_optional(data.get("lat_mean_us")),
            lat_p50_us=_optional(data.get("lat_p50_us")),
            lat_p99_us=_optional(data.get("lat_p99_us")),
            percentiles_from=data.get("percentiles_from"),
            device=None if not isinstance(device, Mapping) else _device_from_json(device),
            nodes=int(data.get("nodes", 1)),
            source=str(data.get("source", "")),
            run_id=None if data.get("run_id") is None else int(data["run_id"]),
            extra={k: v for k, v in data.items() if k not in known and k not in _DERIVED},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise LoadPointError(f"a sweep point that cannot be read: {exc!r}") from None


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)


def _device_from_json(data: Mapping[str, Any]) -> DeviceLoad:
    return DeviceLoad(
        str(data["name"]), float(data["util_pct"]), _optional(data.get("await_ms")), _optional(data.get("queue"))
    )


def live_figures(metrics: Mapping[str, Any]) -> dict[str, float]:
    """A point's figures now, from a fio sample's metrics: ``iops`` and ``bw_kib_s`` (the
    directions added up), ``lat_mean_us``, ``lat_p50_us``, ``lat_p99_us`` (clat, weighted by
    the directions' IOPS); a figure the sample lacks is left out."""
    found: dict[str, float] = {}
    by_direction = {
        d: float(metrics[f"{d}_iops"]) for d in _DIRECTIONS if isinstance(metrics.get(f"{d}_iops"), (int, float))
    }
    if by_direction:
        found["iops"] = sum(by_direction.values())
    bandwidth = [
        float(metrics[f"{d}_bw_kib_s"]) for d in _DIRECTIONS if isinstance(metrics.get(f"{d}_bw_kib_s"), (int, float))
    ]
    if bandwidth:
        found["bw_kib_s"] = sum(bandwidth)
    for figure, key in (("lat_mean_us", "clat_mean_us"), ("lat_p50_us", "clat_p50_us"), ("lat_p99_us", "clat_p99_us")):
        pairs = [
            (float(metrics[f"{d}_{key}"]), iops)
            for d, iops in by_direction.items()
            if isinstance(metrics.get(f"{d}_{key}"), (int, float)) and iops > 0
        ]
        value = _weighted(pairs)
        if value is not None:
            found[figure] = value
    return found


class LoadPointError(ValueError):
    """A report whose load cannot be read (an iodepth that is not a number); says where."""


def _options(result: Mapping[str, Any], job: Mapping[str, Any]) -> dict[str, str]:
    merged = {str(k).lower(): str(v) for k, v in (result.get("global_options") or {}).items()}
    merged.update({str(k).lower(): str(v) for k, v in (job.get("options") or {}).items()})
    return merged


def _whole(options: Mapping[str, str], name: str, where: str) -> int:
    text = options.get(name, "1").strip()
    try:
        value = int(text)
    except ValueError:
        raise LoadPointError(f"{where}: {name}={text[:40]!r} is not a whole number") from None
    if value < 1:
        raise LoadPointError(f"{where}: {name}={value} is below 1")
    return value


def load_of(result: Mapping[str, Any], job: Mapping[str, Any], where: str) -> tuple[str, str, int, int]:
    """(rw, bs, iodepth, numjobs) of a job, from its own options over the report's global ones
    (fio's defaults where neither says: rw=read, bs=4k, iodepth=1, numjobs=1)."""
    options = _options(result, job)
    rw = (options.get("rw") or options.get("readwrite") or "read").split(":")[0].strip().lower()
    bs = (options.get("bs") or options.get("blocksize") or "4k").strip().lower()
    return rw, bs, _whole(options, "iodepth", where), _whole(options, "numjobs", where)


def _blocks(jobs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [
        job[d]
        for job in jobs
        for d in _DIRECTIONS
        if isinstance(job.get(d), Mapping) and float(job[d].get("io_kib") or 0) > 0
    ]


def _latency(block: Mapping[str, Any]) -> Mapping[str, Any]:
    lat = block.get("lat_us")
    return lat if isinstance(lat, Mapping) and lat.get("mean") is not None else block.get("clat_us") or {}


def _weighted(pairs: Sequence[tuple[float, float]]) -> float | None:
    mass = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / mass if mass > 0 else None


def _percentiles(blocks: Sequence[Mapping[str, Any]]) -> tuple[float | None, float | None, str | None]:
    """(p50, p99, how) of clat over the blocks: merged bins, the only block's, or weighted."""
    if not blocks:
        return None, None, None
    bins = [block.get("clat_bins_ns") for block in blocks]
    if all(isinstance(b, Mapping) and b for b in bins):
        merged: dict[int, int] = {}
        for one in bins:
            assert isinstance(one, Mapping)
            for value, count in one.items():
                merged[int(value)] = merged.get(int(value), 0) + int(count)
        pct = histogram_percentiles(merged, (50.0, 99.0))
        if pct:
            return pct[50.0] / 1000.0, pct[99.0] / 1000.0, "bins"
    found = [
        (block["clat_us"]["percentiles"], float(block.get("iops") or 0.0))
        for block in blocks
        if isinstance(block.get("clat_us"), Mapping) and isinstance(block["clat_us"].get("percentiles"), Mapping)
    ]
    if not found:
        return None, None, None
    if len(found) == 1:
        p = found[0][0]
        return p.get(_P50), p.get(_P99), "one job"
    p50 = _weighted([(float(p[_P50]), w) for p, w in found if _P50 in p])
    p99 = _weighted([(float(p[_P99]), w) for p, w in found if _P99 in p])
    return p50, p99, "weighted"


def _device(result: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]]) -> DeviceLoad | None:
    """The first disk fio names (the one the file is on; the devices under it follow)."""
    disks = result.get("disk_util") or []
    if not disks or not isinstance(disks[0], Mapping):
        return None
    disk = disks[0]
    runtimes = [float(block.get("runtime_ms") or 0.0) for block in _blocks(jobs)]
    runtime_ms = max(runtimes, default=0.0)
    ios = float(disk.get("read_ios") or 0) + float(disk.get("write_ios") or 0)
    ticks = float(disk.get("read_ticks_ms") or 0) + float(disk.get("write_ticks_ms") or 0)
    in_queue = float(disk.get("in_queue_ms") or 0) or ticks
    return DeviceLoad(
        name=str(disk.get("name") or "?"),
        util_pct=float(disk.get("util_pct") or 0.0),
        await_ms=ticks / ios if ios > 0 else None,
        queue=in_queue / runtime_ms if runtime_ms > 0 else None,
    )


def points_of(result: Mapping[str, Any], source: str = "") -> list[LoadPoint]:
    """The load points of one fio report: one per job, a job's numjobs clones (no
    group_reporting: fio lists each) added up into one. LoadPointError names the job whose
    load cannot be read; a job that did no I/O gives no point."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    loads: dict[tuple[Any, ...], tuple[str, str, int, int]] = {}
    for index, job in enumerate(result.get("jobs") or []):
        where = f"{source or 'report'}: jobs[{index}] ({job.get('name', '?')})"
        load = load_of(result, job, where)
        key = (job.get("groupid", 0), job.get("name", ""), *load)
        groups.setdefault(key, []).append(job)
        loads[key] = load
    points = []
    for key, jobs in groups.items():
        blocks = _blocks(jobs)
        if not blocks:
            continue
        rw, bs, iodepth, numjobs = loads[key]
        iops = sum(float(block.get("iops") or 0.0) for block in blocks)
        means = [
            (float(_latency(block)["mean"]), float(block.get("iops") or 0.0))
            for block in blocks
            if _latency(block).get("mean") is not None
        ]
        mean = _weighted(means)
        p50, p99, how = _percentiles(blocks)
        points.append(
            LoadPoint(
                rw=rw,
                bs=bs,
                iodepth=iodepth,
                numjobs=numjobs,
                iops=iops,
                bw_kib_s=sum(float(block.get("bw_kib_s") or 0.0) for block in blocks),
                lat_mean_us=mean if mean is None or math.isfinite(mean) else None,
                lat_p50_us=None if p50 is None else float(p50),
                lat_p99_us=None if p99 is None else float(p99),
                percentiles_from=how,
                device=_device(result, jobs),
                source=source,
            )
        )
    return points
