"""The run store: SQLite in WAL mode, the source of truth for every run.

One writer process per run (its supervisor) and any number of readers (the UI, ``racperf
runs``) share one file. Every sample is committed as it arrives, so a kill -9 of the writer
loses at most the sample in flight; a run whose supervisor vanished is marked
``INTERRUPTED`` by :meth:`Store.mark_interrupted_runs`, which every reader calls on open.

Tables: ``runs`` (one row per run), ``samples`` (time series, ``seq`` 1, 2, ... per run),
``raw_output`` (the tool's output in chunks, per stream), ``results`` (parsed result JSON),
``run_groups`` (one tool and config on several nodes: the runs of a group name it in their
``group_id``; schema 2; a group's own result, e.g. a sweep's knee: schema 3). A run's label
and note, the DBA's words on it (schema 4). Times are Unix epoch seconds (float).

Migrations: a store is brought up to :data:`SCHEMA_VERSION` one step at a time on the first
writable open (``_MIGRATIONS``: what each version adds, additive only, so an older racperf's
runs are kept as they are); a read-only open reads a store of any older version as it is.
"""

from __future__ import annotations

import fcntl
import functools
import json
import math
import os
import sqlite3
import stat
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.paths import store_path

SCHEMA_VERSION = 4

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool TEXT NOT NULL,
    host TEXT NOT NULL,
    target TEXT,
    config TEXT NOT NULL,
    argv TEXT NOT NULL,
    tool_version TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    state TEXT NOT NULL,
    exit_status INTEGER,
    message TEXT,
    supervisor_pid INTEGER,
    supervisor_started_at REAL,
    benchmark_pgid INTEGER
);
CREATE TABLE IF NOT EXISTS samples (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    t REAL NOT NULL,
    metrics TEXT NOT NULL,
    extra TEXT,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS raw_output (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    stream TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS raw_output_run ON raw_output(run_id, id);
CREATE TABLE IF NOT EXISTS results (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    result TEXT NOT NULL
);
"""

#: what each schema version adds to the one before (version 1 is ``_SCHEMA``)
_MIGRATIONS: dict[int, str] = {
    2: """
CREATE TABLE IF NOT EXISTS run_groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool TEXT NOT NULL,
    config TEXT NOT NULL,
    nodes TEXT NOT NULL,
    created_at REAL NOT NULL,
    message TEXT
);
ALTER TABLE runs ADD COLUMN group_id INTEGER REFERENCES run_groups(id);
CREATE INDEX IF NOT EXISTS runs_group ON runs(group_id);
""",
    3: """
ALTER TABLE run_groups ADD COLUMN result TEXT;
""",
    4: """
ALTER TABLE runs ADD COLUMN label TEXT;
ALTER TABLE runs ADD COLUMN note TEXT;
CREATE INDEX IF NOT EXISTS runs_label ON runs(label);
""",
}

#: a PENDING run with no supervisor recorded after this long never got one
_PENDING_TIMEOUT_S = 60.0
#: psutil's create_time and ours are both rounded; a reused pid differs by far more
_CREATE_TIME_TOLERANCE_S = 1.0


class RunNotFound(KeyError):
    """No run with that id in the store."""


class GroupNotFound(KeyError):
    """No run group with that id in the store."""


class StoreError(RuntimeError):
    """The store file cannot be used (not a database, damaged, unreadable, newer schema, a
    read-only data dir for a writer); the message names the file and what to do."""


class NoStore(StoreError):
    """A read-only open found no run store (nothing was recorded in that data dir)."""


def damaged_store_text(path: Path, exc: BaseException) -> str:
    """What to say about a store SQLite cannot read (and that racperf never overwrites)."""
    return (
        f"cannot use the run store {path}: {exc}; nothing was changed: keep a copy of it, "
        f"move it aside and racperf starts a new store, or use --data-dir DIR elsewhere "
        f"('sqlite3 FILE .recover' may salvage its runs)"
    )


_F = TypeVar("_F", bound=Callable[..., Any])


def _store_errors(method: _F) -> _F:
    """SQLite's errors on a damaged or unusable file -> StoreError naming the file and what to
    do (a command prints one line, never a sqlite3 traceback). A busy or locked database is
    not damage: it stays an OperationalError for the caller's retry logic."""

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            raise StoreError(f"cannot use the run store {self.path}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(damaged_store_text(self.path, exc)) from exc

    return wrapper  # type: ignore[return-value]


def _check_is_file(path: Path) -> None:
    """A directory (or fifo, device) where the store file belongs: say so, touch nothing."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot use the run store {path}: {exc.strerror}") from exc
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise StoreError(f"the run store {path} is {kind}: move it aside, or use --data-dir DIR elsewhere")


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One row of ``runs``, decoded. Times are Unix epoch seconds."""

    id: int
    tool: str
    host: str
    target: str | None
    config: dict[str, Any]
    argv: list[str]
    tool_version: str | None
    started_at: float
    ended_at: float | None
    state: RunState
    exit_status: int | None
    message: str | None
    supervisor_pid: int | None
    supervisor_started_at: float | None = None
    benchmark_pgid: int | None = None
    #: the run group this run is one node's run of (None: a run of its own)
    group_id: int | None = None
    #: the DBA's short name for the run ("before-firmware"), and a note on it (schema 4)
    label: str | None = None
    note: str | None = None

    @property
    def duration_s(self) -> float:
        """Seconds from start to end (to now while the run is unfinished)."""
        end = self.ended_at if self.ended_at is not None else time.time()
        return max(0.0, end - self.started_at)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (state as its string value)."""
        return {
            "id": self.id,
            "tool": self.tool,
            "host": self.host,
            "target": self.target,
            "config": self.config,
            "argv": self.argv,
            "tool_version": self.tool_version,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "state": self.state.value,
            "exit_status": self.exit_status,
            "message": self.message,
            "supervisor_pid": self.supervisor_pid,
            "group_id": self.group_id,
            "label": self.label,
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class GroupRecord:
    """One row of ``run_groups``: a tool and its config started on several nodes at once.
    ``nodes`` are the node names asked for, in order; ``message`` says what happened at the
    start (a node that could not be reached and why, the start skew)."""

    id: int
    tool: str
    config: dict[str, Any]
    nodes: list[str]
    created_at: float
    message: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool,
            "config": self.config,
            "nodes": self.nodes,
            "created_at": self.created_at,
            "message": self.message,
        }


def _json_default(value: Any) -> Any:
    """Configs may carry Paths or sets; store them as plain JSON."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "value"):  # enums
        return value.value
    raise TypeError(f"cannot store {type(value).__name__} as JSON: {value!r}")


def _dumps(value: Any) -> str:
    return json.dumps(value, default=_json_default, separators=(",", ":"))


def _finite_metrics(metrics: dict[str, Any]) -> dict[str, float | None]:
    """JSON has no NaN/inf; store them as null rather than invalid JSON."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in metrics.items()}


class Store:
    """A connection to the run store. Thread-safe (one lock per connection).

    Use :meth:`open`; ``Store`` also works as a context manager (closes on exit).
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._lock = threading.RLock()
        #: opened with read_only=True: nothing is written (not even interrupted marks)
        self.read_only = False
        #: opened immutable (the directory is not writable): the -wal file is not read
        self.immutable = False
        #: the file's schema version (older than SCHEMA_VERSION only in a read-only open)
        self.schema_version = SCHEMA_VERSION

    # ---- life cycle -------------------------------------------------------------------------
    @classmethod
    def open(cls, data_dir: Path, *, timeout_s: float = 30.0, read_only: bool = False) -> Store:
        """Open (creating if needed) ``runs.sqlite3`` in ``data_dir``: WAL journal, a busy
        timeout of ``timeout_s`` so a reader never fails on a writer's lock, foreign keys on.

        ``read_only``: never create or change anything (``racperf runs`` list/show/export):
        :class:`NoStore` when there is no store; a store in a directory this process cannot
        write (a read-only mount, a copy from another node) is opened immutable."""
        data_dir = Path(data_dir)
        path = store_path(data_dir)
        _check_is_file(path)
        if read_only:
            return cls._open_read_only(path, timeout_s)
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
            # Two processes opening a new store at once (the UI and a supervisor) race on the
            # switch to WAL, which takes no busy-timeout ("database is locked", even "disk I/O
            # error"): serialise the set-up part of open() with a lock file.
            lock_fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot write the run store in {data_dir}: {exc.strerror} (a read-only data dir "
                f"can still be read with 'racperf runs'; to record runs, use --data-dir DIR on "
                f"a writable disk)"
            ) from exc
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            conn = sqlite3.connect(str(path), timeout=timeout_s, isolation_level=None, check_same_thread=False)
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
                conn.execute("SELECT count(*) FROM sqlite_master")  # fails early on a non-database
                # WAL lets readers proceed while the supervisor writes (it is a property of the
                # file: set once). synchronous=NORMAL keeps every commit durable against a
                # process kill; only a power loss can lose the last commits.
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA foreign_keys = ON")
                store = cls(path, conn)
                store._migrate()
            except sqlite3.OperationalError as exc:
                conn.close()
                raise StoreError(f"cannot use the run store {path}: {exc}") from exc
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise StoreError(damaged_store_text(path, exc)) from exc
            except BaseException:
                conn.close()
                raise
        finally:
            os.close(lock_fd)  # releases the flock
        return store

    @classmethod
    def _open_read_only(cls, path: Path, timeout_s: float) -> Store:
        if not path.exists():
            raise NoStore(f"no run store in {path.parent} (no runs recorded there)")
        uri = "file:" + urllib.parse.quote(str(path))
        writable_dir = os.access(path.parent, os.W_OK | os.X_OK)
        # mode=ro still needs the -shm file of a WAL store (created when missing): in a
        # directory we cannot write, only immutable=1 reads it, and then it ignores the -wal
        # file, whose commits (if any are left un-checkpointed) are not seen
        attempts = [uri + "?mode=ro"] + ([] if writable_dir else [uri + "?immutable=1"])
        problem: sqlite3.Error | None = None
        for attempt in attempts:
            conn = sqlite3.connect(attempt, uri=True, timeout=timeout_s, isolation_level=None, check_same_thread=False)
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError as exc:
                conn.close()
                problem = exc
                continue
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise StoreError(damaged_store_text(path, exc)) from exc
            store = cls(path, conn)
            store.read_only = True
            store.immutable = attempt.endswith("immutable=1")
            if version > SCHEMA_VERSION:
                conn.close()
                raise StoreError(
                    f"{path}: store schema version {version} is newer than this racperf "
                    f"understands ({SCHEMA_VERSION}); upgrade racperf or use another --data-dir"
                )
            if version < 1:
                conn.close()
                raise NoStore(f"the run store {path} is empty (no runs recorded there)")
            store.schema_version = version
            return store
        raise StoreError(f"cannot read the run store {path}: {problem}")

    @property
    def unseen_wal(self) -> Path | None:
        """The -wal file an immutable open could not read (its last commits), if it has any."""
        wal = Path(str(self.path) + "-wal")
        try:
            return wal if self.immutable and wal.stat().st_size > 0 else None
        except OSError:
            return None

    def _migrate(self) -> None:
        with self._lock:
            version = self._conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: store schema version {version} is newer than this racperf "
                    f"understands ({SCHEMA_VERSION}); upgrade racperf or use another --data-dir"
                )
            if version < SCHEMA_VERSION:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    # statements one by one: executescript() would commit the open transaction
                    steps = [_SCHEMA] if version < 1 else []
                    steps += [_MIGRATIONS[v] for v in range(max(version, 1) + 1, SCHEMA_VERSION + 1)]
                    for step in steps:
                        for statement in step.split(";"):
                            if statement.strip():
                                self._conn.execute(statement)
                    self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.ProgrammingError:
                pass

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """One statement in its own (autocommit) transaction: durable when this returns."""
        with self._lock:
            return self._conn.execute(sql, params)

    @_store_errors
    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: changes whenever another connection commits, so a
        live view polling every 50 ms can skip its queries while nothing was written."""
        with self._lock:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    # ---- writing (the supervisor) -----------------------------------------------------------
    @_store_errors
    def create_run(
        self,
        tool: str,
        host: str,
        target: str | None,
        config: dict[str, Any],
        argv: list[str],
        tool_version: str | None,
        group_id: int | None = None,
    ) -> int:
        """Record a new run in state PENDING, started now; returns its id. ``group_id``: the
        run group it is one node's run of."""
        cur = self._write(
            "INSERT INTO runs (tool, host, target, config, argv, tool_version, started_at, state, group_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                tool,
                host,
                target,
                _dumps(dict(config)),
                _dumps(list(argv)),
                tool_version,
                time.time(),
                RunState.PENDING.value,
                group_id,
            ),
        )
        assert cur.lastrowid is not None  # an INSERT always has one
        return int(cur.lastrowid)

    @_store_errors
    def create_group(self, tool: str, config: dict[str, Any], nodes: list[str]) -> int:
        """Record a run group (``tool`` and ``config`` on the ``nodes`` named); returns its id.
        Its runs are recorded with :meth:`create_run` (``group_id``)."""
        cur = self._write(
            "INSERT INTO run_groups (tool, config, nodes, created_at) VALUES (?, ?, ?, ?)",
            (tool, _dumps(dict(config)), _dumps(list(nodes)), time.time()),
        )
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    @_store_errors
    def set_group_message(self, group_id: int, message: str) -> None:
        """What the group's start said (unreachable nodes and why, the start skew)."""
        cur = self._write("UPDATE run_groups SET message = ? WHERE id = ?", (message, group_id))
        if cur.rowcount == 0:
            raise GroupNotFound(group_id)

    @_store_errors
    def set_group_result(self, group_id: int, result: dict[str, Any]) -> None:
        """What the group as a whole found (a sweep: its curves, the knee, the best point
        under the latency ceiling), beside each run's own result."""
        cur = self._write("UPDATE run_groups SET result = ? WHERE id = ?", (_dumps(dict(result)), group_id))
        if cur.rowcount == 0:
            raise GroupNotFound(group_id)

    @_store_errors
    def set_state(
        self,
        run_id: int,
        state: RunState,
        exit_status: int | None = None,
        message: str | None = None,
    ) -> None:
        """Move a run to ``state``. Finishing states set ``ended_at``; exit status and message
        are only overwritten when given. RUNNING restarts the clock (``started_at`` = now)."""
        state = RunState(state)
        now = time.time()
        with self._lock:
            if state is RunState.RUNNING:
                sql = "UPDATE runs SET state = ?, started_at = ?"
                params: list[Any] = [state.value, now]
            elif state.finished:
                sql = "UPDATE runs SET state = ?, ended_at = ?"
                params = [state.value, now]
            else:
                sql = "UPDATE runs SET state = ?"
                params = [state.value]
            if exit_status is not None:
                sql += ", exit_status = ?"
                params.append(int(exit_status))
            if message is not None:
                sql += ", message = ?"
                params.append(message)
            cur = self._conn.execute(sql + " WHERE id = ?", (*params, run_id))
            if cur.rowcount == 0:
                raise RunNotFound(run_id)

    @_store_errors
    def set_argv(self, run_id: int, argv: list[str], tool_version: str | None) -> None:
        """Record the exact command line and the tool's version (known once the tool loads)."""
        self._write(
            "UPDATE runs SET argv = ?, tool_version = ? WHERE id = ?", (_dumps(list(argv)), tool_version, run_id)
        )

    @_store_errors
    def set_supervisor_pid(self, run_id: int, pid: int, started_at: float | None = None) -> None:
        """Record the supervisor's pid and its process start time (epoch s; guards against a
        reused pid). ``started_at`` None: read it from /proc via psutil."""
        if started_at is None:
            started_at = process_create_time(pid)
        self._write(
            "UPDATE runs SET supervisor_pid = ?, supervisor_started_at = ? WHERE id = ?", (pid, started_at, run_id)
        )

    @_store_errors
    def set_benchmark_pgid(self, run_id: int, pgid: int | None) -> None:
        """Record the benchmark's process group (so a stop can reach it without its supervisor)."""
        self._write("UPDATE runs SET benchmark_pgid = ? WHERE id = ?", (pgid, run_id))

    @_store_errors
    def add_sample(self, run_id: int, sample: Sample) -> int:
        """Append one sample, committed before returning; returns its ``seq`` (1, 2, ...)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                row = self._conn.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM samples WHERE run_id = ?", (run_id,)
                ).fetchone()
                seq = int(row[0])
                self._conn.execute(
                    "INSERT INTO samples (run_id, seq, t, metrics, extra) VALUES (?, ?, ?, ?, ?)",
                    (
                        run_id,
                        seq,
                        float(sample.t),
                        _dumps(_finite_metrics(sample.metrics)),
                        _dumps(sample.extra) if sample.extra else None,
                    ),
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return seq

    @_store_errors
    def add_raw(self, run_id: int, text_chunk: str, stream: str = "stdout") -> None:
        """Append a chunk of the tool's raw output (``stream``: 'stdout' or 'stderr')."""
        if text_chunk:
            self._write("INSERT INTO raw_output (run_id, stream, data) VALUES (?, ?, ?)", (run_id, stream, text_chunk))

    @_store_errors
    def set_result(self, run_id: int, result: dict[str, Any]) -> None:
        """Store (or replace) the parsed result of a run."""
        self._write("INSERT OR REPLACE INTO results (run_id, result) VALUES (?, ?)", (run_id, _dumps(result)))

    @_store_errors
    def set_label(self, run_id: int, label: str | None) -> None:
        """The run's label (None: none); the caller vets the text (core/run_labels.py)."""
        self._set_words(run_id, "label", label)

    @_store_errors
    def set_note(self, run_id: int, note: str | None) -> None:
        """The run's note (None: none); the caller vets the text (core/run_labels.py)."""
        self._set_words(run_id, "note", note)

    def _set_words(self, run_id: int, column: str, text: str | None) -> None:
        cur = self._write(f"UPDATE runs SET {column} = ? WHERE id = ?", (text, run_id))
        if cur.rowcount == 0:
            raise RunNotFound(run_id)

    @_store_errors
    def delete_run(self, run_id: int) -> None:
        """Delete the run's record, samples, raw output and result in one transaction (its
        run directory is the caller's: orchestration/run_deletion.py). A group keeps its other
        runs."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for table in ("samples", "raw_output", "results"):
                    self._conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
                cur = self._conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
                if cur.rowcount == 0:
                    raise RunNotFound(run_id)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    # ---- reading ---------------------------------------------------------------------------
    @_store_errors
    def list_runs(self, limit: int | None = None, label: str | None = None) -> list[RunRecord]:
        """Runs, newest first (at most ``limit``; only those labelled ``label`` when given)."""
        sql = "SELECT * FROM runs"
        params: tuple[Any, ...] = ()
        if label is not None:
            if self.schema_version < 4:
                return []
            sql += " WHERE label = ?"
            params = (label,)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params = (*params, int(limit))
        with self._lock:
            cur = self._conn.execute(sql, params)
            return [_record(cur.description, row) for row in cur.fetchall()]

    @_store_errors
    def get_run(self, run_id: int) -> RunRecord:
        """One run; :class:`RunNotFound` (a KeyError) if there is none with that id."""
        with self._lock:
            cur = self._conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,))
            row = cur.fetchone()
            if row is None:
                raise RunNotFound(run_id)
            return _record(cur.description, row)

    @_store_errors
    def peer_client(self, server_run_id: int) -> RunRecord | None:
        """The client run of a pair whose config's ``peer_run_id`` names ``server_run_id``
        (orchestration/pair_runs launches it after its server: only later runs are read, and
        only those whose config has the key), None when no run does."""
        with self._lock:
            cur = self._conn.execute(
                # LIKE's "_" matches any character: a wider net, the config decides
                """SELECT * FROM runs WHERE id > ? AND config LIKE '%"peer_run_id"%' ORDER BY id""",
                (int(server_run_id),),
            )
            for row in cur:
                record = _record(cur.description, row)
                if record.config.get("peer_run_id") == server_run_id:
                    return record
        return None

    @_store_errors
    def samples(self, run_id: int, after_seq: int = 0) -> list[tuple[int, Sample]]:
        """Samples with ``seq > after_seq`` in order, as (seq, Sample). Poll with the last seq
        seen to get only new ones (an index range scan: cheap at any run length)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT seq, t, metrics, extra FROM samples WHERE run_id = ? AND seq > ? ORDER BY seq",
                (run_id, int(after_seq)),
            ).fetchall()
        return [
            (seq, Sample(t=t, metrics=json.loads(metrics), extra=json.loads(extra) if extra else {}))
            for seq, t, metrics, extra in rows
        ]

    @_store_errors
    def last_sample(self, run_id: int) -> tuple[int, Sample] | None:
        """The run's newest sample as (seq, Sample), None before its first."""
        with self._lock:
            row = self._conn.execute(
                "SELECT seq, t, metrics, extra FROM samples WHERE run_id = ? ORDER BY seq DESC LIMIT 1", (run_id,)
            ).fetchone()
        if row is None:
            return None
        seq, t, metrics, extra = row
        return seq, Sample(t=t, metrics=json.loads(metrics), extra=json.loads(extra) if extra else {})

    @_store_errors
    def sample_count(self, run_id: int) -> int:
        """How many samples a run has."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM samples WHERE run_id = ?", (run_id,)).fetchone()[0])

    @_store_errors
    def raw_output(self, run_id: int, stream: str | None = "stdout") -> str:
        """The run's raw output so far for ``stream`` (None: all streams, in arrival order)."""
        with self._lock:
            if stream is None:
                rows = self._conn.execute(
                    "SELECT data FROM raw_output WHERE run_id = ? ORDER BY id", (run_id,)
                ).fetchall()
            else:
                rows = self._conn.execute(
                    "SELECT data FROM raw_output WHERE run_id = ? AND stream = ? ORDER BY id", (run_id, stream)
                ).fetchall()
        return "".join(row[0] for row in rows)

    @_store_errors
    def raw_streams(self, run_id: int) -> list[str]:
        """The names of the run's raw output streams, in the order they first arrived."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT stream FROM raw_output WHERE run_id = ? GROUP BY stream ORDER BY MIN(id)", (run_id,)
            ).fetchall()
        return [row[0] for row in rows]

    @_store_errors
    def result(self, run_id: int) -> dict[str, Any] | None:
        """The parsed result, or None when the run has none (yet)."""
        with self._lock:
            row = self._conn.execute("SELECT result FROM results WHERE run_id = ?", (run_id,)).fetchone()
        return json.loads(row[0]) if row else None

    @_store_errors
    def get_group(self, group_id: int) -> GroupRecord:
        """One run group; :class:`GroupNotFound` (a KeyError) when there is none (also in a
        store older than run groups)."""
        if self.schema_version < 2:
            raise GroupNotFound(group_id)
        with self._lock:
            row = self._conn.execute(
                "SELECT id, tool, config, nodes, created_at, message FROM run_groups WHERE id = ?", (group_id,)
            ).fetchone()
        if row is None:
            raise GroupNotFound(group_id)
        return _group(row)

    @_store_errors
    def group_result(self, group_id: int) -> dict[str, Any] | None:
        """The group's own result (:meth:`set_group_result`); None when none was recorded (a
        store older than group results has none)."""
        if self.schema_version < 3:
            self.get_group(group_id)  # GroupNotFound when there is no such group
            return None
        with self._lock:
            row = self._conn.execute("SELECT result FROM run_groups WHERE id = ?", (group_id,)).fetchone()
        if row is None:
            raise GroupNotFound(group_id)
        return json.loads(row[0]) if row[0] else None

    @_store_errors
    def list_groups(self, limit: int | None = None) -> list[GroupRecord]:
        """Run groups, newest first (at most ``limit``)."""
        if self.schema_version < 2:
            return []
        sql = "SELECT id, tool, config, nodes, created_at, message FROM run_groups ORDER BY id DESC"
        params: tuple[Any, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (int(limit),)
        with self._lock:
            return [_group(row) for row in self._conn.execute(sql, params).fetchall()]

    @_store_errors
    def group_runs(self, group_id: int) -> list[RunRecord]:
        """The runs of a group, in the order they were recorded (oldest first)."""
        if self.schema_version < 2:
            return []
        with self._lock:
            cur = self._conn.execute("SELECT * FROM runs WHERE group_id = ? ORDER BY id", (group_id,))
            return [_record(cur.description, row) for row in cur.fetchall()]

    @_store_errors
    def unfinished_runs(self) -> list[RunRecord]:
        """Runs in PENDING or RUNNING state, oldest first."""
        with self._lock:
            cur = self._conn.execute(
                "SELECT * FROM runs WHERE state IN (?, ?) ORDER BY id", (RunState.PENDING.value, RunState.RUNNING.value)
            )
            return [_record(cur.description, row) for row in cur.fetchall()]

    @_store_errors
    def mark_interrupted_runs(self) -> list[int]:
        """Mark INTERRUPTED every PENDING/RUNNING run whose supervisor is gone (no such pid, a
        zombie, or a pid reused by a younger process), and every PENDING run that got no
        supervisor within a minute. Returns the ids marked. Call on every open (a read-only
        store marks nothing: the runs' states are shown as recorded)."""
        marked: list[int] = []
        if self.read_only:
            return marked
        now = time.time()
        for run in self.unfinished_runs():
            if run.supervisor_pid is None:
                if now - run.started_at < _PENDING_TIMEOUT_S:
                    continue
                why = "its supervisor never started"
            elif supervisor_alive(run.supervisor_pid, run.supervisor_started_at):
                continue
            else:
                why = f"its supervisor (pid {run.supervisor_pid}) vanished"
            with self._lock:
                cur = self._conn.execute(
                    "UPDATE runs SET state = ?, ended_at = ?, message = ? WHERE id = ? AND state IN (?, ?)",
                    (
                        RunState.INTERRUPTED.value,
                        now,
                        f"interrupted: {why}",
                        run.id,
                        RunState.PENDING.value,
                        RunState.RUNNING.value,
                    ),
                )
            if cur.rowcount:
                marked.append(run.id)
        return marked


def _record(description: Any, row: tuple[Any, ...]) -> RunRecord:
    data = {d[0]: v for d, v in zip(description, row)}
    return RunRecord(
        id=data["id"],
        tool=data["tool"],
        host=data["host"],
        target=data["target"],
        config=json.loads(data["config"]),
        argv=json.loads(data["argv"]),
        tool_version=data["tool_version"],
        started_at=data["started_at"],
        ended_at=data["ended_at"],
        state=RunState(data["state"]),
        exit_status=data["exit_status"],
        message=data["message"],
        supervisor_pid=data["supervisor_pid"],
        supervisor_started_at=data["supervisor_started_at"],
        benchmark_pgid=data["benchmark_pgid"],
        group_id=data.get("group_id"),
        label=data.get("label"),
        note=data.get("note"),
    )


def _group(row: tuple[Any, ...]) -> GroupRecord:
    group_id, tool, config, nodes, created_at, message = row
    return GroupRecord(group_id, tool, json.loads(config), json.loads(nodes), created_at, message)


def process_create_time(pid: int) -> float | None:
    """The process's start time (epoch s, psutil's), None when it is gone or not ours to read."""
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def supervisor_alive(pid: int, started_at: float | None) -> bool:
    """Is the process ``pid`` alive (not a zombie) and the one that started at ``started_at``?"""
    import psutil

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        if started_at is not None and abs(proc.create_time() - started_at) > _CREATE_TIME_TOLERANCE_S:
            return False
        return True
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True  # exists, owned by someone else: assume it is ours rather than lose a run
