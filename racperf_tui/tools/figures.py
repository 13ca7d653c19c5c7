"""What every output parser shares to stay robust under hostile input.

A saved output can be anything: a truncated file, a fuzzed one, a tool gone wrong. The
parsers turn it into a result or raise :class:`OutputParseError` (a ValueError) whose message
says what was expected and where; nothing else escapes them. The helpers here are what makes
that cheap to keep:

* :func:`figure` / :func:`count`: a value from a decoded JSON report -> a finite, non-negative
  float / int, or OutputParseError naming the field (``jobs[0].read.iops: -5000.0 is negative``).
  JSON decodes ``1e400`` to inf and ``NaN`` / ``Infinity`` to floats that strict JSON readers
  reject; a rate, an amount or a time is never negative.
* :func:`load_json`: ``json.loads`` that reports deep nesting and huge integers as
  OutputParseError instead of RecursionError / "Exceeds the limit (4300 digits)".
* :data:`MAX_LINE_CHARS`: text lines longer than this cannot be a figure line of any tool
  here; parsers skip them (with a warning) before any regex sees them, so the cost of a line
  is bounded whatever the regexes are.
* :func:`finite_number`: the text of a number matched by a parser's regex -> float, None
  when it is not a usable figure (too many digits, inf, NaN, negative).

No regex here or in the parsers may backtrack more than linearly: every quantifier is followed
by something its characters cannot match, so each input position is tried a bounded number of
times (``tests/test_parser_robustness.py`` feeds 1 MB lines to every parser to prove it).
"""

from __future__ import annotations

import json
import math
from typing import Any

#: longer text lines are skipped with a warning: no tool prints a figure line anywhere near
#: this (fio's widest, a terse v5 line with many disks, is a few KB)
MAX_LINE_CHARS = 64 * 1024

#: a figure's text longer than this is not a measurement (a double has 17 significant
#: digits; fio's largest counters are 20 digits): refused before int()/float() see it
MAX_NUMBER_CHARS = 40

#: warnings kept per result (the rest are counted)
MAX_WARNINGS = 100


class OutputParseError(ValueError):
    """Output that is not what the parser expected; the message says what and where."""


def figure(value: Any, where: str, *, negative_ok: bool = False, error: type[ValueError] = OutputParseError) -> float:
    """A number from a decoded JSON report -> finite float (>= 0 unless ``negative_ok``).

    Raises ``error`` (the parser's own OutputParseError subclass) naming ``where``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise error(f"{where}: {_show(value)} is not a number")
    try:
        number = float(value)
    except OverflowError:  # an int beyond the double range
        raise error(f"{where}: {_show(value)} is out of range") from None
    if not math.isfinite(number):
        raise error(f"{where}: not a finite number (NaN, Infinity or beyond 1e308 in the file)")
    if number < 0 and not negative_ok:
        raise error(f"{where}: {_show(value)} is negative; this figure cannot be")
    return number


def count(value: Any, where: str, *, negative_ok: bool = False, error: type[ValueError] = OutputParseError) -> int:
    """An integer figure (a count, an id, an errno) from a decoded JSON report -> int."""
    number = figure(value, where, negative_ok=negative_ok, error=error)
    if number != int(number):
        raise error(f"{where}: {_show(value)} is not a whole number")
    return int(value) if isinstance(value, int) else int(number)


def optional_figure(value: Any, where: str, **kwargs: Any) -> float | None:
    """:func:`figure`, None for a missing (None) value."""
    return None if value is None else figure(value, where, **kwargs)


def optional_count(value: Any, where: str, **kwargs: Any) -> int | None:
    """:func:`count`, None for a missing (None) value."""
    return None if value is None else count(value, where, **kwargs)


def finite_number(text: str, *, negative_ok: bool = False) -> float | None:
    """The text of a number a regex matched -> float; None when it is no usable figure."""
    if len(text) > MAX_NUMBER_CHARS:
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number) or (number < 0 and not negative_ok):
        return None
    return number


def _parse_int(text: str) -> int | float:
    # Python refuses int() of more than 4300 digits (a ValueError with a misleading message);
    # such a figure is no measurement: make it a float (inf), which figure() then refuses
    return int(text) if len(text) <= MAX_NUMBER_CHARS else float(text)


def load_json(text: str, what: str, error: type[ValueError] = OutputParseError) -> Any:
    """``json.loads`` whose every failure is ``error`` naming ``what`` (and the position)."""
    try:
        return json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise error(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise error(f"{what}: JSON nested too deeply to be a tool's report") from None


def raw_decode(decoder: json.JSONDecoder, text: str, pos: int) -> tuple[Any, int]:
    """``decoder.raw_decode`` with deep nesting reported as a JSONDecodeError (its position)."""
    try:
        return decoder.raw_decode(text, pos)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, pos) from None


def strict_decoder() -> json.JSONDecoder:
    """A JSONDecoder with :func:`load_json`'s handling of huge integers."""
    return json.JSONDecoder(parse_int=_parse_int)


class Warnings:
    """A bounded list of "where: what" warnings for a result's ``"warnings"`` key."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.total = 0

    def add(self, message: str) -> None:
        self.total += 1
        if len(self.items) < MAX_WARNINGS:
            self.items.append(message)

    def long_line(self, lineno: int, length: int) -> None:
        """The warning for a line skipped because of its length."""
        self.add(f"line {lineno}: {length} characters long, skipped (no figure line is longer than {MAX_LINE_CHARS})")

    def into(self, result: dict[str, Any]) -> dict[str, Any]:
        """Add ``"warnings"`` to ``result`` when there are any; return ``result``."""
        if self.total:
            items = list(self.items)
            if self.total > len(items):
                items.append(f"... and {self.total - len(items)} more warnings")
            result.setdefault("warnings", []).extend(items)
        return result


def check_finite(result: Any, what: str, error: type[ValueError] = OutputParseError) -> None:
    """Raise ``error`` naming the field if any float in ``result`` is NaN or infinite.

    The last guard of every parser: what it returns is printed as strict JSON
    (``allow_nan=False``), which cannot hold such values.
    """
    stack: list[tuple[str, Any]] = [("", result)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                raise error(f"{what}: {path or 'the result'} is {value!r}, not a finite number")
        elif isinstance(value, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
