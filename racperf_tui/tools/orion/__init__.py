"""ORION (ORacle IO Numbers): Oracle's storage calibration binary, ``$ORACLE_HOME/bin/orion``
(11.2 to 19c; the standalone 11.1 download too).

A run is one Invocation on the run contract (:mod:`racperf_tui.core.contract.invocation`):

- argv ``$ORACLE_HOME/bin/orion -run R -testname T [the options given]``, env ``ORACLE_HOME``
  and ``LD_LIBRARY_PATH=$ORACLE_HOME/lib``, working directory the run's directory;
- the file ``T.lun`` written there (the LUNs, one per line), the result files ``T_*`` ORION
  writes there (``T_<yyyymmdd>_<hhmm>_summary.txt``, ``_iops.csv``, ``_mbps.csv``, ``_lat.csv``,
  ``_hist.txt`` from 11.2, ``_trace.txt``) kept in the store as ``result:NAME``;
- every LUN a target: "write" when ``write`` > 0 (ORION overwrites the LUNs), else "read". The
  write guard judges them; ORION is never asked to open anything it did not clear.

ORION prints its banner, the test name, one estimate ("Calibration will take approximately N
minutes.", 11.1: "Test will take approximately N minutes") and then nothing until the results:
the stream parser turns the estimate into a planned-duration sample and then, every
:data:`PROGRESS_INTERVAL_S`, a progress sample (``planned_s``, ``elapsed_s``, ``progress_pct``,
``eta_s``, ``data_point`` of ``data_points``, the estimated Small/Large loads in ``extra``),
from the planned matrix (:func:`planned_matrix`). The supervisor calls the parser's ``tick()``.

The planned matrix (Oracle's ORION documentation: the ``-run`` levels are shorthands for
``-run advanced`` with fixed options, ``-num_disks`` sets the range of loads): with ``n``
disks, small loads 0..5n, large loads 0..2n; ``basic`` (``simple``) tests the small loads
with no large I/O, then the large loads with no small I/O (7n+1 data points, (0,0) counted as
ORION counts it); ``detailed`` (``normal``) every combination ((5n+1)(2n+1)); ``row``
(``oltp``: ``-num_large 0``) the small loads at the fixed large load; ``col`` (``dss``:
``-num_small 0``, 240 s per point) the large loads at the fixed small load; ``point`` one point;
``max`` every combination up to ``num_small`` x ``num_large``. ORION's own estimates in the
published outputs (9 minutes for ``simple`` on one disk, 23 for ``advanced`` basic on three)
are exactly (data points x duration + 1 minute). The planned duration adds about 2 minutes of
cache warming per data point with large I/O unless ``cache_size`` is 0.

Results (:func:`parse_output`, :func:`parse_result_files`, :func:`parse_path`) from 11.1 to 19c:
the summary figures, the latency lines and histogram (11.2+), the matrices of the CSV files,
latency always in microseconds (11.1 printed unitless milliseconds).
"""

from __future__ import annotations

import glob
import math
import os
import posixpath
import re
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from racperf_tui.core import settings
from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import READ, WRITE, Companion, Invocation, Target, ToolNotFound
from racperf_tui.core.contract.tool import MetricSpec, ToolDescription, ToolOption
from racperf_tui.core.disks.block_devices import dm_names
from racperf_tui.core.disks.diskstats import DiskSnapshot, snapshot_from_text
from racperf_tui.tools.base import OptionsConfig, on_another_node, program_output
from racperf_tui.tools.orion.live import RECORD_KEY, LunDevices, OrionLiveModel, lun_devices, recorded

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

name = "orion"

RUNS = ("simple", "normal", "advanced", "dss", "oltp")
TYPES = ("rand", "seq")
SIMULATES = ("concat", "raid0")
MATRICES = ("basic", "detailed", "point", "col", "row", "max")

#: the remembered ORACLE_HOME (core.settings)
SETTING_ORACLE_HOME = "orion.oracle_home"
#: ORION's defaults (the -help text and Oracle's documentation)
DEFAULT_TESTNAME = "orion"
DEFAULT_DURATION_S = 60
DSS_DURATION_S = 240
#: about this long of cache warming before each data point with large I/O (unless -cache_size 0)
CACHE_WARMING_S = 120.0
#: ORION's own estimates are (data points x duration) plus this
ORION_ESTIMATE_EXTRA_S = 60.0
#: one progress sample this often while ORION is silent
PROGRESS_INTERVAL_S = 1.0
#: the hard limit: planned x this + HARD_LIMIT_SLACK_S (the model is an estimate)
HARD_LIMIT_FACTOR = 1.5
HARD_LIMIT_SLACK_S = 600.0

#: sanity bounds racperf applies (ORION's own are not published): what a real test can use
MAX_NUM_DISKS = 4096
MAX_SIZE_SMALL_KB = 1024
MAX_SIZE_LARGE_KB = 65536
MAX_DURATION_S = 86400
MAX_OUTSTANDING = 100000

install_hint = (
    "ORION ships in every Oracle Database and Grid Infrastructure home from 11.2 on "
    "($ORACLE_HOME/bin/orion); give --set oracle_home=DIR once (remembered), or "
    "--set orion=PATH for a standalone binary"
)

#: options every -run level takes; the others are -run advanced's
_ANY_RUN = frozenset(
    {"run", "testname", "num_disks", "cache_size", "verbose", "hugenotneeded", "storax", "lun", "oracle_home", "orion"}
)
#: what each shorthand level means (Oracle's documentation of -run)
_SHORTHANDS: dict[str, dict[str, Any]] = {
    "simple": {
        "matrix": "basic",
        "size_small": 8,
        "size_large": 1024,
        "type": "rand",
        "write": 0,
        "duration": DEFAULT_DURATION_S,
    },
    "normal": {
        "matrix": "detailed",
        "size_small": 8,
        "size_large": 1024,
        "type": "rand",
        "write": 0,
        "duration": DEFAULT_DURATION_S,
    },
    "oltp": {
        "matrix": "row",
        "num_large": 0,
        "size_small": 8,
        "type": "rand",
        "write": 0,
        "duration": DEFAULT_DURATION_S,
    },
    "dss": {
        "matrix": "col",
        "num_small": 0,
        "size_large": 1024,
        "type": "rand",
        "write": 0,
        "duration": DSS_DURATION_S,
    },
}
_SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_STORAX_RE = re.compile(r"^[A-Za-z0-9_]+$")


# --------------------------------------------------------------------------- config


