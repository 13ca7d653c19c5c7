"""A server/client pair as two recorded runs: the server run first, the client run once the
server said it is ready. The one way racperf runs a two-ended tool (UI, tests).

Both ends are runs like any other (detached supervisors, samples and raw output in the store,
visible from the Runs panel, surviving the UI): :func:`launch_pair` uses
:func:`racperf_tui.orchestration.runs.launch_run` twice. What it needs to know of the tool is the
tool module's ``PAIR`` (:class:`racperf_tui.core.contract.tool.PairSpec`):

1. adapt the client config to what is installed (``PAIR.adapt_client``: netperf drops -D
   and omni output its build lacks; the notes say so) and plan it on the client's node
   (:func:`racperf_tui.orchestration.runs.prepare_run`: what the client needs, oratcptest's
   java and jar, the probe client's python, is looked for there, the messages naming the
   node): a typo must not leave a server behind;
2. a server ``port`` of 0 is a free port: the server's own pick where its ready line names
   the port (the probe server), else one picked on the server's node
   (:func:`racperf_tui.core.ports.free_port_here`, :func:`~racperf_tui.core.ports.free_port_on`:
   from that node's socket tables), given to both ends; a taken port is refused before
   anything starts (:func:`racperf_tui.core.ports.check_listen_port` for a server here, with
   a suggested free port; a port of the database's is a warning);
3. launch the server run (``config["role"] = "server"``) and poll its raw output in the store
   for ``PAIR.ready_pattern``; ``PAIR.failure_pattern``, the server run ending, or
   ``PAIR.ready_timeout_s`` raise :class:`PairStartError` with the server's words, and the
   server run is stopped;
4. launch the client run (``peer_run_id`` names the server run); a client ``port`` of 0 /
   None gets the port the server's ready line names (the probe server with ``port: 0`` picks
   a free one), else the server's;
5. :func:`finish_pair` (after the client run ended) gives the server a moment to end by itself
   (``-1`` / ``--once``) and stops it otherwise; :func:`stop_pair` stops both.

:func:`recorded_pair` finds a recorded pair again from either end (a replay of it).

Blocking (polls with short sleeps): call it from a worker thread in the UI.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.tool import ROLE_OPTION, PairSpec, is_pair_end
from racperf_tui.core.ports import check_listen_port, free_port_here, free_port_on
from racperf_tui.core.remote.cluster import LOCAL, Node, host_for, server_address
from racperf_tui.core.remote.ssh_target import SshError, one_line
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.orchestration.runs import launch_run, prepare_run, stop_run
from racperf_tui.tools import load_tool

#: how often the store is read while waiting for the server
POLL_S = 0.05
#: how long a server that serves until stopped gets, once its client ended, to write what it
#: says of that client before it is stopped
SERVER_SETTLE_S = 0.5


class PairStartError(RuntimeError):
    """The server did not get ready; the message says why (with its own output)."""


@dataclass(frozen=True, slots=True)
class PairRuns:
    """The run ids of both ends, the port the client was given, and what to tell the user."""

    tool: str
    server_run_id: int
    client_run_id: int
    port: int | None
    # what follows is known only to the process that launched the pair (a UI reattaching to
    # it from the store rebuilds the four fields above): it does not take part in ==
    #: what was adapted before the start (e.g. "this netperf was built without --enable-demo")
    notes: tuple[str, ...] = field(default=(), compare=False)
    #: worth knowing, not blocking (e.g. "1521 is the default Oracle Net listener port")
    warnings: tuple[str, ...] = field(default=(), compare=False)
    #: when the server's ready line was seen in the store (epoch s); the client run started after
    server_ready_at: float | None = field(default=None, compare=False)


def pair_spec(tool: str) -> PairSpec:
    """The ``PAIR`` of a tool's module; ValueError when the tool has no server/client pair."""

    spec = getattr(load_tool(tool), "PAIR", None)
    if not isinstance(spec, PairSpec):
        raise ValueError(f"tool {tool!r} is not a server/client pair (its module has no PAIR)")
    return spec


def _tail(output: str) -> str:
    return " / ".join(output.strip().splitlines()[-3:])


