"""fio's option table, read from the installed fio, and fio's command-line grammar.

racperf never models fio's options by hand: which names exist, their aliases and whether they
take a value come from the fio that will run (``fio --cmdhelp=all``, ``fio --cmdhelp=NAME``,
``fio --enghelp=ENGINE[,NAME]``), cached per fio binary. Command-line arguments are then read
the way fio reads them, with glibc's ``getopt_long_only``: a long option may be written with
one or two dashes and abbreviated to any unique prefix; a lone letter after one dash is a short
option. Where fio would see an abbreviation as ambiguous, racperf refuses it, so a name is never
read differently by racperf and by fio.

Which options a benchmark may use at all is decided in :mod:`racperf_tui.tools.fio.policy`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import secrets
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from racperf_tui.core.guard.program_vetting import vet_path
from racperf_tui.core.textio.bounded_read import read_regular_text_bounded
from racperf_tui.tools.base import on_another_node, run_briefly

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

#: fio's own (not per-job) options, from fio's init.c ``l_opts`` with their argument kind:
#: "required", "optional" (only as --opt=value) or "none". Listed here because fio prints no
#: table of them; a name fio lacks only makes racperf see more abbreviations as ambiguous.
TOP_LEVEL_OPTIONS: dict[str, str] = {
    "output": "required",
    "latency-log": "required",
    "bandwidth-log": "optional",
    "minimal": "none",
    "output-format": "required",
    "append-terse": "optional",
    "version": "none",
    "help": "none",
    "cmdhelp": "optional",
    "enghelp": "optional",
    "showcmd": "none",
    "readonly": "none",
    "eta": "required",
    "eta-interval": "required",
    "eta-newline": "required",
    "debug": "required",
    "parse-only": "none",
    "section": "required",
    "inflate-log": "required",
    "alloc-size": "required",
    "profile": "required",
    "warnings-fatal": "none",
    "max-jobs": "required",
    "terse-version": "required",
    "server": "optional",
    "server-internal": "required",
    "daemonize": "required",
    "client": "required",
    "remote-config": "required",
    "cpuclock-test": "none",
    "crctest": "optional",
    "memcpytest": "optional",
    "idle-prof": "required",
    "status-interval": "required",
    "trigger-file": "required",
    "trigger-timeout": "required",
    "trigger": "required",
    "trigger-remote": "required",
    "aux-path": "required",
    "merge-blktrace-only": "none",
}

#: engines whose options racperf reads (the ones fio_policy allows)
KNOWN_ENGINES = ("psync", "sync", "pvsync", "pvsync2", "vsync", "libaio", "io_uring", "posixaio", "mmap", "null")

#: fio's answer to --cmdhelp must come within this (a hung fio must not hang the form)
_FIO_TIMEOUT_S = 20.0
_CACHE_VERSION = 2


class FioOptionError(ValueError):
    """fio's options could not be read or an argument is not one fio would accept."""


@dataclass(frozen=True)
class FioOptionTable:
    """Every long option name the installed fio's parser knows.

    ``names`` maps each spelling (canonical name or alias) to its canonical name; ``kinds``
    says, per spelling, "top" (fio's own), "job" or "engine"; ``args`` whether it takes a value.
    """

    fio_version: str
    names: dict[str, str]
    kinds: dict[str, str]
    args: dict[str, str]
    engine_options: dict[str, frozenset[str]] = field(default_factory=dict)
    #: the engines built into this fio (``fio --enghelp``): loading one runs no library code
    builtin_engines: frozenset[str] = frozenset()

    def match(self, spelled: str) -> list[str]:
        """Spellings fio's getopt_long_only would consider for ``spelled``: the exact one, else
        every name it is a prefix of."""
        if spelled in self.names:
            return [spelled]
        return [name for name in self.names if name.startswith(spelled)]

    def suggest(self, spelled: str) -> list[str]:
        return difflib.get_close_matches(spelled, list(self.names), n=3, cutoff=0.6)


# --------------------------------------------------------------------------------------------
# reading the table from fio


