"""What a test needs, read off the test itself: the markers conftest's collection hook gives it,
by which ``make test-fast`` leaves out the tests that start something heavy (pyproject.toml
declares the markers). Nothing here names a test module; a need is found in three places:

- the skip markers it carries (``needs_loop``, ``needs_fio``, ``needs_root`` of tests/helpers);
- the helpers it calls, itself or through its fixtures and the functions of the test tree those
  call, that are tagged with ``reveals`` (``start_sshd``, ``attach``, ``start_netns_cluster``,
  ``start_fio_server``): a module's own ``node`` fixture that starts an sshd is found too;
- the standard modules those functions use for what no helper of ours wraps (``pty``: a UI on
  a pseudo-terminal), and the command line of racperf's CLI (``racperf_cmd()``), which modules
  keep in a constant (``RACPERF = racperf_cmd()``) that no tag can ride on.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterable, Iterator
from functools import cache

import pytest

from tests.helpers import needs_chromium, needs_fio, needs_root, racperf_cmd
from tests.helpers.loopdev import needs_loop

#: the skip markers that say what a test needs, and the marker each gives it
SKIP_NEEDS = (
    (needs_loop.mark, "needs_loop"),
    (needs_fio.mark, "needs_fio"),
    (needs_root.mark, "root"),
    (needs_chromium.mark, "needs_chromium"),
)

#: modules of the standard library whose use is itself the need
MODULE_NEEDS = {"pty": "pty_ui"}

#: a command line that starts with this runs racperf's CLI in a new interpreter (~1 s of CPU)
RACPERF_ARGV = tuple(racperf_cmd())

#: the markers this module derives; the fast lane is the tests with none of them
DERIVED = frozenset(
    {"needs_sshd", "needs_netns", "needs_loop", "needs_fio", "needs_chromium", "pty_ui", "subprocess_cli", "root"}
)


def _module_of(obj: object) -> str:
    return getattr(obj, "__module__", None) or ""


def _global_names(code: types.CodeType) -> Iterator[str]:
    """The names CODE and the functions, lambdas and comprehensions nested in it look up."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _global_names(const)


def _functions_of(cls: type) -> Iterator[object]:
    for member in vars(cls).values():
        if isinstance(member, staticmethod | classmethod):
            yield member.__func__
        elif isinstance(member, property):
            yield from (f for f in (member.fget, member.fset) if f is not None)
        elif inspect.isfunction(member):
            yield member


def _callees(obj: object) -> Iterator[object]:
    """What OBJ, a function or class of the test tree, refers to by a global name."""
    if inspect.isclass(obj):
        yield from _functions_of(obj)
        return
    if not inspect.isfunction(obj):
        return
    for name in set(_global_names(obj.__code__)):
        if name in obj.__globals__:
            yield obj.__globals__[name]


@cache
def _reachable_needs(root: object) -> frozenset[str]:
    """The markers tagged on ROOT or anything it reaches through the functions and classes of
    the test tree (tests.*) and of ROOT's own module; the package and libraries are leaves."""
    home = _module_of(inspect.unwrap(root) if inspect.isfunction(root) else root)
    found: set[str] = set()
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if inspect.ismodule(obj):
            if obj.__name__ in MODULE_NEEDS:
                found.add(MODULE_NEEDS[obj.__name__])
            continue
        if isinstance(obj, list | tuple):
            if tuple(obj[: len(RACPERF_ARGV)]) == RACPERF_ARGV:
                found.add("subprocess_cli")
            continue
        inner = inspect.unwrap(obj) if inspect.isfunction(obj) else obj  # contextmanager, wraps
        for each in (obj, inner):
            # only a function or class carries the tag (an object's __getattr__ may answer anything)
            if inspect.isfunction(each) or inspect.isclass(each):
                found |= getattr(each, "reveals_needs", frozenset())
        module = _module_of(inner)
        if module == home or module.startswith("tests."):
            todo.extend(_callees(inner))
    return frozenset(found)


def _fixture_functions(item: pytest.Item) -> Iterable[object]:
    # every definition of each fixture in the closure: one that overrides another may call it
    for defs in item._fixtureinfo.name2fixturedefs.values():  # type: ignore[attr-defined]
        for fixture_def in defs:
            yield fixture_def.func


def needs_of(item: pytest.Item) -> frozenset[str]:
    """The markers of what ITEM needs (a subset of DERIVED)."""
    found: set[str] = set()
    for mark in item.iter_markers("skipif"):
        found.update(need for skip, need in SKIP_NEEDS if mark == skip)
    roots = [getattr(item, "obj", None), *_fixture_functions(item)]
    for root in roots:
        if root is not None:
            found |= _reachable_needs(root)
    return frozenset(found)


def mark_needs(items: Iterable[pytest.Item]) -> None:
    for item in items:
        for need in sorted(needs_of(item)):
            item.add_marker(need)
