"""Run a benchmark that needs two ends: start the server, wait until it says it is ready,
then start the client; stop the server once the client is done.

Used by oratcptest (server: "OraTcpTest server started.") and netperf (netserver: "Starting
netserver with host ..."). The server never starts the client early: the client is spawned
only after the server's readiness line was read, and a server that fails ("Address already in
use"), exits, or stays silent past its readiness timeout ends the pair with a clear message
instead of a hang. Both children run in their own process group and are stopped (SIGTERM,
then SIGKILL) on every exit path, cancellation included.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from collections.abc import Callable, Sequence
from typing import Any
from dataclasses import dataclass, field

#: How long a stopped child gets between SIGTERM and SIGKILL.
STOP_GRACE_S = 2.0


@dataclass
class PairPlan:
    """Everything needed to run one server/client pair (built by the tool modules)."""

    server_argv: list[str]
    client_argv: list[str]
    #: a server output line matching this means "ready for the client"
    ready_pattern: re.Pattern[str]
    #: server output line patterns that mean "failed"; the message is shown to the user
    failure_patterns: Sequence[tuple[re.Pattern[str], str]] = ()
    ready_timeout_s: float = 15.0
    #: wall-clock limit for the client; it is stopped after that
    client_hard_limit_s: float = 3600.0
    #: text appended to a server failure message (e.g. "use another port, e.g. 5556")
    failure_hint: str = ""
    env: dict[str, str] | None = None
    #: what the tool adapted before the start (e.g. "no -D in this build"), to show the user
    notes: list[str] = field(default_factory=list)


@dataclass
class PairResult:
    """What happened. ``ok`` is the pair's mechanics only; the tool judges the client output."""

    ok: bool
    message: str
    server_output: str = ""
    client_output: str = ""
    server_exit: int | None = None
    client_exit: int | None = None
    #: (seconds since start, event) in order: server_started, server_ready, client_started, ...
    events: list[tuple[float, str]] = field(default_factory=list)

    def event_time(self, name: str) -> float | None:
        """When ``name`` happened (seconds since the pair started), or None."""
        for t, event in self.events:
            if event == name:
                return t
        return None


LineCallback = Callable[[str], None]


async def _spawn(argv: list[str], env: dict[str, str] | None) -> asyncio.subprocess.Process:
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update(env)
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # own process group: stopped as a whole
            env=full_env,
        )
    except FileNotFoundError:
        raise FileNotFoundError(f"cannot start {argv[0]!r}: no such file") from None
    except PermissionError:
        raise PermissionError(f"cannot start {argv[0]!r}: not executable") from None


async def stop_process(proc: asyncio.subprocess.Process, grace_s: float = STOP_GRACE_S) -> int | None:
    """SIGTERM the process group, SIGKILL it after ``grace_s``; reap. Returns the exit status."""
    if proc.returncode is None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                await asyncio.wait_for(proc.wait(), grace_s)
                break
            except asyncio.TimeoutError:
                continue
    else:
        # the leader exited; members of its group may linger
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if proc.returncode is None:
        await proc.wait()
    return proc.returncode


async def _read_lines(stream: asyncio.StreamReader, sink: list[str], callback: LineCallback | None,
                      queue: asyncio.Queue[str | None] | None = None) -> None:
    """Read a child's output into lines. Long lines and invalid UTF-8 never stall or crash it."""
    pending = b""
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            break
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for raw in complete:
            line = raw.rstrip(b"\r").decode("utf-8", errors="replace")
            sink.append(line)
            if callback:
                callback(line)
            if queue is not None:
                queue.put_nowait(line)
    if pending:
        line = pending.rstrip(b"\r").decode("utf-8", errors="replace")
        sink.append(line)
        if callback:
            callback(line)
        if queue is not None:
            queue.put_nowait(line)
    if queue is not None:
        queue.put_nowait(None)


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + ("\n" if lines else "")


