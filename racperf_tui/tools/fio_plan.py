"""What a fio run will do, as fio itself resolves it: jobs, options, and every path it touches.

racperf does not read fio's grammar by hand. The user's command-line options are read with the
installed fio's option table (:mod:`racperf_tui.tools.fio_options`); job files go through
``fio --showcmd`` first (fio strips comments, follows includes, expands ``${VAR}`` and
``$ncpus``-style keywords, turns aliases into names) so that nothing which runs code or loads a
library is ever handed to fio's parser, and then everything goes through
``fio --parse-only --debug=parse``, whose trace is fio's own account of which option it set to
which value in which job. The plan is judged from that trace: the allow list of
:mod:`racperf_tui.tools.fio_policy` on every option of every job, and the paths each job reads
or writes (every file of a ``:`` list, directory + name, ``filename_format`` expanded for every
clone and file, the job name when fio would use it as the file).

racperf then writes ONE job file from the plan and runs fio on it, and before that parses its
own job file with fio again: unless fio reads it back as exactly the plan that was judged, the
run is refused. What was judged is what runs.

Semantics taken from fio's source (init.c): options before the first ``--name`` and
``[global]`` sections apply to the jobs defined after them; each job file after the first
starts again from fio's defaults (fio resets its global options between job files) and its
first job waits for the jobs before it (fio's implicit stonewall).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

from racperf_tui.core.invocation import Target
from racperf_tui.tools.base import on_another_node, run_briefly
from racperf_tui.tools.fio_options import (
    FioArg,
    FioOptionError,
    FioOptionTable,
    read_command_line,
    show_command_options,
)
from racperf_tui.tools.fio_policy import (
    ALLOWED_ENGINES,
    LOG_PREFIX_OPTIONS,
    engine_refusal,
    job_option_refusal,
    refusal_names,
    top_level_refusal,
)

if TYPE_CHECKING:
    from racperf_tui.core.hosts import Host

#: rw= values that only read (anything else, trim included, writes or destroys)
READ_ONLY_RW = frozenset({"read", "randread"})
#: job files larger than this are not a job file
MAX_JOB_FILE_BYTES = 1 << 20
#: more paths than this in one plan (numjobs x nrfiles) are not checked one by one
MAX_TARGETS = 10_000
_FIO_TIMEOUT_S = 30.0
_TRACE_RE = re.compile(r"^parse\s+\d+\s+(.*)$")
_HANDLE_RE = re.compile(r"^handle_option=([^,]+), ptr=(.*)$")
_SECTION_RE = re.compile(r"^Parsing section \[(.*)\]$")
#: fio's file-name keywords in filename_format, replaced case-insensitively in this order
_FORMAT_KEYWORDS = ("$jobname", "$jobnum", "$filenum", "$clientuid")
_SAFE_JOB_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-+@]*$")


class FioPlanError(ValueError):
    """The run is refused; ``problems`` lists every reason, each naming the option and where."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


@dataclass
class FioJob:
    """One job as fio parsed it: its name and the final value of every option it set."""

    name: str
    where: str
    options: dict[str, str | None] = field(default_factory=dict)

    def set(self, name: str, value: str | None) -> None:
        self.options.pop(name, None)  # keep the order of the last setting
        self.options[name] = value

    @property
    def rw(self) -> str:
        return (self.options.get("rw") or "read").split(":", 1)[0].strip().lower()

    @property
    def writes(self) -> bool:
        return self.rw not in READ_ONLY_RW


@dataclass
class FioPlan:
    """A resolved fio run: jobs, fio's own options racperf passes on, the job file racperf
    writes, and every path the jobs touch."""

    jobs: list[FioJob]
    top_level: list[FioArg]
    targets: list[Target]
    job_file_text: str

    @property
    def writes(self) -> bool:
        return any(job.writes for job in self.jobs)


# --------------------------------------------------------------------------------------------
# running fio's parser


#: fio's $PATH while it reads a job: a directory that does not exist. fio computes a value
#: with $ncpus/$mb_memory/$pagesize and + - * / by running "which bc" and "echo ... | bc"
#: through the shell and $PATH; with this, nothing is found and fio refuses the value
_NO_COMMANDS_PATH = "/nonexistent/racperf-runs-no-commands"


