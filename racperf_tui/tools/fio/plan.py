"""What a fio run will do, as fio itself resolves it: jobs, options, and every path it touches.

racperf does not read fio's grammar by hand. The user's command-line options are read with the
installed fio's option table (:mod:`racperf_tui.tools.fio.options`); job files go through
``fio --showcmd`` first (fio strips comments, follows includes, expands ``${VAR}`` and
``$ncpus``-style keywords, turns aliases into names) so that nothing which runs code or loads a
library is ever handed to fio's parser, and then everything goes through
``fio --parse-only --debug=parse``, whose trace is fio's own account of which option it set to
which value in which job. The plan is judged from that trace: the allow list of
:mod:`racperf_tui.tools.fio.policy` on every option of every job, and the paths each job reads
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
import secrets
import shlex
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard

from racperf_tui.core.contract.invocation import Target
from racperf_tui.core.guard.private_dirs import vet_private_directory
from racperf_tui.core.guard.program_vetting import UntrustedPath
from racperf_tui.tools.base import on_another_node, run_briefly
from racperf_tui.tools.fio.options import (
    FioArg,
    FioOptionError,
    FioOptionTable,
    read_command_line,
    show_command_options,
)
from racperf_tui.tools.fio.policy import (
    ALLOWED_ENGINES,
    LOG_PREFIX_OPTIONS,
    engine_refusal,
    job_option_refusal,
    refusal_names,
    top_level_refusal,
)

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

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
    #: on another node: the job files and includes as read here, as the node's fio read them
    #: (copy name -> text); kept in the run's directory beside racperf's own job file
    input_files: dict[str, str] = field(default_factory=dict)
    #: read by another node's fio, which runs in the run's directory there (see job_paths)
    on_node: bool = False

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
    files: NodeJobFiles | None = None,
    cwd: str | None = None,
) -> tuple[int, str]:
    """fio's answer (status, stdout + stderr) where the run runs: here, or on ``host``'s node
    (``stdin``: a job file's text for the job named ``-``; ``files``: the job files read here,
    written to a private directory there that is fio's working directory, removed after;
    ``cwd``: fio's working directory here, where the private copies are)."""
    where = f" on {host.name}" if host is not None and is_remote(host) else ""
    try:
        if is_remote(host):
            assert host is not None
            node_env = {**(env or {}), "PATH": _NO_COMMANDS_PATH}
            if files is not None:
                script = files.script(fio, args, node_env)
                answer = host.run_briefly(["sh", "-s"], _FIO_TIMEOUT_S, stdin=script)
            else:
                answer = host.run_briefly([fio, *args], _FIO_TIMEOUT_S, env=node_env, stdin=stdin)
            return answer.returncode, answer.text
        done = run_briefly([fio, *args], _FIO_TIMEOUT_S, _parse_env(env), cwd=cwd)
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
) -> tuple[list[FioJob], list[FioArg], dict[str, str]]:
    """Every job of the fio command line ``args`` (options and job files) as fio parses it
    (the fio of ``host``'s node when it is another one: the job files read here, their
    copies read there), fio's own options that racperf passes on, and those copies (name ->
    text; none for this machine). FioPlanError lists everything refused."""
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
    if not line.job_files:
        if problems:
            raise FioPlanError(problems)
        return _resolved(fio, line.job_files, job_args, top_level, env, host, None, None)
    copies = NodeJobFiles()
    if is_remote(host):
        for path in line.job_files:
            problems.extend(_screen_job_file(fio, table, path, env, host, copies))
        if problems:
            raise FioPlanError(problems)
        return _resolved(fio, line.job_files, job_args, top_level, copies.environment(env), host, copies, None)
    # here too fio reads private copies of what was screened, never the paths again: a job file
    # in a directory another user can write was swapped between the screening and fio's parser
    with private_copies_directory() as directory:
        for path in line.job_files:
            problems.extend(_screen_job_file(fio, table, path, env, None, copies, directory))
        if problems:
            raise FioPlanError(problems)
        return _resolved(fio, line.job_files, job_args, top_level, env, None, copies, directory)


