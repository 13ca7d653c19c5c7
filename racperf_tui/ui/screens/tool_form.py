"""The New-run form of every tool, generated from its description (core.tool.ToolDescription):
its presets first (a menu that fills the fields), a field per option (a tick box, a choice,
or text; a target field suggests the devices racperf sees), its default filled in, each field
checked as typed by the option's own conversion and the tool's own ``problems``, then by its
plan off the event loop, the command line previewed, and Launch through the write guard (an
override typed per refused device).

With a cluster file, tools other than the two-ended ones (the Network tab pairs those) get a
``nodes`` field: this host, one node, several (a run group) or ``all``. Launch then shows each
node's write guard verdict (orchestration/run_groups.judge_nodes, what ``racperf run --nodes``
does) before anything starts.

Dismisses with the new run's id, ``gN`` for a run group, or None when cancelled.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantFocus
from textual.suggester import SuggestFromList
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from racperf_tui.core.contract.tool import ROLE_OPTION, Preset, ToolOption
from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.remote.cluster import LOCAL, Cluster, ClusterFileError, Node, load_cluster, nodes_in_words
from racperf_tui.orchestration.remembered import remember_for_run
from racperf_tui.orchestration.run_groups import GroupRefused, NodeVerdict, judge_nodes, launch_group
from racperf_tui.orchestration.run_plan import install_hint
from racperf_tui.orchestration.runs import launch_run
from racperf_tui.tools import load_tool, tool_description
from racperf_tui.ui.run_actions import judge_then_launch
from racperf_tui.ui.screen_base import RacperfModalScreen
from racperf_tui.ui.widgets.device_suggester import DeviceSuggester
from racperf_tui.ui.widgets.tick_box import TickBox

NO_PREVIEW = "(no preview: fix the fields marked in red)"
#: the nodes field's key in the form's errors (no tool option has a name with "@")
NODES_KEY = "@nodes"


def option_text(value: Any) -> str:
    """A value as it goes in a text field (a list as shell words)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return shlex.join(str(v) for v in value)
    return str(value)


def preview_argv(module: Any, config: dict[str, Any]) -> list[str]:
    """The command line the tool plans for ``config`` (its ``invocation``, else its
    ``build_argv``); ValueError from the tool's own validation."""
    tool = module.TOOL
    planner = getattr(tool, "invocation", None)
    if callable(planner):
        return list(planner(config, None).argv)
    return list(tool.build_argv(config))


def in_form_words(message: str, options: dict[str, ToolOption]) -> str:
    """A tool's message as a form user reads it: ``--set KEY=VALUE`` (the headless way to
    give an option) becomes the field that gives it."""

    def field_words(match: re.Match[str]) -> str:
        option = options.get(match.group(1))
        if option is None or not option.in_form:
            return match.group(0)
        return f"in the {option.name} field, e.g. {match.group(2)}" if match.group(2) else f"in the {option.name} field"

    text = re.sub(r"(?:with |by )?--set ([\w-]+)=(\S*)", field_words, message)
    for option in options.values():
        if option.repeatable and f"in the {option.name} field" in text:
            text = text.replace(" (repeatable)", " (several: separated by spaces)")
    return text


