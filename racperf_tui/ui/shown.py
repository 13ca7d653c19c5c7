"""Text from outside (file and device names, tools' messages) made safe to show: control
characters escaped (an escape sequence in a hostile file name never reaches the terminal) and,
where a widget reads Rich markup, "[" escaped so a name cannot restyle or break the line."""

from __future__ import annotations

from rich.markup import escape

from racperf_tui.core.disks.diskstats import printable_name


def plain(text: object) -> str:
    """For widgets that take text as is (rich Text, markup=False)."""
    return printable_name(str(text))


def markup(text: object) -> str:
    """For a piece of a markup string."""
    return escape(printable_name(str(text)))
