"""Small persisted user settings (one JSON object in the data directory).

Things a user configures once and expects remembered, e.g. ``oratcptest.jar_path`` or
``oratcptest.java``. Not for run data (that lives in the store).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from racperf_tui.core.paths import resolve_data_dir
from racperf_tui.core.textio.bounded_read import read_regular_text_bounded

SETTINGS_FILE_NAME = "settings.json"


def settings_path(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The settings file inside the data directory (``--data-dir`` / ``$RACPERF_DATA_DIR`` ...)."""
    return resolve_data_dir(data_dir) / SETTINGS_FILE_NAME


def load_all(data_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Every setting; {} when the file does not exist. A corrupt file raises ValueError naming it."""
    path = settings_path(data_dir)
    try:
        text = read_regular_text_bounded(path)
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); fix or delete it") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def get(key: str, default: Any = None, data_dir: str | os.PathLike[str] | None = None) -> Any:
    """One setting, or ``default``."""
    return load_all(data_dir).get(key, default)


def set(key: str, value: Any, data_dir: str | os.PathLike[str] | None = None) -> None:  # noqa: A001
    """Store one setting (``None`` removes it). Written atomically: a crash never leaves half a file."""
    data = load_all(data_dir)
    if value is None:
        data.pop(key, None)
    else:
        data[key] = value
    path = settings_path(data_dir)
    fd, tmp_name = tempfile.mkstemp(prefix=".settings-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
