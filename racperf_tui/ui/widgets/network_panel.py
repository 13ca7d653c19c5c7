"""The network panel: start a server/client pair (probe, iperf3, and oratcptest / netperf when
their modules are present), watch both ends, the live throughput and latency sparklines, and a
verdict against the guidance (RAC interconnect 1 GbE / 10 GbE; Data Guard bandwidth for a
given redo rate).

Both ends are ordinary recorded runs (:mod:`racperf_tui.core.pair_runs` over
:mod:`racperf_tui.core.runs`): the server run starts first, the client run once the server said
it is ready. The panel polls the store for the client's samples and both runs' states; the
runs go on if the UI goes away.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any, Mapping

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from racperf_tui.core.events import RunState, Sample
from racperf_tui.core.net_guidance import (
    Verdict,
    dataguard_verdict,
    format_rate,
    interconnect_verdict,
)
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline

MIB_S_TO_MBIT_S = 1024 * 1024 * 8 / 1e6

#: tool -> the modes its form offers (the first is the default)
TOOL_MODES: dict[str, tuple[str, ...]] = {
    "probe": ("SYNC", "ASYNC", "RTT"),
    "iperf3": ("TCP", "UDP", "TCP reverse"),
    "oratcptest": ("SYNC", "ASYNC"),
    "netperf": ("TCP_STREAM", "TCP_RR", "UDP_STREAM", "UDP_RR"),
}
#: modes that measure latency only: no throughput verdict
LATENCY_ONLY_MODES = {"RTT", "TCP_RR", "UDP_RR"}


def available_tools() -> list[str]:
    """The pair tools whose modules import here (oratcptest / netperf come from their own
    modules; a missing or broken one is left out of the list, not fatal)."""
    from racperf_tui.tools import load_tool

    tools = []
    for name in TOOL_MODES:
        try:
            module = load_tool(name)
        except Exception:
            continue
        if getattr(module, "READY_PATTERN", None) or getattr(module, "SERVER_READY_RE", None):
            tools.append(name)
    return tools


def pair_configs(tool: str, form: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The panel's form -> (server config, client config) for ``tool``.

    ``form`` keys: host, port, duration_s, interval_s, mode, length (bytes or None),
    connections, write. The server listens on ``host`` (both ends run here for now).
    """
    host, port = form["host"], int(form["port"])
    duration_s, interval_s = float(form["duration_s"]), float(form["interval_s"])
    mode, length, connections = form["mode"], form.get("length"), int(form.get("connections") or 1)
    if tool == "probe":
        client: dict[str, Any] = {"host": host, "port": port, "mode": "SYNC" if mode == "RTT" else mode,
                                  "rtt": mode == "RTT", "num_conn": connections,
                                  "write": bool(form.get("write")), "duration_s": duration_s,
                                  "interval_s": interval_s}
        if length and mode != "RTT":
            client["length"] = int(length)
        return {"bind": host, "port": port, "duration_s": duration_s}, client
    if tool == "iperf3":
        client = {"host": host, "port": port, "duration_s": duration_s, "interval_s": interval_s,
                  "udp": mode == "UDP", "reverse": mode == "TCP reverse", "parallel": connections}
        if mode == "UDP":
            client["bitrate"] = "1G"  # iperf3's UDP default of 1 Mbit/s measures nothing
        if length:
            client["length"] = str(int(length))
        return {"bind": host, "port": port, "duration_s": duration_s}, client
    if tool == "oratcptest":
        client = {"host": host, "port": port, "mode": mode, "num_conn": connections,
                  "write": bool(form.get("write")), "duration_s": max(1, round(duration_s)),
                  "interval_s": max(1, round(interval_s))}
        if length:
            client["length_bytes"] = int(length)
        return {"host": host, "port": port}, client
    if tool == "netperf":
        client = {"host": host, "port": port, "test": mode, "duration_s": max(1, round(duration_s)),
                  "interim_s": interval_s}
        return {"host": host, "port": port}, client
    raise ValueError(f"unknown network tool {tool!r}")


