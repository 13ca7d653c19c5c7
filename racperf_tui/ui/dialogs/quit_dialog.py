"""Modal questions: quitting with runs still running, and stopping one run."""

from __future__ import annotations

from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from racperf_tui.ui.screen_base import RacperfModalScreen

QuitChoice = Literal["stop", "leave", "cancel"]


class QuitDialog(RacperfModalScreen[QuitChoice]):
    """Quit with runs running: stop them, leave them running (they keep recording), or cancel."""

    BINDINGS = [
        Binding("escape", "choose('cancel')", "Cancel"),
        Binding("s", "choose('stop')", "Stop runs"),
        Binding("l", "choose('leave')", "Leave running"),
    ]

    def __init__(self, running: list[str]) -> None:
        super().__init__()
        self.running = running

    def compose(self) -> ComposeResult:
        count = len(self.running)
        listing = ", ".join(self.running[:6]) + (" ..." if count > 6 else "")
        with Vertical():
            yield Static(f"[b]{count} run{'s' if count != 1 else ''} still running[/b]: {listing}")
            yield Static(
                "Runs left running go on to their end and keep recording; racperf started again shows them live."
            )
            # the keys are in the labels: the footer underneath shows the screen below's keys
            # (its 's' is "Stop run" there, "Stop runs" here)
            with Horizontal():
                yield Button("Stop runs (s)", id="stop", variant="error")
                yield Button("Leave running (l)", id="leave", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)  # type: ignore[arg-type]

    def action_choose(self, choice: QuitChoice) -> None:
        self.dismiss(choice)


class ConfirmDialog(RacperfModalScreen[bool]):
    """A yes/no question (e.g. "stop run 12?"); y / enter confirm, n / escape refuse."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes_label: str = "Yes") -> None:
        super().__init__()
        self.question = question
        self.yes_label = yes_label

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            with Horizontal():
                yield Button(f"{self.yes_label} (y)", id="yes", variant="error")
                yield Button("No (n)", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