def _resolved(
    fio: str,
    given: list[str],
    job_args: list[FioArg],
    top_level: list[FioArg],
    env: dict[str, str] | None,
    host: Host | None,
    copies: NodeJobFiles | None,
    directory: str | None,
) -> tuple[list[FioJob], list[FioArg], dict[str, str]]:
    """fio's reading of the command line and the job files ``given`` (read from their screened
    ``copies``: on a node in a directory of its own, here in ``directory``)."""
    problems: list[str] = []
    node_files = copies if is_remote(host) else None
    job_files = [copies.name_of(path) for path in given] if copies is not None else given

    cli = [f"--{a.name}" if a.value is None else f"--{a.name}={a.value}" for a in job_args]
    jobs: list[FioJob] = []
    parses = [(cli + job_files[:1], "the command line" + (f" and {given[0]}" if given else ""))]
    parses += [([copy], path) for copy, path in zip(job_files[1:], given[1:], strict=True)]
    for index, (parse_args, where) in enumerate(parses):
        status, trace = _fio(
            fio, ["--parse-only", "--debug=parse", *parse_args], env, host, files=node_files, cwd=directory
        )
        if status != 0:
            said = _fio_messages(trace)
            raise FioPlanError([f"fio refuses {where}: {copies.restore(said) if copies else said}"])
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
    return jobs, top_level, node_files.files() if node_files else {}


@contextmanager
def private_copies_directory() -> Iterator[str]:
    """A directory of this process's own (0700, judged private: core/guard/private_dirs.py) for
    the copies fio here reads, removed after; FioPlanError when the temporary directory's
    place is another user's."""
    directory = tempfile.mkdtemp(prefix="racperf-fiojob.")
    try:
        try:
            vet_private_directory(directory, "fio job file copies (TMPDIR)")
        except UntrustedPath as exc:
            raise FioPlanError([str(exc)]) from None
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _screen_job_file(
    fio: str,
    table: FioOptionTable,
    path: str,
    env: dict[str, str] | None,
    host: Host | None = None,
    node_files: NodeJobFiles | None = None,
    directory: str | None = None,
) -> list[str]:
    """Refusals for a job file, from fio's --showcmd (which never loads an engine), before the
    file ever reaches fio's real parser. The file and its includes are read here once, as fio
    here would resolve them, and fio reads the copies (see :class:`NodeJobFiles`): that
    node's fio in a directory of its own, this machine's in ``directory``."""
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        return [f"job file {path}: {exc.strerror}"]
    if not os.path.isfile(path):
        return [f"job file {path}: not a regular file"]
    if size > MAX_JOB_FILE_BYTES:
        return [f"job file {path}: {size} bytes; a job file is at most {MAX_JOB_FILE_BYTES} bytes"]
    reading = read_job_file(path, table.builtin_engines)
    if reading.problems:
        return reading.problems
    if node_files is None:
        return [f"job file {path}: no place for its copy"]  # not reached: every caller gives one
    if directory is None:
        assert host is not None
        early = node_files.add(reading, host.name)
        if early:
            return early
        status, output = _fio(
            fio, ["--showcmd", node_files.name_of(path)], node_files.environment(env), host, files=node_files
        )
    else:
        early = node_files.add(reading, "fio here")
        if early:
            return early
        node_files.write_to(directory)
        status, output = _fio(fio, ["--showcmd", node_files.name_of(path)], env, cwd=directory)
    if status != 0:
        said = _fio_messages(output)
        return [f"job file {path}: fio cannot read it: {node_files.restore(said) if node_files else said}"]
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


