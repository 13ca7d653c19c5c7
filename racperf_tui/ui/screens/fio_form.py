"""The new-fio-run form: a preset fills the fields, every field is validated as typed, the
exact fio command line is previewed, and Launch goes through the write guard.

Dismisses with the new run's id, or None when cancelled.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import stat
from collections.abc import Mapping
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from racperf_tui.tools import load_tool
from racperf_tui.ui.run_actions import judge_then_launch
from racperf_tui.ui.widgets.tick_box import TickBox

#: (config field, label, kind); kind "bool" is a checkbox, "rw" a select, else a text input
FORM_FIELDS: list[tuple[str, str, str]] = [
    ("target", "target", "text"),
    ("size", "size", "text"),
    ("runtime_s", "runtime (s)", "text"),
    ("time_based", "time_based", "bool"),
    ("ramp_time_s", "ramp_time (s)", "text"),
    ("bs", "bs", "text"),
    ("rw", "rw", "rw"),
    ("rwmixread", "rwmixread %", "text"),
    ("ioengine", "ioengine", "text"),
    ("iodepth", "iodepth", "text"),
    ("numjobs", "numjobs", "text"),
    ("direct", "direct", "bool"),
    ("group_reporting", "group_reporting", "bool"),
    ("extra_args", "extra args", "text"),
    ("job_file", "job file", "text"),
]

#: the fields a custom preset uses (the command line is fio + these)
CUSTOM_FIELDS = ("extra_args", "job_file")

RW_CHOICES = ["read", "write", "randread", "randwrite", "rw", "randrw", "readwrite", "trim", "randtrim", "trimwrite"]
#: workloads that write (or trim) the target: they go through the write guard
WRITING_RW = {"write", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite"}

FIO_INSTALL_HINT = (
    "fio is not installed (not found in PATH). Install it with: apt-get install fio / dnf install fio / yum install fio"
)


def fio_module() -> Any:
    """The fio tool module, loaded when the form opens: the form must open even if it fails
    to import (KeyError then says why)."""
    return load_tool("fio")


def preset_items(fio: Any) -> list[tuple[str, Any]]:
    """(description, editable config copy) for every preset, in menu order."""
    descriptions = getattr(fio, "PRESET_DESCRIPTIONS", {})
    return [(descriptions.get(name, name), fio.preset_config(name)) for name in fio.PRESETS]


def config_values(config: Any) -> dict[str, Any]:
    """The form-relevant values of a config (a dataclass or a mapping)."""
    if dataclasses.is_dataclass(config):
        values = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    else:
        values = dict(config)
    return values


def to_text(value: Any) -> str:
    """A config value as it goes in a text input (lists of extra args joined by spaces)."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return shlex.join(str(v) for v in value)
    return str(value)


def validation_by_field(problems: Any) -> dict[str, str]:
    """FioConfig.validate()'s answer as {field: message} (it may be a dict or a list)."""
    if not problems:
        return {}
    if isinstance(problems, Mapping):
        return {str(k): "; ".join(v) if isinstance(v, (list, tuple)) else str(v) for k, v in problems.items()}
    by_field: dict[str, str] = {}
    for problem in problems:
        if isinstance(problem, (tuple, list)) and len(problem) == 2:
            name, message = problem
        else:
            name = getattr(problem, "field", None) or ""
            message = getattr(problem, "message", None) or str(problem)
            if not name:
                head = str(problem).split(":", 1)[0].strip()
                name = head if head in {f for f, _, _ in FORM_FIELDS} else ""
        key = str(name)
        by_field[key] = f"{by_field[key]}; {message}" if key in by_field else str(message)
    return by_field


def is_block_device(path: str) -> bool:
    """True when ``path`` (symlinks followed) is a block device node."""
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


