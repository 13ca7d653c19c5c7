"""A run's companions: commands the supervisor runs every few seconds beside the benchmark, on
the same host, whose output goes to the run's stream parser (orchestration/companions.py).
Real processes on the LocalHost; the parser is the test's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.hosts import LocalHost
from racperf_tui.core.contract.invocation import Companion, Invocation
from racperf_tui.core.guard.write_watch import WriteWatch
from racperf_tui.orchestration import companions as companions_module
from racperf_tui.orchestration.companions import CompanionRunner


class Collecting:
    """A stream parser with companion_output: one Sample per answer, numbered."""

    def __init__(self) -> None:
        self.outputs: list[tuple[str, str, int]] = []

    def feed(self, line: str) -> list[Sample]:
        raise AssertionError("companion output must go to companion_output when the parser has it")

    def finish(self) -> list[Sample]:
        return []

    def companion_output(self, name: str, output: str, exit_status: int) -> list[Sample]:
        self.outputs.append((name, output, exit_status))
        return [Sample(t=float(len(self.outputs)), metrics={"answer": float(output.split()[0])})]


class LinesOnly:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def feed(self, line: str) -> list[Sample]:
        self.lines.append(line)
        return []

    def finish(self) -> list[Sample]:
        return []


def run_until(runner: CompanionRunner, done: Callable[[], bool], timeout_s: float = 20.0) -> list[Sample]:
    """Poll as the supervisor's loop does until ``done()``, then close."""
    samples: list[Sample] = []
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "the companions did not get there in time"
        samples += runner.poll()
        time.sleep(0.02)
    runner.close()
    return samples


def test_a_companion_runs_every_interval_with_its_stdin_and_env(tmp_path: Path) -> None:
    script = "import os, sys; print(int(sys.stdin.read()) * 2, os.environ['ANSWER_UNIT'])"
    companion = Companion(
        "double", [sys.executable, "-c", script], stdin="21", env={"ANSWER_UNIT": "units"}, interval_s=0.3
    )
    recorded: list[tuple[str, str]] = []
    parser = Collecting()
    runner = CompanionRunner(
        LocalHost(),
        Invocation(argv=["true"], env={"FROM_THE_RUN": "1"}, companions=(companion,)),
        tmp_path,
        parser,
        record=lambda stream, text: recorded.append((stream, text)),
    )
    started = time.monotonic()
    samples = run_until(runner, lambda: len(parser.outputs) >= 3)
    # the first after first_after_s (1 s), then one at a time, at least 0.3 s apart
    assert time.monotonic() - started >= 1.0 + 2 * 0.3
    assert runner.runs in (3, 4) and runner.failures == 0
    assert [s.metrics["answer"] for s in samples] == [42.0] * len(parser.outputs)
    assert {output for _, output, _ in parser.outputs} == {"42 units\n"}
    assert all(status == 0 for _, _, status in parser.outputs)
    # only a change of output is recorded: one line, however many runs
    assert recorded == [("companion:double", "42 units\n")]
    assert (tmp_path / f"{tmp_path.name}-companion-double" / "stdin.txt").read_text() == "21"


def test_a_companion_that_keeps_no_output_keeps_its_failures(tmp_path: Path) -> None:
    """keep_output=False: every answer to the parser, only the failed ones to the record."""
    flag = tmp_path / "fail"
    script = f"import os, sys, time\nif os.path.exists({str(flag)!r}): print('broken'); sys.exit(3)\nprint(time.time())"
    companion = Companion("clock", [sys.executable, "-c", script], first_after_s=0.0, interval_s=0.2, keep_output=False)
    recorded: list[tuple[str, str]] = []
    parser = Collecting()
    runner = CompanionRunner(
        LocalHost(),
        Invocation(argv=["true"], companions=(companion,)),
        tmp_path,
        parser,
        record=lambda stream, text: recorded.append((stream, text)),
    )

    def answers(n: int) -> Callable[[], bool]:
        return lambda: len(parser.outputs) >= n

    samples: list[Sample] = []
    for n, fails in ((2, False), (3, True), (4, False), (5, True)):
        flag.touch() if fails else flag.unlink(missing_ok=True)
        deadline = time.monotonic() + 20
        while not answers(n)():
            assert time.monotonic() < deadline
            samples += runner.poll()
            time.sleep(0.02)
    runner.close()
    # one answer at a time, each started after the flag was set for it
    assert [status for _, _, status in parser.outputs] == [0, 0, 3, 0, 3]
    assert len(samples) == 3  # "broken" is no number: the test's parser fails on it, no sample
    assert len({out for _, out, status in parser.outputs if status == 0}) == 3  # a clock: each differs
    # the successes are not kept; the same failure after a success is kept again
    assert recorded == [("companion:clock", "broken\n")] * 2 and runner.failures == 2


