"""A checkbox that is empty when unchecked.

Textual's Checkbox draws an X in both states and tells them apart by its colour alone (dark
grey on grey, or green): in a terminal whose palette maps both near each other, or over a
16-colour SSH session, an unchecked "Server fsync" or fio's "direct" looked checked.
"""

from __future__ import annotations

from textual.widgets import Checkbox


class TickBox(Checkbox):
    """``▐X▌ label`` when checked, ``▐ ▌ label`` when not; otherwise a Checkbox (its
    messages, keys, CSS and ``toggle--button`` component class)."""

    #: the inside of the box, checked and unchecked
    CHECKED_INNER = "X"
    UNCHECKED_INNER = " "

    @property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]  # noqa: N802 - ToggleButton reads this name
        """What ToggleButton draws inside the box: it reads this on every render, and a change
        of ``value`` repaints, so the box follows the value."""
        return self.CHECKED_INNER if self.value else self.UNCHECKED_INNER