def sample_throughput_mbit_s(sample: Sample) -> float | None:
    """A sample's throughput in Mbit/s (10^6), whatever unit the tool reports."""
    metrics = sample.metrics
    if metrics.get("throughput_mbit_s") is not None:
        return float(metrics["throughput_mbit_s"])
    if metrics.get("throughput_mib_s") is not None:
        return float(metrics["throughput_mib_s"]) * MIB_S_TO_MBIT_S
    return None


def sample_latency_ms(sample: Sample) -> float | None:
    """A sample's latency in ms: the tool's own, or 1000 / transactions per second (RR)."""
    metrics = sample.metrics
    if metrics.get("latency_ms") is not None:
        return float(metrics["latency_ms"])
    trans = metrics.get("trans_per_s")
    if trans:
        return 1000.0 / float(trans)
    return None


def result_throughput_mbit_s(result: Mapping[str, Any] | None) -> float | None:
    """The final measured throughput (Mbit/s) of a client result of any pair tool."""
    if not result:
        return None
    if result.get("received_mbit_s") is not None:  # iperf3: what got through
        return float(result["received_mbit_s"])
    if result.get("avg_throughput_mib_s") is not None:  # probe, oratcptest
        return float(result["avg_throughput_mib_s"]) * MIB_S_TO_MBIT_S
    if result.get("throughput_mbit_s") is not None:  # netperf STREAM
        return float(result["throughput_mbit_s"])
    return None


