"""kill -9 of the real racperf UI while its fio run is running (issue 3's acceptance test).

The real `racperf` TUI runs on a pseudo-terminal of a fixed size and is driven with the keys a
user types: `2` (Runs tab), `n` (the fio form), the "8k random read" preset, a temp file as the
target, a short time_based runtime, ctrl+l (launch). Once the store shows the run running with a
sample, the UI gets SIGKILL. psutil then checks that the run's supervisor and fio processes
live on outside the UI's session and process group, the run keeps recording to its end, and a
new racperf (Textual Pilot on the same data dir) lists it, or shows it live and stops it.

Everything started here (UI, supervisor, fio and its setsid() workers) is killed on every path.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from rich.text import Text
from textual.widgets import DataTable

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.orchestration.runs import stop_run, wait_for_run
from racperf_tui.tools.fio.config import validated_config
from racperf_tui.ui.app import RacperfApp
from racperf_tui.ui.dialogs.quit_dialog import ConfirmDialog
from racperf_tui.ui.screens.run_view import RunView
from racperf_tui.ui.tabs.runs_panel import RunsPanel
from tests.helpers import REPO, needs_fio
from tests.helpers.proc_helpers import live, wait_until

pytestmark = needs_fio

COLUMNS, LINES = 120, 40
#: the issue's bound: after a stop (or a supervisor's death) the whole group is gone within 7 s
GROUP_GONE_WITHIN_S = 7.0

SHIFT_TAB = b"\x1b[Z"
DOWN = b"\x1b[B"
ENTER = b"\r"
TAB = b"\t"
#: ctrl+e (end) then ctrl+u (delete to the start): empties a Textual Input whatever its cursor
CLEAR_INPUT = b"\x05\x15"
CTRL_L = b"\x0c"


# ---------------------------------------------------------------------------- the terminal UI


class TerminalUI:
    """`python -m racperf_tui --data-dir D` on a pseudo-terminal of COLUMNS x LINES; its output
    is drained by a thread (and kept: the keys' effects are looked for in it)."""

    def __init__(self, data_dir: Path, home: Path) -> None:
        env = dict(
            os.environ,
            TERM="xterm-256color",
            COLUMNS=str(COLUMNS),
            LINES=str(LINES),
            XDG_CONFIG_HOME=str(home / "config"),
            PYTHONPATH=str(REPO),
        )
        env.pop("NO_COLOR", None)
        argv = [sys.executable, "-m", "racperf_tui", "--data-dir", str(data_dir)]
        winsize = struct.pack("HHHH", LINES, COLUMNS, 0, 0)
        self.pid, self.fd = pty.fork()  # the child is a session leader on the pty (setsid)
        if self.pid == 0:
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, winsize)
                os.chdir(REPO)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, winsize)
        self.exit_status: int | None = None
        self._output = bytearray()
        self._last_output_at = time.monotonic()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while not self._stopping.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # EIO: the slave side is gone (the UI died)
                return
            if not chunk:
                return
            with self._lock:
                self._output += chunk
                self._last_output_at = time.monotonic()

    def mark(self) -> int:
        """A position in the output: later waits look only at what came after it."""
        with self._lock:
            return len(self._output)

    def screen_text(self) -> str:
        """The output with the escape sequences removed (for failure messages)."""
        with self._lock:
            raw = bytes(self._output[-20000:])
        text = re.sub(rb"\x1b\[[0-9;?<>]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]", b"", raw)
        return re.sub(r"\s{3,}", "  ", text.decode(errors="replace"))

    def wait_for(self, needle: bytes | re.Pattern[bytes], since: int, timeout_s: float = 20.0) -> None:
        """Until ``needle`` (bytes, or a pattern) shows up in the output after ``since``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                recent = bytes(self._output[since:])
            if needle.search(recent) if isinstance(needle, re.Pattern) else needle in recent:
                return
            if not self.alive():
                break
            time.sleep(0.02)
        shown = needle.pattern if isinstance(needle, re.Pattern) else needle
        raise AssertionError(
            f"the UI never showed {shown!r} (alive: {self.alive()}); "
            f"the screen's last text: {self.screen_text()[-1500:]!r}"
        )

    def settle(self, idle_s: float = 0.25, timeout_s: float = 4.0) -> None:
        """Until the UI has been quiet for ``idle_s``: the last key is handled and painted.

        Keys written in one burst race Textual's focus changes (an Input selects its text on
        focus, after the burst's characters arrived), so each step waits for the repaint."""
        deadline = time.monotonic() + timeout_s
        time.sleep(0.05)
        while time.monotonic() < deadline:
            with self._lock:
                quiet_s = time.monotonic() - self._last_output_at
            if quiet_s >= idle_s:
                return
            time.sleep(0.03)

    def press(self, keys: bytes) -> None:
        os.write(self.fd, keys)
        self.settle()

    def alive(self) -> bool:
        if self.exit_status is not None:
            return False
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self.exit_status = status
            return False
        return True

    def kill9(self) -> int:
        """SIGKILL the UI, reap it, return its wait status."""
        os.kill(self.pid, signal.SIGKILL)
        _, self.exit_status = os.waitpid(self.pid, 0)
        return self.exit_status

    def close(self) -> None:
        if self.exit_status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                _, self.exit_status = os.waitpid(self.pid, 0)
        self._stopping.set()
        self._reader.join(timeout=2)
        with contextlib.suppress(OSError):
            os.close(self.fd)


