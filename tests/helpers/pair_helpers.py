"""Run a server/client pair of recorded runs to its end (core/pair_runs) and read back what
the store holds of both ends: what the two-ended tool tests assert on.

Both runs are stopped on every path: the client if it outlives the wait, the server always.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from racperf_tui.core.contract.events import Sample
from racperf_tui.core.store import RunRecord, Store
from racperf_tui.orchestration.pair_runs import PairRuns, finish_pair, launch_pair
from racperf_tui.orchestration.runs import stop_run, wait_for_run


@dataclass
class FinishedPair:
    """Both ends of a finished pair, as recorded."""

    pair: PairRuns
    client: RunRecord
    server: RunRecord
    samples: list[Sample]
    client_result: dict[str, Any] | None
    server_result: dict[str, Any] | None
    server_output: str


def run_pair_to_end(
    tool: str,
    server_config: dict[str, Any],
    client_config: dict[str, Any],
    data_dir: Path,
    timeout_s: float = 30.0,
    **launch_options: Any,
) -> FinishedPair:
    """launch_pair, wait for the client run, finish_pair; then read both runs from the store."""
    pair = launch_pair(tool, server_config, client_config, data_dir=data_dir, **launch_options)
    try:
        wait_for_run(pair.client_run_id, data_dir, timeout_s)
    finally:
        if not wait_for_run(pair.client_run_id, data_dir, 0).state.finished:
            stop_run(pair.client_run_id, data_dir, grace_s=5.0)
        finish_pair(pair, data_dir, grace_s=0.1)
    with Store.open(data_dir) as store:
        return FinishedPair(
            pair=pair,
            client=store.get_run(pair.client_run_id),
            server=store.get_run(pair.server_run_id),
            samples=[s for _, s in store.samples(pair.client_run_id)],
            client_result=store.result(pair.client_run_id),
            server_result=store.result(pair.server_run_id),
            server_output=store.raw_output(pair.server_run_id, None),
        )


def assert_client_started_after_server_ready(done: FinishedPair, ready_line: str) -> None:
    """The ordering, from the store: the server run started, printed its ready line, and only
    then was the client run recorded (and told which server run it belongs to)."""
    assert ready_line in done.server_output
    assert done.pair.server_ready_at is not None
    assert done.server.started_at <= done.pair.server_ready_at <= done.client.started_at
    assert done.client.config["peer_run_id"] == done.server.id
    assert done.server.config["role"] == "server" and done.client.config["role"] == "client"


def probe_pair_command(racperf: list[str], data_dir: Path, *args: str) -> list[str]:
    """``racperf pair probe`` (``racperf``: how the CLI is started) with its server on 127.0.0.1,
    and ``args`` after."""
    return [*racperf, "pair", "probe", "--data-dir", str(data_dir), "--server", "bind=127.0.0.1", *args]


#: a one-second probe pair on 127.0.0.1 with live figures every 0.25 s, the server on a free port
SHORT_PROBE_PAIR = (
    "--server",
    "port=0",
    "--set",
    "host=127.0.0.1",
    "--set",
    "duration_s=1",
    "--set",
    "interval_s=0.25",
)
