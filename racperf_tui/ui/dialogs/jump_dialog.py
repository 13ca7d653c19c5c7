"""Jump to a time: the playback's question (a replay, an archive). A modal screen of its
own, so what is typed goes to its field and no key of the playback below is taken."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from racperf_tui.ui.screen_base import RacperfModalScreen


class JumpDialog(RacperfModalScreen[None]):
    """Asks for a time; ``jump(text)`` moves the playback and returns '' or why it could not
    (said under the field, which keeps what was typed)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, jump: Callable[[str], str], hint: str) -> None:
        super().__init__()
        self.jump = jump
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="jump-dialog"):
            yield Static("Jump to", classes="jump-title")
            yield Input(placeholder=self.hint, id="jump-time")
            yield Static("", id="jump-error", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        problem = self.jump(event.value)
        if problem:
            self.query_one("#jump-error", Static).update(problem)
            return
        self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
