"""``racperf nodes``: every node of the cluster file checked at once against real sshd (live
ones, one whose host key is unknown, one that refuses the key, one nobody listens on, one that
accepts TCP and never answers): one line per node with the stage and reason, exit status 1,
and the dead node does not hold the others past the timeout."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.core.remote.node_check import parse_facts
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf  # noqa: F401 (fixture)
from tests.helpers.sshd_helpers import Sshd, _free_port

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def silent_port():
    """A TCP port that accepts connections (the kernel's backlog) and never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def test_every_node_checked_at_once_with_its_reason(sshd: Sshd, silent_port: int, tmp_path: Path) -> None:
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(
        node_table("rac1", sshd)
        + node_table("rac2", sshd)
        + node_table("silent", sshd, port=silent_port)
        + node_table("refused", sshd, port=_free_port())
        + node_table("stranger", sshd, identity=str(stranger))
        + node_table("unknown", sshd, known_hosts=str(empty))
    )
    started = time.monotonic()
    done = racperf("nodes", "--cluster", str(cluster), "--timeout", "3")
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    # the live nodes reach each other's interconnect (127.0.0.1 here: TCP port 22 answers or
    # refuses, either is an answer); the nodes not logged into try nothing
    assert lines[-1] == "interconnect: every node reached every other (10 pairs), MTU 65535 everywhere", lines
    lines = lines[:-1]
    assert [line.split()[0] for line in lines] == ["rac1", "rac2", "silent", "refused", "stranger", "unknown"]
    by_name = {line.split()[0]: line for line in lines}
    for live in ("rac1", "rac2"):
        assert by_name[live].split()[1] == "ok"
        for program in ("fio", "iostat", "iperf3"):  # installed here, so on the "node"
            assert f" {program}" in by_name[live].split("(missing")[0]
        assert f"{sshd.user}@127.0.0.1:{sshd.port}" in by_name[live]
    assert "FAILED (reach)" in by_name["silent"] and "timed out after 3 s" in by_name["silent"]
    assert "FAILED (reach)" in by_name["refused"] and "Connection refused" in by_name["refused"]
    assert "FAILED (login)" in by_name["stranger"] and "login refused" in by_name["stranger"]
    assert "FAILED (host key)" in by_name["unknown"] and sshd.host_fingerprint() in by_name["unknown"]
    # in parallel: the silent node's 3 s, not the sum; python's start-up and sshd's logins on top
    assert took < 3 + 5, took

    as_json = racperf("nodes", "--cluster", str(cluster), "--timeout", "3", "--json")
    rows = {row["name"]: row for row in map(json.loads, as_json.stdout.splitlines())}
    assert rows["rac1"]["ok"] and rows["rac1"]["programs"]["fio"] == shutil.which("fio")
    assert rows["rac1"]["kernel"].startswith("Linux ")
    assert (rows["silent"]["reachable"], rows["silent"]["host_key_known"]) == (False, None)
    assert (rows["unknown"]["reachable"], rows["unknown"]["host_key_known"], rows["unknown"]["authenticated"]) == (
        True,
        False,
        None,
    )
    assert (rows["stranger"]["host_key_known"], rows["stranger"]["authenticated"]) == (True, False)


def test_all_nodes_ok_is_exit_status_0_and_a_wrong_file_is_2(sshd: Sshd, tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(node_table("rac1", sshd))
    assert racperf("nodes", "--cluster", str(cluster)).returncode == 0
    cluster.write_text('[[node]]\nname = "rac1"\nport = "x"\n')
    done = racperf("nodes", "--cluster", str(cluster))
    assert done.returncode == 2 and "port must be 1..65535" in done.stderr and "Traceback" not in done.stderr
    missing = racperf("nodes", "--cluster", str(tmp_path / "none.toml"))
    assert missing.returncode == 2 and "no such cluster file" in missing.stderr


def test_every_node_reaches_every_other_on_its_interconnect(netns_cluster_factory) -> None:
    """From each node, not from here: n3's switch port down (its interconnect dead, its public
    network fine, so it is logged into) and n1's interconnect at MTU 9000, n2's at 1500."""
    cluster = netns_cluster_factory(3)
    n1, n2, n3 = cluster.nodes
    n1.set_interconnect_mtu(9000)
    n3.cut_interconnect()
    done = racperf("nodes", "--cluster", str(cluster.cluster_file), "--timeout", "5")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [["n1", "ok"], ["n2", "ok"], ["n3", "ok"]], lines
    failed = [line for line in lines if "UNREACHABLE" in line]
    pairs = sorted(line.split(" (")[0] for line in failed)
    assert pairs == ["n1 -> n3", "n2 -> n3", "n3 -> n1", "n3 -> n2"], lines
    for line in failed:
        target = cluster.node(line.split(" -> ")[1].split()[0])
        assert f"({target.interconnect}) interconnect: UNREACHABLE: " in line and line.endswith("(TCP port 22)"), line
    assert (
        "n1 <-> n2 interconnect MTU MISMATCH: 9000 on n1, 1500 on n2: frames larger than 1500 bytes from n1 are "
        "dropped" in lines
    ), lines
    rows = {row["name"]: row for row in map(json.loads, racperf("nodes", "--cluster", str(cluster.cluster_file),
            "--timeout", "5", "--json").stdout.splitlines())}  # fmt: skip
    n1_to_n2 = rows["n1"]["interconnect"][0]
    assert (n1_to_n2["target"], n1_to_n2["address"], n1_to_n2["reached"], n1_to_n2["mtu"]) == (
        "n2",
        n2.interconnect,
        True,
        9000,
    )
    assert 0 < n1_to_n2["ms"] < 5000 and n1_to_n2["reason"] is None
    assert [r["reached"] for r in rows["n3"]["interconnect"]] == [False, False]


def test_the_facts_a_node_reports() -> None:
    text = (
        "prog fio /usr/bin/fio\nprog iostat \nprog java /opt/java/bin/java\n"
        "home /u01/app/oracle/product/19c\noratab /u01/app/oracle/product/19c\noratab /u01/app/19c/grid\n"
        "kernel Linux 5.4.17\nhostname rac1\n"
    )
    programs, homes, kernel, hostname = parse_facts(text)
    assert programs["fio"] == "/usr/bin/fio" and programs["iostat"] is None and programs["netperf"] is None
    assert homes == ["/u01/app/oracle/product/19c", "/u01/app/19c/grid"]
    assert (kernel, hostname) == ("Linux 5.4.17", "rac1")
