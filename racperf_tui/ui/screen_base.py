"""The bases of every racperf screen: each is composed by a compositor of
ui/region_compositor.py, never by Textual's plain one.

A toast must leave the terminal at its timeout on whatever screen it shows (issue 21: "HOST KEY
CHANGED" stayed over the node pickers for minutes): :class:`RacperfScreen` and
:class:`RacperfModalScreen` give a screen the :class:`RepaintingCompositor`, which repaints what
Textual's lazily rebuilt map forgets; the dashboard's :class:`RegionScreen` a RegionCompositor
(the same repaint, and partial updates that render only the widgets in front).
tests/ui/test_screen_base.py fails naming a Screen or ModalScreen subclass of racperf_tui that
does not derive from these, and an app whose default screen is not one.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from textual.screen import ModalScreen, Screen

from racperf_tui.ui.region_compositor import RegionCompositor, RepaintingCompositor

ScreenResultType = TypeVar("ScreenResultType")


class RacperfScreen(Screen[ScreenResultType]):
    """A Screen composed by a RepaintingCompositor (or a subclass's ``COMPOSITOR``)."""

    #: the compositor class that replaces Textual's
    COMPOSITOR: ClassVar[type[RepaintingCompositor]] = RepaintingCompositor

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        # Screen.__init__ made a plain Compositor; nothing has been composed by it yet
        self._compositor = self.COMPOSITOR()


class RacperfModalScreen(ModalScreen[ScreenResultType], RacperfScreen[ScreenResultType]):
    """A ModalScreen composed as a RacperfScreen (ModalScreen's __init__ reaches RacperfScreen's)."""


class RegionScreen(RacperfScreen[None]):
    """The dashboard's default screen: a tick's partial updates render only the widgets they change."""

    COMPOSITOR = RegionCompositor
