"""The network panel: start a server/client pair of any two-ended tool (probe, iperf3, and
oratcptest / netperf when their modules are present), watch both ends, the live throughput
and latency sparklines, and a verdict against the guidance (RAC interconnect 1 GbE / 10 GbE;
Data Guard bandwidth for a given redo rate).

No tool is named here: the tools are those whose module has a ``PAIR`` with modes
(core.tool.PairSpec); the Mode field lists its modes, each panel field goes to the option
of each end its PairSpec names (a field neither end takes is disabled), the program and
runtime fields are its ProgramFields, and the figures are the description's metrics that
measure a throughput or a latency (``MetricSpec.quantity``), in their declared units.

Each end runs on a node: the Server node and Client node pickers list this machine and the
cluster file's nodes; picking a server node puts its interconnect address (``Node.address``)
in the server address field. With nodes named rac1 and rac2 the seed's scenario, "rac2 ->
rac1 over rac1's interconnect", is a preset. A node is first reached from here, in the
launch's worker: an unknown host key is shown for the user to accept
(ui/dialogs/host_key_dialog.py) before anything runs. Port 0 is a port free where the server
runs, picked there by launch_pair as for ``racperf pair``.

The pair's live part (both ends' state lines, the sparklines, the verdicts) is a
:class:`~racperf_tui.ui.widgets.pair_live_display.PairLiveDisplay`, which a recorded pair's
replay (screens/pair_replay_view.py) draws through too.

Both ends are ordinary recorded runs (:mod:`racperf_tui.orchestration.pair_runs` over
:mod:`racperf_tui.orchestration.runs`): the server run starts first, the client run once the
server said it is ready. The store watcher (ui/store_watcher.py) reads both runs and the
client's samples off the event loop; the runs go on if the UI goes away.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from racperf_tui.core import settings
from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.contract.tool import ROLE_OPTION, PairMode, PairSpec, ToolDescription
from racperf_tui.core.net_guidance import IntervalRate, format_rate
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import (
    LOCAL,
    LOCAL_NODE,
    Cluster,
    ClusterFileError,
    Node,
    load_cluster,
    server_address,
    this_host,
)
from racperf_tui.core.store import RunRecord
from racperf_tui.orchestration.pair_runs import PairRuns, finish_pair, launch_pair, pair_spec, stop_pair
from racperf_tui.tools import tool_modules
from racperf_tui.ui.dialogs.host_key_dialog import trust_host_key
from racperf_tui.ui.messages import PairSnapshot, PairUpdate
from racperf_tui.ui.runs_data import description_of
from racperf_tui.ui.screens.matrix_view import MatrixView
from racperf_tui.ui.shown import plain
from racperf_tui.ui.store_watcher import store_watcher
from racperf_tui.ui.widgets.pair_live_display import PairLiveDisplay
from racperf_tui.ui.widgets.tick_box import TickBox

#: panel field -> its widget's id
FIELD_IDS = {
    "host": "#net-host",
    "port": "#net-port",
    "duration_s": "#net-duration",
    "interval_s": "#net-interval",
    "length": "#net-length",
    "connections": "#net-connections",
    "write": "#net-write",
}
#: the fields a tool may not take (the others every pair tool has)
OPTIONAL_FIELDS = ("length", "connections", "write")


def pair_tools() -> dict[str, PairSpec]:
    """The two-ended tools whose modules import here and declare the panel's modes, by name (a
    missing or broken one is left out of the list, not fatal)."""
    tools = {}
    for name in tool_modules():
        try:
            spec = pair_spec(name)
        except Exception:
            continue
        if spec.modes:
            tools[name] = spec
    return tools


def available_tools() -> list[str]:
    return list(pair_tools())


def pair_configs(tool: str, form: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The panel's form -> (server config, client config) for ``tool``.

    ``form`` keys: host, port, duration_s, interval_s, mode, length (bytes or None),
    connections, write, and optionally program and runtime (the tool's ProgramFields). Each
    value goes to the option of each end the tool's PairSpec names, converted to the option's
    kind (a whole number of seconds for a tool that takes only those, at least 1).
    """
    try:
        spec = pair_spec(tool)
    except Exception:
        raise ValueError(f"unknown network tool {tool!r}") from None
    if not spec.modes:
        raise ValueError(f"unknown network tool {tool!r}")
    description = description_of(tool)
    mode = spec.mode(str(form["mode"]))
    server_cfg = _end_config(description, spec.server_fields, form, mode, "server")
    client_cfg = _end_config(description, spec.client_fields, form, mode, "client")
    client_cfg.update(mode.client)
    for program, key in ((spec.program, "program"), (spec.runtime, "runtime")):
        path = str(form.get(key) or "").strip()
        if program is None or not path:
            continue  # blank leaves the tool's own search (PATH, settings)
        for config in (server_cfg, client_cfg):  # both ends run the same program
            for option, file_name in program.options:
                config[option] = str(Path(path).expanduser() / file_name) if file_name else path
    return server_cfg, client_cfg


