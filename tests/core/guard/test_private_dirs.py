"""The data directory and its run directories are racperf's own (core/guard/private_dirs.py,
core/paths.py), here and on a node: another user who can write one could swap the job file
racperf wrote there before fio reads it (tests/core/guard/test_review_round3.py shows the
attack end to end). Each variation is refused naming the path, its owner and its mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from racperf_tui.core.guard.private_dirs import make_private_directory, vet_private_directory
from racperf_tui.core.guard.program_vetting import UntrustedPath
from racperf_tui.core.paths import UntrustedDataDir, resolve_data_dir, run_dir
from racperf_tui.core.remote.node_vetting import NodeVetter
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost
from tests.helpers import is_root
from tests.helpers.sshd_helpers import Sshd

NOBODY = 65534

pytestmark = pytest.mark.skipif(not is_root(), reason="another user's directories need root to make")


def test_a_missing_data_dir_is_made_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o002)  # RHEL's umask for a user with a private group
    try:
        made = resolve_data_dir(tmp_path / "a" / "b" / "racperf")
    finally:
        os.umask(old)
    for path in (made, made.parent, made.parent.parent):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    assert stat.S_IMODE(run_dir(made, 7).stat().st_mode) == 0o700


@pytest.mark.parametrize(
    ("mode", "owner", "said"),
    [
        (0o755, NOBODY, r"\(owner nobody, mode drwxr-xr-x\) is not owned by root"),
        (0o775, 0, r"\(owner root, mode drwxrwxr-x\) is writable by its group"),
        (0o757, 0, r"\(owner root, mode drwxr-xrwx\) is writable by others"),
        (0o1777, 0, r"\(owner root, mode drwxrwxrwt\) is writable by group and others"),
    ],
)
def test_a_data_dir_another_user_can_write_is_refused(tmp_path: Path, mode: int, owner: int, said: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, owner, owner)
    data.chmod(mode)
    with pytest.raises(UntrustedDataDir, match=rf"^data dir: {data} {said}: another user could swap the files"):
        resolve_data_dir(data)
    assert not (data / "runs").exists()


def test_a_run_directory_or_runs_of_another_user_is_refused(tmp_path: Path) -> None:
    data = resolve_data_dir(tmp_path / "data")
    planted = data / "runs" / "3"
    planted.mkdir(parents=True)
    os.chown(planted, NOBODY, NOBODY)
    with pytest.raises(UntrustedDataDir, match=rf"run directory\): {planted} \(owner nobody"):
        run_dir(data, 3)
    (data / "runs").chmod(0o777)
    with pytest.raises(UntrustedDataDir, match=rf"{data / 'runs'} \(owner root, mode drwxrwxrwx\)"):
        run_dir(data, 4)


def test_a_link_or_dotdot_on_the_way_is_judged_where_it_leads(tmp_path: Path) -> None:
    """A data dir named through a symbolic link, or with .. in it, is judged where the kernel
    goes: a link into another user's directory is refused however it is spelled."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    (tmp_path / "mine").mkdir(mode=0o700)
    (tmp_path / "mine" / "link").symlink_to(theirs)
    for spelled in (tmp_path / "mine" / "link" / "racperf", tmp_path / "mine" / ".." / "theirs" / "racperf"):
        with pytest.raises(UntrustedPath, match=rf"{theirs} \(owner nobody"):
            make_private_directory(str(spelled), "data dir")
    assert not (theirs / "racperf").exists()
    # link/.. is the link's parent's parent, not mine/ (where a lexical .. would lead)
    theirs_inside = theirs / "sub"
    theirs_inside.mkdir()
    os.chown(theirs_inside, NOBODY, NOBODY)
    (tmp_path / "mine" / "deep").symlink_to(theirs_inside)
    with pytest.raises(UntrustedDataDir, match=rf"{theirs} \(owner nobody"):
        resolve_data_dir(tmp_path / "mine" / "deep" / ".." / "racperf")
    assert not (tmp_path / "mine" / "racperf").exists() and not (theirs / "racperf").exists()


def test_a_name_made_first_in_a_sticky_directory_is_refused(tmp_path: Path) -> None:
    """/tmp-like: another user made the data dir's name first; racperf does not use theirs."""
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    theirs = sticky / "racperf-data"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    theirs.chmod(0o700)
    with pytest.raises(UntrustedPath, match=rf"{theirs} \(owner nobody"):
        make_private_directory(str(theirs), "data dir")
    mine = make_private_directory(str(sticky / "mine"), "data dir")
    assert vet_private_directory(mine, "data dir") == str(sticky / "mine")


def test_the_run_directories_on_a_node_are_judged_there(sshd: Sshd, tmp_path: Path) -> None:
    """~/.racperf/runs on a node (here a base given in another user's directory): refused before
    racperf puts the job file there."""
    node = SshHost(SshTarget.parse(sshd.spec, identity=str(sshd.user_key), known_hosts=[str(sshd.known_hosts)]))
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    node = SshHost(node.target, remote_base=str(theirs / "runs"))
    local_run = tmp_path / "data" / "runs" / "1"
    with pytest.raises(UntrustedPath, match=rf"run directory: {theirs} on {node.name} \(owner nobody"):
        node.put_files(local_run, {"job.fio": "[x]\n"})
    assert not list((theirs / "runs").rglob("job.fio"))
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    node = SshHost(node.target, remote_base=str(mine / "runs"))
    node.put_files(local_run, {"job.fio": "[x]\n"})
    assert [p.name for p in (mine / "runs").rglob("job.fio")] == ["job.fio"]
    assert NodeVetter(node).private_directory(str(mine / "runs"), "t") == str(mine / "runs")
