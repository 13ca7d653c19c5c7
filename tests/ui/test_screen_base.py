"""Every racperf screen is composed by a RepaintingCompositor (ui/screen_base.py): a Screen or
ModalScreen subclass anywhere in racperf_tui.ui derives from RacperfScreen, and each app's
default screen is one. A new screen on Textual's plain base fails here, named."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from collections.abc import Iterable

from textual.app import App
from textual.screen import ModalScreen, Screen

import racperf_tui.ui as ui
from racperf_tui.ui.region_compositor import RegionCompositor, RepaintingCompositor
from racperf_tui.ui.screen_base import RacperfModalScreen, RacperfScreen, RegionScreen


def ui_modules() -> list[types.ModuleType]:
    """Every module of racperf_tui.ui (textual is imported nowhere else: tests/test_layering.py)."""
    names = [info.name for info in pkgutil.walk_packages(ui.__path__, "racperf_tui.ui.")]
    return [ui, *(importlib.import_module(name) for name in names)]


def classes_of(modules: Iterable[types.ModuleType]) -> list[type]:
    return [
        cls
        for module in modules
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__
    ]


def screens_on_the_plain_compositor(classes: Iterable[type]) -> list[str]:
    """The Screen subclasses among ``classes`` that would be composed by Textual's Compositor."""
    return [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in classes
        if issubclass(cls, Screen) and not issubclass(cls, RacperfScreen)
    ]


def apps_on_the_plain_compositor(classes: Iterable[type]) -> list[str]:
    """The App subclasses among ``classes`` whose default screen is not a RacperfScreen."""
    wrong = []
    for cls in classes:
        if not issubclass(cls, App):
            continue
        # the apps' get_default_screen reads nothing of the app: asked of a bare instance,
        # so no app (and nothing it starts in __init__) is made for this
        screen = cls.get_default_screen(cls.__new__(cls))
        if not isinstance(screen, RacperfScreen):
            wrong.append(f"{cls.__module__}.{cls.__qualname__} (default screen {type(screen).__name__})")
    return wrong


def test_every_screen_of_racperf_is_a_racperf_screen() -> None:
    classes = classes_of(ui_modules())
    screens = {cls.__name__ for cls in classes if issubclass(cls, Screen)}
    # the walk found them (a broken walk would find none and pass)
    assert {"RunView", "ResultView", "MatrixView", "HelpScreen", "HostKeyDialog", "ToolForm"} <= screens
    assert screens_on_the_plain_compositor(classes) == [], (
        "derive racperf's screens from ui/screen_base.RacperfScreen or RacperfModalScreen"
    )


def test_every_app_of_racperf_has_a_racperf_default_screen() -> None:
    classes = classes_of(ui_modules())
    apps = {cls.__name__ for cls in classes if issubclass(cls, App)}
    assert apps == {"RacperfApp", "ReplayApp", "ArchiveApp"}
    assert apps_on_the_plain_compositor(classes) == [], "give the app a get_default_screen of ui/screen_base.py"


def test_the_check_names_a_screen_or_app_on_textuals_base() -> None:
    class PlainView(Screen[None]):
        pass

    class PlainDialog(ModalScreen[bool]):
        pass

    class GoodView(RacperfScreen[None]):
        pass

    class GoodDialog(RacperfModalScreen[bool]):
        pass

    class PlainApp(App[None]):
        pass

    here = f"{__name__}.test_the_check_names_a_screen_or_app_on_textuals_base.<locals>"
    classes = [PlainView, PlainDialog, GoodView, GoodDialog, PlainApp]
    assert screens_on_the_plain_compositor(classes) == [f"{here}.PlainView", f"{here}.PlainDialog"]
    assert apps_on_the_plain_compositor(classes) == [f"{here}.PlainApp (default screen Screen)"]


def test_each_base_gives_its_compositor() -> None:
    assert type(RacperfScreen()._compositor) is RepaintingCompositor
    modal = RacperfModalScreen[None]()
    assert type(modal._compositor) is RepaintingCompositor
    assert modal._modal, "ModalScreen's __init__ still ran"
    assert type(RegionScreen(id="_default")._compositor) is RegionCompositor
