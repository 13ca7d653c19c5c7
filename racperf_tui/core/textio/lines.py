"""Bytes in arbitrary chunks -> text lines, robust against whatever a tool prints.

A line ends at ``\\n``, ``\\r`` or ``\\r\\n`` (tools redraw status lines with a bare ``\\r``),
even when the ``\\r`` and the ``\\n`` arrive in different chunks. Each line is decoded on its
own with ``errors='replace'``: the terminators are ASCII, which never occurs inside a UTF-8
multi-byte sequence, so splitting before decoding never cuts a character. A line longer than
``max_line_bytes`` is delivered truncated to that length (flagged) and the rest of it is
skipped up to its terminator, so memory stays bounded; the caller keeps the raw bytes.
Scanning only looks at newly arrived bytes, so a long line costs O(n), not O(n²).
"""

from __future__ import annotations

from typing import NamedTuple

#: large enough for any real tool line (fio's JSON is pretty-printed), small enough to hold
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024


class Line(NamedTuple):
    """One decoded line without its terminator; ``truncated`` when it exceeded the cap.
    (A NamedTuple: made once per output line, it must be cheap to create.)"""

    text: str
    truncated: bool = False


class LineSplitter:
    """Incremental splitter: :meth:`feed` chunks, then :meth:`finish` for a last unterminated
    line. Not thread-safe; one per stream."""

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, encoding: str = "utf-8") -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be >= 1, got {max_line_bytes}")
        self.max_line_bytes = max_line_bytes
        self.encoding = encoding
        self._buf = bytearray()
        self._skipping = False  # inside the overflow of a truncated line
        self._after_cr = False  # the previous chunk ended in '\r': a leading '\n' is its pair

    def _decode(self, data: bytes | bytearray, truncated: bool = False) -> Line:
        return Line(bytes(data).decode(self.encoding, errors="replace"), truncated)

    def feed(self, chunk: bytes) -> list[Line]:
        """Consume one chunk; return the lines it completed."""
        lines: list[Line] = []
        start = 0
        n = len(chunk)
        if self._after_cr and n and chunk[0] == 0x0A:
            start = 1
        self._after_cr = False
        if not self._skipping and b"\r" not in chunk:
            fast = self._feed_newlines_only(chunk[start:] if start else chunk)
            if fast is not None:
                return fast
        # next known position of each terminator (n: none left); each is searched for again
        # only once passed, so a chunk of many '\r' lines is not rescanned for '\n' per line
        nl = cr = -1
        while start < n:
            if nl < start:
                nl = chunk.find(b"\n", start)
                nl = n if nl < 0 else nl
            if cr < start:
                cr = chunk.find(b"\r", start)
                cr = n if cr < 0 else cr
            end = min(nl, cr)
            if end == n:
                end = -1
            if end < 0:
                self._append(chunk, start, n, lines)
                break
            self._append(chunk, start, end, lines)
            if self._skipping:
                self._skipping = False
            else:
                lines.append(self._decode(self._buf))
            self._buf.clear()
            start = end + 1
            if chunk[end] == 0x0D:
                if start < n and chunk[start] == 0x0A:
                    start += 1
                elif start == n:
                    self._after_cr = True
        return lines

    def _feed_newlines_only(self, chunk: bytes) -> list[Line] | None:
        """The common case, done by bytes.split in C: no '\r', no line over the cap.
        None: not applicable, use the general loop."""
        parts = chunk.split(b"\n")
        if len(parts) == 1:
            return None
        cap = self.max_line_bytes
        tail = parts.pop()
        if len(self._buf) + len(parts[0]) > cap or len(tail) > cap or max(map(len, parts)) > cap:
            return None
        encoding = self.encoding
        if self._buf:
            self._buf += parts[0]
            parts[0] = bytes(self._buf)
        lines = [Line(part.decode(encoding, errors="replace")) for part in parts]
        self._buf = bytearray(tail)
        return lines

    def _append(self, chunk: bytes, start: int, end: int, lines: list[Line]) -> None:
        """Add chunk[start:end] to the current line, enforcing the length cap."""
        if self._skipping or start >= end:
            return
        room = self.max_line_bytes - len(self._buf)
        if end - start <= room:
            self._buf += chunk[start:end]
            return
        self._buf += chunk[start : start + room]
        lines.append(self._decode(self._buf, truncated=True))
        self._buf.clear()
        self._skipping = True

    def finish(self) -> list[Line]:
        """End of stream: the last line if it had no terminator."""
        lines: list[Line] = []
        if self._buf and not self._skipping:
            lines.append(self._decode(self._buf))
        self._buf.clear()
        self._skipping = False
        self._after_cr = False
        return lines

    @property
    def pending_bytes(self) -> int:
        """Bytes of an incomplete line held."""
        return len(self._buf)
