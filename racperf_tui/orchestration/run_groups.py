"""A run group: one tool, one config, several nodes at once, each node's run a normal recorded
run (its own detached supervisor, the write guard judged on that node, its samples in the
store) and a group record linking them (``run_groups`` in core/store.py).

- :func:`judge_nodes` is each node's verdict on the plan, shown before anything starts (the
  New run form; `racperf run --nodes` through launch_group).
- :func:`launch_group` judges the plan on every node at once, then starts every node's run at
  once (a thread per node). A plan REFUSED on any node (a bad option, a target that node's
  write guard refuses, the tool missing there) refuses the whole group before anything is
  recorded: the same job on fewer nodes is another benchmark, and a refusal is the guard's
  word on that node's data. A node that cannot be REACHED (DNS, refused, login, host key) is
  left out, said why in the group's message, and the others go on (issue 10: "a node
  unreachable at start says why and the others go on"); none reachable raises.
- :func:`stop_group` stops every unfinished run of the group at once.
- :func:`interval_totals` is the one place a group's live total is computed (the CLI's total
  lines, the group view): per wall-clock second, IOPS and bandwidth summed over the nodes,
  latency the mean of the nodes' latencies weighted by their IOPS, progress the least
  advanced node's. The nodes' samples are aligned by wall-clock time, not by their n-th
  interval (orchestration/group_alignment.py states the rule): nodes that started seconds
  apart add up what they did in the same seconds.
- :func:`result_total` is the total once the group ended: the nodes' final results added up
  (a last partial interval is not the run's figure).
- :class:`GroupFollower` reads a group's new samples from the store and turns them into the
  per-node lines and, once every node still running covers a second, that second's total.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.core.contract.tool import MetricSpec, ToolDescription
from racperf_tui.core.remote.cluster import Node
from racperf_tui.core.remote.ssh_target import SshError, one_line
from racperf_tui.core.store import GroupRecord, RunRecord, Store
from racperf_tui.orchestration.group_alignment import (
    LEVEL,
    RATE,
    STATE,
    NodeTimeline,
    complete_until,
    first_second,
    second_figures,
)
from racperf_tui.orchestration.runs import launch_run, prepare_run, stop_run
from racperf_tui.tools import tool_description
from racperf_tui.tools.orion.live import recorded_rows

__all__ = [
    "GroupRefused",
    "NodeVerdict",
    "judge_nodes",
    "GroupStart",
    "GroupInterval",
    "GroupFollower",
    "launch_group",
    "stop_group",
    "interval_totals",
    "latest_total",
    "total_of",
    "node_figures",
    "headline_figures",
    "start_skew_s",
    "in_node_order",
    "result_total",
    "result_headline",
    "ran_share",
    "ended_early",
    "EARLY_ENDS",
]

#: the figures a node's ORION run measures of its LUNs (from the diskstats companion's rows)
LUN_IOPS, LUN_MBPS, LUN_AWAIT_MS = "lun_iops", "lun_mbps", "lun_await_ms"

_RATE_UNITS = frozenset({"IOPS", "KiB/s", "MiB/s", "MB/s", "GiB/s", "Mbit/s", "Gbit/s", "tps", "/s"})
_LATENCY_UNITS = frozenset({"µs", "us", "ms"})


class GroupRefused(ValueError):
    """The group's plan is refused on at least one node; nothing was recorded or started.
    The message names every refusing node and why."""


@dataclass(frozen=True, slots=True)
class GroupStart:
    """What :func:`launch_group` started: the group, each started node's run, and the nodes
    left out with why (unreachable)."""

    group_id: int
    runs: dict[str, int]
    left_out: dict[str, str] = field(default_factory=dict)

    @property
    def message(self) -> str:
        text = f"started on {', '.join(self.runs)}"
        if self.left_out:
            text += "; not started on " + "; ".join(f"{name}: {why}" for name, why in self.left_out.items())
        return text


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """One node's word on a plan, before anything starts: cleared (``error`` None), refused
    (the plan, the tool or that node's write guard: ``refuses``) or not reachable."""

    node: str
    error: BaseException | None = None

    @property
    def cleared(self) -> bool:
        return self.error is None

    @property
    def refuses(self) -> bool:
        """A refusal of the plan (it refuses a whole group), not a node out of reach."""
        return self.error is not None and _refusal(self.error)

    @property
    def why(self) -> str:
        """Why, in one line without the node's name ("" when cleared)."""
        return "" if self.error is None else _why(self.error, self.node)

    @property
    def text(self) -> str:
        """``rac1: cleared``, ``rac2: REFUSED: ...``, ``rac3: not reachable: ...``."""
        if self.error is None:
            return f"{self.node}: cleared by its write guard"
        return f"{self.node}: {'REFUSED' if self.refuses else 'not reachable'}: {self.why}"


def judge_nodes(tool: str, config: Mapping[str, Any], nodes: Sequence[Node]) -> dict[str, NodeVerdict]:
    """Each node's verdict on the plan (planned and judged on that node by its write guard, as
    its launch will), judged on every node at once, in the nodes' order. What `racperf run
    --nodes` and the New run form show before anything starts."""

    def judge(node: Node) -> NodeVerdict:
        try:
            prepare_run(tool, dict(config), node)
        except (ValueError, KeyError, OSError, RuntimeError) as exc:
            return NodeVerdict(node.name, exc)
        return NodeVerdict(node.name)

    with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
        return {verdict.node: verdict for verdict in pool.map(judge, nodes)}


def _refusal(exc: BaseException) -> bool:
    """A verdict that refuses the group (the plan, the guard, the tool) rather than a node
    that cannot be reached."""
    return isinstance(exc, (ValueError, KeyError, ToolNotFound)) or not isinstance(exc, OSError)


def _why(exc: BaseException, node: str) -> str:
    """Why, in one line, without the node's name (the caller names it)."""
    text = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else one_line(exc))
    return text.removeprefix(f"node {node}: ")


