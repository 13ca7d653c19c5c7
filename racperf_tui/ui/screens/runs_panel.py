"""The runs panel (placeholder; owned by the runs-UI helper)."""

from __future__ import annotations

from textual.widgets import Static


class RunsPanel(Static):
    def __init__(self, data_dir: str | None = None) -> None:
        super().__init__("runs")
        self.data_dir = data_dir
