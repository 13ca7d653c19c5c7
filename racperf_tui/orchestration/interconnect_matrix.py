"""The interconnect matrix: every node to every other node with a two-ended tool (iperf3, the
probe), one pair at a time, each a recorded server/client pair (:func:`launch_pair`: the
server on the target node, the client on the source node, the server node's interconnect
address as the client's destination), and a verdict per pair from core/net_guidance.py.

One pair at a time: pairs run together would share the links and the CPUs they measure. A
pair's figure is the median of its client's per-interval ``throughput_mbit_s`` (the first
interval's ramp and a stray slow one do not move it). A pair that cannot run (a node down, the
tool missing there, the server never ready) is recorded with its reason and the others go on.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.core.net_guidance import Verdict, format_rate, interconnect_verdict
from racperf_tui.core.remote.cluster import Node
from racperf_tui.core.remote.ssh import one_line
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import PairStartError, finish_pair, launch_pair, stop_pair
from racperf_tui.orchestration.runs import wait_for_run

#: the sample metric a pair's figure is taken from (every two-ended throughput tool has it)
THROUGHPUT_METRIC = "throughput_mbit_s"
#: seconds a client may run past its duration before the pair is stopped
CLIENT_MARGIN_S = 60.0


@dataclass(frozen=True)
class PairMeasurement:
    """One direction: ``source`` (the client's node) sending to ``target`` (the server's)."""

    source: str
    target: str
    address: str
    mbit_s: float | None = None
    verdict: Verdict | None = None
    error: str | None = None
    samples: int = 0
    server_run_id: int | None = None
    client_run_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "address": self.address,
            "mbit_s": None if self.mbit_s is None else round(self.mbit_s, 1),
            "level": self.verdict.level if self.verdict else None,
            "verdict": self.verdict.text if self.verdict else None,
            "error": self.error,
            "samples": self.samples,
            "server_run_id": self.server_run_id,
            "client_run_id": self.client_run_id,
        }

    def line(self) -> str:
        head = f"{self.source} -> {self.target} ({self.address})"
        if self.mbit_s is None:
            return f"{head}: not measured: {self.error}"
        assert self.verdict is not None
        return f"{head}: {format_rate(self.mbit_s)}, {self.verdict.level}: {self.verdict.text}"


def measure_pair(
    tool: str,
    source: Node,
    target: Node,
    *,
    data_dir: Path,
    duration_s: float,
    server_config: Mapping[str, Any] | None = None,
    client_config: Mapping[str, Any] | None = None,
) -> PairMeasurement:
    """The client on ``source`` to the server on ``target``; never raises for a node or a
    tool that fails (the measurement says why)."""
    address = target.address
    client_cfg = {"duration_s": duration_s, **(client_config or {})}
    client_cfg.setdefault("host", address)
    try:
        pair = launch_pair(
            tool, dict(server_config or {}), client_cfg, data_dir=data_dir, server_node=target, client_node=source
        )
    except (OSError, ValueError, KeyError, ToolNotFound, PairStartError) as exc:
        return PairMeasurement(source.name, target.name, address, error=one_line(exc))
    record = wait_for_run(pair.client_run_id, data_dir, duration_s + CLIENT_MARGIN_S)
    if not record.state.finished:
        stop_pair(pair, data_dir)
    else:
        finish_pair(pair, data_dir)
    with Store.open(Path(data_dir)) as store:
        record = store.get_run(pair.client_run_id)
        values = [
            float(sample.metrics[THROUGHPUT_METRIC])
            for _seq, sample in store.samples(pair.client_run_id)
            if isinstance(sample.metrics.get(THROUGHPUT_METRIC), (int, float))
        ]
    measured = PairMeasurement(
        source.name,
        target.name,
        address,
        samples=len(values),
        server_run_id=pair.server_run_id,
        client_run_id=pair.client_run_id,
    )
    if record.state is not RunState.SUCCEEDED or not values:
        why = record.message or f"the client run {record.state.value} with no {THROUGHPUT_METRIC} sample"
        return dataclasses.replace(measured, error=why)
    figure = statistics.median(values)
    return dataclasses.replace(measured, mbit_s=figure, verdict=interconnect_verdict(figure))


def interconnect_matrix(
    tool: str,
    nodes: Sequence[Node],
    *,
    data_dir: Path,
    duration_s: float = 10.0,
    server_config: Mapping[str, Any] | None = None,
    client_config: Mapping[str, Any] | None = None,
    on_result: Callable[[PairMeasurement], None] | None = None,
) -> list[PairMeasurement]:
    """Every ordered pair of ``nodes`` (source != target), one at a time, in order."""
    if len(nodes) < 2:
        raise ValueError("the interconnect matrix needs two nodes at least")
    results = []
    for source in nodes:
        for target in nodes:
            if source == target:
                continue
            result = measure_pair(
                tool,
                source,
                target,
                data_dir=data_dir,
                duration_s=duration_s,
                server_config=server_config,
                client_config=client_config,
            )
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def matrix_table(nodes: Sequence[Node], results: Sequence[PairMeasurement]) -> str:
    """Rows: the sending node; columns: the receiving node; cells: the figure (or "failed")."""
    by_pair = {(r.source, r.target): r for r in results}
    names = [node.name for node in nodes]
    cells = [["from \\ to", *names]]
    for source in names:
        row = [source]
        for target in names:
            found = by_pair.get((source, target))
            if source == target or found is None:
                row.append("-")
            else:
                row.append(format_rate(found.mbit_s) if found.mbit_s is not None else "failed")
        cells.append(row)
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells) + "\n"