def launch_group(
    tool: str,
    config: Mapping[str, Any],
    nodes: Sequence[Node],
    *,
    data_dir: Path,
    target: str | None = None,
    group_id: int | None = None,
    verdicts: Mapping[str, NodeVerdict] | None = None,
) -> GroupStart:
    """Record a run group of ``tool`` with ``config`` on ``nodes`` and start every node's run
    (detached supervisors, as :func:`launch_run`) at once. See the module doc for what refuses
    the group and what leaves a node out. Raises GroupRefused (a ValueError), SshError when no
    node can be reached (every node's reason in it), ValueError for fewer than one node or a
    node named twice. ``group_id``: add the runs to this group rather than a new one (a
    sweep's points, orchestration/sweep.py); its message is then the caller's to write.
    ``verdicts``: :func:`judge_nodes`'s, when the caller showed them already (the form)."""
    names = [node.name for node in nodes]
    if not nodes:
        raise ValueError("a run group needs at least one node")
    if len(set(names)) != len(names):
        raise ValueError(f"a node is named twice: {', '.join(names)}")
    if verdicts is None or any(name not in verdicts for name in names):
        verdicts = judge_nodes(tool, config, nodes)
    refused = [verdicts[name] for name in names if verdicts[name].refuses]
    if refused:
        raise GroupRefused(
            f"{tool} refused on "
            + "; ".join(f"node {verdict.node}: {verdict.why}" for verdict in refused)
            + " (nothing was started on any node)"
        )
    left_out = {name: verdicts[name].why for name in names if not verdicts[name].cleared}
    reachable = [node for node in nodes if verdicts[node.name].cleared]
    if not reachable:
        raise SshError("no node could be reached: " + _reasons(left_out))
    data_dir = Path(data_dir)
    own_group = group_id is None
    if group_id is None:
        with Store.open(data_dir) as store:
            group_id = store.create_group(tool, dict(config), names)

    def start(node: Node) -> int | BaseException:
        try:
            return launch_run(tool, dict(config), data_dir=data_dir, target=target, node=node, group_id=group_id)
        except (ValueError, KeyError, OSError, RuntimeError) as exc:
            return exc

    runs: dict[str, int] = {}
    with ThreadPoolExecutor(max_workers=len(reachable)) as pool:
        for node, outcome in zip(reachable, pool.map(start, reachable)):
            if isinstance(outcome, BaseException):
                left_out[node.name] = _why(outcome, node.name)  # changed between the judging and the start
            else:
                runs[node.name] = outcome
    started = GroupStart(group_id, runs, {name: left_out[name] for name in names if name in left_out})
    if own_group:
        with Store.open(data_dir) as store:
            store.set_group_message(group_id, started.message if runs else "started on no node: " + _reasons(left_out))
    if not runs:  # every launch failed between the judging and the start
        raise SshError("started on no node: " + _reasons(left_out))
    return started


