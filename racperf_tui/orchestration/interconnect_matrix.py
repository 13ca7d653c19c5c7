"""The interconnect matrix: every node to every other node with a two-ended tool (iperf3, the
probe, oratcptest, netperf), one pair at a time, each a recorded server/client pair
(:func:`launch_pair`: the server on the target node, listening on its interconnect address,
the client on the source node sending there), and a verdict per pair from core/net_guidance.py.

One pair at a time: pairs run together would share the links and the CPUs they measure.
Nothing here names a tool's metric: a pair's figures are the metrics its tool's description
declares as a throughput and a latency (core/contract/quantities.py, in Mbit/s and ms whatever
the tool prints: oratcptest's MiB/s, netperf's transactions/s). A pair's throughput is the
median of its client's intervals (the first interval's ramp and a stray slow one do not move
it), and its stalls and dips (net_guidance.throughput_drops: intervals at ~0 or far under that
median, said with when and how long) are part of its verdict, which a median would hide. The
client reports every ``MATRIX_INTERVAL_S`` unless ``--set`` says otherwise: the resolution of
the stalls. A latency-only test (netperf TCP_RR, the probe's rtt) gives a latency and no
throughput verdict; a client without interval figures (a netperf built without
--enable-demo) gives its final figure, its stalls unjudged, and says so. A pair that cannot run
(a node down, the tool missing there, the server never ready) is recorded with its reason and
the others go on.

The path a RAC uses (issue 21: Cache Fusion is UDP with 8 KiB blocks, usually on jumbo
frames): after each pair, unless told not to, a **path check** (:func:`check_path`) runs the
probe in UDP mode from the same source to the same target for PATH_CHECK_S: 8 KiB requests
one at a time, each answered, so the round trip's p50 / p99 and the loss of an idle link, and
first a don't-fragment datagram at the source's interface MTU (MtuFinding: both ends' MTUs,
whether it got through). A pair whose own client gives these figures (the probe in UDP mode)
needs no check. Loss and the MTU check are part of the verdict (net_guidance.path_verdict).
A request/response pair (netperf's TCP_RR and UDP_RR, in omni output) measures round trips
itself: its own p50 / p99 (its result's, at its own request size) stand, said as its tool's,
and its path check adds the loss and the MTU.

Each client run is labelled ``matrix ID pair SOURCE->TARGET`` (its path check ``matrix ID
path SOURCE->TARGET``), ID the matrix's start: orchestration/matrix_store.py rebuilds a
running or finished matrix from the store by these labels (the UI's matrix view follows a
``racperf matrix`` run elsewhere that way).
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.core.contract.quantities import (
    latency_ms,
    result_latency_ms,
    result_loss_pct,
    result_throughput_mbit_s,
    result_transaction_rate,
    throughput_intervals,
    throughput_mbit_s,
)
from racperf_tui.core.contract.tool import ToolDescription
from racperf_tui.core.net_guidance import (
    LOSS_WARNING_PCT,
    MtuFinding,
    ThroughputDrop,
    Verdict,
    format_rate,
    interconnect_verdict,
    path_verdict,
    throughput_drops,
)
from racperf_tui.core.remote.cluster import Node
from racperf_tui.core.remote.ssh import one_line
from racperf_tui.core.store import Store
from racperf_tui.orchestration.pair_runs import PairStartError, finish_pair, launch_pair, pair_spec, stop_pair
from racperf_tui.orchestration.runs import wait_for_run
from racperf_tui.tools import tool_description

#: seconds between a client's interval figures unless its config says otherwise
MATRIX_INTERVAL_S = 1.0
#: seconds a client may run past its duration before the pair is stopped
CLIENT_MARGIN_S = 60.0
#: said of a pair whose client gave its final figure only
NO_INTERVALS_NOTE = "no interval figures: stalls and dips not judged"
#: the path check: the probe's UDP mode, a RAC block a request, one request at a time
PATH_CHECK_TOOL = "probe"
PATH_CHECK_CLIENT = {"mode": "UDP", "length": "8K", "num_conn": 1}
#: seconds of the path check's requests (thousands of round trips on a LAN: a p99 to trust)
PATH_CHECK_S = 2.0
#: the client runs' labels: what matrix, which pass, which pair
PAIR_PASS, PATH_PASS = "pair", "path"


def run_label(matrix_id: str, kind: str, source: str, target: str) -> str:
    return f"matrix {matrix_id} {kind} {source}->{target}"


def new_matrix_id() -> str:
    """The matrix's start, unique on this machine: ``20261202T061500-4242``."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"