class ToolForm(RacperfModalScreen[Any]):
    """Presets, fields from the tool's options, live validation, live command preview, Launch."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", tooltip="Close the form; nothing is started"),
        Binding("ctrl+l", "launch", "Launch", tooltip="Check the run with the write guard, then start it"),
    ]

    def __init__(self, tool: str, data_dir: Any = None) -> None:
        super().__init__()
        self.tool = tool
        self.data_dir = data_dir
        self.module = load_tool(tool)
        self.description = tool_description(tool)
        #: the options with a field (the others are ``--set`` only)
        self.options: tuple[ToolOption, ...] = tuple(o for o in self.description.options if o.in_form)
        self.presets: tuple[Preset, ...] = tuple(self.description.presets)
        available = getattr(self.module.TOOL, "available", None)
        #: why the tool cannot run here ("" when it can, or when it cannot tell before planning)
        self.missing = ""
        if callable(available) and not available():
            hint = install_hint(self.module)
            self.missing = f"{tool} is not installed (not found in PATH)" + (
                f". Install it with: {hint}" if hint else ""
            )
        #: what the last check found: {option name or "": message}, and the config it built
        self.errors: dict[str, str] = {}
        self.config: dict[str, Any] = {}
        #: which check a plan's answer belongs to (a later edit makes an earlier answer stale)
        self._checks = 0
        #: the cluster file's nodes, for the nodes field (None: no field; this host only)
        self.cluster: Cluster | None = None
        self.cluster_problem = ""

    def _read_cluster(self) -> None:
        """The nodes field is offered with a cluster file, to a tool run on one node at a time
        (a two-ended tool's ends are placed by the Network tab)."""
        path = getattr(self.app, "cluster_file", None)
        if path is None or self.description.option(ROLE_OPTION) is not None:
            return
        try:
            self.cluster = load_cluster(path, required=True)
        except ClusterFileError as error:
            self.cluster_problem = f"nodes: {error}"

    # ---- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical(id="tool-form"):
            yield Label(f" [b]New {self.tool} run[/b]  (ctrl+l launch, esc cancel)", id="form-title")
            if self.description.summary:
                yield Static(self.description.summary, id="form-summary", markup=False)
            if self.missing:
                yield Static(self.missing, id="tool-missing", markup=False)
            if self.presets:
                with Horizontal(classes="form-row", id="row-preset"):
                    yield Label("preset", classes="form-label")
                    yield Select(
                        [(p.label or p.name, p.name) for p in self.presets],
                        value=self.presets[0].name,
                        allow_blank=False,
                        compact=True,
                        id="preset",
                    )
            self._read_cluster()
            if self.cluster is not None:
                with Horizontal(classes="form-row", id="row-nodes"):
                    yield Label("nodes", classes="form-label")
                    yield Input(
                        "this host",
                        placeholder="this host, a node, several (rac1,rac2: a run group) or all",
                        compact=True,
                        id="form-nodes",
                        suggester=SuggestFromList(["this host", "all", *self.cluster.names()]),
                        tooltip="where it runs: this host, a node of the cluster file, several at once "
                        "(names separated by commas: a run group) or all",
                    )
                    yield Label("", classes="form-error", id="error-nodes")
            with VerticalScroll(id="form-fields"):
                for option in self.options:
                    with Horizontal(classes="form-row", id=f"row-{option.name}"):
                        yield Label(option.name, classes="form-label")
                        yield self._field(option)
                        yield Label("", classes="form-error", id=f"error-{option.name}")
            yield Static("", id="form-help", markup=False)
            yield Static("", id="form-general-error", markup=False)
            yield Static(self.cluster_problem, id="form-node-verdicts", markup=False)
            yield Static("", id="preview", markup=False)
            with Horizontal(id="form-buttons"):
                yield Button("Launch", id="launch", variant="success", compact=True, disabled=bool(self.missing))
                yield Button("Cancel", id="cancel", compact=True)

    def _field(self, option: ToolOption) -> Any:
        field_id = f"field-{option.name}"
        if option.kind == "bool":
            field: Any = TickBox("", value=bool(option.default), compact=True, id=field_id)
        elif option.kind == "choice" and option.choices:
            default = option.default if option.default in option.choices else option.choices[0]
            field = Select(
                [(c, c) for c in option.choices], value=default, allow_blank=False, compact=True, id=field_id
            )
        else:
            # a path the tool reads or writes (ORION's LUNs: several): the devices racperf sees
            suggester = (
                DeviceSuggester() if option.kind == "target" or (option.kind == "path" and option.repeatable) else None
            )
            field = Input(
                option_text(option.default), placeholder=option.help, compact=True, id=field_id, suggester=suggester
            )
        field.tooltip = option.describe()
        return field

    def on_mount(self) -> None:
        self.query_one("#form-fields", VerticalScroll).can_focus = False
        # app.tcss gives the labels 17 cells; a tool with longer option names (netperf's
        # remote_sockbuf_bytes) gets a column that holds them, so no name wraps
        longest = max((len(o.name) for o in self.options), default=0) + 1
        labels = list(self.query(".form-label"))
        styled = labels[0].styles.width if labels else None
        if labels and longest > (styled.value if styled is not None else 0):
            for label in labels:
                label.styles.width = longest
        if self.presets:
            self.fill_from_preset(self.presets[0].name)
        self._show_ends()
        self.revalidate()
        first = next(iter(self.query("#form-fields Input, #form-fields Select, #form-fields Checkbox")), None)
        if first is not None:
            first.focus()

    # ---- presets -----------------------------------------------------------------------------
    def preset(self) -> Preset | None:
        """The chosen preset (None for a tool without presets)."""
        if not self.presets:
            return None
        name = self.query_one("#preset", Select).value
        return self.description.preset(str(name)) if name is not Select.NULL else None

    def fill_from_preset(self, name: str) -> None:
        """Every field to the preset's value, else its option's default; a target the preset
        does not name keeps what was typed. Fields the preset's runs do not read are disabled."""
        preset = self.description.preset(name)
        if preset is None:
            return
        for option in self.options:
            widget: Any = self.query_one(f"#field-{option.name}")
            if option.name in preset.values:
                value = preset.values[option.name]
            elif option.kind == "target":
                value = widget.value
            else:
                value = option.default
            if option.kind == "bool":
                widget.value = bool(value)
            elif isinstance(widget, Select):
                if value not in option.choices:
                    widget.set_options([(c, c) for c in (*option.choices, str(value))])
                widget.value = str(value)
            else:
                widget.value = option_text(value)
            widget.disabled = not preset.applies(option.name)

    # ---- fields -> config --------------------------------------------------------------------
    def _applies(self, option: ToolOption) -> bool:
        """Does this option matter for the end the role field names and for the preset?"""
        preset = self.preset()
        if preset is not None and not preset.applies(option.name):
            return False
        if self.description.option(ROLE_OPTION) is None:
            return True
        role = self.query_one(f"#field-{ROLE_OPTION}").value  # type: ignore[attr-defined]
        return role is Select.NULL or self.description.applies(option, {ROLE_OPTION: role})

    def _show_ends(self) -> None:
        """A two-ended tool's fields for the other end are hidden."""
        if self.description.option(ROLE_OPTION) is None:
            return
        role = self.query_one(f"#field-{ROLE_OPTION}").value  # type: ignore[attr-defined]
        for option in self.options:
            shown = role is Select.NULL or self.description.applies(option, {ROLE_OPTION: role})
            self.query_one(f"#row-{option.name}").display = shown

    def field_config(self) -> tuple[dict[str, Any], dict[str, str]]:
        """(config, {option: message}) from the preset and the fields: the preset's values of
        options without a field, then each field converted by its option; only what differs
        from the option's default goes in the config (the tool's default stands), as with
        ``racperf run TOOL --set``. A cleared field whose option has a default is "" (the
        user took the value away: the tool, else the form, says what it needs)."""
        config: dict[str, Any] = {}
        errors: dict[str, str] = {}
        preset = self.preset()
        if preset is not None:
            fielded = {o.name for o in self.options}
            config.update({k: v for k, v in preset.values.items() if k not in fielded})
        for option in self.options:
            if not self._applies(option):
                continue
            raw = self.query_one(f"#field-{option.name}").value  # type: ignore[attr-defined]
            if raw is Select.NULL:
                continue
            if isinstance(raw, str) and not raw.strip() and option.kind != "str":
                if option.default not in (None, "", [], ()):
                    config[option.name] = ""
                continue  # an empty field: the tool's default
            try:
                if option.kind == "list" or (option.repeatable and isinstance(raw, str)):
                    value: Any = shlex.split(raw)  # shell words, as option_text shows them
                else:
                    value = option.convert(raw)
            except ValueError as error:
                said = str(error)
                errors[option.name] = said if said.startswith(f"{option.name}: ") else f"{option.name}: {said}"
                continue
            if value != option.default and not (value == "" and option.default in (None, "")):
                config[option.name] = value
        return config, errors

    def revalidate(self) -> None:
        """Convert the fields and ask the tool's ``problems`` (at once); then plan, for its own
        check and the preview, off the event loop (a tool may ask its program)."""
        self._checks += 1
        config, errors = self.field_config()
        self.config = config
        try:
            problems = self.description.problems(config)
        except Exception as error:  # a tool's bug must not take the form down
            problems = [f"{self.tool}: {error}"]
        for problem in problems:
            for name, message in self._by_field(problem).items():
                errors[name] = f"{errors[name]}; {message}" if name in errors else message
        for name, value in config.items():
            option = self.description.option(name)
            # a cleared number, choice or path the tool did not name; "" is a str's value
            if value == "" and option is not None and option.kind != "str" and name not in errors:
                errors[name] = f"empty: needs a value (default {option_text(option.default)})"
        _nodes, nodes_problem = self.chosen_nodes()
        if nodes_problem:
            errors[NODES_KEY] = nodes_problem
        try:
            line = self.description.command_line(config)
        except Exception:
            line = None
        preview = f"$ {line}" if line else NO_PREVIEW
        if errors:
            # a field refused is not in the line above (its default is): said under it, so the
            # preview never shows a wrong value unflagged (issue 21: --size=/dev/loop4)
            flagged = [message for name, message in errors.items() if name and name != NODES_KEY]
            # first: the preview's height is capped (4 lines) and fio's line alone fills it at 80
            said = "".join(f"✗ {message} (not in the command below)\n" for message in flagged)
            self._show(errors, said + preview)
            return
        if line:
            self._show({}, preview)  # the plan's answer may add to it
        self.check_with_tool(dict(config), line, self._checks)

    @work(thread=True, exclusive=True, group="tool-form-check")
    def check_with_tool(self, config: dict[str, Any], line: str | None, check: int) -> None:
        preview = f"$ {line}" if line else NO_PREVIEW
        try:
            argv = preview_argv(self.module, config)
        except (ValueError, TypeError) as error:
            self.app.call_from_thread(self._answer, check, self._by_field(str(error)), preview)
            return
        except Exception as error:  # a tool's bug, or its program missing: not the form's end
            self.app.call_from_thread(self._answer, check, {"": f"{self.tool}: {error}"}, preview)
            return
        preview = f"$ {line}" if line else "$ " + shlex.join(argv)
        if argv and shutil.which(argv[0]) is None:
            hint = install_hint(self.module)
            preview += f"\n{argv[0]} is not installed" + (f": {hint}" if hint else "")
        self.app.call_from_thread(self._answer, check, {}, preview)

    def _answer(self, check: int, errors: dict[str, str], preview: str) -> None:
        if check == self._checks:  # else the fields changed since: a newer check is on its way
            self._show(errors, preview)

    def _by_field(self, message: str) -> dict[str, str]:
        """A message of the tool's validation, under the field it names (the one it begins
        with, else the first it mentions; else the form's)."""
        head = message.removeprefix(f"{self.tool}: ")
        for option in self.options:
            if re.match(rf"{re.escape(option.name)}(?![\w-])", head):
                return {option.name: message}
        for option in self.options:
            if re.search(rf"(?<![\w-]){re.escape(option.name)}(?![\w-])", message):
                return {option.name: message}
        return {"": message}

    def _show(self, errors: dict[str, str], preview: str) -> None:
        if not self.is_mounted:
            return
        self.errors = errors
        named = {o.name: o for o in self.description.options}
        for option in self.options:
            message = errors.get(option.name, "")
            for prefix in (f"{self.tool}: ", f"{option.name}: "):
                message = message[len(prefix) :] if message.startswith(prefix) else message
            if message.startswith("'' is not "):  # a cleared field, in the tool's words
                message = "empty: needs " + message[len("'' is not ") :]
            self.query_one(f"#error-{option.name}", Label).update(in_form_words(message, named))
            self.query_one(f"#field-{option.name}").set_class(option.name in errors, "-invalid")
        if self.cluster is not None:
            self.query_one("#error-nodes", Label).update(errors.get(NODES_KEY, ""))
            self.query_one("#form-nodes", Input).set_class(NODES_KEY in errors, "-invalid")
        self.query_one("#form-general-error", Static).update(in_form_words(errors.get("", ""), named))
        self.query_one("#preview", Static).update(preview)
        self.query_one("#launch", Button).disabled = bool(errors) or bool(self.missing)

    # ---- events ------------------------------------------------------------------------------
    def on_descendant_focus(self, event: DescendantFocus) -> None:
        """The focused field's help under the fields."""
        if event.widget.id == "form-nodes":  # not a tool option: its tooltip says what it takes
            self.query_one("#form-help", Static).update(f"nodes: {event.widget.tooltip}")
            return
        name = (event.widget.id or "").removeprefix("field-")
        option = self.description.option(name)
        if option is not None:
            self.query_one("#form-help", Static).update(option.describe())

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "form-nodes":
            self.query_one("#form-node-verdicts", Static).update("")  # said of other nodes
        self.revalidate()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self.revalidate()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "preset":
            if event.value is not Select.NULL:
                self.fill_from_preset(str(event.value))
        elif event.select.id == f"field-{ROLE_OPTION}":
            self._show_ends()
        self.revalidate()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "launch":
            self.action_launch()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    # ---- launch ------------------------------------------------------------------------------
    def action_launch(self) -> None:
        if self.missing:
            self.notify(self.missing, severity="error", timeout=10)
            return
        self.revalidate()
        config, errors = self.field_config()
        if errors or self.errors:
            self.notify("fix the fields marked in red first", severity="error")
            return
        nodes, _problem = self.chosen_nodes()
        if len(nodes) == 1 and nodes[0].is_local:
            self.plan_and_launch(config, self._target())
        else:
            self.launch_on_nodes(config, self._target(), nodes)

    def chosen_nodes(self) -> tuple[list[Node], str]:
        """The nodes the nodes field names, or why it names none (this host without a field)."""
        if self.cluster is None:
            return [LOCAL], ""
        try:
            return nodes_in_words(self.cluster, self.query_one("#form-nodes", Input).value), ""
        except ClusterFileError as error:
            return [], str(error)

    def _target(self) -> str | None:
        """What the runs list shows as the run's target: the one target field's value."""
        targets = [o for o in self.options if o.kind == "target" and not o.repeatable and self._applies(o)]
        if len(targets) != 1:
            return None
        value = str(self.query_one(f"#field-{targets[0].name}", Input).value).strip()
        return value or None

    @work(exclusive=True, group="launch")
    async def plan_and_launch(self, config: dict[str, Any], target: str | None) -> None:
        """The guard judges the run off the event loop; each refused device needs its name
        typed; then the run starts and the form closes with its id."""
        launch = self.query_one("#launch", Button)
        general = self.query_one("#form-general-error", Static)
        launch.disabled = True
        general.update("checking the run with the write guard...")
        try:
            remember_for_run(self.tool, config, resolve_data_dir(self.data_dir))
        except (ValueError, OSError) as error:  # a corrupt settings file: named
            general.update(f"{self.tool}: {error}")
            launch.disabled = False
            return
        run_id = await judge_then_launch(
            self.app, self.module, self.tool, config, self.data_dir, general, target=target
        )
        if run_id is None:
            launch.disabled = False
            return
        self.dismiss(run_id)

    @work(exclusive=True, group="launch")
    async def launch_on_nodes(self, config: dict[str, Any], target: str | None, nodes: list[Node]) -> None:
        """Each node's write guard verdict, shown before anything starts (judged on every node
        at once, as `racperf run --nodes` does); a refusal on any node starts nothing; a node
        out of reach is left out of a group and the others start."""
        launch = self.query_one("#launch", Button)
        general = self.query_one("#form-general-error", Static)
        verdict_lines = self.query_one("#form-node-verdicts", Static)
        launch.disabled = True
        names = ", ".join(node.name for node in nodes)
        general.update(f"checking the run on {names} with each node's write guard...")
        verdict_lines.update("")
        verdicts = await asyncio.to_thread(judge_nodes, self.tool, config, nodes)
        verdict_lines.update("\n".join(verdict.text for verdict in verdicts.values()))
        refused = [verdict.node for verdict in verdicts.values() if verdict.refuses]
        cleared = [verdict.node for verdict in verdicts.values() if verdict.cleared]
        if refused or not cleared:
            general.update(
                f"not started: refused on {', '.join(refused)}" if refused else "not started: no node could be reached"
            )
            launch.disabled = False
            return
        general.update(f"starting on {', '.join(cleared)}...")
        try:
            started = await asyncio.to_thread(self._start_on, config, target, nodes, verdicts)
        except (GroupRefused, ValueError, KeyError, OSError, RuntimeError) as error:
            general.update(f"launch failed: {error.args[0] if isinstance(error, KeyError) and error.args else error}")
            launch.disabled = False
            return
        self.dismiss(started)

    def _start_on(
        self, config: dict[str, Any], target: str | None, nodes: list[Node], verdicts: dict[str, NodeVerdict]
    ) -> int | str:
        """Worker thread: one node's run (its id), else a run group (``gN``)."""
        data_dir = resolve_data_dir(self.data_dir)
        if len(nodes) == 1:
            return launch_run(self.tool, dict(config), data_dir=data_dir, target=target, node=nodes[0])
        started = launch_group(self.tool, config, nodes, data_dir=data_dir, target=target, verdicts=verdicts)
        return f"g{started.group_id}"
