"""The cluster file and the node options (core/remote/cluster.py)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from racperf_tui.core.remote.cluster import (
    LOCAL,
    ClusterFileError,
    add_node_arguments,
    load_cluster,
    node_from_args,
    parse_cluster,
)

GOOD = """
[cluster]
name = "prod"

[[node]]
name = "rac1"
host = "rac1.example.com"
user = "oracle"
port = 2222
interconnect = "192.168.10.1"

[[node]]
name = "rac2"
interconnect = "192.168.10.2"
"""


def test_nodes_with_their_addresses():
    cluster = parse_cluster(GOOD)
    assert cluster.name == "prod"
    assert cluster.names() == ["rac1", "rac2"]
    rac1 = cluster.node("rac1")
    assert rac1.spec == "oracle@rac1.example.com:2222"
    assert rac1.address == "192.168.10.1"
    assert cluster.node("rac2").host == "rac2"  # host defaults to the name


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[[node]]\nname='a'\nport=70000\n", ["node a", "port"]),
        ("[[node]]\nname='a'\ncolour='red'\n", ["unknown key", "colour"]),
        ("[[node]]\nname='a'\n[[node]]\nname='a'\n", ["used twice"]),
        ("[[node]]\nhost='x'\n", ["needs a name"]),
        ("[[node]]\nname='a b'\n", ["node name"]),
        ("[[node]]\nname='a'\ninterconnect='1.2.3.4; rm'\n", ["interconnect"]),
        ("[[node]\n", ["not TOML"]),
        ("[nodes]\n", ["unknown section"]),
    ],
)
def test_mistakes_name_what_and_where(text, words, tmp_path):
    path = tmp_path / "cluster.toml"
    path.write_text(text)
    with pytest.raises(ClusterFileError) as caught:
        load_cluster(path)
    message = str(caught.value)
    assert str(path) in message
    for word in words:
        assert word in message


def test_missing_default_file_is_no_nodes_but_an_explicit_one_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert load_cluster().nodes == ()
    with pytest.raises(ClusterFileError, match="no such cluster file"):
        load_cluster(tmp_path / "nope.toml")


def test_options_pick_a_node(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(GOOD)
    parser = argparse.ArgumentParser()
    add_node_arguments(parser)
    assert node_from_args(parser.parse_args([])) is LOCAL
    assert node_from_args(parser.parse_args(["--node", "rac1", "--cluster", str(path)])).port == 2222
    adhoc = node_from_args(parser.parse_args(["--ssh", "root@127.0.0.1:2200", "--identity", "/k"]))
    assert (adhoc.host, adhoc.user, adhoc.port, adhoc.identity) == ("127.0.0.1", "root", 2200, "/k")
    with pytest.raises(ClusterFileError, match="no node named 'rac9'"):
        node_from_args(parser.parse_args(["--node", "rac9", "--cluster", str(path)]))
    with pytest.raises(ClusterFileError, match="go with --ssh"):
        node_from_args(parser.parse_args(["--node", "rac1", "--identity", "/k", "--cluster", str(path)]))
    with pytest.raises(SystemExit):
        parser.parse_args(["--ssh", "a", "--node", "b"])


def test_a_cluster_file_that_is_a_fifo_a_device_or_too_large_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "cluster.toml"
    os.mkfifo(fifo)  # no writer: reading it would wait forever
    with pytest.raises(ClusterFileError) as caught:
        load_cluster(fifo)
    assert str(caught.value) == f"{fifo} is a FIFO, not a regular file; not read"
    with pytest.raises(ClusterFileError) as caught:
        load_cluster("/dev/zero")
    assert str(caught.value) == "/dev/zero is a character device, not a regular file; not read"
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.truncate((1 << 20) + 1)
    with pytest.raises(ClusterFileError) as caught:
        load_cluster(big)
    assert str(caught.value) == f"{big}: larger than 1 MiB, not a cluster file"
