"""Where ORION is: the ORACLE_HOME candidates of this machine (remembered, $ORACLE_HOME,
/etc/oratab, the grid home of olr.loc), read under a root directory, and the binary a config names."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from racperf_tui.core import settings
from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.core.textio.bounded_read import read_regular_text_bounded
from racperf_tui.tools.orion.config import OrionConfig

#: the remembered ORACLE_HOME (core.settings)
SETTING_ORACLE_HOME = "orion.oracle_home"
install_hint = (
    "ORION ships in every Oracle Database and Grid Infrastructure home from 11.2 on "
    "($ORACLE_HOME/bin/orion); give --set oracle_home=DIR once (remembered), or "
    "--set orion=PATH for a standalone binary"
)


def oratab_homes(root: Path) -> tuple[list[str], list[str]]:
    """(database homes, grid homes) named in ROOT/etc/oratab, in its order."""
    databases: list[str] = []
    grids: list[str] = []
    try:
        text = read_regular_text_bounded(root / "etc" / "oratab")
    except OSError:
        return databases, grids
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        parts = line.split(":")
        if len(parts) < 2 or not parts[1].startswith("/"):
            continue
        sid, home = parts[0], parts[1].rstrip("/")
        target = grids if sid.startswith(("+ASM", "-MGMTDB", "+APX")) or sid.upper() == "CRS" else databases
        if home not in target:
            target.append(home)
    return databases, grids


def olr_grid_home(root: Path) -> str | None:
    """crs_home from ROOT/etc/oracle/olr.loc (where a cluster's grid home is recorded)."""
    try:
        text = read_regular_text_bounded(root / "etc" / "oracle" / "olr.loc")
    except OSError:
        return None
    match = re.search(r"^\s*crs_home\s*=\s*(/\S+)", text, re.MULTILINE)
    return match[1].rstrip("/") if match else None


def _has_orion(root: Path, home: str) -> bool:
    path = root / home.lstrip("/") / "bin" / "orion"
    return path.is_file() and os.access(path, os.X_OK)


def oracle_home_candidates(
    root: str | os.PathLike[str] = "/",
    environ: Mapping[str, str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> list[tuple[str, str]]:
    """Every ORACLE_HOME that may hold ORION, with where it was found, in the order tried:
    the remembered one (core.settings), $ORACLE_HOME, /etc/oratab's database homes, the grid
    home (oratab's +ASM entry, /etc/oracle/olr.loc). Everything is read under ``root``."""
    root_path = Path(root)
    env = os.environ if environ is None else environ
    found: list[tuple[str, str]] = []
    try:
        remembered = settings.get(SETTING_ORACLE_HOME, None, data_dir=data_dir)
    except (ValueError, OSError):
        remembered = None
    if remembered:
        found.append((str(remembered), "remembered"))
    if env.get("ORACLE_HOME"):
        found.append((env["ORACLE_HOME"].rstrip("/"), "$ORACLE_HOME"))
    databases, grids = oratab_homes(root_path)
    found += [(home, "/etc/oratab") for home in databases]
    found += [(home, "/etc/oratab (grid)") for home in grids]
    olr = olr_grid_home(root_path)
    if olr:
        found.append((olr, "/etc/oracle/olr.loc (grid)"))
    unique: list[tuple[str, str]] = []
    for home, where in found:
        if home not in (h for h, _ in unique):
            unique.append((home, where))
    return unique


def find_oracle_home(
    root: str | os.PathLike[str] = "/",
    environ: Mapping[str, str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> str | None:
    """The first candidate home whose bin/orion exists (see :func:`oracle_home_candidates`)."""
    for home, _where in oracle_home_candidates(root, environ, data_dir):
        if _has_orion(Path(root), home):
            return home
    return None


def remember_oracle_home(home: str, data_dir: str | os.PathLike[str] | None = None) -> None:
    """Remember ORACLE_HOME for the next runs (``orion.oracle_home`` in the settings)."""
    settings.set(SETTING_ORACLE_HOME, str(Path(home).expanduser().absolute()), data_dir)


def resolve_binary(
    cfg: OrionConfig, root: str | os.PathLike[str] = "/", environ: Mapping[str, str] | None = None
) -> tuple[str, str | None]:
    """(the orion binary, its ORACLE_HOME or None): ``orion`` given, else ``oracle_home`` given,
    else :func:`find_oracle_home`. ToolNotFound says where it looked and how to fix it."""
    if cfg.orion:
        binary = os.path.abspath(os.path.expanduser(cfg.orion))
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise ToolNotFound(f"orion: {cfg.orion!r} is not an executable file")
        home = cfg.oracle_home or (
            os.path.dirname(os.path.dirname(binary)) if os.path.basename(os.path.dirname(binary)) == "bin" else None
        )
        return binary, home or None
    if cfg.oracle_home:
        home = os.path.abspath(os.path.expanduser(cfg.oracle_home)).rstrip("/")
        if not _has_orion(Path("/"), home):
            raise ToolNotFound(
                f"orion: {home}/bin/orion not found: oracle_home must be a database or grid "
                f"home of 11.2 or later (or give --set orion=PATH)"
            )
        return os.path.join(home, "bin", "orion"), home
    home = find_oracle_home(root, environ)
    if home is None:
        tried = ", ".join(f"{h} ({w})" for h, w in oracle_home_candidates(root, environ)) or "nothing found"
        raise ToolNotFound(f"orion: no ORACLE_HOME with bin/orion (tried: {tried}); {install_hint}")
    return os.path.join(home, "bin", "orion"), home
