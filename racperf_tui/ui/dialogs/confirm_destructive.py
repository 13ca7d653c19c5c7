"""The write guard's refusal, shown reason by reason, with an override by typing the device name."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static

from racperf_tui.core.guard.safety import SafetyVerdict, override_matches
from racperf_tui.ui.screen_base import RacperfModalScreen
from racperf_tui.ui.shown import markup


class ConfirmDestructive(RacperfModalScreen[bool]):
    """Dismisses with True only when the typed text names the refused device (override_matches)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    # declared, not queried in on_mount: a query there met a screen whose children were gone
    # (NoMatches under load, once in a few hundred runs)
    AUTO_FOCUS = "#override-name"

    def __init__(self, verdict: SafetyVerdict) -> None:
        super().__init__()
        self.verdict = verdict

    @property
    def device_name(self) -> str:
        """What the user has to type (the kernel name when known, else the path given)."""
        return self.verdict.kernel_name or self.verdict.target

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"[b]Writing to {markup(self.verdict.target)} can destroy data.[/b] racperf refuses because:")
            with VerticalScroll(id="reasons"):
                for reason in self.verdict.reasons or ["(no reason given)"]:
                    yield Static(f"- {reason}", classes="reason", markup=False)
            yield Label(f"To write anyway, type the device name ([b]{markup(self.device_name)}[/b]):")
            yield Input(placeholder=self.device_name, id="override-name")
            yield Static("", id="override-error")
            with Horizontal():
                yield Button("Destroy and run", id="override", variant="error")
                yield Button("Cancel", id="cancel", variant="primary")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._try_override(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "override":
            self._try_override(self.query_one("#override-name", Input).value)
        else:
            self.dismiss(False)

    def _try_override(self, typed: str) -> None:
        if override_matches(self.verdict, typed):
            self.dismiss(True)
            return
        shown = typed.strip() or "nothing"
        self.query_one("#override-error", Static).update(
            f"{markup(shown)} is not {markup(self.device_name)}; nothing was written."
        )

    def action_cancel(self) -> None:
        self.dismiss(False)
