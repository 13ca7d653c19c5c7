"""The companions of a run: commands the supervisor runs every few seconds beside the
benchmark, on the same host, whose output goes to the run's stream parser.

The supervisor's loop stays single-threaded: :meth:`CompanionRunner.poll` is called once per
loop, never blocks (it reads what the running companions printed with a zero timeout), starts
a companion whose time has come, stops one past its ``timeout_s`` and hands a finished one's
output to the parser. At most one run of each companion at a time: a slow one is skipped, not
piled up. :meth:`CompanionRunner.close` stops whatever still runs when the benchmark ended.

A ``long_lived`` companion is started once, as :data:`LOOP_SH` around its argv: the loop runs
the command every interval (the next run starts ``interval_s`` after the last one started, or
when it ends if it took longer) and prints, after each answer, a line ``MARK end STATUS``
(MARK random per start, so no output can forge it). The runner cuts the stream at those lines
and hands each answer and its status to the parser as a finished companion's. No answer within
``timeout_s`` of the last one (or of the start): the loop is stopped and said; a loop that
ended (stopped, killed, its link lost) is started again after ``interval_s``, at most
:data:`MAX_RESTARTS` times a run. What it printed after its last mark is no answer (half a
diskstats says nothing): it is kept in the record with why the loop ended, and the parser gets
only that note, with the loop's exit status.
"""

from __future__ import annotations

import secrets
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.hosts import Host, RunningProcess
from racperf_tui.core.contract.invocation import Companion, Invocation
from racperf_tui.core.guard.write_watch import WriteWatch
from racperf_tui.core.textio.lines import LineSplitter

#: a companion's output beyond this is dropped (a status query prints a line or two), unless
#: the companion says how much it prints (``Companion.max_output_bytes``)
MAX_OUTPUT_BYTES = 64 * 1024
#: the shortest interval between two starts of one companion, whatever a tool asks (a typo
#: must not turn the supervisor into a fork loop)
MIN_INTERVAL_S = 0.2
#: SIGTERM -> SIGKILL grace for a companion past its timeout or still running at the end
STOP_GRACE_S = 2.0
#: a long-lived companion's loop started again at most this often in one run
MAX_RESTARTS = 5
#: the file a long-lived companion's stdin text is written to, in its directory (each run of
#: the command reads it from the start)
LOOP_INPUT_FILE = "companion-input.txt"
#: $1 the mark, $2 the interval (s), $3 the input file ("": /dev/null), the rest the command.
#: The sleep runs beside the command, so answers come every interval whatever the command
#: takes (a sleep that takes no fraction, POSIX's, sleeps 1 s). The newline before the mark
#: is the runner's to take off: an answer arrives byte for byte, with or without its last
#: newline. A printf to a closed pipe ends the loop (SIGPIPE), so does the host's watchdog.
LOOP_SH = r"""
m=$1 iv=$2 in=${3:-/dev/null}; shift 3
while :; do
  sleep "$iv" 2>/dev/null & s=$!
  "$@" < "$in" 2>&1
  rc=$?
  printf '\n%s end %s\n' "$m" "$rc"
  wait "$s" || sleep 1
done
"""


@dataclass
class _Running:
    proc: RunningProcess
    started: float
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0
    stopped_for_timeout: bool = False
    #: a long-lived companion's answers, cut at its mark lines (None: one run, one answer)
    frames: _Frames | None = None
    #: when its last answer came (or it started)
    answered: float = 0.0
    #: its output (a long-lived one's: each answer) is cut here
    limit: int = MAX_OUTPUT_BYTES


