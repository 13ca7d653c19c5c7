"""The offline bundle (make bundle): built from the project's lock with pip, installed with the
system Python inside a network namespace with no network at all, and run there; each refusal of
install.sh is one clear line and leaves nothing behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import REPO, needs_root

#: building the bundle (~75 MiB of wheels, from pip's cache after the first time) and installing
#: it twice take minutes on a loaded 2-core machine
pytestmark = [needs_root, pytest.mark.slow, pytest.mark.timeout(900)]

SYSTEM_PYTHON = next((p for p in ("/usr/bin/python3.11", "/usr/bin/python3.12") if os.path.exists(p)), None)
needs_system_python = pytest.mark.skipif(SYSTEM_PYTHON is None, reason="no /usr/bin/python3.11 or 3.12")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The bundle built from this checkout and unpacked: its directory (install.sh, wheels/...)."""
    out = tmp_path_factory.mktemp("dist")
    # the machine's pip cache, not the test session's private XDG cache: ~75 MiB of wheels
    env = {**os.environ, "PIP_CACHE_DIR": str(Path.home() / ".cache" / "pip")}
    built = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "bundle.py"), "build", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (archive,) = out.glob("racperf-*-offline.tar.gz")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        tar.extractall(out, filter="tar")
    root = out / archive.name.removesuffix(".tar.gz")
    assert {f"{root.name}/install.sh", f"{root.name}/SHA256SUMS", f"{root.name}/README.txt"} <= set(names)
    wheels = {p.name for p in (root / "wheels").glob("*.whl")}
    # both architectures, both Pythons: numpy is one wheel per (python, arch)
    for tag in ("cp311", "cp312"):
        for arch in ("x86_64", "aarch64"):
            assert any(w.startswith("numpy-") and f"-{tag}-" in w and arch in w for w in wheels), (tag, arch)
    assert any(w.startswith("racperf_tui-") for w in wheels)
    yield root


def node_env(**extra: str) -> dict[str, str]:
    """The environment of a node's shell: none of this test session's PYTHON* settings (a
    module of the suite exports PYTHONPATH=this checkout, which would run the checkout's code)."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}, **extra}


def install(
    bundle: Path, *args: str, offline: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    argv = ["sh", str(bundle / "install.sh"), *args]
    if offline:
        argv = ["unshare", "--net", "--", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env or node_env())


def left_in(prefix: Path) -> list[str]:
    return sorted(p.name for p in prefix.iterdir()) if prefix.exists() else []


@needs_system_python
def test_installs_with_no_network_runs_there_and_upgrades_in_place(bundle: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "opt-racperf"
    assert SYSTEM_PYTHON is not None
    # a caller's PYTHONPATH naming a racperf checkout (this one) must not make pip skip racperf
    first = install(bundle, "--prefix", str(prefix), "--python", SYSTEM_PYTHON, env=node_env(PYTHONPATH=str(REPO)))
    assert first.returncode == 0, first.stderr
    racperf = prefix / "bin" / "racperf"
    version = subprocess.run(
        ["unshare", "--net", "--", str(racperf), "--version"], capture_output=True, text=True, env=node_env()
    )
    assert version.stdout.strip() == f"racperf {(bundle / 'VERSION').read_text().strip()}"
    report = subprocess.run(
        ["unshare", "--net", "--", str(racperf), "iostat", "-x", "--json", "1", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        env=node_env(),
    )
    assert report.returncode == 0, report.stderr
    reports = [json.loads(line) for line in report.stdout.splitlines()]
    assert len(reports) == 2
    assert 0.5 < reports[1]["interval_s"] < 2.5
    assert reports[1]["devices"] and "%util" in reports[1]["devices"][0]
    # the installed racperf runs on the Python it was given, from the prefix, not this checkout
    installed = (prefix / "current").resolve()
    assert (installed / "pyvenv.cfg").read_text().count(str(Path(SYSTEM_PYTHON).parent)) >= 1
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import racperf_tui; print(racperf_tui.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
        env=node_env(),
    )
    assert where.stdout.startswith(str(installed / "lib")), where.stdout

    # an upgrade (here: the same version again) replaces the install and leaves the data dir be
    home = tmp_path / "home"
    store = home / ".local" / "share" / "racperf" / "runs.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"runs kept")
    second = install(bundle, "--prefix", str(prefix), "--python", SYSTEM_PYTHON, env=node_env(HOME=str(home)))
    assert second.returncode == 0, second.stderr
    assert (prefix / "current").resolve() != installed
    assert not installed.exists()
    assert [n for n in left_in(prefix) if n.startswith("racperf-")] == [(prefix / "current").resolve().name]
    assert store.read_bytes() == b"runs kept"
    again = subprocess.run([str(racperf), "--version"], capture_output=True, text=True, env=node_env())
    assert again.returncode == 0 and again.stdout.startswith("racperf ")


def test_a_damaged_bundle_is_named_and_nothing_is_installed(bundle: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(bundle, damaged)
    wheel = next((damaged / "wheels").glob("textual-*.whl"))
    wheel.write_bytes(wheel.read_bytes()[: wheel.stat().st_size // 2])
    prefix = tmp_path / "prefix"
    done = install(damaged, "--prefix", str(prefix))
    assert done.returncode == 1
    assert "damaged or incomplete" in done.stderr and "textual-" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert left_in(prefix) == []


def test_a_wrong_architecture_is_one_line(bundle: Path, tmp_path: Path) -> None:
    if shutil.which("setarch") is None or subprocess.run(["setarch", "i686", "true"]).returncode != 0:
        pytest.skip("setarch i686 is not available")
    prefix = tmp_path / "prefix"
    done = subprocess.run(
        ["setarch", "i686", "sh", str(bundle / "install.sh"), "--prefix", str(prefix)],
        capture_output=True,
        text=True,
        env=node_env(),
    )
    assert done.returncode == 1
    assert (
        done.stderr.strip() == "install.sh: this machine is i686: the bundle holds wheels for x86_64 and aarch64 only"
    )
    assert left_in(prefix) == []


def test_a_python_of_the_wrong_version_says_what_to_install(bundle: Path, tmp_path: Path) -> None:
    old = tmp_path / "python3.9"
    old.write_text("#!/bin/sh\necho 3.9\n")
    old.chmod(0o755)
    prefix = tmp_path / "prefix"
    done = install(bundle, "--prefix", str(prefix), "--python", str(old))
    assert done.returncode == 1
    assert f"--python {old} is Python 3.9; racperf needs 3.11 or 3.12:" in done.stderr
    assert ("dnf install" in done.stderr) or ("apt-get install" in done.stderr) or ("install Python" in done.stderr)
    assert left_in(prefix) == []
    missing = install(bundle, "--prefix", str(prefix), "--python", "/nonexistent/python3.11")
    assert missing.returncode == 1 and "no such program" in missing.stderr


def test_a_prefix_that_cannot_be_written_is_one_line(bundle: Path) -> None:
    done = install(bundle, "--prefix", "/proc/racperf")
    assert done.returncode == 1
    assert done.stderr.strip().startswith("install.sh: cannot create /proc/racperf as root")


def test_an_unknown_option_shows_the_usage(bundle: Path) -> None:
    done = install(bundle, "--prefx", "/tmp/x", offline=False)
    assert done.returncode == 1
    assert "usage: sh install.sh [--prefix DIR] [--python PY]" in done.stderr
    assert "unknown argument: --prefx" in done.stderr
