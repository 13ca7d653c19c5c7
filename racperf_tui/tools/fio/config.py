"""fio's form: :class:`FioConfig` (one job as the form and ``--set`` edit it), its validation
(every problem named by field), the command line it amounts to, and the presets.

What runs is decided later, by fio's own reading of this command line
(:mod:`racperf_tui.tools.fio.plan`); this module only checks what a user typed.
"""

from __future__ import annotations

import copy
import math
import os
import re
import shlex
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from racperf_tui.core.contract.tool import Preset
from racperf_tui.tools.fio.policy import engine_refusal
from racperf_tui.tools.fio.scratch import default_scratch_target, in_scratch_dir, target_kind

#: fio's rw= values, and which of them write (trim destroys data too)
RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite")
READ_ONLY_RW = frozenset({"read", "randread"})
MIXED_RW = frozenset({"rw", "readwrite", "randrw"})

#: I/O engines the form offers (the ones racperf allows; see fio_policy)
IOENGINES = ("psync", "sync", "pvsync", "pvsync2", "vsync", "libaio", "io_uring", "posixaio", "mmap", "null")

DEFAULT_HARD_LIMIT_S = 3600.0
_SIZE_RE = re.compile(r"^\d+(\.\d+)?\s*([kmgtpe]i?b?|b)?$", re.I)


