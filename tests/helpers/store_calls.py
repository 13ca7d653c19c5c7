"""A fixture that records the thread of every Store call (the real Store, each method wrapped
to note its caller's thread, then do what it does): a call recorded on the main thread is a
read on the UI's event loop, which could stall it behind SQLite's busy timeout."""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any

import pytest

from racperf_tui.core.store import Store

#: every Store method that reads or writes the file: all of its public methods but close
STORE_METHODS = tuple(
    name
    for name, value in vars(Store).items()
    if inspect.isfunction(value) and not name.startswith("_") and name != "close"
)


@pytest.fixture
def store_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, threading.Thread]]:
    """(method, thread) of every Store call and open made in this process from now on."""
    calls: list[tuple[str, threading.Thread]] = []

    def recording(name: str, method: Any) -> Any:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, threading.current_thread()))
            return method(*args, **kwargs)

        return wrapper

    for name in STORE_METHODS:
        monkeypatch.setattr(Store, name, recording(name, getattr(Store, name)))
    opener = Store.open.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Store, "open", classmethod(recording("open", opener)))
    return calls
