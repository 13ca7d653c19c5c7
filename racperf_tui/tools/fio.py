"""fio: presets, config and validation, the command line, the live stream parser and the
result parser for every fio output format.

How a run is driven: fio runs with ``--output-format=json+ --status-interval=1`` and writes
a complete, cumulative JSON report every interval, the final report last.
:class:`FioStreamParser` cuts those reports out of the output line by line and differences
consecutive ones into per-interval Samples (IOPS, KiB/s and completion-latency percentiles
of that interval only). The whole output then goes to :func:`parse_output`, which takes the
last complete report. Formats other than JSON (saved text, terse, console logs) are parsed by
:mod:`racperf_tui.tools.fio_formats`.

Safety: racperf never runs the user's fio command line as given. :meth:`FioTool.invocation`
has fio itself resolve it (:mod:`racperf_tui.tools.fio_plan`), refuses every option not on the
allow list (:mod:`racperf_tui.tools.fio_policy`), names every path each job reads or writes as
the Invocation's targets (which the write guard judges, outside this module), and runs fio on
one job file written from that resolved plan. Read-only plans get ``--readonly``.
"""

from __future__ import annotations

import copy
import math
import os
import re
import shlex
import shutil
import stat
import tempfile
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from racperf_tui.core import units
from racperf_tui.core.events import Sample
from racperf_tui.core.invocation import Invocation, ToolNotFound
from racperf_tui.core.tool import MetricSpec, ResultTable, ToolDescription, options_from_dataclass
from racperf_tui.tools import fio_formats, fio_results
from racperf_tui.tools.fio_formats import FioParseError, JsonObjectSplitter, histogram_percentiles
from racperf_tui.tools.fio_options import FioOptionError, option_table
from racperf_tui.tools.fio_plan import FioPlan, FioPlanError, job_paths, plan, verify_job_file
from racperf_tui.tools.fio_policy import engine_refusal

#: what to tell a user whose machine has no fio
install_hint = "apt-get install fio / dnf install fio / yum install fio"

#: fio's rw= values, and which of them write (trim destroys data too)
RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw", "trim", "randtrim", "trimwrite")
READ_ONLY_RW = frozenset({"read", "randread"})
MIXED_RW = frozenset({"rw", "readwrite", "randrw"})

#: I/O engines the form offers (the ones racperf allows; see fio_policy)
IOENGINES = ("psync", "sync", "pvsync", "pvsync2", "vsync", "libaio", "io_uring", "posixaio", "mmap", "null")

#: fio never prints ETA this large: it means "unknown"
_ETA_UNKNOWN = 2**31 - 1
#: fio's non-JSON lines carried in one sample's extra (the rest are counted)
_MESSAGES_PER_SAMPLE = 20
#: slack between fio's runtime clock and its timestamp clock when comparing them
_CLOCK_TOLERANCE_MS = 50.0
#: a dump covering less of the jobs' runtime than this is no sample (see _on_dump)
_MIN_INTERVAL_MS = 50.0
#: fio ends the ramp in its I/O loop, a little after the runtime passes ramp_time
_RAMP_SLACK_MS = 250.0
_DEFAULT_HARD_LIMIT_S = 3600.0
_SIZE_RE = re.compile(r"^\d+(\.\d+)?\s*([kmgtpe]i?b?|b)?$", re.I)


# ----------------------------------------------------------------------------------------
# default target


