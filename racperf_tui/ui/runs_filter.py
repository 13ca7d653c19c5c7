"""The Runs tab's filter: which runs the list shows, by tool, node and label.

Typed as words: ``tool:fio``, ``node:rac1``, ``label:signoff`` (each ``KEY:VALUE`` must
match the run's field, case-insensitive, as a part: ``tool:orion`` finds ``orion``,
``node:rac`` every rac node), and a bare word that any of the three contains. All the words
must hold. No widgets here: the panel asks :meth:`RunsFilter.matches` of each run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from racperf_tui.core.store import RunRecord

#: the fields a KEY:VALUE word names, and the run's field each reads
FILTER_KEYS = ("tool", "node", "label")


class FilterError(ValueError):
    """A filter word that names no field (says which ones there are)."""


@dataclass(frozen=True)
class RunsFilter:
    """Parsed words: (key, value) pairs, key None for a bare word; no words: every run."""

    words: tuple[tuple[str | None, str], ...] = field(default=())

    @classmethod
    def parse(cls, text: str) -> RunsFilter:
        words: list[tuple[str | None, str]] = []
        for word in text.split():
            key, colon, value = word.partition(":")
            if not colon:
                words.append((None, word.lower()))
                continue
            if key.lower() not in FILTER_KEYS:
                raise FilterError(
                    f"{key!r} is not a filter: use {', '.join(k + ':VALUE' for k in FILTER_KEYS)} or a word"
                )
            if not value:
                raise FilterError(f"{word!r}: say what {key} to show ({key}:VALUE)")
            words.append((key.lower(), value.lower()))
        return cls(tuple(words))

    @property
    def active(self) -> bool:
        return bool(self.words)

    def matches(self, run: RunRecord) -> bool:
        fields = {"tool": run.tool.lower(), "node": run.host.lower(), "label": (run.label or "").lower()}
        for key, value in self.words:
            if key is None:
                if not any(value in text for text in fields.values()):
                    return False
            elif value not in fields[key]:
                return False
        return True

    def describe(self) -> str:
        """The filter as typed back, normalised ("tool:fio label:signoff")."""
        return " ".join(f"{key}:{value}" if key else value for key, value in self.words)