#: fio's line buffer: longer lines are split by fgets into several, the rest of a line read
#: as a line of its own. 4096 before fio 3.15 (RHEL/OL 7 ship 3.7), OPT_LEN_MAX = 8192 since:
#: the smaller, as a node's fio (or this machine's) may be the older one
_FIO_LINE_MAX = 4096
#: kernel pseudo-file systems: a "regular" file there can block a read for ever or take what it
#: reads from others (/proc/kmsg hands the kernel log's lines to the first reader only)
_PSEUDO_FS_ROOTS = ("/proc", "/sys")
#: what fio's strip_blank_front/end remove (isspace, and iscntrl at the end), plus bytes >= 0x80:
#: stripping more than fio only makes racperf see more lines as ioengine lines
_BLANKS = bytes(range(0, 33)) + bytes(range(127, 256))
_MATH_KEYWORDS = (b"$pagesize", b"$mb_memory", b"$ncpus")
_MAX_INCLUDE_DEPTH = 8
#: what some editors put before the first line; fio takes it for part of the first line
UTF8_BOM = b"\xef\xbb\xbf"


@dataclass
class JobFileReading:
    """A job file and everything it includes, read here as fio reads them: the refusals, the
    bytes of every file read (by the path fio names it with), the include each include line
    leads to as fio here would resolve it, and the ``${NAME}`` each file's option lines use."""

    path: str
    problems: list[str] = field(default_factory=list)
    data: dict[str, bytes] = field(default_factory=dict)
    #: (file, line index) -> the path fio opens for that include line
    includes: dict[tuple[str, int], str] = field(default_factory=dict)
    variables: dict[str, set[str]] = field(default_factory=dict)


def _fio_include(file: str, name: str) -> str:
    """The file fio opens for ``include NAME`` in ``file`` (init.c: NAME as given when it exists
    from fio's working directory, else NAME after the including file's directory)."""
    if os.path.exists(name) or "/" not in file:
        return name
    return file[: file.rfind("/") + 1] + name


def prescreen_job_file(path: str, builtins: frozenset[str] = frozenset()) -> list[str]:
    """Refusals from the raw text of a job file and its includes (:func:`read_job_file`)."""
    return read_job_file(path, builtins).problems


def read_job_file(path: str, builtins: frozenset[str] = frozenset()) -> JobFileReading:
    """A job file and its includes, read before fio reads it at all.

    fio loads a job's ioengine (dlopen: the library's code runs) as soon as a section holds an
    option its main table does not know, an engine option for instance, and that happens in
    ``fio --showcmd`` too. So every line fio could read as ``ioengine=...`` must name an
    allowed engine, or one built into fio (which loads no library; fio's own reading then says
    why racperf refuses it), exactly, before any fio sees the file. Lines are read as fio's ini parser
    reads them (parse_jobs_ini: blanks stripped, ';' and '#' end a line, ``include FILE``
    relative to the working directory, else to the including file's directory: both are read
    when both exist); wherever racperf's reading could differ from fio's it refuses (a '$' in
    an option name, lines longer than fio's buffer, NUL bytes, a file that is not a regular
    one: a FIFO would never end)."""
    reading = JobFileReading(path)
    problems = reading.problems

    def scan(file: str, depth: int, where: str) -> None:
        data = reading.data.get(file)
        if data is None:
            real = os.path.realpath(file)
            if any(real == root or real.startswith(root + "/") for root in _PSEUDO_FS_ROOTS):
                problems.append(
                    f"{where}: a pseudo-file of the kernel ({real}), not a job file: racperf never reads it"
                )
                return
            try:
                if not stat.S_ISREG(os.stat(file).st_mode):
                    problems.append(f"{where}: not a regular file")
                    return
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
            if data.startswith(UTF8_BOM):
                problems.append(
                    f"{where}: starts with a UTF-8 byte order mark (the bytes EF BB BF an editor on Windows "
                    "adds), which fio reads as part of the first line; save the file without it "
                    "(e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)"
                )
                return
            reading.data[file] = data
        variables = reading.variables.setdefault(file, set())
        for number, raw in enumerate(data.split(b"\n"), 1):
            at = f"{where}, line {number}"
            if len(raw) >= _FIO_LINE_MAX - 1:
                problems.append(
                    f"{at}: longer than {_FIO_LINE_MAX - 2} bytes, the line fio before 3.15 reads "
                    "(it reads the rest as a line of its own)"
                )
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
                chosen = _fio_include(file, name)
                reading.includes[(file, number - 1)] = chosen
                candidates = [name, chosen, os.path.join(os.path.dirname(file), name)]
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
            # fio's option_dup_subs: ${NAME} up to the first '}' is the variable's value
            variables.update(os.fsdecode(m) for m in re.findall(rb"\$\{([^}]+)\}", line))
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
    return reading


