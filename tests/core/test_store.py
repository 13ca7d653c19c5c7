"""The run store on real SQLite files, and the data-dir rules."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.paths import resolve_data_dir, store_path
from racperf_tui.core.store import SCHEMA_VERSION, GroupNotFound, RunNotFound, Store, StoreError
from tests.helpers import REPO


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store.open(tmp_path / "data") as s:
        yield s


def test_data_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RACPERF_DATA_DIR", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert resolve_data_dir() == tmp_path / "home/.local/share/racperf"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert resolve_data_dir() == tmp_path / "xdg/racperf"
    monkeypatch.setenv("RACPERF_DATA_DIR", str(tmp_path / "env"))
    assert resolve_data_dir() == tmp_path / "env"
    assert resolve_data_dir(str(tmp_path / "flag")) == tmp_path / "flag"
    for name in ("home/.local/share/racperf", "xdg/racperf", "env", "flag"):
        assert (tmp_path / name).is_dir(), f"{name} was not created"


def test_data_dir_that_cannot_be_created_says_where(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError, match="cannot create the racperf data directory .*file/sub"):
        resolve_data_dir(tmp_path / "file" / "sub")


def test_wal_mode_and_busy_timeout(store: Store) -> None:
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert store._conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_run_life_cycle(store: Store) -> None:
    run_id = store.create_run(
        "fio", "local", "/tmp/f", {"bs": "8k", "path": Path("/x")}, ["fio", "--bs=8k"], "fio-3.33"
    )
    run = store.get_run(run_id)
    assert (run.tool, run.host, run.target, run.state) == ("fio", "local", "/tmp/f", RunState.PENDING)
    assert run.config == {"bs": "8k", "path": "/x"} and run.argv == ["fio", "--bs=8k"]
    assert run.tool_version == "fio-3.33" and run.ended_at is None
    store.set_state(run_id, RunState.RUNNING)
    store.set_state(run_id, RunState.SUCCEEDED, exit_status=0, message="ok")
    run = store.get_run(run_id)
    assert run.state is RunState.SUCCEEDED and run.exit_status == 0 and run.message == "ok"
    assert run.ended_at is not None and run.ended_at >= run.started_at
    store.set_result(run_id, {"jobs": [{"read": {"iops": 1000.5}}]})
    assert store.result(run_id) == {"jobs": [{"read": {"iops": 1000.5}}]}
    with pytest.raises(RunNotFound):
        store.get_run(run_id + 100)
    with pytest.raises(RunNotFound):
        store.set_state(run_id + 100, RunState.FAILED)


def test_samples_in_order_and_incremental(store: Store) -> None:
    run_id = store.create_run("fio", "local", None, {}, [], None)
    other = store.create_run("fio", "local", None, {}, [], None)
    seqs = [
        store.add_sample(run_id, Sample(t=i * 0.5, metrics={"read_iops": 100.0 + i}, extra={"i": i})) for i in range(5)
    ]
    store.add_sample(other, Sample(t=0.0, metrics={"x": 1.0}))
    assert seqs == [1, 2, 3, 4, 5]
    assert [seq for seq, _ in store.samples(run_id)] == [1, 2, 3, 4, 5]
    assert [(seq, s.metrics["read_iops"], s.extra["i"]) for seq, s in store.samples(run_id, after_seq=3)] == [
        (4, 103.0, 3),
        (5, 104.0, 4),
    ]
    assert store.samples(run_id, after_seq=5) == []
    assert store.sample_count(run_id) == 5 and store.sample_count(other) == 1
    nan_seq = store.add_sample(run_id, Sample(t=3.0, metrics={"read_iops": float("nan")}))
    assert store.samples(run_id, nan_seq - 1)[0][1].metrics == {"read_iops": None}


def test_raw_output_per_stream(store: Store) -> None:
    run_id = store.create_run("fio", "local", None, {}, [], None)
    store.add_raw(run_id, "line 1\n")
    store.add_raw(run_id, "oops\n", "stderr")
    store.add_raw(run_id, "line 2\n")
    store.add_raw(run_id, "")
    assert store.raw_output(run_id) == "line 1\nline 2\n"
    assert store.raw_output(run_id, "stderr") == "oops\n"
    assert store.raw_output(run_id, None) == "line 1\noops\nline 2\n"


def test_list_runs_newest_first_with_limit(store: Store) -> None:
    ids = [store.create_run(f"t{i}", "local", None, {}, [], None) for i in range(4)]
    assert [r.id for r in store.list_runs()] == ids[::-1]
    assert [r.id for r in store.list_runs(limit=2)] == ids[:1:-1]


def test_interrupted_detection(store: Store) -> None:
    """A dead pid, a live pid whose start time does not match (reused), a live supervisor,
    a fresh PENDING run without supervisor, and a stale one."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    vanished = store.create_run("a", "local", None, {}, [], None)
    store.set_state(vanished, RunState.RUNNING)
    store.set_supervisor_pid(vanished, dead.pid, started_at=time.time())
    reused = store.create_run("b", "local", None, {}, [], None)
    store.set_state(reused, RunState.RUNNING)
    store.set_supervisor_pid(reused, os.getpid(), started_at=time.time() - 3600)
    alive = store.create_run("c", "local", None, {}, [], None)
    store.set_state(alive, RunState.RUNNING)
    store.set_supervisor_pid(alive, os.getpid())
    fresh_pending = store.create_run("d", "local", None, {}, [], None)
    stale_pending = store.create_run("e", "local", None, {}, [], None)
    store._conn.execute("UPDATE runs SET started_at = started_at - 3600 WHERE id = ?", (stale_pending,))
    finished = store.create_run("f", "local", None, {}, [], None)
    store.set_supervisor_pid(finished, dead.pid)
    store.set_state(finished, RunState.SUCCEEDED, exit_status=0)

    assert sorted(store.mark_interrupted_runs()) == sorted([vanished, reused, stale_pending])
    states = {r.id: r.state for r in store.list_runs()}
    assert states == {
        vanished: RunState.INTERRUPTED,
        reused: RunState.INTERRUPTED,
        alive: RunState.RUNNING,
        fresh_pending: RunState.PENDING,
        stale_pending: RunState.INTERRUPTED,
        finished: RunState.SUCCEEDED,
    }
    assert f"pid {dead.pid}" in store.get_run(vanished).message
    assert store.mark_interrupted_runs() == []