def token(text: str) -> re.Pattern[bytes]:
    """A preview token, whole: ``--runtime=6`` must not match the ``--runtime=60`` of a stale
    repaint (the screen under the form repaints every second, the form with it)."""
    return re.compile(re.escape(text.encode()) + rb"(?![\w./-])")


def fill_field(ui: TerminalUI, text: str, cleared: bytes, shown: str) -> None:
    """Tab to the next form field, empty it, type ``text``; wait for ``shown`` in the preview.

    Tab, ctrl+e and ctrl+u are bindings: their key events bubble up from the focused Input to
    the app before they act, and a printable key sent meanwhile goes straight to the Input,
    overtaking them (seen on a loaded machine: the typed text landed, then the clear wiped
    it). So the text is typed only once the field's own "empty" message (``cleared``) is on
    screen: then the tab and the clear have both acted on this field."""
    since = ui.mark()
    os.write(ui.fd, TAB + CLEAR_INPUT)
    ui.wait_for(cleared, since)
    since = ui.mark()
    os.write(ui.fd, text.encode())
    ui.wait_for(token(shown), since)
    ui.settle()


def launch_fio_from_the_form(ui: TerminalUI, data_dir: Path, target: Path, runtime_s: int) -> int:
    """Drive the UI as a user: Runs tab, new fio run, "8k random read" preset, target, size,
    runtime, ctrl+l. Returns the run id once the store shows it running with a sample."""
    ui.wait_for(b"Disks [1]", 0, timeout_s=30)
    ui.settle()
    since = ui.mark()
    ui.press(b"2")
    ui.wait_for(b"no runs yet", since)
    since = ui.mark()
    ui.press(b"n")
    ui.wait_for(b"pick a tool", since)
    ui.settle()
    since = ui.mark()
    ui.press(b"\r")  # fio, the first tool listed
    ui.wait_for(b"New fio run", since)
    ui.settle()
    # the form focuses the target; the preset menu is the field before it
    ui.press(SHIFT_TAB)
    for attempt in range(3):
        # enter opens the menu once the focus is on it (an enter the target's Input got
        # first is harmless: the form ignores a submit)
        since = ui.mark()
        ui.press(ENTER)
        try:
            ui.wait_for(b"8k random write, direct", since, timeout_s=5)  # the open menu
            break
        except AssertionError:
            if attempt == 2:
                raise
    ui.press(DOWN)
    since = ui.mark()
    ui.press(ENTER)
    ui.wait_for(token("--rw=randread"), since)
    ui.settle()
    fill_field(ui, str(target), b"empty; give a file", f"--filename={target}")
    fill_field(ui, "16m", b"needed for a new file", "--size=16m")
    fill_field(ui, str(runtime_s), b"empty: needs a whole number", f"--runtime={runtime_s}")
    os.write(ui.fd, CTRL_L)

    def running_with_a_sample() -> RunRecord | None:
        with Store.open(data_dir) as store:
            runs = store.list_runs()
            if len(runs) == 1 and runs[0].state is RunState.RUNNING and store.sample_count(runs[0].id) >= 1:
                return runs[0]
            if runs and runs[0].state.finished:
                raise AssertionError(f"run {runs[0].id} ended early: {runs[0].state.value} {runs[0].message}")
        return None

    try:
        run = wait_until(running_with_a_sample, 30, what="the launched run running with a sample")
    except AssertionError as error:
        with Store.open(data_dir) as store:
            runs = [(r.id, r.state.value, r.message, store.sample_count(r.id)) for r in store.list_runs()]
        raise AssertionError(
            f"{error}; runs in the store: {runs}; the screen's last text: {ui.screen_text()[-1500:]!r}"
        ) from None
    # what was typed is what runs: the form's keys reached the right fields
    assert run.tool == "fio" and run.target == str(target)
    assert run.config["rw"] == "randread" and run.config["size"] == "16m"
    # the form records what differs from fio's defaults (time_based is one): the run's
    # config as fio's tool reads it, and the argv it ran, say it is timed
    effective = validated_config(run.config)
    assert effective.runtime_s == runtime_s and effective.time_based is True
    job_lines = store_job(data_dir, run.id).splitlines()
    assert f"runtime={runtime_s}" in job_lines and "time_based" in job_lines
    assert "--readonly" in run.argv and run.argv[-1].endswith(f"runs/{run.id}/job.fio")
    with Store.open(data_dir) as store:
        assert f"filename={target}" in store.raw_output(run.id, "file:job.fio")
    return run.id


