"""A long-lived companion on an SSH node (orchestration/companions.py over core/remote/ssh_host.py):
one channel for the run, its answers at the interval, parsed as a local `cat` of the same
files; a killed loop started again; a lost link ends the loop on the node within 10 s and the
runner starts it again on a new connection. A real OpenSSH sshd on 127.0.0.1: the node's
processes are this machine's, so ps sees them."""

from __future__ import annotations

import glob
import os
import signal
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.contract.invocation import Companion, Invocation
from racperf_tui.core.disks.diskstats import snapshot_from_text
from racperf_tui.core.guard.write_watch import WriteWatch
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import RemoteProcess, SshHost
from racperf_tui.orchestration.companions import CompanionRunner
from racperf_tui.tools.orion.stream import DISKSTATS_COMPANION
from tests.helpers import FIXTURES
from tests.helpers.cluster_helpers import isolated_home  # noqa: F401
from tests.helpers.proc_helpers import wait_until
from tests.helpers.sshd_helpers import Sshd

pytestmark = pytest.mark.usefixtures("isolated_home")

ROOT = FIXTURES / "sysstat" / "root1"


class Answers:
    """Every answer with the time it came."""

    def __init__(self) -> None:
        self.outputs: list[tuple[float, str, int]] = []
        self.by_name: dict[str, list[tuple[float, str, int]]] = {}

    def feed(self, line: str) -> list[Sample]:
        raise AssertionError("a companion's answer goes to companion_output")

    def finish(self) -> list[Sample]:
        return []

    def companion_output(self, name: str, output: str, exit_status: int) -> list[Sample]:
        self.outputs.append((time.monotonic(), output, exit_status))
        self.by_name.setdefault(name, []).append(self.outputs[-1])
        return []


def _host(sshd: Sshd, tmp_path: Path) -> SshHost:
    target = SshTarget.parse(sshd.spec, identity=str(sshd.user_key), known_hosts=[str(sshd.known_hosts)])
    return SshHost(target, remote_base=str(tmp_path / "base"), connection=ssh.connect(target, fresh=True))


