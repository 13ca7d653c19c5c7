"""The network panel: start a server/client pair (probe, iperf3, and oratcptest / netperf when
their modules are present), watch both ends, the live throughput and latency sparklines, and a
verdict against the guidance (RAC interconnect 1 GbE / 10 GbE; Data Guard bandwidth for a
given redo rate).

Both ends are ordinary recorded runs (:mod:`racperf_tui.orchestration.pair_runs` over
:mod:`racperf_tui.orchestration.runs`): the server run starts first, the client run once the server said
it is ready. The panel polls the store for the client's samples and both runs' states; the
runs go on if the UI goes away.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from racperf_tui.core import settings
from racperf_tui.core.events import RunState, Sample
from racperf_tui.core.net_guidance import (
    Verdict,
    dataguard_verdict,
    format_rate,
    interconnect_verdict,
)
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.store import Store
from racperf_tui.core.units import MIB_S_TO_MBIT_S
from racperf_tui.orchestration.pair_runs import PairRuns, finish_pair, launch_pair, stop_pair
from racperf_tui.tools import load_tool
from racperf_tui.ui.widgets.metric_sparkline import MetricSparkline
from racperf_tui.ui.widgets.tick_box import TickBox

#: tool -> the modes its form offers (the first is the default)
TOOL_MODES: dict[str, tuple[str, ...]] = {
    "probe": ("SYNC", "ASYNC", "RTT"),
    "iperf3": ("TCP", "UDP", "TCP reverse"),
    "oratcptest": ("SYNC", "ASYNC"),
    "netperf": ("TCP_STREAM", "TCP_RR", "UDP_STREAM", "UDP_RR"),
}
#: modes that measure latency only: no throughput verdict
LATENCY_ONLY_MODES = {"RTT", "TCP_RR", "UDP_RR"}
#: the target bitrate of the panel's iperf3 UDP test (iperf3's own default of 1 Mbit/s
#: measures nothing); what arrives is capped by it, so it is no link-capacity figure
IPERF3_UDP_BITRATE = "1G"

#: tool -> (label, placeholder) of the "program" field: where the tool's program is
PROGRAM_LABELS: dict[str, tuple[str, str]] = {
    "probe": ("Program", "built in: nothing to install"),
    "iperf3": ("iperf3 program", "iperf3 on PATH"),
    "oratcptest": ("oratcptest.jar path", "oratcptest.jar (MOS Doc ID 2064368.1)"),
    "netperf": ("netperf directory", "directory of netperf and netserver (blank: PATH)"),
}
#: tool -> the setting (core.settings, in the data dir) that remembers its program field
PROGRAM_SETTINGS: dict[str, str] = {
    "iperf3": "iperf3.binary",
    "oratcptest": "oratcptest.jar_path",
    "netperf": "netperf.dir",
}
JAVA_SETTING = "oratcptest.java"
#: form field -> the tools that use it (disabled for the others: a value typed there would
#: be silently ignored)
FIELD_TOOLS: dict[str, frozenset[str]] = {
    "#net-write": frozenset({"probe", "oratcptest"}),
    "#net-length": frozenset({"probe", "iperf3", "oratcptest"}),
    "#net-connections": frozenset({"probe", "iperf3", "oratcptest"}),
}


def available_tools() -> list[str]:
    """The pair tools whose modules import here (oratcptest / netperf come from their own
    modules; a missing or broken one is left out of the list, not fatal)."""
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
    connections, write, and optionally program (iperf3 binary, oratcptest.jar, netperf's
    directory) and java (oratcptest). The server listens on ``host`` (both ends run here for now).
    """
    host, port = form["host"], int(form["port"])
    duration_s, interval_s = float(form["duration_s"]), float(form["interval_s"])
    mode, length, connections = form["mode"], form.get("length"), int(form.get("connections") or 1)
    server_cfg, client_cfg = _pair_configs_without_programs(
        tool, form, host, port, duration_s, interval_s, mode, length, connections
    )
    program = str(form.get("program") or "").strip()
    java = str(form.get("java") or "").strip()
    for config in (server_cfg, client_cfg):
        # both ends run the same program; blank leaves the tool's own search (PATH, settings)
        if tool == "iperf3" and program:
            config["binary"] = program
        elif tool == "oratcptest":
            if program:
                config["jar_path"] = program
            if java:
                config["java"] = java
        elif tool == "netperf" and program:
            config["netperf"] = str(Path(program).expanduser() / "netperf")
            config["netserver"] = str(Path(program).expanduser() / "netserver")
    return server_cfg, client_cfg