def test_a_parser_without_companion_output_gets_the_lines(tmp_path: Path) -> None:
    companion = Companion("lines", [sys.executable, "-c", "print('a'); print('b')"], first_after_s=0.0, interval_s=5)
    parser = LinesOnly()
    runner = CompanionRunner(LocalHost(), Invocation(argv=["true"], companions=(companion,)), tmp_path, parser)
    run_until(runner, lambda: bool(parser.lines))
    assert parser.lines == ["a", "b"] and runner.runs == 1


def test_a_hung_companion_is_stopped_and_a_missing_one_is_said(tmp_path: Path) -> None:
    hung = Companion(
        "hung",
        [sys.executable, "-c", "import time; print(7, flush=True); time.sleep(60)"],
        timeout_s=0.5,
        first_after_s=0.0,
        interval_s=10,
    )
    missing = Companion("missing", [str(tmp_path / "no-such-program")], first_after_s=0.0, interval_s=10)
    recorded: dict[str, str] = {}
    parser = Collecting()
    logged: list[str] = []
    runner = CompanionRunner(
        LocalHost(),
        Invocation(argv=["true"], companions=(hung, missing)),
        tmp_path,
        parser,
        record=recorded.__setitem__,
        log=logged.append,
    )
    started = time.monotonic()
    while not parser.outputs and time.monotonic() - started < 10:
        runner.poll()
        time.sleep(0.02)
    runner.close()
    assert time.monotonic() - started < 5
    ((name, output, status),) = parser.outputs
    assert name == "hung" and output.startswith("7\n") and "[racperf: stopped after 0.5 s]" in output
    assert status == -15  # SIGTERM
    assert recorded["companion:missing"].startswith(f"cannot start {tmp_path}/no-such-program")
    assert runner.failures == 2 and any("still running after 0.5 s" in line for line in logged)


def test_the_end_of_the_run_stops_a_running_companion(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    companion = Companion("slow", [sys.executable, "-c", script], first_after_s=0.0, interval_s=10, timeout_s=60)
    runner = CompanionRunner(LocalHost(), Invocation(argv=["true"], companions=(companion,)), tmp_path, Collecting())
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        runner.poll()
        time.sleep(0.02)
    pid = int(pid_file.read_text())
    runner.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({"name": "../x"}, "letters, digits"),
        ({"argv": []}, "empty argv"),
        ({"interval_s": 0}, "must be > 0"),
    ],
)
def test_a_companion_is_checked_when_planned(kwargs: dict, expected: str) -> None:
    fields = {"name": "ok", "argv": ["true"], **kwargs}
    with pytest.raises(ValueError, match=expected):
        Companion(**fields)


def test_under_a_subreaper_a_companion_never_stops_or_reaps_the_benchmark(tmp_path: Path) -> None:
    """Every SupervisedProcess of a subreaper adopts its other children (orphans of its
    tree): it must not adopt the benchmark beside it. Before, the companion's end sent the
    running benchmark SIGTERM and reaped it, and the run never ended. In a process of its
    own: the subreaper flag stays for the life of a process."""
    code = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from racperf_tui.core.process import SupervisedProcess, set_child_subreaper
        from racperf_tui.core.contract.hosts import LocalHost
        from racperf_tui.core.contract.invocation import Companion, Invocation
        from racperf_tui.orchestration.companions import CompanionRunner
        assert set_child_subreaper()
        main = SupervisedProcess([sys.executable, "-c", "import time; time.sleep(3); print('main done')"]).start()
        companion = Companion("quick", [sys.executable, "-c", "print(1)"], first_after_s=0.0, interval_s=0.3)
        class Parser:
            answers = 0
            def feed(self, line): return []
            def finish(self): return []
            def companion_output(self, name, output, status):
                Parser.answers += 1
                return []
        planned = Invocation(argv=["x"], companions=(companion,))
        runner = CompanionRunner(LocalHost(), planned, Path({str(tmp_path)!r}), Parser())
        out = b""
        while not main.finished:
            for _, chunk in main.read(0.05):
                out += chunk
            runner.poll()
            main.tick()
        runner.close()
        print(main.reap(), out.decode().strip(), Parser.answers >= 2)
        main.close()
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "main", "done", "True"]