class _Frames:
    """A long-lived companion's stdout cut into answers at its ``\\nMARK end STATUS\\n``
    lines; each answer cut at ``limit`` bytes, as a companion's output is, and the buffer
    bounded however long a line without a mark runs."""

    def __init__(self, mark: str, limit: int) -> None:
        #: the loop's mark (in its argv: how the host's process list names it)
        self.mark = mark
        self.head = b"\n" + mark.encode() + b" end "
        self.limit = limit
        self.buffer = bytearray()
        #: the host's notes (stderr: an SSH node's write watch says what it watches), put
        #: before the next answer as a finished companion's merged output has them
        self.notes = b""

    def feed(self, chunk: bytes) -> list[tuple[bytes, int]]:
        """The answers ``chunk`` completed, with their exit statuses (a signal's death
        negative, as a finished companion's returncode)."""
        keep = len(self.head) + 16  # enough of the end for a mark line cut between two chunks
        # where a mark line may start: not again in the part already searched (a large answer
        # comes in many chunks)
        start = max(0, len(self.buffer) - keep)
        self.buffer += chunk
        answers = []
        while True:
            at = self.buffer.find(self.head, start)
            end = self.buffer.find(b"\n", at + len(self.head)) if at >= 0 else -1
            if end < 0:
                break
            word = bytes(self.buffer[at + len(self.head) : end]).strip()
            status = int(word) if word.isdigit() else 255
            if 128 < status <= 128 + 64:  # sh's way of saying the command died of signal N
                status = -(status - 128)
            answer = self.notes + bytes(self.buffer[: min(at, self.limit)])
            self.notes = b""
            answers.append((answer[: self.limit], status))
            del self.buffer[: end + 1]
            start = 0
        if len(self.buffer) > self.limit + 2 * keep:
            del self.buffer[self.limit : len(self.buffer) - keep]
        return answers

    def note(self, chunk: bytes) -> None:
        if len(self.notes) < self.limit:
            self.notes += chunk[: self.limit - len(self.notes)]

    def rest(self) -> bytes:
        """What came after the last mark (no answer)."""
        rest = self.notes + bytes(self.buffer[: self.limit])
        self.buffer.clear()
        self.notes = b""
        return rest


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
        #: a long-lived companion's loops started so far, by name
        self._starts: dict[str, int] = {}
        self._last_output: dict[str, str] = {}
        self._parse_errors = 0

    def poll(self) -> list[Sample]:
        """One look at every companion: read, finish, time out, start. The Samples their
        output gave, in order."""
        samples: list[Sample] = []
        now = self.clock()
        for companion in self.invocation.companions:
            running = self._running.get(companion.name)
            if companion.long_lived:
                samples += self._poll_loop(companion, running, now)
            elif running is not None:
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
        a half-read status says nothing), all at once (a loop on a node takes about 2 s to
        end: one after the other added up at the end of every run)."""
        running = list(self._running.values())
        self._running.clear()
        try:
            for each in running:
                if not each.proc.leader_exited:
                    each.proc.stop(STOP_GRACE_S)
            deadline = self.clock() + STOP_GRACE_S
            while any(not each.proc.leader_exited for each in running) and self.clock() < deadline:
                for each in running:
                    if each.frames is None:
                        self._read(each)
                    else:
                        each.proc.read(0.0)  # drained, not kept: no answer is parsed now
                    each.proc.tick()
                time.sleep(0.02)
            for each in running:
                if not each.proc.leader_exited:
                    each.proc.kill()
                each.proc.reap()
        finally:
            for each in running:
                each.proc.close()
        return []

    # ---- one companion ---------------------------------------------------------------------
    def _start(self, companion: Companion) -> None:
        argv, stdin, files, frames = list(companion.argv), companion.stdin, {}, None
        limit = companion.max_output_bytes or MAX_OUTPUT_BYTES
        if companion.long_lived:
            # the loop takes no stdin: each run of the command reads the input file afresh
            mark = "racperf-" + secrets.token_hex(8)
            interval = f"{max(companion.interval_s, MIN_INTERVAL_S):g}"
            if stdin is not None:
                files = {LOOP_INPUT_FILE: stdin}
            argv = ["sh", "-c", LOOP_SH, "racperf-companion", mark, interval, LOOP_INPUT_FILE if files else "", *argv]
            stdin, frames = None, _Frames(mark, limit)
        planned = Invocation(argv=argv, env={**self.invocation.env, **companion.env}, cwd=".", stdin=stdin)
        # named after the run too: a host may keep only the last part of the name (SshHost)
        directory = self.directory / f"{self.directory.name}-companion-{companion.name}"
        try:
            self.host.put_files(directory, files)  # its working directory, made where the host makes files
            proc = self.host.start(planned, directory, merge_stderr=True, write_watch=self.write_watch)
        except (OSError, ValueError) as exc:
            self.failures += 1
            self.log(f"companion {companion.name}: cannot start {companion.argv[0]}: {exc}")
            self._remember(companion.name, f"cannot start {companion.argv[0]}: {exc}\n")
            return
        self.runs += 1
        now = self.clock()
        self._running[companion.name] = _Running(proc, now, frames=frames, answered=now, limit=limit)

    # ---- a long-lived companion --------------------------------------------------------------
    def _poll_loop(self, companion: Companion, running: _Running | None, now: float) -> list[Sample]:
        """A long-lived companion: its answers so far; stopped when it stalls, started (again)
        when its time has come."""
        if running is None:
            starts = self._starts.get(companion.name, 0)
            if now >= self._next[companion.name] and starts <= MAX_RESTARTS:
                self._starts[companion.name] = starts + 1
                self._start(companion)
                if companion.name not in self._running:  # it could not start: try again later
                    self._next[companion.name] = now + max(companion.interval_s, MIN_INTERVAL_S)
                    self._given_up(companion, starts + 1)
            return []
        samples = self._answers(companion, running)
        if running.proc.finished:
            samples += self._loop_ended(companion, running)
        elif now - running.answered > companion.timeout_s and not running.proc.stop_requested:
            running.stopped_for_timeout = True
            self.log(f"companion {companion.name}: no answer for {companion.timeout_s:g} s: stopping it")
            running.proc.stop(STOP_GRACE_S)
        else:
            running.proc.tick()
        return samples

    def _answers(self, companion: Companion, running: _Running) -> list[Sample]:
        assert running.frames is not None
        samples: list[Sample] = []
        for stream, chunk in running.proc.read(0.0):
            if not chunk:
                continue
            if stream != "stdout":
                running.frames.note(chunk)
                continue
            for answer, status in running.frames.feed(chunk):
                running.answered = self.clock()
                samples += self._answered(companion, answer.decode("utf-8", errors="replace"), status)
        return samples

    def _answered(self, companion: Companion, output: str, status: int) -> list[Sample]:
        """One answer, as :meth:`_finish` hands a finished companion's output on."""
        failed = status != 0
        self.failures += failed
        if companion.keep_output or failed:
            self._remember(companion.name, output)
        else:
            self._last_output.pop(companion.name, None)
        return self._parse(companion.name, output, status)

    def _loop_ended(self, companion: Companion, running: _Running) -> list[Sample]:
        """The loop ended while the run goes on: said, and started again after the interval."""
        samples = self._answers(companion, running)
        del self._running[companion.name]
        try:
            status = running.proc.reap()
        finally:
            running.proc.close()
        assert running.frames is not None
        rest = running.frames.rest().decode("utf-8", errors="replace")
        if running.stopped_for_timeout:
            why = f"[racperf: no answer within {companion.timeout_s:g} s: stopped]"
        else:
            why = f"[racperf: the companion's loop ended (exit status {status})]"
            self.log(f"companion {companion.name}: its loop ended (exit status {status})")
        self.failures += 1
        self._remember(companion.name, (rest + "\n" if rest and not rest.endswith("\n") else rest) + why + "\n")
        self._next[companion.name] = self.clock() + max(companion.interval_s, MIN_INTERVAL_S)
        self._given_up(companion, self._starts.get(companion.name, 0))
        return samples + self._parse(companion.name, why + "\n", status or 255)

    def _given_up(self, companion: Companion, starts: int) -> None:
        if starts > MAX_RESTARTS:
            self.log(f"companion {companion.name}: started {starts} times: not started again in this run")
            self._remember(companion.name, f"[racperf: started {starts} times: not started again in this run]\n")

    def _read(self, running: _Running) -> None:
        for _stream, chunk in running.proc.read(0.0):
            if chunk and running.size < running.limit:
                running.chunks.append(chunk[: running.limit - running.size])
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