def _pair_configs_without_programs(
    tool: str,
    form: Mapping[str, Any],
    host: str,
    port: int,
    duration_s: float,
    interval_s: float,
    mode: str,
    length: Any,
    connections: int,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two ends' configs from the form's measurement fields."""
    if tool == "probe":
        client: dict[str, Any] = {
            "host": host,
            "port": port,
            "mode": "SYNC" if mode == "RTT" else mode,
            "rtt": mode == "RTT",
            "num_conn": connections,
            "write": bool(form.get("write")),
            "duration_s": duration_s,
            "interval_s": interval_s,
        }
        if length and mode != "RTT":
            client["length"] = int(length)
        return {"bind": host, "port": port, "duration_s": duration_s}, client
    if tool == "iperf3":
        client = {
            "host": host,
            "port": port,
            "duration_s": duration_s,
            "interval_s": interval_s,
            "udp": mode == "UDP",
            "reverse": mode == "TCP reverse",
            "parallel": connections,
        }
        if mode == "UDP":
            client["bitrate"] = IPERF3_UDP_BITRATE
        if length:
            client["length"] = str(int(length))
        return {"bind": host, "port": port, "duration_s": duration_s}, client
    if tool == "oratcptest":
        client = {
            "host": host,
            "port": port,
            "mode": mode,
            "num_conn": connections,
            "write": bool(form.get("write")),
            "duration_s": max(1, round(duration_s)),
            "interval_s": max(1, round(interval_s)),
        }
        if length:
            client["length_bytes"] = int(length)
        return {"host": host, "port": port}, client
    if tool == "netperf":
        client = {
            "host": host,
            "port": port,
            "test": mode,
            "duration_s": max(1, round(duration_s)),
            "interim_s": interval_s,
        }
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
        padding-right: 1;
    }
    NetworkPanel .net-field > Label {
        color: $text-muted;
    }
    /* Short values get the width of their label; the server address (a host name) gets the
       rest of its row: 1fr of five fields was 15 cells at 80 columns, 30 at 150 */
    NetworkPanel #net-tool-field, NetworkPanel #net-mode-field, NetworkPanel #net-port-field {
        width: 15;
    }
    NetworkPanel #net-duration-field, NetworkPanel #net-interval-field {
        width: 11;
    }
    NetworkPanel #net-buttons {
        height: auto;
        margin-top: 1;
    }
    NetworkPanel #net-buttons Button {
        height: 1;
    }
    NetworkPanel #net-buttons Button {
        margin-right: 1;
    }
    NetworkPanel #net-message {
        width: 1fr;
        height: auto;
        padding: 0 0 0 1;
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

    HELP_TITLE = "Network"

    # In a text field (port, duration...) digits and q are typed: the app's 1 2 3 and q are
    # not made priority bindings, which would make a port of 1521 untypeable. Esc leaves the
    # field instead (shown in the footer while in one), and ctrl+q quits from anywhere.
    BINDINGS = [
        Binding("ctrl+l", "start_pair", "Start pair", tooltip="Start the server / client pair"),
        Binding("ctrl+t", "stop_pair", "Stop pair", tooltip="Stop the pair (both ends)"),
        Binding(
            "escape", "leave_field", "Leave field", tooltip="Leave the text field: then 1 2 3 switch tabs and q quits"
        ),
    ]

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
        #: said after the verdicts when the client did not finish its test
        self.unfinished_note = ""
        self.mode_of_pair = ""
        self._finishing = False
        #: both ends finished and shown: the poll has nothing left to read
        self._settled = False
        #: the state lines as last shown (an unchanged Static.update still costs a layout)
        self._state_lines: dict[str, str] = {}
        self._store: Any = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        # compact widgets and labels of <= 15 characters: the whole panel, verdicts included,
        # fits an 80x24 terminal (a DBA's default SSH window)
        with Horizontal(classes="net-row"):
            yield self._field(
                "Tool",
                Select(
                    [(t, t) for t in self.tools], value=self.tools[0], allow_blank=False, compact=True, id="net-tool"
                ),
            )
            yield self._field("Server address", Input("127.0.0.1", compact=True, id="net-host"))
            yield self._field("Port (0: free)", Input("0", compact=True, id="net-port", type="integer"))
            yield self._field("Duration s", Input("10", compact=True, id="net-duration", type="number"))
            yield self._field("Interval s", Input("1", compact=True, id="net-interval", type="number"))
        with Horizontal(classes="net-row"):
            yield self._field(
                "Mode", Select(self._mode_options(self.tools[0]), allow_blank=False, compact=True, id="net-mode")
            )
            yield self._field(
                "Message bytes", Input("", placeholder="default", compact=True, id="net-length", type="integer")
            )
            yield self._field("Connections", Input("1", compact=True, id="net-connections", type="integer"))
            yield self._field(
                "Redo MB/s (DG)", Input("", placeholder="e.g. 50", compact=True, id="net-redo", type="number")
            )
            yield self._field("Server fsync", TickBox("write", compact=True, id="net-write"))
        with Horizontal(classes="net-row"):
            yield self._field(
                PROGRAM_LABELS[self.tools[0]][0],
                Input("", placeholder=PROGRAM_LABELS[self.tools[0]][1], compact=True, id="net-program"),
            )
            yield self._field(
                "Java (oratcptest)",
                Input("", placeholder="$JAVA_HOME, $ORACLE_HOME/jdk or PATH", compact=True, id="net-java"),
            )
        with Horizontal(id="net-buttons"):
            yield Button("Start pair", id="net-start", variant="primary", compact=True)
            yield Button("Stop", id="net-stop", disabled=True, compact=True)
            yield Static("", id="net-message")
        yield Static("server: -", id="net-server-state", classes="net-state")
        yield Static("client: -", id="net-client-state", classes="net-state")
        yield MetricSparkline("Throughput", "Mbit/s", id="net-throughput")
        yield MetricSparkline("Latency", "ms", id="net-latency")
        yield Static("interconnect: no measurement yet", id="net-verdict-interconnect", classes="net-verdict")
        yield Static("Data Guard: give a redo rate (MB/s)", id="net-verdict-dataguard", classes="net-verdict")

    @staticmethod
    def _field(label: str, widget: Any) -> Vertical:
        """A labelled field, ``#<widget id>-field`` (its width is set in CSS)."""
        return Vertical(Label(label), widget, classes="net-field", id=f"{widget.id}-field")

    @staticmethod
    def _mode_options(tool: str) -> list[tuple[str, str]]:
        return [(m, m) for m in TOOL_MODES.get(tool, ("SYNC",))]

    def on_mount(self) -> None:
        self._show_program_fields(self.tools[0])
        # Asleep while no pair runs (4 wake-ups a second for nothing otherwise); a pair
        # starting or found running wakes it.
        self._poll_timer = self.set_interval(self.poll_interval_s, self._poll, pause=True)
        self._reattach()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc (leave the field) is offered only in a text field."""
        if action == "leave_field":
            return isinstance(self.app.focused, Input)
        return True

    def action_leave_field(self) -> None:
        """Out of the text field, onto the enabled button: the tab keys and q work again."""
        start_button = self.query_one("#net-start", Button)
        (start_button if not start_button.disabled else self.query_one("#net-stop", Button)).focus()

    def _set_buttons(self, *, start: bool, stop: bool) -> None:
        """Enable Start / Stop; when the focused button got disabled (focus is then lost and
        with it the panel's keys), the enabled one takes the focus."""
        start_button = self.query_one("#net-start", Button)
        stop_button = self.query_one("#net-stop", Button)
        focused = self.app.focused
        lost = focused is None or (
            focused in (start_button, stop_button) and not (start if focused is start_button else stop)
        )
        start_button.disabled = not start
        stop_button.disabled = not stop
        if lost and self.is_mounted and self.display:
            for button, enabled in ((start_button, start), (stop_button, stop)):
                if enabled:
                    button.focus()
                    break

    def on_show(self) -> None:
        """Focus the Start button when the tab is shown: the panel's keys (ctrl+l / ctrl+t)
        work and show in the footer at once, and the tab keys (1 2 3) and q still do."""
        if self.app.focused is None or self.app.focused not in self.query("*"):
            self.query_one("#net-start", Button).focus()

    def _setting(self, key: str) -> str:
        """A remembered setting from this panel's data dir ('' when unset or unreadable)."""
        try:
            return str(settings.get(key, "", data_dir=self._data_dir()) or "")
        except (OSError, ValueError):
            return ""

    def _show_program_fields(self, tool: str) -> None:
        """Label, placeholder and remembered value of the program field for ``tool``; the java
        field only for oratcptest (the only tool run by a JVM)."""
        label, placeholder = PROGRAM_LABELS.get(tool, ("Program", ""))
        field = self.query_one("#net-program-field", Vertical)
        field.query_one(Label).update(label)
        program = self.query_one("#net-program", Input)
        program.placeholder = placeholder
        program.value = self._setting(PROGRAM_SETTINGS[tool]) if tool in PROGRAM_SETTINGS else ""
        program.disabled = tool not in PROGRAM_SETTINGS
        java = self.query_one("#net-java", Input)
        java.value = self._setting(JAVA_SETTING) if tool == "oratcptest" else ""
        java.disabled = tool != "oratcptest"
        for field_id, tools in FIELD_TOOLS.items():
            self.query_one(field_id).disabled = tool not in tools

    def _remember_programs(self, form: Mapping[str, Any]) -> None:
        """Configured once: the program (and java) paths typed in are kept in the data dir."""
        tool = form["tool"]
        try:
            if tool in PROGRAM_SETTINGS:
                settings.set(PROGRAM_SETTINGS[tool], form.get("program") or None, data_dir=self._data_dir())
            if tool == "oratcptest":
                settings.set(JAVA_SETTING, form.get("java") or None, data_dir=self._data_dir())
        except (OSError, ValueError) as exc:  # the run can go on without remembering
            self.app.call_from_thread(self.notify, f"cannot remember the program path: {exc}", severity="warning")

    def _reattach(self) -> None:
        """A pair still running from an earlier racperf (runs outlive the UI): show it."""
        try:
            unfinished = self._open_store().unfinished_runs()
        except Exception:  # an unreadable store must not take the panel down
            return
        clients = [
            r
            for r in unfinished
            if r.tool in TOOL_MODES and r.config.get("role") == "client" and r.config.get("peer_run_id")
        ]
        if not clients:
            return
        client = clients[-1]
        self.pair = PairRuns(client.tool, int(client.config["peer_run_id"]), client.id, client.config.get("port"))
        self._settled = False
        self._poll_timer.resume()
        self.mode_of_pair = self._mode_of_config(client.tool, client.config)
        self._set_buttons(start=False, stop=True)
        self._message(
            f"{client.tool} pair from an earlier session (runs #{self.pair.server_run_id} and #{client.id}), live",
            "good",
        )

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
        self._show_program_fields(str(event.value))

    @on(Input.Changed, "#net-redo")
    def _redo_changed(self, event: Input.Changed) -> None:
        self._update_verdicts()

    def read_form(self) -> dict[str, Any]:
        """The form's values; ValueError names the field that is wrong."""

        def number(
            widget_id: str, label: str, *, integer: bool = False, minimum: float = 0.0, blank: Any = ValueError
        ) -> Any:
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
            # a field the tool does not use (disabled) is neither validated nor passed on
            "length": None
            if self.query_one("#net-length").disabled
            else number("#net-length", "Message bytes", integer=True, minimum=1, blank=None),
            "connections": 1
            if self.query_one("#net-connections").disabled
            else number("#net-connections", "Connections", integer=True, minimum=1),
            "write": not self.query_one("#net-write").disabled and self.query_one("#net-write", Checkbox).value,
            "program": self.query_one("#net-program", Input).value.strip(),
            "java": self.query_one("#net-java", Input).value.strip(),
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
        self._set_buttons(start=False, stop=False)
        self._message(f"starting the {form['tool']} server on {form['host']}...", "")
        self.run_worker(lambda: self._launch(form), thread=True, exclusive=True, group="net-launch")

    def _launch(self, form: dict[str, Any]) -> None:
        """Worker thread: launch the pair; report back on the UI thread."""
        tool = form["tool"]
        self._remember_programs(form)
        try:
            if form["port"] == 0 and tool != "probe":
                form = dict(form, port=free_port(form["host"]))
            server_cfg, client_cfg = pair_configs(tool, form)
            pair = launch_pair(tool, server_cfg, client_cfg, data_dir=self._data_dir())
        except Exception as exc:  # every failure is shown, none crashes the UI
            text = str(exc)
            # the tools' own errors mostly name the tool already ("oratcptest: the path of...")
            self.app.call_from_thread(self._launch_failed, text if text.startswith(f"{tool}:") else f"{tool}: {text}")
            return
        self.app.call_from_thread(self._pair_started, pair)

    def _launch_failed(self, message: str) -> None:
        self._set_buttons(start=True, stop=False)
        self._message(message, "bad")

    def _pair_started(self, pair: Any) -> None:
        self.pair = pair
        self._finishing = False
        self._settled = False
        self._poll_timer.resume()
        self._set_buttons(start=False, stop=True)
        # what launch_pair adapted (notes) or found worth knowing (warnings: e.g. a database
        # listener's port) is said here, not only recorded
        said = [*getattr(pair, "warnings", ()), *getattr(pair, "notes", ())]
        self._message(
            f"{pair.tool} pair running on port {pair.port} (runs #{pair.server_run_id} "
            f"and #{pair.client_run_id})" + "".join(f"; {text}" for text in said),
            "warning" if getattr(pair, "warnings", ()) else "good",
        )
        self._poll()

    @on(Button.Pressed, "#net-stop")
    def action_stop_pair(self) -> None:
        """Stop both ends (in a worker thread: stopping waits for the runs to end)."""
        if self.pair is None or self.query_one("#net-stop", Button).disabled:
            return
        pair = self.pair
        self._set_buttons(start=False, stop=False)
        self._message("stopping...", "")

        def stop() -> None:
            stop_pair(pair, self._data_dir())

        self.run_worker(stop, thread=True, group="net-stop")

    # ------------------------------------------------------------------ live
    def _data_dir(self) -> Path:
        return resolve_data_dir(self.data_dir)

    def _open_store(self) -> Any:
        if self._store is None:
            self._store = Store.open(self._data_dir())
        return self._store

    def _reset_live(self) -> None:
        self.pair = None
        self.after_seq = 0
        self.throughput_values = []
        self.latency_values = []
        self.final_throughput_mbit_s = None
        self.unfinished_note = ""
        # the last pair's ends ("run #1 probe succeeded") are no state of the pair starting now
        self._show_state_line("#net-server-state", "server: -")
        self._show_state_line("#net-client-state", "client: -")
        self.query_one("#net-throughput", MetricSparkline).set_series([])
        self.query_one("#net-latency", MetricSparkline).set_series([])
        self._update_verdicts()

    def _poll(self) -> None:
        """Timer: new client samples -> sparklines; both runs' states -> the state lines."""
        pair = self.pair
        if pair is None or self._settled:
            self._poll_timer.pause()  # until the next pair
            return
        store = self._open_store()
        for seq, sample in store.samples(pair.client_run_id, self.after_seq):
            self.after_seq = seq
            self.add_sample(sample)
        server = store.get_run(pair.server_run_id)
        client = store.get_run(pair.client_run_id)
        self._show_state_line(
            "#net-server-state",
            self._state_text("server", server, store.result(pair.server_run_id) if server.state.finished else None),
        )
        self._show_state_line("#net-client-state", self._state_text("client", client, None))
        self._settled = server.state.finished and client.state.finished and self._finishing
        if client.state.finished and not self._finishing:
            self._finishing = True
            result = store.result(pair.client_run_id)
            final = result_throughput_mbit_s(result)
            if client.state is RunState.SUCCEEDED and final is not None:
                self.final_throughput_mbit_s = final
            else:
                # a stopped or failed client's "result" (0 Mbit/s, or a partial one) is no
                # measurement of the link: judge the intervals that did arrive, and say so
                self.unfinished_note = f" ({client.state.value} early: mean of {len(self.throughput_values)} intervals)"
            self._update_verdicts()
            self._set_buttons(start=True, stop=False)
            level = "good" if client.state is RunState.SUCCEEDED else "bad"
            self._message(f"client run #{client.id} {client.state.value}: {client.message or ''}", level)

            def finish() -> None:
                finish_pair(pair, self._data_dir())

            self.run_worker(finish, thread=True, group="net-finish")

    def _show_state_line(self, selector: str, text: str) -> None:
        """Update a state line only when its text changed (this runs 4 times a second)."""
        if self._state_lines.get(selector) != text:
            self._state_lines[selector] = text
            self.query_one(selector, Static).update(text)

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
            latency = (
                f"; mean latency {sum(self.latency_values) / len(self.latency_values):.3f} ms"
                if self.latency_values
                else ""
            )
            self._set_verdict(
                interconnect,
                Verdict("warning", f"interconnect: {self.mode_of_pair} measures latency, not throughput{latency}"),
            )
            self._set_verdict(
                dataguard, Verdict("warning", "Data Guard: run a SYNC or stream test for a bandwidth verdict")
            )
            return
        if measured is None:
            self._set_verdict(interconnect, Verdict("", "interconnect: no measurement yet"))
        elif self.mode_of_pair == "UDP":
            # what arrives is capped by the target bitrate: judging it against 1/10 GbE would
            # call a 10 GbE link "below 10 GbE"
            self._set_verdict(
                interconnect,
                Verdict(
                    "warning",
                    f"interconnect: UDP received {format_rate(measured)} at a "
                    f"{IPERF3_UDP_BITRATE}bit/s target rate (a loss check, not the link's "
                    "capacity); run TCP for the 1/10 GbE verdict",
                ),
            )
        else:
            verdict = interconnect_verdict(measured)
            self._set_verdict(
                interconnect, Verdict(verdict.level, f"interconnect: {verdict.text}{self.unfinished_note}")
            )
        redo = self.redo_mb_s()
        if self.mode_of_pair == "UDP" and measured is not None:
            self._set_verdict(
                dataguard,
                Verdict("warning", "Data Guard: redo transport is TCP: run a TCP test for the bandwidth verdict"),
            )
        elif redo is None:
            self._set_verdict(dataguard, Verdict("", "Data Guard: give a redo rate (MB/s)"))
        elif measured is None:
            self._set_verdict(dataguard, Verdict("", f"Data Guard: redo {redo:g} MB/s; waiting for a measurement"))
        else:
            verdict = dataguard_verdict(redo, measured)
            self._set_verdict(dataguard, Verdict(verdict.level, f"Data Guard: {verdict.text}{self.unfinished_note}"))

    @staticmethod
    def _set_verdict(widget: Static, verdict: Verdict) -> None:
        widget.update(verdict.text)
        widget.set_classes(["net-verdict"] + ([f"verdict-{verdict.level}"] if verdict.level else []))

    def _message(self, text: str, level: str) -> None:
        widget = self.query_one("#net-message", Static)
        widget.update(text)
        widget.set_classes([f"verdict-{level}"] if level else [])


__all__ = ["NetworkPanel", "pair_configs", "available_tools", "format_rate"]
