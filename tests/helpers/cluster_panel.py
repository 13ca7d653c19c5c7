"""The Cluster tab's panel alone in an app (Pilot tests), and a wait on the UI's clock."""

from __future__ import annotations

import time

from textual.app import App, ComposeResult

from racperf_tui.ui.tabs.cluster_panel import ClusterPanel


class PanelApp(App[None]):
    def __init__(self, panel: ClusterPanel) -> None:
        super().__init__()
        self.panel = panel

    def compose(self) -> ComposeResult:
        yield self.panel


async def until(pilot, what, timeout_s: float = 30.0, why=lambda: "") -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if what():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"not within {timeout_s} s: {why()}")