def _run_fio(fio: str, *args: str) -> str:
    try:
        done = run_briefly([fio, *args], _FIO_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise FioOptionError(f"{fio} {' '.join(args)} did not answer within {_FIO_TIMEOUT_S:g} s") from None
    except OSError as exc:
        raise FioOptionError(f"cannot run {fio}: {exc.strerror}") from None
    return done.stdout + done.stderr


_HELP_NAME_RE = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*:")


def _help_details(text: str) -> tuple[str | None, str]:
    """(alias, argument kind) from one ``fio --cmdhelp=NAME`` / ``--enghelp=E,NAME`` answer."""
    alias = None
    kind = "required"
    for line in text.splitlines():
        key, _, value = line.strip().partition(":")
        if key == "alias":
            alias = value.strip() or None
        elif key == "type" and value.strip().startswith("empty or boolean"):
            kind = "optional"  # FIO_OPT_STR_SET: getopt's optional_argument
    return alias, kind


#: seconds a node's fio may take to answer every query of its option table
_REMOTE_TABLE_TIMEOUT_S = 300.0
#: fio processes at a time on a node while it answers the queries
_REMOTE_LANES = 8
#: a node's whole option table in one command: the first round (version, the job options,
#: the built-in engines, each known engine's options), then one query per option name found
#: in it, as _read_table asks them (a name once: job options first, then the engines in
#: order); $lanes fio processes at a time, each lane working through its share of the list
#: (no batch waits for its slowest); every answer printed after a line "MARK QUERY" and
#: followed by "MARK-end". The names are read from the listings as _HELP_NAME_RE reads them.
#: The answers go to a directory in the sticky /tmp, never the login's $TMPDIR (in another
#: user's directory they could swap the answers: fio's option table decides how options read).
_REMOTE_TABLE_SH = r"""
fio=$1 mark=$2 lanes=$3; shift 3
d=$(mktemp -d /tmp/racperf-fio.XXXXXX) || exit 1
trap 'rm -rf -- "$d"' EXIT
set -f
ask_all() {
  k=0
  while [ "$k" -lt "$lanes" ]; do
    (
      i=0
      while IFS= read -r a; do
        i=$((i + 1))
        if [ $(((i - 1) % lanes)) -eq "$k" ]; then "$fio" "$a" </dev/null >"$1.$i" 2>&1; fi
      done <"$1"
    ) &
    k=$((k + 1))
  done
  wait
}
names() {
  while IFS= read -r line; do
    case $line in *:*) ;; *) continue ;; esac
    set -- ${line%%:*}
    [ $# -eq 1 ] || continue
    case $1 in *[!A-Za-z0-9_-]*) continue ;; esac
    printf '%s\n' "$1"
  done
}
printf '%s\n' --version --cmdhelp=all --enghelp >"$d/q1"
for e in "$@"; do printf '%s\n' "--enghelp=$e" >>"$d/q1"; done
ask_all "$d/q1"
seen=' '
: >"$d/q2"
names <"$d/q1.2" >"$d/n"
while IFS= read -r n; do
  case $seen in *" $n "*) continue ;; esac
  seen="$seen$n "
  printf '%s\n' "--cmdhelp=$n" >>"$d/q2"
done <"$d/n"
i=3
for e in "$@"; do
  i=$((i + 1))
  case $(cat "$d/q1.$i") in *"has no options"*) continue ;; esac
  names <"$d/q1.$i" >"$d/n"
  while IFS= read -r n; do
    case $seen in *" $n "*) continue ;; esac
    seen="$seen$n "
    printf '%s\n' "--enghelp=$e,$n" >>"$d/q2"
  done <"$d/n"
done
ask_all "$d/q2"
for list in q1 q2; do
  i=0
  while IFS= read -r a; do
    i=$((i + 1))
    printf '%s %s\n' "$mark" "$a"
    cat -- "$d/$list.$i" 2>/dev/null
    printf '\n%s-end\n' "$mark"
  done <"$d/$list"
done
"""


def _node_answers(fio: str, node: Host) -> dict[str, str]:
    """Every answer of the node's fio to its option table's queries, from one command."""
    mark = "racperf-fio-" + secrets.token_hex(8)
    argv = ["sh", "-c", _REMOTE_TABLE_SH, "racperf-fio-table", fio, mark, str(_REMOTE_LANES), *KNOWN_ENGINES]
    try:
        answer = node.run_briefly(argv, _REMOTE_TABLE_TIMEOUT_S)
    except OSError as exc:
        raise FioOptionError(f"cannot ask {fio} on {node.name} for its options: {exc}") from None
    answers: dict[str, str] = {}
    for record in answer.stdout.split(f"\n{mark}-end\n"):
        head, _, text = record.partition("\n")
        if head.startswith(f"{mark} "):
            answers[head[len(mark) + 1 :]] = text
    if answer.returncode != 0 or "--cmdhelp=all" not in answers:
        raise FioOptionError(
            f"{fio} on {node.name} did not answer its option queries: {answer.text.strip()[:200] or 'no output'}"
        )
    return answers


def _asker(fio: str, host: Host | None) -> Callable[[list[str]], list[str]]:
    """answers(queries): fio's answer (stdout + stderr) to each ``fio QUERY``: here in parallel
    processes; on another node every query of the table is answered by one command (the first
    call), later calls are looked up in its answers."""
    if not on_another_node(host):

        def here(queries: list[str]) -> list[str]:
            with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2) * 2)) as pool:
                return list(pool.map(lambda q: _run_fio(fio, q), queries))

        return here
    assert host is not None
    node = host
    fetched: dict[str, str] = {}

    def there(queries: list[str]) -> list[str]:
        if not fetched:
            fetched.update(_node_answers(fio, node))
        missing = [query for query in queries if query not in fetched]
        if missing:
            raise FioOptionError(
                f"{fio} on {node.name} answered {len(queries) - len(missing)} of {len(queries)} option queries "
                f"(not {missing[0]})"
            )
        return [fetched[query] for query in queries]

    return there


