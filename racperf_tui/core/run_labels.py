"""A run's label and note, the DBA's own words on it: what the store accepts.

A label is a short name to find runs by (``racperf runs list --label``, the Runs tab's filter):
one word or a few, at most 40 characters. A note is a sentence or two ("after the HBA firmware
update"), at most 500. Both are one line of printable text: a control character would reach
the terminal of whoever lists the runs, and a newline would break the list's table. Empty
text (or only blanks) clears them.
"""

from __future__ import annotations

LABEL_MAX_CHARS = 40
NOTE_MAX_CHARS = 500


class LabelError(ValueError):
    """Text that cannot be a run's label or note (says what is wrong with it)."""


def clean_label(text: str) -> str | None:
    """The label to store (None: clear it); LabelError says why ``text`` cannot be one."""
    return _clean(text, "label", LABEL_MAX_CHARS)


def clean_note(text: str) -> str | None:
    """The note to store (None: clear it); LabelError says why ``text`` cannot be one."""
    return _clean(text, "note", NOTE_MAX_CHARS)


def _clean(text: str, what: str, limit: int) -> str | None:
    words = text.strip()
    if not words:
        return None
    bad = next((ch for ch in words if not ch.isprintable()), None)
    if bad is not None:
        raise LabelError(f"a {what} is one line of printable text: it has {bad!r} at {words.index(bad) + 1}")
    if len(words) > limit:
        raise LabelError(f"a {what} is at most {limit} characters (this one has {len(words)})")
    return words
