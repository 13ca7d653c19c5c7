"""Every Python process racperf starts (a supervisor, the device jail, the watchdog, a probe
end, the python-oracledb session) starts isolated: ``python -I`` (neither the working
directory, the script's directory, PYTHONPATH, PYTHONHOME, PYTHONSTARTUP nor the user's
site-packages reach its path), without the caller's ``PYTHON*`` variables in its environment
(they would reach a Python it starts in turn), in a fixed working directory. Else a
``sqlite3.py`` another user planted where root stands would run as root.

Code racperf itself found outside the interpreter's own directories (racperf_tui from a
source tree or a user's site-packages, a tool module such as ``tests.fakes.faketool`` or a
tool package found through PYTHONPATH) is handed to the child explicitly: each such root is
vetted (program_vetting: owned by root or this user, not writable by others) and APPENDED to
the child's path, after the standard library and site-packages, which it cannot shadow.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType

from racperf_tui.core.guard.program_vetting import vet_path

#: the working directory of every Python child racperf starts (where its own directory is
#: not the natural one)
FIXED_CWD = "/"
#: the flag that isolates a Python (3.4 and later)
ISOLATED = "-I"

#: appends the vetted roots given before "--" to the path, then runs the module after it as
#: ``python -m`` would (argv[0] the module's file)
_BOOT = (
    "import sys, runpy\n"
    "split = sys.argv.index('--')\n"
    "sys.path.extend(sys.argv[1:split])\n"
    "module = sys.argv[split + 1]\n"
    "sys.argv = [module] + sys.argv[split + 2:]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


#: variables through which a program racperf starts loads code they name, the caller's choice
#: (a shell that sourced the oracle user's profile): the JVM's options (``-agentpath:`` ran a
#: library of another user as root in oratcptest's java) and class path; the directories
#: sqlplus runs login.sql from at every logon (SQL*Plus commands, ``HOST`` included)
CODE_LOADING_VARIABLES = frozenset(
    {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "ORACLE_PATH", "SQLPATH"}
)


def isolated_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default this process's) without a ``PYTHON*`` variable nor one of
    :data:`CODE_LOADING_VARIABLES`."""
    source = os.environ if env is None else env
    return {
        key: value
        for key, value in source.items()
        if not key.startswith("PYTHON") and key not in CODE_LOADING_VARIABLES
    }


def _interpreter_dirs() -> tuple[str, ...]:
    return tuple({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})


def module_root(module: ModuleType) -> str | None:
    """The path entry ``module`` was imported from when an isolated interpreter would not see
    it (not under the interpreter's prefixes); None otherwise."""
    location = getattr(module, "__file__", None)
    if not location:
        return None
    root = os.path.realpath(location)
    depth = module.__name__.count(".") + 1 + (os.path.basename(root) == "__init__.py")
    for _ in range(depth):
        root = os.path.dirname(root)
    if any(root == prefix or root.startswith(prefix + os.sep) for prefix in _interpreter_dirs()):
        return None
    return root


def _racperf_root() -> str | None:
    return module_root(sys.modules["racperf_tui"])


def vetted_roots(modules: Iterable[ModuleType] = ()) -> list[str]:
    """The roots to hand a child so it imports racperf and ``modules`` as this process did,
    each vetted; UntrustedPath (a ValueError) names one that is not."""
    roots: list[str] = []
    for root in [_racperf_root(), *(module_root(m) for m in modules)]:
        if root is not None and root not in roots:
            vet_path(root, "a directory racperf imports code from")
            roots.append(root)
    return roots


def isolated_module_argv(module: str, *args: str, roots: Iterable[str] | None = None) -> list[str]:
    """``python -I`` running ``module`` with ``args`` (as ``python -m``); ``roots`` (default
    :func:`vetted_roots`) appended to its path."""
    extra = vetted_roots() if roots is None else list(roots)
    return [sys.executable, ISOLATED, "-c", _BOOT, *extra, "--", module, *args]


def isolated_code_argv(code: str, *args: str, python: str | None = None) -> list[str]:
    """``python -I -S -c code args``: a standard-library-only snippet."""
    return [python or sys.executable, ISOLATED, "-S", "-c", code, *args]


def module_of_argv(argv: list[str]) -> tuple[str, list[str]] | None:
    """(module, its args) of an argv made by :func:`isolated_module_argv`; None for another."""
    if argv[:3] != [sys.executable, ISOLATED, "-c"] or len(argv) < 4 or argv[3] != _BOOT or "--" not in argv[4:]:
        return None
    split = argv.index("--", 4)
    if split + 1 >= len(argv):
        return None
    return argv[split + 1], argv[split + 2 :]
