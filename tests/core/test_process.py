"""The line splitter and the supervised process: real processes, real signals, psutil."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racperf_tui.core.process import SupervisedProcess, group_members
from racperf_tui.core.textio.lines import Line, LineSplitter
from tests.helpers import REPO
from tests.helpers.proc_helpers import (
    FAKE_BENCH,
    group_pids,
    kill_group_quietly,
    kill_quietly,
    live,
    read_pidfile,
    wait_until,
    zombie_children,
)

# ---------------------------------------------------------------------------- line splitting


def split_all(chunks: list[bytes], max_line_bytes: int = 1 << 20) -> list[Line]:
    splitter = LineSplitter(max_line_bytes)
    lines = [line for chunk in chunks for line in splitter.feed(chunk)]
    return lines + splitter.finish()


def texts(lines: list[Line]) -> list[str]:
    return [line.text for line in lines]


def test_newline_cr_and_crlf_all_end_lines() -> None:
    assert texts(split_all([b"a\nb\rc\r\nd\n"])) == ["a", "b", "c", "d"]


def test_crlf_split_across_chunks_is_one_terminator() -> None:
    assert texts(split_all([b"status 1\r", b"\nstatus 2\r", b"status 3\n"])) == ["status 1", "status 2", "status 3"]


def test_blank_lines_are_kept() -> None:
    assert texts(split_all([b"a\n\n\nb\n"])) == ["a", "", "", "b"]


def test_last_line_without_newline_is_delivered_by_finish() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"one\ntwo") == [Line("one")]
    assert splitter.pending_bytes == 3
    assert splitter.finish() == [Line("two")]
    assert splitter.finish() == []


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert texts(split_all([b"ok \xff\xfe end\n", b"\xc3"])) == ["ok \ufffd\ufffd end", "\ufffd"]


def test_multibyte_character_split_across_chunks_survives() -> None:
    data = "µs latency €\n".encode()
    cut = data.index("€".encode()) + 1  # inside the 3-byte euro sign
    assert texts(split_all([data[:cut], data[cut:]])) == ["µs latency €"]


def test_five_megabyte_line_arrives_whole_in_small_chunks() -> None:
    big = b"x" * (5 * 1024 * 1024)
    chunks = [big[i : i + 65536] for i in range(0, len(big), 65536)] + [b"\nafter\n"]
    started = time.perf_counter()
    lines = split_all(chunks, max_line_bytes=16 * 1024 * 1024)
    elapsed = time.perf_counter() - started
    assert [len(line.text) for line in lines] == [5 * 1024 * 1024, 5]
    assert not lines[0].truncated
    assert elapsed < 2.0, f"splitting 5 MB took {elapsed:.2f} s: quadratic rescanning?"


def test_absurd_line_is_truncated_and_the_next_line_is_intact() -> None:
    lines = split_all([b"y" * 300, b"y" * 300, b"z\nnext\n"], max_line_bytes=256)
    assert [(len(line.text), line.truncated) for line in lines] == [(256, True), (4, False)]
    assert lines[1].text == "next"


def test_cap_applies_on_the_newline_only_fast_path_too() -> None:
    """Chunks without '\r' take a bytes.split path: the cap must hold there for the first
    part (joined to a held prefix), the middle parts and the unterminated tail."""
    assert split_all([b"abcd", b"efghij\nok\n"], max_line_bytes=8) == [Line("abcdefgh", True), Line("ok")]
    assert split_all([b"a\n012345678\nb\n"], max_line_bytes=8) == [Line("a"), Line("01234567", True), Line("b")]
    assert split_all([b"a\n0123456789abc", b"def\nz\n"], max_line_bytes=8) == [
        Line("a"),
        Line("01234567", True),
        Line("z"),
    ]


def test_many_cr_status_lines_in_one_chunk() -> None:
    chunk = b"".join(b"Jobs: 1 [%d%%]\r" % i for i in range(5000)) + b"done\n"
    lines = split_all([chunk])
    assert len(lines) == 5001
    assert lines[4999].text == "Jobs: 1 [4999%]" and lines[-1].text == "done"


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=400), cuts=st.lists(st.integers(0, 400), max_size=12))
def test_any_chunking_gives_the_same_lines(data: bytes, cuts: list[int]) -> None:
    whole = split_all([data])
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    pieces = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    assert split_all(pieces) == whole
    # the oracle: the same split done with a regular expression on the whole input
    import re

    expected = re.split(rb"\r\n|\r|\n", data)
    if expected and expected[-1] == b"":
        expected.pop()
    assert texts(whole) == [e.decode("utf-8", errors="replace") for e in expected]


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"bb", b"\xc3\xa9", b"\n", b"\r", b"\xff", b"0123456789"]), max_size=60).map(
        b"".join
    ),
    cuts=st.lists(st.integers(0, 300), max_size=10),
)
def test_capped_lines_match_a_reference_whatever_the_chunking(data: bytes, cuts: list[int]) -> None:
    """Cap 8: every line longer is delivered as its first 8 bytes, flagged truncated."""
    import re

    cap = 8
    raw_lines = re.split(rb"\r\n|\r|\n", data)
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    expected = [Line(r[:cap].decode("utf-8", errors="replace"), len(r) > cap) for r in raw_lines]
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    assert split_all([data[a:b] for a, b in zip(bounds, bounds[1:])], max_line_bytes=cap) == expected


# ---------------------------------------------------------------------------- processes


def bench_argv(*args: str) -> list[str]:
    return [sys.executable, "-u", str(FAKE_BENCH), *args]


def drain(proc: SupervisedProcess, timeout_s: float = 20.0) -> dict[str, bytes]:
    """Read until the process is finished; return everything per stream."""
    out = {"stdout": b"", "stderr": b""}
    deadline = time.monotonic() + timeout_s
    while not proc.finished:
        assert time.monotonic() < deadline, "process did not finish"
        for stream, chunk in proc.read(0.05):
            out[stream] += chunk
        proc.tick()
    return out


@pytest.fixture
def procs() -> list[SupervisedProcess]:
    """Every SupervisedProcess a test starts is killed and reaped whatever happens."""
    started: list[SupervisedProcess] = []
    yield started
    for proc in started:
        kill_group_quietly(proc.pgid)
        if proc.returncode is None and proc.pid is not None:
            proc.reap(timeout_s=5)
        proc.close()


def test_output_streams_and_exit_status(procs: list[SupervisedProcess]) -> None:
    proc = SupervisedProcess(bench_argv("--samples", "3", "--exit", "3", "--stderr", "warn")).start()
    procs.append(proc)
    assert os.getpgid(proc.pid) == proc.pid, "must lead its own process group"
    assert os.getsid(proc.pid) == proc.pid, "must lead its own session (no terminal SIGHUP)"
    out = drain(proc)
    assert proc.reap() == 3
    assert out["stdout"].count(b"SAMPLE ") == 3 and out["stdout"].endswith(b'"samples": 3}\n')
    assert out["stderr"] == b"warn\n"
    proc.close()
    assert zombie_children() == []


def test_merge_stderr(procs: list[SupervisedProcess]) -> None:
    proc = SupervisedProcess(bench_argv("--samples", "1", "--stderr", "warn"), merge_stderr=True).start()
    procs.append(proc)
    out = drain(proc)
    assert b"warn\n" in out["stdout"] and out["stderr"] == b""


ESCAPE = pytest.mark.parametrize("escape", [False, True], ids=["in-group", "own-session"])


def escape_args(escape: bool) -> tuple[str, ...]:
    """Grandchildren that start their own session leave the group, as fio's job processes do."""
    return ("--escape",) if escape else ()


