"""The headless core never imports textual: proven in a fresh interpreter."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import racperf_tui


def _headless_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(racperf_tui.__path__, "racperf_tui."):
        if info.name.startswith("racperf_tui.ui") or info.name == "racperf_tui.__main__":
            continue
        names.append(info.name)
    return names


def test_headless_modules_exist() -> None:
    names = _headless_modules()
    assert "racperf_tui.core.events" in names
    assert "racperf_tui.cli" in names


def test_core_tools_commands_never_import_textual() -> None:
    names = _headless_modules()
    code = (
        "import importlib, json, sys\n"
        f"for n in {names!r}:\n"
        "    importlib.import_module(n)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [], f"textual imported by the headless layer: {out.stdout}"


def test_the_check_itself_sees_textual() -> None:
    """Guard against a check that cannot fail: importing the UI does load textual."""
    code = "import sys, racperf_tui.ui.app; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