@dataclass
class OrionConfig(OptionsConfig):
    """Every option of the 11.2 to 19c binary, named after ORION's own (``None``: ORION's
    default), plus ``lun`` (the LUNs of the .lun file), ``oracle_home`` and ``orion``."""

    run: str = "simple"
    testname: str = DEFAULT_TESTNAME
    lun: list[str] = field(default_factory=list)
    num_disks: int | None = None
    size_small: int | None = None
    size_large: int | None = None
    type: str | None = None
    num_streamIO: int | None = None
    simulate: str | None = None
    write: int | None = None
    cache_size: int | None = None
    duration: int | None = None
    num_small: int | None = None
    num_large: int | None = None
    matrix: str | None = None
    hugenotneeded: bool = False
    verbose: bool = False
    storax: str | None = None
    oracle_home: str = ""
    orion: str = ""

    tool_name: ClassVar[str] = "orion"

    def _normalise(self) -> None:
        #: what racperf changed in the config, said to the user (a testname given with .lun)
        self.corrections: list[str] = []
        for key, choices in (("run", RUNS), ("type", TYPES), ("simulate", SIMULATES), ("matrix", MATRICES)):
            value = getattr(self, key)
            if value is None or str(value).strip() == "":
                setattr(self, key, None if key != "run" else "simple")
                continue
            text = str(value).strip().lower()
            if key == "matrix" and text == "column":
                text = "col"
            if text not in choices:
                raise ValueError(f"orion: {key} must be one of {', '.join(choices)}, got {value!r}")
            setattr(self, key, text)
        for key in (
            "num_disks",
            "size_small",
            "size_large",
            "num_streamIO",
            "write",
            "cache_size",
            "duration",
            "num_small",
            "num_large",
        ):
            setattr(self, key, _whole(getattr(self, key), key))
        for key in ("hugenotneeded", "verbose"):
            value = getattr(self, key)
            if isinstance(value, str):
                value = value.strip().lower() in ("1", "true", "yes", "on")
            setattr(self, key, bool(value))
        testname = str(self.testname or "").strip() or DEFAULT_TESTNAME
        if testname.lower().endswith(".lun"):
            # ORION adds .lun itself: given "x.lun" it looks for x.lun.lun and stops
            stripped = testname[:-4]
            self.corrections.append(
                f"testname {testname!r} -> {stripped!r} (ORION adds .lun itself; it would look for {testname}.lun)"
            )
            testname = stripped
        self.testname = testname
        luns = self.lun
        if isinstance(luns, str):
            luns = [luns]
        self.lun = [str(x).strip() for x in (luns or []) if str(x).strip()]
        self.storax = None if self.storax in (None, "") else str(self.storax).strip()
        self.oracle_home = str(self.oracle_home or "").strip()
        self.orion = str(self.orion or "").strip()

    def validate(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError("orion: " + "; ".join(problems))

    def problems(self) -> list[str]:
        """Every problem of the config, each naming the option and the fix."""
        out: list[str] = []
        if not _SAFE_NAME_RE.match(self.testname) or self.testname.startswith("-"):
            out.append(
                f"testname {self.testname!r}: letters, digits, '_', '.', '-' only (it names files "
                f"in the run's directory)"
            )
        if not self.lun:
            out.append("no LUN: give each with --set lun=/dev/mapper/NAME (repeatable)")
        seen: set[str] = set()
        for lun in self.lun:
            if any(ord(c) < 32 for c in lun):
                out.append(f"lun {lun!r}: control characters (a newline would add a LUN to the .lun file)")
            elif not lun.startswith("/"):
                out.append(f"lun {lun!r}: give an absolute path (ORION runs in the run's directory)")
            if lun in seen:
                out.append(f"lun {lun!r} given twice")
            seen.add(lun)
        ranges = {
            "num_disks": (1, MAX_NUM_DISKS),
            "size_small": (1, MAX_SIZE_SMALL_KB),
            "size_large": (1, MAX_SIZE_LARGE_KB),
            "num_streamIO": (1, 1024),
            "write": (0, 100),
            "cache_size": (0, 1 << 30),
            "duration": (1, MAX_DURATION_S),
            "num_small": (0, MAX_OUTSTANDING),
            "num_large": (0, MAX_OUTSTANDING),
        }
        for key, (low, high) in ranges.items():
            value = getattr(self, key)
            if value is not None and not low <= value <= high:
                unit = {
                    "size_small": " KB",
                    "size_large": " KB",
                    "write": " %",
                    "cache_size": " MB",
                    "duration": " s",
                }.get(key, "")
                out.append(f"{key} must be {low} to {high}{unit}, got {value}")
        if self.storax is not None and not _STORAX_RE.match(self.storax):
            out.append(f"storax {self.storax!r}: a name of ORION's I/O layer (e.g. skgfr, oss)")
        if self.run != "advanced":
            extra = sorted(
                k
                for k in (
                    "size_small",
                    "size_large",
                    "type",
                    "num_streamIO",
                    "simulate",
                    "write",
                    "duration",
                    "num_small",
                    "num_large",
                    "matrix",
                )
                if getattr(self, k) is not None
            )
            if extra:
                out.append(
                    f"-run {self.run} fixes {', '.join(extra)} itself (ORION refuses them there): "
                    f"use run=advanced to set them"
                )
            return out
        matrix = self.matrix or "basic"
        needs = {
            "point": ("num_small", "num_large"),
            "max": ("num_small", "num_large"),
            "col": ("num_small",),
            "row": ("num_large",),
        }
        takes = {
            "point": {"num_small", "num_large"},
            "max": {"num_small", "num_large"},
            "col": {"num_small"},
            "row": {"num_large"},
            "basic": set(),
            "detailed": set(),
        }
        for key in needs.get(matrix, ()):
            if getattr(self, key) is None:
                out.append(
                    f"matrix {matrix} needs {key} (the {'small' if key == 'num_small' else 'large'} load it tests at)"
                )
        for key in ("num_small", "num_large"):
            if getattr(self, key) is not None and key not in takes[matrix]:
                wants = sorted(m for m, keys in takes.items() if key in keys)
                out.append(f"{key} is only taken with matrix {', '.join(wants)} (matrix is {matrix})")
        if self.num_streamIO is not None and (self.type or "rand") != "seq":
            out.append("num_streamIO is the I/Os per sequential stream: only with type=seq")
        if self.simulate is not None and self.num_disks is None:
            out.append(f"simulate {self.simulate} lays the LUNs out as num_disks disks: give num_disks")
        return out

    # ------------------------------------------------------------------ what ORION will do

    def effective(self, key: str) -> Any:
        """The value ORION uses: the given one, the run level's fixed one, or ORION's default."""
        value = getattr(self, key)
        if value is not None:
            return value
        fixed = _SHORTHANDS.get(self.run, {})
        if key in fixed:
            return fixed[key]
        return {
            "matrix": "basic",
            "size_small": 8,
            "size_large": 1024,
            "type": "rand",
            "write": 0,
            "duration": DEFAULT_DURATION_S,
        }.get(key)

    @property
    def disks(self) -> int:
        """-num_disks, ORION's default being the number of LUNs."""
        return self.num_disks if self.num_disks is not None else max(1, len(self.lun))

    @property
    def writes(self) -> bool:
        return (self.write or 0) > 0

    def orion_args(self) -> list[str]:
        """ORION's options, in its own spelling: only those given (ORION's defaults otherwise)."""
        args = ["-run", self.run, "-testname", self.testname]
        for key in (
            "num_disks",
            "size_small",
            "size_large",
            "type",
            "num_streamIO",
            "simulate",
            "write",
            "cache_size",
            "duration",
            "num_small",
            "num_large",
            "matrix",
            "storax",
        ):
            value = getattr(self, key)
            if value is not None:
                args += [f"-{key}", str(value)]
        if self.hugenotneeded:
            args.append("-hugenotneeded")
        if self.verbose:
            args.append("-verbose")
        return args


def _whole(value: Any, key: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"orion: {key} must be a whole number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"orion: {key} must be a whole number, got {value!r}") from None
    if not math.isfinite(number) or number != int(number):
        raise ValueError(f"orion: {key} must be a whole number, got {value!r}")
    return int(number)


def _config(config: Mapping[str, Any] | OrionConfig) -> OrionConfig:
    if isinstance(config, OrionConfig):
        return config
    return OrionConfig.from_mapping(
        {k: v for k, v in config.items() if k not in ("destructive", "destructive_targets", "hard_limit_s")}
    )


# --------------------------------------------------------------------------- the planned matrix


@dataclass(frozen=True)
class DataPoint:
    """One data point in ORION's order: its loads, its planned start and length (warming
    included)."""

    small: int
    large: int
    start_s: float
    length_s: float


def load_levels(config: Mapping[str, Any] | OrionConfig) -> tuple[list[int], list[int]]:
    """(small loads, large loads) of the matrix's range: 0..5n and 0..2n for n disks."""
    cfg = _config(config)
    n = cfg.disks
    return list(range(0, 5 * n + 1)), list(range(0, 2 * n + 1))


def planned_matrix(config: Mapping[str, Any] | OrionConfig) -> list[tuple[int, int]]:
    """The (small, large) data points ORION will test, in its order, as its summary's "Total
    Data Points" counts them (the (0, 0) point of a basic matrix included)."""
    cfg = _config(config)
    small, large = load_levels(cfg)
    matrix = cfg.effective("matrix")
    if matrix == "basic":
        return [(s, 0) for s in small] + [(0, l) for l in large[1:]]
    if matrix == "detailed":
        return [(s, l) for l in large for s in small]
    if matrix == "row":
        return [(s, int(cfg.effective("num_large") or 0)) for s in small]
    if matrix == "col":
        return [(int(cfg.effective("num_small") or 0), l) for l in large]
    if matrix == "point":
        return [(int(cfg.num_small or 0), int(cfg.num_large or 0))]
    # max: every combination up to the maximum loads given (an upper bound)
    return [(s, l) for l in range(int(cfg.num_large or 0) + 1) for s in range(int(cfg.num_small or 0) + 1)]


def schedule(config: Mapping[str, Any] | OrionConfig) -> list[DataPoint]:
    """The data points with their planned times: duration each, plus cache warming before each
    one with large I/O unless cache_size is 0."""
    cfg = _config(config)
    duration = float(cfg.effective("duration"))
    warm = 0.0 if cfg.cache_size == 0 else CACHE_WARMING_S
    points = []
    clock = 0.0
    for small, large in planned_matrix(cfg):
        length = duration + (warm if large > 0 else 0.0)
        points.append(DataPoint(small, large, clock, length))
        clock += length
    return points


def planned_duration_s(config: Mapping[str, Any] | OrionConfig) -> float:
    """Total Data Points x duration + cache warming per large data point (unless cache_size 0)."""
    return sum(p.length_s for p in schedule(config))


def orion_estimate_s(config: Mapping[str, Any] | OrionConfig) -> float:
    """What ORION itself will print as its estimate: data points x duration + 1 minute."""
    cfg = _config(config)
    return len(planned_matrix(cfg)) * float(cfg.effective("duration")) + ORION_ESTIMATE_EXTRA_S


def hard_limit_s(config: Mapping[str, Any] | OrionConfig) -> float:
    """The planned duration x 1.5 + 10 minutes (the model is an estimate; a stuck ORION ends)."""
    cfg = _config(config)
    return max(planned_duration_s(cfg), orion_estimate_s(cfg)) * HARD_LIMIT_FACTOR + HARD_LIMIT_SLACK_S


# --------------------------------------------------------------------------- ORACLE_HOME


def _oratab_homes(root: Path) -> tuple[list[str], list[str]]:
    """(database homes, grid homes) named in ROOT/etc/oratab, in its order."""
    databases: list[str] = []
    grids: list[str] = []
    try:
        text = (root / "etc" / "oratab").read_text(errors="replace")
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


def _olr_grid_home(root: Path) -> str | None:
    """crs_home from ROOT/etc/oracle/olr.loc (where a cluster's grid home is recorded)."""
    try:
        text = (root / "etc" / "oracle" / "olr.loc").read_text(errors="replace")
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
    databases, grids = _oratab_homes(root_path)
    found += [(home, "/etc/oratab") for home in databases]
    found += [(home, "/etc/oratab (grid)") for home in grids]
    olr = _olr_grid_home(root_path)
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


# --------------------------------------------------------------------------- the run


#: a node's candidate homes, read there: its login's $ORACLE_HOME, /etc/oratab, olr.loc
_NODE_HOMES_SH = r"""
printf '%s\n' "${ORACLE_HOME:-}"; echo racperf-sep
cat /etc/oratab 2>/dev/null; echo racperf-sep
cat /etc/oracle/olr.loc 2>/dev/null; true
"""
#: $@: homes; prints the first whose bin/orion is an executable file
_NODE_ORION_SH = r"""
for h in "$@"; do if [ -f "$h/bin/orion" ] && [ -x "$h/bin/orion" ]; then printf '%s\n' "$h"; exit 0; fi; done
exit 1
"""
#: $@: LUNs; prints those (not under /dev) that do not exist there
_NODE_MISSING_SH = r"""
for l in "$@"; do case $l in /dev/*) ;; *) [ -e "$l" ] || [ -L "$l" ] || printf '%s\n' "$l" ;; esac; done
"""


def _node_answer(host: Host, script: str, args: list[str]) -> tuple[int, str]:
    try:
        answer = host.run_briefly(["sh", "-c", script, "racperf-orion", *args], 30.0)
    except OSError as exc:
        raise ToolNotFound(f"orion: cannot look on {host.name}: {exc}") from None
    return answer.returncode, answer.stdout


def resolve_binary_on(host: Host, cfg: OrionConfig) -> tuple[str, str | None]:
    """:func:`resolve_binary` on another node: ``orion`` or ``oracle_home`` as paths there,
    else the homes that node names (its login's $ORACLE_HOME, /etc/oratab, olr.loc; this
    machine's remembered home is this machine's). ToolNotFound names the node."""
    if cfg.orion or cfg.oracle_home:
        home = cfg.oracle_home.rstrip("/") if cfg.oracle_home else None
        binary = cfg.orion or f"{home}/bin/orion"
        if not binary.startswith("/"):
            raise ToolNotFound(f"orion: {binary!r}: a run on {host.name} needs the absolute path there")
        status, _ = _node_answer(host, '[ -f "$1" ] && [ -x "$1" ]', [binary])
        if status != 0:
            raise ToolNotFound(f"orion: {binary} is not an executable file on {host.name}")
        if home is None and posixpath.basename(posixpath.dirname(binary)) == "bin":
            home = posixpath.dirname(posixpath.dirname(binary))
        return binary, home
    _status, text = _node_answer(host, _NODE_HOMES_SH, [])
    env_home, _, rest = text.partition("racperf-sep\n")
    oratab, _, olr = rest.partition("racperf-sep\n")
    with tempfile.TemporaryDirectory(prefix="racperf-orion-node-") as root:
        (Path(root) / "etc" / "oracle").mkdir(parents=True)
        (Path(root) / "etc" / "oratab").write_text(oratab)
        (Path(root) / "etc" / "oracle" / "olr.loc").write_text(olr)
        databases, grids = _oratab_homes(Path(root))
        grid = _olr_grid_home(Path(root))
    homes = [h for h in [env_home.strip().rstrip("/"), *databases, *grids, grid or ""] if h.startswith("/")]
    homes = list(dict.fromkeys(homes))
    status, found = _node_answer(host, _NODE_ORION_SH, homes) if homes else (1, "")
    if status != 0 or not found.strip():
        tried = ", ".join(homes) or "no $ORACLE_HOME, /etc/oratab or olr.loc there"
        raise ToolNotFound(f"orion: no ORACLE_HOME with bin/orion on {host.name} (tried: {tried}); {install_hint}")
    home = found.strip()
    return f"{home}/bin/orion", home


def invocation(
    config: Mapping[str, Any] | OrionConfig, run_dir: str | None = None, host: Host | None = None
) -> Invocation:
    """The run on ``host`` (this machine when None; see the module docstring): the LUN files
    and ORION are looked for there. ValueError names every problem of the config;
    ToolNotFound when no ORION is found."""
    cfg = _config(config)
    remote = on_another_node(host)
    if remote and host is not None:
        missing = _node_answer(host, _NODE_MISSING_SH, list(cfg.lun))[1].split()
        where = f" on {host.name}"
    else:
        missing = [lun for lun in cfg.lun if not lun.startswith("/dev/") and not os.path.lexists(lun)]
        where = ""
    if missing:
        raise ValueError(
            f"orion: LUN {', '.join(missing)} does not exist{where} "
            "(ORION opens each LUN; create the file or name a device)"
        )
    binary, home = resolve_binary_on(host, cfg) if remote and host is not None else resolve_binary(cfg)
    env: dict[str, str] = {}
    if home:
        env = {"ORACLE_HOME": home, "LD_LIBRARY_PATH": os.path.join(home, "lib")}
    access = WRITE if cfg.writes else READ
    origin = f"lun (-write {cfg.write})" if cfg.writes else "lun"
    targets = tuple(Target(lun, access, origin) for lun in cfg.lun)
    planned = planned_duration_s(cfg)
    notes = list(cfg.corrections)
    notes.append(f"planned: {len(planned_matrix(cfg))} data points, about {planned / 60:.0f} minutes")
    if cfg.writes:
        notes.append(f"-write {cfg.write}: ORION overwrites every LUN")
    return Invocation(
        argv=[binary, *cfg.orion_args()],
        env=env,
        cwd=".",
        files={f"{cfg.testname}.lun": "".join(f"{lun}\n" for lun in cfg.lun)},
        result_files=(f"{cfg.testname}_*",),
        targets=targets,
        hard_limit_s=hard_limit_s(cfg),
        notes=tuple(notes),
        companions=(DISKSTATS_COMPANION,),
        detail=cfg,
    )


def build_argv(config: Mapping[str, Any] | OrionConfig) -> list[str]:
    """The argv of :func:`invocation`."""
    return invocation(config).argv


def tool_version(argv: list[str], host: Host | None = None) -> str | None:
    """The version line of ``orion -help`` on the run's host (run with its ORACLE_HOME's
    libraries)."""
    binary = argv[0]
    env: dict[str, str] = {}
    if os.path.basename(os.path.dirname(binary)) == "bin":
        home = os.path.dirname(os.path.dirname(binary))
        # here, the ORACLE_HOME set wins; a node's environment is not ours to read
        local = not on_another_node(host)
        env["ORACLE_HOME"] = os.environ.get("ORACLE_HOME", home) if local else home
        env["LD_LIBRARY_PATH"] = os.path.join(env["ORACLE_HOME"], "lib")
    match = _VERSION_RE.search(program_output([binary, "-help"], 10.0, host, env) or "")
    return f"ORION {match[1]}" if match else None


# --------------------------------------------------------------------------- output formats

_VERSION_RE = re.compile(r"ORION(?:: ORacle IO Numbers --)? VERSION\s+(\S+)", re.IGNORECASE)
_STAMP_RE = re.compile(r"^\s*(?P<name>\S+?)_(?P<date>\d{8})_(?P<time>\d{4})\s*$")
_ESTIMATE_RE = re.compile(r"(?:Calibration|Test) will take approximately (?P<n>\d+(?:\.\d+)?) minutes?")
_AT = r"@\s*Small=(?P<small>\d+)\s+and\s+Large=(?P<large>\d+)"
_NUM = r"[-+]?\d+(?:\.\d+)?"
_MAX_MBPS_RE = re.compile(rf"Maximum Large MBPS\s*=\s*(?P<v>{_NUM})\s*{_AT}")
_MAX_IOPS_RE = re.compile(rf"Maximum Small IOPS\s*=\s*(?P<v>{_NUM})\s*{_AT}")
_MIN_LAT_RE = re.compile(rf"Minimum Small Latency\s*=\s*(?P<v>{_NUM})\s*(?P<unit>usecs|us|msecs|ms)?\s*{_AT}")
_LAT_LINE_RE = re.compile(
    rf"Small (?P<kind>Read|Write) Latency:\s*avg\s*=\s*(?P<avg>{_NUM})\s*us,\s*min\s*=\s*(?P<min>{_NUM})\s*us,"
    rf"\s*max\s*=\s*(?P<max>{_NUM})\s*us,\s*std dev\s*=\s*(?P<stdev>{_NUM})\s*us\s*{_AT}"
)
_HIST_HEAD_RE = re.compile(rf"Latency Histogram\s*{_AT}")
_HIST_ROW_RE = re.compile(
    r"^\s*(?P<low>\d+)\s*-\s*(?P<high>\d+)\s*us\s*:\s*(?P<read>\d+)(?:\s*\(\s*(?P<rpct>[\d.]+)\s*%\s*\))?"
    r"\s+(?P<write>\d+)(?:\s*\(\s*(?P<wpct>[\d.]+)\s*%\s*\))?\s*$"
)
_SUMMARY_KV_RE = re.compile(r"^(?P<key>[A-Z][A-Za-z /]+?)\s*:\s*,?\s*(?P<value>.*?)\s*$")

#: ORION's own failures -> what the user does about them
_FAILURES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"Failed to allocate shared global region with large pages"),
        "ORION could not allocate its shared memory with huge pages: run with --set hugenotneeded=true "
        "(-hugenotneeded), or configure huge pages (vm.nr_hugepages and the memlock limit)",
    ),
    (
        re.compile(r"Failure in opening \.lun file|could not open .*\.lun", re.IGNORECASE),
        "ORION could not open its .lun file: give the testname without .lun (ORION adds it) and run it "
        "where <testname>.lun is (racperf writes it into the run's directory)",
    ),
    (
        re.compile(r"error while loading shared libraries"),
        "ORION cannot load Oracle's libraries: ORACLE_HOME and LD_LIBRARY_PATH=$ORACLE_HOME/lib must name "
        "the home ORION belongs to (--set oracle_home=DIR)",
    ),
    (re.compile(r"Error in input parameters"), "ORION refused its options (see orion -help)"),
)