async def run_pair(plan: PairPlan, *, on_server_line: LineCallback | None = None,
                   on_client_line: LineCallback | None = None) -> PairResult:
    """Run the pair to its end. Never raises for a tool failure: the result says what went wrong."""
    start = time.monotonic()
    events: list[tuple[float, str]] = []

    def mark(name: str) -> None:
        events.append((round(time.monotonic() - start, 4), name))

    server_lines: list[str] = []
    client_lines: list[str] = []
    server: asyncio.subprocess.Process | None = None
    client: asyncio.subprocess.Process | None = None
    server_reader: asyncio.Task[None] | None = None
    client_reader: asyncio.Task[None] | None = None
    result = PairResult(ok=False, message="", events=events)
    try:
        try:
            server = await _spawn(plan.server_argv, plan.env)
        except OSError as exc:
            result.message = f"server: {exc}"
            return result
        mark("server_started")
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        assert server.stdout is not None
        server_reader = asyncio.create_task(_read_lines(server.stdout, server_lines, on_server_line, queue))
        deadline = time.monotonic() + plan.ready_timeout_s
        ready = False
        while not ready:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                result.message = (f"the server did not say it was ready within {plan.ready_timeout_s:g} s "
                                  f"(waited for a line matching {plan.ready_pattern.pattern!r}); "
                                  f"its output: {' / '.join(server_lines[-3:]) or '(none)'}")
                return result
            try:
                line = await asyncio.wait_for(queue.get(), remaining)
            except asyncio.TimeoutError:
                continue
            if line is None:
                await server.wait()
                result.server_exit = server.returncode
                text = " / ".join(server_lines[-3:]) or "(no output)"
                result.message = f"the server exited (status {server.returncode}) before it was ready: {text}"
                if plan.failure_hint:
                    result.message += f"; {plan.failure_hint}"
                return result
            for pattern, message in plan.failure_patterns:
                if pattern.search(line):
                    result.message = f"{message}: {line.strip()}"
                    if plan.failure_hint:
                        result.message += f"; {plan.failure_hint}"
                    return result
            if plan.ready_pattern.search(line):
                ready = True
        mark("server_ready")
        try:
            client = await _spawn(plan.client_argv, plan.env)
        except OSError as exc:
            result.message = f"client: {exc}"
            return result
        mark("client_started")
        assert client.stdout is not None
        client_reader = asyncio.create_task(_read_lines(client.stdout, client_lines, on_client_line))
        try:
            await asyncio.wait_for(client.wait(), plan.client_hard_limit_s)
        except asyncio.TimeoutError:
            mark("client_hard_limit")
            await stop_process(client)
            result.message = f"the client ran past its hard limit of {plan.client_hard_limit_s:g} s and was stopped"
        await client_reader
        result.client_exit = client.returncode
        mark("client_finished")
        if not result.message:
            result.ok = client.returncode == 0
            result.message = "finished" if result.ok else f"the client exited with status {client.returncode}"
        return result
    finally:
        # every path: stop whatever still runs, collect the output
        if client is not None:
            await stop_process(client)
            if client_reader is not None and not client_reader.done():
                await asyncio.wait([client_reader], timeout=1.0)
                client_reader.cancel()  # a grandchild may still hold the pipe open
            result.client_exit = client.returncode
        if server is not None:
            exit_status = await stop_process(server)
            mark("server_stopped")
            if server_reader is not None and not server_reader.done():
                await asyncio.wait([server_reader], timeout=1.0)
                server_reader.cancel()
            if result.server_exit is None:
                result.server_exit = exit_status
        result.server_output = _join(server_lines)
        result.client_output = _join(client_lines)


def run_pair_sync(plan: PairPlan, **callbacks: LineCallback | None) -> PairResult:
    """:func:`run_pair` for callers without an event loop (CLI, tests)."""
    return asyncio.run(run_pair(plan, **callbacks))


@dataclass
class ToolPairOutcome:
    """A two-ended tool run, judged: what the UI shows when it ends."""

    ok: bool
    message: str
    pair: PairResult | None
    server_result: dict | None = None
    client_result: dict | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def run_tool_pair(tool: Any, server_config: dict, client_config: dict, *,
                        on_sample: Callable[[Any], None] | None = None,
                        on_server_line: LineCallback | None = None,
                        on_client_line: LineCallback | None = None,
                        **plan_options: Any) -> ToolPairOutcome:
    """Check the server's port, run server then client, parse both outputs, judge the client.

    ``tool`` is a tool module offering ``preflight``, ``pair_plan``, ``stream_parser``,
    ``parse_result`` / ``parse_output`` and ``succeeded`` (oratcptest, netperf). Live Samples of
    the client go to ``on_sample`` as its lines arrive. Bad configs and busy ports come back as
    a failed outcome with the message (never an exception, never a hang).
    """
    problems, warnings = tool.preflight(server_config)
    if problems:
        return ToolPairOutcome(False, problems[0], None, warnings=warnings)
    try:
        plan = tool.pair_plan(server_config, client_config, **plan_options)
    except ValueError as exc:
        return ToolPairOutcome(False, str(exc), None, warnings=warnings)
    parser = tool.stream_parser({**client_config, "role": "client"})

    def client_line(line: str) -> None:
        if on_client_line:
            on_client_line(line)
        for sample in parser.feed(line):
            if on_sample:
                on_sample(sample)

    pair = await run_pair(plan, on_server_line=on_server_line, on_client_line=client_line)
    for sample in parser.finish():
        if on_sample:
            on_sample(sample)
    server_result = client_result = None
    if pair.server_output.strip():
        try:
            server_result = tool.TOOL.parse_result(pair.server_output)
        except ValueError:
            server_result = None
    if pair.client_output.strip():
        try:
            client_result = tool.parse_result(pair.client_output)
        except ValueError as exc:
            client_result = {"error": str(exc)}
    if not pair.ok and pair.event_time("client_started") is None:
        return ToolPairOutcome(False, pair.message, pair, server_result, client_result, warnings, plan.notes)
    ok, reason = tool.succeeded(client_result, pair.client_exit if pair.client_exit is not None else -1)
    if pair.message.startswith("the client ran past"):
        ok, reason = False, pair.message
    return ToolPairOutcome(ok, reason, pair, server_result, client_result, warnings, plan.notes)
