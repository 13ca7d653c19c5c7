"""The Runs tab's filter words, on run records as the store returns them."""

from __future__ import annotations

from pathlib import Path

import pytest

from racperf_tui.core.store import Store
from racperf_tui.ui.runs_filter import FilterError, RunsFilter


def test_words_filter_by_tool_node_and_label(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        for tool, host, label in (("fio", "local", "signoff"), ("orion", "rac1", None), ("fio", "rac2", "Before")):
            run_id = store.create_run(tool, host, None, {}, [], None)
            store.set_label(run_id, label)
        runs = store.list_runs()

    def shown(text: str) -> list[int]:
        return [run.id for run in runs if RunsFilter.parse(text).matches(run)]

    assert shown("") == [3, 2, 1] and not RunsFilter.parse("  ").active
    assert shown("tool:fio") == [3, 1]
    assert shown("node:rac") == [3, 2]
    assert shown("label:before") == [3]  # any case
    assert shown("tool:fio node:rac") == [3]  # every word must hold
    assert shown("rac1") == [2] and shown("sign") == [1]  # a bare word: tool, node or label
    assert RunsFilter.parse("Tool:FIO  sign").describe() == "tool:fio sign"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("host:rac1", "'host' is not a filter: use tool:VALUE, node:VALUE, label:VALUE or a word"),
        ("tool:", "'tool:': say what tool to show (tool:VALUE)"),
    ],
)
def test_a_word_that_names_no_field_says_which_there_are(text: str, said: str) -> None:
    with pytest.raises(FilterError) as caught:
        RunsFilter.parse(text)
    assert str(caught.value) == said
