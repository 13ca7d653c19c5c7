"""The cluster monitor's per-second sample of a node, against a real sshd on 127.0.0.1: the
answer comes in one SSH data packet and is computed from memory (``write_proc=False``: no
/proc files written under the temp root and read back), with the very figures the laid-out
files give, and a file the node cannot read named as the node's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from racperf_tui.core.disks.iostat_sampler import IostatSampler
from racperf_tui.core.remote import ssh
from racperf_tui.core.remote.remote_diskstats import RemoteDiskstats
from racperf_tui.core.remote.ssh import SshTarget
from tests.helpers import TESTS_DIR
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


def test_a_sample_from_memory_equals_the_laid_out_files_and_writes_none(sshd: Sshd, tmp_path: Path) -> None:
    tree = tmp_path / "node"
    shutil.copytree(ROOT1, tree)
    conn = ssh.connect(target(sshd))
    with (
        RemoteDiskstats(conn, remote_root=str(tree)) as files,
        RemoteDiskstats(conn, remote_root=str(tree), write_proc=False) as memory,
    ):
        by_files = IostatSampler([files.root], partitions=True, dm_names=True)
        by_memory = IostatSampler([memory.root], partitions=True, dm_names=True)
        reports = []
        for root in (ROOT1, ROOT2):
            shutil.rmtree(tree)
            shutil.copytree(root, tree)
            files.refresh(full=True)
            memory.refresh(full=True)
            assert memory.raw is not None and memory.raw.diskstats == (root / "proc/diskstats").read_bytes()
            reports.append((by_files.sample(), by_memory.sample(memory.raw)))
        assert not (memory.root / "proc" / "diskstats").exists() and not (memory.root / "proc" / "uptime").exists()
        assert (memory.root / "sys" / "block").is_dir()  # the sysfs facts are laid out still
    for from_files, from_memory in reports:
        assert [r.as_dict() for r in from_memory.rows] == [r.as_dict() for r in from_files.rows]
        assert from_memory.interval_s == from_files.interval_s and from_memory.errors == from_files.errors == []
    assert reports[1][1].interval_s == 31.17 and len(reports[1][1].rows) >= 4


def test_a_sample_is_one_packet_and_an_unreadable_file_is_named_as_the_nodes(sshd: Sshd, tmp_path: Path) -> None:
    tree = tmp_path / "node"
    shutil.copytree(ROOT1, tree)
    with RemoteDiskstats(ssh.connect(target(sshd)), remote_root=str(tree), write_proc=False) as remote:
        remote.refresh(full=True)
        channel = remote._channel
        assert channel is not None
        read = channel.read
        chunks: list[int] = []

        def counted(timeout_s: float, *extra: object) -> list[tuple[str, bytes]]:
            got = read(timeout_s, *extra)  # type: ignore[arg-type]
            chunks.extend(len(data) for stream, data in got if stream == "stdout")
            return got

        channel.read = counted  # type: ignore[method-assign]
        for _ in range(5):
            chunks.clear()
            remote.refresh(full=False)
            # the marks, the uptime and the 1.4 kB of diskstats: one write on the node, one here
            assert len(chunks) == 1 and chunks[0] > 1400, chunks
        (tree / "proc" / "diskstats").unlink()
        remote.refresh(full=False)
        sampler = IostatSampler([remote.root], partitions=True)
        report = sampler.sample(remote.raw)
    assert report.rows == [] and report.errors == [f"{sshd.spec}:/proc/diskstats: cannot read"]


def laid_out(root: Path) -> dict[str, str]:
    block = root / "sys" / "block"
    return {
        str(path.relative_to(block)): path.read_text() if path.is_file() else "/" for path in sorted(block.rglob("*"))
    }


def test_the_sysfs_facts_are_laid_out_again_only_for_the_devices_that_changed(sshd: Sshd, tmp_path: Path) -> None:
    tree = tmp_path / "node"
    shutil.copytree(ROOT1, tree)
    conn = ssh.connect(target(sshd))
    with RemoteDiskstats(conn, remote_root=str(tree), write_proc=False) as kept:
        kept.refresh(full=True)
        block = kept.root / "sys" / "block"
        untouched = (block / "sda" / "stat").stat().st_ino
        shutil.rmtree(tree / "sys/block/sdb")  # a device goes, one comes, one's scheduler changes
        (tree / "sys/block/sdz/queue").mkdir(parents=True)
        (tree / "sys/block/sdz/stat").write_text("")
        (tree / "sys/block/sdz/queue/scheduler").write_text("[none] mq-deadline\n")
        (tree / "sys/block/sdc/queue").mkdir(parents=True, exist_ok=True)
        (tree / "sys/block/sdc/queue/scheduler").write_text("[bfq] none\n")
        kept.refresh(full=True)
        assert kept.sysfs_changed
        with RemoteDiskstats(conn, remote_root=str(tree), write_proc=False) as fresh:
            fresh.refresh(full=True)
            assert laid_out(kept.root) == laid_out(fresh.root)
        assert not (block / "sdb").exists() and (block / "sdz" / "stat").is_file()
        assert (block / "sdc" / "queue" / "scheduler").read_text() == "[bfq] none\n"
        assert (block / "sda" / "stat").stat().st_ino == untouched  # not made again
