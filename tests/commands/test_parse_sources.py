"""``racperf parse`` reads saved output and nothing that is not: a file of /proc or /sys (found
by its file system, whatever link leads there), a character device, a FIFO nobody writes to,
a pipe that stays silent; each refused with why, exit status 2, quickly. A FIFO a writer fills
is read. And a fio job file starting with a UTF-8 byte order mark is named plainly."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, racperf_cmd


def _parse(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [*racperf_cmd(), "parse", *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    return done, time.monotonic() - started


@pytest.mark.parametrize("tool", ["fio", "orion", "iperf3"])
def test_kmsg_is_refused_naming_the_kernel_file_system(tool: str) -> None:
    done, _ = _parse(tool, "/proc/kmsg")
    assert done.returncode == 2
    assert "/proc/kmsg is a file of the kernel's proc file system (mounted on /proc), not saved output" in done.stderr


def test_a_link_to_sysfs_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "output.txt"
    link.symlink_to("/sys/kernel/mm/transparent_hugepage/enabled")
    done, _ = _parse("fio", str(link))
    assert done.returncode == 2 and "kernel's sysfs file system (mounted on /sys)" in done.stderr, done.stderr


def test_a_character_device_is_refused() -> None:
    done, _ = _parse("netperf", "/dev/zero")
    assert done.returncode == 2 and "/dev/zero is a character device" in done.stderr


@pytest.mark.parametrize("tool", ["fio", "orion"])
def test_a_fifo_nobody_writes_to_is_refused_within_seconds(tmp_path: Path, tool: str) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    done, took = _parse(tool, str(fifo), timeout=30)
    assert done.returncode == 2
    assert f"{fifo} is a FIFO no process wrote to within 2 s; not read" in done.stderr
    assert took < 20


def test_a_writer_that_never_writes_is_given_up_on(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    holder = os.open(fifo, os.O_RDWR)  # a writer that neither writes nor closes
    try:
        done, took = _parse("fio", str(fifo), "--wait", "1", timeout=30)
    finally:
        os.close(holder)
    assert done.returncode == 2 and f"{fifo}: nothing written to it for 1 s; gave up reading" in done.stderr
    assert took < 20


def test_a_fifo_a_writer_fills_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    saved = (FIXTURES / "iperf3" / "tcp.json").read_bytes()

    def write_late() -> None:
        time.sleep(0.5)  # after racperf opened it: the read must wait for the writer
        with open(fifo, "wb") as handle:
            handle.write(saved)

    writer = threading.Thread(target=write_late)
    writer.start()
    done, _ = _parse("iperf3", str(fifo), timeout=60)
    writer.join()
    direct, _ = _parse("iperf3", str(FIXTURES / "iperf3" / "tcp.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(direct.stdout)


def test_a_job_file_with_a_byte_order_mark_is_named_plainly(tmp_path: Path, data_dir: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_bytes(b"\xef\xbb\xbf[job]\nfilename=" + str(tmp_path / "data").encode() + b"\nsize=1m\nrw=read\n")
    done = subprocess.run(
        [*racperf_cmd(), "run", "fio", "--data-dir", str(data_dir), "--set", f"job_file={job}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert f"job file {job}: starts with a UTF-8 byte order mark (the bytes EF BB BF" in done.stderr
    assert "invisible" not in done.stderr
