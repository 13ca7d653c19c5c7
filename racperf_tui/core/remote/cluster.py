"""The cluster's nodes: a cluster file, ad hoc ``--ssh`` specs, and the options that pick one.

The cluster file is TOML, ``$XDG_CONFIG_HOME/racperf/cluster.toml`` (``~/.config/...``) unless
``--cluster FILE`` names another::

    [cluster]
    name = "prod"                 # optional

    [[node]]
    name = "rac1"                 # how racperf names it (store rows, views, --node)
    host = "rac1.example.com"     # what SSH connects to (~/.ssh/config applies to it)
    user = "oracle"               # optional: ~/.ssh/config's, else the local user
    port = 22                     # optional
    identity = "~/.ssh/id_rac"    # optional key file; no password is ever stored
    interconnect = "192.168.10.1" # the private address (default server address of net tests)
    public = "10.0.0.11"          # optional

A node named ``local`` (or whose ``host`` is ``local``) is this machine, reached without SSH.
Everything wrong in the file is a :class:`ClusterFileError` naming the file, the node and the key.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
import re
import socket
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from racperf_tui.core.contract.hosts import Host, LocalHost
from racperf_tui.core.remote.ssh_target import SshTarget
from racperf_tui.core.textio.bounded_read import BoundedReadError, read_regular_bytes_bounded

CLUSTER_FILE_NAME = "cluster.toml"
LOCAL_NODE = "local"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_NODE_KEYS = {"name", "host", "user", "port", "identity", "interconnect", "public", "known_hosts"}


class ClusterFileError(ValueError):
    """The cluster file (or a node spec) is wrong; the message names the file, node and key."""


@dataclass(frozen=True)
class Node:
    """One node: its name, how to log into it, and its addresses.

    ``host`` "local" is this machine (no SSH). ``interconnect`` falls back to ``host``."""

    name: str
    host: str
    user: str | None = None
    port: int | None = None
    identity: str | None = None
    interconnect: str | None = None
    public: str | None = None
    known_hosts: tuple[str, ...] | None = None

    @property
    def is_local(self) -> bool:
        return self.host == LOCAL_NODE

    def ssh_target(self) -> SshTarget:
        if self.is_local:
            raise ValueError(f"node {self.name!r} is this machine: no SSH")
        return SshTarget(self.host, self.user, self.port, self.identity, self.known_hosts)

    @property
    def spec(self) -> str:
        """``[user@]host[:port]`` (what ``--ssh`` takes; a supervisor rebuilds the node from it)."""
        return LOCAL_NODE if self.is_local else self.ssh_target().display

    @property
    def address(self) -> str:
        """Where a server on this node is reached by the others: the interconnect address."""
        return self.interconnect or self.public or ("127.0.0.1" if self.is_local else self.host)


LOCAL = Node(LOCAL_NODE, LOCAL_NODE)

#: the run config key that carries the node a run runs on (what the detached supervisor reads)
HOST_SPEC_KEY = "host_spec"


def node_spec(node: Node) -> dict[str, object]:
    """The node as a run config's ``host_spec``: its fields, JSON-safe (lists for tuples)."""
    return {
        "name": node.name,
        "host": node.host,
        "user": node.user,
        "port": node.port,
        "identity": node.identity,
        "interconnect": node.interconnect,
        "public": node.public,
        "known_hosts": list(node.known_hosts) if node.known_hosts is not None else None,
    }


def node_from_spec_dict(spec: object) -> Node:
    """The Node a run config's ``host_spec`` describes (LOCAL when there is none); checked
    like a cluster file's node, since a config is read back from the store (ClusterFileError)."""
    if spec is None:
        return LOCAL
    if not isinstance(spec, dict):
        raise ClusterFileError(f"{HOST_SPEC_KEY}: a table of the node's fields, not {type(spec).__name__}")
    table = {key: value for key, value in spec.items() if value is not None}
    if table.get("host") == LOCAL_NODE:
        return LOCAL
    where = f"the run's {HOST_SPEC_KEY}"
    name = table.get("name")
    if not isinstance(name, str) or _NAME.match(name):
        return node_from_table(table, where)
    # an ad hoc node (--ssh) is named by its spec, which a cluster file's name cannot be
    node = node_from_table(dict(table, name="ad-hoc"), where)
    if name != node.ssh_target().display:
        raise ClusterFileError(f"{where}: node name {name!r} is neither a name nor the node's user@host:port")
    return dataclasses.replace(node, name=name)