class OrionError(ValueError):
    """ORION stopped with one of its own errors; the message names the fix."""


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


def _at(match: re.Match[str]) -> dict[str, int]:
    return {"small": int(match["small"]), "large": int(match["large"])}


def _release(version: str) -> tuple[int, ...]:
    """(major, minor) of a version string: 11.1.0.7.0 -> (11, 1); RDBMS_19.3.0.0.0DBRU_... -> (19, 3)."""
    match = re.search(r"(\d+)\.(\d+)", version or "")
    return (int(match[1]), int(match[2])) if match else ()


def failure(text: str) -> str | None:
    """ORION's own failure in its output, said with the fix; None when there is none."""
    for pattern, fix in _FAILURES:
        for line in text.splitlines():
            if pattern.search(line):
                return f"{line.strip()}: {fix}"
    return None


def parse_text(text: str) -> dict[str, Any]:
    """ORION's stdout or summary.txt -> the figures it holds (no "tool" key; may be empty)."""
    out: dict[str, Any] = {}
    lines = text.splitlines()
    latencies: list[dict[str, Any]] = []
    histogram: list[dict[str, Any]] = []
    in_histogram = False
    for index, line in enumerate(lines):
        if "version" not in out:
            match = _VERSION_RE.search(line)
            if match:
                out["version"] = match[1]
                continue
        if "testname" not in out:
            stamp = _STAMP_RE.match(line)
            if stamp and index < 6:
                out["testname"], out["run_stamp"] = stamp["name"], f"{stamp['date']}_{stamp['time']}"
                continue
        match = _ESTIMATE_RE.search(line)
        if match:
            out["estimate_s"] = float(match["n"]) * 60
            continue
        match = _MAX_MBPS_RE.search(line)
        if match:
            out["max_large_mbps"], out["max_large_mbps_at"] = _number(match["v"]), _at(match)
            in_histogram = False
            continue
        match = _MAX_IOPS_RE.search(line)
        if match:
            out["max_small_iops"], out["max_small_iops_at"] = _number(match["v"]), _at(match)
            in_histogram = False
            continue
        match = _MIN_LAT_RE.search(line)
        if match:
            unit = match["unit"] or ""
            value = float(match["v"])
            # 11.1 printed unitless milliseconds; 11.2 and later "usecs"
            out["min_small_latency_us"] = round(value * 1000, 3) if unit in ("", "ms", "msecs") else value
            out["min_small_latency_at"] = _at(match)
            out["min_small_latency_printed_unit"] = unit or "ms (unitless)"
            in_histogram = False
            continue
        match = _LAT_LINE_RE.search(line)
        if match:
            latencies.append(
                {
                    "kind": match["kind"].lower(),
                    **{k: _number(match[k]) for k in ("avg", "min", "max", "stdev")},
                    "at": _at(match),
                }
            )
            continue
        match = _HIST_HEAD_RE.search(line)
        if match:
            out["histogram_at"] = _at(match)
            in_histogram = True
            continue
        row = _HIST_ROW_RE.match(line)
        if row and (in_histogram or histogram):
            entry: dict[str, Any] = {
                "low_us": int(row["low"]),
                "high_us": int(row["high"]),
                "read": int(row["read"]),
                "write": int(row["write"]),
            }
            if row["rpct"] is not None:
                entry["read_cum_pct"] = float(row["rpct"])
            if row["wpct"] is not None:
                entry["write_cum_pct"] = float(row["wpct"])
            histogram.append(entry)
            continue
        kv = _SUMMARY_KV_RE.match(line.strip())
        if kv:
            key, kv_value = kv["key"].strip(), str(kv["value"])
            if key == "Test":
                out.setdefault("testname", kv_value)
            elif key == "Small IO size":
                out["size_small_kb"] = _first_int(kv_value)
            elif key == "Large IO size":
                out["size_large_kb"] = _first_int(kv_value)
            elif key == "IO Types":
                out["io_types"] = kv_value
            elif key == "Simulated Array Type":
                out["simulate"] = kv_value.lower()
            elif key == "Write":
                out["write_pct"] = _first_int(kv_value)
            elif key == "Cache Size":
                out["cache_size"] = kv_value
            elif key == "Duration for each Data Point":
                out["duration_s"] = _first_int(kv_value)
            elif key == "Small Columns":
                out["small_columns"] = _int_list(kv_value)
            elif key == "Large Columns":
                out["large_columns"] = _int_list(kv_value)
            elif key == "Total Data Points":
                out["total_data_points"] = _first_int(kv_value)
        if line.strip() == "Commandline:" and index + 1 < len(lines):
            out["commandline"] = lines[index + 1].strip()
        if line.strip().startswith("Name:") and "Size:" in line:
            match = re.match(r"^\s*Name:\s*(\S+)\s+Size:\s*(\d+)", line)
            if match:
                out.setdefault("luns", []).append({"name": match[1], "size_bytes": int(match[2])})
    if latencies:
        # the lines after "Maximum Small IOPS" (the loaded point) come first; the minimum
        # latency point's follow: both are kept in "latencies"
        out["latencies"] = latencies
        for kind in ("read", "write"):
            first = next((l for l in latencies if l["kind"] == kind), None)
            if first is not None:
                out[f"small_{kind}_latency_us"] = {k: first[k] for k in ("avg", "min", "max", "stdev", "at")}
    if histogram:
        out["histogram"] = histogram
    return out


