"""The local host runs a whole Invocation: env, cwd in the run's directory, stdin, input files
racperf writes, result files the tool writes, kept in the store and handed to the result parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.contract.hosts import LocalHost
from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.core.store import Store
from racperf_tui.orchestration.runs import run_foreground


def test_a_run_with_env_cwd_stdin_input_and_result_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = {
        "lun": ["/dev/mapper/test1", "/dev/mapper/test2"],
        "home": "/u01/app/oracle/19c",
        "sql": "select 1 from dual;\nexit\n",
    }
    record = run_foreground("tests.fakes.contracttool", config, data)
    assert record.state is RunState.SUCCEEDED, record.message
    run_dir = data / "runs" / str(record.id)
    with Store.open(data) as store:
        result = store.result(record.id)
        assert store.raw_output(record.id, "file:input.lun") == "/dev/mapper/test1\n/dev/mapper/test2\n"
        kept = json.loads(store.raw_output(record.id, "result:demo_summary.txt"))
        samples = [s for _seq, s in store.samples(record.id)]
    assert result is not None and result["summary"] == kept
    assert kept == {
        "env": "/u01/app/oracle/19c",
        "cwd": str(run_dir.resolve()),
        "luns": ["/dev/mapper/test1", "/dev/mapper/test2"],
        "sql": "select 1 from dual;\nexit\n",
    }
    assert [s.metrics["value"] for s in samples] == [2.0]
    assert (run_dir / "input.lun").stat().st_mode & 0o777 == 0o600


def test_put_files_refuses_a_name_that_leaves_the_run_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="would leave its directory"):
        LocalHost().put_files(tmp_path / "run", {"../escape.txt": "x"})
    assert not (tmp_path / "escape.txt").exists()


def test_result_files_are_bounded(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "big_summary.txt").write_bytes(b"x" * (17 << 20))
    files = LocalHost().fetch_files(run, Invocation(argv=["true"], cwd=".", result_files=("*_summary.txt",)))
    assert len(files["big_summary.txt"]) < (16 << 20) + 200
    assert files["big_summary.txt"].endswith("cut at 16777216 bytes]\n")
