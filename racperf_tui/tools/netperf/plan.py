"""The run: the command line of either end, its hard limit, the Invocation (a client on another
node adapted to the netperf build there) and the version line."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from racperf_tui.core.contract.invocation import Invocation
from racperf_tui.tools.base import on_another_node, program_output
from racperf_tui.tools.netperf.capabilities import adapt_to_capabilities, detect_capabilities_on
from racperf_tui.tools.netperf.config import NetperfConfig

if TYPE_CHECKING:
    from racperf_tui.core.contract.hosts import Host

#: Seconds allowed beyond -l for control-connection set-up and the final exchange.
SETUP_ALLOWANCE_S = 30.0


def build_argv(config: Mapping[str, Any]) -> list[str]:
    """netperf's (role client) or netserver's (role server) exact command line."""
    cfg = NetperfConfig.from_mapping(config)
    return cfg.server_argv() if cfg.role == "server" else cfg.client_argv()


def hard_limit_s(config: Mapping[str, Any]) -> float:
    """Client: -l plus set-up slack. Server: its lifetime."""
    cfg = NetperfConfig.from_mapping(config)
    if cfg.role == "server":
        return float(cfg.server_lifetime_s)
    return cfg.duration_s * 1.1 + SETUP_ALLOWANCE_S


def invocation(config: Mapping[str, Any], run_dir: str | None = None, host: Host | None = None) -> Invocation:
    """The run on ``host``: a client on another node drops what that node's netperf build
    cannot do (-D, omni), saying so in the notes; everything else as :func:`build_argv`."""
    notes: list[str] = []
    cfg = NetperfConfig.from_mapping(config)
    if cfg.role == "client" and on_another_node(host):
        adapted, notes = adapt_to_capabilities(config, detect_capabilities_on(host, cfg.netperf))
        config = adapted
    return Invocation(argv=build_argv(config), hard_limit_s=float(hard_limit_s(config)), notes=tuple(notes))


def tool_version(argv: list[str], host: Host | None = None) -> str | None:
    """``netperf -V`` / ``netserver -V`` on the run's host: "Netperf version 2.7.1"."""
    match = re.search(r"Netperf version \S+", program_output([argv[0], "-V"], host=host) or "")
    return match[0] if match else None
