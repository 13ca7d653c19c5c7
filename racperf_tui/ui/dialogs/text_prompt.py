"""A one-line question: a run's label or note, the criteria file, the runs filter.

Enter answers with the text (a ``check`` may refuse it: its message shows under the field and
the dialog stays), escape cancels (None). An empty answer is an answer: it clears.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from racperf_tui.ui.screen_base import RacperfModalScreen
from racperf_tui.ui.shown import markup


class TextPrompt(RacperfModalScreen[str | None]):
    """Ask for one line of text; ``check(text)`` returns why it cannot be one, or None."""

    DEFAULT_CSS = """
    TextPrompt {
        align: center middle;
    }
    TextPrompt > Vertical {
        width: 76;
        max-width: 100%;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    TextPrompt #prompt-error {
        color: $error;
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", tooltip="Close without changing anything")]

    def __init__(
        self,
        question: str,
        value: str = "",
        *,
        hint: str = "enter: save   escape: cancel   an empty field clears it",
        placeholder: str = "",
        check: Callable[[str], str | None] | None = None,
    ) -> None:
        super().__init__()
        self.question = question
        self.value = value
        self.hint = hint
        self.placeholder = placeholder
        self.check = check

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(markup(self.question), id="prompt-question")
            yield Input(self.value, placeholder=self.placeholder, id="prompt-input")
            yield Static("", id="prompt-error")
            yield Static(self.hint, id="prompt-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        problem = self.check(event.value) if self.check is not None else None
        if problem:
            self.query_one("#prompt-error", Static).update(markup(problem))
            return
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
