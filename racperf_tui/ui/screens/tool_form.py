"""The form of any tool, generated from its options (core.tool.ToolOption): a field per option
(a tick box, a choice, or text), its default filled in, each field checked as typed by the
option's own conversion and then by the tool's own validation, the exact command line
previewed, and Launch through the write guard (an override typed per refused device).

Dismisses with the new run's id, or None when cancelled.
"""

from __future__ import annotations

import re
import shlex
import shutil
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import DescendantFocus
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from racperf_tui.core.tool import ROLE_OPTION, ToolOption
from racperf_tui.orchestration.run_plan import install_hint
from racperf_tui.tools import load_tool, tool_description
from racperf_tui.ui.run_actions import judge_then_launch
from racperf_tui.ui.widgets.device_suggester import DeviceSuggester
from racperf_tui.ui.widgets.tick_box import TickBox


def option_text(value: Any) -> str:
    """A default as it goes in a text field."""
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


class ToolForm(ModalScreen[Any]):
    """Fields from the tool's options, live validation, live command preview, Launch."""

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
        self.options: tuple[ToolOption, ...] = tuple(self.description.options)
        #: what the last check found: {option name or "": message}, and the config it built
        self.errors: dict[str, str] = {}
        self.config: dict[str, Any] = {}

    # ---- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical(id="tool-form"):
            yield Label(f" [b]New {self.tool} run[/b]  (ctrl+l launch, esc cancel)", id="form-title")
            if self.description.summary:
                yield Static(self.description.summary, id="form-summary", markup=False)
            with VerticalScroll(id="form-fields"):
                for option in self.options:
                    with Horizontal(classes="form-row", id=f"row-{option.name}"):
                        yield Label(option.name, classes="form-label")
                        yield self._field(option)
                        yield Label("", classes="form-error", id=f"error-{option.name}")
            yield Static("", id="form-help", markup=False)
            yield Static("", id="form-general-error", markup=False)
            yield Static("", id="preview", markup=False)
            with Horizontal(id="form-buttons"):
                yield Button("Launch", id="launch", variant="success", compact=True)
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
            # several paths in one field (ORION's LUNs): the devices racperf sees are suggested
            suggester = DeviceSuggester() if option.kind == "path" and option.repeatable else None
            field = Input(
                option_text(option.default), placeholder=option.help, compact=True, id=field_id, suggester=suggester
            )
        field.tooltip = option.describe()
        return field

    def on_mount(self) -> None:
        self.query_one("#form-fields", VerticalScroll).can_focus = False
        self._show_ends()
        self.revalidate()
        first = next(iter(self.query(".form-row Input, .form-row Select, .form-row Checkbox")), None)
        if first is not None:
            first.focus()

    # ---- fields -> config --------------------------------------------------------------------
    def _applies(self, option: ToolOption) -> bool:
        """Does this option matter for the end the role field names? (all of them without one)"""
        if self.description.option(ROLE_OPTION) is None:
            return True
        role = self.query_one(f"#field-{ROLE_OPTION}").value  # type: ignore[attr-defined]
        return role is Select.NULL or self.description.applies(option, {ROLE_OPTION: role})

    def _show_ends(self) -> None:
        """A two-ended tool's fields for the other end are hidden."""
        for option in self.options:
            self.query_one(f"#row-{option.name}").display = self._applies(option)

    def field_config(self) -> tuple[dict[str, Any], dict[str, str]]:
        """(config, {option: message}) from the fields: each converted by its option; only what
        differs from the option's default goes in the config (the tool's default stands), as
        with ``racperf run TOOL --set``."""
        config: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for option in self.options:
            if not self._applies(option):
                continue
            raw = self.query_one(f"#field-{option.name}").value  # type: ignore[attr-defined]
            if raw is Select.NULL:
                continue
            if isinstance(raw, str) and not raw.strip() and option.kind != "str":
                continue  # an empty field: the tool's default
            try:
                value = option.convert(raw)
            except ValueError as error:
                errors[option.name] = str(error)
                continue
            if option.kind == "list" and isinstance(value, list) and not isinstance(option.default, list):
                value = [v for v in value if v != ""]
            if option.repeatable and isinstance(value, str):  # one field, several values (ORION's LUNs)
                value = shlex.split(value)
            if value != option.default and not (value == "" and option.default in (None, "")):
                config[option.name] = value
        return config, errors

    def revalidate(self) -> None:
        """Convert the fields; then the tool's own check and the preview, off the event loop
        (a tool may ask its program what it can do)."""
        config, errors = self.field_config()
        self.config = config
        if errors:
            self._show(errors, "(no preview: fix the fields marked in red)")
            return
        self.check_with_tool(dict(config))

    @work(thread=True, exclusive=True, group="tool-form-check")
    def check_with_tool(self, config: dict[str, Any]) -> None:
        try:
            argv = preview_argv(self.module, config)
        except (ValueError, TypeError) as error:
            self.app.call_from_thread(
                self._show, self._by_field(str(error)), "(no preview: fix the fields marked in red)"
            )
            return
        except Exception as error:  # a tool's bug must not take the form down
            self.app.call_from_thread(self._show, {"": f"{self.tool}: {error}"}, "(no preview)")
            return
        preview = "$ " + shlex.join(argv)
        if argv and shutil.which(argv[0]) is None:
            hint = install_hint(self.module)
            preview += f"\n{argv[0]} is not installed" + (f": {hint}" if hint else "")
        self.app.call_from_thread(self._show, {}, preview)

    def _by_field(self, message: str) -> dict[str, str]:
        """A message of the tool's validation, under the field it names (else the form's)."""
        for option in self.options:
            if re.search(rf"(?<![\w-]){re.escape(option.name)}(?![\w-])", message):
                return {option.name: message}
        return {"": message}

    def _show(self, errors: dict[str, str], preview: str) -> None:
        if not self.is_mounted:
            return
        self.errors = errors
        for option in self.options:
            message = errors.get(option.name, "")
            for prefix in (f"{self.tool}: ", f"{option.name}: "):
                message = message[len(prefix) :] if message.startswith(prefix) else message
            self.query_one(f"#error-{option.name}", Label).update(message)
            self.query_one(f"#field-{option.name}").set_class(option.name in errors, "-invalid")
        self.query_one("#form-general-error", Static).update(errors.get("", ""))
        self.query_one("#preview", Static).update(preview)
        self.query_one("#launch", Button).disabled = bool(errors)

    # ---- events ------------------------------------------------------------------------------
    def on_descendant_focus(self, event: DescendantFocus) -> None:
        """The focused field's help under the fields."""
        name = (event.widget.id or "").removeprefix("field-")
        option = self.description.option(name)
        if option is not None:
            self.query_one("#form-help", Static).update(option.describe())

    def on_input_changed(self, event: Input.Changed) -> None:
        self.revalidate()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self.revalidate()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == f"field-{ROLE_OPTION}":
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
        config, errors = self.field_config()
        if errors or self.errors:
            self.notify("fix the fields marked in red first", severity="error")
            return
        self.plan_and_launch(config)

    @work(exclusive=True, group="launch")
    async def plan_and_launch(self, config: dict[str, Any]) -> None:
        """The guard judges the run off the event loop; each refused device needs its name
        typed; then the run starts and the form closes with its id."""
        launch = self.query_one("#launch", Button)
        general = self.query_one("#form-general-error", Static)
        launch.disabled = True
        general.update("checking the run with the write guard...")
        run_id = await judge_then_launch(self.app, self.module, self.tool, config, self.data_dir, general)
        if run_id is None:
            launch.disabled = False
            return
        self.dismiss(run_id)