def _reasons(left_out: Mapping[str, str]) -> str:
    return "; ".join(f"{name}: {why}" for name, why in left_out.items())


def stop_group(group_id: int, data_dir: Path, grace_s: float = 15.0) -> dict[str, RunState]:
    """Stop every unfinished run of the group at once (a thread per run); each node's final
    state, in the group's node order. KeyError (GroupNotFound) when there is no such group."""
    data_dir = Path(data_dir)
    with Store.open(data_dir) as store:
        runs = in_node_order(store.get_group(group_id), store.group_runs(group_id))
    with ThreadPoolExecutor(max_workers=max(1, len(runs))) as pool:
        states = pool.map(lambda run: stop_run(run.id, data_dir, grace_s=grace_s), runs)
        return {run.host: state for run, state in zip(runs, states)}


def in_node_order(group: GroupRecord, runs: Iterable[RunRecord]) -> list[RunRecord]:
    """A group's runs in the order its nodes were named (the runs are recorded as their
    launches finish)."""
    order = {name: index for index, name in enumerate(group.nodes)}
    return sorted(runs, key=lambda run: (order.get(run.host, len(order)), run.id))


def group_state(states: Sequence[RunState]) -> RunState | None:
    """A group's state from its nodes' runs': running while one of them may still change, else
    the worst ending (failed, interrupted, stopped before succeeded); None without runs."""
    if any(not state.finished for state in states):
        return RunState.RUNNING
    for worst in (RunState.FAILED, RunState.INTERRUPTED, RunState.STOPPED):
        if worst in states:
            return worst
    return states[0] if states else None


def start_skew_s(runs: Iterable[RunRecord]) -> float | None:
    """How far apart the nodes' benchmarks started (their runs' RUNNING times), in seconds;
    None before two of them ran."""
    times = [run.started_at for run in runs if run.state is not RunState.PENDING]
    return max(times) - min(times) if len(times) >= 2 else None


# --------------------------------------------------------------------------- the total


def node_figures(sample: Sample) -> dict[str, float]:
    """A node's figures of one sample: its metrics, and for a run that records the load of its
    LUNs from diskstats (ORION's live record) that load: IOPS, MB/s and await of the LUNs'
    own devices (the devices below them carry the same I/O again and are not counted)."""
    figures = {key: float(value) for key, value in sample.metrics.items() if isinstance(value, (int, float))}
    extra = sample.extra if isinstance(sample.extra, Mapping) else {}
    progress = extra.get("progress_pct")
    if "progress_pct" not in figures and isinstance(progress, (int, float)):
        # a tool whose progress is no sparkline (ORION's clock) says it in extra, where the
        # run view's progress bar reads it
        figures["progress_pct"] = float(progress)
    record = extra.get("orion_live")
    if isinstance(record, Mapping):
        rows = [row for _shown, lun, row in recorded_rows(record) if lun != "below"]
        if rows:
            iops = sum(row.r_s + row.w_s for row in rows)
            figures[LUN_IOPS] = iops
            figures[LUN_MBPS] = sum(row.rkb_s + row.wkb_s for row in rows) / 1024.0
            figures[LUN_AWAIT_MS] = sum((row.r_s + row.w_s) * row.await_ms for row in rows) / iops if iops else 0.0
    return figures