@dataclass(frozen=True)
class PairMeasurement:
    """One direction: ``source`` (the client's node) sending to ``target`` (the server's)."""

    source: str
    target: str
    address: str
    mbit_s: float | None = None
    latency_ms: float | None = None
    verdict: Verdict | None = None
    error: str | None = None
    #: the client's samples that carried a throughput or a latency
    samples: int = 0
    drops: tuple[ThroughputDrop, ...] = ()
    server_run_id: int | None = None
    client_run_id: int | None = None
    #: the round trip's p50 / p99: of an 8 KiB request (the path check, or the pair's own UDP
    #: requests), or of the pair's own request/response test (``round_trip_by``)
    latency_p50_ms: float | None = None
    latency_p99_ms: float | None = None
    #: the tool whose own test measured the p50 / p99 (netperf's RR); None: the probe's requests
    round_trip_by: str | None = None
    #: UDP requests (or datagrams) lost, %
    loss_pct: float | None = None
    mtu: MtuFinding | None = None
    #: why the path check could not run (the pair's own figures stand)
    path_error: str | None = None
    path_client_run_id: int | None = None

    @property
    def measured(self) -> bool:
        return self.verdict is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "address": self.address,
            "mbit_s": None if self.mbit_s is None else round(self.mbit_s, 1),
            "latency_ms": None if self.latency_ms is None else round(self.latency_ms, 4),
            "level": self.verdict.level if self.verdict else None,
            "verdict": self.verdict.text if self.verdict else None,
            "stalls": [d.to_json() for d in self.drops if d.kind == "stall"],
            "dips": [d.to_json() for d in self.drops if d.kind == "dip"],
            "error": self.error,
            "samples": self.samples,
            "server_run_id": self.server_run_id,
            "client_run_id": self.client_run_id,
            "latency_p50_ms": _rounded(self.latency_p50_ms, 4),
            "latency_p99_ms": _rounded(self.latency_p99_ms, 4),
            "round_trip_by": self.round_trip_by,
            "loss_pct": _rounded(self.loss_pct, 3),
            "mtu": self.mtu.to_json() if self.mtu else None,
            "path_error": self.path_error,
            "path_client_run_id": self.path_client_run_id,
        }

    def figures(self) -> str:
        """ "940 Mbit/s", "latency 0.124 ms", "8 KiB round trip p50 0.210 / p99 0.480 ms" (or
        "netperf's own round trip p50 0.034 / p99 0.135 ms"), "lost 0.00 %", "MTU 9000": those
        measured."""
        said = [format_rate(self.mbit_s)] if self.mbit_s is not None else []
        if self.latency_ms is not None:
            said.append(f"latency {self.latency_ms:.3f} ms")
        if self.latency_p50_ms is not None and self.latency_p99_ms is not None:
            said.append(round_trip_said(self.latency_p50_ms, self.latency_p99_ms, self.round_trip_by, size="8 KiB "))
        if self.loss_pct is not None:
            said.append(f"lost {self.loss_pct:.2f} %")
        if self.mtu is not None and self.mtu.local_mtu is not None:
            said.append(
                f"MTU {self.mtu.local_mtu}"
                + (" ok" if self.mtu.arrived else " DROPPED" if self.mtu.arrived is False else "")
            )
        return ", ".join(said)

    def line(self) -> str:
        head = f"{self.source} -> {self.target} ({self.address})"
        if self.verdict is None and self.error is None:  # running: what it measured so far
            so_far = self.figures()
            return f"{head}: running" + (f", {so_far} so far" if so_far else "")
        if self.verdict is None:
            return f"{head}: not measured: {self.error}"
        line = f"{head}: {self.figures()}, {self.verdict.level}: {self.verdict.text}"
        return line + (f" (path check: {self.path_error})" if self.path_error else "")

    def cell(self) -> str:
        """The matrix's cell: the throughput (else the latency), marked when it stalled or dipped."""
        if self.verdict is None:
            return "failed"
        figure = format_rate(self.mbit_s) if self.mbit_s is not None else f"{self.latency_ms:.3f} ms"
        kinds = {d.kind for d in self.drops}
        marks = [figure] + (["STALL"] if "stall" in kinds else ["dip"] if kinds else [])
        if self.latency_p50_ms is not None and self.latency_p99_ms is not None:
            marks.append(self.round_trip_cell())
        if self.loss_pct is not None and self.loss_pct >= LOSS_WARNING_PCT:
            marks.append(f"LOSS {self.loss_pct:.1f}%")
        if self.mtu is not None and (self.mtu.arrived is False or self.mtu.mismatch):
            marks.append("MTU!")
        return " ".join(marks)

    def round_trip_cell(self) -> str:
        """ "0.21/0.48 ms" (the probe's 8 KiB requests), "0.03/0.14 ms netperf" (its own)."""
        cell = f"{self.latency_p50_ms:.2f}/{self.latency_p99_ms:.2f} ms"
        return f"{cell} {self.round_trip_by}" if self.round_trip_by else cell