def as_int(value: Any) -> int | None:
    """An int from an int or a decimal string (UI form fields are strings), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    return None


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("1", "0", "true", "false", "yes", "no", "on", "off"):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return None


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _is_size(text: str) -> bool:
    return bool(_SIZE_RE.match(text.strip())) and not re.match(r"^0+(\.0+)?\s*[a-z]*$", text.strip(), re.I)


@dataclass
class FioConfig:
    """One fio job as the form edits it. Values may arrive as strings from the UI;
    :meth:`validate` says which field is wrong and why."""

    target: str = field(default_factory=default_scratch_target)
    size: str = "256M"
    runtime_s: int = 60
    time_based: bool = True
    ramp_time_s: int = 0
    bs: str = "8k"
    rw: str = "randrw"
    rwmixread: int = 70
    ioengine: str = "psync"
    iodepth: int = 1
    numjobs: int = 1
    direct: bool = True
    group_reporting: bool = True
    extra_args: list[str] = field(default_factory=list)
    job_file: str | None = None
    status_interval_s: float = 1
    destructive: bool = False
    #: custom mode: the command line is extra_args (+ job_file) only, no structured fields
    custom: bool = False
    name: str = "racperf"

    # -- conversion ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (the store's run config)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioConfig:
        """From a dict; unknown keys are ignored. A dict carrying only raw fio arguments
        (``{"extra_args": [...]}``, optionally job_file / destructive) is custom mode."""
        known = {f.name for f in fields(cls)}
        # None means "not given" (racperf run passes target=None when --target is absent)
        kwargs = {k: copy.deepcopy(v) for k, v in data.items() if k in known and v is not None}
        structured = known - {"extra_args", "job_file", "destructive", "custom", "status_interval_s", "name", "target"}
        if (
            "custom" not in kwargs
            and not (structured & set(kwargs))
            and (kwargs.get("extra_args") or kwargs.get("job_file"))
        ):
            kwargs["custom"] = True
        if kwargs.get("custom") and "target" not in kwargs:
            kwargs["target"] = ""  # custom mode: the target is whatever the fio arguments say
        if isinstance(kwargs.get("extra_args"), str):
            kwargs["extra_args"] = shlex.split(kwargs["extra_args"])
        if kwargs.get("job_file") == "":
            kwargs["job_file"] = None
        return cls(**kwargs)

    # -- validation ----------------------------------------------------------------------

    def validate(self) -> list[str]:
        """Errors, one per problem, each naming the field: empty when the config is usable."""
        errors: list[str] = []
        errors.extend(self._validate_common())
        if self.custom:
            if not self.extra_args and not self.job_file:
                errors.append("extra_args: custom mode needs fio options or a job file")
        else:
            errors.extend(self._validate_structured())
        if self.job_file and not os.path.isfile(self.job_file):
            errors.append(f"job_file: {self.job_file} does not exist or is not a regular file")
        # fio's options themselves are judged when the run is planned (fio resolves them)
        return errors

    def _validate_common(self) -> list[str]:
        errors = []
        interval = as_float(self.status_interval_s)
        if interval is None or not 0.1 <= interval <= 3600:
            errors.append(
                f"status_interval_s: {self.status_interval_s!r} is not a number of seconds between 0.1 and 3600"
            )
        if not isinstance(self.extra_args, list) or not all(isinstance(a, str) for a in self.extra_args):
            errors.append("extra_args: must be a list of strings (fio options like --norandommap)")
        if self.job_file is not None and not isinstance(self.job_file, str):
            errors.append(f"job_file: {self.job_file!r} is not a path")
        if as_bool(self.destructive) is None:
            errors.append(f"destructive: {self.destructive!r} is not true or false")
        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", self.name or ""):
            errors.append(f"name: {self.name!r} is not a job name (letters, digits, _ . -)")
        return errors

    def _validate_structured(self) -> list[str]:
        errors = []
        target = str(self.target or "").strip()
        kind = target_kind(target)
        if not target:
            errors.append("target: empty; give a file, a directory or a block device")
        elif kind == "other":
            errors.append(f"target: {target} is neither a regular file, a directory nor a block device")
        elif kind == "missing":
            parent = os.path.dirname(os.path.abspath(target))
            if not in_scratch_dir(target) and not os.path.isdir(parent):
                errors.append(f"target: directory {parent} does not exist")
        size = str(self.size or "").strip()
        if size:
            if not (_is_size(size) or re.fullmatch(r"\d{1,3}%", size)):
                errors.append(f"size: {self.size!r} is not a size like 256m, 1g, 10% (0 is not allowed)")
        elif kind in ("missing", "directory"):
            errors.append("size: needed for a new file or a directory (e.g. 256m)")
        runtime = as_int(self.runtime_s)
        time_based = as_bool(self.time_based)
        if time_based is None:
            errors.append(f"time_based: {self.time_based!r} is not true or false")
        if runtime is None or runtime < 0 or runtime > 7 * 86400:
            errors.append(f"runtime_s: {self.runtime_s!r} is not a whole number of seconds (0 to 604800)")
        elif time_based and runtime == 0:
            errors.append("runtime_s: a time_based run needs a runtime of at least 1 s")
        ramp = as_int(self.ramp_time_s)
        if ramp is None or ramp < 0 or ramp > 86400:
            errors.append(f"ramp_time_s: {self.ramp_time_s!r} is not a whole number of seconds (0 to 86400)")
        bs = str(self.bs or "").strip()
        parts = bs.split(",") if bs else [""]
        if not all(_is_size(p) for p in parts if p.strip()) or not any(p.strip() for p in parts):
            errors.append(f"bs: {self.bs!r} is not a size like 4k, 8k, 1m")
        if self.rw not in RW_MODES:
            errors.append(f"rw: {self.rw!r} is not one of {', '.join(RW_MODES)}")
        mix = as_int(self.rwmixread)
        if mix is None or not 0 <= mix <= 100:
            errors.append(f"rwmixread: {self.rwmixread!r} is not a percentage from 0 to 100")
        engine = str(self.ioengine or "")
        refusal = engine_refusal(engine) if engine not in IOENGINES else None
        if refusal and not refusal.startswith("is not one of"):
            errors.append(f"ioengine: {engine!r} {refusal}; refused")
        elif engine not in IOENGINES:
            errors.append(f"ioengine: {engine!r} is not one of {', '.join(IOENGINES)} (other engines: use custom mode)")
        depth = as_int(self.iodepth)
        if depth is None or not 1 <= depth <= 65536:
            errors.append(f"iodepth: {self.iodepth!r} is not a whole number from 1 to 65536")
        jobs = as_int(self.numjobs)
        if jobs is None or not 1 <= jobs <= 4096:
            errors.append(f"numjobs: {self.numjobs!r} is not a whole number from 1 to 4096")
        for name in ("direct", "group_reporting"):
            if as_bool(getattr(self, name)) is None:
                errors.append(f"{name}: {getattr(self, name)!r} is not true or false")
        return errors

    # -- command line --------------------------------------------------------------------

    def status_interval_text(self) -> str:
        """``--status-interval``'s value: fio parses "0.5" as 0 (no dumps at all), so a
        sub-second interval gets a unit."""
        interval = as_float(self.status_interval_s) or 1.0
        if not math.isfinite(interval) or interval <= 0:
            interval = 1.0  # unvalidated preview: validate() reports the bad value
        return f"{int(interval)}" if interval.is_integer() else f"{round(interval * 1000)}ms"

    def argv(self) -> list[str]:
        """The fio command line the user's config amounts to (the form's preview). What runs
        is fio on racperf's job file written from fio's own reading of this (see
        :meth:`racperf_tui.tools.fio.FioTool.invocation`)."""
        user_keys = {_norm(a.lstrip("-").split("=", 1)[0]) for a in _user_args(self) if a.startswith("-")}
        argv = ["fio"]
        if "output_format" not in user_keys:
            argv.append("--output-format=json+")
        if "status_interval" not in user_keys:
            argv.append(f"--status-interval={self.status_interval_text()}")
        if self.is_read_only() and "readonly" not in user_keys:
            argv.append("--readonly")
        return argv + self.fio_args()

    def fio_args(self) -> list[str]:
        """The job as fio options and job files, without racperf's output options: what fio
        is asked to resolve."""
        user_args = _user_args(self)
        user_keys = {_norm(a.lstrip("-").split("=", 1)[0]) for a in user_args if a.startswith("-")}
        argv: list[str] = []
        if self.custom:
            argv.extend(user_args)
            target = str(self.target or "").strip()
            if target and not self.job_file and not user_keys & {"filename", "directory"}:
                # `racperf run fio --target T -- ARGS`: T is the file/dir/device fio works on
                kind = target_kind(target)
                argv.append(
                    f"--directory={target}" if kind == "directory" else f"--filename={_escape_filename(target)}"
                )
            if self.job_file:
                argv.append(self.job_file)
            return argv
        target = str(self.target).strip()
        argv.append(f"--name={self.name}")
        if target_kind(target) == "directory":
            argv.append(f"--directory={target}")
        else:
            argv.append(f"--filename={_escape_filename(target)}")
        argv.append(f"--rw={self.rw}")
        if self.rw in MIXED_RW:
            argv.append(f"--rwmixread={as_int(self.rwmixread)}")
        argv += [
            f"--bs={str(self.bs).strip()}",
            f"--ioengine={self.ioengine}",
            f"--iodepth={as_int(self.iodepth)}",
            f"--numjobs={as_int(self.numjobs)}",
            f"--direct={1 if as_bool(self.direct) else 0}",
        ]
        if str(self.size or "").strip():
            argv.append(f"--size={str(self.size).strip()}")
        runtime = as_int(self.runtime_s) or 0
        if runtime > 0:
            argv.append(f"--runtime={runtime}")
        if as_bool(self.time_based):
            argv.append("--time_based")
        ramp = as_int(self.ramp_time_s) or 0
        if ramp > 0:
            argv.append(f"--ramp_time={ramp}")
        if as_bool(self.group_reporting):
            argv.append("--group_reporting")
        argv.extend(user_args)
        return argv

    def command_preview(self) -> str:
        """The exact fio command line, shell-quoted, as the form shows it."""
        return shlex.join(self.argv())

    def is_read_only(self) -> bool:
        """True when the form alone says the job only reads (no extra options, no job file):
        a preview's guess. What a run does is decided by fio's own reading (the plan)."""
        return not self.custom and not _user_args(self) and not self.job_file and str(self.rw) in READ_ONLY_RW

    def hard_limit_s(self) -> float:
        """Wall-clock limit from the form's runtime and ramp (the plan's is exact)."""
        if self.custom or not (as_int(self.runtime_s) or 0):
            return DEFAULT_HARD_LIMIT_S
        return hard_limit(float(as_int(self.runtime_s) or 0) + float(as_int(self.ramp_time_s) or 0))


def hard_limit(seconds: float) -> float:
    """runtime + ramp + 10 % + 60 s for setup and the final report."""
    return seconds * 1.1 + 60.0


def _user_args(cfg: FioConfig) -> list[str]:
    """The config's extra fio arguments, whatever junk a form may have put there."""
    args = cfg.extra_args
    return [a for a in args if isinstance(a, str)] if isinstance(args, (list, tuple)) else []


