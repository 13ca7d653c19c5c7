"""Every node's iostat, sampled at the interval over its one SSH channel, as plain state.

One coroutine per node on core/remote/ssh.py's event loop (no thread of its own: a slow or dead node
holds up no other, since each waits for its answer without blocking the loop) connects
(core/remote/ssh.py's pool: one connection per node), opens the node's sampling channel
(core/remote/remote_diskstats.py) and, at whole multiples of the interval on the wall clock (every node
samples at the same instants, so their figures line up), asks for a sample and computes it with
the same reader and math as the local Disks tab (``IostatSampler`` over the node's laid-out
root). What it learns is published as a frozen :class:`NodeState` (rows, sample times, state
with the reason) that any thread may read; ``on_sample(name)`` is called (in the SSH loop's
thread) after each change. A sample with the sysfs facts (every 30 s a node) writes and reads
files: that one is computed in the monitor's one worker thread, the per-second ones in the loop
from memory.

States: ``connecting`` (first attempt), ``ok``, ``unreachable`` (never reached: the reason says
DNS, refused, auth, host key, timeout...), ``lost`` (was sampled, then the link or the node went:
the last rows are kept), ``reconnecting`` (a lost node tried again; backoff doubling from
``backoff_s[0]`` to ``backoff_s[1]``). A sample that does not arrive within ``sample_timeout_s``
(30 s for one with the sysfs facts, whose walks are spread over their 30 s period, node by node)
is a lost link (no FIN or RST comes from a dead cable): the connection is aborted so the pool
makes a fresh one.

Shared LUNs (:func:`shared_luns`): a LUN is named the same on every node that sees it by its
WWID (SCSI device/wwid, NVMe wwid, a multipath map's dm uuid ``mpath-WWID``), else a dm uuid
(LVM, ...), else a dm name. On a node the multipath map stands for its paths (they are not
counted again). A key seen on two or more nodes in state ``ok`` is one group, with the cluster
total: IOPS and MB/s summed, await weighted by I/Os, avgqu-sz summed, %util the highest.
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from racperf_tui.core.disks.diskstats import QueueFacts, list_dir, read_queue_facts
from racperf_tui.core.disks.iostat_sampler import IostatReport, IostatRow, IostatSampler
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.cluster import Node
from racperf_tui.core.remote.remote_diskstats import SAMPLE_TIMEOUT_S, SYSFS_REFRESH_S, AsyncRemoteDiskstats
from racperf_tui.core.remote.ssh import Connection, HostKeyError, SshError, SshTarget

T = TypeVar("T")

CONNECTING, OK, UNREACHABLE, LOST, RECONNECTING = "connecting", "ok", "unreachable", "lost", "reconnecting"
#: the first and the longest wait between two attempts to reach a node
BACKOFF_S = (1.0, 30.0)
#: a report over this little time is the same files read twice (the Disks tab skips them too)
STALE_INTERVAL_S = 0.01


@dataclass(frozen=True)
class NodeState:
    """What is known of one node now. Rows are the last sample's (kept when the node is lost)."""

    name: str
    spec: str  # user@host:port
    state: str = CONNECTING
    reason: str = ""  # why it is not ok ("refused: ...", "lost link: ..."); empty when ok
    rows: tuple[IostatRow, ...] = ()
    since_boot: bool = True  # the rows are since boot (the first sample), not an interval
    interval_s: float = 0.0
    sampled_at: float = 0.0  # wall clock time of the last sample (time.time())
    requested_at: float = 0.0  # monotonic: the last sample was asked for
    published_at: float = 0.0  # monotonic: the last sample's state was published
    seq: int = 0  # samples so far (over every connection)
    errors: tuple[str, ...] = ()  # what the reader said of the node's files
    facts: Mapping[str, QueueFacts] = field(default_factory=dict)  # kernel name -> queue facts
    luns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # LUN key -> its kernel names here
    lun_labels: Mapping[str, str] = field(default_factory=dict)  # LUN key -> a name to show
    hostname: str = ""
    retry_at: float = 0.0  # wall clock time of the next attempt (not ok)


@dataclass(frozen=True)
class SharedLunMember:
    node: str
    row: IostatRow  # the node's figures of the LUN (its paths summed when there is no map)


@dataclass(frozen=True)
class SharedLun:
    key: str
    label: str
    members: tuple[SharedLunMember, ...]
    total: IostatRow
    queue_limit: int | None  # the members' queue limits summed (None: one unknown)