def round_trip_said(p50_ms: float, p99_ms: float, by: str | None, size: str = "") -> str:
    """ "round trip p50 0.210 / p99 0.480 ms" (``size`` before it: "8 KiB "), or of the tool
    ``by`` in its own test: "netperf's own round trip p50 0.034 / p99 0.135 ms"."""
    whose = f"{by}'s own round trip" if by else f"{size}round trip"
    return f"{whose} p50 {p50_ms:.3f} / p99 {p99_ms:.3f} ms"


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _option_value(description: ToolDescription, option: str, value: float | str) -> Any:
    """``value`` as ``option`` takes it (a whole number of seconds, at least 1, for an int)."""
    spec = description.option(option)
    if spec is not None and spec.kind == "int" and isinstance(value, float):
        return max(1, round(value))
    return value


def pair_configs(
    tool: str,
    target: Node,
    duration_s: float,
    server_config: Mapping[str, Any] | None = None,
    client_config: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(server config, client config) of one pair to ``target``: the server listens on the
    target's interconnect address, the client sends there for ``duration_s`` and reports every
    MATRIX_INTERVAL_S, each through the option the tool's PairSpec names for it, in the tool's
    first mode (netperf's TCP_STREAM, not its own default TCP_RR); what the given configs say
    wins."""
    spec = pair_spec(tool)
    description = tool_description(tool)
    server = dict(server_config or {})
    client = dict(client_config or {})
    bind = spec.server_fields.get("host")
    if bind:
        server.setdefault(bind, target.address)
    for field_name, value in (("host", target.address), ("duration_s", duration_s), ("interval_s", MATRIX_INTERVAL_S)):
        option = spec.client_fields.get(field_name)
        if option:
            client.setdefault(option, _option_value(description, option, value))
    for option, value in (spec.modes[0].client if spec.modes else {}).items():
        client.setdefault(option, value)  # the tool's first mode, as the Network tab's default
    return server, client


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
    try:
        server_cfg, client_cfg = pair_configs(tool, target, duration_s, server_config, client_config)
        pair = launch_pair(tool, server_cfg, client_cfg, data_dir=data_dir, server_node=target, client_node=source)
    except (OSError, ValueError, KeyError, ToolNotFound, PairStartError) as exc:
        return PairMeasurement(source.name, target.name, address, error=one_line(exc))
    record = wait_for_run(pair.client_run_id, data_dir, duration_s + CLIENT_MARGIN_S)
    if not record.state.finished:
        stop_pair(pair, data_dir)
    else:
        finish_pair(pair, data_dir)
    with Store.open(Path(data_dir)) as store:
        record = store.get_run(pair.client_run_id)
        samples = [sample for _seq, sample in store.samples(pair.client_run_id)]
        result = store.result(pair.client_run_id)
    measured = PairMeasurement(
        source.name, target.name, address, server_run_id=pair.server_run_id, client_run_id=pair.client_run_id
    )
    return judged(measured, tool_description(tool), record.state, record.message, record.started_at, samples, result)


def judged(
    measured: PairMeasurement,
    description: ToolDescription,
    state: RunState,
    message: str | None,
    started_at: float,
    samples: Sequence[Sample],
    result: Mapping[str, Any] | None,
) -> PairMeasurement:
    """The pair's figures and verdict from its client's samples (see the module doc)."""
    intervals = throughput_intervals(description, samples)
    latencies = [v for v in (latency_ms(description, s.metrics) for s in samples) if v is not None]
    counted = sum(
        1
        for s in samples
        if throughput_mbit_s(description, s.metrics) is not None or latency_ms(description, s.metrics) is not None
    )
    measured = dataclasses.replace(measured, samples=counted, **path_figures(description, result))
    if state is not RunState.SUCCEEDED:
        return dataclasses.replace(measured, error=message or f"the client run {state.value}")
    latency = statistics.median(latencies) if latencies else None
    if intervals:
        figure = statistics.median(i.mbit_s for i in intervals)
        drops = tuple(throughput_drops(intervals))
        verdict = interconnect_verdict(figure, drops, started_at)
        return dataclasses.replace(measured, mbit_s=figure, latency_ms=latency, drops=drops, verdict=verdict)
    if latency is not None:
        verdict = Verdict("warning", "measures latency, not throughput: no interconnect throughput verdict")
        return dataclasses.replace(measured, latency_ms=latency, verdict=verdict)
    final = result_throughput_mbit_s(description, result)
    if final is not None:
        base = interconnect_verdict(final)
        verdict = Verdict(base.level, f"{base.text} ({NO_INTERVALS_NOTE})")
        return dataclasses.replace(measured, mbit_s=final, verdict=verdict)
    return dataclasses.replace(
        measured, error=f"the client run {state.value} with no throughput or latency figure ({description.name})"
    )


def path_figures(description: ToolDescription, result: Mapping[str, Any] | None) -> dict[str, Any]:
    """The loss and the round trip's p50 / p99 of a result that measured round trips, the
    PairMeasurement fields of those names (the Network tab says them too): one that checked
    its path (the probe's UDP requests: their round trips and the MTU check; not a SYNC
    test's 1 MiB messages'), or a request/response test's, one with a rate of transactions
    (netperf's TCP_RR and UDP_RR: its own percentiles, ``round_trip_by`` its tool; not a
    STREAM test's send calls)."""
    mtu = MtuFinding.from_result(result)
    own = mtu is None and result_transaction_rate(description, result) is not None
    p50 = result_latency_ms(description, result, "latency_p50") if mtu or own else None
    p99 = result_latency_ms(description, result, "latency_p99") if mtu or own else None
    return {
        "latency_p50_ms": p50,
        "latency_p99_ms": p99,
        "round_trip_by": description.name if own and p50 is not None and p99 is not None else None,
        "loss_pct": result_loss_pct(description, result),
        "mtu": mtu,
    }


def check_path(
    source: Node, target: Node, *, data_dir: Path, duration_s: float = PATH_CHECK_S, label: str = ""
) -> PairMeasurement:
    """The path check (module doc): the probe's UDP requests from ``source`` to ``target``."""
    client = {**PATH_CHECK_CLIENT, **({"label": label} if label else {})}
    return measure_pair(PATH_CHECK_TOOL, source, target, data_dir=data_dir, duration_s=duration_s, client_config=client)


def with_path(measured: PairMeasurement, path: PairMeasurement) -> PairMeasurement:
    """``measured`` with the path check's round trip, loss and MTU, its verdict judged on
    them too; a check that could not run is said beside (the pair's figures stand). A pair's
    own round trips (netperf's RR) stand: the check adds its loss and MTU."""
    if measured.verdict is None:
        return measured
    if path.error is not None and path.mtu is None:
        return dataclasses.replace(measured, path_error=path.error, path_client_run_id=path.client_run_id)
    own = measured.round_trip_by is not None
    return with_path_verdict(
        dataclasses.replace(
            measured,
            latency_p50_ms=measured.latency_p50_ms if own else path.latency_p50_ms,
            latency_p99_ms=measured.latency_p99_ms if own else path.latency_p99_ms,
            # the pair's own loss (a UDP stream's) is of its load; the check's of an idle link
            loss_pct=measured.loss_pct if measured.loss_pct is not None else path.loss_pct,
            mtu=path.mtu,
            path_error=path.error,
            path_client_run_id=path.client_run_id,
        )
    )


def with_path_verdict(measured: PairMeasurement) -> PairMeasurement:
    if measured.verdict is None:
        return measured
    return dataclasses.replace(measured, verdict=path_verdict(measured.verdict, measured.loss_pct, measured.mtu))


def interconnect_matrix(
    tool: str,
    nodes: Sequence[Node],
    *,
    data_dir: Path,
    duration_s: float = 10.0,
    server_config: Mapping[str, Any] | None = None,
    client_config: Mapping[str, Any] | None = None,
    on_result: Callable[[PairMeasurement], None] | None = None,
    path_check: bool = True,
) -> list[PairMeasurement]:
    """Every ordered pair of ``nodes`` (source != target), one at a time, in order, each
    with its path check after it (``path_check``; not for a pair that checked its path)."""
    if len(nodes) < 2:
        raise ValueError("the interconnect matrix needs two nodes at least")
    matrix_id = new_matrix_id()
    results = []
    for source in nodes:
        for target in nodes:
            if source == target:
                continue
            label = run_label(matrix_id, PAIR_PASS, source.name, target.name)
            result = measure_pair(
                tool,
                source,
                target,
                data_dir=data_dir,
                duration_s=duration_s,
                server_config=server_config,
                client_config={**(client_config or {}), "label": label},
            )
            if result.mtu is not None or (result.loss_pct is not None and not path_check):
                # a pair that checked its own path, or measured its own loss (netperf's
                # UDP_STREAM): its verdict says them
                result = with_path_verdict(result)
            elif path_check and result.verdict is not None:
                path_label = run_label(matrix_id, PATH_PASS, source.name, target.name)
                result = with_path(result, check_path(source, target, data_dir=data_dir, label=path_label))
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def matrix_table(nodes: Sequence[Node], results: Sequence[PairMeasurement]) -> str:
    """Rows: the sending node; columns: the receiving node; cells: the figure (or "failed"),
    "STALL" / "dip" after it when the pair stalled or dipped."""
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
                row.append(found.cell())
        cells.append(row)
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells) + "\n"
