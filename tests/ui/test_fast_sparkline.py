"""FastSparkline draws exactly the cells (character and style) Textual's Sparkline draws."""

from __future__ import annotations

import math
import random

import pytest
from rich.style import Style
from textual.app import App, ComposeResult
from textual.widgets import Sparkline

from racperf_tui.ui.widgets.fast_sparkline import FastSparkline

#: (name, data): the shapes a live metric takes
SERIES: list[tuple[str, list[float]]] = [
    ("empty", []),
    ("one value", [7.0]),
    ("two values", [1.0, 3.0]),
    ("all equal", [5.0] * 30),
    ("all zero", [0.0] * 12),
    ("ascending, fewer than the width", [float(v) for v in range(11)]),
    ("noisy IOPS, 120 s", [14_000 + 900 * math.sin(v / 5) + random.Random(v).uniform(-300, 300) for v in range(120)]),
    ("spiky latency", [90.0, 95.0, 4_000.0, 91.0, 88.0, 93.0, 2_500.0] * 9),
    ("width plus one", [float(v % 7) for v in range(57)]),
]


def cells(sparkline: Sparkline) -> list[list[tuple[str, Style | None]]]:
    """Every line of a sparkline as (character, style) per cell, whatever the segments."""
    lines = []
    for y in range(sparkline.size.height):
        lines.append([(char, segment.style) for segment in sparkline.render_line(y) for char in segment.text])
    return lines


class PairApp(App[None]):
    """Textual's Sparkline above ours, same data, same width."""

    CSS = """
    Sparkline { width: 56; }
    #tall-textual, #tall-fast { height: 3; }
    """

    def compose(self) -> ComposeResult:
        yield Sparkline([], id="textual", summary_function=max)
        yield FastSparkline([], id="fast", summary_function=max)
        yield Sparkline([], id="tall-textual", summary_function=max)
        yield FastSparkline([], id="tall-fast", summary_function=max)


@pytest.mark.parametrize("name,data", SERIES, ids=[name for name, _ in SERIES])
async def test_cells_are_textuals(name: str, data: list[float]) -> None:
    app = PairApp()
    async with app.run_test(size=(60, 10)) as pilot:
        for textual_id, fast_id in (("textual", "fast"), ("tall-textual", "tall-fast")):
            textual = app.query_one(f"#{textual_id}", Sparkline)
            fast = app.query_one(f"#{fast_id}", FastSparkline)
            textual.data, fast.data = list(data), list(data)
            await pilot.pause()
            expected, got = cells(textual), cells(fast)
            assert len(expected[-1]) == 56, name
            assert got == expected, f"{name} ({fast_id}): the cells differ from Textual's"


async def test_neighbouring_bars_of_one_colour_are_one_segment() -> None:
    """The point of it: 10 values over 56 cells are 10 segments, not 56."""
    app = PairApp()
    async with app.run_test(size=(60, 10)) as pilot:
        fast = app.query_one("#fast", FastSparkline)
        fast.data = [float(v) for v in range(10)]
        await pilot.pause()
        texts = [segment.text for segment in fast.render_line(0) if segment.text]
        assert len(texts) == 10
        assert "".join(texts)[0] == "▁" and "".join(texts)[-1] == "█"
