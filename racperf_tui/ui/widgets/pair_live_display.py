"""What a server/client pair shows while it runs: both ends' state lines, the client's
throughput and latency sparklines, the interconnect and Data Guard verdicts (stalls and dips
of the intervals; once the client finished, its final figure and the probe's loss, MTU check
and round trip p50/p99, or a request/response test's own round trip p50/p99: netperf's RR).
Fed :class:`~racperf_tui.ui.messages.PairSnapshot` objects: the Network tab's live pair
(tabs/network_panel.py) and a recorded pair's replay (screens/pair_replay_view.py) draw
through it alike.

No tool is named here: the figures are the pair tool's metrics that measure a throughput or a
latency (``MetricSpec.quantity``) in their declared units, the mode's facts (latency only, a
target rate cap) its ``PAIR``'s. The redo rate the Data Guard verdict needs is asked of the
owner (``redo_rate``) each time the verdicts are judged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.quantities import latency_ms, result_throughput_mbit_s, throughput_interval
from racperf_tui.core.contract.tool import PairMode, PairSpec, ToolDescription
from racperf_tui.core.net_guidance import (
    IntervalRate,
    Verdict,
    dataguard_verdict,
    format_rate,
    interconnect_verdict,
    path_verdict,
    throughput_drops,
)
from racperf_tui.core.remote.cluster import LOCAL_NODE
from racperf_tui.core.store import RunRecord
from racperf_tui.orchestration.interconnect_matrix import path_figures, round_trip_said
from racperf_tui.orchestration.pair_runs import pair_spec
from racperf_tui.ui.messages import PairSnapshot
from racperf_tui.ui.runs_data import description_of
from racperf_tui.ui.shown import plain
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline

#: the sparklines' labels: what the figure is and where the bars start
THROUGHPUT_LABEL, LATENCY_LABEL = "Throughput, 0-max", "Lat. mean, 0-max"
#: the Data Guard line before a redo rate is given
NO_REDO_TEXT = "Data Guard: give a redo rate (MB/s)"


def pair_mode_of(tool: str, client_config: Mapping[str, Any]) -> str:
    """The mode a pair's client ran in (its PAIR's name for it: probe's ``RTT``), '' when the
    tool is not installed here or has no modes."""
    try:
        spec = pair_spec(tool)
    except Exception:  # a tool missing here: its pair is shown without its mode's facts
        return ""
    return spec.mode_of(client_config, description_of(tool)) if spec.modes else ""


class PairLiveDisplay(Vertical):
    """Both ends' state, the live sparklines and the guidance verdicts of one pair."""

    DEFAULT_CSS = """
    PairLiveDisplay {
        height: auto;
    }
    PairLiveDisplay .net-state {
        height: 1;
    }
    PairLiveDisplay .verdict-good { color: $success; }
    PairLiveDisplay .verdict-warning { color: $warning; }
    PairLiveDisplay .verdict-bad { color: $error; }
    PairLiveDisplay .net-verdict {
        height: auto;
        margin-top: 1;
    }
    """

    def __init__(
        self, redo_rate: Callable[[], float | None], no_redo_text: str = NO_REDO_TEXT, id: str | None = None
    ) -> None:
        """``redo_rate``: the redo MB/s the Data Guard verdict is judged against (None: not
        given, and the Data Guard line says ``no_redo_text``: where to give one)."""
        super().__init__(id=id)
        self.redo_rate = redo_rate
        self.no_redo_text = no_redo_text
        #: the pair's tool and its client's mode (the mode's latency-only and rate-cap facts)
        self.pair_tool = ""
        self.mode_of_pair = ""
        #: the tool of the pair on screen, for its figures' units (its description)
        self.pair_description = ToolDescription()
        #: the client's intervals that carried a throughput: the live mean, the stalls and dips
        self.throughput_intervals: list[IntervalRate] = []
        self.latency_values: list[float] = []
        self.final_throughput_mbit_s: float | None = None
        #: said after the verdicts when the client did not finish its test
        self.unfinished_note = ""
        #: a finished client's loss, MTU check and round trip p50/p99 (the probe's UDP mode; the
        #: p50/p99 of netperf's RR tests too, with round_trip_by: interconnect_matrix.path_figures)
        self.path_said: dict[str, Any] = {}
        #: the client's end was judged (its final figure in the verdicts)
        self.ended = False
        #: client samples already in the sparklines (a snapshot holds them all)
        self.samples_shown = 0
        #: the state lines as last shown (an unchanged Static.update still costs a layout)
        self._state_lines: dict[str, str] = {}
        self._specs: dict[str, PairSpec | None] = {}

    def compose(self) -> ComposeResult:
        yield Static("server: -", id="net-server-state", classes="net-state")
        yield Static("client: -", id="net-client-state", classes="net-state")
        # bars from 0 (said in the label): scaled min-to-max a steady link's 1 % wobble
        # filled the whole height and looked jumpy. Every pair tool's interval latency is the
        # interval's mean (the probe's and oratcptest's, netperf's 1/rate): the label says so
        yield MetricSparkline(THROUGHPUT_LABEL, "Mbit/s", floor=0.0, id="net-throughput")
        yield MetricSparkline(LATENCY_LABEL, "ms", floor=0.0, id="net-latency")
        yield Static("interconnect: no measurement yet", id="net-verdict-interconnect", classes="net-verdict")
        yield Static(self.no_redo_text, id="net-verdict-dataguard", classes="net-verdict")

    # ------------------------------------------------------------------ a pair
    def reset(self) -> None:
        """No pair's figures: the state lines, sparklines and verdicts start empty."""
        self.final_throughput_mbit_s = None
        self.unfinished_note = ""
        self.path_said = {}
        self.ended = False
        self.show_state_line("#net-server-state", "server: -")
        self.show_state_line("#net-client-state", "client: -")
        self.clear_series()
        self.update_verdicts()

    def watch_pair(self, tool: str, mode: str) -> None:
        """A pair of ``tool`` in ``mode`` is shown from its first sample: its sparklines start
        empty (never with another pair's samples), its figures in its tool's units."""
        self.pair_tool, self.mode_of_pair = tool, mode
        self.ended = False
        self.clear_series()
        self.pair_description = description_of(tool)

    def clear_series(self) -> None:
        self.throughput_intervals = []
        self.latency_values = []
        self.samples_shown = 0
        self.query_one("#net-throughput", MetricSparkline).set_series([])
        self.query_one("#net-latency", MetricSparkline).set_series([])

    def show_pair(self, snapshot: PairSnapshot) -> None:
        """The client's samples not shown yet into the sparklines, both ends' state lines."""
        new = snapshot.client_samples[self.samples_shown :]
        if new:
            # drawn and judged once for them all: a replay drawing an hour again from its
            # start repainted and judged every interval so far at every interval
            figures = [self._take(sample) for sample in new]
            throughputs = [mbit_s for mbit_s, _latency in figures if mbit_s is not None]
            latencies = [latency for _mbit_s, latency in figures if latency is not None]
            self.query_one("#net-throughput", MetricSparkline).extend(throughputs)
            self.query_one("#net-latency", MetricSparkline).extend(latencies)
            self.update_verdicts()
        self.samples_shown = len(snapshot.client_samples)
        self.show_state_line("#net-server-state", state_text("server", snapshot.server, snapshot.server_result))
        self.show_state_line("#net-client-state", state_text("client", snapshot.client, None))

    def judge_end(self, snapshot: PairSnapshot) -> None:
        """The client ended: its final figure (a success's), the path check's findings, or
        why the verdict is on the intervals that arrived."""
        client = snapshot.client
        self.ended = True
        final = result_throughput_mbit_s(self.pair_description, snapshot.client_result)
        if client.state is RunState.SUCCEEDED and final is not None:
            self.final_throughput_mbit_s = final
        if client.state is RunState.SUCCEEDED:
            self.path_said = path_figures(self.pair_description, snapshot.client_result)
        else:
            # a stopped or failed client's "result" (0 Mbit/s, or a partial one) is no
            # measurement of the link: judge the intervals that did arrive, and say so
            self.unfinished_note = f" ({client.state.value} early: mean of {len(self.throughput_intervals)} intervals)"
        self.update_verdicts()

    def show_state_line(self, selector: str, text: str) -> None:
        """Update a state line only when its text changed (live, 4 times a second)."""
        if self._state_lines.get(selector) != text:
            self._state_lines[selector] = text
            self.query_one(selector, Static).update(text)

    def add_sample(self, sample: Sample) -> None:
        """One client sample into the sparklines (and the running verdict)."""
        mbit_s, latency = self._take(sample)
        if mbit_s is not None:
            self.query_one("#net-throughput", MetricSparkline).push(mbit_s)
        if latency is not None:
            self.query_one("#net-latency", MetricSparkline).push(latency)
        self.update_verdicts()

    def _take(self, sample: Sample) -> tuple[float | None, float | None]:
        """A client sample's interval and latency kept for the verdicts: (Mbit/s, ms), each
        None when the sample has none."""
        previous_end_s = self.throughput_intervals[-1].end_s if self.throughput_intervals else 0.0
        interval = throughput_interval(self.pair_description, sample, previous_end_s)
        if interval is not None:
            self.throughput_intervals.append(interval)
        latency = latency_ms(self.pair_description, sample.metrics)
        if latency is not None:
            self.latency_values.append(latency)
        return (interval.mbit_s if interval is not None else None), latency

    def measured_mbit_s(self) -> float | None:
        """The final figure once the client finished, else the mean of the live samples."""
        if self.final_throughput_mbit_s is not None:
            return self.final_throughput_mbit_s
        if self.throughput_intervals:
            return sum(i.mbit_s for i in self.throughput_intervals) / len(self.throughput_intervals)
        return None

    # ------------------------------------------------------------------ verdicts
    def current_mode(self) -> PairMode | None:
        """The mode of the pair on screen (its latency-only and rate-cap facts)."""
        if self.pair_tool not in self._specs:
            try:
                self._specs[self.pair_tool] = pair_spec(self.pair_tool)
            except Exception:  # no such pair tool here: no mode's facts
                self._specs[self.pair_tool] = None
        spec = self._specs[self.pair_tool]
        return next((m for m in spec.modes if m.name == self.mode_of_pair), None) if spec else None

    def round_trip(self) -> str:
        """The finished client's round trip, "; round trip p50 ... / p99 ... ms" (the probe's
        UDP requests'; "netperf's own round trip ..." of its RR test), "" without one."""
        p50, p99 = self.path_said.get("latency_p50_ms"), self.path_said.get("latency_p99_ms")
        if p50 is None or p99 is None:
            return ""
        return "; " + round_trip_said(p50, p99, self.path_said.get("round_trip_by"))

    def update_verdicts(self) -> None:
        measured = self.measured_mbit_s()
        interconnect = self.query_one("#net-verdict-interconnect", Static)
        dataguard = self.query_one("#net-verdict-dataguard", Static)
        mode = self.current_mode()
        if mode is not None and mode.latency_only:
            latency = (
                f"; mean latency {sum(self.latency_values) / len(self.latency_values):.3f} ms"
                if self.latency_values
                else ""
            )
            set_verdict(
                interconnect,
                Verdict(
                    "warning",
                    f"interconnect: {self.mode_of_pair} measures latency, not throughput{latency}{self.round_trip()}",
                ),
            )
            set_verdict(dataguard, Verdict("warning", "Data Guard: run a SYNC or stream test for a bandwidth verdict"))
            return
        if measured is None:
            set_verdict(interconnect, Verdict("", "interconnect: no measurement yet"))
        elif mode is not None and mode.rate_cap:
            # what arrives is capped by the target bitrate: judging it against 1/10 GbE would
            # call a 10 GbE link "below 10 GbE"
            set_verdict(
                interconnect,
                Verdict(
                    "warning",
                    f"interconnect: {mode.name} received {format_rate(measured)} at a "
                    f"{mode.rate_cap}bit/s target rate (a loss check, not the link's "
                    "capacity); run TCP for the 1/10 GbE verdict",
                ),
            )
        else:
            # a mean (or iperf3's final figure) hides seconds at 0: the intervals say them
            verdict = interconnect_verdict(measured, throughput_drops(self.throughput_intervals))
            verdict = path_verdict(verdict, self.path_said.get("loss_pct"), self.path_said.get("mtu"))
            set_verdict(
                interconnect,
                Verdict(verdict.level, f"interconnect: {verdict.text}{self.round_trip()}{self.unfinished_note}"),
            )
        redo = self.redo_rate()
        if mode is not None and mode.rate_cap and measured is not None:
            set_verdict(
                dataguard,
                Verdict("warning", "Data Guard: redo transport is TCP: run a TCP test for the bandwidth verdict"),
            )
        elif redo is None:
            set_verdict(dataguard, Verdict("", self.no_redo_text))
        elif measured is None:
            set_verdict(dataguard, Verdict("", f"Data Guard: redo {redo:g} MB/s; waiting for a measurement"))
        else:
            verdict = dataguard_verdict(redo, measured)
            set_verdict(dataguard, Verdict(verdict.level, f"Data Guard: {verdict.text}{self.unfinished_note}"))


def state_text(role: str, record: RunRecord, result: Mapping[str, Any] | None) -> str:
    """One end's line: its run, tool, state, node, message once ended, headline figure."""
    text = f"{role}: run #{record.id} {record.tool} {record.state.value}"
    if record.host != LOCAL_NODE:
        text += f" on {plain(record.host)}"
    if record.state.finished and record.message:
        text += f" ({record.message})"
    figure = description_of(record.tool).headline(result) if result else ""
    if figure:
        text += f" - {figure}"
    return text


def set_verdict(widget: Static, verdict: Verdict) -> None:
    widget.update(verdict.text)
    widget.set_classes(["net-verdict"] + ([f"verdict-{verdict.level}"] if verdict.level else []))