#: copies of job files and includes a node's fio reads in one planning directory, at most
MAX_NODE_JOB_FILES = 64
#: and at most this many bytes in all (they travel with each of the node's two fio commands)
MAX_NODE_JOB_BYTES = 4 << 20
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_COPY_NAME_UNSAFE_RE = re.compile(r"[^A-Za-z0-9._-]")


class NodeJobFiles:
    """The job files of a run on another node and everything they include, read HERE (where the
    user typed the path) and sent to the node as copies in one flat directory: each include
    line names the copy of the file fio here would include, so the node's fio, run in that
    directory, reads exactly the bytes racperf screened and never a file of the node's
    (``include FILE`` is tried from fio's working directory first). ``${NAME}`` in the files
    is this machine's variable (racperf's environment), sent with the command: unset here is
    empty there, as fio makes an unset variable, whatever the node's login sets."""

    def __init__(self) -> None:
        #: path as fio names it here -> (copy's name, its text with the includes renamed)
        self._copies: dict[str, tuple[str, str]] = {}
        self._variables: set[str] = set()

    def name_of(self, path: str) -> str:
        return self._copies[path][0]

    def add(self, reading: JobFileReading, node: str) -> list[str]:
        """The copies of ``reading``'s files (fio's choice of each include); refusals of what
        cannot go to ``node`` as it was read."""
        order: list[str] = []
        pending = [reading.path]
        while pending:
            file = pending.pop(0)
            if file in self._copies or file in order:
                continue
            if len(self._copies) + len(order) >= MAX_NODE_JOB_FILES:
                return [f"job file {reading.path}: more than {MAX_NODE_JOB_FILES} files with its includes"]
            order.append(file)
            pending += [chosen for (including, _), chosen in reading.includes.items() if including == file]
        names = {file: self._name_for(file, len(self._copies) + n) for n, file in enumerate(order, 1)}
        problems: list[str] = []
        texts: dict[str, str] = {}
        for file in order:
            lines = reading.data[file].split(b"\n")
            for (including, index), chosen in reading.includes.items():
                if including == file:
                    lines[index] = b"include " + (names.get(chosen) or self._copies[chosen][0]).encode()
            try:
                texts[file] = b"\n".join(lines).decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(
                    f"job file {reading.path}: {file} is not UTF-8 text (byte {exc.start}); "
                    f"racperf sends a job file to {node} as text: write it in UTF-8"
                )
            for variable in sorted(reading.variables.get(file, ())):
                if not _ENV_NAME_RE.match(variable):
                    problems.append(
                        f"job file {reading.path}: ${{{variable}}} in {file}: not a variable name racperf can "
                        f"send to {node}"
                    )
                elif variable.startswith("LD_"):
                    # sent with fio's command, it would steer the node's dynamic loader
                    problems.append(
                        f"job file {reading.path}: ${{{variable}}} in {file}: racperf does not send the dynamic "
                        f"loader's variables to {node}; write the value"
                    )
        total = sum(len(text) for text in texts.values()) + sum(len(text) for _, text in self._copies.values())
        if total > MAX_NODE_JOB_BYTES:
            problems.append(
                f"job file {reading.path}: {total} bytes with its includes; at most {MAX_NODE_JOB_BYTES} go to {node}"
            )
        if problems:
            return problems
        for file in order:
            self._copies[file] = (names[file], texts[file])
            self._variables.update(reading.variables.get(file, ()))
        return []

    @staticmethod
    def _name_for(file: str, number: int) -> str:
        return f"input-{number}-" + _COPY_NAME_UNSAFE_RE.sub("_", os.path.basename(file))[-40:]

    def environment(self, env: dict[str, str] | None) -> dict[str, str]:
        """``env`` and every ``${NAME}`` of the files with this machine's value ("" when unset)."""
        return {**{name: os.environ.get(name, "") for name in sorted(self._variables)}, **(env or {})}

    def write_to(self, directory: str) -> None:
        """The copies as new files (0600) in ``directory``, a private one of this machine."""
        for name, text in self._copies.values():
            path = os.path.join(directory, name)
            if os.path.lexists(path):
                continue
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)

    def files(self) -> dict[str, str]:
        """Copy name -> text: what the node's fio reads (also kept in the run's directory)."""
        return {name: text for name, text in self._copies.values()}

    def restore(self, said: str) -> str:
        """fio's words with the copies' names back to the paths they are copies of."""
        for path, (name, _text) in self._copies.items():
            said = said.replace(name, path)
        return said

    def script(self, fio: str, args: list[str], env: dict[str, str]) -> str:
        """A sh script: a private directory, the copies in it, ``fio ARGS`` run there with
        ``env``, the directory removed; the script's status is fio's."""
        texts = [text for _name, text in self._copies.values()]
        mark = "RACPERF_EOF_" + secrets.token_hex(8)
        while any(mark in text for text in texts):
            mark = "RACPERF_EOF_" + secrets.token_hex(8)
        lines = [
            "umask 077",
            # in the sticky /tmp, never the login's $TMPDIR: in another user's directory they could
            # rename the copies' directory away and put theirs in its place before fio reads it
            "d=$(mktemp -d /tmp/racperf-fiojob.XXXXXX) || exit 1",
            "trap 'cd /; rm -rf -- \"$d\"' EXIT",
            "trap 'exit 143' HUP INT TERM",
            'cd -- "$d" || exit 1',
        ]
        for name, text in self._copies.values():
            body = text if text.endswith("\n") or not text else text + "\n"
            lines.append(f"cat > {shlex.quote(name)} <<'{mark}'\n{body}{mark}")
        words = ["env", *(f"{k}={v}" for k, v in env.items()), fio, *args]
        lines.append(" ".join(shlex.quote(word) for word in words) + " </dev/null 2>&1")
        lines.append('status=$?; cd /; rm -rf -- "$d"; trap - EXIT; exit "$status"')
        return "\n".join(lines) + "\n"


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