def free_port(host: str) -> int:
    """A port free on ``host`` right now (for tools that cannot pick one themselves)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class NetworkPanel(Vertical):
    """Pair launcher, both ends' state, live sparklines and the guidance verdicts."""

    DEFAULT_CSS = """
    NetworkPanel {
        height: 1fr;
        padding: 0 1;
    }
    NetworkPanel .net-row {
        height: auto;
    }
    NetworkPanel .net-field {
        width: 1fr;
        height: auto;
    }
    NetworkPanel .net-field > Label {
        color: $text-muted;
    }
    NetworkPanel #net-buttons {
        height: 3;
    }
    NetworkPanel #net-buttons Button {
        margin-right: 1;
    }
    NetworkPanel #net-message {
        width: 1fr;
        padding: 1 0 0 1;
    }
    NetworkPanel .net-state {
        height: 1;
    }
    NetworkPanel .verdict-good { color: $success; }
    NetworkPanel .verdict-warning { color: $warning; }
    NetworkPanel .verdict-bad { color: $error; }
    NetworkPanel .net-verdict {
        height: auto;
        margin-top: 1;
    }
    """

    def __init__(self, data_dir: str | None = None, poll_interval_s: float = 0.25) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.poll_interval_s = poll_interval_s
        self.tools = available_tools() or ["probe"]
        self.pair: Any = None  # PairRuns of the pair on screen
        self.after_seq = 0
        self.throughput_values: list[float] = []
        self.latency_values: list[float] = []
        self.final_throughput_mbit_s: float | None = None
        self.mode_of_pair = ""
        self._finishing = False
        self._store: Any = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        with Horizontal(classes="net-row"):
            yield self._field("Tool", Select([(t, t) for t in self.tools], value=self.tools[0],
                                             allow_blank=False, id="net-tool"))
            yield self._field("Server address", Input("127.0.0.1", id="net-host"))
            yield self._field("Port (0: free one)", Input("0", id="net-port", type="integer"))
            yield self._field("Duration s", Input("10", id="net-duration", type="number"))
            yield self._field("Interval s", Input("1", id="net-interval", type="number"))
        with Horizontal(classes="net-row"):
            yield self._field("Mode", Select(self._mode_options(self.tools[0]), allow_blank=False,
                                             id="net-mode"))
            yield self._field("Message / block bytes", Input("", placeholder="tool default",
                                                            id="net-length", type="integer"))
            yield self._field("Connections", Input("1", id="net-connections", type="integer"))
            yield self._field("Redo MB/s (Data Guard)", Input("", placeholder="e.g. 50",
                                                             id="net-redo", type="number"))
            yield self._field("Server write+fsync", Checkbox("write", id="net-write"))
        with Horizontal(id="net-buttons"):
            yield Button("Start pair", id="net-start", variant="primary")
            yield Button("Stop", id="net-stop", disabled=True)
            yield Static("", id="net-message")
        yield Static("server: -", id="net-server-state", classes="net-state")
        yield Static("client: -", id="net-client-state", classes="net-state")
        yield MetricSparkline("Throughput", "Mbit/s", id="net-throughput")
        yield MetricSparkline("Latency", "ms", id="net-latency")
        yield Static("interconnect: no measurement yet", id="net-verdict-interconnect",
                     classes="net-verdict")
        yield Static("Data Guard: give a redo rate (MB/s)", id="net-verdict-dataguard",
                     classes="net-verdict")

    @staticmethod
    def _field(label: str, widget: Any) -> Vertical:
        return Vertical(Label(label), widget, classes="net-field")

    @staticmethod
    def _mode_options(tool: str) -> list[tuple[str, str]]:
        return [(m, m) for m in TOOL_MODES.get(tool, ("SYNC",))]

    def on_mount(self) -> None:
        self.set_interval(self.poll_interval_s, self._poll)
        self._reattach()

    def _reattach(self) -> None:
        """A pair still running from an earlier racperf (runs outlive the UI): show it."""
        from racperf_tui.core.pair_runs import PairRuns

        try:
            unfinished = self._open_store().unfinished_runs()
        except Exception:  # an unreadable store must not take the panel down
            return
        clients = [r for r in unfinished if r.tool in TOOL_MODES and r.config.get("role") == "client"
                   and r.config.get("peer_run_id")]
        if not clients:
            return
        client = clients[-1]
        self.pair = PairRuns(client.tool, int(client.config["peer_run_id"]), client.id,
                             client.config.get("port"))
        self.mode_of_pair = self._mode_of_config(client.tool, client.config)
        self.query_one("#net-start", Button).disabled = True
        self.query_one("#net-stop", Button).disabled = False
        self._message(f"{client.tool} pair from an earlier session (runs #{self.pair.server_run_id} "
                      f"and #{client.id}), live", "good")

    @staticmethod
    def _mode_of_config(tool: str, config: Mapping[str, Any]) -> str:
        if tool == "probe":
            return "RTT" if config.get("rtt") else str(config.get("mode", "SYNC")).upper()
        if tool == "iperf3":
            return "UDP" if config.get("udp") else ("TCP reverse" if config.get("reverse") else "TCP")
        return str(config.get("test") or config.get("mode") or "")

    def on_unmount(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # ------------------------------------------------------------------ form
    @on(Select.Changed, "#net-tool")
    def _tool_changed(self, event: Select.Changed) -> None:
        mode = self.query_one("#net-mode", Select)
        options = self._mode_options(str(event.value))
        mode.set_options(options)
        mode.value = options[0][1]

    @on(Input.Changed, "#net-redo")
    def _redo_changed(self, event: Input.Changed) -> None:
        self._update_verdicts()

    def read_form(self) -> dict[str, Any]:
        """The form's values; ValueError names the field that is wrong."""
        def number(widget_id: str, label: str, *, integer: bool = False, minimum: float = 0.0,
                   blank: Any = ValueError) -> Any:
            text = self.query_one(widget_id, Input).value.strip()
            if not text:
                if blank is ValueError:
                    raise ValueError(f"{label}: a value is needed")
                return blank
            try:
                value = int(text) if integer else float(text)
            except ValueError:
                raise ValueError(f"{label}: {text!r} is not a {'whole ' if integer else ''}number") from None
            if value < minimum:
                raise ValueError(f"{label}: must be at least {minimum:g}, not {value:g}")
            return value

        host = self.query_one("#net-host", Input).value.strip()
        if not host:
            raise ValueError("Server address: a host name or address is needed")
        port = number("#net-port", "Port", integer=True)
        if port > 65535:
            raise ValueError(f"Port: must be at most 65535, not {port}")
        return {
            "tool": str(self.query_one("#net-tool", Select).value),
            "host": host,
            "port": port,
            "duration_s": number("#net-duration", "Duration", minimum=1),
            "interval_s": number("#net-interval", "Interval", minimum=0.1),
            "mode": str(self.query_one("#net-mode", Select).value),
            "length": number("#net-length", "Message bytes", integer=True, minimum=1, blank=None),
            "connections": number("#net-connections", "Connections", integer=True, minimum=1),
            "write": self.query_one("#net-write", Checkbox).value,
        }

    def redo_mb_s(self) -> float | None:
        """The redo rate typed in, None when blank or not a number."""
        text = self.query_one("#net-redo", Input).value.strip()
        try:
            value = float(text)
        except ValueError:
            return None
        return value if value >= 0 else None

    # ------------------------------------------------------------------ start / stop
    @on(Button.Pressed, "#net-start")
    def action_start_pair(self) -> None:
        """Validate the form and start the pair in a worker thread (launching blocks)."""
        if self.pair is not None and not self._finishing:
            self._message("a pair is running: stop it first", "warning")
            return
        try:
            form = self.read_form()
        except ValueError as exc:
            self._message(str(exc), "bad")
            return
        self._reset_live()
        self.mode_of_pair = form["mode"]
        self.query_one("#net-start", Button).disabled = True
        self._message(f"starting the {form['tool']} server on {form['host']}...", "")
        self.run_worker(lambda: self._launch(form), thread=True, exclusive=True, group="net-launch")

    def _launch(self, form: dict[str, Any]) -> None:
        """Worker thread: launch the pair; report back on the UI thread."""
        from racperf_tui.core.pair_runs import launch_pair

        tool = form["tool"]
        try:
            if form["port"] == 0 and tool != "probe":
                form = dict(form, port=free_port(form["host"]))
            server_cfg, client_cfg = pair_configs(tool, form)
            pair = launch_pair(tool, server_cfg, client_cfg, data_dir=self._data_dir())
        except Exception as exc:  # every failure is shown, none crashes the UI
            self.app.call_from_thread(self._launch_failed, f"{tool}: {exc}")
            return
        self.app.call_from_thread(self._pair_started, pair)

    def _launch_failed(self, message: str) -> None:
        self.query_one("#net-start", Button).disabled = False
        self._message(message, "bad")

    def _pair_started(self, pair: Any) -> None:
        self.pair = pair
        self._finishing = False
        self.query_one("#net-stop", Button).disabled = False
        self._message(f"{pair.tool} pair running on port {pair.port} (runs #{pair.server_run_id} "
                      f"and #{pair.client_run_id})", "good")
        self._poll()

    @on(Button.Pressed, "#net-stop")
    def action_stop_pair(self) -> None:
        """Stop both ends (in a worker thread: stopping waits for the runs to end)."""
        if self.pair is None:
            return
        pair = self.pair
        self.query_one("#net-stop", Button).disabled = True
        self._message("stopping...", "")

        def stop() -> None:
            from racperf_tui.core.pair_runs import stop_pair

            stop_pair(pair, self._data_dir())

        self.run_worker(stop, thread=True, group="net-stop")

    # ------------------------------------------------------------------ live
    def _data_dir(self) -> Path:
        return resolve_data_dir(self.data_dir)

    def _open_store(self) -> Any:
        if self._store is None:
            from racperf_tui.core.store import Store

            self._store = Store.open(self._data_dir())
        return self._store

    def _reset_live(self) -> None:
        self.pair = None
        self.after_seq = 0
        self.throughput_values = []
        self.latency_values = []
        self.final_throughput_mbit_s = None
        self.query_one("#net-throughput", MetricSparkline).set_series([])
        self.query_one("#net-latency", MetricSparkline).set_series([])
        self._update_verdicts()

    def _poll(self) -> None:
        """Timer: new client samples -> sparklines; both runs' states -> the state lines."""
        pair = self.pair
        if pair is None:
            return
        store = self._open_store()
        for seq, sample in store.samples(pair.client_run_id, self.after_seq):
            self.after_seq = seq
            self.add_sample(sample)
        server = store.get_run(pair.server_run_id)
        client = store.get_run(pair.client_run_id)
        self.query_one("#net-server-state", Static).update(
            self._state_text("server", server, store.result(pair.server_run_id) if server.state.finished else None))
        self.query_one("#net-client-state", Static).update(
            self._state_text("client", client, None))
        if client.state.finished and not self._finishing:
            self._finishing = True
            result = store.result(pair.client_run_id)
            final = result_throughput_mbit_s(result)
            if final is not None:
                self.final_throughput_mbit_s = final
            self._update_verdicts()
            self.query_one("#net-start", Button).disabled = False
            self.query_one("#net-stop", Button).disabled = True
            level = "good" if client.state is RunState.SUCCEEDED else "bad"
            self._message(f"client run #{client.id} {client.state.value}: {client.message or ''}", level)

            def finish() -> None:
                from racperf_tui.core.pair_runs import finish_pair

                finish_pair(pair, self._data_dir())

            self.run_worker(finish, thread=True, group="net-finish")

    @staticmethod
    def _state_text(role: str, record: Any, result: Mapping[str, Any] | None) -> str:
        text = f"{role}: run #{record.id} {record.tool} {record.state.value}"
        if record.state.finished and record.message:
            text += f" ({record.message})"
        if result and result.get("role") == "server":
            received = result.get("bytes_received") or result.get("received_bytes")
            if received:
                text += f" - received {received / 1024**3:.2f} GiB"
        return text

    def add_sample(self, sample: Sample) -> None:
        """One client sample into the sparklines (and the running verdict)."""
        throughput = sample_throughput_mbit_s(sample)
        if throughput is not None:
            self.throughput_values.append(throughput)
            self.query_one("#net-throughput", MetricSparkline).push(throughput)
        latency = sample_latency_ms(sample)
        if latency is not None:
            self.latency_values.append(latency)
            self.query_one("#net-latency", MetricSparkline).push(latency)
        self._update_verdicts()

    def measured_mbit_s(self) -> float | None:
        """The final figure once the client finished, else the mean of the live samples."""
        if self.final_throughput_mbit_s is not None:
            return self.final_throughput_mbit_s
        if self.throughput_values:
            return sum(self.throughput_values) / len(self.throughput_values)
        return None

    def _update_verdicts(self) -> None:
        measured = self.measured_mbit_s()
        interconnect = self.query_one("#net-verdict-interconnect", Static)
        dataguard = self.query_one("#net-verdict-dataguard", Static)
        if self.mode_of_pair in LATENCY_ONLY_MODES:
            latency = (f"; mean latency {sum(self.latency_values) / len(self.latency_values):.3f} ms"
                       if self.latency_values else "")
            self._set_verdict(interconnect, Verdict("warning", f"interconnect: {self.mode_of_pair} "
                                                               f"measures latency, not throughput{latency}"))
            self._set_verdict(dataguard, Verdict("warning", "Data Guard: run a SYNC or stream test "
                                                            "for a bandwidth verdict"))
            return
        if measured is None:
            self._set_verdict(interconnect, Verdict("", "interconnect: no measurement yet"))
        else:
            verdict = interconnect_verdict(measured)
            self._set_verdict(interconnect, Verdict(verdict.level, f"interconnect: {verdict.text}"))
        redo = self.redo_mb_s()
        if redo is None:
            self._set_verdict(dataguard, Verdict("", "Data Guard: give a redo rate (MB/s)"))
        elif measured is None:
            self._set_verdict(dataguard, Verdict("", f"Data Guard: redo {redo:g} MB/s; waiting for a "
                                                     "measurement"))
        else:
            verdict = dataguard_verdict(redo, measured)
            self._set_verdict(dataguard, Verdict(verdict.level, f"Data Guard: {verdict.text}"))

    @staticmethod
    def _set_verdict(widget: Static, verdict: Verdict) -> None:
        widget.update(verdict.text)
        widget.set_classes(["net-verdict"] + ([f"verdict-{verdict.level}"] if verdict.level else []))

    def _message(self, text: str, level: str) -> None:
        widget = self.query_one("#net-message", Static)
        widget.update(text)
        widget.set_classes([f"verdict-{level}"] if level else [])


__all__ = ["NetworkPanel", "pair_configs", "available_tools", "format_rate"]