def wait_tracked(proc: SupervisedProcess, pids: list[int]) -> None:
    """The tree is sampled on a schedule after start; wait until it has seen every pid."""
    wait_until(lambda: set(pids) <= set(proc.tracked_alive()), 5, what=f"{pids} tracked")


@ESCAPE
def test_stop_sends_term_to_the_group_and_the_final_lines_arrive(
    procs: list[SupervisedProcess], tmp_path: Path, escape: bool
) -> None:
    pidfile = tmp_path / "pids"
    proc = SupervisedProcess(
        bench_argv(
            "--samples",
            "-1",
            "--interval",
            "0.05",
            "--final-on-term",
            "--grandchildren",
            "2",
            "--pidfile",
            str(pidfile),
            *escape_args(escape),
        )
    ).start()
    procs.append(proc)
    pids = read_pidfile(pidfile, 3)
    if escape:
        assert group_members(proc.pgid) == [proc.pid]
    else:
        assert sorted(group_members(proc.pgid)) == sorted(pids)
    wait_tracked(proc, pids)
    proc.stop(grace_s=5.0)
    out = drain(proc)
    assert proc.reap() == 0, "the benchmark handled TERM and exited 0"
    assert b"FINAL report after SIGTERM\n" in out["stdout"]
    assert b'"terminated": true' in out["stdout"]
    assert not any(live(pid) for pid in pids), "grandchildren die with the group"
    proc.close()
    assert zombie_children() == []


