"""Schema 4: a run's label and note, and deleting a run; a schema-3 store (as racperf wrote it
before labels) read as it is and migrated on the first writable open, every run kept."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.paths import store_path
from racperf_tui.core.run_labels import LabelError, clean_label, clean_note
from racperf_tui.core.store import SCHEMA_VERSION, RunNotFound, Store

#: the schema of a version-3 store, as racperf wrote it (version 1, then run groups, then their results)
_SCHEMA_3 = """
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, host TEXT NOT NULL,
    target TEXT, config TEXT NOT NULL, argv TEXT NOT NULL, tool_version TEXT, started_at REAL NOT NULL,
    ended_at REAL, state TEXT NOT NULL, exit_status INTEGER, message TEXT, supervisor_pid INTEGER,
    supervisor_started_at REAL, benchmark_pgid INTEGER);
CREATE TABLE samples (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, seq INTEGER NOT NULL,
    t REAL NOT NULL, metrics TEXT NOT NULL, extra TEXT, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
CREATE TABLE raw_output (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL REFERENCES runs(id)
    ON DELETE CASCADE, stream TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX raw_output_run ON raw_output(run_id, id);
CREATE TABLE results (run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE, result TEXT NOT NULL);
CREATE TABLE run_groups (id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, config TEXT NOT NULL,
    nodes TEXT NOT NULL, created_at REAL NOT NULL, message TEXT, result TEXT);
ALTER TABLE runs ADD COLUMN group_id INTEGER REFERENCES run_groups(id);
CREATE INDEX runs_group ON runs(group_id);
PRAGMA user_version = 3;
"""


def _version_3_store(data: Path) -> None:
    data.mkdir(parents=True)
    conn = sqlite3.connect(store_path(data))
    conn.executescript(_SCHEMA_3)
    conn.execute(
        "INSERT INTO run_groups (tool, config, nodes, created_at, result) "
        "VALUES ('fio', '{}', '[\"rac1\"]', 1.0, '{\"knee\": 4}')"
    )
    conn.execute(
        "INSERT INTO runs (tool, host, target, config, argv, started_at, ended_at, state, group_id) VALUES "
        "('fio', 'rac1', '/u02/x', '{\"bs\": \"8k\"}', '[\"fio\"]', 100.0, 160.0, 'succeeded', 1)"
    )
    conn.execute("INSERT INTO samples VALUES (1, 1, 1.0, '{\"read_iops\": 5.0}', NULL)")
    conn.execute("INSERT INTO results VALUES (1, '{\"jobs\": []}')")
    conn.commit()
    conn.close()


def _user_version(data: Path) -> int:
    conn = sqlite3.connect(store_path(data))
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_a_schema_3_store_is_read_as_it_is_then_migrated_keeping_every_run(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _version_3_store(data)
    with Store.open(data, read_only=True) as old:
        (run,) = old.list_runs()
        assert (run.id, run.label, run.note, run.group_id) == (1, None, None, 1)
        assert old.list_runs(label="x") == []  # no labels in a store older than them
    assert _user_version(data) == 3  # the read changed nothing
    with Store.open(data) as store:
        (run,) = store.list_runs()
        assert (run.tool, run.host, run.config, run.state, run.group_id) == (
            "fio",
            "rac1",
            {"bs": "8k"},
            RunState.SUCCEEDED,
            1,
        )
        assert [s.metrics for _, s in store.samples(1)] == [{"read_iops": 5.0}]
        assert store.result(1) == {"jobs": []} and store.group_result(1) == {"knee": 4}
        store.set_label(1, "before-fw")
        store.set_note(1, "firmware 2.1 on the HBA")
        run = store.get_run(1)
        assert (run.label, run.note) == ("before-fw", "firmware 2.1 on the HBA")
        assert run.to_json()["label"] == "before-fw" and run.to_json()["note"] == "firmware 2.1 on the HBA"
        assert [r.id for r in store.list_runs(label="before-fw")] == [1] and store.list_runs(label="before") == []
    assert _user_version(data) == SCHEMA_VERSION == 4
    conn = sqlite3.connect(store_path(data))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    columns = [row[1] for row in conn.execute("PRAGMA table_info(runs)")]
    assert columns[-2:] == ["label", "note"]
    conn.close()


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