def _listed_names(text: str) -> list[str]:
    return [m.group(1) for m in map(_HELP_NAME_RE.match, text.splitlines()) if m]


def _read_table(fio: str, host: Host | None = None) -> dict[str, object]:
    ask = _asker(fio, host)
    first = ask(["--version", "--cmdhelp=all", "--enghelp", *(f"--enghelp={engine}" for engine in KNOWN_ENGINES)])
    version_text, listing, builtin_listing = first[:3]
    version = version_text.strip().splitlines()[0:1]
    job_names = _listed_names(listing)
    if len(job_names) < 50:
        raise FioOptionError(f"{fio} --cmdhelp=all listed {len(job_names)} options; cannot read fio's option table")
    _, listed, builtin_names = builtin_listing.partition("Available IO engines:")
    builtins = builtin_names.split() if listed else []
    engines: dict[str, list[str]] = {}
    for engine, text in zip(KNOWN_ENGINES, first[3:], strict=True):
        engines[engine] = [] if "has no options" in text else _listed_names(text)
    # a name once (the first kind that has it wins): the node's command asks them the same way
    queries: dict[str, tuple[str, str]] = {}
    for name in job_names:
        queries.setdefault(name, ("job", f"--cmdhelp={name}"))
    for engine, names in engines.items():
        for name in names:
            queries.setdefault(name, ("engine", f"--enghelp={engine},{name}"))
    # ~240 short fio processes: once per fio binary (then cached on disk)
    answers = ask([query for _kind, query in queries.values()])
    options: dict[str, dict[str, object]] = {}
    for (name, (kind, _query)), answer in zip(queries.items(), answers, strict=True):
        alias, arg = _help_details(answer)
        options[name] = {"kind": kind, "alias": alias, "arg": arg}
    return {
        "cache_version": _CACHE_VERSION,
        "fio_version": version[0] if version else "?",
        "options": options,
        "engines": engines,
        "builtin_engines": sorted(n for n in builtins if re.fullmatch(r"[a-z0-9_]+", n)),
    }