def _parse_env(env: dict[str, str] | None) -> dict[str, str]:
    parse_env = dict(os.environ if env is None else env)
    parse_env["PATH"] = _NO_COMMANDS_PATH
    return parse_env


def is_remote(host: Host | None) -> TypeGuard[Host]:
    """Whether ``host`` is another node (None and LocalHost are this machine)."""
    return on_another_node(host)


def _fio(
    fio: str,
    args: list[str],
    env: dict[str, str] | None = None,
    host: Host | None = None,
    stdin: str | None = None,
) -> tuple[int, str]:
    """fio's answer (status, stdout + stderr) where the run runs: here, or on ``host``'s node
    (``stdin``: a job file's text for the job named ``-``)."""
    where = f" on {host.name}" if host is not None and is_remote(host) else ""
    try:
        if is_remote(host):
            assert host is not None
            answer = host.run_briefly(
                [fio, *args], _FIO_TIMEOUT_S, env={**(env or {}), "PATH": _NO_COMMANDS_PATH}, stdin=stdin
            )
            return answer.returncode, answer.text
        done = run_briefly([fio, *args], _FIO_TIMEOUT_S, _parse_env(env))
    except (subprocess.TimeoutExpired, TimeoutError):
        raise FioPlanError([f"fio{where} did not finish reading the job within {_FIO_TIMEOUT_S:g} s"]) from None
    except OSError as exc:
        raise FioPlanError([f"cannot run {fio}{where}: {exc.strerror or exc}"]) from None
    return done.returncode, done.stdout + done.stderr


def _fio_messages(output: str) -> str:
    """fio's own complaints in an answer (the trace and blank lines left out)."""
    lines = [
        line.strip()
        for line in output.splitlines()
        if line.strip() and not _TRACE_RE.match(line) and "set debug option" not in line
    ]
    return "; ".join(lines[:6]) or "no message"


def _trace_jobs(trace: str, where: str, *, first_file_stonewall: bool) -> list[FioJob]:
    """Jobs from fio's ``--debug=parse`` trace of one parse (command line + one job file, or a
    job file alone)."""
    global_job = FioJob("global", where)
    jobs: list[FioJob] = []
    current = global_job
    in_ini = False
    job_file_jobs = 0
    for line in trace.splitlines():
        match = _TRACE_RE.match(line)
        if not match:
            continue
        message = match.group(1).rstrip()
        if message.startswith("Parsing ini file "):
            in_ini = True
            continue
        section = _SECTION_RE.match(message) if in_ini else None
        if section:
            name = section.group(1)
            if name.startswith("global"):  # fio: strncmp(name, "global", 6)
                current = global_job
            else:
                current = FioJob(name, f"{where}, job [{name}]", dict(global_job.options))
                if first_file_stonewall and job_file_jobs == 0:
                    current.set("stonewall", None)
                job_file_jobs += 1
                jobs.append(current)
            continue
        handled = _HANDLE_RE.match(message)
        if not handled:
            continue
        name, value = handled.group(1), handled.group(2)
        option_value = None if value == "(null)" else value
        if name == "name" and not in_ini:
            if (option_value or "").startswith("global"):
                current = global_job
            else:
                current = FioJob(option_value or "fio", f"command-line job {option_value!r}", dict(global_job.options))
                jobs.append(current)
            continue
        current.set(name, option_value)
    return jobs