#: fio's PATH_MAX: make_filename() spends one budget of PATH_MAX - 1 bytes over every keyword it
#: replaces (init.c), and add_file() joins directory and name in a PATH_MAX buffer (filesetup.c)
FIO_PATH_MAX = 4096
#: racperf refuses a file name whose making comes within this many bytes of fio's budget: near
#: it fio cuts the name silently (or, joining a directory, overflows its buffer)
FIO_NAME_MARGIN = 256


class FormatRefused(ValueError):
    """A filename_format (or job name) whose file name racperf cannot compute as fio does."""


def _expand_format(fmt: str, jobname: str, jobnum: int, filenum: int) -> str:
    """The file name fio's make_filename() makes of ``fmt`` for one clone and file, computed
    as fio computes it: each keyword ($jobname, $jobnum, $filenum, then $clientuid), in that
    order and matched without regard to ASCII case, replaced at its first occurrence in the
    text as it stands, again until none is left, every replacement charged to one budget of
    PATH_MAX - 1 bytes (the text before the keyword and what replaces it, never given back).
    FormatRefused where fio's result is not that: the budget nearly spent (fio cuts the name
    silently), a keyword inside what replaces it (fio replaces it again until the budget runs
    out), $clientuid (fio's client mode only)."""
    limit = FIO_PATH_MAX - 1 - FIO_NAME_MARGIN
    text = fmt.encode("utf-8", "surrogateescape")
    if len(text) > limit:
        raise FormatRefused(f"filename_format is {len(text)} bytes; racperf accepts up to {limit}")
    spent = 0
    values = (jobname.encode("utf-8", "surrogateescape"), str(jobnum).encode(), str(filenum).encode(), None)
    for keyword, value in zip((k.encode() for k in _FORMAT_KEYWORDS), values, strict=True):
        while (at := text.lower().find(keyword)) >= 0:
            if value is None:
                raise FormatRefused("filename_format with $clientuid is for fio's client mode")
            if keyword in value.lower():
                raise FormatRefused(
                    f"the job name {jobname!r} holds {keyword.decode()}, which fio's make_filename replaces "
                    "again and again until its PATH_MAX budget runs out"
                )
            rest = text[at + len(keyword) :]
            spent += at + len(value)
            # fio copies the rest into what is left of the budget; all of it must fit, with room
            if spent + len(rest) > limit:
                raise FormatRefused(
                    f"fio's make_filename() spends one PATH_MAX ({FIO_PATH_MAX}) budget over every keyword it "
                    f"replaces; for clone {jobnum}, file {filenum} this format needs {spent + len(rest)} bytes of it, "
                    f"too near the limit where fio cuts the name silently (racperf accepts up to {limit})"
                )
            text = text[:at] + value + rest
    return text.decode("utf-8", "surrogateescape")