# ---- a long-lived companion: one loop for the run, its answers framed --------------------


def _poll_until(runner: CompanionRunner, done: Callable[[], bool], timeout_s: float = 20.0) -> list[Sample]:
    samples: list[Sample] = []
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "the companion did not get there in time"
        samples += runner.poll()
        time.sleep(0.02)
    return samples


def test_a_long_lived_companion_is_one_process_whose_answers_arrive_whole_at_the_interval(tmp_path: Path) -> None:
    """Every answer exactly as the command printed it (with or without its last newline), its
    exit status, its stdin read afresh each time, the env; one process for all of them."""
    script = 'read n; printf "%s %s\\n" $((n * 2)) "$ANSWER_UNIT"; printf "no newline"; exit $((n % 7))'
    companion = Companion(
        "double", ["sh", "-c", script], stdin="23\n", env={"ANSWER_UNIT": "units"}, interval_s=0.3,
        first_after_s=0.0, long_lived=True,
    )  # fmt: skip
    recorded: list[tuple[str, str]] = []
    parser = Collecting()
    runner = CompanionRunner(
        LocalHost(),
        Invocation(argv=["true"], companions=(companion,)),
        tmp_path,
        parser,
        record=lambda stream, text: recorded.append((stream, text)),
    )
    _poll_until(runner, lambda: len(parser.outputs) >= 5)
    runner.close()
    assert runner.runs == 1  # one loop, five answers
    assert parser.outputs[:5] == [("double", "46 units\nno newline", 2)] * 5
    # 23 % 7 = 2: each answer a failure, kept once (the same output), counted each time
    assert recorded == [("companion:double", "46 units\nno newline")] and runner.failures >= 5
    assert (tmp_path / f"{tmp_path.name}-companion-double" / "companion-input.txt").read_text() == "23\n"


def test_a_long_lived_companion_answers_at_its_interval(tmp_path: Path) -> None:
    companion = Companion("clock", ["cat", "/proc/uptime"], interval_s=0.25, first_after_s=0.0, long_lived=True)
    parser = Collecting()
    runner = CompanionRunner(LocalHost(), Invocation(argv=["true"], companions=(companion,)), tmp_path, parser)
    _poll_until(runner, lambda: len(parser.outputs) >= 9)
    runner.close()
    uptimes = [float(output.split()[0]) for _, output, _ in parser.outputs]
    gaps = [b - a for a, b in zip(uptimes, uptimes[1:])]
    # the node's own clock (its uptime): every 0.25 s, never piled up nor skipped
    assert all(0.15 <= gap <= 0.45 for gap in gaps), gaps
    assert 0.22 <= sum(gaps) / len(gaps) <= 0.32, gaps
    assert runner.runs == 1 and runner.failures == 0


def test_a_killed_long_lived_companion_is_started_again_and_said(tmp_path: Path) -> None:
    companion = Companion("clock", ["cat", "/proc/uptime"], interval_s=0.2, first_after_s=0.0, long_lived=True)
    parser = Collecting()
    recorded: list[tuple[str, str]] = []
    logged: list[str] = []
    runner = CompanionRunner(
        LocalHost(),
        Invocation(argv=["true"], companions=(companion,)),
        tmp_path,
        parser,
        record=lambda stream, text: recorded.append((stream, text)),
        log=logged.append,
    )
    _poll_until(runner, lambda: len(parser.outputs) >= 2)
    loop = runner._running["clock"].proc
    assert loop.pid is not None
    os.kill(loop.pid, 9)
    _poll_until(runner, lambda: runner.runs == 2 and len(parser.outputs) >= 6)
    runner.close()
    ended = "[racperf: the companion's loop ended (exit status -9)]\n"
    assert ended in [output for _, output, _ in parser.outputs]
    assert ("companion:clock", ended) in recorded and any("loop ended (exit status -9)" in line for line in logged)
    # answers again after the restart
    assert float(parser.outputs[-1][1].split()[0]) > 0 and parser.outputs[-1][2] == 0