def resolve_jobs(
    fio: str, table: FioOptionTable, args: list[str], env: dict[str, str] | None = None, host: Host | None = None
) -> tuple[list[FioJob], list[FioArg]]:
    """Every job of the fio command line ``args`` (options and job files) as fio parses it
    (the fio of ``host``'s node when it is another one), and fio's own options that racperf
    passes on. FioPlanError lists everything refused."""
    line = read_command_line(args, table, refusal_names())
    problems = list(line.problems)
    top_level: list[FioArg] = []
    job_args: list[FioArg] = []
    for arg in line.options:
        if arg.kind == "top":
            reason = top_level_refusal(arg.name, arg.value)
            if reason:
                problems.append(f"{arg.where}: fio option --{arg.name} {reason}; racperf refuses it")
            else:
                top_level.append(arg)
        else:
            job_args.append(arg)
            reason = job_option_refusal(arg.name, arg.value)
            if reason:
                problems.append(f"{arg.where}: fio option {arg.name}={arg.value or ''} {reason}; racperf refuses it")
    if is_remote(host) and line.job_files:
        assert host is not None
        problems.append(
            f"job file {line.job_files[0]}: a run on {host.name} takes fio options, not a job file "
            "(the file is here, its includes would be read there); give the job as options"
        )
    for path in line.job_files:
        problems.extend(_screen_job_file(fio, table, path, env))
    if problems:
        raise FioPlanError(problems)

    cli = [f"--{a.name}" if a.value is None else f"--{a.name}={a.value}" for a in job_args]
    jobs: list[FioJob] = []
    parses = [(cli + line.job_files[:1], "the command line" + (f" and {line.job_files[0]}" if line.job_files else ""))]
    parses += [([path], path) for path in line.job_files[1:]]
    for index, (parse_args, where) in enumerate(parses):
        status, trace = _fio(fio, ["--parse-only", "--debug=parse", *parse_args], env, host)
        if status != 0:
            raise FioPlanError([f"fio refuses {where}: {_fio_messages(trace)}"])
        jobs.extend(_trace_jobs(trace, where, first_file_stonewall=index > 0))
    if not jobs:
        raise FioPlanError(["no job: give fio options with --name=JOB, or a job file with a [JOB] section"])
    for job in jobs:
        for name, value in job.options.items():
            reason = job_option_refusal(name, value)
            if reason:
                problems.append(f"{job.where}: fio option {name}={value or ''} {reason}; racperf refuses it")
        if not _SAFE_JOB_NAME_RE.match(job.name):
            problems.append(
                f"{job.where}: job name {job.name!r}: use letters, digits and _ . - + @ "
                "(fio uses a job name as a file name; give the file with filename=)"
            )
    if problems:
        raise FioPlanError(problems)
    return jobs, top_level


def _screen_job_file(fio: str, table: FioOptionTable, path: str, env: dict[str, str] | None) -> list[str]:
    """Refusals for a job file, from fio's --showcmd (which never loads an engine), before the
    file ever reaches fio's real parser."""
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        return [f"job file {path}: {exc.strerror}"]
    if not os.path.isfile(path):
        return [f"job file {path}: not a regular file"]
    if size > MAX_JOB_FILE_BYTES:
        return [f"job file {path}: {size} bytes; a job file is at most {MAX_JOB_FILE_BYTES} bytes"]
    early = prescreen_job_file(path, builtin_engines(fio))
    if early:
        return early
    status, output = _fio(fio, ["--showcmd", path], env)
    if status != 0:
        return [f"job file {path}: fio cannot read it: {_fio_messages(output)}"]
    problems = []
    for arg in show_command_options(output, table):
        where = f"job file {path}, option {arg.name}"
        if arg.kind == "unknown":
            problems.append(f"{where}: fio has no such option")
            continue
        reason = (
            top_level_refusal(arg.name, arg.value) if arg.kind == "top" else job_option_refusal(arg.name, arg.value)
        )
        if reason:
            problems.append(f"{where}={arg.value or ''} {reason}; racperf refuses it")
    return problems


#: fio's line buffer (parse.h OPT_LEN_MAX): longer lines are split by fgets into several
_FIO_LINE_MAX = 8192
#: what fio's strip_blank_front/end remove (isspace, and iscntrl at the end), plus bytes >= 0x80:
#: stripping more than fio only makes racperf see more lines as ioengine lines
_BLANKS = bytes(range(0, 33)) + bytes(range(127, 256))
_MATH_KEYWORDS = (b"$pagesize", b"$mb_memory", b"$ncpus")
_MAX_INCLUDE_DEPTH = 8


_builtin_engines: dict[str, frozenset[str]] = {}


def builtin_engines(fio: str) -> frozenset[str]:
    """The engines built into this fio (``fio --enghelp``): loading one runs no library code.
    Any other name fio dlopen()s."""
    if fio not in _builtin_engines:
        status, output = _fio(fio, ["--enghelp"])
        names = output.split("Available IO engines:", 1)[-1].split() if status == 0 else []
        _builtin_engines[fio] = frozenset(n for n in names if re.fullmatch(r"[a-z0-9_]+", n))
    return _builtin_engines[fio]


