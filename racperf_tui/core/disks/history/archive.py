"""Paths -> named text sources, opened lazily and read as streams.

A path is a file (plain, ``.gz``, ``.bz2``), a ``.zip`` or a tar (``.tar``, ``.tar.gz``,
``.tgz``, ``.tar.bz2``) whose members are such files, or a directory: its ``oswiostat/``
directories when it has any (an OSWatcher archive, found at any depth), else every file in it.
Within a directory or an archive, only the ``oswiostat`` files of an OSWatcher tree and the
``Iostat`` files of an ExaWatcher one are read when there are such.

Each source knows its host and time from its name when the name is OSWatcher's
(``host_iostat_YY.MM.DD.HH00.dat[.gz]``) or ExaWatcher's
(``YYYY_MM_DD_HH_MM_SS_IostatExaWatcher_host.dat.bz2``): the reader orders hourly files by
them. Lines are read with a cap (``MAX_LINE_CHARS``) so a file without newlines cannot take
the memory; a file that ends early (a truncated gzip, a cut tar) stops with ``error`` set.
"""

from __future__ import annotations

import bz2
import codecs
import datetime as dt
import gzip
import os
import re
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol, cast

#: A longer line is cut (and reported by the parser as malformed): no iostat line is near it.
MAX_LINE_CHARS = 1 << 20

_OSW_NAME = re.compile(r"^(?P<host>.+)_iostat_(?P<y>\d\d)\.(?P<m>\d\d)\.(?P<d>\d\d)\.(?P<h>\d\d)(?P<mi>\d\d)\.dat")
_EXA_NAME = re.compile(
    r"^(?P<y>\d{4})_(?P<m>\d\d)_(?P<d>\d\d)_(?P<h>\d\d)_(?P<mi>\d\d)_\d\d_IostatExaWatcher_(?P<host>.+?)\.dat"
)
_CHUNK_BYTES = 1 << 18
_TAR_COPY_BYTES = 1 << 13
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2")
_READ_ERRORS = (OSError, EOFError, zlib.error, tarfile.TarError, zipfile.BadZipFile, ValueError)


def name_facts(name: str) -> tuple[str, dt.datetime | None]:
    """(host, hour) from an OSWatcher or ExaWatcher file name; ("", None) otherwise."""
    base = name.rsplit("/", 1)[-1]
    for pattern, century in ((_OSW_NAME, 2000), (_EXA_NAME, 0)):
        m = pattern.match(base)
        if m is not None:
            try:
                when = dt.datetime(century + int(m["y"]), int(m["m"]), int(m["d"]), int(m["h"]), int(m["mi"]))
            except ValueError:
                when = None
            return m["host"], when
    return "", None


def container_of(name: str) -> str:
    """What a source's name says it was read from: an archive's member, compressed or not."""
    path, member = "", name
    for suffix in (".zip", *_TAR_SUFFIXES):
        if f"{suffix}:" in name:
            path, member = name.split(f"{suffix}:", 1)
            path += suffix
            break
    parts = []
    if member.endswith(".gz"):
        parts.append("gzip")
    elif member.endswith(".bz2"):
        parts.append("bzip2")
    if path:
        parts.append("member of " + ("a zip" if path.endswith(".zip") else "a tar"))
    base = member.rsplit("/", 1)[-1]
    if _OSW_NAME.match(base):
        parts.insert(0, "OSWatcher hourly file")
    elif _EXA_NAME.match(base):
        parts.insert(0, "ExaWatcher hourly file")
    return ", ".join(parts)


@dataclass
class Source:
    """One text file to read: its display name, what its name says, and how to open it."""

    name: str
    opener: Callable[[], IO[bytes]]
    host: str = ""
    hour: dt.datetime | None = None
    error: str | None = field(default=None, init=False)
    lines_read: int = field(default=0, init=False)

    def lines(self) -> Iterator[str]:
        """The decoded lines (without terminators), read a chunk at a time; on a read error,
        ``error`` is set and the lines read so far stay delivered."""
        try:
            with self.opener() as raw:
                stream = _decompressed(self.name, raw)
                decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
                carry = ""
                cutting = False  # inside a line longer than MAX_LINE_CHARS: skipped to its end
                # read1: one decompression step at a time, so a truncated archive's error
                # comes after every line before it was delivered
                while data := stream.read1(_CHUNK_BYTES):
                    chunk = carry + decoder.decode(data)
                    if "\r" in chunk:  # \r\n and a bare \r end lines too (a \r last waits)
                        tail = "\r" if chunk.endswith("\r") else ""
                        chunk = chunk[: len(chunk) - len(tail)].replace("\r\n", "\n").replace("\r", "\n") + tail
                    lines = chunk.split("\n")
                    carry = lines.pop()
                    if cutting and lines:
                        lines.pop(0)
                        cutting = False
                    self.lines_read += len(lines)
                    yield from lines
                    if len(carry) > MAX_LINE_CHARS:
                        if not cutting:
                            self.lines_read += 1
                            yield carry[:MAX_LINE_CHARS]  # the parser names it
                        cutting = True
                        carry = ""
                carry = (carry + decoder.decode(b"", final=True)).rstrip("\r")
                if carry and not cutting:
                    self.lines_read += 1
                    yield carry  # the last line, without its newline
        except _READ_ERRORS as exc:
            self.error = f"read stopped after line {self.lines_read}: {exc or type(exc).__name__}"