def _norm(key: str) -> str:
    return key.strip().lower().replace("-", "_")


def _escape_filename(path: str) -> str:
    """fio splits filename= on ':' (several files): escape the colons of one path."""
    return path.replace(":", "\\:")


# ----------------------------------------------------------------------------------------
# presets


def _preset(**changes: Any) -> FioConfig:
    return FioConfig(**changes)


#: presets from the field, in menu order; use :func:`preset_config` for an editable copy
PRESETS: OrderedDict[str, FioConfig] = OrderedDict(
    [
        ("oltp", _preset(rw="randrw", rwmixread=70, bs="8k", ioengine="psync", iodepth=1, numjobs=4, direct=True)),
        ("8k-randread", _preset(rw="randread", bs="8k", ioengine="psync", iodepth=1, numjobs=1, direct=True)),
        ("8k-randwrite", _preset(rw="randwrite", bs="8k", ioengine="psync", iodepth=1, numjobs=1, direct=True)),
        ("1m-seqread", _preset(rw="read", bs="1m", ioengine="psync", iodepth=1, numjobs=1, direct=True)),
        ("1m-seqwrite", _preset(rw="write", bs="1m", ioengine="psync", iodepth=1, numjobs=1, direct=True)),
        (
            "latency",
            _preset(rw="randwrite", bs="4k", ioengine="libaio", iodepth=1, numjobs=1, direct=True, ramp_time_s=5),
        ),
        ("iops", _preset(rw="randread", bs="4k", ioengine="libaio", iodepth=32, numjobs=1, direct=True)),
        ("throughput", _preset(rw="read", bs="64k", ioengine="libaio", iodepth=32, numjobs=16, direct=True)),
        ("custom", _preset(custom=True, target="")),
    ]
)