def prescreen_job_file(path: str, builtins: frozenset[str] = frozenset()) -> list[str]:
    """Refusals from the raw text of a job file and its includes, before fio reads it at all.

    fio loads a job's ioengine (dlopen: the library's code runs) as soon as a section holds an
    option its main table does not know, an engine option for instance, and that happens in
    ``fio --showcmd`` too. So every line fio could read as ``ioengine=...`` must name an
    allowed engine, or one built into fio (which loads no library; fio's own reading then says
    why racperf refuses it), exactly, before any fio sees the file. Lines are read as fio's ini parser
    reads them (parse_jobs_ini: blanks stripped, ';' and '#' end a line, ``include FILE``
    relative to the working directory, else to the including file's directory); wherever
    racperf's reading could differ from fio's it refuses (a '$' in an option name, a value
    fio expands with ${VAR}, lines longer than fio's buffer, NUL bytes)."""
    problems: list[str] = []

    def scan(file: str, depth: int, where: str) -> None:
        try:
            with open(file, "rb") as handle:
                data = handle.read(MAX_JOB_FILE_BYTES + 1)
        except OSError as exc:
            problems.append(f"{where}: {exc.strerror}")
            return
        if len(data) > MAX_JOB_FILE_BYTES:
            problems.append(f"{where}: larger than {MAX_JOB_FILE_BYTES} bytes")
            return
        if b"\0" in data:
            problems.append(f"{where}: holds NUL bytes, which fio reads differently")
            return
        for number, raw in enumerate(data.split(b"\n"), 1):
            at = f"{where}, line {number}"
            if len(raw) >= _FIO_LINE_MAX - 1:
                problems.append(f"{at}: longer than fio's line buffer ({_FIO_LINE_MAX - 2} bytes)")
                continue
            line = raw.lstrip(_BLANKS)
            cut = min([i for i in (line.find(b";"), line.find(b"#")) if i >= 0], default=len(line))
            line = line[:cut].rstrip(_BLANKS)
            if not line or line.startswith(b"["):
                continue
            if line.startswith(b"include"):
                if depth >= _MAX_INCLUDE_DEPTH:
                    problems.append(f"{at}: includes nested deeper than {_MAX_INCLUDE_DEPTH}")
                    continue
                name = os.fsdecode(line[len(b"include") + 1 :])
                candidates = [name, os.path.join(os.path.dirname(file), name)]
                found = [c for c in dict.fromkeys(candidates) if c and os.path.exists(c)]
                if not found:
                    problems.append(f"{at}: include {name!r}: no such file")
                for candidate in found:
                    scan(candidate, depth + 1, f"{where}, include {candidate}")
                continue
            key, sep, value = line.partition(b"=")
            if b"$" in key:
                problems.append(
                    f"{at}: option name {os.fsdecode(key)!r} with '$' in it: racperf cannot "
                    "tell which option fio makes of it"
                )
                continue
            if any(word in line for word in _MATH_KEYWORDS) and any(c in value for c in b"+-*/"):
                problems.append(
                    f"{at}: {os.fsdecode(line)!r}: fio computes this with bc (runs a program); give the number"
                )
            if key.rstrip(_BLANKS) == b"ioengine":
                engine = os.fsdecode(value)
                if not sep or (engine not in ALLOWED_ENGINES and engine not in builtins):
                    reason = engine_refusal(engine) or "is not a plain engine name"
                    problems.append(
                        f"{at}: ioengine={engine!r} {reason}; racperf refuses it before fio "
                        "reads the file (fio loads the engine while it reads a job file)"
                    )

    scan(path, 0, f"job file {path}")
    return problems


# --------------------------------------------------------------------------------------------
# the paths each job touches


def split_fio_list(value: str | None) -> list[str]:
    """fio's ``a:b\\:c`` lists (filename=, directory=) as fio's get_next_str splits them:
    blanks stripped around the whole value, ``\\:`` kept as a colon, leading colons skipped,
    and the list ends at the first empty name."""
    text = (value or "").strip()
    names: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == ":" and not current:
            index += 1
            continue
        if char == ":" and current and current[-1] == "\\":
            current[-1] = ":"
        elif char == ":":
            names.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    if current:
        names.append("".join(current))
    return [name for name in names if name]


