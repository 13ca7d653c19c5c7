"""Where racperf keeps its data (the run store, supervisor logs).

Precedence: an explicit override (``--data-dir``) > ``$RACPERF_DATA_DIR`` >
``$XDG_DATA_HOME/racperf`` > ``~/.local/share/racperf``. A ``--data-dir`` is made the
process's own (:func:`use_data_dir`), so what finds the data dir by itself (racperf's
known_hosts, the remembered settings) and the supervisors started from it read the same one.
"""

from __future__ import annotations

import os
from pathlib import Path

from racperf_tui.core.guard.private_dirs import make_private_directory
from racperf_tui.core.guard.program_vetting import UntrustedPath

#: the environment variable naming the data dir (after ``--data-dir``)
DATA_DIR_ENV = "RACPERF_DATA_DIR"


class UntrustedDataDir(PermissionError):
    """The data directory (or one of its run directories) is not racperf's own: another user
    could swap what racperf writes there (core/guard/private_dirs.py). The message names the
    path, its owner and its mode."""


def private_directory(path: Path, what: str) -> Path:
    """``path`` created (0700) where missing and judged private; UntrustedDataDir when another
    user could write it, OSError when it cannot be made."""
    try:
        return Path(make_private_directory(str(path), what))
    except UntrustedPath as exc:
        raise UntrustedDataDir(str(exc)) from None


def resolve_data_dir(override: str | os.PathLike[str] | None = None, *, create: bool = True) -> Path:
    """The data directory, created (with parents, 0700) if missing; returned absolute.

    ``override`` is the value of ``--data-dir`` (None or "" when not given). ``create=False``
    (commands that only read): the path only, nothing made on disk. Created or not, a data dir
    that racperf is to write must be private (:func:`private_directory`): UntrustedDataDir
    (an OSError) names the path, its owner and its mode.
    """
    if override:
        path = Path(override)
    elif os.environ.get(DATA_DIR_ENV):
        path = Path(os.environ[DATA_DIR_ENV])
    elif os.environ.get("XDG_DATA_HOME"):
        path = Path(os.environ["XDG_DATA_HOME"]) / "racperf"
    else:
        path = Path.home() / ".local" / "share" / "racperf"
    path = path.expanduser().absolute()
    if not create:
        return path
    try:
        path = private_directory(path, "data dir")  # its real path: the directory judged
    except UntrustedDataDir:
        raise
    except OSError as exc:
        raise OSError(f"cannot create the racperf data directory {path}: {exc.strerror}") from exc
    return path


def use_data_dir(override: str | os.PathLike[str] | None) -> None:
    """Make a ``--data-dir`` this process's data dir, and its children's: exported as
    ``$RACPERF_DATA_DIR``. What is not handed the data dir finds it there: racperf's known_hosts
    (a key the UI accepted is where the detached supervisors, started with this environment,
    look), the remembered settings. Nothing is created; None or "" changes nothing."""
    if override:
        os.environ[DATA_DIR_ENV] = str(Path(override).expanduser().absolute())


def store_path(data_dir: Path) -> Path:
    """The SQLite file inside a data directory."""
    return Path(data_dir) / "runs.sqlite3"


def log_dir(data_dir: Path) -> Path:
    """Where detached supervisors write their own diagnostics (one file per run)."""
    path = Path(data_dir) / "logs"
    private_directory(path, "data dir (logs)")
    return path


def run_dir(data_dir: Path, run_id: int) -> Path:
    """One run's own directory: the job file racperf wrote, the log files the tool was allowed
    to write, fio's state files. Private (:func:`private_directory`), as the data dir: the
    benchmark reads there what racperf judged and wrote."""
    path = Path(data_dir) / "runs" / str(run_id)
    for directory in (Path(data_dir), path.parent, path):  # each private, not only on the way
        private_directory(directory, "data dir" if directory == Path(data_dir) else "data dir (run directory)")
    return path