def _end_config(
    description: ToolDescription, fields: Mapping[str, str], form: Mapping[str, Any], mode: PairMode, end: str
) -> dict[str, Any]:
    """One end's config from the fields its tool maps to its options."""
    config: dict[str, Any] = {}
    for field_name, option_name in fields.items():
        value = form.get(field_name)
        if field_name in mode.unused_fields or value is None or value == "":
            continue
        if field_name == "connections":
            value = int(value or 1)
        option = description.option(option_name)
        kind = option.kind if option is not None else "str"
        if kind in ("int", "count") and isinstance(value, float):
            value = max(1, round(value))
        elif kind == "str" and not isinstance(value, str):
            value = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
        elif kind == "bool":
            value = bool(value)
        config[option_name] = value
    return config


#: the preset's value in the Preset field: nothing picked
NO_PRESET = "-"
#: the seed scenario: netperf from rac2 to rac1 over rac1's private interconnect (rac1-priv)
SEED_PRESET = ("rac1", "rac2")


def node_presets(cluster: Cluster) -> dict[str, tuple[str, str]]:
    """Preset label -> (server node, client node): the seed's "rac2 -> rac1" (over rac1's
    interconnect address, which picking it puts in the server address) when the cluster file
    names both nodes. Labels are short: the field has 14 columns at 80."""
    names = cluster.names()
    server, client = SEED_PRESET
    if server in names and client in names:
        return {f"{client} -> {server}": (server, client)}
    return {}