def _default_name(jobname: str, jobnum: int, filenum: int) -> str:
    """fio's name without a filename_format: "%s.%d.%d" of the job name, no keyword replaced."""
    name = f"{jobname}.{jobnum}.{filenum}"
    if len(name.encode("utf-8", "surrogateescape")) > FIO_PATH_MAX - 1 - FIO_NAME_MARGIN:
        raise FormatRefused(f"the job name is {len(jobname)} characters; fio's file name would overflow PATH_MAX")
    return name


def job_paths(job: FioJob, on_node: bool = False) -> tuple[list[str], list[str]]:
    """(paths the job opens, problems). Relative paths are relative to fio's working
    directory: this process's, or on another node (``on_node``) the run's directory there,
    which holds racperf's regular files only."""
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
        fmt = options.get("filename_format") or ""
        if "$clientuid" in fmt.lower():
            return [], [f"{job.where}: filename_format with $clientuid is for fio's client mode"]
        if numjobs * nrfiles > MAX_TARGETS:
            return [], [
                f"{job.where}: {numjobs} jobs x {nrfiles} files is more files than racperf "
                f"checks one by one ({MAX_TARGETS})"
            ]
        try:
            for jobnum in range(max(1, numjobs)):
                for filenum in range(max(1, nrfiles)):
                    name = (
                        _expand_format(fmt, job.name, jobnum, filenum)
                        if fmt
                        else _default_name(job.name, jobnum, filenum)
                    )
                    paths.append(in_dir(name, jobnum))
        except FormatRefused as refused:
            return [], [f"{job.where}: {refused}; refused: racperf judges only the file fio will open"]
        if nrfiles == 1 and not on_node:
            # fio uses the job name itself when it names something that is not a regular file
            # in its working directory (never so on a node: there it is racperf's run directory)
            for jobnum in range(max(1, numjobs)):
                candidate = in_dir(job.name, jobnum)
                # fio's exists_and_not_regfile() uses lstat: a symbolic link (to anything) counts
                if os.path.lexists(job.name) and not stat.S_ISREG(os.lstat(job.name).st_mode):
                    paths.append(candidate)
    for path in paths:
        if "$" in path or "\n" in path:
            problems.append(f"{job.where}: file name {path!r}: racperf cannot tell what fio makes of it")
        elif len(path.encode("utf-8", "surrogateescape")) > FIO_PATH_MAX - 1 - FIO_NAME_MARGIN:
            # add_file() joins directory and name with an unbounded sprintf into PATH_MAX bytes
            problems.append(
                f"{job.where}: file name of {len(path)} characters (directory and name): too near fio's "
                f"PATH_MAX ({FIO_PATH_MAX}), where it no longer opens the name racperf judged"
            )
    return list(dict.fromkeys(paths)), problems


