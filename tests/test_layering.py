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


def _ui_modules() -> dict[str, "ast.Module"]:
    import ast
    from pathlib import Path

    root = Path(racperf_tui.__file__).parent
    found = {}
    for path in sorted((root / "ui").rglob("*.py")):
        name = "racperf_tui." + ".".join(path.relative_to(root).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = ast.parse(path.read_text(), str(path))
    return found


def test_ui_imports_only_at_module_level() -> None:
    """No import inside a function or method in ui/: a late import hides a layering problem
    (an import cycle) instead of fixing it."""
    import ast

    late = []
    for name, tree in _ui_modules().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                late += [f"{name}:{inner.lineno}" for inner in ast.walk(node)
                         if isinstance(inner, (ast.Import, ast.ImportFrom))]
    assert late == []


def test_ui_modules_import_no_cycle() -> None:
    """ui modules form a DAG (run_view and runs_panel imported each other)."""
    import ast

    modules = _ui_modules()
    graph = {name: {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module in modules}
             for name, tree in modules.items()}
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for dep in sorted(graph[name]):
            assert state.get(dep) != "open", "import cycle: " + " -> ".join([*path, name, dep])
            if dep not in state:
                visit(dep, [*path, name])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