def _poll(runner: CompanionRunner, done, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "the companion did not get there in time"
        runner.poll()
        time.sleep(0.05)


def _loops(mark: str) -> list[int]:
    """The node's processes that are the loop of this mark: "racperf-companion MARK" as two
    words of their argv (the watchdog around it has them inside one word, its command)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(a == b"racperf-companion" and b == mark.encode() for a, b in zip(argv, argv[1:])):
            found.append(int(entry.name))
    return found


def test_orion_s_diskstats_over_one_channel_every_second_parsed_as_a_local_cat(sshd: Sshd, tmp_path: Path) -> None:
    """ORION's companion as the supervisor runs it (under the node's write watch, whose note
    comes first): one channel, an answer every second; a recorded diskstats answered every
    0.2 s, each read exactly as the files read here."""
    recorded = Companion(
        "recorded", ["cat", str(ROOT / "proc" / "uptime"), str(ROOT / "proc" / "diskstats")],
        interval_s=0.2, first_after_s=0.0, keep_output=False, long_lived=True,
    )  # fmt: skip
    parser = Answers()
    host = _host(sshd, tmp_path)
    invocation = Invocation(argv=["true"], companions=(recorded, DISKSTATS_COMPANION))
    runner = CompanionRunner(host, invocation, tmp_path / "7", parser, write_watch=WriteWatch(()))
    try:
        _poll(
            runner,
            lambda: len(parser.by_name.get("recorded", ())) >= 20 and len(parser.by_name.get("diskstats", ())) >= 3,
        )
        # the node's watchdog tracks the loop's tree, which forks a cat and a sleep each
        # answer (and the node's write watch its own): the gone are forgotten, so the list is
        # short between bursts (17 entries after 5 s at 0.2 s, before; 4 now)
        watchdog = runner._running["recorded"].proc
        assert isinstance(watchdog, RemoteProcess)
        (tracked,) = glob.glob(f"{os.environ.get('TMPDIR', '/tmp')}/{watchdog.mark}.*/list")
        sizes = []
        for _ in range(30):
            runner.poll()
            sizes.append(len(Path(tracked).read_text().split()))
            time.sleep(0.07)
        assert min(sizes) <= 6, sizes
    finally:
        runner.close()
    assert runner.runs == 2 and runner.failures == 0
    local = snapshot_from_text((ROOT / "proc" / "uptime").read_text() + (ROOT / "proc" / "diskstats").read_text(), 0.0)
    mine = parser.by_name["recorded"]
    # the node's write watch says what it watches first: "racperf-TOKEN net watch; ..."
    assert mine[0][1].startswith("racperf-") and not mine[1][1].startswith("racperf-")
    for _, out, status in mine:
        snapshot = snapshot_from_text(out, 0.0)
        assert status == 0 and snapshot.errors == [] and snapshot.uptime_cs == local.uptime_cs == 719255
        assert snapshot.devices == local.devices and len(snapshot.devices) == len(local.devices) > 0
        sda = snapshot.devices["sda"]
        assert (sda.rd_ios, sda.rd_sectors, sda.wr_ios, sda.tot_ticks) == (49601, 3195498, 12180, 32862)
    # this machine's own diskstats through ORION's companion: the node's clock says 1 s apart
    live = parser.by_name["diskstats"]
    uptimes = [snapshot_from_text(out, 0.0).uptime_cs / 100 for _, out, _ in live]
    gaps = [b - a for a, b in zip(uptimes, uptimes[1:])]
    assert all(0.8 <= gap <= 1.5 for gap in gaps), gaps
    arrivals = [t for t, _, _ in live]
    assert (arrivals[-1] - arrivals[0]) / (len(arrivals) - 1) < 1.3
    assert all(snapshot_from_text(out, 0.0).errors == [] and status == 0 for _, out, status in live)


def test_a_killed_loop_restarts_and_a_lost_link_ends_it_on_the_node(sshd: Sshd, tmp_path: Path) -> None:
    companion = Companion("clock", ["cat", "/proc/uptime"], interval_s=0.3, first_after_s=0.0, long_lived=True)
    parser = Answers()
    logged: list[str] = []
    host = _host(sshd, tmp_path)
    runner = CompanionRunner(
        host, Invocation(argv=["true"], companions=(companion,)), tmp_path / "8", parser, log=logged.append
    )
    try:
        _poll(runner, lambda: len(parser.outputs) >= 2)
        first = runner._running["clock"].frames
        assert first is not None
        (pid,) = _loops(first.mark)
        os.kill(pid, signal.SIGKILL)
        _poll(runner, lambda: runner.runs == 2 and parser.outputs[-1][2] == 0 and len(parser.outputs) >= 4)
        assert "[racperf: the companion's loop ended (exit status -9)]\n" in [out for _, out, _ in parser.outputs]
        second = runner._running["clock"].frames
        assert second is not None and second.mark != first.mark and len(_loops(second.mark)) == 1
        answers = len(parser.outputs)
        host.connection.abort()  # the TCP connection gone without a goodbye
        cut = time.monotonic()
        took = wait_until(lambda: not _loops(second.mark) and time.monotonic() - cut, 10, what="the loop gone")
        print(f"the companion's loop gone {took:.2f} s after the link died")
        assert took < 10
        # the runner starts it again on a new connection, and the answers go on
        _poll(runner, lambda: runner.runs == 3 and len(parser.outputs) > answers + 1 and parser.outputs[-1][2] == 0)
        assert parser.outputs[answers][1] == "[racperf: the companion's loop ended (exit status 255)]\n"
        assert parser.outputs[-1][2] == 0 and float(parser.outputs[-1][1].split()[0]) > 0
        third = runner._running["clock"].frames
        assert third is not None and len(_loops(third.mark)) == 1
    finally:
        runner.close()
    assert not _loops(third.mark) and not runner._running  # the end of the run ends it
    assert sum("its loop ended" in line for line in logged) == 2
