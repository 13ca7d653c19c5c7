"""The companions of a run: commands the supervisor starts every few seconds beside the
benchmark, on the same host, whose output goes to the run's stream parser.

The supervisor's loop stays single-threaded: :meth:`CompanionRunner.poll` is called once per
loop, never blocks (it reads what the running companions printed with a zero timeout), starts
a companion whose time has come, stops one past its ``timeout_s`` and hands a finished one's
output to the parser. At most one run of each companion at a time: a slow one is skipped, not
piled up. :meth:`CompanionRunner.close` stops whatever still runs when the benchmark ended.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racperf_tui.core.events import Sample
from racperf_tui.core.hosts import Host, RunningProcess
from racperf_tui.core.invocation import Companion, Invocation
from racperf_tui.core.lines import LineSplitter
from racperf_tui.core.write_watch import WriteWatch

#: a companion's output beyond this is dropped (a status query prints a line or two)
MAX_OUTPUT_BYTES = 64 * 1024
#: the shortest interval between two starts of one companion, whatever a tool asks (a typo
#: must not turn the supervisor into a fork loop)
MIN_INTERVAL_S = 0.2
#: SIGTERM -> SIGKILL grace for a companion past its timeout or still running at the end
STOP_GRACE_S = 2.0


@dataclass
class _Running:
    proc: RunningProcess
    started: float
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0
    stopped_for_timeout: bool = False


class CompanionRunner:
    """Runs ``invocation.companions`` on ``host`` for one run."""

    def __init__(
        self,
        host: Host,
        invocation: Invocation,
        directory: Path,
        parser: Any,
        *,
        write_watch: WriteWatch | None = None,
        record: Callable[[str, str], None] | None = None,
        log: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``record(stream, text)``: keeps an output that differs from the companion's previous
        one (raw output ``companion:NAME``), so the run's record shows each change of state."""
        self.host = host
        self.invocation = invocation
        self.directory = directory
        self.parser = parser
        self.write_watch = write_watch
        self.record = record
        self.log = log or (lambda message: None)
        self.clock = clock
        self.started_at = clock()
        self.runs = 0
        self.failures = 0
        self._next: dict[str, float] = {c.name: self.started_at + c.first_after_s for c in invocation.companions}
        self._running: dict[str, _Running] = {}
        self._last_output: dict[str, str] = {}
        self._parse_errors = 0

    def poll(self) -> list[Sample]:
        """One look at every companion: read, finish, time out, start. The Samples their
        output gave, in order."""
        samples: list[Sample] = []
        now = self.clock()
        for companion in self.invocation.companions:
            running = self._running.get(companion.name)
            if running is not None:
                self._read(running)
                if running.proc.finished:
                    samples += self._finish(companion, running)
                elif now - running.started > companion.timeout_s and not running.proc.stop_requested:
                    running.stopped_for_timeout = True
                    self.log(f"companion {companion.name} still running after {companion.timeout_s:g} s: stopping it")
                    running.proc.stop(STOP_GRACE_S)
                else:
                    running.proc.tick()
            elif now >= self._next[companion.name]:
                self._next[companion.name] = now + max(companion.interval_s, MIN_INTERVAL_S)
                self._start(companion)
        return samples

    def close(self) -> list[Sample]:
        """The benchmark ended: stop the companions still running (their output is not parsed:
        a half-read status says nothing)."""
        for running in self._running.values():
            try:
                if not running.proc.leader_exited:
                    running.proc.stop(STOP_GRACE_S)
                    deadline = self.clock() + STOP_GRACE_S
                    while not running.proc.leader_exited and self.clock() < deadline:
                        self._read(running)
                        running.proc.tick()
                        time.sleep(0.02)
                    if not running.proc.leader_exited:
                        running.proc.kill()
                running.proc.reap()
            finally:
                running.proc.close()
        self._running.clear()
        return []

    # ---- one companion ---------------------------------------------------------------------
    def _start(self, companion: Companion) -> None:
        planned = Invocation(
            argv=list(companion.argv),
            env={**self.invocation.env, **companion.env},
            cwd=".",
            stdin=companion.stdin,
        )
        # named after the run too: a host may keep only the last part of the name (SshHost)
        directory = self.directory / f"{self.directory.name}-companion-{companion.name}"
        try:
            self.host.put_files(directory, {})  # its working directory, made where the host makes files
            proc = self.host.start(planned, directory, merge_stderr=True, write_watch=self.write_watch)
        except (OSError, ValueError) as exc:
            self.failures += 1
            self.log(f"companion {companion.name}: cannot start {companion.argv[0]}: {exc}")
            self._remember(companion.name, f"cannot start {companion.argv[0]}: {exc}\n")
            return
        self.runs += 1
        self._running[companion.name] = _Running(proc, self.clock())

    def _read(self, running: _Running) -> None:
        for _stream, chunk in running.proc.read(0.0):
            if chunk and running.size < MAX_OUTPUT_BYTES:
                running.chunks.append(chunk[: MAX_OUTPUT_BYTES - running.size])
                running.size += len(running.chunks[-1])

    def _finish(self, companion: Companion, running: _Running) -> list[Sample]:
        del self._running[companion.name]
        try:
            self._read(running)
            status = running.proc.reap()
        finally:
            running.proc.close()
        output = b"".join(running.chunks).decode("utf-8", errors="replace")
        failed = running.stopped_for_timeout or status != 0
        if running.stopped_for_timeout:
            output += f"\n[racperf: stopped after {companion.timeout_s:g} s]\n"
        self.failures += failed
        if companion.keep_output or failed:
            self._remember(companion.name, output)
        else:
            self._last_output.pop(companion.name, None)  # a failure after it is kept again
        return self._parse(companion.name, output, status)

    def _remember(self, name: str, output: str) -> None:
        if self.record is not None and output != self._last_output.get(name):
            self.record(f"companion:{name}", output)
        self._last_output[name] = output

    def _parse(self, name: str, output: str, status: int) -> list[Sample]:
        try:
            handler = getattr(self.parser, "companion_output", None)
            if callable(handler):
                return list(handler(name, output, status))
            splitter = LineSplitter()
            samples: list[Sample] = []
            for line in splitter.feed(output.encode()) + splitter.finish():
                samples += self.parser.feed(line.text)
            return samples
        except Exception:
            self._parse_errors += 1
            if self._parse_errors <= 3:
                self.log(f"stream parser failed on companion {name}'s output:\n{traceback.format_exc()}")
            return []