def store_job(data_dir: Path, run_id: int) -> str:
    with Store.open(data_dir) as store:
        return store.raw_output(run_id, "file:job.fio")


# ---------------------------------------------------------------------------- processes


def processes_naming(target: Path) -> list[int]:
    """Live processes whose command line names ``target``: fio's main process and its job
    processes (which call setsid(), so no process group holds them all)."""
    needle = str(target)

    def names_it(arg: str) -> bool:
        if needle in arg:
            return True
        if arg.endswith(".fio"):  # racperf runs fio on a job file it wrote: the target is in there
            try:
                return needle in Path(arg).read_text()
            except OSError:
                return False
        return False

    pids = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and any(names_it(a) for a in proc.info["cmdline"] or []):
                pids.append(proc.pid)
        except psutil.Error:
            pass
    return sorted(pids)


def fio_processes_of(run: RunRecord, target: Path) -> list[int]:
    """The run's fio processes: its recorded main process (the benchmark group's leader) and
    that process's tree; the command-line scan must find exactly the same set."""
    assert run.benchmark_pgid, "the run recorded its benchmark's process group"
    main = psutil.Process(run.benchmark_pgid)
    assert "fio" in os.path.basename(main.cmdline()[0])

    def tree() -> list[int] | None:
        pids = sorted([main.pid, *(child.pid for child in main.children(recursive=True))])
        return pids if len(pids) >= 2 else None  # fio forks its job process at start

    pids = wait_until(tree, 10, what="fio's job process")
    assert pids == processes_naming(target), "fio's tree is every process naming the target"
    return pids


def assert_outside_the_ui(pids: list[int], ui_pid: int) -> None:
    """None of ``pids`` is in the UI's session or process group (the pty made the UI a
    session leader: sid == pgid == its pid), so neither the UI's death nor the hang-up of
    its terminal reaches them."""
    assert os.getsid(ui_pid) == ui_pid and os.getpgid(ui_pid) == ui_pid
    for pid in pids:
        assert os.getsid(pid) != ui_pid, f"pid {pid} is in the UI's session"
        assert os.getpgid(pid) != ui_pid, f"pid {pid} is in the UI's process group"


