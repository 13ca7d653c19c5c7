"""Where an Invocation runs. A host knows programs, files and processes, nothing of tools.

:class:`LocalHost` runs on this machine; the SSH host (the cluster issue) offers the same five
operations over one SSH connection, so no tool changes when its runs move to another node:

- ``which(program)``: the program's path there, or None;
- ``run_briefly(argv, timeout_s, env=..., stdin=...)``: a short command run to its end there
  (a version probe, fio's option table or its reading of a job): a :class:`BriefOutput`;
  FileNotFoundError when the program is not there, TimeoutError past ``timeout_s``, another
  OSError when it cannot be run (a tool's ``prepare(config, planned, host)`` and its version
  probe ask the run's host, never this machine, for what that host has);
- ``put_files(directory, files)``: write the Invocation's files (name -> text) there;
- ``start(invocation, directory, ...)``: a supervised process with the Invocation's argv, env,
  working directory and standard input (its output read in chunks by the supervisor);
- ``fetch_files(directory, invocation)``: the result files it wrote (name -> text, bounded);
- ``judge_targets(targets, override)``: the write guard, run against *that* machine's mounts,
  holders, open files and signatures (the node that writes is the node that is judged);
- ``name``: what the store records as the run's host.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from racperf_tui.core.contract.invocation import Invocation, Target
from racperf_tui.core.guard.isolated_python import isolated_env
from racperf_tui.core.guard.program_vetting import vet_program
from racperf_tui.core.guard.target_guard import GuardVerdict, judge
from racperf_tui.core.guard.write_watch import Violation, WriteWatch
from racperf_tui.core.process import SupervisedProcess

#: a result file larger than this is kept cut, with a note (ORION's trace can be large)
MAX_RESULT_FILE_BYTES = 16 << 20
#: at most this many result files per run
MAX_RESULT_FILES = 64
STDIN_FILE = "stdin.txt"


@dataclass(frozen=True)
class BriefOutput:
    """What a short command said: its exit status and its output, decoded (undecodable bytes
    replaced)."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def text(self) -> str:
        """stdout then stderr: what a version probe reads (``java -version`` says it on stderr)."""
        return self.stdout + self.stderr


class RunningProcess(Protocol):
    """What the supervisor uses of a started benchmark: SupervisedProcess here, RemoteProcess
    on a node (core/remote/ssh_host.py)."""

    @property
    def pid(self) -> int | None: ...

    @property
    def pgid(self) -> int | None: ...

    @property
    def leader_exited(self) -> bool: ...

    @property
    def finished(self) -> bool: ...

    @property
    def stop_requested(self) -> bool: ...

    returncode: int | None
    violations: list[Violation]

    def read(self, timeout_s: float, extra_fds: tuple[int, ...] | list[int] = ()) -> list[tuple[str, bytes]]: ...

    def stop(self, grace_s: float) -> None: ...

    def kill(self) -> None: ...

    def tick(self) -> None: ...

    def reap(self, timeout_s: float = ...) -> int: ...

    def close(self) -> None: ...


class Host(Protocol):
    name: str
    #: another node (SshHost), not this machine: what a tool asks of it must be asked there
    remote: bool

    def which(self, program: str) -> str | None: ...

    def run_briefly(
        self,
        argv: list[str],
        timeout_s: float,
        *,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> BriefOutput: ...

    def put_files(self, directory: Path, files: dict[str, str]) -> None: ...

    def start(
        self,
        invocation: Invocation,
        directory: Path,
        *,
        merge_stderr: bool = False,
        write_watch: WriteWatch | None = None,
        argv: list[str] | None = None,
        judged: Mapping[str, tuple[int, int]] | None = None,
    ) -> RunningProcess: ...

    def fetch_files(self, directory: Path, invocation: Invocation) -> dict[str, str]: ...

    def judge_targets(self, targets: Iterable[Target], override: bool | set[str] = False) -> GuardVerdict: ...


def working_directory(invocation: Invocation, directory: Path) -> Path | None:
    """The Invocation's cwd resolved against the run's directory (None: inherited)."""
    if invocation.cwd is None:
        return None
    return (directory / invocation.cwd).resolve()


class LocalHost:
    """This machine."""

    name = "local"
    remote = False

    def which(self, program: str) -> str | None:
        return shutil.which(program)

    def run_briefly(
        self,
        argv: list[str],
        timeout_s: float,
        *,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> BriefOutput:
        """``argv`` to its end (``env`` added to this process's environment, ``stdin`` text
        else /dev/null); FileNotFoundError, TimeoutError, OSError (see the module doc);
        UntrustedPath (a ValueError) when the program is not vetted (program_vetting)."""
        vet_program(argv[0], "a program racperf asks while planning")
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout_s,
                input=stdin,
                stdin=subprocess.DEVNULL if stdin is None else None,
                env=isolated_env(dict(os.environ, **(env or {}))),
            )
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"{argv[0]} did not end within {timeout_s:g} s") from None
        return BriefOutput(done.returncode, done.stdout or "", done.stderr or "")

    def judge_targets(self, targets: Iterable[Target], override: bool | set[str] = False) -> GuardVerdict:
        return judge(targets, override)

    def put_files(self, directory: Path, files: dict[str, str]) -> None:
        """Write each file (mode 0600) into ``directory``; a name that leaves it is refused."""
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            path = (directory / name).resolve()
            if path.parent != directory.resolve():
                raise ValueError(f"file {name!r} of the run would leave its directory {directory}")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)

    def start(
        self,
        invocation: Invocation,
        directory: Path,
        *,
        merge_stderr: bool = False,
        write_watch: WriteWatch | None = None,
        argv: list[str] | None = None,
        judged: Mapping[str, tuple[int, int]] | None = None,
    ) -> SupervisedProcess:
        """Start ``argv`` (default: the Invocation's) with its env, cwd and stdin; OSError when
        it cannot be executed. ``judged`` (the guard's files) is in a jailed ``argv`` already."""
        env = isolated_env(dict(os.environ, **invocation.env))
        cwd = working_directory(invocation, directory)
        stdin_path = None
        if invocation.stdin is not None:
            self.put_files(directory, {STDIN_FILE: invocation.stdin})
            stdin_path = str(directory / STDIN_FILE)
        proc = SupervisedProcess(
            list(argv or invocation.argv),
            env=env,
            cwd=str(cwd) if cwd else None,
            merge_stderr=merge_stderr,
            write_watch=write_watch,
            stdin_path=stdin_path,
        )
        return proc.start()

    def fetch_files(self, directory: Path, invocation: Invocation) -> dict[str, str]:
        """The files matching the Invocation's result patterns, read as text (invalid UTF-8
        replaced, each cut at MAX_RESULT_FILE_BYTES)."""
        base = working_directory(invocation, directory) or Path.cwd()
        found: dict[str, str] = {}
        for pattern in invocation.result_files:
            for match in sorted(glob.glob(str(base / pattern))):
                path = Path(match)
                if len(found) >= MAX_RESULT_FILES or not path.is_file() or path.name in found:
                    continue
                with open(path, "rb") as handle:
                    data = handle.read(MAX_RESULT_FILE_BYTES + 1)
                text = data[:MAX_RESULT_FILE_BYTES].decode("utf-8", errors="replace")
                if len(data) > MAX_RESULT_FILE_BYTES:
                    text += f"\n[racperf: {path.name} cut at {MAX_RESULT_FILE_BYTES} bytes]\n"
                found[path.name] = text
        return found
