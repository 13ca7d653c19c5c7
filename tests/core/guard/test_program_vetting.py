"""Programs named by options, Oracle homes and the settings file are vetted before anything
runs (core/guard/program_vetting.py, orchestration/run_plan.py): owned by root or this user and
not writable by group or others, every directory on the way included. Each refusal is shown
with a real run attempt of the tool: the program would leave a marker file if it ever ran,
planning included (iperf3 asks ``--version`` and ``--help`` while planning)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from racperf_tui.core import settings
from racperf_tui.core.guard.program_vetting import LOCAL_VETTER, UntrustedPath, vet_path, vet_program
from racperf_tui.core.remote.node_vetting import NodeVetter
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost
from racperf_tui.orchestration.run_plan import judge_run
from racperf_tui.orchestration.runs import launch_run
from racperf_tui.tools import load_tool
from tests.helpers import is_root
from tests.helpers.sshd_helpers import Sshd, set_node_path

NOBODY = 65534

pytestmark = pytest.mark.skipif(not is_root(), reason="another user's files need root to make")


def _program(directory: Path, name: str, marker: Path, output: str = "") -> Path:
    """A shell script that leaves ``marker`` when run (and prints ``output``)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\ntouch {marker}\nprintf '%s\\n' '{output}'\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    found = tmp_path / "markers" / "ran"
    found.parent.mkdir()
    found.parent.chmod(0o777)
    return found


@pytest.fixture
def nobodys(tmp_path: Path, marker: Path) -> Path:
    """root's directory with nobody's programs: iperf3, python3, java, a jar, and an Oracle home
    whose bin/ (with sqlplus) is nobody's."""
    home = tmp_path / "nobody"
    for name in ("iperf3", "python3", "java", "netperf", "netserver", "orion"):
        _program(home, name, marker, "iperf 3.9")
    _program(home / "bin", "sqlplus", marker, "SQL*Plus: Release 19.0.0.0.0")
    _program(home / "bin", "orion", marker)
    (home / "oratcptest.jar").write_bytes(b"PK\x03\x04")
    for path in home.rglob("*"):
        os.chown(path, NOBODY, NOBODY)
    return home


@pytest.mark.parametrize(
    ("tool", "config", "named"),
    [
        ("iperf3", {"role": "server", "port": 0, "binary": "{home}/iperf3"}, "{home}/iperf3"),
        ("probe", {"role": "server", "port": 0, "python": "{home}/python3"}, "{home}/python3"),
        ("oratcptest", {"role": "server", "java": "{home}/java", "jar_path": "{jar}"}, "{home}/java"),
        ("calibrate_io", {"sid": "ORCL", "oracle_home": "{home}"}, "{home}/bin"),
        ("calibrate_io", {"sid": "ORCL", "sqlplus": "{home}/bin/sqlplus"}, "{home}/bin"),
        ("netperf", {"role": "client", "netperf": "{home}/netperf"}, "{home}/netperf"),
        ("netperf", {"role": "server", "netserver": "{home}/netserver", "port": 0}, "{home}/netserver"),
        ("orion", {"orion": "{home}/orion", "lun": ["/dev/null"]}, "{home}/orion"),
        ("orion", {"oracle_home": "{home}", "lun": ["/dev/null"]}, "{home}/bin"),
    ],
)
def test_a_program_of_another_user_is_refused_before_anything_runs(
    nobodys: Path, marker: Path, data_dir: Path, tool: str, config: dict[str, object], named: str, tmp_path: Path
) -> None:
    jar = tmp_path / "oratcptest.jar"
    jar.write_bytes(b"PK\x03\x04")
    config = {
        key: value.format(home=nobodys, jar=jar) if isinstance(value, str) else value for key, value in config.items()
    }
    path = named.format(home=nobodys)
    with pytest.raises(ValueError) as refused:
        launch_run(tool, config, data_dir=data_dir)
    message = str(refused.value)
    assert f"{path} (owner nobody, mode " in message and "is not owned by root" in message, message
    assert not marker.exists()


