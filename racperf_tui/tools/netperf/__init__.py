"""netperf / netserver: the classic network benchmark (netperf.org, 2.x), both ends.

``netserver -p PORT -D`` listens (``-D``: stay in the foreground, so racperf owns it);
``netperf -H HOST -p PORT -t TCP_RR|TCP_STREAM|UDP_RR|UDP_STREAM -l SECONDS [-D INTERVAL]
[-P 0|1] [-c] [-C] -- [-m B] [-M B] [-r REQ,RESP] [-s B] [-S B] [-o|-O|-k SELECTORS]`` measures.

Output understood (see tests/fixtures/netperf, real netperf 2.7.0 / 2.7.1 outputs):

* the classic result blocks of each test, with or without the banner and headers (``-P``),
  with CPU columns (``-c -C``);
* interim results of builds configured with ``--enable-demo`` (``-D``), as human lines
  ("Interim result: 8064.58 Trans/s over 1.275 seconds ending at 1796005365.201"), CSV lines
  (with ``-o``) and NETPERF_INTERIM_RESULT[i] keys (with ``-k``);
* omni output selectors (netperf >= 2.5): ``-o`` CSV, ``-O`` columns, ``-k`` KEY=VALUE, kept as a
  dict of selectors and mapped to the common keys (``trans_per_s``, ``throughput_mbit_s``,
  ``mean_latency_us``, ``p99_latency_us``, ``local_cpu_util_pct`` ...).

Throughput is normalised to ``throughput_mbit_s`` (10^6 bits/s, netperf's default unit).
Whether the build has ``-D`` and omni is detected by
:func:`~racperf_tui.tools.netperf.capabilities.detect_capabilities`
(``netperf -D 1 -V``: a build without demo support says "Sorry, Demo Mode not configured into
this netperf" before printing its version).

The roles: :mod:`~racperf_tui.tools.netperf.config` (one end's config),
:mod:`~racperf_tui.tools.netperf.capabilities` (what a build can do),
:mod:`~racperf_tui.tools.netperf.result` (the output formats),
:mod:`~racperf_tui.tools.netperf.stream` (the live interim results),
:mod:`~racperf_tui.tools.netperf.plan` (argv, limits, the Invocation) and
:mod:`~racperf_tui.tools.netperf.pair` (the two ends); here the description and :data:`TOOL`.
"""

from __future__ import annotations

from racperf_tui.core.contract.tool import RUNS, MetricSpec, ToolDescription, options_from_dataclass
from racperf_tui.tools.base import ModuleTool
from racperf_tui.tools.netperf.config import BYTE_OPTIONS, TESTS, WHOLE_NUMBER_OPTIONS, NetperfConfig
from racperf_tui.tools.netperf.pair import PAIR
from racperf_tui.tools.netperf.plan import build_argv, hard_limit_s, invocation, tool_version
from racperf_tui.tools.netperf.result import parse_output, parse_result, succeeded
from racperf_tui.tools.netperf.stream import NetperfStreamParser, stream_parser

name = "netperf"


install_hint = (
    "netperf is not in most distributions' main repositories: Debian/Ubuntu: apt-get install "
    "netperf (non-free/multiverse); RHEL/OL: from EPEL or build from "
    "https://github.com/HewlettPackard/netperf (./configure --enable-demo for interim results)"
)


_HELP = {
    "role": "which end this run is",
    "host": "client: where netserver runs; server: the address to listen on (empty: all)",
    "port": "netserver's control port (-p)",
    "netperf": "the netperf program",
    "netserver": "the netserver program",
    "test": "the test (-t)",
    "duration_s": "seconds to run (-l)",
    "interim_s": "seconds between live figures (-D; builds with --enable-demo)",
    "print_headers": "netperf's banner and headers (-P)",
    "local_cpu": "measure this end's CPU (-c)",
    "remote_cpu": "measure the other end's CPU (-C)",
    "send_size_bytes": "STREAM: send size (-m)",
    "recv_size_bytes": "STREAM: receive size (-M)",
    "request_bytes": "RR: request size (-r)",
    "response_bytes": "RR: response size (-r)",
    "local_sockbuf_bytes": "this end's socket buffer (-s)",
    "remote_sockbuf_bytes": "the other end's socket buffer (-S)",
    "omni_output": "omni output: csv (-o), human (-O), keyval (-k), or none",
    "omni_selectors": "omni output selectors (e.g. THROUGHPUT,P99_LATENCY)",
    "server_lifetime_s": "seconds before a server run ends by itself",
}
OPTIONS = options_from_dataclass(
    NetperfConfig,
    _HELP,
    choices={"role": ("client", "server"), "test": TESTS},
    ends={"netserver": "server", "server_lifetime_s": "server"},
    kinds={"netperf": "path", "netserver": "path"}
    | dict.fromkeys(("interim_s", "server_lifetime_s"), "duration")
    | dict.fromkeys(WHOLE_NUMBER_OPTIONS, "count"),
    access={"netperf": RUNS, "netserver": RUNS},
    units={"duration_s": "seconds"} | dict.fromkeys(BYTE_OPTIONS, "bytes"),
)
METRICS = (
    MetricSpec("trans_per_s", "transactions", "trans/s", chart="trans", quantity="transaction_rate"),
    MetricSpec("rt_latency_us", "round trip", "µs", chart="latency", quantity="latency"),
    MetricSpec("throughput_mbit_s", "throughput", "Mbit/s", chart="throughput_mbit", quantity="throughput"),
)
RESULTS = (
    MetricSpec("throughput_mbit_s", "throughput", "Mbit/s", quantity="throughput"),
    MetricSpec("trans_per_s", "transactions", "trans/s", quantity="transaction_rate"),
    MetricSpec("rt_latency_us", "round trip", "µs", quantity="latency"),
    # omni output's P50_LATENCY / P99_LATENCY (whole µs): an RR test's round trips, a STREAM
    # test's send calls (quantities.result_round_trip_ms takes them of a result with a rate of
    # transactions only)
    MetricSpec("p50_latency_us", "latency p50", "µs", quantity="latency_p50", better="lower"),
    MetricSpec("p99_latency_us", "latency p99", "µs", quantity="latency_p99", better="lower"),
    MetricSpec("loss_pct", "lost (UDP_STREAM)", "%", decimals=3, quantity="loss", better="lower"),
    MetricSpec("elapsed_s", "elapsed", "s", decimals=2),
)
DESCRIPTION = ToolDescription(
    name=name,
    summary="request/response latency and stream throughput",
    install_hint=install_hint,
    options=OPTIONS,
    metrics=METRICS,
    results=RESULTS,
)

#: The Tool (racperf_tui.core.contract.tool.Tool). netserver says "Unable to start netserver ..." on
#: stderr and getopt errors go there too, so both are read.
TOOL = ModuleTool(
    name,
    build_argv=build_argv,
    stream_parser=stream_parser,
    parse_result=parse_result,
    succeeded=succeeded,
    hard_limit_s=hard_limit_s,
    tool_version=tool_version,
    install_hint=install_hint,
    merge_stderr=True,
    stop_grace_s=2.0,
    description=DESCRIPTION,
    invocation=invocation,
)

__all__ = [
    "PAIR",
    "TOOL",
    "NetperfConfig",
    "NetperfStreamParser",
    "build_argv",
    "hard_limit_s",
    "install_hint",
    "invocation",
    "parse_output",
    "parse_result",
    "stream_parser",
    "succeeded",
    "tool_version",
]