def _rule(key: str, spec: MetricSpec | None, keys: Iterable[str]) -> tuple[str, str | None]:
    """How a figure adds up over nodes: ("sum", None), ("weighted", weight key), ("min", None)
    or ("none", None)."""
    if key in (LUN_IOPS, LUN_MBPS):
        return "sum", None
    if key == "progress_pct":
        return "min", None  # the group is as far as its slowest node
    if key == LUN_AWAIT_MS:
        return "weighted", LUN_IOPS
    if spec is None:
        return "none", None
    if spec.unit in _RATE_UNITS or spec.quantity in ("throughput", "transaction_rate"):
        return "sum", None
    if spec.unit in _LATENCY_UNITS or spec.quantity == "latency":
        # read_clat_p99_us is weighted by read_iops: the IOPS of its own direction
        direction = key.split("_", 1)[0]
        weight = f"{direction}_iops"
        return "weighted", weight if weight in keys else None
    if spec.unit == "%":
        return "min", None
    return "none", None


def total_of(
    description: ToolDescription | None, figures_by_node: Mapping[str, Mapping[str, float]]
) -> dict[str, float]:
    """The group's figures of one interval from each node's (:func:`node_figures`): rates
    (IOPS, bandwidth) summed; latency the mean of the nodes' latencies weighted by their IOPS
    in the same direction (a percentile so combined is the IOPS-weighted mean of the nodes'
    percentiles, not the percentile of all the group's I/O); a percentage (progress) the
    lowest node's; figures without a unit to add (a data point's number) left out."""
    specs = {spec.key: spec for spec in (description.metrics if description is not None else ())}
    keys = list(dict.fromkeys(key for figures in figures_by_node.values() for key in figures))
    total: dict[str, float] = {}
    for key in keys:
        how, weight = _rule(key, specs.get(key), keys)
        values = [(figures[key], figures) for figures in figures_by_node.values() if key in figures]
        if how == "sum":
            total[key] = sum(value for value, _ in values)
        elif how == "min":
            total[key] = min(value for value, _ in values)
        elif how == "weighted":
            if weight is None:
                continue
            weights = [(value, figures.get(weight, 0.0)) for value, figures in values]
            mass = sum(w for _, w in weights)
            if mass > 0:
                total[key] = sum(value * w for value, w in weights) / mass
    return total


def headline_figures(description: ToolDescription | None, figures: Mapping[str, float]) -> dict[str, float]:
    """The figures a group view draws of a node or of the total: ``iops`` (every IOPS figure
    added, the LUNs' load for ORION), ``mib_s`` (every bandwidth figure in MiB/s, ORION's MB/s
    are MiB/s), ``progress_pct`` when the tool says how far it is."""
    specs = {spec.key: spec for spec in (description.metrics if description is not None else ())}
    out: dict[str, float] = {}
    iops = [v for k, v in figures.items() if k in specs and specs[k].unit == "IOPS"]
    if LUN_IOPS in figures and LUN_IOPS not in specs:  # declared (ORION's metric): counted above
        iops.append(figures[LUN_IOPS])
    if iops:
        out["iops"] = sum(iops)
    mib = [v / specs[k].divisor for k, v in figures.items() if k in specs and specs[k].unit == "MiB/s"]
    if LUN_MBPS in figures:
        mib.append(figures[LUN_MBPS])
    if mib:
        out["mib_s"] = sum(mib)
    if "progress_pct" in figures:
        out["progress_pct"] = figures["progress_pct"]
    return out