def test_reader_polls_while_a_writer_commits(tmp_path: Path) -> None:
    """WAL: a reader in another connection sees each committed sample and is never locked out."""
    data = tmp_path / "data"
    writer = Store.open(data)
    reader = Store.open(data)
    run_id = writer.create_run("fio", "local", None, {}, [], None)
    total = 300
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for i in range(total):
                writer.add_sample(run_id, Sample(t=float(i), metrics={"v": float(i)}))
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    seen: list[int] = []
    deadline = time.monotonic() + 20
    while len(seen) < total and time.monotonic() < deadline:
        seen += [seq for seq, _ in reader.samples(run_id, seen[-1] if seen else 0)]
    thread.join()
    assert not errors
    assert seen == list(range(1, total + 1))
    writer.close()
    reader.close()


KILLED_WRITER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
import os
store = Store.open(Path(sys.argv[2]))
run_id = store.create_run("fio", "local", None, {}, ["fio"], None)
store.set_supervisor_pid(run_id, os.getpid())
store.set_state(run_id, RunState.RUNNING)
i = 0
while True:
    i += 1
    store.add_sample(run_id, Sample(t=i * 0.001, metrics={"read_iops": float(i)}))
    store.add_raw(run_id, f"line {i}\n")
    print(i, flush=True)