def test_the_jar_java_runs_is_vetted_too(tmp_path: Path, nobodys: Path, marker: Path, data_dir: Path) -> None:
    java = _program(tmp_path / "mine", "java", marker)
    with pytest.raises(ValueError, match=rf"{nobodys}/oratcptest.jar \(owner nobody, mode -rw-r--r--\)"):
        launch_run(
            "oratcptest",
            {"role": "server", "java": str(java), "jar_path": str(nobodys / "oratcptest.jar")},
            data_dir=data_dir,
        )
    assert not marker.exists()


def test_a_directory_others_can_write_is_refused_on_the_way(tmp_path: Path, marker: Path, data_dir: Path) -> None:
    """root's own program, in a directory of root's that the group may write: refused, the
    directory named with its mode."""
    shared = tmp_path / "shared"
    program = _program(shared / "bin", "iperf3", marker, "iperf 3.9")
    shared.chmod(0o775)
    with pytest.raises(ValueError, match=rf"{shared} \(owner root, mode drwxrwxr-x\) is writable by its group"):
        launch_run("iperf3", {"role": "server", "port": 0, "binary": str(program)}, data_dir=data_dir)
    assert not marker.exists()


def test_a_symlink_is_followed_through_every_directory_it_leads_to(tmp_path: Path, marker: Path) -> None:
    """root's link in root's directory, to a program in a world-writable (not sticky)
    directory: the walk goes where the kernel goes."""
    open_dir = tmp_path / "open"
    target = _program(open_dir, "iperf3", marker)
    open_dir.chmod(0o777)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "iperf3").symlink_to(target)
    with pytest.raises(
        UntrustedPath, match=rf"{open_dir} \(owner root, mode drwxrwxrwx\) is writable by group and others"
    ):
        vet_program(str(mine / "iperf3"), "iperf3 binary=")


def test_a_sticky_directory_is_acceptable_only_for_a_trusted_entry(tmp_path: Path, marker: Path) -> None:
    """/tmp-like: others may create there, but not rename or remove root's entry."""
    sticky = tmp_path / "sticky"
    program = _program(sticky / "mine", "iperf3", marker)
    sticky.chmod(0o1777)
    assert vet_program(str(program), "t").real == str(program)
    os.chown(sticky / "mine", NOBODY, NOBODY)
    with pytest.raises(UntrustedPath, match="owner nobody"):
        vet_program(str(program), "t")


def test_system_programs_pass() -> None:
    assert stat.S_ISREG(os.stat(vet_program("sh", "t").real).st_mode)
    assert vet_path("/usr/bin", "t") == "/usr/bin"


def test_the_settings_file_is_vetted_before_it_is_read(data_dir: Path, tmp_path: Path, marker: Path) -> None:
    path = data_dir / "settings.json"
    program = _program(tmp_path / "theirs", "java", marker)
    jar = tmp_path / "oratcptest.jar"
    jar.write_bytes(b"PK\x03\x04")
    path.write_text(json.dumps({"oratcptest.java": str(program)}))
    os.chown(path, NOBODY, NOBODY)
    with pytest.raises(UntrustedPath, match=rf"the settings file: {path} \(owner nobody, mode -rw-r--r--\)"):
        settings.load_all(data_dir)
    with pytest.raises(ValueError, match="the settings file"):
        launch_run("oratcptest", {"role": "server", "jar_path": str(jar)}, data_dir=data_dir)
    # root's file, remembering nobody's java: the remembered program is vetted like an option
    os.chown(path, 0, 0)
    os.chown(program.parent, NOBODY, NOBODY)
    with pytest.raises(ValueError, match=rf"{program.parent} \(owner nobody"):
        launch_run("oratcptest", {"role": "server", "jar_path": str(jar)}, data_dir=data_dir)
    assert not marker.exists()