class FioForm(ModalScreen[Any]):
    """Preset picker, fields with live validation, live command preview, Launch."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+l", "launch", "Launch"),
    ]

    def __init__(self, data_dir: Any = None) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.fio_path = shutil.which("fio")
        self.fio: Any = None
        self.import_error = ""
        try:
            self.fio = fio_module()
            self.presets = preset_items(self.fio)
        except Exception as error:  # a broken tool module must not take the dashboard down
            self.import_error = f"the fio tool module failed to load: {error}"
            self.presets = []
        self.config: Any = None
        self.errors: dict[str, str] = {}
        self._filling = False

    # ---- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(" [b]New fio run[/b]  (ctrl+l launch, esc cancel)")
            if self.fio_path is None:
                yield Static(FIO_INSTALL_HINT, id="fio-missing")
            with Horizontal(classes="form-row"):
                yield Label("preset", classes="form-label")
                yield Select(
                    [(name, i) for i, (name, _) in enumerate(self.presets)],
                    value=0 if self.presets else Select.NULL,
                    allow_blank=not self.presets,
                    compact=True,
                    id="preset",
                )
            with VerticalScroll(id="form-fields"):
                for name, label, kind in FORM_FIELDS:
                    with Horizontal(classes="form-row", id=f"row-{name}"):
                        yield Label(label, classes="form-label")
                        if kind == "bool":
                            yield TickBox("", compact=True, id=f"field-{name}")
                        elif kind == "rw":
                            yield Select(
                                [(c, c) for c in RW_CHOICES], allow_blank=False, compact=True, id=f"field-{name}"
                            )
                        else:
                            yield Input(compact=True, id=f"field-{name}")
                        yield Label("", classes="form-error", id=f"error-{name}")
            yield Static("", id="form-general-error")
            yield Static("", id="preview", markup=False)
            with Horizontal(id="form-buttons"):
                yield Button("Launch", id="launch", variant="success", compact=True, disabled=self.fio_path is None)
                yield Button("Cancel", id="cancel", compact=True)

    def on_mount(self) -> None:
        if self.import_error:
            self.query_one("#form-general-error", Static).update(self.import_error)
            self.query_one("#launch", Button).disabled = True
            return
        if self.presets:
            self.fill_from_preset(0)
        # the fields' scroll area is no stop of its own on tab / shift+tab (it took one
        # invisible stop between the preset and the target); focused fields scroll into view
        self.query_one("#form-fields", VerticalScroll).can_focus = False
        self.query_one("#field-target", Input).focus()

    # ---- preset -> fields -> config -----------------------------------------------------------
    def fill_from_preset(self, index: int) -> None:
        """Put a preset's values in every field (the target keeps what the user typed)."""
        _, preset = self.presets[index]
        values = config_values(preset)
        typed_target = self.query_one("#field-target", Input).value if self.config is not None else ""
        self._filling = True
        try:
            for name, _label, kind in FORM_FIELDS:
                if name not in values:
                    continue
                widget = self.query_one(f"#field-{name}")
                value = values[name]
                if kind == "bool":
                    widget.value = bool(value)  # type: ignore[attr-defined]
                elif kind == "rw":
                    if value not in RW_CHOICES:
                        widget.set_options([(c, c) for c in [*RW_CHOICES, str(value)]])  # type: ignore[attr-defined]
                    widget.value = str(value)  # type: ignore[attr-defined]
                elif name == "target" and typed_target:
                    continue
                else:
                    widget.value = to_text(value)  # type: ignore[attr-defined]
        finally:
            self._filling = False
        custom = bool(values.get("custom"))
        for name, _label, _kind in FORM_FIELDS:
            # custom mode runs only the extra args / job file: the other fields do nothing
            self.query_one(f"#field-{name}").disabled = custom and name not in CUSTOM_FIELDS
        self.revalidate()

    def field_values(self) -> dict[str, Any]:
        """What the fields hold, converted to the types of the preset's fields."""
        index = self.query_one("#preset", Select).value
        base = self.presets[index][1] if isinstance(index, int) and self.presets else None
        base_values = config_values(base) if base is not None else {}
        values: dict[str, Any] = {}
        for name, _label, kind in FORM_FIELDS:
            widget = self.query_one(f"#field-{name}")
            raw = widget.value  # type: ignore[attr-defined]
            if kind == "bool":
                values[name] = bool(raw)
                continue
            text = "" if raw is Select.NULL else str(raw).strip()
            values[name] = _convert(text, base_values.get(name))
        return values

    def build_config(self) -> Any:
        """A config from the preset with the fields' values; ValueError/TypeError if it cannot."""
        index = self.query_one("#preset", Select).value
        base = self.presets[index][1] if isinstance(index, int) and self.presets else None
        values = self.field_values()
        if dataclasses.is_dataclass(base) and not isinstance(base, type):
            known = {f.name for f in dataclasses.fields(base)}
            return dataclasses.replace(base, **{k: v for k, v in values.items() if k in known})
        return self.fio.FioConfig(**values)

    def revalidate(self) -> None:
        """Validate the fields, show each field's message, refresh the preview."""
        if self.fio is None:
            return  # the tool module did not load; the form says so and cannot launch
        general = self.query_one("#form-general-error", Static)
        preview = self.query_one("#preview", Static)
        try:
            config = self.build_config()
        except (TypeError, ValueError) as error:
            self.config = None
            self._show_errors({"": str(error)})
            preview.update("(no preview: fix the fields above)")
            return
        self.config = config
        try:
            errors = validation_by_field(config.validate())
        except Exception as error:
            errors = {"": str(error)}
        self._show_errors(errors)
        try:
            preview.update(self._preview_text(config))
        except Exception as error:
            preview.update(f"(no preview: {error})")
        general.refresh()

    def _preview_text(self, config: Any) -> str:
        preview = config.command_preview()
        if not isinstance(preview, str):
            preview = shlex.join(str(a) for a in preview)
        return "$ " + preview

    def _show_errors(self, errors: dict[str, str]) -> None:
        self.errors = errors
        field_names = {name for name, _, _ in FORM_FIELDS}
        for name in field_names:
            message = errors.get(name, "")
            if message.startswith(f"{name}: "):  # the row already names the field
                message = message[len(name) + 2 :]
            if message.startswith("'' is not "):  # an empty field
                message = "empty: needs " + message[len("'' is not ") :]
            self.query_one(f"#error-{name}", Label).update(message)
            self.query_one(f"#field-{name}").set_class(name in errors, "-invalid")
        general = [f"{k}: {v}" if k else v for k, v in errors.items() if k not in field_names]
        self.query_one("#form-general-error", Static).update("\n".join(general))
        launch = self.query_one("#launch", Button)
        launch.disabled = bool(errors) or self.fio_path is None

    # ---- events ------------------------------------------------------------------------------
    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "preset":
            if isinstance(event.value, int):
                self.fill_from_preset(event.value)
        elif not self._filling:
            self.revalidate()

    def on_input_changed(self, event: Input.Changed) -> None:
        if not self._filling:
            self.revalidate()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        if not self._filling:
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
        """Validate, then plan with fio and pass the write guard (asking for an override of
        each refused device), then launch."""
        if self.fio_path is None:
            self.notify(FIO_INSTALL_HINT, severity="error", timeout=10)
            return
        self.revalidate()
        if self.config is None or self.errors:
            self.notify("fix the fields marked in red first", severity="error")
            return
        target = "" if getattr(self.config, "custom", False) else str(getattr(self.config, "target", "") or "")
        self.plan_and_launch(config_dict(self.config), target)

    @work(exclusive=True, group="launch")
    async def plan_and_launch(self, values: dict[str, Any], target: str) -> None:
        """fio resolves the job and the guard judges it off the UI thread (it runs fio); each
        refused device needs its name typed; then the run starts and the form closes."""
        launch = self.query_one("#launch", Button)
        general = self.query_one("#form-general-error", Static)
        launch.disabled = True
        general.update("checking the job with fio and the write guard...")
        run_id = await judge_then_launch(self.app, self.fio, "fio", values, self.data_dir, general, target=target)
        if run_id is None:
            launch.disabled = False
            return
        self.dismiss(run_id)


def config_dict(config: Any) -> dict[str, Any]:
    """A config as a JSON-ready dict (its own to_dict when it has one)."""
    to_dict = getattr(config, "to_dict", None)
    if callable(to_dict):
        return dict(to_dict())
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return dataclasses.asdict(config)
    return dict(config)


def _convert(text: str, like: Any) -> Any:
    """A field's text as the type of the preset's value for it (int, float, list, str, None)."""
    if text == "":
        if isinstance(like, (list, tuple)):
            return type(like)()
        # a cleared number field stays "" (not None): validate() then says what it needs
        # instead of "None is not a whole number"
        return "" if isinstance(like, (str, int, float)) and not isinstance(like, bool) else None
    if isinstance(like, bool):
        return text.lower() in ("1", "true", "yes", "on")
    if isinstance(like, int):
        try:
            return int(text)
        except ValueError:
            return text  # validate() says what is wrong with it
    if isinstance(like, float):
        try:
            return float(text)
        except ValueError:
            return text
    if isinstance(like, (list, tuple)):
        try:
            return type(like)(shlex.split(text))
        except ValueError:
            return type(like)(text.split())
    return text