def _fs_type(path: str) -> str:
    """Filesystem type of the mount holding ``path`` ('' when unknown)."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return ""
    real = os.path.realpath(path)
    best, best_type = "", ""
    for line in mounts:
        parts = line.split()
        if len(parts) < 3:
            continue
        mount_point = parts[1].replace("\\040", " ")
        if (real == mount_point or real.startswith(mount_point.rstrip("/") + "/")) and len(mount_point) >= len(best):
            best, best_type = mount_point, parts[2]
    return best_type


def default_scratch_dir() -> str:
    """Where the default scratch file lives: ``$TMPDIR/racperf-scratch-<uid>``.

    One directory per user (effective uid): root and oracle on the same DB node both run
    racperf, and a shared name would make the second one refused by
    :func:`ensure_private_scratch`. Not ``$XDG_RUNTIME_DIR``: that is a small tmpfs, where a
    256 MiB file may not fit and would measure RAM. For the same reason tmpfs/ramfs temp
    dirs are skipped when another one is writable (direct=1, O_DIRECT, also fails there on
    older kernels).
    """
    name = f"racperf-scratch-{os.geteuid()}"
    candidates = [os.environ.get("TMPDIR") or "", tempfile.gettempdir(), "/var/tmp", "/tmp"]
    usable = [c for c in dict.fromkeys(candidates) if c and os.path.isdir(c) and os.access(c, os.W_OK)]
    for candidate in usable:
        if _fs_type(candidate) not in ("tmpfs", "ramfs"):
            return os.path.join(candidate, name)
    return os.path.join(usable[0] if usable else tempfile.gettempdir(), name)


def default_scratch_target() -> str:
    """The default target: a scratch file in a temporary directory (created on launch)."""
    return os.path.join(default_scratch_dir(), "fio.scratch")


def fio_path() -> str | None:
    """Path of the fio binary, None when fio is not installed."""
    return shutil.which("fio")


def missing_fio_message() -> str:
    """What to say when fio is not installed."""
    return f"fio is not installed; install it with: {install_hint}"


# ----------------------------------------------------------------------------------------
# config


def _as_int(value: Any) -> int | None:
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


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("1", "0", "true", "false", "yes", "no", "on", "off"):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return None


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def parse_time_s(text: str) -> float | None:
    """A fio time value (``'60'``, ``'5s'``, ``'2m'``, ``'500ms'``; plain = seconds) -> seconds."""
    return units.maybe_duration_s(str(text))


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
        interval = _as_float(self.status_interval_s)
        if interval is None or not 0.1 <= interval <= 3600:
            errors.append(
                f"status_interval_s: {self.status_interval_s!r} is not a number of seconds between 0.1 and 3600"
            )
        if not isinstance(self.extra_args, list) or not all(isinstance(a, str) for a in self.extra_args):
            errors.append("extra_args: must be a list of strings (fio options like --norandommap)")
        if self.job_file is not None and not isinstance(self.job_file, str):
            errors.append(f"job_file: {self.job_file!r} is not a path")
        if _as_bool(self.destructive) is None:
            errors.append(f"destructive: {self.destructive!r} is not true or false")
        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", self.name or ""):
            errors.append(f"name: {self.name!r} is not a job name (letters, digits, _ . -)")
        return errors

    def _validate_structured(self) -> list[str]:
        errors = []
        target = str(self.target or "").strip()
        kind = _target_kind(target)
        if not target:
            errors.append("target: empty; give a file, a directory or a block device")
        elif kind == "other":
            errors.append(f"target: {target} is neither a regular file, a directory nor a block device")
        elif kind == "missing":
            parent = os.path.dirname(os.path.abspath(target))
            if not _in_scratch_dir(target) and not os.path.isdir(parent):
                errors.append(f"target: directory {parent} does not exist")
        size = str(self.size or "").strip()
        if size:
            if not (_is_size(size) or re.fullmatch(r"\d{1,3}%", size)):
                errors.append(f"size: {self.size!r} is not a size like 256m, 1g, 10% (0 is not allowed)")
        elif kind in ("missing", "directory"):
            errors.append("size: needed for a new file or a directory (e.g. 256m)")
        runtime = _as_int(self.runtime_s)
        time_based = _as_bool(self.time_based)
        if time_based is None:
            errors.append(f"time_based: {self.time_based!r} is not true or false")
        if runtime is None or runtime < 0 or runtime > 7 * 86400:
            errors.append(f"runtime_s: {self.runtime_s!r} is not a whole number of seconds (0 to 604800)")
        elif time_based and runtime == 0:
            errors.append("runtime_s: a time_based run needs a runtime of at least 1 s")
        ramp = _as_int(self.ramp_time_s)
        if ramp is None or ramp < 0 or ramp > 86400:
            errors.append(f"ramp_time_s: {self.ramp_time_s!r} is not a whole number of seconds (0 to 86400)")
        bs = str(self.bs or "").strip()
        parts = bs.split(",") if bs else [""]
        if not all(_is_size(p) for p in parts if p.strip()) or not any(p.strip() for p in parts):
            errors.append(f"bs: {self.bs!r} is not a size like 4k, 8k, 1m")
        if self.rw not in RW_MODES:
            errors.append(f"rw: {self.rw!r} is not one of {', '.join(RW_MODES)}")
        mix = _as_int(self.rwmixread)
        if mix is None or not 0 <= mix <= 100:
            errors.append(f"rwmixread: {self.rwmixread!r} is not a percentage from 0 to 100")
        engine = str(self.ioengine or "")
        refusal = engine_refusal(engine) if engine not in IOENGINES else None
        if refusal and not refusal.startswith("is not one of"):
            errors.append(f"ioengine: {engine!r} {refusal}; refused")
        elif engine not in IOENGINES:
            errors.append(f"ioengine: {engine!r} is not one of {', '.join(IOENGINES)} (other engines: use custom mode)")
        depth = _as_int(self.iodepth)
        if depth is None or not 1 <= depth <= 65536:
            errors.append(f"iodepth: {self.iodepth!r} is not a whole number from 1 to 65536")
        jobs = _as_int(self.numjobs)
        if jobs is None or not 1 <= jobs <= 4096:
            errors.append(f"numjobs: {self.numjobs!r} is not a whole number from 1 to 4096")
        for name in ("direct", "group_reporting"):
            if _as_bool(getattr(self, name)) is None:
                errors.append(f"{name}: {getattr(self, name)!r} is not true or false")
        return errors

    # -- command line --------------------------------------------------------------------

    def status_interval_text(self) -> str:
        """``--status-interval``'s value: fio parses "0.5" as 0 (no dumps at all), so a
        sub-second interval gets a unit."""
        interval = _as_float(self.status_interval_s) or 1.0
        if not math.isfinite(interval) or interval <= 0:
            interval = 1.0  # unvalidated preview: validate() reports the bad value
        return f"{int(interval)}" if interval.is_integer() else f"{round(interval * 1000)}ms"

    def argv(self) -> list[str]:
        """The fio command line the user's config amounts to (the form's preview). What runs
        is fio on racperf's job file written from fio's own reading of this (see
        :meth:`FioTool.invocation`)."""
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
                kind = _target_kind(target)
                argv.append(
                    f"--directory={target}" if kind == "directory" else f"--filename={_escape_filename(target)}"
                )
            if self.job_file:
                argv.append(self.job_file)
            return argv
        target = str(self.target).strip()
        argv.append(f"--name={self.name}")
        if _target_kind(target) == "directory":
            argv.append(f"--directory={target}")
        else:
            argv.append(f"--filename={_escape_filename(target)}")
        argv.append(f"--rw={self.rw}")
        if self.rw in MIXED_RW:
            argv.append(f"--rwmixread={_as_int(self.rwmixread)}")
        argv += [
            f"--bs={str(self.bs).strip()}",
            f"--ioengine={self.ioengine}",
            f"--iodepth={_as_int(self.iodepth)}",
            f"--numjobs={_as_int(self.numjobs)}",
            f"--direct={1 if _as_bool(self.direct) else 0}",
        ]
        if str(self.size or "").strip():
            argv.append(f"--size={str(self.size).strip()}")
        runtime = _as_int(self.runtime_s) or 0
        if runtime > 0:
            argv.append(f"--runtime={runtime}")
        if _as_bool(self.time_based):
            argv.append("--time_based")
        ramp = _as_int(self.ramp_time_s) or 0
        if ramp > 0:
            argv.append(f"--ramp_time={ramp}")
        if _as_bool(self.group_reporting):
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
        if self.custom or not (_as_int(self.runtime_s) or 0):
            return _DEFAULT_HARD_LIMIT_S
        return _hard_limit(float(_as_int(self.runtime_s) or 0) + float(_as_int(self.ramp_time_s) or 0))


def _hard_limit(seconds: float) -> float:
    """runtime + ramp + 10 % + 60 s for setup and the final report."""
    return seconds * 1.1 + 60.0


def size_bytes(text: str) -> int | None:
    """fio size text ('256M', '4k', '1g', '512') -> bytes, 1024-based as fio's default
    kb_base; None for percentages and malformed text."""
    return units.maybe_size_bytes(str(text))


def _in_scratch_dir(path: str) -> bool:
    """True for paths inside racperf's own scratch directory (nothing there to protect)."""
    scratch = os.path.realpath(default_scratch_dir())
    return os.path.realpath(os.path.dirname(os.path.abspath(path))) == scratch


