"""core.bounded_read: whole-file reads that cannot exhaust memory or wait on a device."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from racperf_tui.core.textio.bounded_read import (
    BoundedReadError,
    read_bytes_bounded,
    read_regular_bytes_bounded,
    read_regular_text_bounded,
    read_stream_bounded,
    read_text_bounded,
)
from tests.helpers import FIXTURES, racperf_cmd


def test_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(b"abc\xffdef\n")
    assert read_bytes_bounded(path, 100) == b"abc\xffdef\n"
    assert read_text_bounded(path, 100) == "abc\ufffddef\n"  # invalid UTF-8 replaced


def test_file_at_the_cap_is_read_one_byte_over_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_bytes(b"x" * 1024)
    assert len(read_bytes_bounded(path, 1024)) == 1024
    with pytest.raises(BoundedReadError) as info:
        read_bytes_bounded(path, 1023)
    assert info.value.reason == "too large"
    assert str(info.value) == f"{path} is larger than {1023 / 1048576:g} MiB; not read"


def test_character_device_is_refused_before_reading() -> None:
    with pytest.raises(BoundedReadError) as info:
        read_bytes_bounded("/dev/zero", 1 << 30)
    assert info.value.reason == "not a regular file"
    assert "/dev/zero is a character device" in str(info.value)


def test_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    # the `iostat --root` case: a recorded /proc file replaced by a link to /dev/zero
    link = tmp_path / "diskstats"
    link.symlink_to("/dev/zero")
    with pytest.raises(BoundedReadError, match="character device"):
        read_text_bounded(link, 1 << 20)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BoundedReadError, match="is a directory"):
        read_bytes_bounded(tmp_path, 100)


def test_proc_file_with_zero_size_is_read() -> None:
    # /proc files stat as size 0: the cap, not st_size, bounds the read
    text = read_text_bounded("/proc/self/status", 1 << 20)
    assert text.startswith("Name:")


def test_proc_file_over_the_cap_is_refused() -> None:
    with pytest.raises(BoundedReadError, match="larger than"):
        read_bytes_bounded("/proc/self/status", 10)


def test_pipe_is_read_up_to_the_cap() -> None:
    r, w = os.pipe()
    os.write(w, b"y" * 5000)
    os.close(w)
    with os.fdopen(r, "rb") as stream:
        assert read_stream_bounded(stream, 5000, "stdin") == b"y" * 5000
    r, w = os.pipe()
    os.write(w, b"y" * 5001)
    os.close(w)
    with os.fdopen(r, "rb") as stream, pytest.raises(BoundedReadError, match="stdin is larger than"):
        read_stream_bounded(stream, 5000, "stdin")


def test_missing_file_is_the_usual_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bytes_bounded(tmp_path / "nope", 100)


def test_racperf_parse_refuses_dev_zero_quickly() -> None:
    done = subprocess.run(racperf_cmd() + ["parse", "fio", "/dev/zero"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == "racperf parse: /dev/zero is a character device, not a regular file or pipe; not read"
    assert done.stdout == ""


def test_racperf_parse_refuses_dev_zero_on_stdin() -> None:
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run(
            racperf_cmd() + ["parse", "fio", "-"], stdin=zero, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2
    assert "stdin is a character device" in done.stderr


def test_racperf_parse_reads_a_pipe_and_states_the_cap_in_help() -> None:
    fixture = FIXTURES / "fio" / "fio-3.33-randrw-2jobs.json"
    with open(fixture, "rb") as src:
        done = subprocess.run(
            racperf_cmd() + ["parse", "fio", "-"], stdin=src, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 0, done.stderr
    assert '"format": "json"' in done.stdout
    helped = subprocess.run(racperf_cmd() + ["parse", "--help"], capture_output=True, text=True, timeout=60)
    assert "at most 256 MiB each" in " ".join(helped.stdout.split())


def test_system_file_reads_proc_and_sysfs_files_whose_size_says_zero() -> None:
    # /proc/self/mounts stats as 0 bytes: the read goes on to EOF, as the iostat sampler needs
    assert os.stat("/proc/self/mounts").st_size == 0
    mounts = read_regular_text_bounded("/proc/self/mounts")
    assert " / " in mounts or " /proc " in mounts
    uptime = read_regular_bytes_bounded("/proc/uptime")
    assert float(uptime.split()[0]) > 0


def test_system_file_refuses_a_fifo_at_once_and_a_device(tmp_path: Path) -> None:
    fifo = tmp_path / "diskstats"
    os.mkfifo(fifo)  # no writer: an open() would wait forever
    with pytest.raises(BoundedReadError) as info:
        read_regular_bytes_bounded(fifo)
    assert info.value.reason == "not a regular file"
    assert str(info.value) == f"{fifo} is a FIFO, not a regular file; not read"
    with pytest.raises(BoundedReadError) as info:
        read_regular_text_bounded("/dev/zero")
    assert str(info.value) == "/dev/zero is a character device, not a regular file; not read"


def test_system_file_over_its_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "size"
    with open(path, "wb") as f:
        f.truncate(16 * 1024 * 1024 + 1)  # sparse
    with pytest.raises(BoundedReadError) as info:
        read_regular_bytes_bounded(path)
    assert str(info.value) == f"{path} is larger than 16 MiB; not read"
    assert read_regular_bytes_bounded(path, 17 * 1024 * 1024)[:4] == b"\0\0\0\0"