def _table_from_data(data: dict[str, object]) -> FioOptionTable:
    names: dict[str, str] = {}
    kinds: dict[str, str] = {}
    args: dict[str, str] = {}
    # fio's own options come first in its getopt table: on an exact name they win
    for name, arg in TOP_LEVEL_OPTIONS.items():
        names[name], kinds[name], args[name] = name, "top", arg
    options = data["options"]
    assert isinstance(options, dict)
    for name, info in options.items():
        for spelling in (name, info.get("alias")):
            if spelling and spelling not in names:
                names[spelling] = name
                kinds[spelling] = str(info["kind"])
                args[spelling] = str(info["arg"])
    engines = data.get("engines") or {}
    assert isinstance(engines, dict)
    builtins = data.get("builtin_engines") or []
    assert isinstance(builtins, list)
    return FioOptionTable(
        fio_version=str(data.get("fio_version", "?")),
        names=names,
        kinds=kinds,
        args=args,
        engine_options={k: frozenset(v) for k, v in engines.items()},
        builtin_engines=frozenset(str(name) for name in builtins),
    )


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "racperf"


def _trusted_cache_dir() -> Path | None:
    """The cache directory, made if missing, when only root or this user could have put what
    is in it (vetted as a program's directory); None otherwise, and then nothing is read from
    or written there: a table another user wrote would decide what racperf lets fio run, and a
    link they planted at the cache's name would have root write through it (an ASM-headed
    file was overwritten that way from an $XDG_CACHE_HOME in another user's directory)."""
    directory = _cache_dir().absolute()
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        vet_path(str(directory), "fio's option cache")
    except (OSError, ValueError):
        return None
    return directory


def _cache_key(fio: str) -> str:
    real = os.path.realpath(fio)
    st = os.stat(real)
    return hashlib.sha256(f"{real}\0{st.st_size}\0{st.st_mtime_ns}\0{_CACHE_VERSION}".encode()).hexdigest()[:20]


def _remote_cache_key(fio: str, host: Host) -> str:
    """A node's fio: its node, path, version and checksum (a changed binary is read again)."""
    try:
        answer = host.run_briefly(
            ["sh", "-c", '"$1" --version </dev/null 2>&1; cksum < "$1"', "racperf-fio", fio], 30.0
        )
    except OSError as exc:
        raise FioOptionError(f"cannot examine {fio} on {host.name}: {exc}") from None
    if answer.returncode != 0:
        raise FioOptionError(f"cannot examine {fio} on {host.name}: {answer.text.strip()[:200]}")
    key = f"{host.name}\0{fio}\0{answer.stdout}\0{_CACHE_VERSION}"
    return hashlib.sha256(key.encode()).hexdigest()[:20]


_memo: dict[str, FioOptionTable] = {}


def option_table(fio: str, host: Host | None = None) -> FioOptionTable:
    """The option table of the fio binary at ``fio`` (on ``host``'s node when it is another
    one: that fio's version decides the table), read once, then cached in
    ``$XDG_CACHE_HOME/racperf`` per binary (per node, path, version and checksum on a node);
    a changed binary is read again. FioOptionError when fio cannot be asked."""
    remote = on_another_node(host)
    try:
        key = _remote_cache_key(fio, host) if remote and host is not None else _cache_key(fio)
    except OSError as exc:
        raise FioOptionError(f"cannot examine {fio}: {exc.strerror}") from None
    if key in _memo:
        return _memo[key]
    cache_dir = _trusted_cache_dir()
    cache = None if cache_dir is None else cache_dir / f"fio-options-{key}.json"
    data = None
    try:
        data = json.loads(read_regular_text_bounded(cache)) if cache is not None else None
        if data is not None and data.get("cache_version") != _CACHE_VERSION:
            data = None
    except (OSError, ValueError, AttributeError):
        data = None
    if data is None:
        data = _read_table(fio, host)
        if cache is not None:
            _write_cache(cache, data)
    table = _table_from_data(data)
    _memo[key] = table
    return table