def node_of_config(config: Mapping[str, object]) -> Node:
    """The node a run config names (``host_spec``), LOCAL when it names none."""
    return node_from_spec_dict(config.get(HOST_SPEC_KEY))


def host_for(node: Node) -> Host:
    """The run contract's host for ``node``: this machine, or the node over SSH (connected
    on first use, so building one never blocks)."""
    if node.is_local:
        return LocalHost()
    # deferred for startup time, not a cycle: asyncssh only once a remote node is used
    from racperf_tui.core.remote.ssh_host import SshHost

    return SshHost(node.ssh_target(), name=node.name)


@dataclass(frozen=True)
class Cluster:
    nodes: tuple[Node, ...] = ()
    name: str = ""
    path: Path | None = None
    _by_name: dict[str, Node] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({node.name: node for node in self.nodes})

    def node(self, name: str) -> Node:
        try:
            return self._by_name[name]
        except KeyError:
            where = f" in {self.path}" if self.path else " (no cluster file)"
            known = ", ".join(sorted(self._by_name)) or "none"
            raise ClusterFileError(f"no node named {name!r}{where}; nodes: {known}") from None

    def names(self) -> list[str]:
        return [node.name for node in self.nodes]


def cluster_file_to_watch(path: str | Path | None) -> Path | None:
    """The cluster file the dashboard's Cluster tab shows: the one given (--cluster), else the
    default one if it exists; None: no Cluster tab."""
    if path is not None:
        return Path(path).expanduser()
    default = default_cluster_path()
    return default if default.is_file() else None


def default_cluster_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "racperf" / CLUSTER_FILE_NAME


def _text(where: str, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip() or any(ch in value for ch in "\n\r\0"):
        raise ClusterFileError(f"{where}: {key} must be a non-empty one-line string, not {value!r}")
    return value.strip()


def _address(where: str, key: str, value: object) -> str:
    text = _text(where, key, value)
    try:
        ipaddress.ip_address(text)
    except ValueError:
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})", text):
            raise ClusterFileError(f"{where}: {key} {text!r} is not an IP address or host name") from None
    return text


def node_from_table(table: object, where: str) -> Node:
    if not isinstance(table, dict):
        raise ClusterFileError(f"{where}: a [[node]] must be a table, not {type(table).__name__}")
    unknown = sorted(set(table) - _NODE_KEYS)
    if unknown:
        raise ClusterFileError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_NODE_KEYS))})")
    if "name" not in table:
        raise ClusterFileError(f"{where}: a node needs a name")
    name = _text(where, "name", table["name"])
    if not _NAME.match(name):
        raise ClusterFileError(f"{where}: node name {name!r}: letters, digits, '.', '_', '-' only")
    where = f"{where} (node {name})"
    host = _text(where, "host", table.get("host", name))
    if host != LOCAL_NODE:
        try:
            SshTarget.parse(host)
        except ValueError as exc:
            raise ClusterFileError(f"{where}: host: {exc}") from None
    port = table.get("port")
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
        raise ClusterFileError(f"{where}: port must be 1..65535, not {port!r}")
    user = _text(where, "user", table["user"]) if "user" in table else None
    if user is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9._-]{0,31}\$?", user):
        raise ClusterFileError(f"{where}: user {user!r} is not a user name")
    identity = str(Path(_text(where, "identity", table["identity"])).expanduser()) if "identity" in table else None
    known = table.get("known_hosts")
    known_hosts: tuple[str, ...] | None = None
    if known is not None:
        items = [known] if isinstance(known, str) else known
        if not isinstance(items, list):
            raise ClusterFileError(f"{where}: known_hosts must be a path or a list of paths")
        known_hosts = tuple(str(Path(_text(where, "known_hosts", p)).expanduser()) for p in items)
    return Node(
        name,
        host,
        user,
        port,
        identity,
        _address(where, "interconnect", table["interconnect"]) if "interconnect" in table else None,
        _address(where, "public", table["public"]) if "public" in table else None,
        known_hosts,
    )