def _first_int(text: str) -> int | None:
    match = re.search(r"\d+", text)
    return int(match[0]) if match else None


def _int_list(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


def parse_csv(text: str) -> dict[str, Any]:
    """One of ORION's matrices -> ``{"small_loads", "large_loads", "values"}`` (``values[i][j]``
    at large_loads[i], small_loads[j]; None where not tested). Any text before the
    ``Large/Small`` row is skipped. ValueError when there is no such row."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.strip().lower().startswith("large/small")), None)
    if start is None:
        raise ValueError("not an ORION matrix: no 'Large/Small' row")
    header = [c.strip() for c in lines[start].split(",")]
    small_loads = [int(c) for c in header[1:] if c != ""]
    large_loads: list[int] = []
    values: list[list[float | None]] = []
    for line in lines[start + 1 :]:
        cells = [c.strip() for c in line.split(",")]
        if not cells or not cells[0]:
            if large_loads:
                break
            continue
        try:
            large = int(cells[0])
        except ValueError:
            break
        row: list[float | None] = []
        for j in range(len(small_loads)):
            cell = cells[j + 1] if j + 1 < len(cells) else ""
            row.append(float(cell) if cell else None)
        large_loads.append(large)
        values.append(row)
    return {"small_loads": small_loads, "large_loads": large_loads, "values": values}


def _lat_in_us(matrix: dict[str, Any], version: str | None) -> dict[str, Any]:
    """lat.csv is in ms in 11.1 and in us from 11.2. Without a version, a matrix whose every
    value is below 50 is taken as ms (no storage answers 8K reads in under 50 us on average
    from ORION's small-I/O loads, and none takes 50 ms)."""
    release = _release(version or "")
    cells = [v for row in matrix["values"] for v in row if v is not None]
    if release:
        in_ms = release < (11, 2)
        how = f"version {version}"
    else:
        in_ms = bool(cells) and max(cells) < 50
        how = "guessed from the values (no version known)"
    factor = 1000.0 if in_ms else 1.0
    values = [[None if v is None else round(v * factor, 3) for v in row] for row in matrix["values"]]
    return {**matrix, "values": values, "unit": "us", "printed_unit": "ms" if in_ms else "us", "unit_from": how}


_FILE_KINDS = ("summary.txt", "iops.csv", "mbps.csv", "lat.csv", "hist.txt", "trace.txt")
_RESULT_FILE_RE = re.compile(
    r"^(?P<prefix>.+?_\d{8}_\d{4})_(?P<kind>summary\.txt|iops\.csv|mbps\.csv|lat\.csv|"
    r"hist\.txt|trace\.txt)$"
)


def _group_files(files: Mapping[str, str]) -> tuple[str | None, dict[str, str]]:
    """(the newest <testname>_<date>_<time> prefix, kind -> text of its files)."""
    groups: dict[str, dict[str, str]] = {}
    for file_name, text in files.items():
        match = _RESULT_FILE_RE.match(os.path.basename(file_name))
        if match:
            groups.setdefault(match["prefix"], {})[match["kind"]] = text
    if not groups:
        return None, {}
    prefix = max(groups, key=lambda p: (p[-13:], p))
    return prefix, groups[prefix]


def parse_result_files(output: str, files: Mapping[str, str]) -> dict[str, Any]:
    """A finished run: ORION's stdout and the result files it wrote (name -> text) -> the result
    (see :func:`parse_output`). ORION's own failures give ``{"error": ...}`` naming the fix."""
    result: dict[str, Any] = {"tool": "orion"}
    prefix, kinds = _group_files(files)
    from_stdout = parse_text(output or "")
    from_summary = parse_text(kinds["summary.txt"]) if "summary.txt" in kinds else {}
    merged = {**from_stdout, **{k: v for k, v in from_summary.items() if v not in (None, [], {})}}
    if "hist.txt" in kinds and "histogram" not in merged:
        hist = parse_text(kinds["hist.txt"])
        for key in ("histogram", "histogram_at"):
            if key in hist:
                merged[key] = hist[key]
    version = merged.get("version")
    order = [
        "version",
        "testname",
        "run_stamp",
        "max_large_mbps",
        "max_large_mbps_at",
        "max_small_iops",
        "max_small_iops_at",
        "min_small_latency_us",
        "min_small_latency_at",
        "small_read_latency_us",
        "small_write_latency_us",
        "histogram_at",
        "histogram",
    ]
    for key in order:
        if key in merged:
            result[key] = merged[key]
    if prefix is not None:
        result.setdefault("testname", prefix[:-14])
        result.setdefault("run_stamp", prefix[-13:])
    for kind in ("iops", "mbps", "lat"):
        text = kinds.get(f"{kind}.csv")
        if text is None:
            continue
        try:
            matrix = parse_csv(text)
        except ValueError:
            continue
        result[kind] = _lat_in_us(matrix, version) if kind == "lat" else matrix
    for key, value in merged.items():
        if key not in result and key not in ("estimate_s",):
            result[key] = value
    if "estimate_s" in merged:
        result["orion_estimate_s"] = merged["estimate_s"]
    if prefix is not None:
        result["files"] = sorted(f"{prefix}_{kind}" for kind in kinds)
    problem = failure(output or "") or failure(kinds.get("summary.txt", "")) or failure(kinds.get("trace.txt", ""))
    if problem:
        result["error"] = problem
    return result


_FIGURES = ("max_large_mbps", "max_small_iops", "min_small_latency_us", "iops", "mbps", "lat")


def parse_output(text: str) -> dict[str, Any]:
    """ORION's captured stdout or a summary.txt -> ``{"tool": "orion", "version", "testname",
    "max_large_mbps", "max_large_mbps_at": {"small", "large"}, "max_small_iops",
    "max_small_iops_at", "min_small_latency_us", "min_small_latency_at",
    "small_read_latency_us": {"avg", "min", "max", "stdev", "at"}, "small_write_latency_us",
    "histogram": [{"low_us", "high_us", "read", "write"}], ...}``; with the result files
    (:func:`parse_result_files`, :func:`parse_path`) also ``"iops"``, ``"mbps"``, ``"lat"``.
    OrionError (a ValueError) for ORION's own failures, naming the fix, and for text that is
    not ORION's."""
    result = parse_result_files(text, {})
    if "error" in result:
        raise OrionError(result["error"])
    if not any(key in result for key in _FIGURES) and "version" not in result:
        raise ValueError(
            "not ORION output: no 'ORION' banner and no 'Maximum Large MBPS' / 'Maximum Small "
            "IOPS' / 'Minimum Small Latency' line"
        )
    return result


def parse_path(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``racperf parse orion PATH``: a run directory (its result files), a result file (its
    siblings of the same test found beside it), a CSV, or captured stdout."""
    target = Path(path)
    if target.is_dir():
        files = {
            p.name: p.read_text(errors="replace")
            for p in sorted(target.iterdir())
            if p.is_file() and _RESULT_FILE_RE.match(p.name)
        }
        if not files:
            raise ValueError(f"{target}: no ORION result files (<testname>_<yyyymmdd>_<hhmm>_summary.txt ...)")
        stdout = target / "stdout.txt"
        result = parse_result_files(stdout.read_text(errors="replace") if stdout.is_file() else "", files)
    else:
        text = target.read_text(errors="replace")
        match = _RESULT_FILE_RE.match(target.name)
        if match:
            files = {
                p.name: p.read_text(errors="replace")
                for p in sorted(target.parent.glob(f"{glob_escape(match['prefix'])}_*"))
                if p.is_file() and _RESULT_FILE_RE.match(p.name)
            }
            files[target.name] = text
            result = parse_result_files("", files)
        elif target.suffix.lower() == ".csv":
            matrix = parse_csv(text)
            kind = "lat" if target.stem.endswith("lat") else "mbps" if target.stem.endswith("mbps") else "iops"
            return {"tool": "orion", kind: _lat_in_us(matrix, None) if kind == "lat" else matrix}
        else:
            return parse_output(text)
    if "error" in result:
        raise OrionError(result["error"])
    return result


def glob_escape(text: str) -> str:
    return glob.escape(text)


def parse_result(output: str) -> dict[str, Any]:
    """Stdout only (the result files come through :func:`parse_result_files`)."""
    return parse_result_files(output, {})


def succeeded(result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
    """Judged by ORION's output: its own errors (with the fix), then its figures."""
    if not result:
        return False, f"no ORION output (exit status {exit_status})"
    if result.get("error"):
        return False, str(result["error"])
    if not any(key in result for key in _FIGURES):
        return False, f"ORION printed no results (exit status {exit_status})"
    if exit_status not in (0, None):
        return False, f"orion exited with status {exit_status}"
    figures = []
    if "max_small_iops" in result:
        figures.append(f"max {result['max_small_iops']} IOPS")
    if "max_large_mbps" in result:
        figures.append(f"max {result['max_large_mbps']} MB/s")
    if "min_small_latency_us" in result:
        figures.append(f"min latency {result['min_small_latency_us']} us")
    return True, ", ".join(figures) or "finished"


# --------------------------------------------------------------------------- live


#: read on ORION's own host (the supervisor runs a companion where the benchmark runs, local or
#: over SSH) once a second: the uptime on the first line, then the diskstats. Its answers are
#: not kept as raw output (the whole file each second; the samples keep the LUNs' figures),
#: its failures are. One loop for the run (``long_lived``): on a node one channel, not one a
#: second, so the answers come every second there too.
DISKSTATS_COMPANION = Companion(
    name="diskstats",
    argv=["cat", "/proc/uptime", "/proc/diskstats"],
    interval_s=1.0,
    timeout_s=10.0,
    first_after_s=0.5,
    keep_output=False,
    long_lived=True,
    # the whole diskstats of a node with thousands of paths (10,000 devices: about 1.5 MB)
    max_output_bytes=8 << 20,
)


def live_model(config: Mapping[str, Any] | OrionConfig, luns: list[LunDevices]) -> OrionLiveModel:
    """The live model of a run (tools/orion/live.py) with its planned matrix and I/O sizes."""
    try:
        cfg = _config(config)
        points = planned_matrix(cfg)
        size_small = int(cfg.effective("size_small") or 8)
        size_large = int(cfg.effective("size_large") or 1024)
        streams = int(cfg.num_streamIO or 4) if cfg.effective("type") == "seq" else 1
    except ValueError:
        points, size_small, size_large, streams = [], 8, 1024, 1
    return OrionLiveModel(luns, points, size_small, size_large, streams)


class OrionStreamParser:
    """ORION's stdout -> a planned-duration sample, then progress samples over time.

    ORION says only how long it will take, so progress is time: ``planned_s`` is the larger of
    ORION's own estimate and :func:`planned_duration_s` (ORION leaves out cache warming);
    ``progress_pct`` = elapsed / planned (held below 100 until the results are printed), and
    the data point running is read off the planned schedule from the time ORION printed its
    estimate, right before its first point (an estimate: ORION does not say).
    ``tick()`` (called by the supervisor while ORION is silent) gives one sample per
    :data:`PROGRESS_INTERVAL_S`. ``clock`` is injectable for tests.

    Each answer of the :data:`DISKSTATS_COMPANION` (the LUNs' diskstats read on ORION's host)
    goes into an :class:`~racperf_tui.tools.orion.live.OrionLiveModel` at the data point
    running, and its sample (a progress sample) carries the model's inference in
    ``extra["orion_live"]`` (:func:`~racperf_tui.tools.orion.live.recorded`): kept in the store
    with the run, so a live view opened at any time draws every point done so far. The LUNs'
    devices are resolved once, at the first answer, in sysfs under ``root`` (racperf's own
    host: on another node the LUN -> device names are this host's, see docs/ORION.md).
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        clock: Any = time.monotonic,
        interval_s: float = PROGRESS_INTERVAL_S,
        root: str | os.PathLike[str] = "/",
    ) -> None:
        self._clock = clock
        self._started = clock()
        #: seconds after the start at which ORION printed its estimate, right before its first
        #: data point: the schedule is read from there (on a node ORION starts seconds after
        #: the supervisor, and a schedule read from the supervisor's start runs ahead of it)
        self._points_from = 0.0
        self._interval_s = interval_s
        self._last_tick: float | None = None
        self._planned_model_s: float | None = None
        self._schedule: list[DataPoint] = []
        self._config: Mapping[str, Any] = dict(config or {})
        self._root = Path(root)
        self._live: OrionLiveModel | None = None
        self._dm_names: dict[str, str] = {}
        self._last_snapshot: DiskSnapshot | None = None
        try:
            cfg = _config(config or {})
            self._schedule = schedule(cfg)
            self._planned_model_s = planned_duration_s(cfg)
            self._luns = list(cfg.lun)
        except ValueError:
            self._luns = []
        self.planned_s: float | None = None
        self.orion_estimate_s: float | None = None
        self.done = False
        self.failed: str | None = None
        self.version: str | None = None
        self.testname: str | None = None

    def _elapsed(self) -> float:
        return max(0.0, self._clock() - self._started)

    def _point(self, elapsed: float) -> tuple[int, DataPoint | None]:
        """(1-based data point, the point) at ``elapsed`` on the schedule. ORION's estimate is
        its data points' time plus one minute: only when that part is longer than the model's
        (ORION steps loads the model does not know) is the schedule stretched to it."""
        if not self._schedule or not self.planned_s:
            return 0, None
        model_total = sum(p.length_s for p in self._schedule) or 1.0
        points_s = (self.orion_estimate_s or 0.0) - ORION_ESTIMATE_EXTRA_S
        at = max(0.0, elapsed - self._points_from) * model_total / max(model_total, points_s)
        for index, point in enumerate(self._schedule):
            if at < point.start_s + point.length_s:
                return index + 1, point
        return len(self._schedule), self._schedule[-1]

    def _sample(self, elapsed: float, phase: str) -> Sample:
        planned = float(self.planned_s or 0.0)
        if phase == "done":
            progress, eta = 100.0, 0.0
        else:
            progress = min(99.9, 100.0 * elapsed / planned) if planned else 0.0
            eta = max(0.0, planned - elapsed)
        number, point = self._point(elapsed) if phase != "done" else (len(self._schedule), None)
        metrics = {
            "planned_s": round(planned, 3),
            "elapsed_s": round(elapsed, 3),
            "progress_pct": round(progress, 2),
            "eta_s": round(eta, 3),
        }
        if self._schedule:
            metrics["data_point"] = float(number)
            metrics["data_points"] = float(len(self._schedule))
        # the live view's progress bar and ETA read these two from extra (runs_data.LivePoller)
        extra: dict[str, Any] = {
            "phase": phase,
            "estimated": phase != "done",
            "progress_pct": metrics["progress_pct"],
            "eta_s": metrics["eta_s"],
        }
        if point is not None:
            extra["small"], extra["large"] = point.small, point.large
        if self.orion_estimate_s is not None:
            extra["orion_estimate_s"] = self.orion_estimate_s
        if self._planned_model_s is not None:
            extra["planned_model_s"] = round(self._planned_model_s, 3)
        if self.testname:
            extra["testname"] = self.testname
        return Sample(t=elapsed, metrics=metrics, extra=extra)

    def feed(self, line: str) -> list[Sample]:
        if self.failed or self.done:
            return []
        if self.version is None:
            match = _VERSION_RE.search(line)
            if match:
                self.version = match[1]
                return []
        if self.testname is None:
            stamp = _STAMP_RE.match(line)
            if stamp:
                self.testname = stamp["name"]
                return []
        problem = failure(line)
        if problem:
            self.failed = problem
            return []
        match = _ESTIMATE_RE.search(line)
        if match and self.planned_s is None:
            self.orion_estimate_s = float(match["n"]) * 60
            self.planned_s = max(self.orion_estimate_s, self._planned_model_s or 0.0)
            elapsed = self._elapsed()
            self._last_tick = elapsed
            self._points_from = elapsed
            return [self._sample(elapsed, "planned")]
        if self.planned_s is not None and (
            _MAX_MBPS_RE.search(line) or _MAX_IOPS_RE.search(line) or _MIN_LAT_RE.search(line)
        ):
            self.done = True
            sample = self._sample(self._elapsed(), "done")
            if self._live is not None:
                self._live.finish()  # the last point's window closes at the last answer
                sample.extra[RECORD_KEY] = recorded(self._live, self._dm_names)
            return [sample]
        return []

    def companion_output(self, name: str, output: str, exit_status: int) -> list[Sample]:
        """An answer of the diskstats companion: the LUNs' load into the live model at the
        data point running now; a progress sample carrying the model's inference."""
        if name != DISKSTATS_COMPANION.name or self.failed or self.done:
            return []
        if self._live is None:
            self._live = live_model(self._config, [lun_devices(lun, self._root) for lun in self._luns])
            self._dm_names = dm_names(self._root)
        snapshot = snapshot_from_text(output, time.time(), "companion diskstats", self._last_snapshot)
        if not snapshot.uptime_cs or not snapshot.devices:
            # a failed read (cat missing, /proc unreadable): the model keeps its last state,
            # the record says why once in the run's raw output (companion:diskstats)
            return []
        self._last_snapshot = snapshot
        elapsed = self._elapsed()
        number = self._point(elapsed)[0] if self.planned_s else 0
        self._live.observe(snapshot, number)
        self._last_tick = elapsed  # this sample is the second's progress sample too
        sample = self._sample(elapsed, "running")
        sample.extra[RECORD_KEY] = recorded(self._live, self._dm_names)
        return [sample]

    def tick(self) -> list[Sample]:
        """A progress sample when PROGRESS_INTERVAL_S has passed since the last one."""
        if self.failed or self.done:
            return []
        elapsed = self._elapsed()
        if self.planned_s is None:
            # no estimate line after a while (a format racperf does not know): the model's
            if self._planned_model_s is None or elapsed < 10.0:
                return []
            self.planned_s = self._planned_model_s
        if self._last_tick is not None and elapsed - self._last_tick < self._interval_s:
            return []
        self._last_tick = elapsed
        return [self._sample(elapsed, "running")]

    def finish(self) -> list[Sample]:
        """ORION ended without its results (stopped, failed): the points measured so far are
        closed and recorded, the last one's window at the last answer."""
        if self.done or self._live is None or self._live.finished:
            return []
        self._live.finish()
        sample = self._sample(self._elapsed(), "ended")
        sample.extra[RECORD_KEY] = recorded(self._live, self._dm_names)
        return [sample]


def stream_parser(config: Mapping[str, Any]) -> OrionStreamParser:
    return OrionStreamParser(config)


# --------------------------------------------------------------------------- description

_HELP = {
    "run": "workload: simple (small, then large I/O, alone), normal (their combinations), oltp (small I/O "
    "at increasing loads: max IOPS), dss (large I/O at increasing loads: max MB/s), advanced (the "
    "options below)",
    "testname": "prefix of ORION's files (<testname>.lun, <testname>_<date>_*); without .lun",
    "lun": "a LUN ORION tests (a device or a file), one per --set lun=... (in the form: several, separated by "
    "spaces; the devices racperf sees are suggested, right arrow takes one)",
    "num_disks": "physical disks behind the LUNs: sets the range of loads (default: the number of LUNs)",
    "size_small": "small I/O size in KB (advanced; default 8)",
    "size_large": "large I/O size in KB (advanced; default 1024)",
    "type": "large I/O: rand or seq (advanced; default rand)",
    "num_streamIO": "outstanding I/Os per sequential stream (advanced, type=seq; default 4)",
    "simulate": "LUN layout for large I/O: concat or raid0 (advanced; with num_disks)",
    "write": "percent of I/Os that write (advanced; default 0). WRITES OVER EVERY LUN",
    "cache_size": "the array's cache in MB (0: no cache warming)",
    "duration": "seconds per data point (advanced; default 60)",
    "num_small": "outstanding small I/Os (advanced; matrix point, col, max)",
    "num_large": "outstanding large I/Os or streams (advanced; matrix point, row, max)",
    "matrix": "data points: basic, detailed, point, col, row, max (advanced; default basic)",
    "hugenotneeded": "run without huge pages (-hugenotneeded)",
    "verbose": "progress in ORION's trace file (-verbose)",
    "storax": "ORION's I/O layer (-storax), e.g. skgfr",
    "oracle_home": "the database or grid home holding bin/orion (remembered; default: $ORACLE_HOME, "
    "/etc/oratab, the grid home)",
    "orion": "the orion binary itself (a standalone download)",
}
#: a choice's default is ORION's own (a form shows it; an option left at it is not passed)
OPTIONS: tuple[ToolOption, ...] = (
    ToolOption("run", "choice", "simple", _HELP["run"], RUNS),
    ToolOption("testname", "str", DEFAULT_TESTNAME, _HELP["testname"]),
    ToolOption("lun", "path", None, _HELP["lun"], repeatable=True),
    ToolOption("num_disks", "int", None, _HELP["num_disks"]),
    ToolOption("size_small", "int", None, _HELP["size_small"]),
    ToolOption("size_large", "int", None, _HELP["size_large"]),
    ToolOption("type", "choice", "rand", _HELP["type"], TYPES),
    ToolOption("num_streamIO", "int", None, _HELP["num_streamIO"]),
    ToolOption("simulate", "choice", "concat", _HELP["simulate"], SIMULATES),
    ToolOption("write", "int", None, _HELP["write"]),
    ToolOption("cache_size", "int", None, _HELP["cache_size"]),
    ToolOption("duration", "int", None, _HELP["duration"]),
    ToolOption("num_small", "int", None, _HELP["num_small"]),
    ToolOption("num_large", "int", None, _HELP["num_large"]),
    ToolOption("matrix", "choice", "basic", _HELP["matrix"], MATRICES),
    ToolOption("hugenotneeded", "bool", False, _HELP["hugenotneeded"]),
    ToolOption("verbose", "bool", False, _HELP["verbose"]),
    ToolOption("storax", "str", None, _HELP["storax"]),
    ToolOption("oracle_home", "path", "", _HELP["oracle_home"]),
    ToolOption("orion", "path", "", _HELP["orion"]),
)
METRICS = (
    MetricSpec("progress_pct", "progress", "%", decimals=1, chart="progress"),
    MetricSpec("data_point", "data point", "", decimals=0),
    MetricSpec("data_points", "data points", "", decimals=0),
    MetricSpec("elapsed_s", "elapsed", "min", divisor=60.0, decimals=1, chart="time"),
    MetricSpec("eta_s", "ETA", "min", divisor=60.0, decimals=1, chart="time"),
    MetricSpec("planned_s", "planned", "min", divisor=60.0, decimals=1, chart="time"),
)
DESCRIPTION = ToolDescription(
    name=name,
    summary="Oracle's storage calibration (ORION): IOPS, MB/s and latency over a matrix of small and large I/O loads",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
    live_panels=("orion_points",),
    result_panels=("orion_matrix",),
)


class OrionTool:
    """The ORION :class:`racperf_tui.tools.base.Tool`, on the run contract."""

    name = "orion"
    description = DESCRIPTION
    install_hint = install_hint
    config_class = OrionConfig
    #: ORION prints its failures on stdout, libraries' on stderr: both are read
    merge_stderr = True
    stop_grace_s = 5.0
    #: the run's record of protections (core.supervisor)
    option_guard = "options: ORION's own, each validated by racperf (no free-form arguments)"

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
        return invocation(config, run_dir, host)

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        return build_argv(config)

    def validate(self, config: Mapping[str, Any]) -> list[str]:
        try:
            return _config(config).problems()
        except ValueError as exc:
            return [str(exc)]

    def planned_duration_s(self, config: Mapping[str, Any]) -> float:
        return planned_duration_s(config)

    def stream_parser(self, config: Mapping[str, Any]) -> OrionStreamParser:
        return OrionStreamParser(config)

    def parse_result(self, output: str) -> dict[str, Any]:
        return parse_result(output)

    def parse_result_files(self, output: str, files: dict[str, str]) -> dict[str, Any]:
        return parse_result_files(output, files)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        return succeeded(result, exit_status)

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        return hard_limit_s(config)

    def tool_version(self, argv: list[str], host: Host | None = None) -> str | None:
        return tool_version(argv, host)


TOOL = OrionTool()

__all__ = [
    "TOOL",
    "OrionConfig",
    "OrionError",
    "OrionStreamParser",
    "DataPoint",
    "find_oracle_home",
    "hard_limit_s",
    "invocation",
    "oracle_home_candidates",
    "orion_estimate_s",
    "parse_csv",
    "parse_output",
    "parse_path",
    "parse_result_files",
    "planned_duration_s",
    "planned_matrix",
    "remember_oracle_home",
    "schedule",
    "succeeded",
]