def test_the_oracle_home_a_tool_finds_itself_is_vetted(
    tmp_path: Path, marker: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No option names it: ORION's home comes from $ORACLE_HOME here (/etc/oratab, the
    remembered one alike); its lib/, on ORION's LD_LIBRARY_PATH, is nobody's."""
    home = tmp_path / "dbhome"
    _program(home / "bin", "orion", marker)
    (home / "lib").mkdir()
    os.chown(home / "lib", NOBODY, NOBODY)
    monkeypatch.setenv("ORACLE_HOME", str(home))
    with pytest.raises(ValueError, match=rf"{home}/lib \(owner nobody, mode drwxr-xr-x\)"):
        launch_run("orion", {"lun": ["/dev/null"]}, data_dir=data_dir)
    assert not marker.exists()


# ------------------------------------------------------------------ on another node (real sshd)


@pytest.fixture
def node(sshd: Sshd) -> SshHost:
    return SshHost(SshTarget.parse(sshd.spec, identity=str(sshd.user_key), known_hosts=[str(sshd.known_hosts)]))


def test_a_node_judges_as_this_machine_does(node: SshHost, nobodys: Path, tmp_path: Path, marker: Path) -> None:
    """The same walk on the node's entries over SSH: the same verdicts, the node named."""
    vetter = NodeVetter(node)
    with pytest.raises(UntrustedPath) as remote:
        vetter.program(str(nobodys / "iperf3"), "iperf3: binary=")
    with pytest.raises(UntrustedPath) as local:
        LOCAL_VETTER.program(str(nobodys / "iperf3"), "iperf3: binary=")
    assert str(remote.value) == str(local.value).replace(f"{nobodys}/iperf3 (", f"{nobodys}/iperf3 on {node.name} (")
    open_dir = tmp_path / "open"
    target = _program(open_dir, "tool", marker)
    open_dir.chmod(0o777)
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(UntrustedPath, match=rf"{open_dir} on {node.name} \(owner root, mode drwxrwxrwx\)"):
        vetter.program(str(tmp_path / "link"), "t")
    assert vetter.program("sh", "t").path == LOCAL_VETTER.program("sh", "t").path
    with pytest.raises(UntrustedPath, match=rf"{nobodys}/bin on {node.name} \(owner nobody"):
        vetter.tree(str(nobodys), "calibrate_io: oracle_home=", ("bin", "lib"))
    with pytest.raises(FileNotFoundError):
        vetter.program("racperf-no-such-program", "t")


def test_a_run_on_a_node_is_refused_before_its_program_runs_there(node: SshHost, nobodys: Path, marker: Path) -> None:
    config = {"role": "server", "port": 0, "binary": str(nobodys / "iperf3")}
    with pytest.raises(UntrustedPath, match=rf"{nobodys}/iperf3 on {node.name} \(owner nobody"):
        judge_run(load_tool("iperf3"), "iperf3", config, host=node)
    assert not marker.exists()


def test_the_nodes_fio_is_vetted_before_planning_asks_it_anything(
    node: SshHost, sshd: Sshd, nobodys: Path, marker: Path, tmp_path: Path
) -> None:
    """fio has no option naming its program: the node's fio (found on the login's PATH) was
    asked for its option table (``--cmdhelp``, ``--version``) before the planned program was
    vetted there. It is vetted first now; nobody's fio never runs, even for planning."""
    fio = _program(nobodys / "fiobin", "fio", marker, "fio-3.35")
    os.chown(fio.parent, NOBODY, NOBODY)
    os.chown(fio, NOBODY, NOBODY)
    set_node_path(sshd, fio.parent, "/usr/bin", "/bin")
    config = {"target": str(tmp_path / "data.img"), "rw": "read", "size": "1m", "runtime": 1}
    with pytest.raises(UntrustedPath, match=rf"fio on {node.name}: {fio.parent} on {node.name} \(owner nobody"):
        judge_run(load_tool("fio"), "fio", config, host=node)
    with pytest.raises(UntrustedPath, match=rf"planning on {node.name}: {fio.parent} on {node.name} \(owner nobody"):
        node.run_briefly([str(fio), "--version"], 10.0)
    assert not marker.exists()