def test_a_stalled_long_lived_companion_is_stopped_and_restarts_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(companions_module, "MAX_RESTARTS", 1)
    companion = Companion("hung", ["sleep", "60"], interval_s=0.2, timeout_s=0.4, first_after_s=0.0, long_lived=True)
    recorded: list[tuple[str, str]] = []
    logged: list[str] = []
    parser = Collecting()
    runner = CompanionRunner(
        LocalHost(),
        Invocation(argv=["true"], companions=(companion,)),
        tmp_path,
        parser,
        record=lambda stream, text: recorded.append((stream, text)),
        log=logged.append,
    )
    started = time.monotonic()
    _poll_until(runner, lambda: any("not started again" in line for line in logged), 15)
    took = time.monotonic() - started
    for _ in range(20):  # it stays given up
        runner.poll()
        time.sleep(0.02)
    runner.close()
    stalled = "[racperf: no answer within 0.4 s: stopped]\n"
    assert runner.runs == 2 and took < 6
    assert [output for _, output, _ in parser.outputs] == [stalled, stalled]
    assert all(status == -15 for _, _, status in parser.outputs)  # TERM
    assert sum("no answer for 0.4 s: stopping it" in line for line in logged) == 2
    assert recorded == [
        ("companion:hung", stalled),
        ("companion:hung", "[racperf: started 2 times: not started again in this run]\n"),
    ]


def test_a_long_lived_companion_s_large_answers_are_cut_at_its_limit_and_framed_on(tmp_path: Path) -> None:
    """300,000 bytes an answer in many chunks, cut at the companion's 100,000 as a finished
    companion's output is; the next answer still found whole; a command killed by a signal
    says so (a negative status)."""
    script = 'head -c 300000 /dev/zero | tr "\\0" x; echo; printf "tail %s\\n" "$$"; kill -s KILL $$'
    companion = Companion(
        "big", ["sh", "-c", script], interval_s=0.2, first_after_s=0.0, long_lived=True, max_output_bytes=100_000
    )
    parser = Collecting()
    runner = CompanionRunner(LocalHost(), Invocation(argv=["true"], companions=(companion,)), tmp_path, parser)
    _poll_until(runner, lambda: len(parser.outputs) >= 3)
    runner.close()
    assert runner.runs == 1
    for _, output, status in parser.outputs:
        assert output == "x" * 100_000 and status == -9
    with pytest.raises(ValueError, match="max_output_bytes"):
        Companion("x", ["true"], max_output_bytes=0)


def test_a_long_lived_companion_s_tracked_tree_stays_small(tmp_path: Path) -> None:
    """Its loop forks a cat and a sleep each answer; the process tree a SupervisedProcess
    tracks (and its write watch looks at 4 times a second) forgets the gone: it stayed at
    every pid ever seen (7 after 3.6 s at 0.2 s, before; 2 now)."""
    companion = Companion("clock", ["cat", "/proc/uptime"], interval_s=0.2, first_after_s=0.0, long_lived=True)
    parser = Collecting()
    runner = CompanionRunner(
        LocalHost(), Invocation(argv=["true"], companions=(companion,)), tmp_path, parser, write_watch=WriteWatch(())
    )
    started = time.monotonic()
    _poll_until(runner, lambda: time.monotonic() - started > 3.6)  # past the tree's 6 first looks
    tracked = runner._running["clock"].proc.tracked_pids  # type: ignore[attr-defined]
    runner.close()
    assert len(parser.outputs) >= 12 and runner.runs == 1
    assert len(tracked) <= 4, tracked