def figure_kind(description: ToolDescription | None) -> Callable[[str], str]:
    """How a figure is resampled to a wall-clock second (orchestration/group_alignment.py):
    what :func:`total_of` adds up is a rate, a percentage (progress) a state, the rest a level."""
    specs = {spec.key: spec for spec in (description.metrics if description is not None else ())}
    kinds = {"sum": RATE, "min": STATE}
    return lambda key: kinds.get(_rule(key, specs.get(key), ())[0], LEVEL)


@dataclass(frozen=True, slots=True)
class GroupInterval:
    """One wall-clock second of the group: ``at`` its epoch second, ``index`` its number
    from the group's first second (1, 2, ...), every node's figures in it and their total."""

    index: int
    by_node: dict[str, dict[str, float]]
    total: dict[str, float]
    at: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "total",
            "interval": self.index,
            "at": self.at,
            "nodes": list(self.by_node),
            "metrics": self.total,
        }


def interval_totals(
    description: ToolDescription | None,
    timelines: Mapping[str, NodeTimeline],
    *,
    finished: Iterable[str] = (),
    first: int | None = None,
    origin: int | None = None,
) -> list[GroupInterval]:
    """The group's complete seconds from the epoch second ``first`` on (default: the first any
    node covers), each node's samples aligned by wall-clock time (orchestration/
    group_alignment.py states the rule); ``origin``: the second numbered 1 (default: the
    first any node covers)."""
    spans = {node: timeline.spans for node, timeline in timelines.items()}
    start = first_second(spans)
    until = complete_until(spans, finished)
    if start is None or until is None:
        return []
    origin = start if origin is None else origin
    second = start if first is None else max(first, start)
    kind = figure_kind(description)
    cursors = dict.fromkeys(spans, 0)
    intervals: list[GroupInterval] = []
    while second < until:
        by_node: dict[str, dict[str, float]] = {}
        for node, node_spans in spans.items():
            figures, cursors[node] = second_figures(node_spans, second, kind, cursors[node])
            if figures:
                by_node[node] = figures
        if by_node:
            intervals.append(GroupInterval(second - origin + 1, by_node, total_of(description, by_node), second))
        second += 1
    return intervals


def latest_total(
    description: ToolDescription | None, timelines: Mapping[str, NodeTimeline], *, finished: Iterable[str] = ()
) -> dict[str, float] | None:
    """The group's total of its newest complete wall-clock second (the live figure of a
    group: its nodes' figures of the same second, never each node's newest sample added up);
    None before a second is complete."""
    until = complete_until({node: timeline.spans for node, timeline in timelines.items()}, finished)
    if until is None:
        return None
    last = interval_totals(description, timelines, finished=finished, first=until - 1)
    return last[-1].total if last else None


@dataclass
class GroupEvent:
    """What a group follower saw: a node's sample (``sample`` set) or an interval's total."""

    node: str | None = None
    run_id: int | None = None
    seq: int | None = None
    sample: Sample | None = None
    interval: GroupInterval | None = None


class GroupRecords(Protocol):
    """What a group's view reads of its records: the store, or a replay's recording of them
    up to a moment (ui/replay_data.py)."""

    def mark_interrupted_runs(self) -> list[int]: ...
    def get_group(self, group_id: int) -> GroupRecord: ...
    def group_runs(self, group_id: int) -> list[RunRecord]: ...
    def samples(self, run_id: int, after_seq: int = 0) -> list[tuple[int, Sample]]: ...
    def result(self, run_id: int) -> dict[str, Any] | None: ...


