"""A cluster of N "nodes" for tests: network namespaces, each with its own real sshd.

Topology (every name carries this run's token, so parallel runs never meet)::

    root namespace (the test process)            switch namespace (interconnect only)
      bridge rpbTOKEN 10.A.B.1/24                   bridge rpiTOKEN (no address)
        |  rpTOKENpK  (veth)                          |  rpTOKENiK (veth)
        |                                             |
      node namespace racperf-PID-TOKEN-nK: ethp 10.A.B.(10+K)   ethi 10.A.C.(10+K)

- The *public* network is a bridge in the root namespace with one veth per node: the test
  process reaches every node's sshd (port 22 in the node's own namespace) at its public address,
  as a DBA's racperf reaches the other nodes.
- The *interconnect* is a second bridge inside a namespace of its own, one veth per node: the
  nodes reach each other on 10.A.C.0/24, the root namespace does not (RAC's private network).
  :meth:`NetnsNode.shape` puts ``tc qdisc ... root tbf rate R burst B latency L`` on the node's
  interconnect interface (its egress: what it sends to the other nodes).
- One throwaway user key authorised on every node, one host key per node, one known_hosts file
  naming every public and interconnect address, and a cluster.toml naming the nodes
  (``host`` = public address, ``interconnect`` = interconnect address).

Cleanup: :meth:`NetnsCluster.stop` kills each sshd and its sessions, deletes the namespaces
(their veths go with them) and the root bridge; the fixtures call it on every exit path, an
``atexit`` hook covers an interrupted session, and :func:`sweep_stale` removes what a killed
test run (its pid gone) left behind, at the next start.
"""

from __future__ import annotations

import atexit
import getpass
import ipaddress
import json
import os
import random
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import reveals
from tests.helpers.sshd_helpers import PRIVSEP_DIR, SSHD, Sshd, sshd_answers, sshd_available, write_config

NETNS_PREFIX = "racperf-"
_NETNS_NAME = re.compile(r"^racperf-(\d+)-([0-9a-f]{4})-(?:n\d+|sw)$")
_started: list[NetnsCluster] = []


def netns_available() -> tuple[bool, str]:
    """Can this machine build the cluster? (root, ip, tc, sshd)."""
    if os.geteuid() != 0:
        return False, "network namespaces need root"
    for tool in ("ip", "tc", "ssh-keygen"):
        if shutil.which(tool) is None:
            return False, f"{tool} not installed"
    ok, why = sshd_available()
    if not ok:
        return False, why
    probe = f"{NETNS_PREFIX}probe-{os.getpid()}-{secrets.token_hex(2)}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return False, f"ip netns add: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return True, ""


