"""The layers point one way, and no import hides in a function to dodge a cycle.

core (contract types, system readers, the write guard, hosts) imports no tools, orchestration,
commands or ui; tools import no orchestration, commands or ui; orchestration imports no
reporting, commands or ui; reporting (between orchestration and commands: reports of recorded
runs) imports no commands or ui; nothing below ui imports textual. Checked on the source (every import, also
inside functions) and, for textual, in a fresh interpreter.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import racperf_tui
from racperf_tui.ui.deferred import DEFERRED_MODULES

PACKAGE = Path(racperf_tui.__file__).parent
TESTS = Path(__file__).resolve().parent
#: layer -> the layers it must not import
FORBIDDEN = {
    "core": ("tools", "orchestration", "reporting", "commands", "ui"),
    "tools": ("orchestration", "reporting", "commands", "ui"),
    "orchestration": ("reporting", "commands", "ui"),
    "reporting": ("commands", "ui"),
    "commands": ("ui",),
}
#: modules allowed to import lazily: the entry point loads a subcommand (or the UI) only when
#: asked, so `racperf iostat` starts without textual, numpy's first use, or the store
LAZY_IMPORTS_ALLOWED = {"racperf_tui/cli.py", "racperf_tui/__main__.py"}
#: deferred for startup time, not to dodge a cycle (file -> the module it imports in a
#: function): the dashboard starts without asyncssh, which only a remote node's host needs.
#: The UI defers through one registry instead (ui/deferred.py, counted as imports below).
STARTUP_DEFERRED = {("racperf_tui/core/remote/cluster.py", "racperf_tui.core.remote.ssh_host")}
#: what `import racperf_tui.ui.app` must not load: the first paint of the Disks table needs
#: none of it (README Performance: asyncssh 0.25 s, plotext 0.39 s at load ~1)
NOT_AT_START = (
    "asyncssh",
    "plotext",
    "racperf_tui.core.remote.ssh",
    "racperf_tui.ui.tabs.cluster_panel",
    "racperf_tui.ui.tabs.network_panel",
    "racperf_tui.ui.screens.result_view",
    "racperf_tui.ui.screens.run_view",
    "racperf_tui.ui.screens.tool_picker",
    "racperf_tui.reporting.render",
)


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported racperf_tui module, line, inside a function?) of a source file."""
    tree = ast.parse(path.read_text(), str(path))
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom) and child.module and child.module.startswith("racperf_tui"):
                found.append((child.module, child.lineno, in_function))
            elif isinstance(child, ast.Import):
                found.extend(
                    (a.name, child.lineno, in_function) for a in child.names if a.name.startswith("racperf_tui")
                )
            visit(child, inner)

    visit(tree, False)
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_layers_point_one_way() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = _layer("racperf_tui." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts))
        for module, line, _inside in _imports(path):
            if _layer(module) in FORBIDDEN.get(own, ()):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({own}) imports {module}")
    assert wrong == []


def test_no_import_hides_in_a_function() -> None:
    hidden = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE.parent))
        if relative in LAZY_IMPORTS_ALLOWED:
            continue
        hidden += [
            f"{relative}:{line} imports {module} inside a function"
            for module, line, inside in _imports(path)
            if inside and (relative, module) not in STARTUP_DEFERRED
        ]
    assert hidden == []


def test_startup_deferred_imports_are_still_there() -> None:
    """Each exception names a function-level import that exists (a stale one would excuse the
    next import put there), with the comment saying why."""
    for relative, module in STARTUP_DEFERRED:
        path = PACKAGE.parent / relative
        assert (module, True) in {(m, inside) for m, _line, inside in _imports(path)}, (relative, module)
        assert "deferred for startup time" in path.read_text()