@ESCAPE
def test_kill_after_grace_when_term_is_ignored(procs: list[SupervisedProcess], tmp_path: Path, escape: bool) -> None:
    pidfile = tmp_path / "pids"
    proc = SupervisedProcess(
        bench_argv(
            "--samples",
            "-1",
            "--interval",
            "0.05",
            "--ignore-term",
            "--grandchildren",
            "1",
            "--pidfile",
            str(pidfile),
            *escape_args(escape),
        )
    ).start()
    procs.append(proc)
    pids = read_pidfile(pidfile, 2)
    wait_tracked(proc, pids)
    started = time.monotonic()
    proc.stop(grace_s=0.5)
    drain(proc)
    elapsed = time.monotonic() - started
    assert proc.reap() == -signal.SIGKILL
    assert 0.5 <= elapsed < 5.0
    assert not any(live(pid) for pid in pids)
    proc.close()
    assert zombie_children() == []


@ESCAPE
def test_leftover_grandchildren_are_stopped_after_the_leader_exits(
    procs: list[SupervisedProcess], tmp_path: Path, escape: bool
) -> None:
    pidfile = tmp_path / "pids"
    proc = SupervisedProcess(
        bench_argv(
            "--samples",
            "30",
            "--grandchildren",
            "2",
            "--pidfile",
            str(pidfile),
            "--interval",
            "0.02",
            *escape_args(escape),
        ),
        linger_s=0.3,
    ).start()
    procs.append(proc)
    pids = read_pidfile(pidfile, 3)
    drain(proc, timeout_s=10)
    assert proc.reap() == 0
    assert not any(live(pid) for pid in pids)


def test_missing_executable_raises_and_dismisses_the_watchdog() -> None:
    before = {c.pid for c in __import__("psutil").Process().children()}
    with pytest.raises(FileNotFoundError):
        SupervisedProcess(["racperf-no-such-executable-xyz"]).start()
    after = {c.pid for c in __import__("psutil").Process().children()}
    assert after - before == set(), "the watchdog was left running"


WATCHDOG_HOLDER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from racperf_tui.core.process import SupervisedProcess
proc = SupervisedProcess([sys.executable, "-u", sys.argv[2], "--samples", "-1", "--interval", "0.05",
                          "--ignore-term", "--grandchildren", "2", "--pidfile", sys.argv[3], *sys.argv[4:]],
                         watchdog_grace_s=1.0).start()
print(proc.pgid, flush=True)
reported = []
while True:
    proc.read(0.1)
    proc.tick()
    if proc.tracked_pids != reported:
        reported = proc.tracked_pids
        print(" ".join(map(str, reported)), flush=True)
"""


@ESCAPE
def test_watchdog_kills_the_group_when_its_owner_is_killed(tmp_path: Path, escape: bool) -> None:
    """kill -9 of the owning process: the watchdog sees EOF and kills the whole group and
    every tracked process (fio's setsid() workers), even those that ignore SIGTERM, within
    the 7 s the issue allows."""
    pidfile = tmp_path / "pids"
    repo = str(REPO)
    owner = subprocess.Popen(
        [sys.executable, "-c", WATCHDOG_HOLDER, repo, str(FAKE_BENCH), str(pidfile), *escape_args(escape)],
        stdout=subprocess.PIPE,
        text=True,
    )
    pgid = None
    pids: list[int] = []
    try:
        pgid = int(owner.stdout.readline())
        pids = read_pidfile(pidfile, 3)
        if not escape:
            assert sorted(group_pids(pgid)) == sorted(pids)
        while not set(pids) <= {int(p) for p in owner.stdout.readline().split()}:
            pass  # the owner reports each new set of tracked pids
        owner.kill()
        owner.wait()
        killed_at = time.monotonic()
        wait_until(lambda: not any(live(pid) for pid in pids), 7.0, what="the orphaned tree to die")
        elapsed = time.monotonic() - killed_at
        assert elapsed >= 0.9, "TERM was ignored: only the KILL after the 1 s grace can end it"
    finally:
        owner.kill()
        owner.wait()
        kill_group_quietly(pgid)
        for pid in pids:
            kill_quietly(pid)