def wait_for_server_ready(
    server_run_id: int,
    data_dir: Path,
    ready: re.Pattern[str],
    failure: re.Pattern[str] | None,
    timeout_s: float,
    *,
    failure_hint: str = "use another port",
) -> re.Match[str]:
    """Poll the server run's output until ``ready`` matches; PairStartError otherwise."""
    deadline = time.monotonic() + timeout_s
    with Store.open(Path(data_dir)) as store:
        while True:
            # its output only: the run's input files (the probe server's source) are raw
            # output too, and their text must not read as the server's words
            output = store.raw_output(server_run_id, "stdout") + store.raw_output(server_run_id, "stderr")
            match = ready.search(output)
            if match:
                return match
            if failure is not None and failure.search(output):
                raise PairStartError(f"the server could not listen: {_tail(output)}; {failure_hint}")
            record = store.get_run(server_run_id)
            if record.state.finished:
                raise PairStartError(
                    f"the server run ended ({record.state.value}: "
                    f"{record.message or 'no message'}) before it was ready: "
                    f"{_tail(output) or '(no output)'}"
                )
            if time.monotonic() >= deadline:
                raise PairStartError(
                    f"the server did not say it was ready within {timeout_s:g} s "
                    f"(waiting for {ready.pattern!r}); its output: "
                    f"{_tail(output) or '(no output)'}"
                )
            time.sleep(POLL_S)


def _check_port(tool: str, spec: PairSpec, server_cfg: Mapping[str, Any]) -> str | None:
    """A taken port (or one of the database's) fails here, with a suggestion, not in the tool.
    Returns the warning worth showing, if any."""

    port = int(server_cfg.get("port", spec.default_port) or 0)
    if port == 0:
        return None  # the server picks a free one
    bind = str(server_cfg.get("bind") or server_cfg.get("host") or "")
    if bind in ("0.0.0.0", "::"):
        bind = ""
    check = check_listen_port(port, bind, what=spec.server_name or f"the {tool} server")
    if not check.ok:
        raise PairStartError(check.problem or f"cannot listen on port {port}")
    return check.warning or None