def test_dashboard_import_leaves_out_what_the_first_paint_does_not_need() -> None:
    """`import racperf_tui.ui.app` in a fresh interpreter loads neither asyncssh nor plotext
    (nor the modules behind the Cluster and Network tabs and the run screens); each comes
    when first used."""
    code = (
        f"import json, sys, racperf_tui.ui.app\nprint(json.dumps([m for m in {NOT_AT_START!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_the_deferred_modules_do_bring_them() -> None:
    """The check above can fail: what the registry defers loads asyncssh and plotext."""
    code = (
        "import json, sys\n"
        "from racperf_tui.ui.deferred import DEFERRED_MODULES, deferred\n"
        "for name in DEFERRED_MODULES: deferred(name)\n"
        f"print(json.dumps([m for m in {NOT_AT_START!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == list(NOT_AT_START)


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """Each check sees what it forbids."""
    sample = tmp_path / "sample.py"
    sample.write_text("from racperf_tui.ui import app\n\ndef f():\n    from racperf_tui.tools import fio\n")
    assert _imports(sample) == [("racperf_tui.ui", 1, False), ("racperf_tui.tools", 4, True)]
    assert _layer("racperf_tui.orchestration.runs") == "orchestration"
    assert _layer("racperf_tui.reporting.render") == "reporting"
    assert "reporting" in FORBIDDEN["orchestration"]


def _headless_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(racperf_tui.__path__, "racperf_tui."):
        if info.name.startswith("racperf_tui.ui") or info.name == "racperf_tui.__main__":
            continue
        names.append(info.name)
    return names


def test_headless_modules_exist() -> None:
    names = _headless_modules()
    assert "racperf_tui.core.contract.events" in names
    assert "racperf_tui.orchestration.supervisor" in names
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


def _ui_modules() -> dict[str, ast.Module]:
    root = Path(racperf_tui.__file__).parent
    found = {}
    for path in sorted((root / "ui").rglob("*.py")):
        name = "racperf_tui." + ".".join(path.relative_to(root).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = ast.parse(path.read_text(), str(path))
    return found


def test_ui_imports_only_at_module_level() -> None:
    """No import inside a function or method in ui/: a late import hides a layering problem
    (an import cycle) instead of fixing it."""
    late = []
    for name, tree in _ui_modules().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                late += [
                    f"{name}:{inner.lineno}"
                    for inner in ast.walk(node)
                    if isinstance(inner, (ast.Import, ast.ImportFrom))
                ]
    assert late == []


def _deferred_names(tree: ast.Module) -> list[str]:
    """The names a module passes to ui/deferred.py's ``deferred("NAME")``: its deferred imports."""
    return [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "deferred"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ]


def test_deferred_imports_are_seen() -> None:
    """Every deferred("NAME") names a registered module, and the cycle check sees the app's."""
    modules = _ui_modules()
    used = {n for tree in modules.values() for n in _deferred_names(tree)}
    assert used <= set(DEFERRED_MODULES), used - set(DEFERRED_MODULES)
    assert "cluster_view" in _deferred_names(modules["racperf_tui.ui.app"])


def test_ui_modules_import_no_cycle() -> None:
    """ui modules form a DAG (run_view and runs_panel imported each other)."""
    modules = _ui_modules()
    graph = {
        name: {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module in modules}
        | {DEFERRED_MODULES[n] for n in _deferred_names(tree) if DEFERRED_MODULES[n] in modules}
        for name, tree in modules.items()
    }
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


def test_no_test_imports_another_test_module() -> None:
    """What tests share lives in tests/helpers: a test module importing another runs that
    module's fixtures and globals under two names and ties the two files together."""
    offenders = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            offenders += [
                f"{path.relative_to(TESTS)}: {name}"
                for name in names
                if name.rsplit(".", 1)[-1].startswith("test_") and name.startswith(("tests.", "test_"))
            ]
    assert offenders == []


# ------------------------------------------------------------------------------ the rooms

#: core's folders by concern -> the other core folders each may import ("flat": core's own
#: modules: process, store, paths, units...). textio and disks read files and numbers and know
#: nothing of runs; the guard judges what a layout of /proc and /sys says, never over SSH itself.
CORE_ROOMS = {
    "textio": set(),
    "disks": {"textio"},
    "contract": {"textio", "flat", "guard", "disks"},
    "guard": {"textio", "flat", "contract", "disks"},
    "remote": {"textio", "flat", "contract", "guard", "disks"},
    "flat": {"textio", "contract", "guard", "disks"},
}
#: the modules every tool may share; a tool's own modules import no other tool's
TOOLS_SHARED = {"racperf_tui.tools", "racperf_tui.tools.base", "racperf_tui.tools.figures"}
#: at most this many modules flat in core/: the rest live in its folders by concern
MAX_FLAT_CORE = 10


def _core_room(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["racperf_tui", "core"] or len(parts) < 3:
        return None
    return parts[2] if (PACKAGE / "core" / parts[2]).is_dir() else "flat"


def _tool_of(module: str) -> str | None:
    """The tool a module belongs to (its package or module under tools/), None for the shared ones."""
    parts = module.split(".")
    if parts[:2] != ["racperf_tui", "tools"] or len(parts) < 3 or ".".join(parts[:3]) in TOOLS_SHARED:
        return None
    return parts[2]


def _module_name(path: Path) -> str:
    return ("racperf_tui." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")


def _targets(path: Path) -> list[tuple[str, int]]:
    """Every racperf module a file imports, with ``from PKG import module`` resolved to the module."""
    found = []
    for module, line, _inside in _imports(path):
        found.append((module, line))
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("racperf_tui"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                base = PACKAGE.parent / Path(*sub.split("."))
                if base.with_suffix(".py").exists() or (base / "__init__.py").exists():
                    found.append((sub, node.lineno))
    return found


def test_core_rooms_import_only_what_their_concern_needs() -> None:
    wrong = []
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        own = _core_room(_module_name(path))
        if own is None:
            continue
        for module, line in _targets(path):
            room = _core_room(module)
            if room is not None and room != own and room not in CORE_ROOMS[own]:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({own}) imports {module} ({room})")
    assert wrong == []


def test_core_keeps_few_modules_flat() -> None:
    flat = sorted(p.name for p in (PACKAGE / "core").glob("*.py") if p.name != "__init__.py")
    assert len(flat) <= MAX_FLAT_CORE, flat
    assert set(CORE_ROOMS) - {"flat"} == {p.name for p in (PACKAGE / "core").iterdir() if (p / "__init__.py").exists()}


def test_a_tool_imports_no_other_tool() -> None:
    wrong = []
    for path in sorted((PACKAGE / "tools").rglob("*.py")):
        own = _tool_of(_module_name(path))
        for module, line in _targets(path):
            other = _tool_of(module)
            if own is not None and other is not None and other != own:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({own}) imports {module}")
    assert wrong == []


def _names_from(path: Path, package: str) -> list[tuple[str, int]]:
    """The names a file imports from ``package`` itself (its __init__), not its submodules."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == package:
            base = PACKAGE.parent / Path(*package.split("."))
            found += [
                (alias.name, node.lineno)
                for alias in node.names
                if not (base / f"{alias.name}.py").exists() and not (base / alias.name / "__init__.py").exists()
            ]
        elif isinstance(node, ast.Import) and any(alias.name == package for alias in node.names):
            found.append((package, node.lineno))
    return found


def test_a_tool_package_s_role_modules_never_import_its_init() -> None:
    """A tool package's __init__ (description, TOOL) imports its role modules; one of them
    importing a name of the __init__ back is a cycle."""
    wrong = []
    for init in sorted((PACKAGE / "tools").glob("*/__init__.py")):
        package = _module_name(init)
        roles = {module for module, _line in _targets(init) if module.startswith(package + ".")}
        for path in sorted(init.parent.glob("*.py")):
            if _module_name(path) in roles:
                wrong += [
                    f"{path.relative_to(PACKAGE.parent)}:{line} imports {name}"
                    for name, line in _names_from(path, package)
                ]
    assert wrong == []
    # the check sees such an import: fio_cs builds on fio's __init__ (and is no role of it)
    client_server = PACKAGE / "tools" / "fio" / "client_server.py"
    assert "OPTIONS" in {name for name, _line in _names_from(client_server, "racperf_tui.tools.fio")}


def test_the_room_checks_can_fail() -> None:
    assert _core_room("racperf_tui.core.guard.safety") == "guard"
    assert _core_room("racperf_tui.core.store") == "flat"
    assert "remote" not in CORE_ROOMS["guard"]
    assert _tool_of("racperf_tui.tools.fio.plan") == "fio"
    assert _tool_of("racperf_tui.tools.base") is None
    resolved = [m for m, _ in _targets(PACKAGE / "tools" / "fio" / "__init__.py")]
    assert "racperf_tui.tools.fio.result_sections" in resolved


def test_tests_mirror_the_source() -> None:
    """Every folder of tests/ (but its helpers, fakes, fixtures, bench and snapshots) is a
    package of the source, so a module's tests are where its path says."""
    support = {"helpers", "fakes", "fixtures", "bench", "__snapshots__", "__pycache__"}
    stray = []
    for folder in sorted(p for p in TESTS.rglob("*") if p.is_dir()):
        relative = folder.relative_to(TESTS)
        if support & set(relative.parts):
            continue
        if not (PACKAGE / relative / "__init__.py").exists():
            stray.append(str(relative))
        if not (folder / "__init__.py").exists():
            stray.append(f"{relative} (no __init__.py: two test files of one name would collide)")
    assert stray == []


#: what each ui folder holds, by the Textual class its modules' classes derive from
UI_ROOMS = {
    "tabs": "the tabs of the dashboard: widgets, never screens",
    "screens": "full screens and the modal screens they open",
    "dialogs": "modal questions: ModalScreens",
    "widgets": "reusable widgets: never screens",
    "tool_panels": "the widgets a tool asks for by name, and their registries: never screens",
}


def test_ui_rooms_hold_what_their_names_say() -> None:
    code = (
        "import importlib, json, pathlib, inspect\n"
        "from textual.screen import Screen, ModalScreen\n"
        "from textual.widget import Widget\n"
        "import racperf_tui.ui as ui\n"
        "root = pathlib.Path(ui.__file__).parent\n"
        "out = []\n"
        f"for room in {sorted(UI_ROOMS)!r}:\n"
        "    for path in sorted((root / room).glob('*.py')):\n"
        "        name = f'racperf_tui.ui.{room}.{path.stem}'\n"
        "        module = importlib.import_module(name)\n"
        "        for cls_name, cls in inspect.getmembers(module, inspect.isclass):\n"
        "            if cls.__module__ != name: continue\n"
        "            kind = 'modal' if issubclass(cls, ModalScreen) else 'screen' if issubclass(cls, Screen) \\\n"
        "                else 'widget' if issubclass(cls, Widget) else None\n"
        "            if kind: out.append([room, cls_name, kind])\n"
        "print(json.dumps(out))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    classes = json.loads(out.stdout)
    wrong = []
    for room, cls_name, kind in classes:
        # a screen's module may hold the small widgets only it uses (run_view's progress bar)
        allowed = {"dialogs": {"modal", "widget"}, "screens": {"screen", "modal", "widget"}}.get(room, {"widget"})
        if kind not in allowed:
            wrong.append(f"ui/{room}: {cls_name} is a {kind}")
    dialogs = {cls_name for room, cls_name, kind in classes if room == "dialogs" and kind == "modal"}
    assert wrong == []
    assert {"QuitDialog", "HostKeyDialog", "ConfirmDestructive"} <= dialogs
    assert {room for room, _, _ in classes} == set(UI_ROOMS)
