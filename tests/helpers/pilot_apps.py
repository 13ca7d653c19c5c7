"""The small apps the Pilot tests drive, and the wait they all use.

``RunsApp``: the Runs panel alone, with the app's layout and the dashboard's quit (it asks about
runs still running; the Disks panel is not what these tests look at). ``ScreenApp``: one screen
pushed over an empty app (a form, a live view opened directly). ``wait_until``: lets the app
run until a condition holds, and fails naming what it waited for.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from racperf_tui.ui.app import APP_CSS_PATH
from racperf_tui.ui.dialogs.confirm_destructive import ConfirmDestructive
from racperf_tui.ui.run_actions import ask_before_quit
from racperf_tui.ui.tabs.runs_panel import RunsPanel


class RunsApp(App[None]):
    CSS_PATH = APP_CSS_PATH

    BINDINGS = [("q", "quit", "Quit")]

    def __init__(self, data_dir: Path) -> None:
        super().__init__()
        self.data_dir = data_dir

    def compose(self) -> ComposeResult:
        yield RunsPanel(data_dir=str(self.data_dir))
        yield Footer()

    async def action_quit(self) -> None:
        await ask_before_quit(self, self.data_dir)


class ScreenApp(App[None]):
    CSS_PATH = APP_CSS_PATH

    def __init__(self, make_screen: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self.make_screen = make_screen

    def compose(self) -> ComposeResult:
        yield Footer()

    def on_mount(self) -> None:
        self.push_screen(self.make_screen())


async def wait_until(pilot: Any, predicate: Callable[[], object], timeout_s: float, what: str) -> None:
    """Let the app run until ``predicate()`` holds; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await pilot.pause(0.05)


def refusal_shown(app: App[Any]) -> bool:
    """The write guard's refusal is up and composed, its name field focused: the screen is
    pushed a step before its children are mounted, and a query or a key in between meets none."""
    focused = app.focused
    return isinstance(app.screen, ConfirmDestructive) and focused is not None and focused.id == "override-name"