"""


def test_store_survives_kill_9_mid_run(tmp_path: Path) -> None:
    """kill -9 while samples stream in: every sample reported committed is readable, at most
    the one in flight is lost, and the run is marked interrupted on the next open."""
    data = tmp_path / "data"
    repo = str(REPO)
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, repo, str(data)], stdout=subprocess.PIPE, text=True)
    try:
        last_committed = 0
        while last_committed < 200:
            last_committed = int(writer.stdout.readline())
        writer.kill()
        writer.wait()
        last_committed = max([last_committed, *(int(x) for x in writer.stdout.read().split())])
    finally:
        writer.kill()
        writer.wait()
    with Store.open(data) as store:
        assert store.mark_interrupted_runs() == [1]
        run = store.get_run(1)
        assert run.state is RunState.INTERRUPTED and run.ended_at is not None
        samples = store.samples(1)
        count = len(samples)
        assert last_committed <= count <= last_committed + 1, (last_committed, count)
        assert [s.metrics["read_iops"] for _, s in samples] == [float(i) for i in range(1, count + 1)]
        assert store.raw_output(1).startswith("line 1\nline 2\n")
    # the file is sane for plain sqlite too
    conn = sqlite3.connect(store_path(data))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_newer_schema_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    data = tmp_path / "data"
    Store.open(data).close()
    conn = sqlite3.connect(store_path(data))
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 99 is newer"):
        Store.open(data)


def test_concurrent_first_opens_of_a_new_store(tmp_path: Path) -> None:
    """The UI and a supervisor may create the store at the same moment: the switch to WAL
    must not fail one of them with 'database is locked' (it did, without the open lock)."""
    errors: list[str] = []

    def open_and_write(data: Path) -> None:
        try:
            with Store.open(data) as s:
                run_id = s.create_run("x", "local", None, {}, [], None)
                s.add_sample(run_id, Sample(t=0.0, metrics={"v": 1.0}))
        except Exception as exc:  # collected: the assertion names them
            errors.append(repr(exc))

    for trial in range(40):
        data = tmp_path / f"d{trial}"
        threads = [threading.Thread(target=open_and_write, args=(data,)) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


#: the schema of racperf's first store (version 1), as that racperf wrote it
_SCHEMA_1 = """
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
PRAGMA user_version = 1;
"""


def _version_1_store(data: Path) -> None:
    data.mkdir(parents=True)
    conn = sqlite3.connect(store_path(data))
    conn.executescript(_SCHEMA_1)
    conn.execute(
        "INSERT INTO runs (tool, host, target, config, argv, started_at, ended_at, state) VALUES "
        "('fio', 'rac1', '/u02/x', '{}', '[]', 100.0, 160.0, 'succeeded')"
    )
    conn.execute("INSERT INTO samples VALUES (1, 1, 1.0, '{\"read_iops\": 5.0}', NULL)")
    conn.commit()
    conn.close()


def test_a_version_1_store_is_read_as_it_is_and_migrated_on_the_first_write_open(tmp_path: Path) -> None:
    """An older racperf's store: a read-only open reads its runs (no groups); the first
    writable open adds the run groups (schema 2) and their results (schema 3) and keeps every
    run and sample."""
    data = tmp_path / "data"
    _version_1_store(data)
    with Store.open(data, read_only=True) as old:
        (run,) = old.list_runs()
        assert (run.id, run.host, run.group_id) == (1, "rac1", None)
        assert old.list_groups() == [] and old.group_runs(1) == []
    conn = sqlite3.connect(store_path(data))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1  # the read changed nothing
    conn.close()
    with Store.open(data) as store:
        (run,) = store.list_runs()
        assert (run.tool, run.target, run.state, run.group_id) == ("fio", "/u02/x", RunState.SUCCEEDED, None)
        assert [s.metrics for _, s in store.samples(1)] == [{"read_iops": 5.0}]
        group = store.create_group("fio", {"rw": "read"}, ["rac1", "rac2"])
        ids = [store.create_run("fio", name, None, {}, [], None, group_id=group) for name in ("rac1", "rac2")]
        store.set_group_message(group, "started on rac1, rac2")
        assert [r.id for r in store.group_runs(group)] == ids
        assert store.get_run(ids[0]).group_id == group and store.get_run(ids[0]).to_json()["group_id"] == group
        record = store.get_group(group)
        assert (record.tool, record.config, record.nodes, record.message) == (
            "fio",
            {"rw": "read"},
            ["rac1", "rac2"],
            "started on rac1, rac2",
        )
        assert [g.id for g in store.list_groups()] == [group]
        assert store.group_result(group) is None  # schema 3: a group's own result, none yet
        store.set_group_result(group, {"knee": {"iodepth": 4, "iops": 2000.0}})
        assert store.group_result(group) == {"knee": {"iodepth": 4, "iops": 2000.0}}
    conn = sqlite3.connect(store_path(data))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


#: the schema of a version-3 store, as racperf wrote it (version 1, then run groups, then their results)
_SCHEMA_3 = (
    _SCHEMA_1.replace("PRAGMA user_version = 1;", "")
    + """
CREATE TABLE run_groups (id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, config TEXT NOT NULL,
    nodes TEXT NOT NULL, created_at REAL NOT NULL, message TEXT, result TEXT);
ALTER TABLE runs ADD COLUMN group_id INTEGER REFERENCES run_groups(id);
CREATE INDEX runs_group ON runs(group_id);
PRAGMA user_version = 3;
"""
)


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


def test_an_unknown_group_is_named(store: Store) -> None:
    with pytest.raises(GroupNotFound):
        store.get_group(7)
    with pytest.raises(GroupNotFound):
        store.set_group_message(7, "x")
    with pytest.raises(GroupNotFound):
        store.set_group_result(7, {})
    with pytest.raises(GroupNotFound):
        store.group_result(7)
    assert store.group_runs(7) == []
