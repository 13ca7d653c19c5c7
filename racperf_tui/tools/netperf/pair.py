"""The two ends: how racperf runs netserver and netperf as a pair (:data:`PAIR`, read by
racperf_tui.orchestration.pair_runs) and the client adapted to this machine's netperf."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from racperf_tui.core.contract.tool import PairMode, PairSpec, ProgramField
from racperf_tui.tools.netperf.capabilities import adapt_to_capabilities, detect_capabilities
from racperf_tui.tools.netperf.config import DEFAULT_CONTROL_PORT, NetperfConfig
from racperf_tui.tools.netperf.result import SERVER_FAILED_RE, SERVER_READY_RE


def adapt_client(config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Ask the client's netperf here what it supports; drop the options it lacks (-D, omni),
    saying so. No netperf here: the config as it is (a client on another node is adapted to
    that node's build by :func:`~racperf_tui.tools.netperf.plan.invocation`; one here is refused as not installed)."""
    # only its program is read here: a port of 0 / None is launch_pair's to give (a free one),
    # not a bad config (the Network tab's "0: free" was refused here)
    cfg = NetperfConfig.from_mapping({**config, "role": "client", "port": config.get("port") or DEFAULT_CONTROL_PORT})
    try:
        caps = detect_capabilities(cfg.netperf)
    except ValueError:
        return dict(config), []
    return adapt_to_capabilities(config, caps)


#: How both ends run (read by racperf_tui.orchestration.pair_runs).
PAIR = PairSpec(
    ready_pattern=SERVER_READY_RE,
    failure_pattern=SERVER_FAILED_RE,
    default_port=DEFAULT_CONTROL_PORT,
    failure_hint="pick another port",
    server_name="netserver",
    adapt_client=adapt_client,
    modes=(
        PairMode("TCP_STREAM", {"test": "TCP_STREAM"}),
        # RR tests in omni output (-k): its P50_LATENCY / P99_LATENCY are the round trips'
        # percentiles (netperf >= 2.5; an older build's client is adapted to classic output)
        PairMode("TCP_RR", {"test": "TCP_RR", "omni_output": "keyval"}, latency_only=True),
        PairMode("UDP_STREAM", {"test": "UDP_STREAM"}),
        PairMode("UDP_RR", {"test": "UDP_RR", "omni_output": "keyval"}, latency_only=True),
    ),
    client_fields={"host": "host", "port": "port", "duration_s": "duration_s", "interval_s": "interim_s"},
    server_fields={"host": "host", "port": "port"},
    program=ProgramField(
        "netperf directory",
        "directory of netperf and netserver (blank: PATH)",
        "netperf.dir",
        (("netperf", "netperf"), ("netserver", "netserver")),
    ),
)
