"""New run: every tool racperf knows (its own and other packages', by their ``racperf.tools``
entry points), each with its summary, and a fio sweep; choosing one opens its form.

Dismisses with the tool's name, or None when cancelled. :func:`form_for` gives the form,
generated from the tool's description (its options and presets), the same for every tool.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from racperf_tui.tools import tool_modules
from racperf_tui.ui.runs_data import description_of
from racperf_tui.ui.screen_base import RacperfModalScreen
from racperf_tui.ui.screens.sweep_form import SweepForm
from racperf_tui.ui.screens.tool_form import ToolForm

#: the picker's choice that is not a tool: a fio sweep (screens/sweep_form.py)
SWEEP_CHOICE = "sweep:fio"


def form_for(tool: str, data_dir: Any) -> Screen[Any]:
    """The New-run form of ``tool`` (or of a fio sweep: :data:`SWEEP_CHOICE`)."""
    if tool == SWEEP_CHOICE:
        return SweepForm(data_dir)
    return ToolForm(tool, data_dir)


class ToolPicker(RacperfModalScreen[str | None]):
    """The tools, one line each (name, summary); enter picks one, escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", tooltip="Close; nothing is started")]

    def compose(self) -> ComposeResult:
        options = []
        for name in tool_modules():  # racperf's own first (fio), then other packages'
            summary = description_of(name).summary
            options.append(Option(Text.assemble((name, "bold"), ("  " + summary) if summary else ""), id=name))
            if name == "fio":
                sweep = "fio's load walked up point by point to the knee (a curve, one run per point)"
                options.append(Option(Text.assemble(("fio sweep", "bold"), "  " + sweep), id=SWEEP_CHOICE))
        with Vertical(id="tool-picker"):
            yield Label(" [b]New run[/b]: pick a tool (enter), esc cancel", id="picker-title")
            yield OptionList(*options, id="picker-tools")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
