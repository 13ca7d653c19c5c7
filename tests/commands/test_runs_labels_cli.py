"""``racperf runs label / note / delete`` and ``list --label`` as a user runs them: real
subprocesses, runs recorded by ``racperf run`` (the fake tool: a real supervisor, a real run
directory), a real store."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.store import Store
from tests.helpers import racperf_cmd
from tests.helpers.proc_helpers import FAKE_TOOL, ensure_repo_importable

ensure_repo_importable()


def racperf(data: Path, *args: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*racperf_cmd(), "runs", "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=stdin,
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of the fake tool, 3 samples each, recorded once for the module."""
    data = tmp_path_factory.mktemp("labels") / "data"
    for _ in range(2):
        done = subprocess.run(
            [*racperf_cmd(), "run", "--data-dir", str(data), FAKE_TOOL, "--target", "/tmp/t", "--", "--samples", "3"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
    return data


@pytest.fixture
def two_runs(recorded: Path, tmp_path: Path) -> Path:
    """A copy of the recorded data dir (store and run directories) each test may change."""
    return Path(shutil.copytree(recorded, tmp_path / "data"))


def test_label_and_note_are_listed_shown_and_filtered(two_runs: Path) -> None:
    assert racperf(two_runs, "label", "1", "before-fw").stdout == "run 1: label 'before-fw'\n"
    assert racperf(two_runs, "note", "1", "HBA firmware 2.1, queue_depth 32").returncode == 0
    listed = racperf(two_runs, "list", "--label", "before-fw")
    lines = listed.stdout.splitlines()
    assert lines[0].split()[-1] == "LABEL" and len(lines) == 2
    assert lines[1].split()[0] == "1" and lines[1].endswith("before-fw")
    assert racperf(two_runs, "list", "--label", "before").stdout == f"no run labelled 'before' in {two_runs}\n"
    as_json = [json.loads(line) for line in racperf(two_runs, "list", "--json").stdout.splitlines()]
    assert [(r["id"], r["label"], r["note"]) for r in as_json] == [
        (2, None, None),
        (1, "before-fw", "HBA firmware 2.1, queue_depth 32"),
    ]
    shown = racperf(two_runs, "show", "1").stdout.splitlines()
    assert shown[1:3] == ["label:        before-fw", "note:         HBA firmware 2.1, queue_depth 32"]
    assert not any(line.startswith(("label:", "note:")) for line in racperf(two_runs, "show", "2").stdout.splitlines())
    assert racperf(two_runs, "label", "1", "").stdout == "run 1: label cleared\n"
    assert racperf(two_runs, "list", "--label", "before-fw").stdout.startswith("no run labelled")


@pytest.mark.parametrize(
    ("args", "said", "status"),
    [
        (["label", "1", "a\nb"], "racperf runs label: a label is one line of printable text: it has '\\n' at 2", 2),
        (["note", "9", "x"], "racperf runs note: no run with id 9 in", 1),
        (["delete", "1", "9", "--yes"], "racperf runs delete: no run with id 9 in", 1),
        (["delete", "1"], "racperf runs delete: nothing deleted: say --yes (there is no terminal to ask on)", 2),
    ],
)
def test_a_bad_request_is_one_line_and_changes_nothing(two_runs: Path, args: list[str], said: str, status: int) -> None:
    done = racperf(two_runs, *args)
    assert done.returncode == status and done.stdout == ""
    assert done.stderr.startswith(said) and len(done.stderr.splitlines()) == 1
    with Store.open(two_runs, read_only=True) as store:
        assert [(r.id, r.label) for r in store.list_runs()] == [(2, None), (1, None)]


def test_label_in_a_data_dir_without_a_store_creates_none(tmp_path: Path) -> None:
    done = racperf(tmp_path / "empty", "label", "1", "x")
    assert done.returncode == 1 and "no run store in" in done.stderr
    assert not (tmp_path / "empty" / "runs.sqlite3").exists()


def test_delete_removes_the_record_samples_and_run_directory(two_runs: Path) -> None:
    run_dir = two_runs / "runs" / "1"
    assert run_dir.is_dir()
    with Store.open(two_runs, read_only=True) as store:
        assert store.sample_count(1) == 3
    done = racperf(two_runs, "delete", "1", "--yes")
    assert done.returncode == 0, done.stderr
    said = "deleted run 1 (tests.fakes.faketool on /tmp/t at local, succeeded): the record, 3 samples"
    assert done.stdout == f"{said}, its run directory {run_dir}\n"
    assert not run_dir.exists() and (two_runs / "runs" / "2").is_dir()
    with Store.open(two_runs, read_only=True) as store:
        assert [r.id for r in store.list_runs()] == [2]
        assert store.samples(1) == [] and store.result(1) is None and store.sample_count(2) == 3


def test_delete_asks_on_a_terminal_and_no_keeps_the_run(two_runs: Path) -> None:
    master, slave = os.openpty()
    try:
        os.write(master, b"n\n")
        kept = racperf(two_runs, "delete", "2", stdin=slave)
        assert kept.returncode == 0 and kept.stdout.endswith("delete this run? [y/N] nothing deleted\n")
        assert kept.stdout.startswith(
            "run 2 (tests.fakes.faketool on /tmp/t at local, succeeded): the record, 3 samples"
        )
        os.write(master, b"y\n")
        gone = racperf(two_runs, "delete", "2", stdin=slave)
        assert gone.returncode == 0 and "deleted run 2 " in gone.stdout
    finally:
        os.close(master)
        os.close(slave)
    with Store.open(two_runs, read_only=True) as store:
        assert [r.id for r in store.list_runs()] == [1]


def test_delete_of_a_run_still_going_deletes_nothing(two_runs: Path) -> None:
    """This test's own process as the run's supervisor: alive, so the run is still going."""
    with Store.open(two_runs) as store:
        going = store.create_run("fio", "local", "/tmp/t", {}, [], None)
        store.set_supervisor_pid(going, os.getpid())
        store.set_state(going, RunState.RUNNING)
    done = racperf(two_runs, "delete", "1", str(going), "--yes")
    assert done.returncode == 6
    assert done.stderr == (
        f"racperf runs delete: run {going} (running) is still going: stop it first (racperf runs stop ID); "
        "nothing was deleted\n"
    )
    with Store.open(two_runs, read_only=True) as store:
        assert [r.id for r in store.list_runs()] == [going, 2, 1]
    assert (two_runs / "runs" / "1").is_dir()