def kill_everything(data_dir: Path, target: Path, ui: TerminalUI | None) -> None:
    """Test cleanup: stop every unfinished run, then SIGKILL whatever is left of the UI's
    session, the supervisors and fio (by the target in its command line)."""
    if ui is not None:
        ui.close()
        for proc in psutil.process_iter():
            with contextlib.suppress(psutil.Error, OSError):
                if proc.pid != os.getpid() and os.getsid(proc.pid) == ui.pid:
                    proc.kill()
    with contextlib.suppress(Exception), Store.open(data_dir) as store:
        runs = store.list_runs()
        for run in runs:
            if not run.state.finished:
                with contextlib.suppress(Exception):
                    stop_run(run.id, data_dir, grace_s=5)
            if run.supervisor_pid and live(run.supervisor_pid):
                with contextlib.suppress(psutil.Error):
                    proc = psutil.Process(run.supervisor_pid)
                    if any("racperf_tui.orchestration.supervisor" in arg for arg in proc.cmdline()):
                        proc.kill()
    for pid in processes_naming(target):
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()


@pytest.fixture
def fio_target(tmp_path: Path) -> Path:
    return tmp_path / "kill9.dat"


@pytest.fixture
def terminal_ui(data_dir: Path, fio_target: Path, tmp_path: Path) -> Iterator[TerminalUI]:
    """The real racperf on a pty; afterwards the UI, its runs and their fio are all gone."""
    ui = TerminalUI(data_dir, tmp_path)
    try:
        yield ui
    finally:
        kill_everything(data_dir, fio_target, ui)


# ---------------------------------------------------------------------------- Pilot helpers