def _ip(*args: str, netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    argv = ["ip", *(["-n", netns] if netns else []), *args]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done


def in_netns(netns: str, argv: Sequence[str]) -> list[str]:
    """argv run inside ``netns`` (nsenter: the network namespace only, /sys and mounts as here)."""
    return ["nsenter", f"--net=/run/netns/{netns}", "--", *argv]


@dataclass
class NetnsNode:
    name: str  # n1, n2, ... (the cluster file's name)
    netns: str
    address: str  # public: where sshd answers, reachable from the root namespace
    interconnect: str  # private: reachable from the other nodes only
    public_dev: str = "ethp"  # inside the node
    interconnect_dev: str = "ethi"  # inside the node
    root_dev: str = ""  # the public veth's end in the root namespace (on the bridge)
    switch_dev: str = ""  # the interconnect veth's end in the switch namespace (on its bridge)
    switch_netns: str = ""
    sshd: Sshd | None = None

    def run(self, argv: Sequence[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        """Run a command inside the node (to its end)."""
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        kwargs.setdefault("timeout", 60)
        return subprocess.run(in_netns(self.netns, argv), **kwargs)  # type: ignore[call-overload, no-any-return]

    def popen(self, argv: Sequence[str], **kwargs: object) -> subprocess.Popen[bytes]:
        """Start a command inside the node (the caller stops it)."""
        return subprocess.Popen(in_netns(self.netns, argv), **kwargs)  # type: ignore[call-overload, no-any-return]

    def shape(self, rate: str = "1gbit", burst: str = "256kb", latency: str = "50ms", limit: str = "") -> None:
        """A token bucket on the node's interconnect egress (``tc qdisc replace ... tbf``).
        ``limit`` (bytes queued, instead of ``latency``): a small one drops what a burst
        brings beyond it, a lossy link where the kernel has no netem."""
        argv = ["tc", "-n", self.netns, "qdisc", "replace", "dev", self.interconnect_dev, "root", "tbf"]
        queue = ["limit", limit] if limit else ["latency", latency]
        done = subprocess.run([*argv, "rate", rate, "burst", burst, *queue], capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise RuntimeError(f"tc on {self.name}: {done.stderr.strip()}")

    def unshape(self) -> None:
        subprocess.run(
            ["tc", "-n", self.netns, "qdisc", "del", "dev", self.interconnect_dev, "root"], capture_output=True
        )

    def cut(self) -> None:
        """The public link goes dead without a word (no FIN, no RST: packets are dropped, as
        when a cable or a switch port dies): the root end of its veth is set down."""
        _ip("link", "set", self.root_dev, "down")

    def mend(self) -> None:
        _ip("link", "set", self.root_dev, "up")

    def cut_interconnect(self) -> None:
        """The node's interconnect goes dead as when its switch port fails: the switch's end
        of its veth is set down (the node's end loses carrier; what is sent is dropped)."""
        _ip("link", "set", self.switch_dev, "down", netns=self.switch_netns)

    def mend_interconnect(self) -> None:
        _ip("link", "set", self.switch_dev, "up", netns=self.switch_netns)

    def set_interconnect_mtu(self, mtu: int) -> None:
        """``ip link set mtu`` on both ends of the node's interconnect veth (the node's and
        its switch port): jumbo frames on this node, whatever the others have."""
        _ip("link", "set", self.interconnect_dev, "mtu", str(mtu), netns=self.netns)
        _ip("link", "set", self.switch_dev, "mtu", str(mtu), netns=self.switch_netns)

    def stop_sshd(self) -> None:
        if self.sshd is not None:
            self.sshd.stop()

    def start_sshd(self, directory: Path, user_key: Path) -> Sshd:
        """(Re)start this node's sshd on port 22 of its public and interconnect addresses."""
        return _start_node_sshd(self, directory, user_key)


@dataclass
class NetnsCluster:
    token: str
    directory: Path
    nodes: list[NetnsNode]
    bridge: str
    switch_netns: str
    public_net: ipaddress.IPv4Network
    interconnect_net: ipaddress.IPv4Network
    user_key: Path
    known_hosts: Path
    cluster_file: Path
    user: str = field(default_factory=getpass.getuser)
    stopped: bool = False

    def node(self, name: str) -> NetnsNode:
        return next(n for n in self.nodes if n.name == name)

    def namespaces(self) -> list[str]:
        return [n.netns for n in self.nodes] + [self.switch_netns]

    def stop(self) -> None:
        """Everything this cluster made, gone (idempotent; errors ignored: best effort to the end)."""
        if self.stopped:
            return
        self.stopped = True
        for node in self.nodes:
            try:
                node.stop_sshd()
            except Exception:  # noqa: BLE001 - keep tearing down the others
                pass
        # the root ends first: a deleted namespace frees its veths only once the kernel gets to it
        _remove(self.namespaces(), [n.root_dev for n in self.nodes] + [self.bridge])
        if self in _started:
            _started.remove(self)


def _remove(namespaces: Sequence[str], links: Sequence[str]) -> None:
    for link in links:
        subprocess.run(["ip", "link", "del", link], capture_output=True)
    for netns in namespaces:
        _kill_netns_processes(netns)
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)


def _kill_netns_processes(netns: str) -> None:
    pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            os.kill(int(pid), 9)
        except (OSError, ValueError):
            pass


def sweep_stale() -> list[str]:
    """Remove the namespaces and bridges of test runs whose process is gone (a kill -9)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    removed: list[str] = []
    tokens: set[str] = set()
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        match = _NETNS_NAME.match(name)
        if match is None:
            continue
        pid = int(match[1])
        try:
            os.kill(pid, 0)
            continue  # its run is alive
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        tokens.add(match[2])
        _remove([name], [])
        removed.append(name)
    if tokens:
        out = subprocess.run(["ip", "-j", "link"], capture_output=True, text=True).stdout or "[]"
        names = [link["ifname"] for link in json.loads(out)]
        _remove([], [n for n in names if any(n == f"rpb{t}" or n.startswith(f"rp{t}p") for t in tokens)])
    return removed


def _used_networks() -> list[ipaddress.IPv4Network]:
    out = subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True).stdout or "[]"
    nets = []
    for link in json.loads(out):
        for info in link.get("addr_info", []):
            nets.append(ipaddress.ip_network(f"{info['local']}/{info['prefixlen']}", strict=False))
    return nets


def _pick_networks() -> tuple[ipaddress.IPv4Network, ipaddress.IPv4Network]:
    """Two /24 in 10.200-254.x.0 that no address of the root namespace overlaps."""
    used = _used_networks()
    for _ in range(200):
        a, b = random.randint(200, 254), random.randrange(0, 254, 2)
        public = ipaddress.ip_network(f"10.{a}.{b}.0/24")
        private = ipaddress.ip_network(f"10.{a}.{b + 1}.0/24")
        if not any(public.overlaps(n) or private.overlaps(n) for n in used):
            return public, private
    raise RuntimeError("no free 10.x /24 for the test cluster")


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
    )


@reveals("needs_sshd")
def _start_node_sshd(node: NetnsNode, directory: Path, user_key: Path) -> Sshd:
    directory.mkdir(parents=True, exist_ok=True)
    host_key = directory / "ssh_host_ed25519_key"
    if not host_key.exists():
        _keygen(host_key, f"racperf-test-{node.name}")
    authorized_keys = directory / "authorized_keys"
    shutil.copyfile(f"{user_key}.pub", authorized_keys)
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    config = write_config(
        directory,
        22,
        host_key,
        authorized_keys,
        listen=(node.address, node.interconnect),
        # a dead link is noticed by our side's keepalives; the node's sessions go once the
        # link is cut for as long (the watchdog's guarantee does not rest on these)
        extra="ClientAliveInterval 5\nClientAliveCountMax 3\n",
    )
    log = directory / "sshd.log"
    with open(log, "ab") as log_fh:
        process = node.popen(
            [SSHD, "-D", "-e", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    if not sshd_answers(node.address, 22, 15.0):
        process.kill()
        process.wait()
        raise RuntimeError(f"sshd of {node.name} did not answer on {node.address}:22:\n{log.read_text()[-2000:]}")
    node.sshd = Sshd(
        directory,
        22,
        getpass.getuser(),
        host_key,
        user_key,
        directory.parent / "known_hosts",
        authorized_keys,
        process,
        log,
        host=node.address,
    )
    return node.sshd


@reveals("needs_netns")
def start_netns_cluster(directory: Path, count: int, *, with_sshd: bool = True) -> NetnsCluster:
    """``count`` nodes n1..nN as described in the module docstring; stop() removes them."""
    if not 1 <= count <= 200:
        raise ValueError(f"count {count}: 1..200 nodes")
    sweep_stale()
    directory.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(2)
    while _ip("link", "show", f"rpb{token}", check=False).returncode == 0:
        token = secrets.token_hex(2)
    public, private = _pick_networks()
    stem = f"{NETNS_PREFIX}{os.getpid()}-{token}"
    user_key = directory / "id_ed25519"
    _keygen(user_key, "racperf-test-user")
    nodes = [
        NetnsNode(
            f"n{k}",
            f"{stem}-n{k}",
            str(public.network_address + 10 + k),
            str(private.network_address + 10 + k),
            root_dev=f"rp{token}p{k}",
            switch_dev=f"rp{token}i{k}",
            switch_netns=f"{stem}-sw",
        )
        for k in range(1, count + 1)
    ]
    cluster = NetnsCluster(
        token,
        directory,
        nodes,
        f"rpb{token}",
        f"{stem}-sw",
        public,
        private,
        user_key,
        directory / "known_hosts",
        directory / "cluster.toml",
    )
    _started.append(cluster)
    try:
        _ip("link", "add", cluster.bridge, "type", "bridge")
        _ip("addr", "add", f"{public.network_address + 1}/24", "dev", cluster.bridge)
        _ip("link", "set", cluster.bridge, "up")
        _ip("netns", "add", cluster.switch_netns)
        _ip("link", "add", "br0", "type", "bridge", netns=cluster.switch_netns)
        _ip("link", "set", "br0", "up", netns=cluster.switch_netns)
        for node in nodes:
            _ip("netns", "add", node.netns)
            _ip("link", "set", "lo", "up", netns=node.netns)
            # public: node <-> root bridge
            _ip("link", "add", node.root_dev, "type", "veth", "peer", "name", node.public_dev, "netns", node.netns)
            _ip("link", "set", node.root_dev, "master", cluster.bridge, "up")
            _ip("addr", "add", f"{node.address}/24", "dev", node.public_dev, netns=node.netns)
            _ip("link", "set", node.public_dev, "up", netns=node.netns)
            # interconnect: node <-> the switch namespace's bridge
            _ip(
                "link", "add", node.interconnect_dev, "netns", node.netns, "type", "veth", "peer", "name",
                node.switch_dev,
            )  # fmt: skip
            _ip("link", "set", node.switch_dev, "netns", cluster.switch_netns)
            _ip("link", "set", node.switch_dev, "master", "br0", "up", netns=cluster.switch_netns)
            _ip("addr", "add", f"{node.interconnect}/24", "dev", node.interconnect_dev, netns=node.netns)
            _ip("link", "set", node.interconnect_dev, "up", netns=node.netns)
        if with_sshd:
            for node in nodes:
                _start_node_sshd(node, directory / node.name, user_key)
        lines = []
        for node in nodes:
            if node.sshd is not None:
                key_type, key_data = Path(f"{node.sshd.host_key}.pub").read_text().split()[:2]
                lines.append(f"{node.address},{node.interconnect} {key_type} {key_data}\n")
        cluster.known_hosts.write_text("".join(lines))
        cluster.cluster_file.write_text(cluster_toml(cluster))
    except BaseException:
        cluster.stop()
        raise
    return cluster


def cluster_toml(cluster: NetnsCluster, nodes: Sequence[NetnsNode] | None = None) -> str:
    """The cluster file naming ``nodes`` (default: all), with the key and known_hosts to use."""
    text = [f'[cluster]\nname = "netns-{cluster.token}"\n']
    for node in cluster.nodes if nodes is None else nodes:
        text.append(
            f'\n[[node]]\nname = "{node.name}"\nhost = "{node.address}"\nuser = "{cluster.user}"\nport = 22\n'
            f'identity = "{cluster.user_key}"\ninterconnect = "{node.interconnect}"\n'
            f'known_hosts = "{cluster.known_hosts}"\n'
        )
    return "".join(text)


@atexit.register
def _stop_all() -> None:
    for cluster in list(_started):
        cluster.stop()


@pytest.fixture
def netns_cluster_factory(tmp_path: Path) -> Iterator[object]:
    """``make(count)`` -> a NetnsCluster; every cluster made is removed at teardown, whatever
    the test did. Skips where namespaces cannot be made (not root, no ip/tc/sshd)."""
    ok, why = netns_available()
    if not ok:
        pytest.skip(why)
    made: list[NetnsCluster] = []

    def make(count: int, **kwargs: object) -> NetnsCluster:
        cluster = start_netns_cluster(tmp_path / f"netns{len(made)}", count, **kwargs)  # type: ignore[arg-type]
        made.append(cluster)
        return cluster

    try:
        yield make
    finally:
        for cluster in made:
            cluster.stop()


@pytest.fixture
def netns_cluster(netns_cluster_factory: object) -> NetnsCluster:
    """Three nodes n1..n3 (netns_cluster_factory for another count)."""
    return netns_cluster_factory(3)  # type: ignore[operator, no-any-return]