class GroupFollower:
    """A group's samples from the store as they are recorded: :meth:`poll` gives what is new
    (each node's samples, then each wall-clock second that became complete). Create and poll
    it on one thread (SQLite connections stay on theirs)."""

    def __init__(self, store: GroupRecords, group_id: int) -> None:
        self.store = store
        self.group: GroupRecord = store.get_group(group_id)
        self.description = _description_or_none(self.group.tool)
        self.samples: dict[str, list[Sample]] = {}
        self.timelines: dict[str, NodeTimeline] = {}
        self.runs: dict[str, RunRecord] = {}
        self._after: dict[int, int] = {}
        self._next_second: int | None = None
        self._origin: int | None = None

    @property
    def finished(self) -> bool:
        """Every node's run ended (its supervisor marked gone counts as ended)."""
        return bool(self.runs) and all(run.state.finished for run in self.runs.values())

    def poll(self) -> list[GroupEvent]:
        self.store.mark_interrupted_runs()
        events: list[GroupEvent] = []
        for run in in_node_order(self.group, self.store.group_runs(self.group.id)):
            self.runs[run.host] = run
            series = self.samples.setdefault(run.host, [])
            for seq, sample in self.store.samples(run.id, self._after.get(run.id, 0)):
                self._after[run.id] = seq
                series.append(sample)
                timeline = self.timelines.setdefault(run.host, NodeTimeline(run.started_at))
                timeline.add(sample, node_figures(sample))
                events.append(GroupEvent(run.host, run.id, seq, sample))
        # in the order the nodes were named (a run recorded late still takes its place)
        ordered = in_node_order(self.group, self.runs.values())
        timelines = {run.host: self.timelines.get(run.host, NodeTimeline(run.started_at)) for run in ordered}
        finished = [name for name, run in self.runs.items() if run.state.finished]
        for interval in interval_totals(
            self.description, timelines, finished=finished, first=self._next_second, origin=self._origin
        ):
            if self._origin is None:
                self._origin = interval.at - interval.index + 1
            self._next_second = interval.at + 1
            events.append(GroupEvent(interval=interval))
        return events

    def follow(self, on_event: Callable[[GroupEvent], None], poll_s: float = 0.1) -> None:
        """Poll until every run ended, handing each event to ``on_event`` (the last poll after
        the end reads the final samples)."""
        while True:
            ended = self.finished
            for event in self.poll():
                on_event(event)
            if ended:
                return
            time.sleep(poll_s)


#: the figures of a node's final result that add up over nodes, with their units: fio's
#: (its jobs' directions added up per node) and ORION's peaks (the nodes ran their matrices at
#: the same time, so the sum of the peaks is what the shared storage gave all of them)
RESULT_FIGURES = (
    *(MetricSpec(f"{d}_iops", f"{d} IOPS", "IOPS") for d in ("read", "write")),
    *(MetricSpec(f"{d}_bw_kib_s", f"{d} BW", "MiB/s", divisor=1024.0) for d in ("read", "write")),
    *(MetricSpec(f"{d}_clat_mean_us", f"{d} clat mean", "µs") for d in ("read", "write")),
    MetricSpec("max_small_iops", "max small IOPS", "IOPS"),
    MetricSpec("max_large_mbps", "max large MB/s", "MB/s"),
)


def result_figures(result: Mapping[str, Any] | None) -> dict[str, float]:
    """A node's final result as the figures :data:`RESULT_FIGURES` names: a result with
    ``jobs`` (fio) by direction over its jobs (latency weighted by the jobs' IOPS), else the
    top-level figures of those names (ORION)."""
    if not result:
        return {}
    figures: dict[str, float] = {}
    jobs = [job for job in result.get("jobs") or [] if isinstance(job, Mapping)]
    for d in ("read", "write"):
        blocks = [job[d] for job in jobs if isinstance(job.get(d), Mapping)]
        if not blocks:
            continue
        iops = sum(float(block.get("iops") or 0.0) for block in blocks)
        figures[f"{d}_iops"] = iops
        figures[f"{d}_bw_kib_s"] = sum(float(block.get("bw_kib_s") or 0.0) for block in blocks)
        means = [
            (float(block["clat_us"]["mean"]), float(block.get("iops") or 0.0))
            for block in blocks
            if isinstance(block.get("clat_us"), Mapping) and isinstance(block["clat_us"].get("mean"), (int, float))
        ]
        mass = sum(w for _, w in means)
        if mass > 0:
            figures[f"{d}_clat_mean_us"] = sum(v * w for v, w in means) / mass
    for spec in RESULT_FIGURES:
        value = result.get(spec.key)
        if spec.key not in figures and isinstance(value, (int, float)) and not isinstance(value, bool):
            figures[spec.key] = float(value)
    return figures


