"""ORION's config: every option of the binary, named after ORION's own, its normalising and
its validation (each problem naming the option and the fix), and what each ``-run`` level fixes."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from racperf_tui.tools.base import OptionsConfig

RUNS = ("simple", "normal", "advanced", "dss", "oltp")
TYPES = ("rand", "seq")
SIMULATES = ("concat", "raid0")
MATRICES = ("basic", "detailed", "point", "col", "row", "max")
#: ORION's defaults (the -help text and Oracle's documentation)
DEFAULT_TESTNAME = "orion"
DEFAULT_DURATION_S = 60
DSS_DURATION_S = 240
#: sanity bounds racperf applies (ORION's own are not published): what a real test can use
MAX_NUM_DISKS = 4096
MAX_SIZE_SMALL_KB = 1024
MAX_SIZE_LARGE_KB = 65536
MAX_DURATION_S = 86400
MAX_OUTSTANDING = 100000
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


def orion_config(config: Mapping[str, Any] | OrionConfig) -> OrionConfig:
    if isinstance(config, OrionConfig):
        return config
    return OrionConfig.from_mapping(
        {k: v for k, v in config.items() if k not in ("destructive", "destructive_targets", "hard_limit_s")}
    )
