"""A node's iostat over SSH (core/remote/remote_diskstats.py, ``racperf iostat --ssh``) against a real
sshd on 127.0.0.1: the node's files laid out as a root here and computed by the same reader and
math, so a remote report equals the local one of the same snapshots (sysstat's recorded roots
read "remotely" through --ssh-root; the live machine's devices and sysfs facts)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.core.disks.diskstats import (
    classify_partitions,
    dm_names,
    read_queue_facts,
    read_snapshot,
    whole_devices_with_stats,
)
from racperf_tui.core.disks.iostat_sampler import IostatSampler
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.remote_diskstats import RemoteDiskstats, count_cpus
from racperf_tui.core.remote.ssh import SshTarget
from tests.helpers import TESTS_DIR, racperf_cmd
from tests.helpers.sshd_helpers import Sshd

FIXTURES = TESTS_DIR / "fixtures" / "sysstat"
ROOT1, ROOT2 = FIXTURES / "root1", FIXTURES / "root2"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    yield
    ssh.close_all()


def target(server: Sshd) -> SshTarget:
    return SshTarget.parse(server.spec, identity=str(server.user_key), known_hosts=[str(server.known_hosts)])


def ssh_args(server: Sshd) -> list[str]:
    return ["--ssh", server.spec, "--identity", str(server.user_key), "--known-hosts", str(server.known_hosts)]


def iostat(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*racperf_cmd(), "iostat", *map(str, args)], capture_output=True, text=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_count_cpus() -> None:
    assert count_cpus("0-3,8,10-11\n") == 7 and count_cpus("0") == 1 and count_cpus("") == 0


@pytest.mark.parametrize("options", [["-x"], ["-x", "-p", "ALL", "-N"], ["--json", "-p", "sda"], ["-z", "-m"]])
def test_a_recorded_root_read_over_ssh_prints_what_the_local_read_prints(sshd: Sshd, options: list[str]) -> None:
    local = iostat("--root", ROOT1, *options)
    remote = iostat(*ssh_args(sshd), "--ssh-root", ROOT1, *options)
    assert remote.stderr == local.stderr
    if "--json" in options:  # the report's time is when it was read
        strip = [{k: v for k, v in json.loads(line).items() if k != "time"} for line in local.stdout.splitlines()]
        assert [
            {k: v for k, v in json.loads(line).items() if k != "time"} for line in remote.stdout.splitlines()
        ] == strip
    else:  # the banner is the node's (there: the fixture has no proc/sys), the reports the same
        assert remote.stdout.splitlines()[1:] == local.stdout.splitlines()[1:]
        assert len(remote.stdout.splitlines()) > 4


def test_two_snapshots_over_one_channel_equal_the_local_reports(sshd: Sshd, tmp_path: Path) -> None:
    tree = tmp_path / "node"
    shutil.copytree(ROOT1, tree)
    local = IostatSampler([ROOT1, ROOT2], partitions=True)
    expected = [local.sample(), local.sample()]
    with RemoteDiskstats(ssh.connect(target(sshd)), remote_root=str(tree)) as remote:
        sampler = IostatSampler([remote.root], partitions=True)
        remote.refresh(full=True)
        first = sampler.sample()
        shutil.rmtree(tree)
        shutil.copytree(ROOT2, tree)
        remote.refresh(full=True)
        second = sampler.sample()
    assert [r.as_dict() for r in first.rows] == [r.as_dict() for r in expected[0].rows]
    assert [r.as_dict() for r in second.rows] == [r.as_dict() for r in expected[1].rows]
    assert second.interval_s == expected[1].interval_s == 31.17
    assert not remote.root.exists()  # the temp root is removed on close


def test_the_live_node_has_this_machines_devices_and_sysfs_facts(sshd: Sshd) -> None:
    with RemoteDiskstats(ssh.connect(target(sshd))) as remote:
        remote.refresh(full=True)
        here = read_snapshot(Path("/"))
        there = read_snapshot(remote.root)
        assert there.errors == [] and set(there.devices) == set(here.devices)
        assert abs(there.uptime_s - here.uptime_s) < 5
        names = sorted(here.devices)
        assert classify_partitions(names, remote.root) == classify_partitions(names, Path("/"))
        assert whole_devices_with_stats(remote.root) == whole_devices_with_stats(Path("/"))
        assert dm_names(remote.root) == {
            k: v for k, v in dm_names(Path("/")).items() if Path(f"/sys/block/{k}/dm/name").exists()
        }
        for name in names:
            assert read_queue_facts(name, remote.root) == read_queue_facts(name, Path("/")), name
        import os
        import platform

        assert remote.node.hostname == platform.node() and remote.node.osrelease == platform.release()
        assert remote.node.cpus == os.cpu_count() and remote.node.machine == platform.machine()
        latencies = []
        for _ in range(5):
            remote.refresh()
            latencies.append(remote.last_latency_s)
        assert min(latencies) < 0.5


def test_live_iostat_over_ssh_json_with_an_interval(sshd: Sshd) -> None:
    before = local_devices()
    started = time.monotonic()
    remote = iostat(*ssh_args(sshd), "--json", "-p", "ALL", "0.5", "3")
    took = time.monotonic() - started
    after = local_devices()
    reports = [json.loads(line) for line in remote.stdout.splitlines()]
    assert len(reports) == 3 and took < 20
    assert 0.3 < reports[1]["interval_s"] < 1.5
    # the other test worker attaches loop devices and device-mapper tables meanwhile: every
    # device there before and after is in every report, and no device that neither saw
    stable, seen = before & after, before | after
    for report in reports:
        shown = {d["device"] for d in report["devices"]}
        assert stable <= shown, stable - shown
        assert {d for d in shown - seen if not d.startswith(("loop", "dm-"))} == set()
    assert stable, "this machine has block devices"


def local_devices() -> set[str]:
    return {d["device"] for d in json.loads(iostat("--json", "-p", "ALL").stdout)["devices"]}


def test_text_banner_is_the_nodes(sshd: Sshd) -> None:
    import platform

    out = iostat(*ssh_args(sshd), "-x").stdout
    assert out.startswith(f"Linux {platform.release()} ({platform.node()}) ")


def test_refusals(sshd: Sshd, tmp_path: Path) -> None:
    unknown = iostat(
        "--ssh", sshd.spec, "--identity", str(sshd.user_key), "--known-hosts", str(tmp_path / "empty"), check=False
    )
    assert unknown.returncode == 2 and sshd.host_fingerprint() in unknown.stderr and unknown.stdout == ""
    both = iostat(*ssh_args(sshd), "--root", ROOT1, check=False)
    assert both.returncode == 2 and "exclude each other" in both.stderr
    alone = iostat("--identity", "x", check=False)
    assert alone.returncode == 2 and "go with --ssh" in alone.stderr
    bad = iostat("--ssh", "a b", check=False)
    assert bad.returncode == 2 and "[user@]host[:port]" in bad.stderr


def test_a_missing_file_on_the_node_is_named_with_the_node(sshd: Sshd, tmp_path: Path) -> None:
    tree = tmp_path / "node"
    shutil.copytree(ROOT1, tree)
    (tree / "proc" / "uptime").unlink()
    out = iostat(*ssh_args(sshd), "--ssh-root", tree, check=False)
    assert out.returncode == 1
    assert f"{sshd.spec}:/proc/uptime: cannot read" in out.stderr