def _as_count(value: str | None, default: int) -> int | None:
    if value is None or value == "":
        return default
    try:
        return int(str(value).strip(), 0)
    except ValueError:
        return None


def _expand_format(fmt: str, jobname: str, jobnum: int, filenum: int) -> str:
    out = fmt
    for keyword, replacement in zip(_FORMAT_KEYWORDS[:3], (jobname, str(jobnum), str(filenum)), strict=True):
        # a plain replacement: re.sub would read backslashes in the job name as escapes
        pieces = re.compile(re.escape(keyword), re.IGNORECASE).split(out)
        out = replacement.join(pieces)
    return out


def job_paths(job: FioJob) -> tuple[list[str], list[str]]:
    """(paths the job opens, problems). Relative paths are relative to fio's working
    directory, this process's."""
    problems: list[str] = []
    options = job.options
    dirs = split_fio_list(options.get("directory"))

    def in_dir(name: str, index: int) -> str:
        # fio always prefixes directory + "/", absolute names too (filesetup.c add_file)
        return f"{dirs[index % len(dirs)]}/{name}" if dirs else name

    numjobs = _as_count(options.get("numjobs"), 1)
    nrfiles = _as_count(options.get("nrfiles"), 1)
    if numjobs is None or nrfiles is None:
        return [], [
            f"{job.where}: numjobs/nrfiles {options.get('numjobs')!r}/{options.get('nrfiles')!r} "
            "is not a number racperf can count the job's files with"
        ]
    paths: list[str] = []
    names = split_fio_list(options.get("filename"))
    if names:
        # every directory with every name: a superset of fio's round-robin assignment
        paths = [in_dir(name, index) for name in names for index in range(max(1, len(dirs)))]
    else:
        fmt = options.get("filename_format") or "$jobname.$jobnum.$filenum"
        if "$clientuid" in fmt.lower():
            return [], [f"{job.where}: filename_format with $clientuid is for fio's client mode"]
        if numjobs * nrfiles > MAX_TARGETS:
            return [], [
                f"{job.where}: {numjobs} jobs x {nrfiles} files is more files than racperf "
                f"checks one by one ({MAX_TARGETS})"
            ]
        for jobnum in range(max(1, numjobs)):
            for filenum in range(max(1, nrfiles)):
                paths.append(in_dir(_expand_format(fmt, job.name, jobnum, filenum), jobnum))
        if nrfiles == 1:
            # fio uses the job name itself when it names something that is not a regular file
            for jobnum in range(max(1, numjobs)):
                candidate = in_dir(job.name, jobnum)
                # fio's exists_and_not_regfile() uses lstat: a symbolic link (to anything) counts
                if os.path.lexists(job.name) and not stat.S_ISREG(os.lstat(job.name).st_mode):
                    paths.append(candidate)
    for path in paths:
        if "$" in path or "\n" in path:
            problems.append(f"{job.where}: file name {path!r}: racperf cannot tell what fio makes of it")
    return list(dict.fromkeys(paths)), problems