#: one-line descriptions for the preset menu
PRESET_DESCRIPTIONS: dict[str, str] = {
    "oltp": "OLTP: 8k random read/write 70/30, psync, 4 jobs, direct",
    "8k-randread": "8k random read, direct",
    "8k-randwrite": "8k random write, direct",
    "1m-seqread": "1M sequential read, direct",
    "1m-seqwrite": "1M sequential write, direct",
    "latency": "latency: 4k random write, iodepth 1, libaio, 5 s ramp",
    "iops": "IOPS: 4k random read, iodepth 32, libaio",
    "throughput": "throughput: 64k sequential read, iodepth 32, 16 jobs",
    "custom": "custom: any fio options, or a job file",
}


#: the only fields a custom run reads (the command line is fio + these)
CUSTOM_FIELDS = ("extra_args", "job_file")


def form_presets() -> tuple[Preset, ...]:
    """The presets as the New-run form offers them: each one's values that differ from
    FioConfig's defaults (the target stays the user's). ``custom`` is said either way, so a
    form config of a few fields plus extra arguments is never read as custom mode."""
    default = FioConfig()
    presets = []
    for name, cfg in PRESETS.items():
        values: dict[str, Any] = {
            f.name: getattr(cfg, f.name)
            for f in fields(cfg)
            if f.name != "target" and getattr(cfg, f.name) != getattr(default, f.name)
        }
        values["custom"] = cfg.custom
        presets.append(Preset(name, PRESET_DESCRIPTIONS[name], values, CUSTOM_FIELDS if cfg.custom else ()))
    return tuple(presets)


def preset_config(name: str) -> FioConfig:
    """An independent, editable copy of preset ``name`` (KeyError lists the presets)."""
    try:
        preset = PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown fio preset {name!r}; known: {', '.join(PRESETS)}") from None
    cfg = copy.deepcopy(preset)
    if not cfg.custom:
        cfg.target = default_scratch_target()  # $TMPDIR may differ from when PRESETS was built
    return cfg


def validated_config(config: Mapping[str, Any] | FioConfig) -> FioConfig:
    cfg = config if isinstance(config, FioConfig) else FioConfig.from_dict(config)
    errors = cfg.validate()
    if errors:
        raise ValueError("; ".join(errors))
    return cfg