class NetworkPanel(Vertical):
    """Pair launcher, both ends' state, live sparklines and the guidance verdicts."""

    HELP_TITLE = "Network"

    # In a text field (port, duration...) digits and q are typed: the app's 1 2 3 and q are
    # not made priority bindings, which would make a port of 1521 untypeable. Esc leaves the
    # field instead (shown in the footer while in one), and ctrl+q quits from anywhere.
    BINDINGS = [
        Binding("ctrl+l", "start_pair", "Start pair", tooltip="Start the server / client pair"),
        Binding("ctrl+t", "stop_pair", "Stop pair", tooltip="Stop the pair (both ends)"),
        Binding("ctrl+o", "open_matrix", "Matrix", tooltip="The interconnect matrix of every node (its own view)"),
        Binding(
            "escape", "leave_field", "Leave field", tooltip="Leave the text field: then 1 2 3 switch tabs and q quits"
        ),
    ]

    def __init__(
        self, data_dir: str | None = None, poll_interval_s: float = 0.25, cluster_file: str | Path | None = None
    ) -> None:
        """``cluster_file``: the nodes the pickers offer (None: this machine only)."""
        super().__init__()
        self.data_dir = data_dir
        self.cluster_file = cluster_file
        #: the cluster file's nodes (read in a worker once mounted)
        self.cluster = Cluster()
        self.presets: dict[str, tuple[str, str]] = {}
        self.poll_interval_s = poll_interval_s
        #: the two-ended tools, their PairSpecs
        self.specs = pair_tools()
        self.tools = list(self.specs)
        self.pair: Any = None  # PairRuns of the pair on screen
        self.after_seq = 0
        #: both ends' state, the sparklines and the verdicts of the pair on screen
        self.pair_display = PairLiveDisplay(redo_rate=self.redo_mb_s)
        self._finishing = False
        #: a pair's launch is under way (its worker): Start says so rather than starting another
        self._launching = False
        #: both ends finished and shown: the poll has nothing left to read
        self._settled = False
        #: the pair on screen is the last recorded one (shown at start, not launched here)
        self._recorded = False

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        # compact widgets and labels of <= 15 characters: the whole panel, verdicts included,
        # fits an 80x24 terminal (a DBA's default SSH window)
        with Horizontal(classes="net-row"):
            yield self._field(
                "Tool",
                Select(
                    [(t, t) for t in self.tools],
                    value=self.tools[0] if self.tools else Select.NULL,
                    allow_blank=not self.tools,
                    compact=True,
                    id="net-tool",
                ),
            )
            yield self._field("Server address", Input("127.0.0.1", compact=True, id="net-host"))
            yield self._field("Port (0: free)", Input("0", compact=True, id="net-port", type="integer"))
            yield self._field("Duration s", Input("10", compact=True, id="net-duration", type="number"))
            yield self._field("Interval s", Input("1", compact=True, id="net-interval", type="number"))
        with Horizontal(classes="net-row"):
            yield self._field(
                "Mode",
                Select(
                    self._mode_options(self.tools[0] if self.tools else ""),
                    allow_blank=False,
                    compact=True,
                    id="net-mode",
                ),
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
            # label, placeholder and value set per tool (_show_program_fields)
            yield self._field("Program", Input("", compact=True, id="net-program"))
            yield self._field("Runtime", Input("", compact=True, id="net-runtime"))
            # the nodes of the cluster file, once read (hidden without one)
            local = [("this host", LOCAL_NODE)]
            yield self._field(
                "Server node", Select(local, value=LOCAL_NODE, allow_blank=False, compact=True, id="net-server-node")
            )
            yield self._field(
                "Client node", Select(local, value=LOCAL_NODE, allow_blank=False, compact=True, id="net-client-node")
            )
            yield self._field(
                "Preset",
                Select([(NO_PRESET, NO_PRESET)], value=NO_PRESET, allow_blank=False, compact=True, id="net-preset"),
            )
        with Horizontal(id="net-buttons"):
            yield Button("Start pair", id="net-start", variant="primary", compact=True)
            yield Button("Stop", id="net-stop", disabled=True, compact=True)
            yield Static("", id="net-message")
        yield self.pair_display

    @staticmethod
    def _field(label: str, widget: Any) -> Vertical:
        """A labelled field, ``#<widget id>-field`` (its width is set in CSS)."""
        return Vertical(Label(label), widget, classes="net-field", id=f"{widget.id}-field")

    def _mode_options(self, tool: str) -> list[tuple[str, str]]:
        spec = self.specs.get(tool)
        return [(m.name, m.name) for m in spec.modes] if spec is not None else [("-", "-")]

    def _spec(self, tool: str) -> PairSpec:
        return self.specs[tool]

    def on_mount(self) -> None:
        for widget_id in ("#net-server-node", "#net-client-node", "#net-preset"):
            self.query_one(f"{widget_id}-field").display = False
        if not self.tools:
            self._message("no two-ended tool is installed (probe, iperf3...)", "bad")
            self.query_one("#net-start", Button).disabled = True
            return
        self._show_program_fields(self.tools[0])
        if self.cluster_file is not None:
            self.run_worker(self._read_cluster, thread=True, group="net-cluster")
        # no reads of the store here: the watcher finds a pair an earlier racperf left running
        store_watcher(self.app, self.data_dir).unfinished_runs(self, self._reattach)

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
        """Label, placeholder and remembered value of the program and runtime fields the tool
        asks for (disabled when it asks for none); the fields no end of it takes, disabled."""
        spec = self._spec(tool)
        for widget_id, program in (("#net-program", spec.program), ("#net-runtime", spec.runtime)):
            field = self.query_one(f"{widget_id}-field", Vertical)
            field.query_one(Label).update(
                program.label if program else ("Program" if widget_id == "#net-program" else "Runtime")
            )
            widget = self.query_one(widget_id, Input)
            widget.placeholder = program.placeholder if program else "not needed"
            widget.value = ""
            widget.disabled = program is None
        for name in OPTIONAL_FIELDS:
            taken = name in spec.client_fields or name in spec.server_fields
            self.query_one(FIELD_IDS[name]).disabled = not taken
        if spec.program is not None or spec.runtime is not None:
            # the settings file is read in a worker: a slow or hung data dir (NFS) never
            # stalls the screen
            self.run_worker(
                lambda: self._read_program_settings(tool), thread=True, exclusive=True, group="net-settings"
            )

    def _read_program_settings(self, tool: str) -> None:
        """Worker thread: the remembered program / runtime paths of ``tool``."""
        spec = self._spec(tool)
        values = {
            widget_id: self._setting(program.setting)
            for widget_id, program in (("#net-program", spec.program), ("#net-runtime", spec.runtime))
            if program is not None
        }
        self.app.call_from_thread(self._show_program_settings, tool, values)

    def _show_program_settings(self, tool: str, values: Mapping[str, str]) -> None:
        if str(self.query_one("#net-tool", Select).value) != tool:
            return  # another tool was picked meanwhile: its own read fills the fields
        for widget_id, value in values.items():
            widget = self.query_one(widget_id, Input)
            if not widget.value:  # what the user typed meanwhile stays
                widget.value = value

    # ------------------------------------------------------------------ nodes
    def _read_cluster(self) -> None:
        """Worker thread: the cluster file's nodes for the pickers."""
        try:
            cluster = load_cluster(self.cluster_file, required=True)
        except ClusterFileError as exc:
            self.app.call_from_thread(self._message, f"nodes: {exc}", "bad")
            return
        self.app.call_from_thread(self._show_nodes, cluster)

    def _show_nodes(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.presets = node_presets(cluster)
        # this host and its own name in the cluster file are one choice (its node, if any)
        here = this_host(cluster)
        label = "this host" if here is LOCAL else f"this host ({plain(here.name)})"
        nodes = [(label, LOCAL_NODE)] + [(plain(n.name), n.name) for n in cluster.nodes if not n.is_local]
        for widget_id in ("#net-server-node", "#net-client-node"):
            picker = self.query_one(widget_id, Select)
            picker.set_options(nodes)
            picker.value = LOCAL_NODE
            self.query_one(f"{widget_id}-field").display = len(nodes) > 1
        preset = self.query_one("#net-preset", Select)
        preset.set_options([(NO_PRESET, NO_PRESET)] + [(plain(label), label) for label in self.presets])
        preset.value = NO_PRESET
        self.query_one("#net-preset-field").display = bool(self.presets)

    def node(self, name: object) -> Node:
        if name in (LOCAL_NODE, Select.NULL, None):
            return this_host(self.cluster)
        return self.cluster.node(str(name))

    @on(Select.Changed, "#net-server-node")
    @on(Select.Changed, "#net-client-node")
    def _node_changed(self, event: Select.Changed) -> None:
        """The server's address as the client's node reaches it (cluster.server_address, as
        `racperf pair` chooses it): the server node's interconnect address; this host's is
        the one it routes to the client's node from, loopback only when both ends are here."""
        if event.value is Select.NULL:
            return
        self._show_server_address()

    def _show_server_address(self) -> str:
        server = self.node(self.query_one("#net-server-node", Select).value)
        client = self.node(self.query_one("#net-client-node", Select).value)
        try:
            address = server_address(server, client)
        except ValueError as exc:
            self._message(str(exc), "bad")
            return ""
        self.query_one("#net-host", Input).value = address
        return address

    @on(Select.Changed, "#net-preset")
    def _preset_changed(self, event: Select.Changed) -> None:
        ends = self.presets.get(str(event.value))
        if ends is None:
            return
        server, client = ends
        self.query_one("#net-server-node", Select).value = server
        self.query_one("#net-client-node", Select).value = client
        address = self._show_server_address() or self.node(server).address
        self._message(f"preset: client on {client}, server on {server}, over {address} ({server}'s interconnect)", "")

    def _remember_programs(self, form: Mapping[str, Any]) -> None:
        """Configured once: the program (and runtime) paths typed in are kept in the data dir."""
        spec = self._spec(form["tool"])
        try:
            for program, key in ((spec.program, "program"), (spec.runtime, "runtime")):
                if program is not None:
                    settings.set(program.setting, form.get(key) or None, data_dir=self._data_dir())
        except (OSError, ValueError) as exc:  # the run can go on without remembering
            self.app.call_from_thread(self.notify, f"cannot remember the program path: {exc}", severity="warning")

    def _reattach(self, unfinished: list[RunRecord]) -> None:
        """A pair still running from an earlier racperf (runs outlive the UI): show it."""
        if self.pair is not None:
            return
        clients = [r for r in unfinished if self._is_pair_client(r)]
        if not clients:
            # nothing running: the last recorded pair's measurement, not "no measurement yet"
            store_watcher(self.app, self.data_dir).recent_runs(self, self._show_recorded)
            return
        client = clients[-1]
        self.pair = PairRuns(client.tool, int(client.config["peer_run_id"]), client.id, client.config.get("port"))
        self.pair_tool = client.tool
        self.mode_of_pair = self.specs[client.tool].mode_of(client.config, description_of(client.tool))
        self._watch_pair(self.pair)
        self._set_buttons(start=False, stop=True)
        self._message(
            f"{client.tool} pair from an earlier session (runs #{self.pair.server_run_id} and #{client.id}), live",
            "good",
        )

    def _show_recorded(self, runs: list[RunRecord]) -> None:
        """The newest finished pair of the store (runs: newest first), shown as it ended."""
        if self.pair is not None or self._launching:
            return
        client = next((r for r in runs if self._is_pair_client(r) and r.state.finished), None)
        if client is None:
            return
        self.pair = PairRuns(client.tool, int(client.config["peer_run_id"]), client.id, client.config.get("port"))
        self.pair_tool = client.tool
        self.mode_of_pair = self.specs[client.tool].mode_of(client.config, description_of(client.tool))
        self._recorded = True
        self._watch_pair(self.pair)

    def _is_pair_client(self, run: RunRecord) -> bool:
        return (
            run.tool in self.specs and run.config.get(ROLE_OPTION) == "client" and bool(run.config.get("peer_run_id"))
        )

    def _watch_pair(self, pair: PairRuns) -> None:
        self._settled = False
        self.pair_display.watch_pair(pair.tool, self.mode_of_pair)
        watcher = store_watcher(self.app, self.data_dir)
        watcher.unwatch(self)
        watcher.watch_pair(self, pair.server_run_id, pair.client_run_id, self.poll_interval_s)

    def on_unmount(self) -> None:
        store_watcher(self.app, self.data_dir).unwatch(self)

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
        self.pair_display.update_verdicts()

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
            "runtime": self.query_one("#net-runtime", Input).value.strip(),
            "server_node": self.node(self.query_one("#net-server-node", Select).value),
            "client_node": self.node(self.query_one("#net-client-node", Select).value),
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
        if self.pair is not None and not self._finishing and not self._recorded:
            self._message("a pair is running: stop it first", "warning")
            return
        if self._launching:
            self._message("the pair is starting: wait for it", "warning")
            return
        try:
            form = self.read_form()
        except ValueError as exc:
            self._message(str(exc), "bad")
            return
        self._reset_live()
        self.mode_of_pair, self.pair_tool = form["mode"], form["tool"]
        # Start stays enabled (and focused) while the pair starts: a disabled focused button
        # hands the focus to the next field, and a tab key typed then went into it (issue 21:
        # "2" made the Redo rate 50 -> 502 and the Data Guard verdict changed unseen)
        self._launching = True
        # ctrl+l pressed in a text field: the focus leaves it for Start, or the digits typed
        # next (meant for the tabs) went into the field (Redo 50 -> 50223, seen in tmux)
        if isinstance(self.app.focused, Input):
            self.query_one("#net-start", Button).focus()
        server_node = form["server_node"]
        on = f" (node {plain(server_node.name)})" if not server_node.is_local else ""
        self._message(f"starting the {form['tool']} server on {plain(form['host'])}{on}...", "")
        self.run_worker(lambda: self._launch(form), thread=True, exclusive=True, group="net-launch")

    def _launch(self, form: dict[str, Any]) -> None:
        """Worker thread: launch the pair; report back on the UI thread."""
        tool = form["tool"]
        self._remember_programs(form)
        server_node, client_node = form["server_node"], form["client_node"]
        try:
            # each node reached here first: an unknown host key is the user's to accept (a
            # dialog), before anything runs; the detached supervisors then find it on record
            for node in dict.fromkeys((server_node, client_node)):
                if not node.is_local:
                    trust_host_key(self.app, node.ssh_target(), node.name)
            # port 0: launch_pair has a free one picked on the server's node (as racperf pair)
            server_cfg, client_cfg = pair_configs(tool, form)
            pair = launch_pair(
                tool,
                server_cfg,
                client_cfg,
                data_dir=self._data_dir(),
                server_node=server_node,
                client_node=client_node,
            )
        except Exception as exc:  # every failure is shown, none crashes the UI
            text = str(exc)
            # the tools' own errors mostly name the tool already ("oratcptest: the path of...")
            self.app.call_from_thread(self._launch_failed, text if text.startswith(f"{tool}:") else f"{tool}: {text}")
            return
        self.app.call_from_thread(self._pair_started, pair)

    def _launch_failed(self, message: str) -> None:
        self._launching = False
        self._set_buttons(start=True, stop=False)
        self._message(message, "bad")

    def _pair_started(self, pair: Any) -> None:
        self._launching = False
        self.pair = pair
        self._finishing = False
        self._watch_pair(pair)
        self._set_buttons(start=False, stop=True)
        # what launch_pair adapted (notes) or found worth knowing (warnings: e.g. a database
        # listener's port) is said here, not only recorded
        said = [*getattr(pair, "warnings", ()), *getattr(pair, "notes", ())]
        self._message(
            f"{pair.tool} pair running on port {pair.port} (runs #{pair.server_run_id} "
            f"and #{pair.client_run_id})" + "".join(f"; {text}" for text in said),
            "warning" if getattr(pair, "warnings", ()) else "good",
        )

    def action_open_matrix(self) -> None:
        self.app.push_screen(MatrixView(self.data_dir, self.cluster_file))

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

    def _reset_live(self) -> None:
        self.pair = None
        self._recorded = False
        self.after_seq = 0
        # the last pair's ends ("run #1 probe succeeded") are no state of the pair starting now
        self.pair_display.reset()

    def on_pair_update(self, message: PairUpdate) -> None:
        """The watcher's latest state of the pair: new client samples -> sparklines; both
        runs' states -> the state lines; the client's end -> the final verdict."""
        pair, snapshot = self.pair, message.pair
        if pair is None or self._settled or snapshot.client.id != pair.client_run_id:
            return
        self.pair_display.show_pair(snapshot)
        server, client = snapshot.server, snapshot.client
        self._settled = server.state.finished and client.state.finished and self._finishing
        if client.state.finished and not self._finishing:
            self._finish(pair, snapshot)
            self._settled = server.state.finished

    def _finish(self, pair: PairRuns, snapshot: PairSnapshot) -> None:
        client = snapshot.client
        self._finishing = True
        self.pair_display.judge_end(snapshot)
        self._set_buttons(start=True, stop=False)
        level = "good" if client.state is RunState.SUCCEEDED else "bad"
        if self._recorded:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(client.started_at))
            self._message(
                f"last recorded {pair.tool} pair (runs #{pair.server_run_id} and #{client.id}, {when}): "
                f"client {client.state.value}",
                level,
            )
            return  # its ends were finished by the session that ran it
        self._message(f"client run #{client.id} {client.state.value}: {client.message or ''}", level)

        def finish() -> None:
            finish_pair(pair, self._data_dir())

        self.run_worker(finish, thread=True, group="net-finish")

    # the pair's live figures are the display's (tests and the screenshots read them here)
    @property
    def pair_tool(self) -> str:
        return self.pair_display.pair_tool

    @pair_tool.setter
    def pair_tool(self, tool: str) -> None:
        self.pair_display.pair_tool = tool

    @property
    def mode_of_pair(self) -> str:
        return self.pair_display.mode_of_pair

    @mode_of_pair.setter
    def mode_of_pair(self, mode: str) -> None:
        self.pair_display.mode_of_pair = mode

    @property
    def pair_description(self) -> ToolDescription:
        return self.pair_display.pair_description

    @pair_description.setter
    def pair_description(self, description: ToolDescription) -> None:
        self.pair_display.pair_description = description

    @property
    def throughput_intervals(self) -> list[IntervalRate]:
        return self.pair_display.throughput_intervals

    @property
    def latency_values(self) -> list[float]:
        return self.pair_display.latency_values

    @property
    def final_throughput_mbit_s(self) -> float | None:
        return self.pair_display.final_throughput_mbit_s

    @property
    def path_said(self) -> dict[str, Any]:
        return self.pair_display.path_said

    def add_sample(self, sample: Sample) -> None:
        """One client sample into the sparklines (and the running verdict)."""
        self.pair_display.add_sample(sample)

    def measured_mbit_s(self) -> float | None:
        """The final figure once the client finished, else the mean of the live samples."""
        return self.pair_display.measured_mbit_s()

    def _message(self, text: str, level: str) -> None:
        widget = self.query_one("#net-message", Static)
        widget.update(text)
        widget.set_classes([f"verdict-{level}"] if level else [])


__all__ = ["NetworkPanel", "pair_configs", "available_tools", "format_rate"]