def pair_ports(server_cfg: dict[str, Any], client_cfg: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """How a pair's port is chosen, the one rule of `racperf pair`, the Network tab and the
    matrix: a port given to one end only is the server's; none given is 0, a port free where
    the server runs, picked there (:func:`pick_server_port`, or by the server itself), never a
    tool's fixed default that a listener on a DB node may hold. The client goes where the
    server said it listens."""
    server_cfg, client_cfg = dict(server_cfg), dict(client_cfg)
    if "port" not in server_cfg:
        server_cfg["port"] = client_cfg.get("port") or 0
    return server_cfg, client_cfg


def pick_server_port(spec: PairSpec, server_cfg: Mapping[str, Any], server_node: Node) -> int | None:
    """The port to give a server whose config asks for a free one (port 0) and that cannot
    pick one and say which (no ``port`` group in its ready pattern): free on the server's node
    now. None when the config names a port or the server picks itself. ValueError, OSError
    (the node cannot be reached)."""
    if int(server_cfg.get("port", spec.default_port) or 0) != 0 or "port" in spec.ready_pattern.groupindex:
        return None
    if server_node.is_local:
        bind = str(server_cfg.get("bind") or server_cfg.get("host") or "")
        try:
            return free_port_here("" if bind in ("0.0.0.0", "::") else bind)
        except OSError as exc:  # an address not of this host: a usage error, not a node's
            raise ValueError(f"cannot pick a free port on {bind or 'this host'} here: {exc.strerror or exc}") from None
    try:
        return free_port_on(host_for(server_node))
    except SshError as exc:  # which node, and why, in one line (as launch_run says it)
        raise SshError(f"node {server_node.name}: {one_line(exc)}") from None


def launch_pair(
    tool: str,
    server_config: Mapping[str, Any],
    client_config: Mapping[str, Any],
    *,
    data_dir: Path,
    ready_timeout_s: float | None = None,
    server_node: Node = LOCAL,
    client_node: Node = LOCAL,
) -> PairRuns:
    """Start the server run, wait until it is ready, start the client run (see module doc).

    ``server_node`` / ``client_node``: where each end runs (this machine by default); a
    client config without ``host`` goes to the server node's interconnect address
    (``cluster.server_address``: this host's is the one it routes to the client's node from)
    when the ends are on different nodes. The port: :func:`pair_ports`.
    ``ready_timeout_s`` defaults to the tool's (``PAIR.ready_timeout_s``). Raises what
    :func:`launch_run` raises (ValueError for a bad config, ToolNotFound, SshError, ...)
    and PairStartError; on any failure after the server run started, it is stopped.
    """

    spec = pair_spec(tool)
    timeout_s = spec.ready_timeout_s if ready_timeout_s is None else ready_timeout_s
    server_cfg, client_cfg = pair_ports(dict(server_config, role="server"), dict(client_config, role="client"))
    if not client_cfg.get("host") and server_node != client_node:
        client_cfg["host"] = server_address(server_node, client_node)
    client_cfg, notes = spec.adapted_client(client_cfg)
    # the client planned on its node before anything starts (a typo must not leave a server
    # behind): its program and files are looked for there, not here (the server's are by its
    # launch_run, on its node)
    prepare_run(tool, dict(client_cfg, port=client_cfg.get("port") or 1), client_node)
    picked = pick_server_port(spec, server_cfg, server_node)
    if picked is not None:
        server_cfg["port"] = picked
    # a port is judged free here only for a server here (another node's ports are its own)
    warning = _check_port(tool, spec, server_cfg) if server_node.is_local else None
    server_run_id = launch_run(tool, server_cfg, data_dir=Path(data_dir), node=server_node)
    try:
        match = wait_for_server_ready(
            server_run_id,
            Path(data_dir),
            spec.ready_pattern,
            spec.failure_pattern,
            timeout_s,
            failure_hint=spec.failure_hint,
        )
        ready_at = time.time()
        # a client without a port goes where the server listens: the port its ready line
        # names (a server given port 0 picked it), else the server's configured port
        port = client_cfg.get("port") or match.groupdict().get("port") or server_cfg.get("port", spec.default_port)
        port = client_cfg["port"] = int(port) if port else None
        client_cfg["peer_run_id"] = server_run_id
        client_run_id = launch_run(tool, client_cfg, data_dir=Path(data_dir), node=client_node)
    except BaseException:
        stop_run(server_run_id, Path(data_dir), grace_s=5.0)
        raise
    return PairRuns(
        tool,
        server_run_id,
        client_run_id,
        port,
        notes=tuple(notes),
        warnings=(warning,) if warning else (),
        server_ready_at=ready_at,
    )


def finish_pair(pair: PairRuns, data_dir: Path, grace_s: float = 5.0) -> None:
    """After the client run ended: wait up to ``grace_s`` for a server that exits after one
    client (its ``PAIR.once_option``), :data:`SERVER_SETTLE_S` for one that serves until
    stopped (its last lines about the client written), then stop it."""
    with Store.open(Path(data_dir)) as store:
        server = store.get_run(pair.server_run_id)
        if not _ends_after_one_client(pair.tool, server.config):
            grace_s = min(grace_s, SERVER_SETTLE_S)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if store.get_run(pair.server_run_id).state.finished:
                return
            time.sleep(POLL_S)
    stop_run(pair.server_run_id, Path(data_dir), grace_s=5.0)


def _ends_after_one_client(tool: str, server_config: Mapping[str, Any]) -> bool:
    """Does this server exit by itself once its client is done (iperf3 -1, the probe's --once)?"""
    try:
        spec = pair_spec(tool)
    except ValueError:
        return True  # a tool no longer installed: wait as before
    return bool(spec.once_option) and bool(server_config.get(spec.once_option, True))


def stop_pair(pair: PairRuns, data_dir: Path) -> None:
    """Stop both ends (client first, so the server sees its EOF)."""
    stop_run(pair.client_run_id, Path(data_dir), grace_s=5.0)
    finish_pair(pair, data_dir, grace_s=2.0)


def recorded_pair(store: Store, run_id: int) -> tuple[RunRecord, RunRecord] | None:
    """(server, client) of the recorded pair ``run_id`` is an end of, found from either end
    (the client's ``peer_run_id``; a server is named by its client only); None when the run is
    no end of a pair; ValueError naming the run or the end that is not in the store."""
    try:
        run = store.get_run(run_id)
    except KeyError:
        raise ValueError(f"no run {run_id} in the store") from None
    if not is_pair_end(run.config):
        return None
    if run.config.get(ROLE_OPTION) == "server":
        client = store.peer_client(run.id)
        return None if client is None else (run, client)
    peer = run.config["peer_run_id"]
    try:
        return store.get_run(int(peer)), run
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"run {run_id} is the {run.tool} client of run {peer}, which is not in the store") from None
