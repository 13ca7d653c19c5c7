"""Supervisors and every Python racperf starts are isolated (core/guard/isolated_python.py): a
``sqlite3.py``, a ``racperf_tui`` package and a ``sitecustomize.py`` another user planted in the
directory root stands in, or on PYTHONPATH / PYTHONSTARTUP, never run. Real detached
supervisors, a real probe pair (each end a Python of its own, the watchdog another), and a tool
module found only through PYTHONPATH still running through racperf's own vetted roots."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.guard.isolated_python import isolated_module_argv, module_of_argv, vetted_roots
from racperf_tui.core.guard.program_vetting import UntrustedPath
from racperf_tui.orchestration.runs import launch_run, wait_for_run
from tests.helpers import REPO, is_root
from tests.helpers.pair_helpers import SHORT_PROBE_PAIR, probe_pair_command
from tests.helpers.proc_helpers import FAKE_TOOL

NOBODY = 65534

pytestmark = pytest.mark.skipif(not is_root(), reason="the planted files belong to nobody: needs root")


def _plant(directory: Path, markers: Path) -> dict[str, Path]:
    """Modules that, if ever imported, leave a marker file named after themselves; all of
    nobody's. Returns marker name -> the marker it would create."""
    planted = {
        "sqlite3": directory / "sqlite3.py",
        "racperf_tui": directory / "racperf_tui" / "__init__.py",
        "sitecustomize": directory / "sitecustomize.py",
        "startup": directory / "startup.py",
        "usercustomize": directory / "usercustomize.py",
    }
    for name, path in planted.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"open({str(markers / name)!r}, 'w').close()\n")
    for path in [directory, *directory.rglob("*")]:
        os.chown(path, NOBODY, NOBODY)
    return {name: markers / name for name in planted}


@pytest.fixture
def planted_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The caller stands in nobody's directory holding the planted modules, its startup file
    as PYTHONSTARTUP and the directory as PYTHONUSERBASE."""
    markers = tmp_path / "markers"
    markers.mkdir()
    os.chmod(markers, 0o777)
    home = tmp_path / "oracle-home"
    home.mkdir()
    found = _plant(home, markers)
    monkeypatch.chdir(home)
    monkeypatch.setenv("PYTHONSTARTUP", str(home / "startup.py"))
    monkeypatch.setenv("PYTHONUSERBASE", str(home))
    return found


def _console_racperf() -> str:
    """The installed ``racperf`` script: what root runs (``python -m`` would put the cwd on the
    CLI's own path, the caller's doing, not racperf's)."""
    return str(Path(sys.executable).parent / "racperf")


def test_a_probe_pair_started_in_a_planted_directory_runs_none_of_it(
    planted_cwd: dict[str, Path], data_dir: Path
) -> None:
    done = subprocess.run(
        probe_pair_command([_console_racperf()], data_dir, *SHORT_PROBE_PAIR),
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    client, server = lines[-2], lines[-1]
    assert (client["state"], server["state"]) == ("succeeded", "succeeded")
    assert server["result"]["bytes_received"] == client["result"]["bytes_sent"] > 0
    assert [name for name, marker in planted_cwd.items() if marker.exists()] == []


def test_a_tool_module_found_through_pythonpath_reaches_the_supervisor_as_a_vetted_root(
    planted_cwd: dict[str, Path], data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests.fakes.faketool is importable here only because the tests put the repository on
    sys.path; the supervisor gets that root explicitly (appended, after the standard library),
    not the caller's PYTHONPATH (here the planted directory, as a launcher that imported
    racperf before it was set would pass it on) or working directory."""
    assert str(REPO) in sys.path
    monkeypatch.setenv("PYTHONPATH", str(planted_cwd["sqlite3"].parent))
    run_id = launch_run(FAKE_TOOL, {"extra_args": ["--samples", "3", "--interval", "0.01"]}, data_dir=data_dir)
    record = wait_for_run(run_id, data_dir, 30)
    assert record.state is RunState.SUCCEEDED, record.message
    assert [name for name, marker in planted_cwd.items() if marker.exists()] == []


def test_a_root_another_user_can_write_is_refused(tmp_path: Path) -> None:
    """A root racperf would hand its children is vetted like a program: nobody's directory
    is refused, naming it, its owner and mode."""
    root = tmp_path / "tools"
    root.mkdir()
    os.chown(root, NOBODY, NOBODY)
    (root / "tool.py").write_text("TOOL = None\n")
    sys.path.append(str(root))
    try:
        module = importlib.import_module("tool")
        with pytest.raises(UntrustedPath, match=rf"{root} \(owner nobody, mode drwxr-xr-x\) is not owned by root"):
            vetted_roots([module])
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("tool", None)


def test_the_isolated_argv_reads_back() -> None:
    argv = isolated_module_argv("racperf_tui.core.guard.devjail", "--allow", "/dev/loop5", "--", "fio", roots=[])
    assert argv[:2] == [sys.executable, "-I"]
    assert module_of_argv(argv) == ("racperf_tui.core.guard.devjail", ["--allow", "/dev/loop5", "--", "fio"])
