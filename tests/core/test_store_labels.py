"""Schema 4: a run's label and note (the migration from schema 3: tests/core/test_store.py),
and deleting a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.run_labels import LabelError, clean_label, clean_note
from racperf_tui.core.store import RunNotFound, Store


def test_delete_run_removes_its_rows_and_no_other_runs(tmp_path: Path) -> None:
    with Store.open(tmp_path) as store:
        ids = [store.create_run("fio", "local", "/t", {}, [], None) for _ in range(2)]
        for run_id in ids:
            store.add_sample(run_id, Sample(t=1.0, metrics={"read_iops": 1.0}))
            store.add_raw(run_id, "output")
            store.set_result(run_id, {"r": run_id})
        store.delete_run(ids[0])
        with pytest.raises(RunNotFound):
            store.get_run(ids[0])
        with pytest.raises(RunNotFound):
            store.delete_run(ids[0])
        assert store.samples(ids[0]) == [] and store.raw_output(ids[0]) == "" and store.result(ids[0]) is None
        assert [r.id for r in store.list_runs()] == [ids[1]]
        assert store.sample_count(ids[1]) == 1 and store.result(ids[1]) == {"r": ids[1]}
        with pytest.raises(RunNotFound):
            store.set_label(ids[0], "gone")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("a\nb", "one line of printable text: it has '\\n' at 2"),
        ("x\x1b[31m", "'\\x1b' at 2"),
        ("l" * 41, "at most 40 characters (this one has 41)"),
    ],
)
def test_a_label_that_cannot_be_one_says_why(text: str, said: str) -> None:
    with pytest.raises(LabelError, match=None) as caught:
        clean_label(text)
    assert said in str(caught.value)


def test_blank_clears_and_a_note_may_be_a_sentence() -> None:
    assert clean_label("  ") is None and clean_label(" signoff ") == "signoff"
    assert clean_note("after the HBA update, queue_depth 64") == "after the HBA update, queue_depth 64"
    with pytest.raises(LabelError, match="at most 500"):
        clean_note("n" * 501)