def _write_cache(cache: Path, data: dict[str, object]) -> None:
    partial = cache.with_suffix(f".{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(json.dumps(data))
        os.replace(partial, cache)
    except OSError:
        partial.unlink(missing_ok=True)  # a read-only home still works, only slower


# --------------------------------------------------------------------------------------------
# the command line, read as fio's getopt_long_only reads it


@dataclass(frozen=True)
class FioArg:
    """One option of a fio command line as fio will take it."""

    name: str  # canonical name
    value: str | None  # None: given without a value (a flag)
    kind: str  # "top", "job" or "engine"
    where: str  # "argument 3 ('--exec_prer=x')"


@dataclass
class FioCommandLine:
    """A command line split the way fio splits it."""

    options: list[FioArg] = field(default_factory=list)
    job_files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_command_line(
    args: list[str], table: FioOptionTable, refuse_ambiguous: dict[str, str] | None = None
) -> FioCommandLine:
    """Split ``args`` (fio's argv without "fio") into options and job files as fio would.

    Every argument fio would not take as a known long option is a problem: short options
    ("-o FILE" is fio's --output), unknown names, abbreviations fio finds ambiguous.
    ``refuse_ambiguous`` maps option names to why they are refused, to name them in the
    message when an ambiguous abbreviation could be one of them.
    """
    line = FioCommandLine()
    index = 0
    only_files = False
    while index < len(args):
        arg = args[index]
        where = f"argument {index + 1} ({arg!r})"
        index += 1
        if only_files or not arg.startswith("-"):
            line.job_files.append(arg)
            continue
        if arg == "--":
            only_files = True
            continue
        if arg == "-":
            line.problems.append(f"{where}: a job file on standard input is not supported; give a path")
            continue
        body = arg[2:] if arg.startswith("--") else arg[1:]
        spelled, sep, value = body.partition("=")
        if not arg.startswith("--") and len(spelled) == 1:
            line.problems.append(
                f"{where}: short option -{spelled} is not passed to fio; write the long option (see fio --help)"
            )
            if not sep and index < len(args) and not args[index].startswith("-"):
                index += 1  # its value, most likely: not a job file
            continue
        candidates = table.match(spelled) if spelled else []
        if not candidates:
            hint = table.suggest(spelled)
            line.problems.append(
                f"{where}: fio has no option {spelled!r}" + (f"; did you mean {', '.join(hint)}?" if hint else "")
            )
            continue
        if len(candidates) > 1:
            canon = sorted({table.names[c] for c in candidates})
            dangerous = [
                f"{name} ({refuse_ambiguous[name]})" for name in canon if refuse_ambiguous and name in refuse_ambiguous
            ]
            line.problems.append(
                f"{where}: {spelled!r} abbreviates several fio options ({', '.join(canon[:6])}"
                f"{', ...' if len(canon) > 6 else ''}); write the option in full"
                + (f"; among them {'; '.join(dangerous)}" if dangerous else "")
            )
            continue
        spelling = candidates[0]
        name, kind, takes = table.names[spelling], table.kinds[spelling], table.args[spelling]
        if takes == "none":
            if sep:
                line.problems.append(f"{where}: fio option {name} takes no value")
                continue
            line.options.append(FioArg(name, None, kind, where))
        elif takes == "optional":
            line.options.append(FioArg(name, value if sep else None, kind, where))
        else:
            if not sep:
                if index >= len(args):
                    line.problems.append(f"{where}: fio option {name} needs a value")
                    continue
                value = args[index]
                index += 1
            line.options.append(FioArg(name, value, kind, where))
    return line


def show_command_options(showcmd_output: str, table: FioOptionTable) -> list[FioArg]:
    """The options of ``fio --showcmd JOBFILE...`` output (fio resolved includes, comments,
    environment variables and aliases). A value with blanks in it comes out in pieces: a piece
    that does not start with "--" belongs to the option before it; every "--" piece is read as
    an option, which can only make racperf refuse more."""
    found: list[FioArg] = []
    for line in showcmd_output.splitlines():
        words = line.split()
        if not words or words[0] != "fio":
            continue
        for word in words[1:]:
            if word.startswith("--"):
                spelled, sep, value = word[2:].partition("=")
                name = table.names.get(spelled, spelled)
                kind = table.kinds.get(spelled, "unknown")
                found.append(FioArg(name, value if sep else None, kind, f"job file option {spelled!r}"))
            elif found:
                last = found[-1]
                found[-1] = FioArg(last.name, f"{last.value or ''} {word}", last.kind, last.where)
    return found