class _ChunkReader(Protocol):
    """What lines() reads: files, gzip, bz2, zip and tar members all have read1."""

    def read1(self, size: int = ..., /) -> bytes: ...


def _decompressed(name: str, raw: IO[bytes]) -> _ChunkReader:
    if name.endswith(".gz"):
        return gzip.GzipFile(fileobj=raw)
    if name.endswith(".bz2"):
        return bz2.BZ2File(raw)
    return cast(_ChunkReader, raw)  # a BufferedReader, ZipExtFile or tar member


def _source(name: str, opener: Callable[[], IO[bytes]]) -> Source:
    host, hour = name_facts(name)
    return Source(name, opener, host, hour)


def _watcher_files(names: list[str]) -> list[str]:
    """An OSWatcher/ExaWatcher tree's iostat files when the listing has them, else all."""
    chosen = [n for n in names if "/oswiostat/" in f"/{n}" or "Iostat" in n.rsplit("/", 1)[-1]]
    return chosen or names


def _archive_sources(path: Path) -> Iterator[Source | str]:
    name = path.name
    if name.endswith(".zip"):
        archive = zipfile.ZipFile(path)
        members = _watcher_files([i.filename for i in archive.infolist() if not i.is_dir()])
        for member in members:
            yield _source(f"{path}:{member}", lambda m=member: archive.open(m))  # type: ignore[misc]
        return
    yield from _tar_sources(path)


def _tar_sources(path: Path) -> Iterator[Source | str]:
    """A tar's wanted members, copied out in one streaming pass into a temporary directory
    (removed when the last of its sources is gone): a compressed tar read member by member
    in another order than its own would be decompressed again from its start for each step
    back. OSWatcher's members are mostly .gz themselves, so the copies stay that size. A tar
    cut short keeps the members before the cut, and the one cut up to its last 8 KiB chunk."""
    spool = tempfile.TemporaryDirectory(prefix="racperf-history-")
    copies: list[tuple[str, Path]] = []
    error: str | None = None
    try:
        with tarfile.open(path, "r|*") as tar:
            for info in tar:
                if not info.isfile():
                    continue
                copy = Path(spool.name) / str(len(copies))
                copies.append((info.name, copy))
                extracted = tar.extractfile(info)
                with open(copy, "wb") as out:
                    # small reads: a member cut short loses only its last partial chunk
                    while extracted is not None and (data := extracted.read(_TAR_COPY_BYTES)):
                        out.write(data)
    except _READ_ERRORS as exc:
        error = f"{path}: archive cut short after {len(copies)} member(s): {exc or type(exc).__name__}"
    by_name = dict(copies)
    for member in _watcher_files([name for name, _ in copies]):

        def open_copy(copy: Path = by_name[member], keep: object = spool) -> IO[bytes]:
            return open(copy, "rb")  # keep: the directory lives as long as a source needs it

        yield _source(f"{path}:{member}", open_copy)
    if error is not None:
        yield error


def open_sources(paths: list[Path]) -> Iterator[Source | str]:
    """Every source of the paths, in the order given (directories sorted); a path that cannot
    be opened at all is yielded as a message naming it."""
    for path in paths:
        try:
            if path.is_dir():
                found = sorted(str(p) for p in path.rglob("*") if p.is_file())
                rel = _watcher_files([os.path.relpath(f, path) for f in found])
                for member in rel:
                    full = path / member
                    yield from _file_sources(full)
            elif path.is_file():
                yield from _file_sources(path)
            else:
                yield f"{path}: no such file or directory"
        except _READ_ERRORS as exc:
            yield f"{path}: {exc or type(exc).__name__}"


def _file_sources(path: Path) -> Iterator[Source | str]:
    if path.name.endswith(_TAR_SUFFIXES) or path.name.endswith(".zip"):
        yield from _archive_sources(path)
    else:
        yield _source(str(path), lambda p=path: open(p, "rb"))  # type: ignore[misc]
