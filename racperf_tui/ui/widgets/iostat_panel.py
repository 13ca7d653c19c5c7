"""The live iostat panel (placeholder; owned by the dashboard helper)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static


class IostatPanel(Static):
    def __init__(self, roots: list[Path] | None = None, interval_s: float = 1.0) -> None:
        super().__init__("iostat panel")
        self.roots = roots
        self.interval_s = interval_s