def parse_cluster(text: str, path: Path | None = None) -> Cluster:
    where = str(path) if path else "cluster file"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ClusterFileError(f"{where}: not TOML: {exc}") from None
    unknown = sorted(set(data) - {"cluster", "node"})
    if unknown:
        raise ClusterFileError(f"{where}: unknown section(s) {', '.join(unknown)} (expected [cluster] and [[node]])")
    head = data.get("cluster", {})
    if not isinstance(head, dict):
        raise ClusterFileError(f"{where}: [cluster] must be a table")
    name = _text(where, "cluster.name", head["name"]) if "name" in head else ""
    tables = data.get("node", [])
    if not isinstance(tables, list):
        raise ClusterFileError(f"{where}: nodes are [[node]] tables")
    nodes: list[Node] = []
    for index, table in enumerate(tables, 1):
        node = node_from_table(table, f"{where}: node #{index}")
        if any(node.name == other.name for other in nodes):
            raise ClusterFileError(f"{where}: node #{index}: the name {node.name!r} is used twice")
        nodes.append(node)
    return Cluster(tuple(nodes), name, path)


#: the most a cluster file may be: a few hundred bytes a node
CLUSTER_FILE_LIMIT_BYTES = 1 << 20


def load_cluster(path: str | Path | None = None, *, required: bool = False) -> Cluster:
    """The cluster file at ``path`` (else the default one); an absent default file is no nodes."""
    explicit = path is not None
    file = Path(path).expanduser() if path is not None else default_cluster_path()
    try:
        raw = read_regular_bytes_bounded(file, CLUSTER_FILE_LIMIT_BYTES)
    except FileNotFoundError:
        if explicit or required:
            raise ClusterFileError(f"{file}: no such cluster file") from None
        return Cluster(path=None)
    except BoundedReadError as exc:
        if exc.reason == "too large":
            raise ClusterFileError(f"{file}: larger than 1 MiB, not a cluster file") from None
        raise ClusterFileError(str(exc)) from None  # a FIFO or a device: refused, never waited on
    except OSError as exc:
        raise ClusterFileError(f"{file}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ClusterFileError(f"{file}: not UTF-8 (byte {exc.start})") from None
    return parse_cluster(text, file)


def node_from_spec(spec: str, *, identity: str | None = None, known_hosts: Iterable[str] | None = None) -> Node:
    """An ad hoc node from ``[user@]host[:port]`` ("local": this machine); ClusterFileError."""
    if spec.strip() == LOCAL_NODE:
        return LOCAL
    try:
        target = SshTarget.parse(spec, identity=identity, known_hosts=known_hosts)
    except ValueError as exc:
        raise ClusterFileError(f"--ssh {exc}") from None
    return Node(target.display, target.host, target.user, target.port, identity, known_hosts=target.known_hosts)


# ---- the options every headless subcommand that acts on a node takes ------------------------


def add_node_arguments(parser: argparse.ArgumentParser, *, what: str = "run it", several: bool = False) -> None:
    """``several``: --node is repeatable and --nodes all|A,B names several (read them with
    :func:`nodes_from_args`)."""
    group = parser.add_argument_group("node (default: this machine)")
    where = group.add_mutually_exclusive_group()
    where.add_argument("--ssh", metavar="[USER@]HOST[:PORT]", default=None, help=f"{what} on another node, over SSH")
    if several:
        where.add_argument(
            "--node",
            metavar="NAME",
            action="append",
            default=None,
            help=f"{what} on the cluster file's node NAME (repeatable: on every node named at once)",
        )
        where.add_argument(
            "--nodes",
            metavar="all|NAME,...",
            default=None,
            help=f"{what} on all the cluster file's nodes, or those named",
        )
    else:
        where.add_argument("--node", metavar="NAME", default=None, help=f"{what} on the cluster file's node NAME")
    group.add_argument("--identity", metavar="FILE", default=None, help="with --ssh: a private key file")
    group.add_argument(
        "--known-hosts",
        metavar="FILE",
        action="append",
        default=None,
        help="with --ssh: verify the host key against FILE (repeatable)",
    )
    group.add_argument(
        "--cluster", metavar="FILE", default=None, help=f"the cluster file (default: {default_cluster_path()})"
    )


def node_from_args(args: argparse.Namespace) -> Node:
    """The node the options name (LOCAL when none); ClusterFileError with the reason."""
    ssh, name = getattr(args, "ssh", None), getattr(args, "node", None)
    identity, known = getattr(args, "identity", None), getattr(args, "known_hosts", None)
    if ssh is not None:
        return node_from_spec(ssh, identity=identity, known_hosts=known)
    if identity is not None or known:
        raise ClusterFileError("--identity and --known-hosts go with --ssh (a --node takes them from the cluster file)")
    if isinstance(name, list):  # add_node_arguments(several=True): one of them
        if len(name) != 1:
            raise ClusterFileError(f"one node expected, got {len(name)}: {', '.join(name)}")
        name = name[0]
    if name is not None:
        if name == LOCAL_NODE:
            return LOCAL
        return load_cluster(getattr(args, "cluster", None), required=True).node(name)
    return LOCAL


def nodes_from_args(args: argparse.Namespace) -> list[Node]:
    """The nodes the options name (add_node_arguments(several=True)): every --node, the
    --nodes list or all the cluster file's nodes, else the one node of :func:`node_from_args`."""
    names, listed = getattr(args, "node", None), getattr(args, "nodes", None)
    if listed is not None:
        cluster = load_cluster(getattr(args, "cluster", None), required=True)
        if listed.strip() == "all":
            if not cluster.nodes:
                raise ClusterFileError(f"--nodes all: no nodes in {cluster.path}")
            return list(cluster.nodes)
        names = [part.strip() for part in listed.split(",") if part.strip()]
        if not names:
            raise ClusterFileError("--nodes: all, or node names separated by commas")
    if isinstance(names, list) and len(names) > 1:
        if len(set(names)) != len(names):
            raise ClusterFileError(f"a node is named twice: {', '.join(names)}")
        return nodes_named(load_cluster(getattr(args, "cluster", None), required=True), names)
    if isinstance(names, list) and listed is not None:
        args = argparse.Namespace(**dict(vars(args), node=names))
    return [node_from_args(args)]


def nodes_named(cluster: Cluster, names: Sequence[str]) -> list[Node]:
    return [LOCAL if name == LOCAL_NODE else cluster.node(name) for name in names]


#: what a node field says for this machine (the New run form, the Network tab)
THIS_HOST_WORDS = ("this host", LOCAL_NODE, "")


def this_host(cluster: Cluster) -> Node:
    """This machine as the cluster file names it (its node whose host is ``local``: its name
    and interconnect address), else LOCAL. One choice, never two: "this host" and its own
    name in the file are the same machine."""
    return next((node for node in cluster.nodes if node.is_local), LOCAL)


def nodes_in_words(cluster: Cluster, text: str) -> list[Node]:
    """The nodes a field names: "this host" (or empty, or ``local``), ``all`` (the cluster
    file's nodes), or names separated by commas or spaces, "this host" among them. A name
    given twice, or this machine under two names, is said; ClusterFileError names what is
    wrong."""
    words = text.strip()
    if words.lower() in THIS_HOST_WORDS:
        return [this_host(cluster)]
    if words.lower() == "all":
        if not cluster.nodes:
            raise ClusterFileError("all: the cluster file names no nodes")
        return list(cluster.nodes)
    names = [part.strip() for part in re.split(r"[,\s]+", words.replace("this host", LOCAL_NODE)) if part.strip()]
    nodes = [this_host(cluster) if name == LOCAL_NODE else cluster.node(name) for name in names]
    seen: dict[str, str] = {}
    for name, node in zip(names, nodes):
        if node.name in seen:
            again = "named twice" if seen[node.name] == name else f"this host, named as {seen[node.name]} and {name}"
            raise ClusterFileError(f"{node.name}: {again}")
        seen[node.name] = name
    return nodes


def server_address(server: Node, client: Node) -> str:
    """Where ``client`` reaches a server on ``server``: the server node's interconnect address
    (its public one, else its host, else loopback for two ends on this machine). This machine
    without an address in the cluster file (no node with ``host = "local"``, or one without
    ``interconnect``) is reached at the address it logs into the client's node from (the
    kernel's source address toward the node's SSH address: the node answers SSH there, so
    it reaches it; no packet is sent): a node given 127.0.0.1 connects to itself (issue 21:
    "Connection refused"). ValueError when no route leads there."""
    if not server.is_local or server.interconnect or server.public:
        return server.address
    if client.is_local:
        return "127.0.0.1"
    toward = client.public or client.host
    try:
        with socket.socket(socket.AF_INET6 if ":" in toward else socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((toward, 9))  # UDP: only a route lookup
            return str(probe.getsockname()[0])
    except OSError as exc:
        raise ValueError(
            f"no address of this host reaches {client.name} ({toward}): {exc.strerror or exc}; "
            f'name this host in the cluster file with host = "local" and its interconnect address'
        ) from None