#: a node's run shorter than this share of the group's longest is a node that ended early (lost,
#: failed): its rates count for the time it ran, not as if it ran along the others to the end
EARLY_END_SHARE = 0.9
#: the figures that are rates over a node's whole run (fio's), scaled by that share; ORION's
#: maxima are peaks, not rates over the run
RATE_FIGURES = tuple(f"{d}_{kind}" for d in ("read", "write") for kind in ("iops", "bw_kib_s"))


def result_total(
    results: Mapping[str, Mapping[str, Any] | None],
    spans_s: Mapping[str, float] | None = None,
    ended_early: Collection[str] = (),
) -> dict[str, float]:
    """The group's total of the nodes' final results (:func:`result_figures`), added up as
    :func:`total_of` adds an interval's. ``spans_s``: each node's run time; a node of
    ``ended_early`` (its run failed or was interrupted: a lost link) that ran under
    :data:`EARLY_END_SHARE` of the longest adds its rates times the share it ran (a node lost
    6 s into a 30 s group adds a fifth of its IOPS: the I/O it did, over the group's time). A
    node that finished its test is never scaled: its run's wall time holds its start-up too."""
    figures = {node: result_figures(result) for node, result in results.items() if result}
    longest = max((spans_s or {}).values(), default=0.0)
    for node, node_figures_ in figures.items():
        share = ran_share((spans_s or {}).get(node, longest), longest) if node in ended_early else 1.0
        for key in RATE_FIGURES:
            if key in node_figures_:
                node_figures_[key] *= share
    return total_of(ToolDescription(metrics=RESULT_FIGURES), figures)


#: the ends of a node's run that mean it ended before its test did
EARLY_ENDS = (RunState.FAILED, RunState.INTERRUPTED)


def ended_early(runs: Iterable[RunRecord]) -> list[str]:
    """The nodes whose run failed or was interrupted (their rates count for the time they ran)."""
    return [run.host for run in runs if run.state in EARLY_ENDS]


def ran_share(span_s: float, longest_s: float) -> float:
    """What a node's whole-run rate counts for in its group's total: 1, or the share of the
    group's longest run it ran when it ended early (:data:`EARLY_END_SHARE`)."""
    share = span_s / longest_s if longest_s > 0 else 1.0
    return share if share < EARLY_END_SHARE else 1.0


def result_headline(
    results: Mapping[str, Mapping[str, Any] | None],
    spans_s: Mapping[str, float] | None = None,
    ended_early: Collection[str] = (),
) -> dict[str, float]:
    """The group's headline figures once it ended (``iops``, ``mib_s``: see
    :func:`headline_figures`) from its nodes' final results (``spans_s``: as
    :func:`result_total` takes them)."""
    total = result_total(results, spans_s, ended_early)
    figures = headline_figures(ToolDescription(metrics=RESULT_FIGURES), total)
    if "max_large_mbps" in total:  # ORION's MB/s are MiB/s
        figures["mib_s"] = figures.get("mib_s", 0.0) + total["max_large_mbps"]
    return figures


def _description_or_none(tool: str) -> ToolDescription | None:
    try:
        return tool_description(tool)
    except Exception:  # an uninstalled tool's recorded group: its figures are not added up
        return None
