"""What a tool asks a host to run: the contract between tools and the run machinery.

A tool turns a config into an :class:`Invocation`; the orchestration (orchestration.runs, the
supervisor) judges its :attr:`Invocation.targets` with the write guard
(:mod:`racperf_tui.core.guard.target_guard`), writes its files, and runs its argv. Tools never call
the guard themselves, so every tool that names its targets is guarded the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

READ = "read"
WRITE = "write"


@dataclass(frozen=True)
class Target:
    """A path the benchmark will open: ``access`` is "read" or "write" (trim and delete count
    as write); ``origin`` says which part of the config makes it a target, for messages.
    ``node``: the address of another machine the path is on, as the tool's config names it
    (a fio server's); the orchestration judges it on that node (orchestration/run_plan.py).
    "" is the run's own host."""

    path: str
    access: str
    origin: str = ""
    node: str = ""


@dataclass(frozen=True)
class Companion:
    """A command run again and again beside the benchmark, on the same host, while it runs: a
    second look at what the benchmark itself does not print (CALIBRATE_IO says nothing for
    minutes; a second database session can read V$IO_CALIBRATION_STATUS meanwhile).

    Every ``interval_s`` (the first ``first_after_s`` after the benchmark started) the
    supervisor starts ``argv`` with ``stdin`` (text, else /dev/null) and the Invocation's
    environment plus ``env``, in a directory of its own under the run's (``ID-companion-NAME``);
    one still running after ``timeout_s`` is stopped. Its whole output (stdout and stderr) and exit status go to
    the run's stream parser: ``parser.companion_output(name, output, exit_status)`` when it
    has that method, else each line to ``parser.feed``. It ends with the benchmark. It names
    no targets: a companion only looks (the write watch of the run watches it too).

    The run keeps each output that differs from the previous one (raw output
    ``companion:NAME``); ``keep_output=False`` keeps only the failed ones (a non-zero exit, a
    timeout, a start that failed): for a companion whose every answer differs and whose
    parser's samples already keep what it measured (ORION's diskstats: the whole file a
    second would be most of the run's record).

    ``long_lived``: the companion is one process for the whole run instead of one start per
    answer: a POSIX-sh loop on the host runs ``argv`` every ``interval_s`` and frames each
    answer with a mark line carrying its exit status; each framed answer goes to the parser
    exactly as a finished companion's output does. On an SSH node that is one channel (and one
    watchdog) for the run instead of a channel a start (ORION's diskstats: an answer every
    1 s instead of every 4 to 5 s). For a command that is cheap to run again and needs no
    session of its own (a ``cat`` of /proc files); no answer within ``timeout_s`` stops the
    loop, a loop that ended is started again (a few times: orchestration/companions.py).

    ``max_output_bytes``: its output (a long-lived one's: each answer) is cut there; None:
    the runner's 64 KiB, for a status line or two.
    """

    name: str
    argv: list[str]
    stdin: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    interval_s: float = 5.0
    timeout_s: float = 30.0
    first_after_s: float = 1.0
    keep_output: bool = True
    long_lived: bool = False
    max_output_bytes: int | None = None

    def __post_init__(self) -> None:
        if not self.name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"companion name {self.name!r}: letters, digits, '-' and '_' only (a directory name)")
        if not self.argv:
            raise ValueError(f"companion {self.name}: empty argv")
        if not self.interval_s > 0 or not self.timeout_s > 0 or self.first_after_s < 0:
            raise ValueError(f"companion {self.name}: interval_s and timeout_s must be > 0, first_after_s >= 0")
        if self.max_output_bytes is not None and self.max_output_bytes < 1:
            raise ValueError(f"companion {self.name}: max_output_bytes must be > 0")


def diskstats_companion(name: str, first_after_s: float) -> Companion:
    """``cat /proc/uptime /proc/diskstats`` on the run's host once a second, one loop for the
    run (``long_lived``: on a node one channel, so the answers come every second there too),
    answers not kept as raw output (the whole file a second; what they measured is kept),
    failures kept. ORION's LUN load and a node run's device iostat read it."""
    return Companion(
        name=name,
        argv=["cat", "/proc/uptime", "/proc/diskstats"],
        interval_s=1.0,
        timeout_s=10.0,
        first_after_s=first_after_s,
        keep_output=False,
        long_lived=True,
        # the whole diskstats of a node with thousands of paths (10,000 devices: about 1.5 MB)
        max_output_bytes=8 << 20,
    )


@dataclass(frozen=True)
class Invocation:
    """A planned command.

    ``argv``; ``env``: variables added to the host's environment (ORACLE_HOME, LD_LIBRARY_PATH);
    ``cwd``: where it runs, relative to the run's directory ("." is the run's directory itself;
    None: where racperf was started, so relative paths the user typed mean what they meant);
    ``stdin``: text fed to its standard input (a SQL script), else /dev/null; ``files``: files to
    write into the run's directory before it starts (name -> text: a job file, a .lun file);
    ``result_files``: glob patterns, relative to where it runs, of files it writes that the run
    keeps (ORION's summary and matrices); ``targets``: every path it will read or write (what
    the write guard judges); ``hard_limit_s``: its wall-clock limit; ``notes`` for the user;
    ``companions``: commands run every few seconds beside it on the same host while it runs
    (:class:`Companion`).
    """

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    stdin: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    result_files: tuple[str, ...] = ()
    targets: tuple[Target, ...] = ()
    hard_limit_s: float | None = None
    notes: tuple[str, ...] = ()
    companions: tuple[Companion, ...] = ()
    #: the tool's own plan, handed back to its ``prepare`` (opaque to the machinery)
    detail: Any = None


class ToolNotFound(FileNotFoundError):
    """The tool's executable is not installed; the message carries the install hint."""
