"""The network panel (placeholder; owned by the network helper)."""

from __future__ import annotations

from textual.widgets import Static


class NetworkPanel(Static):
    def __init__(self, data_dir: str | None = None) -> None:
        super().__init__("network")
        self.data_dir = data_dir