def _lay_out(path: str, size: int, *, replace: bool = False) -> None:
    """Write ``size`` bytes of real (non-zero, not sparse) data to ``path`` atomically.

    The data goes to a new file of a random name (O_EXCL: never through a name someone planted)
    that is then linked as ``path``: a new path only (never replacing what appeared there since
    it was judged), unless ``replace`` (racperf's own scratch file, grown)."""
    chunk = os.urandom(1 << 20)
    fd, partial = tempfile.mkstemp(
        prefix=os.path.basename(path) + ".", suffix=".racperf-layout", dir=os.path.dirname(os.path.abspath(path))
    )
    try:
        try:
            remaining = size
            while remaining > 0:
                remaining -= os.write(fd, chunk[: min(len(chunk), remaining)])
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(partial, path)
        else:
            os.link(partial, path)  # EEXIST if anything is there now
    finally:
        if os.path.lexists(partial):
            os.unlink(partial)


def lay_out_read_targets(fio_plan: FioPlan) -> list[str]:
    """Lay out the files a read-only plan needs; return the paths written.

    fio lays out missing files by writing them, which ``--readonly`` forbids. So before a
    read-only run racperf writes the files that do not exist yet (a new file destroys
    nothing) and grows racperf's own scratch file. An existing user file is never written:
    if it is too short, fio says so. Real data, not a sparse file: reading holes would
    measure nothing. Paths under /dev are never created (the guard refused them already).
    """
    if fio_plan.writes:
        return []
    written: list[str] = []
    for job in fio_plan.jobs:
        paths, _problems = job_paths(job)
        if not paths:
            continue
        filesize = size_bytes(str(job.options.get("filesize") or ""))
        total = size_bytes(str(job.options.get("size") or ""))
        wanted = filesize if filesize else (total // len(paths) if total else None)
        if not wanted or wanted <= 0:
            continue
        for path in paths:
            absolute = os.path.abspath(path)
            if absolute == "/dev" or absolute.startswith("/dev/"):
                continue
            kind = _target_kind(absolute)
            ours = _in_scratch_dir(absolute)
            parent = os.path.dirname(absolute)
            if kind == "missing" and (ours or os.path.isdir(parent)):
                os.makedirs(parent, exist_ok=True)
            elif not (kind == "file" and ours and os.path.getsize(absolute) < wanted):
                continue
            _lay_out(absolute, wanted, replace=kind == "file")
            written.append(absolute)
    return written


def _user_args(cfg: FioConfig) -> list[str]:
    """The config's extra fio arguments, whatever junk a form may have put there."""
    args = cfg.extra_args
    return [a for a in args if isinstance(a, str)] if isinstance(args, (list, tuple)) else []


def _norm(key: str) -> str:
    return key.strip().lower().replace("-", "_")


def _escape_filename(path: str) -> str:
    """fio splits filename= on ':' (several files): escape the colons of one path."""
    return path.replace(":", "\\:")


def _target_kind(target: str) -> str:
    """'block', 'file', 'directory', 'missing' or 'other' for a target path."""
    if not target:
        return "missing"
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"
    if stat.S_ISBLK(st.st_mode):
        return "block"
    if stat.S_ISDIR(st.st_mode):
        return "directory"
    if stat.S_ISREG(st.st_mode):
        return "file"
    return "other"


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


# ----------------------------------------------------------------------------------------
# building the command


JOB_FILE_NAME = "job.fio"
#: where the job file is said to be before a run has a directory (validation, previews)
_UNPLACED_RUN_DIR = "<run directory>"


def _config(config: Mapping[str, Any] | FioConfig) -> FioConfig:
    cfg = config if isinstance(config, FioConfig) else FioConfig.from_dict(config)
    errors = cfg.validate()
    if errors:
        raise ValueError("; ".join(errors))
    return cfg


def _plan_hard_limit(fio_plan: FioPlan) -> float:
    """From every job's runtime + ramp_time; fio's default limit when a job has none."""
    longest = 0.0
    for job in fio_plan.jobs:
        runtime = parse_time_s(str(job.options.get("runtime") or "0")) or 0.0
        if runtime <= 0:
            return _DEFAULT_HARD_LIMIT_S
        start = parse_time_s(str(job.options.get("startdelay") or "0")) or 0.0
        longest = max(longest, runtime + (parse_time_s(str(job.options.get("ramp_time") or "0")) or 0.0) + start)
    return _hard_limit(longest) if longest else _DEFAULT_HARD_LIMIT_S


def invocation(config: Mapping[str, Any] | FioConfig, run_dir: str | None = None) -> Invocation:
    """The run: fio's own reading of the config, judged option by option, as one job file.

    ValueError (FioPlanError) names every refused option and why; ToolNotFound when fio is
    missing. The Invocation's targets are every path of every job; the caller's write guard
    judges them. Before returning, fio reads racperf's job file back and must find exactly
    the plan that was judged.
    """
    cfg = _config(config)
    fio = fio_path()
    if fio is None:
        raise ToolNotFound(missing_fio_message())
    try:
        table = option_table(fio)
    except FioOptionError as exc:
        raise FioPlanError([str(exc)]) from None
    fio_plan = plan(fio, table, cfg.fio_args(), log_dir=run_dir)
    with tempfile.TemporaryDirectory(prefix="racperf-fio-") as check_dir:
        check_path = os.path.join(check_dir, JOB_FILE_NAME)
        with open(check_path, "w", encoding="utf-8") as handle:
            handle.write(fio_plan.job_file_text)
        verify_job_file(fio, check_path, fio_plan.jobs)
    place = run_dir or _UNPLACED_RUN_DIR
    argv = [fio, "--output-format=json+"]
    user_interval = next((a.value for a in fio_plan.top_level if a.name == "status-interval"), None)
    argv.append(f"--status-interval={user_interval or cfg.status_interval_text()}")
    passed_on = {"warnings-fatal", "alloc-size", "max-jobs"}
    argv += [
        f"--{a.name}" if a.value is None else f"--{a.name}={a.value}" for a in fio_plan.top_level if a.name in passed_on
    ]
    notes = []
    if not fio_plan.writes:
        argv.append("--readonly")
        notes.append("read-only: fio runs with --readonly")
    argv.append(f"--aux-path={place}")
    argv.append(os.path.join(place, JOB_FILE_NAME))
    return Invocation(
        argv=argv,
        files={JOB_FILE_NAME: fio_plan.job_file_text},
        targets=tuple(fio_plan.targets),
        hard_limit_s=_plan_hard_limit(fio_plan),
        notes=tuple(notes),
        detail=fio_plan,
    )


def prepare(config: Mapping[str, Any] | FioConfig, planned: Invocation) -> None:
    """Side effects before the run, once the guard cleared it: racperf's private scratch
    directory, and the files a read-only plan reads laid out. ValueError says what is wrong."""
    cfg = _config(config)
    scratch = os.path.abspath(default_scratch_dir())
    for target in planned.targets:
        if os.path.dirname(target.path) == scratch:
            ensure_private_scratch(scratch, target.path)
    del cfg  # validated above; the plan holds everything else
    if isinstance(planned.detail, FioPlan):
        lay_out_read_targets(planned.detail)


def build_argv(config: Mapping[str, Any] | FioConfig) -> list[str]:
    """The argv of :func:`invocation` (its job file not yet placed): for callers that only
    want to know whether the config is refused, and what would run."""
    return invocation(config).argv


def ensure_private_scratch(scratch_dir: str, target: str) -> None:
    """Create racperf's scratch directory (mode 0700), or check that the one there is ours.

    It lives in a shared temp dir under a per-uid, hence guessable, name: another local user
    could create it first, or put a symlink named like the scratch file there pointing at a
    datafile, and racperf's write presets (exempt from the write guard inside the scratch
    dir) would write through it. So the directory must be a real directory owned by us and
    writable by nobody else, and the scratch file, when it exists, a regular file of ours.
    ValueError says what is wrong.
    """
    try:
        os.mkdir(scratch_dir, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ValueError(f"target: cannot create racperf's scratch directory {scratch_dir}: {exc.strerror}") from None
    advice = (
        "racperf writes there only when it is its own; remove it, or set TMPDIR to a "
        "directory of yours, or give a target of your own"
    )
    info = os.lstat(scratch_dir)
    if stat.S_ISLNK(info.st_mode):
        raise ValueError(f"target: racperf's scratch directory {scratch_dir} is a symbolic link; {advice}")
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"target: racperf's scratch directory {scratch_dir} is not a directory; {advice}")
    if info.st_uid != os.geteuid():
        raise ValueError(
            f"target: racperf's scratch directory {scratch_dir} belongs to uid "
            f"{info.st_uid}, not to you (uid {os.geteuid()}); {advice}"
        )
    if info.st_mode & 0o022:
        raise ValueError(
            f"target: racperf's scratch directory {scratch_dir} is writable by other "
            f"users (mode {stat.S_IMODE(info.st_mode):o}); {advice}"
        )
    try:
        file_info = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(file_info.st_mode) or not stat.S_ISREG(file_info.st_mode):
        raise ValueError(
            f"target: the scratch file {target} is not a regular file (a symbolic link or a device); {advice}"
        )
    if file_info.st_uid != os.geteuid():
        raise ValueError(f"target: the scratch file {target} belongs to uid {file_info.st_uid}; {advice}")


def command_preview(config: Mapping[str, Any] | FioConfig) -> str:
    """Shell-quoted command line of ``config`` (not validated: the form shows it as typed)."""
    cfg = config if isinstance(config, FioConfig) else FioConfig.from_dict(config)
    return cfg.command_preview()


# ----------------------------------------------------------------------------------------
# live stream


#: per-interval latency percentiles reported in samples: metric suffix -> percentile
SAMPLE_PERCENTILES: dict[str, float] = {"p50": 50.0, "p99": 99.0, "p99.9": 99.9}
_DIRECTIONS = ("read", "write")


@dataclass
class _DirState:
    total_ios: int = 0
    io_kib: float = 0.0
    runtime_ms: float = 0.0
    bins: dict[int, int] = field(default_factory=dict)


@dataclass
class _JobState:
    dirs: dict[str, _DirState] = field(default_factory=dict)
    ramp_done: bool = False


class FioStreamParser:
    """fio's ``--output-format=json+ --status-interval=N`` output, line by line -> Samples.

    Each status dump is cumulative since the start; a Sample is the difference between
    consecutive dumps. Rates divide by the difference of each job's own ``runtime`` (ms)
    -- the clock fio divides by for its final IOPS -- so the runtime-weighted mean of the
    samples' IOPS equals fio's final IOPS (exactly, for one job or group_reporting). The
    last dump (the final report) usually covers a partial interval; ``extra["interval_s"]``
    gives each sample's weight. Percentiles come from the difference of the json+
    ``clat_ns`` histogram bins, merged over jobs. ``t`` is seconds since fio started, from
    fio's own ``elapsed`` and ``timestamp_ms``, not from when the line arrived.

    Ramp: fio zeroes its counters when ramp_time ends. A dump is flagged
    ``extra["ramp"] = True`` until the reset is seen (the job's runtime restarted between
    two dumps) or the runtime is past the ramp; the first dump after the reset is differenced
    against zero. A ramp shorter than the status interval may leave the first sample flagged.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        cfg = config or {}
        ramp = cfg.get("ramp_time_s") if isinstance(cfg, Mapping) else None
        self._ramp_ms = float(_as_int(ramp) or 0) * 1000.0
        self._splitter = JsonObjectSplitter()
        self._jobs: dict[tuple[int, str], _JobState] = {}
        self._first_ts_ms: float | None = None
        self._first_elapsed_s: float = 0.0
        self._prev_ts_ms: float | None = None
        self._messages_seen = 0
        self.dumps = 0
        self.last_report: dict[str, Any] | None = None

    @property
    def messages(self) -> list[str]:
        """Non-JSON lines seen so far (fio's errors and warnings)."""
        return self._splitter.messages

    def feed(self, line: str) -> list[Sample]:
        """One line of fio's output (without newline) -> Samples completed by it."""
        samples = []
        for obj in self._splitter.feed(line):
            if isinstance(obj.get("jobs"), list):
                try:
                    sample = self._on_dump(obj)
                except (TypeError, ValueError, OverflowError, AttributeError) as exc:
                    # a dump with an impossible field ("total_ios": 1e400, "jobs": [1]) is no
                    # interval: skip it (named in the messages) rather than lose the run's parser
                    self._splitter.decode_errors.append(f"status dump {self.dumps} skipped: {exc}")
                    continue
                if (
                    sample is not None
                    and math.isfinite(sample.t)
                    and all(math.isfinite(v) for v in sample.metrics.values())
                ):
                    samples.append(sample)
        return samples

    def finish(self) -> list[Sample]:
        """End of output: a truncated dump cannot be differenced; nothing is buffered."""
        return []

    def _ramp_ms_of(self, job: Mapping[str, Any]) -> float:
        if self._ramp_ms:
            return self._ramp_ms
        value = (job.get("job options") or {}).get("ramp_time")
        seconds = parse_time_s(str(value)) if value is not None else None
        return (seconds or 0.0) * 1000.0

    def _on_dump(self, report: dict[str, Any]) -> Sample | None:
        self.dumps += 1
        self.last_report = report
        ts_ms = _as_float(report.get("timestamp_ms"))
        jobs = report["jobs"]
        elapsed = max((_as_float(j.get("elapsed")) or 0.0) for j in jobs) if jobs else 0.0
        if self._first_ts_ms is None and ts_ms is not None:
            self._first_ts_ms, self._first_elapsed_s = ts_ms, elapsed
        t = (
            self._first_elapsed_s + (ts_ms - self._first_ts_ms) / 1000.0
            if ts_ms is not None and self._first_ts_ms is not None
            else elapsed
        )
        wall_dt_ms = ts_ms - self._prev_ts_ms if ts_ms is not None and self._prev_ts_ms is not None else None
        self._prev_ts_ms = ts_ms

        iops = {d: 0.0 for d in _DIRECTIONS}
        bw = {d: 0.0 for d in _DIRECTIONS}
        hist: dict[str, dict[int, int]] = {d: {} for d in _DIRECTIONS}
        interval_ms = 0.0
        in_ramp = False
        job_info = []
        updates: list[tuple[_JobState, str, _DirState]] = []
        for index, job in enumerate(jobs):
            key = (index, str(job.get("jobname", "")))
            state = self._jobs.setdefault(key, _JobState())
            ramp_ms = self._ramp_ms_of(job)
            dir_blocks = {d: job.get(d) if isinstance(job.get(d), dict) else {} for d in _DIRECTIONS}
            cur_rt = max((_as_float(b.get("runtime")) or 0.0) for b in dir_blocks.values())
            prev_rt = max((s.runtime_ms for s in state.dirs.values()), default=0.0)
            reset = False
            if ramp_ms > 0 and not state.ramp_done:
                if (
                    state.dirs
                    and wall_dt_ms is not None
                    and cur_rt + _CLOCK_TOLERANCE_MS < prev_rt + wall_dt_ms
                    and cur_rt <= wall_dt_ms + _CLOCK_TOLERANCE_MS
                ):
                    # the runtime restarted between the dumps: fio zeroed its stats at ramp end
                    reset = state.ramp_done = True
                elif cur_rt > ramp_ms + _RAMP_SLACK_MS:
                    # past the ramp without a reset in view: it happened before the first dump
                    state.ramp_done = True
                else:
                    in_ramp = True
            for d in _DIRECTIONS:
                block = dir_blocks[d]
                prev = state.dirs.get(d, _DirState())
                cur = _DirState(
                    total_ios=int(block.get("total_ios", 0) or 0),
                    io_kib=float(block.get("io_kbytes", block.get("io_bytes", 0)) or 0),
                    runtime_ms=float(block.get("runtime", 0) or 0),
                    bins={int(k): int(v) for k, v in ((block.get("clat_ns") or {}).get("bins") or {}).items()},
                )
                if reset or cur.total_ios < prev.total_ios or cur.runtime_ms < prev.runtime_ms:
                    prev = _DirState()  # counters restarted (end of ramp): this dump is all new
                d_rt = cur.runtime_ms - prev.runtime_ms
                if d_rt > 0:
                    iops[d] += (cur.total_ios - prev.total_ios) * 1000.0 / d_rt
                    bw[d] += (cur.io_kib - prev.io_kib) * 1000.0 / d_rt
                    interval_ms = max(interval_ms, d_rt)
                merged = hist[d]
                for value, count in cur.bins.items():
                    delta = count - prev.bins.get(value, 0)
                    if delta > 0:
                        merged[value] = merged.get(value, 0) + delta
                updates.append((state, d, cur))
            eta = _as_float(job.get("eta"))
            info: dict[str, Any] = {
                "name": key[1],
                "error": int(job.get("error", 0) or 0),
                "elapsed_s": _as_float(job.get("elapsed")),
            }
            if eta is not None and 0 <= eta < _ETA_UNKNOWN:
                info["eta_s"] = eta
            job_info.append(info)
        if interval_ms < _MIN_INTERVAL_MS:
            # nothing advanced (jobs not started yet), or a final report a few ms after the
            # last dump: fio reads a running job's counters one by one, so io_kbytes may lag
            # total_ios by an I/O, which over 5 ms reads as 0 IOPS beside MiB/s. Not a sample;
            # the next dump (if any) is differenced against the last real one.
            return None
        for state, d, cur in updates:
            state.dirs[d] = cur
        metrics: dict[str, float] = {}
        for d in _DIRECTIONS:
            metrics[f"{d}_iops"] = iops[d]
            metrics[f"{d}_bw_kib_s"] = bw[d]
            pcts = histogram_percentiles(hist[d], SAMPLE_PERCENTILES.values())
            for suffix, pct in SAMPLE_PERCENTILES.items():
                if pct in pcts:
                    metrics[f"{d}_clat_{suffix}_us"] = pcts[pct] / 1000.0
        extra: dict[str, Any] = {
            "interval_s": interval_ms / 1000.0,
            "elapsed_s": elapsed,
            "ramp": in_ramp,
            "jobs": job_info,
            "dump": self.dumps,
        }
        if ts_ms is not None:
            extra["timestamp_ms"] = ts_ms  # fio's wall clock when it wrote the dump
        if wall_dt_ms is not None:
            extra["wall_interval_s"] = wall_dt_ms / 1000.0
        etas = [j["eta_s"] for j in job_info if "eta_s" in j]
        if etas:
            extra["eta_s"] = max(etas)
            if elapsed + extra["eta_s"] > 0:
                extra["progress_pct"] = min(100.0, 100.0 * elapsed / (elapsed + extra["eta_s"]))
        new_count = self._splitter.message_count - self._messages_seen
        if new_count > 0:
            kept = self._splitter.messages[self._messages_seen :][:_MESSAGES_PER_SAMPLE]
            extra["messages"] = kept
            if new_count > len(kept):
                extra["messages_omitted"] = new_count - len(kept)
            self._messages_seen = self._splitter.message_count
        return Sample(t=round(t, 3), metrics=metrics, extra=extra)


def interval_weighted_mean(samples: Iterable[Sample], metric: str, skip_ramp: bool = True) -> float:
    """Mean of ``metric`` over samples weighted by each sample's interval (fio runtime).

    This is the "mean of the live IOPS" that equals fio's final IOPS: the final dump covers
    a partial interval, so an unweighted mean would over-weight it.
    """
    total = weight = 0.0
    for sample in samples:
        if skip_ramp and sample.extra.get("ramp"):
            continue
        w = float(sample.extra.get("interval_s", 1.0))
        if metric in sample.metrics:
            total += sample.metrics[metric] * w
            weight += w
    return total / weight if weight else 0.0


# ----------------------------------------------------------------------------------------
# results


def parse_output(text: str) -> dict[str, Any]:
    """Any saved fio output (JSON, json+, status dumps, text 2.x / 3.x, terse, console log)
    -> result dict (shape in :mod:`racperf_tui.tools.fio_formats`). ValueError when it is
    not fio output."""
    return fio_formats.parse_any(text)


def expected_directions(rw: str) -> tuple[str, ...]:
    """Directions a job with this rw= must have done I/O in."""
    mode = (rw or "").split(":")[0].strip().lower()
    if mode in ("read", "randread"):
        return ("read",)
    if mode in ("write", "randwrite"):
        return ("write",)
    if mode in ("trim", "randtrim"):
        return ("trim",)
    if mode == "trimwrite":
        return ("write",)
    return ()


def succeeded(result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
    """Judge a finished run by each job's error and the I/O it did, not only the exit
    status: fio exits 0 when errors were ignored (continue_on_error) or no I/O happened."""
    if result is None:
        return False, f"fio produced no report (exit status {exit_status})"
    jobs = list(result.get("jobs") or [])
    problems = []
    for job in jobs:
        name = job.get("name", "?")
        error = int(job.get("error", 0) or 0)
        if error:
            problems.append(f"job {name}: error {error} ({os.strerror(error)})")
            continue
        wanted = expected_directions(str(job.get("rw", "")))
        done = {d: float((job.get(d) or {}).get("io_kib", 0) or 0) for d in ("read", "write", "trim")}
        if wanted:
            for d in wanted:
                if done[d] <= 0:
                    problems.append(f"job {name}: no {d} I/O done")
        elif sum(done.values()) <= 0:
            problems.append(f"job {name}: no I/O done")
    if problems:
        return False, "; ".join(problems)
    if not jobs:
        messages = result.get("messages") or []
        detail = f": {messages[-1]}" if messages else ""
        return False, f"fio reported no jobs (exit status {exit_status}){detail}"
    if exit_status != 0:
        return False, f"fio exited with status {exit_status}"
    return True, "ok"


_FIO_HELP = {
    "target": "the file, directory or block device fio works on (default: a private scratch file)",
    "size": "the size of the file / the region of the device (256m, 1g, 10%)",
    "runtime_s": "seconds to run",
    "time_based": "run for runtime_s even when size was done",
    "ramp_time_s": "seconds of warm-up not counted in the figures",
    "bs": "block size (8k, 1m; read,write as 8k,64k)",
    "rw": "the I/O pattern",
    "rwmixread": "percentage of reads in a mixed pattern",
    "ioengine": "how fio submits I/O",
    "iodepth": "I/Os in flight per job (async engines)",
    "numjobs": "parallel jobs",
    "direct": "O_DIRECT: bypass the page cache",
    "group_reporting": "one figure for all jobs",
    "extra_args": "more fio options (judged against racperf's allow list)",
    "job_file": "an fio job file instead of the fields (custom mode)",
    "status_interval_s": "seconds between live samples",
    "destructive": "allow writing a device the write guard refuses (headless --destructive)",
    "custom": "the command line is extra_args and job_file only",
    "name": "the job's name",
}

#: fio's form and --set keys, from FioConfig's fields
OPTIONS = options_from_dataclass(FioConfig, _FIO_HELP, choices={"rw": RW_MODES, "ioengine": IOENGINES})
#: what a live fio run shows: bandwidth stored in KiB/s, shown in MiB/s
METRICS = (
    MetricSpec("read_iops", "read IOPS", "IOPS", decimals=0, chart="iops"),
    MetricSpec("write_iops", "write IOPS", "IOPS", decimals=0, chart="iops"),
    MetricSpec("read_bw_kib_s", "read BW", "MiB/s", divisor=1024.0, chart="bw"),
    MetricSpec("write_bw_kib_s", "write BW", "MiB/s", divisor=1024.0, chart="bw"),
    *(
        MetricSpec(f"{d}_clat_{p}_us", f"{d} clat {p}", "µs", chart="lat")
        for d in _DIRECTIONS
        for p in SAMPLE_PERCENTILES
    ),
)


class FioDescription(ToolDescription):
    """fio's figure is its total IOPS (both directions, every job); its plan, runtime + ramp."""

    def sample_headline(self, metrics: Mapping[str, Any]) -> str:
        if "read_iops" not in metrics and "write_iops" not in metrics:
            return ""
        return METRICS[0].compact(float(metrics.get("read_iops") or 0) + float(metrics.get("write_iops") or 0))

    def headline(self, result: Mapping[str, Any] | None) -> str:
        jobs = [job for job in (result or {}).get("jobs") or [] if isinstance(job, Mapping)]
        if not jobs:
            return ""
        return METRICS[0].compact(
            sum(float((job.get(d) or {}).get("iops") or 0.0) for job in jobs for d in ("read", "write"))
        )

    def result_sections(self, result: Mapping[str, Any] | None) -> list[ResultTable]:
        return fio_results.result_sections(result) if result is not None else []

    def result_notes(self, result: Mapping[str, Any] | None) -> list[str]:
        return fio_results.result_notes(result or {})

    def planned_duration_s(self, config: Mapping[str, Any]) -> float | None:
        runtime = parse_time_s(str(config.get("runtime_s") or ""))
        if not runtime:
            return None
        return runtime + (parse_time_s(str(config.get("ramp_time_s") or "")) or 0.0)


DESCRIPTION = FioDescription(
    name="fio",
    summary="flexible I/O tester: storage IOPS, bandwidth, latency",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
    takes_raw_args=True,
    form="fio_presets",
)


class FioTool:
    """The fio :class:`racperf_tui.tools.base.Tool`."""

    name = "fio"
    description = DESCRIPTION
    install_hint = install_hint
    presets = PRESETS
    preset_descriptions = PRESET_DESCRIPTIONS
    config_class = FioConfig
    #: the run's record of protections (core.supervisor)
    option_guard = "options resolved by fio itself and judged against racperf's allow list"

    def available(self) -> bool:
        """True when a fio binary is on PATH."""
        return fio_path() is not None

    def invocation(self, config: Mapping[str, Any], run_dir: str | None = None) -> Invocation:
        """See :func:`invocation`."""
        return invocation(config, run_dir)

    def prepare(self, config: Mapping[str, Any], planned: Invocation) -> None:
        """See :func:`prepare`."""
        prepare(config, planned)

    def build_argv(self, config: Mapping[str, Any]) -> list[str]:
        """Validated command line (ValueError says what is wrong)."""
        return build_argv(config)

    def command_preview(self, config: Mapping[str, Any]) -> str:
        """Shell-quoted command line, unvalidated, for the form."""
        return command_preview(config)

    def validate(self, config: Mapping[str, Any]) -> list[str]:
        """Per-field errors of a config dict."""
        return FioConfig.from_dict(config).validate()

    def stream_parser(self, config: Mapping[str, Any]) -> FioStreamParser:
        """A fresh parser for one run's output."""
        return FioStreamParser(config)

    def parse_result(self, output: str) -> dict[str, Any]:
        """Whole output -> result dict."""
        return parse_output(output)

    def succeeded(self, result: Mapping[str, Any] | None, exit_status: int) -> tuple[bool, str]:
        """See :func:`succeeded`."""
        return succeeded(result, exit_status)

    def hard_limit_s(self, config: Mapping[str, Any]) -> float:
        """runtime + ramp + 10 % + 60 s; 3600 s when the job has no runtime."""
        return FioConfig.from_dict(config).hard_limit_s()


TOOL = FioTool()

__all__ = [
    "TOOL",
    "FioConfig",
    "FioStreamParser",
    "FioParseError",
    "PRESETS",
    "PRESET_DESCRIPTIONS",
    "FioPlanError",
    "build_argv",
    "command_preview",
    "default_scratch_target",
    "install_hint",
    "invocation",
    "interval_weighted_mean",
    "prepare",
    "parse_output",
    "preset_config",
    "succeeded",
]