def _is_device_node(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISBLK(mode) or stat.S_ISCHR(mode)


#: prints each of its arguments that is a block or character device (on a node)
_DEVICE_NODES_SH = 'for p in "$@"; do if [ -b "$p" ] || [ -c "$p" ]; then printf "%s\\n" "$p"; fi; done'


def _device_nodes_on(host: Host, paths: list[str]) -> set[str]:
    """Which of ``paths`` are device nodes on ``host``'s node (one command)."""
    try:
        answer = host.run_briefly(["sh", "-c", _DEVICE_NODES_SH, "racperf-devices", *paths], _FIO_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise FioPlanError([f"cannot tell which files are devices on {host.name}: {exc}"]) from None
    return set(answer.stdout.splitlines()) & set(paths)


def plan_targets(jobs: Iterable[FioJob], host: Host | None = None) -> list[Target]:
    """Every path of every job, with read or write access (FioPlanError for what cannot be
    told); whether a path is a device is asked of ``host``'s node when it is another one."""
    jobs = list(jobs)
    plan_writes = any(job.writes for job in jobs)
    is_device: Callable[[str], bool] = _is_device_node
    if plan_writes and is_remote(host):
        assert host is not None
        read_paths = [os.path.abspath(p) for job in jobs if not job.writes for p in job_paths(job, True)[0]]
        devices = _device_nodes_on(host, read_paths) if read_paths else set()
        is_device = devices.__contains__
    targets: dict[tuple[str, str], Target] = {}
    problems: list[str] = []
    for job in jobs:
        paths, job_problems = job_paths(job, is_remote(host))
        problems.extend(job_problems)
        for path in paths:
            absolute = os.path.abspath(path)
            access = "write" if job.writes else "read"
            origin = f"{job.where} (rw={job.rw})"
            if access == "read" and plan_writes and not is_device(absolute):
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
        jobs, top_level, input_files = resolve_jobs(fio, table, args, env, host)
    except FioOptionError as exc:
        raise FioPlanError([str(exc)]) from None
    jobs = with_log_dir(jobs, log_dir)
    if is_remote(host):
        assert host is not None
        relative = [(path, job) for job in jobs for path in job_paths(job, True)[0] if not path.startswith("/")]
        if relative:
            raise FioPlanError(
                [
                    f"{job.where}: file {path!r}: a run on {host.name} needs absolute file names "
                    "(filename=/path or directory=/path): a relative one means a directory there racperf cannot "
                    "judge (fio takes it from its working directory, not from the job file's)"
                    for path, job in relative[:5]
                ]
            )
    too_long = [
        f"{job.where}: option {name}: {len(line.encode())} bytes in racperf's job file line; fio before 3.15 "
        f"reads at most {_FIO_LINE_MAX - 2} bytes a line (it would read the rest as a line of its own)"
        for job in jobs
        for name, value in job.options.items()
        for line in [name if value is None else f"{name}={value}"]
        if len(line.encode()) >= _FIO_LINE_MAX - 1
    ]
    if too_long:
        raise FioPlanError(too_long[:5])
    targets = plan_targets(jobs, host)
    return FioPlan(
        jobs=jobs,
        top_level=top_level,
        targets=targets,
        job_file_text=job_file_text(jobs),
        input_files=input_files,
        on_node=is_remote(host),
    )
