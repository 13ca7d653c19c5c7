"""What a screen update writes to a terminal, cell by cell (compositor tests compare them)."""

from __future__ import annotations

from rich.console import Console
from rich.segment import ControlType
from rich.style import Style
from textual._compositor import ChopsUpdate, LayoutUpdate


def written_cells(
    update: ChopsUpdate | LayoutUpdate, console: Console
) -> dict[tuple[int, int], tuple[str, Style | None]]:
    """What the update writes to a terminal: (x, y) -> (character, style), from its
    segments as the terminal gets them (cursor moves, then text written from there)."""
    cells: dict[tuple[int, int], tuple[str, Style | None]] = {}
    x = y = 0
    for segment in update.__rich_console__(console, console.options):
        if segment.control:
            for control in segment.control:
                if control[0] == ControlType.CURSOR_MOVE_TO:
                    x, y = int(control[1]), int(control[2])
            continue
        if segment.text == "\n":
            continue  # between spans: each span starts with a cursor move
        for character in segment.text:
            cells[(x, y)] = (character, segment.style)
            x += 1
    return cells