def _is_device_node(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISBLK(mode) or stat.S_ISCHR(mode)


def plan_targets(jobs: Iterable[FioJob]) -> list[Target]:
    """Every path of every job, with read or write access (FioPlanError for what cannot be
    told)."""
    jobs = list(jobs)
    plan_writes = any(job.writes for job in jobs)
    targets: dict[tuple[str, str], Target] = {}
    problems: list[str] = []
    for job in jobs:
        paths, job_problems = job_paths(job)
        problems.extend(job_problems)
        for path in paths:
            absolute = os.path.abspath(path)
            access = "write" if job.writes else "read"
            origin = f"{job.where} (rw={job.rw})"
            if access == "read" and plan_writes and not _is_device_node(absolute):
                # no --readonly: fio lays out (unlinks and rewrites) a read job's file that is
                # shorter than the job's size, so the file is judged as written
                access = "write"
                origin = f"{job.where} (rw={job.rw}; another job writes, so fio may lay this file out)"
            targets.setdefault((absolute, access), Target(path=absolute, access=access, origin=origin))
    if problems:
        raise FioPlanError(problems)
    if len(targets) > MAX_TARGETS:
        raise FioPlanError([f"the jobs touch {len(targets)} paths; racperf checks at most {MAX_TARGETS}"])
    return list(targets.values())


# --------------------------------------------------------------------------------------------
# the job file racperf writes


def job_file_text(jobs: list[FioJob]) -> str:
    """One job file holding exactly ``jobs`` (no [global]: each job carries its options)."""
    lines = ["; written by racperf from fio's own reading of the job; run as is"]
    for job in jobs:
        lines.append(f"[{job.name}]")
        for name, value in job.options.items():
            if name == "name":
                continue
            lines.append(name if value is None else f"{name}={value}")
    return "\n".join(lines) + "\n"


def with_log_dir(jobs: list[FioJob], log_dir: str | None) -> list[FioJob]:
    """Jobs whose log prefixes (write_bw_log=NAME ...) point into ``log_dir``."""
    if not log_dir:
        return jobs
    out = []
    for job in jobs:
        copy = FioJob(job.name, job.where, dict(job.options))
        for name in LOG_PREFIX_OPTIONS:
            if name in copy.options:
                prefix = copy.options[name] or job.name
                copy.options[name] = os.path.join(log_dir, prefix)
        out.append(copy)
    return out


def _comparable(jobs: list[FioJob]) -> list[tuple[str, dict[str, str | None]]]:
    return [(job.name, {k: v for k, v in job.options.items() if k != "name"}) for job in jobs]


def verify_job_file(
    fio: str, path: str, jobs: list[FioJob], env: dict[str, str] | None = None, host: Host | None = None
) -> None:
    """FioPlanError unless fio reads the job file at ``path`` back as exactly ``jobs`` (on
    another node: the file's text, read here, fed to that node's fio as the job ``-``)."""
    if is_remote(host):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        status, trace = _fio(fio, ["--parse-only", "--debug=parse", "-"], env, host, stdin=text)
    else:
        status, trace = _fio(fio, ["--parse-only", "--debug=parse", path], env)
    if status != 0:
        raise FioPlanError([f"fio refuses racperf's own job file {path}: {_fio_messages(trace)}"])
    again = _trace_jobs(trace, path, first_file_stonewall=False)
    if _comparable(again) != _comparable(jobs):
        differences = []
        for (name_a, opts_a), (name_b, opts_b) in zip(_comparable(jobs), _comparable(again)):
            if name_a != name_b:
                differences.append(f"job {name_a!r} came back as {name_b!r}")
            for key in sorted(set(opts_a) | set(opts_b)):
                if opts_a.get(key, "<unset>") != opts_b.get(key, "<unset>"):
                    differences.append(
                        f"job {name_a!r}: {key}={opts_a.get(key, '<unset>')!r} came back as "
                        f"{opts_b.get(key, '<unset>')!r}"
                    )
        if len(again) != len(jobs):
            differences.append(f"{len(jobs)} jobs came back as {len(again)}")
        raise FioPlanError(
            [
                "fio would not run exactly what racperf checked (a value fio reinterprets, e.g. a comment "
                "sign or ${...} in it): " + "; ".join(differences[:5])
            ]
        )


def plan(
    fio: str,
    table: FioOptionTable,
    args: list[str],
    *,
    log_dir: str | None = None,
    env: dict[str, str] | None = None,
    host: Host | None = None,
) -> FioPlan:
    """Resolve, judge the options of, and list the targets of the fio command line ``args``,
    read by the fio at ``fio`` on ``host`` (this machine when None). FioPlanError says
    everything refused. The write guard itself judges ``targets`` later, outside the tool (the
    same guard serves every tool)."""
    try:
        jobs, top_level = resolve_jobs(fio, table, args, env, host)
    except FioOptionError as exc:
        raise FioPlanError([str(exc)]) from None
    jobs = with_log_dir(jobs, log_dir)
    if is_remote(host):
        assert host is not None
        relative = [path for job in jobs for path in job_paths(job)[0] if not path.startswith("/")]
        if relative:
            raise FioPlanError(
                [
                    f"file {relative[0]!r}: a run on {host.name} needs absolute file names "
                    "(filename=/path or directory=/path): a relative one means a directory there racperf cannot judge"
                ]
            )
    targets = plan_targets(jobs)
    return FioPlan(jobs=jobs, top_level=top_level, targets=targets, job_file_text=job_file_text(jobs))