# ---- why a node cannot be reached ----------------------------------------------------------


def failure_reason(exc: BaseException) -> str:
    """``KIND: message`` with KIND one of DNS, refused, auth, host key, timeout, unreachable,
    lost link, error: what the user fixes first."""
    text = str(exc) or type(exc).__name__
    lowered = text.lower()
    if isinstance(exc, HostKeyError):
        kind = "host key changed" if exc.changed else "host key unknown"
    elif "login refused" in lowered or "permission denied" in lowered or "cannot use the identity" in lowered:
        kind = "auth"
    elif any(
        s in lowered
        for s in ("name or service not known", "name resolution", "no address associated", "nodename nor servname")
    ):
        kind = "DNS"
    elif "connection refused" in lowered:
        kind = "refused"
    elif "no route to host" in lowered or "network is unreachable" in lowered:
        kind = "unreachable"
    elif "no sample within" in lowered or "timed out" in lowered or isinstance(exc, TimeoutError):
        kind = "timeout"
    elif "closed" in lowered or "connection lost" in lowered or "reset" in lowered:
        kind = "lost link"
    else:
        kind = "error"
    return f"{kind}: {text}"


# ---- LUN identities from a node's sysfs -----------------------------------------------------


def _read_line(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline(4096).strip()
    except OSError:
        return ""


def canonical_wwid(text: str) -> str:
    """One spelling of a WWID whichever file it came from: sysfs's ``naa.600...`` and
    multipath's ``3600...`` (the leading digit is the SCSI designator type: 3 NAA, 2 EUI-64)
    are the same LUN."""
    text = " ".join(text.split())
    body = text[1:]
    if len(text) > 8 and text[0] in "23" and all(c in "0123456789abcdefABCDEF" for c in body):
        return ("naa." if text[0] == "3" else "eui.") + body.lower()
    if text[:4].lower() in ("naa.", "eui."):
        return text[:4].lower() + text[4:].lower()
    return text


def lun_identities(root: Path) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """(LUN key -> its top devices' kernel names, LUN key -> label) of the node under ``root``."""
    block = os.path.join(root, "sys/block")
    keys: dict[str, str] = {}
    labels: dict[str, str] = {}
    slaves: dict[str, list[str]] = {}
    for name in list_dir(block) or []:
        base = os.path.join(block, name)
        uuid, dm_name = _read_line(f"{base}/dm/uuid"), _read_line(f"{base}/dm/name")
        wwid = _read_line(f"{base}/device/wwid") or _read_line(f"{base}/wwid")
        if uuid.startswith("mpath-") and len(uuid) > 6:
            key = "wwid:" + canonical_wwid(uuid[6:])
        elif uuid:
            key = "dm-uuid:" + uuid
        elif dm_name:
            key = "dm:" + dm_name
        elif wwid:
            key = "wwid:" + canonical_wwid(wwid)
        else:
            continue
        keys[name] = key
        if dm_name:  # a map's alias (what the DBA named the LUN) before a path's WWID
            labels[key] = dm_name
        else:
            labels.setdefault(key, key.partition(":")[2])
        slaves[name] = list_dir(os.path.join(base, "slaves")) or []
    # a multipath map (or any dm device) of the same LUN stands for its paths
    covered = {s for name, below in slaves.items() for s in below if keys.get(s) == keys[name]}
    luns: dict[str, list[str]] = {}
    for name, key in sorted(keys.items()):
        if name not in covered:
            luns.setdefault(key, []).append(name)
    return {k: tuple(v) for k, v in luns.items()}, {k: labels[k] for k in luns}


# ---- the cluster total of a shared LUN ------------------------------------------------------


def sum_rows(device: str, rows: Sequence[IostatRow]) -> IostatRow:
    """The LUN seen from several nodes (or several paths) as one: rates and queues summed,
    times weighted by the I/Os they timed, %util the highest (each node's %util is the
    share of time *it* had an I/O outstanding; they overlap, so their sum means nothing)."""
    r = sum(x.r_s for x in rows)
    w = sum(x.w_s for x in rows)
    ios = r + w

    def weighted(value: Callable[[IostatRow], float], weight: Callable[[IostatRow], float], total: float) -> float:
        return sum(value(x) * weight(x) for x in rows) / total if total > 0 else 0.0

    return IostatRow(
        device,
        r,
        w,
        sum(x.rkb_s for x in rows),
        sum(x.wkb_s for x in rows),
        sum(x.rrqm_s for x in rows),
        sum(x.wrqm_s for x in rows),
        weighted(lambda x: x.avgrq_sz, lambda x: x.r_s + x.w_s, ios),
        sum(x.avgqu_sz for x in rows),
        weighted(lambda x: x.await_ms, lambda x: x.r_s + x.w_s, ios),
        weighted(lambda x: x.r_await_ms, lambda x: x.r_s, r),
        weighted(lambda x: x.w_await_ms, lambda x: x.w_s, w),
        weighted(lambda x: x.svctm_ms, lambda x: x.r_s + x.w_s, ios),
        max((x.util_pct for x in rows), default=0.0),
    )


def _queue_limit(facts: QueueFacts | None, all_facts: Mapping[str, QueueFacts], depth: int = 0) -> int | None:
    if facts is None:
        return None
    if facts.slaves and depth < 4:
        limits = [_queue_limit(all_facts.get(s), all_facts, depth + 1) for s in facts.slaves]
        if all(x is not None for x in limits):
            return sum(x for x in limits if x is not None)
    return facts.queue_depth or facts.nr_requests


def shared_luns(states: Mapping[str, NodeState]) -> list[SharedLun]:
    """The LUNs seen on two or more nodes in state ok, with the cluster total, by label."""
    seen: dict[str, list[tuple[NodeState, tuple[str, ...]]]] = {}
    for state in states.values():
        if state.state != OK or state.since_boot:
            continue
        for key, names in state.luns.items():
            seen.setdefault(key, []).append((state, names))
    groups = []
    for key, where in seen.items():
        if len(where) < 2:
            continue
        members = []
        limits: list[int | None] = []
        for state, names in where:
            by_kernel = {row.kernel_name or row.device: row for row in state.rows}
            rows = [by_kernel[n] for n in names if n in by_kernel]
            if not rows:
                continue
            label = rows[0].device if len(rows) == 1 else "+".join(r.device for r in rows)
            members.append(SharedLunMember(state.name, rows[0] if len(rows) == 1 else sum_rows(label, rows)))
            limits.extend(_queue_limit(state.facts.get(n), state.facts) for n in names)
        if len(members) < 2:
            continue
        label = where[0][0].lun_labels.get(key, key)
        limit = sum(x for x in limits if x is not None) if all(x is not None for x in limits) else None
        groups.append(SharedLun(key, label, tuple(members), sum_rows(label, [m.row for m in members]), limit or None))
    return sorted(groups, key=lambda g: g.label)


# ---- the monitor ------------------------------------------------------------------------------


class ClusterMonitor:
    """Samples every node's iostat in coroutines on the SSH loop; :meth:`states` is the plain state."""

    def __init__(
        self,
        nodes: Sequence[Node],
        interval_s: float = 1.0,
        *,
        on_sample: Callable[[str], None] | None = None,
        sample_timeout_s: float | None = None,
        sysfs_timeout_s: float | None = None,
        backoff_s: tuple[float, float] = BACKOFF_S,
        remote_roots: Mapping[str, str] | None = None,
    ) -> None:
        """``sample_timeout_s`` None: max(10 s, 5 intervals); ``sysfs_timeout_s`` None: 30 s
        (at least the former). ``remote_roots``: node name ->
        a directory on the node read instead of / (tests replay recorded trees)."""
        if not interval_s > 0 or not math.isfinite(interval_s):
            raise ValueError(f"interval {interval_s!r}: a positive number of seconds")
        names = [n.name for n in nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"nodes named twice: {sorted(n for n in names if names.count(n) > 1)}")
        self.nodes = list(nodes)
        self.interval_s = interval_s
        #: called in the SSH loop's thread after each change of a node (keep it short)
        self.on_sample = on_sample
        self.sample_timeout_s = sample_timeout_s or max(10.0, 5 * interval_s)
        #: a sample with the sysfs facts (a walk of every device on the node) may take longer
        self.sysfs_timeout_s = sysfs_timeout_s or max(self.sample_timeout_s, SAMPLE_TIMEOUT_S)
        self.backoff_s = backoff_s
        self.remote_roots = dict(remote_roots or {})
        self._states: dict[str, NodeState] = {n.name: NodeState(n.name, _spec(n)) for n in nodes}
        self._loop: asyncio.AbstractEventLoop | None = None
        # made here, set only in the loop (an Event binds to the loop that first waits on it):
        # a stop() right after start() is not lost before the coroutine has begun
        self._stopping = asyncio.Event()
        #: set by retry_now: the node's backoff wait ends at once (a host key just accepted)
        self._retry = {n.name: asyncio.Event() for n in nodes}
        self._running: Future[None] | None = None
        #: the file work of the samples with the sysfs facts, one at a time
        self._files: ThreadPoolExecutor | None = None
        self._connections: dict[str, Connection] = {}

    # any thread
    def states(self) -> dict[str, NodeState]:
        """Node name -> its state now (in the nodes' order; the states are frozen)."""
        return dict(self._states)

    def state(self, name: str) -> NodeState:
        return self._states[name]

    def start(self) -> None:
        """Start every node's coroutine on the SSH loop (core/remote/ssh.py's one thread)."""
        if self._running is not None:
            return
        self._stopping = asyncio.Event()
        self._files = ThreadPoolExecutor(1, thread_name_prefix="racperf-sysfs")
        self._loop = ssh.runtime().loop
        self._running = asyncio.run_coroutine_threadsafe(self._run_all(), self._loop)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop sampling; each node's channel is closed (its loop on the node ends)."""
        running, loop = self._running, self._loop
        if running is None or loop is None:
            return
        loop.call_soon_threadsafe(self._stop_now)
        try:
            running.result(timeout_s)
        except (FutureTimeout, CancelledError):
            pass
        self._running = None
        if self._files is not None:
            self._files.shutdown(wait=False, cancel_futures=True)

    def retry_now(self, name: str) -> None:
        """End the node's wait before its next attempt (its host key was just recorded)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._retry[name].set)

    def drop_link(self, name: str) -> None:
        """Abort the node's connection as a dead link would (tests, and a user's 'reconnect')."""
        conn = self._connections.get(name)
        if conn is not None:
            conn.abort()

    def __enter__(self) -> ClusterMonitor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # the SSH loop
    def _stop_now(self) -> None:
        self._stopping.set()

    async def _run_all(self) -> None:
        tasks = [asyncio.ensure_future(self._run_node(node)) for node in self.nodes]
        try:
            await self._stopping.wait()
        finally:
            for task in tasks:
                task.cancel()
            # each node's coroutine closes its channel on the way out
            await asyncio.gather(*tasks, return_exceptions=True)

    def _publish(self, name: str, **changes: object) -> None:
        self._states[name] = replace(self._states[name], **changes)  # type: ignore[arg-type]
        if self.on_sample is not None:
            try:
                self.on_sample(name)
            except Exception:  # noqa: BLE001 - a listener's bug never stops the sampling
                pass

    async def _wait_backoff(self, name: str, failures: int) -> None:
        first, longest = self.backoff_s
        wait = min(longest, first * 2 ** max(0, failures - 1))
        self._states[name] = replace(self._states[name], retry_at=time.time() + wait)
        retry = self._retry[name]
        try:
            await asyncio.wait_for(retry.wait(), wait)
        except TimeoutError:
            pass
        retry.clear()

    async def _run_node(self, node: Node) -> None:
        name = node.name
        failures = 0
        if node.is_local:
            await self._local_loop(name)
            return
        try:
            target: SshTarget = node.ssh_target()
        except ValueError as exc:
            self._publish(name, state=UNREACHABLE, reason=f"error: {exc}")
            return
        while True:
            before = self._states[name]
            if before.seq:  # a node never reached stays unreachable (with its reason) while retried
                self._publish(name, state=RECONNECTING)
            try:
                conn = await ssh.connect_async(target)
                remote = await AsyncRemoteDiskstats.open(conn, remote_root=self.remote_roots.get(name, ""))
            except (SshError, OSError) as exc:
                failures += 1
                self._publish(name, state=LOST if before.seq else UNREACHABLE, reason=failure_reason(exc))
                await self._wait_backoff(name, failures)
                continue
            self._connections[name] = conn
            try:
                await self._sample_loop(name, remote)
            except (SshError, OSError) as exc:
                failures = 1
                self._publish(name, state=LOST, reason=failure_reason(exc))
                if not conn.closed:
                    await conn.abort_async()  # a stalled link: the pool must not hand it out again
            except Exception as exc:  # noqa: BLE001 - what the node sent broke a reader: say so, go on
                failures = 1
                self._publish(name, state=LOST, reason=f"error: {type(exc).__name__}: {exc}")
            finally:
                self._connections.pop(name, None)
                await remote.close()
            await self._wait_backoff(name, failures)

    async def _wait_next(self) -> None:
        """Sleep to the next whole multiple of the interval on the wall clock."""
        now = time.time()
        await asyncio.sleep((math.floor(now / self.interval_s) + 1) * self.interval_s - now)

    async def _local_loop(self, name: str) -> None:
        """The node "local" is this machine: the same sampler over / (no SSH)."""
        sampler = IostatSampler(partitions=True, dm_names=True)
        last_full = -math.inf
        while True:
            requested = time.monotonic()
            try:
                full = requested - last_full >= SYSFS_REFRESH_S
                if full:
                    last_full = requested
                    # a walk of this machine's sysfs (every device's facts): off the loop
                    report = await self._in_files_thread(sampler.sample)
                    changes = await self._in_files_thread(self._facts_of, Path("/"), "", report)
                else:
                    report, changes = sampler.sample(), {}
                self._publish_report(name, report, requested, changes)
            except Exception as exc:  # noqa: BLE001 - say it and go on sampling
                self._publish(name, state=LOST, reason=f"error: {type(exc).__name__}: {exc}")
            await self._wait_next()

    async def _sample_loop(self, name: str, remote: AsyncRemoteDiskstats) -> None:
        sampler = IostatSampler([remote.root], partitions=True, dm_names=True)
        last_full = -math.inf
        while True:
            requested = time.monotonic()
            full = requested - last_full >= SYSFS_REFRESH_S
            if full:
                # the nodes' sysfs walks spread over the period, not all in the same second
                # (the first is at once); a walk of many devices may take its time
                first = last_full == -math.inf
                last_full = requested - (random.uniform(0, SYSFS_REFRESH_S) if first else 0.0)
            remote.request(full=full)
            answer = await remote.answer(self.sysfs_timeout_s if full else self.sample_timeout_s)
            changes: dict[str, object] = {}
            if full:
                # the sysfs facts laid out as files (only the devices that changed) and read
                # back: file work every 30 s, kept off the loop the other nodes are read in
                report, changes = await self._in_files_thread(self._full_sample, name, remote, sampler, answer)
            else:
                remote.lay_out(answer)
                report = sampler.sample(remote.raw)
            if report.since_boot or report.interval_s > STALE_INTERVAL_S or report.errors:
                self._publish_report(name, report, requested, changes)
            # else: the node's uptime did not move (a recorded root not rewritten yet): no sample
            await self._wait_next()

    async def _in_files_thread(self, function: Callable[..., T], *args: object) -> T:
        assert self._files is not None
        return await asyncio.get_running_loop().run_in_executor(self._files, function, *args)

    def _full_sample(
        self, name: str, remote: AsyncRemoteDiskstats, sampler: IostatSampler, answer: bytes
    ) -> tuple[IostatReport, dict[str, object]]:
        remote.lay_out(answer)
        report = sampler.sample(remote.raw)
        # LUNs and queue facts are read again only when the node's sysfs facts changed
        if remote.sysfs_changed or not self._states[name].facts:
            return report, self._facts_of(remote.root, remote.node.hostname, report)
        return report, {}

    @staticmethod
    def _facts_of(root: Path, hostname: str, report: IostatReport) -> dict[str, object]:
        luns, labels = lun_identities(root)
        return {
            "luns": luns,
            "lun_labels": labels,
            "facts": {
                row.kernel_name or row.device: read_queue_facts(row.kernel_name or row.device, root)
                for row in report.rows
                if not row.is_partition
            },
            "hostname": hostname,
        }

    def _publish_report(self, name: str, report: IostatReport, requested: float, changes: Mapping[str, object]) -> None:
        state = self._states[name]
        self._publish(
            name,
            state=OK,
            reason="",
            rows=tuple(report.rows),
            since_boot=report.since_boot,
            interval_s=report.interval_s,
            sampled_at=report.wall_time,
            requested_at=requested,
            published_at=time.monotonic(),
            seq=state.seq + 1,
            errors=tuple(report.errors),
            retry_at=0.0,
            **changes,
        )


def _spec(node: Node) -> str:
    try:
        return node.ssh_target().display
    except ValueError:
        return node.host
