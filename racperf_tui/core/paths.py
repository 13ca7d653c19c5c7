"""Where racperf keeps its data (the run store, supervisor logs).

Precedence: an explicit override (``--data-dir``) > ``$RACPERF_DATA_DIR`` >
``$XDG_DATA_HOME/racperf`` > ``~/.local/share/racperf``. A ``--data-dir`` is made the
process's own (:func:`use_data_dir`), so what finds the data dir by itself (racperf's
known_hosts, the remembered settings) and the supervisors started from it read the same one.
"""

from __future__ import annotations

import os
from pathlib import Path

#: the environment variable naming the data dir (after ``--data-dir``)
DATA_DIR_ENV = "RACPERF_DATA_DIR"


def resolve_data_dir(override: str | os.PathLike[str] | None = None, *, create: bool = True) -> Path:
    """The data directory, created (with parents) if missing; returned absolute.

    ``override`` is the value of ``--data-dir`` (None or "" when not given). ``create=False``
    (commands that only read): the path only, nothing made on disk.
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
        path.mkdir(parents=True, exist_ok=True)
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
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_dir(data_dir: Path, run_id: int) -> Path:
    """One run's own directory: the job file racperf wrote, the log files the tool was allowed
    to write, fio's state files."""
    path = Path(data_dir) / "runs" / str(run_id)
    path.mkdir(parents=True, exist_ok=True)
    return path
