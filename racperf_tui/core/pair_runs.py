"""A server/client pair as two recorded runs: the server run first, the client run once the
server said it is ready.

:mod:`racperf_tui.core.pair` runs a pair inside one process (CLI, tests). The UI instead wants
both ends to be runs like any other (detached supervisors, samples and raw output in the store,
visible from the Runs panel, surviving the UI), so this module uses
:func:`racperf_tui.core.runs.launch_run` twice:

1. launch the server run (``config["role"] = "server"``);
2. poll its raw output in the store for the tool's readiness line (``READY_PATTERN`` or
   ``SERVER_READY_RE`` of the tool module); a failure line (``PORT_IN_USE_PATTERN`` /
   ``SERVER_PORT_IN_USE_RE``), the server run ending, or the timeout raises
   :class:`PairStartError` with the server's words, and the server run is stopped;
3. launch the client run; when the server's ready line names the port (the probe server with
   ``port: 0`` picks a free one and says which), a client ``port`` of 0 / None gets it;
4. :func:`finish_pair` (after the client run ended) gives the server a moment to end by itself
   (``-1`` / ``--once``) and stops it otherwise.

Blocking (polls with short sleeps): call it from a worker thread in the UI.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from racperf_tui.core.runs import launch_run, stop_run
from racperf_tui.core.store import Store

#: how long the server may take to say it is listening
DEFAULT_READY_TIMEOUT_S = 15.0
POLL_S = 0.05


class PairStartError(RuntimeError):
    """The server did not get ready; the message says why (with its own output)."""


@dataclass(frozen=True, slots=True)
class PairRuns:
    """The run ids of both ends, and the port the client was given."""

    tool: str
    server_run_id: int
    client_run_id: int
    port: int | None


def _tool_patterns(tool: str) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    from racperf_tui.tools import load_tool

    module = load_tool(tool)
    ready = getattr(module, "READY_PATTERN", None) or getattr(module, "SERVER_READY_RE", None)
    if ready is None:
        raise ValueError(f"tool {tool!r} has no server readiness pattern (READY_PATTERN)")
    failure = getattr(module, "PORT_IN_USE_PATTERN", None) or getattr(module, "SERVER_PORT_IN_USE_RE", None)
    return ready, failure


def wait_for_server_ready(server_run_id: int, data_dir: Path, ready: re.Pattern[str],
                          failure: re.Pattern[str] | None, timeout_s: float) -> re.Match[str]:
    """Poll the server run's output until ``ready`` matches; PairStartError otherwise."""
    deadline = time.monotonic() + timeout_s
    with Store.open(Path(data_dir)) as store:
        while True:
            output = store.raw_output(server_run_id, None)
            match = ready.search(output)
            if match:
                return match
            if failure is not None and failure.search(output):
                tail = " / ".join(output.strip().splitlines()[-3:])
                raise PairStartError(f"the server could not listen: {tail}; use another port")
            record = store.get_run(server_run_id)
            if record.state.finished:
                tail = " / ".join(output.strip().splitlines()[-3:]) or "(no output)"
                raise PairStartError(f"the server run ended ({record.state.value}: "
                                     f"{record.message or 'no message'}) before it was ready: {tail}")
            if time.monotonic() >= deadline:
                tail = " / ".join(output.strip().splitlines()[-3:]) or "(no output)"
                raise PairStartError(f"the server did not say it was ready within {timeout_s:g} s "
                                     f"(waiting for {ready.pattern!r}); its output: {tail}")
            time.sleep(POLL_S)


def _check_port(server_cfg: Mapping[str, Any]) -> None:
    """A taken port (or one of the database's) fails here, with a suggestion, not in the tool."""
    from racperf_tui.core.ports import check_listen_port

    port = int(server_cfg.get("port") or 0)
    if port == 0:
        return  # the server picks a free one
    bind = str(server_cfg.get("bind") or server_cfg.get("host") or "")
    if bind in ("0.0.0.0", "::"):
        bind = ""
    check = check_listen_port(port, bind, what=f"the {server_cfg.get('tool', 'benchmark')} server")
    if not check.ok:
        raise PairStartError(check.problem or f"cannot listen on port {port}")


def launch_pair(tool: str, server_config: Mapping[str, Any], client_config: Mapping[str, Any], *,
                data_dir: Path, ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S) -> PairRuns:
    """Start the server run, wait until it is ready, start the client run (see module doc).

    Raises what :func:`launch_run` raises (ValueError for a bad config, ToolNotFound, ...)
    and PairStartError; on any failure after the server run started, it is stopped.
    """
    ready, failure = _tool_patterns(tool)
    server_cfg = dict(server_config, role="server")
    client_cfg = dict(client_config, role="client")
    # validate the client before anything starts: a typo must not leave a server behind
    from racperf_tui.tools import load_tool

    probe_cfg = dict(client_cfg)
    if not probe_cfg.get("port"):
        probe_cfg["port"] = 1
    load_tool(tool).TOOL.build_argv(probe_cfg)
    _check_port(server_cfg)
    server_run_id = launch_run(tool, server_cfg, data_dir=Path(data_dir))
    try:
        match = wait_for_server_ready(server_run_id, Path(data_dir), ready, failure, ready_timeout_s)
        port = client_cfg.get("port")
        named = match.groupdict().get("port") if match.re.groupindex else None
        if not port and named:
            port = int(named)
        client_cfg["port"] = port
        client_cfg["peer_run_id"] = server_run_id
        client_run_id = launch_run(tool, client_cfg, data_dir=Path(data_dir))
    except BaseException:
        stop_run(server_run_id, Path(data_dir), grace_s=5.0)
        raise
    return PairRuns(tool, server_run_id, client_run_id, int(port) if port else None)


def finish_pair(pair: PairRuns, data_dir: Path, grace_s: float = 5.0) -> None:
    """After the client run ended: wait up to ``grace_s`` for the server run, then stop it."""
    deadline = time.monotonic() + grace_s
    with Store.open(Path(data_dir)) as store:
        while time.monotonic() < deadline:
            if store.get_run(pair.server_run_id).state.finished:
                return
            time.sleep(POLL_S)
    stop_run(pair.server_run_id, Path(data_dir), grace_s=5.0)


def stop_pair(pair: PairRuns, data_dir: Path) -> None:
    """Stop both ends (client first, so the server sees its EOF)."""
    stop_run(pair.client_run_id, Path(data_dir), grace_s=5.0)
    finish_pair(pair, data_dir, grace_s=2.0)