async def pilot_wait(pilot: Any, condition: Callable[[], Any], timeout_s: float, what: str) -> Any:
    """Let the app run until ``condition()`` holds; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await pilot.pause(0.05)


def cell_text(table: DataTable[Any], run_id: int, column: str) -> str:
    cell = table.get_cell(str(run_id), column)
    return cell.plain if isinstance(cell, Text) else str(cell)


# ---------------------------------------------------------------------------- the tests


async def test_run_outlives_a_kill_9_of_the_ui_and_the_next_racperf_lists_it(
    terminal_ui: TerminalUI, data_dir: Path, fio_target: Path
) -> None:
    ui = terminal_ui
    run_id = launch_fio_from_the_form(ui, data_dir, fio_target, runtime_s=6)
    with Store.open(data_dir) as store:
        run = store.get_run(run_id)
        assert run.supervisor_pid and live(run.supervisor_pid)
        fio_pids = fio_processes_of(run, fio_target)
        assert_outside_the_ui([run.supervisor_pid, *fio_pids], ui.pid)
        assert psutil.Process(run.supervisor_pid).ppid() != ui.pid, "the supervisor is no child of the UI"

        samples_at_kill = store.sample_count(run_id)
        status = ui.kill9()
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL

        # the UI is dead; its run is not
        assert live(run.supervisor_pid), "the supervisor died with the UI"
        assert all(live(pid) for pid in fio_pids), "fio died with the UI"
        wait_until(lambda: store.sample_count(run_id) > samples_at_kill, 10, what="a sample recorded after the UI died")
        assert store.get_run(run_id).state is RunState.RUNNING

        record = wait_for_run(run_id, data_dir, timeout_s=30)
        assert record.state is RunState.SUCCEEDED, f"{record.state.value}: {record.message}"
        assert record.exit_status == 0
        result = store.result(run_id)
        assert result is not None and result["jobs"], "fio's final report was parsed"
        assert sum(job["read"]["iops"] for job in result["jobs"]) > 0
        # 6 s at a 1 s status interval: about 6 dumps, most of them after the kill
        assert store.sample_count(run_id) >= 3 and store.sample_count(run_id) > samples_at_kill
        wait_until(
            lambda: not processes_naming(fio_target) and not live(run.supervisor_pid),
            5,
            what="fio and the supervisor to exit after the run",
        )

    app = RacperfApp(data_dir=str(data_dir), clock=False)
    async with app.run_test(size=(COLUMNS, LINES)) as pilot:
        await pilot.press("2")
        panel = app.query_one(RunsPanel)
        await pilot_wait(pilot, lambda: run_id in panel.runs, 10, "the Runs panel to list the run")
        assert panel.interrupted_on_start == [], "a run that finished is not interrupted"
        table = panel.query_one(DataTable)
        assert table.row_count == 1
        assert cell_text(table, run_id, "state") == "succeeded"
        assert cell_text(table, run_id, "tool") == "fio"


async def test_the_next_racperf_shows_the_orphaned_run_live_and_stops_it(
    terminal_ui: TerminalUI, data_dir: Path, fio_target: Path
) -> None:
    ui = terminal_ui
    run_id = launch_fio_from_the_form(ui, data_dir, fio_target, runtime_s=30)
    with Store.open(data_dir) as store:
        run = store.get_run(run_id)
        fio_pids = fio_processes_of(run, fio_target)
        assert_outside_the_ui([run.supervisor_pid, *fio_pids], ui.pid)
        ui.kill9()
        assert live(run.supervisor_pid) and all(live(pid) for pid in fio_pids)

        app = RacperfApp(data_dir=str(data_dir), clock=False)
        async with app.run_test(size=(COLUMNS, LINES)) as pilot:
            await pilot.press("2")
            panel = app.query_one(RunsPanel)
            await pilot_wait(pilot, lambda: run_id in panel.runs, 10, "the Runs panel to list the run")
            table = panel.query_one(DataTable)
            assert panel.interrupted_on_start == [], "its supervisor lives: the run is not interrupted"
            assert cell_text(table, run_id, "state") == "● running"
            await pilot_wait(
                pilot, lambda: cell_text(table, run_id, "figure"), 10, "the live figure of the run in the list"
            )

            # live: the run view's sparkline fills from samples written after this UI started
            await pilot.press("enter")
            view = await pilot_wait(pilot, lambda: isinstance(app.screen, RunView) and app.screen, 10, "the live view")
            assert view.run_id == run_id
            await pilot_wait(
                pilot, lambda: (view.sparklines["read_iops"].current or 0) > 0, 10, "a live read IOPS value"
            )
            spark = view.sparklines["read_iops"]
            seen = store.sample_count(run_id)
            await pilot_wait(
                pilot, lambda: store.sample_count(run_id) > seen and len(spark.values) > 1, 10, "another live sample"
            )
            await pilot.press("escape")
            await pilot_wait(pilot, lambda: not isinstance(app.screen, RunView), 10, "the Runs panel again")

            # the panel's stop key, confirmed
            await pilot.press("s")
            await pilot_wait(pilot, lambda: isinstance(app.screen, ConfirmDialog), 10, "the stop question")
            assert f"Stop run {run_id}?" in app.screen.question
            await pilot.press("y")
            confirmed_at = time.monotonic()
            doomed = [run.supervisor_pid, *fio_pids]
            await pilot_wait(
                pilot,
                lambda: not any(live(pid) for pid in doomed) and not processes_naming(fio_target),
                GROUP_GONE_WITHIN_S,
                "the supervisor and every fio process to exit",
            )
            gone_after_s = time.monotonic() - confirmed_at
            assert gone_after_s < GROUP_GONE_WITHIN_S
            await pilot_wait(pilot, lambda: store.get_run(run_id).state.finished, 5, "the run's end")
            record = store.get_run(run_id)
            assert record.state is RunState.STOPPED, f"{record.state.value}: {record.message}"
            result = store.result(run_id)
            assert result is not None and sum(job["read"]["iops"] for job in result["jobs"]) > 0, (
                "fio wrote its final report on SIGTERM"
            )
            await pilot_wait(
                pilot, lambda: cell_text(table, run_id, "state") == "stopped", 5, "the list to show the run stopped"
            )
