"""fio's client output, recorded here (fio 3.33, two servers on 127.0.0.1, two jobs each with
their header lines; one server of two reached), read by fio_client_server_result: the figures
are fio's, and damaged output (cut anywhere, figures that are no numbers) is a FioParseError
naming the field, never another exception."""

from __future__ import annotations

import json
import re

import pytest

from racperf_tui.tools.fio.client_server_result import parse_output, succeeded
from racperf_tui.tools.fio.figures import FioParseError
from tests.helpers import TESTS_DIR

FIXTURES = TESTS_DIR / "fixtures" / "fio_cs"
TWO_SERVERS = FIXTURES / "fio-3.33-client-2servers-2jobs.json"
ONE_OF_TWO = FIXTURES / "fio-3.33-client-1of2-servers.json"


def _report(text: str) -> dict:
    lines = text.splitlines()
    return json.loads("\n".join(lines[lines.index("{") :]))


def test_two_servers_two_jobs_each_add_up_per_host() -> None:
    text = TWO_SERVERS.read_text()
    own = _report(text)["client_stats"]
    result = parse_output(text, ["127.0.0.1:8765", "127.0.0.1:8766"])
    assert result["missing_servers"] == []
    assert [h["server"] for h in result["hosts"]] == ["127.0.0.1:8765", "127.0.0.1:8766"]
    for host in result["hosts"]:
        jobs = [e for e in own if e["jobname"] != "All clients" and e["port"] == host["port"]]
        assert host["jobs"] == len(jobs) == 2
        for direction in ("read", "write"):
            assert host[direction]["io_bytes"] == sum(j[direction]["io_bytes"] for j in jobs) > 0
            assert host[direction]["total_ios"] == sum(j[direction]["total_ios"] for j in jobs)
            assert host[direction]["iops"] == pytest.approx(sum(j[direction]["iops"] for j in jobs))
    (all_clients,) = [e for e in own if e["jobname"] == "All clients"]
    assert result["total"]["read"]["iops"] == all_clients["read"]["iops"]
    assert result["total"]["write"]["io_bytes"] == all_clients["write"]["io_bytes"]
    assert result["total"]["jobs"] == 4
    assert result["total_iops"] == pytest.approx(all_clients["read"]["iops"] + all_clients["write"]["iops"])
    assert sorted(d["server"] for d in result["disk_util"]) == ["127.0.0.1:8765", "127.0.0.1:8766"]
    assert result["messages"] == []  # the servers' header lines are not messages
    assert succeeded(result, 0) == (True, "2 server(s)")


def test_one_server_of_two_its_figures_are_the_total_and_the_other_is_named() -> None:
    result = parse_output(ONE_OF_TWO.read_text(), ["127.0.0.1:8765", "127.0.0.1:8767"])
    (host,) = result["hosts"]
    assert result["total"]["read"] == {k: v for k, v in host["read"].items()}
    assert result["total"]["source"] == "the one server's figures"
    assert result["missing_servers"] == ["127.0.0.1:8767"]
    ok, message = succeeded(result, 0)
    assert not ok and "no figures from fio server 127.0.0.1:8767" in message


def test_output_cut_anywhere_is_a_result_or_a_clear_error() -> None:
    lines = TWO_SERVERS.read_text().splitlines()
    for cut in range(0, len(lines), 7):
        try:
            result = parse_output("\n".join(lines[:cut]))
        except FioParseError as exc:
            assert str(exc)
        else:
            assert result["hosts"]


@pytest.mark.parametrize(
    ("replacement", "what"),
    [("NaN", "not a finite number"), ("-5", "negative"), ("1e999", "not a finite"), ('"many"', "not a number")],
)
def test_a_figure_that_is_no_number_is_named(replacement: str, what: str) -> None:
    text = TWO_SERVERS.read_text()
    damaged = re.sub(r'("iops" : )[0-9.]+', lambda m: m.group(1) + replacement, text, count=1)
    with pytest.raises(FioParseError, match=rf"client_stats\[0\]\.read\.iops: .*{what}"):
        parse_output(damaged)


def test_an_entry_without_its_host_is_refused() -> None:
    text = TWO_SERVERS.read_text().replace('"hostname" : "127.0.0.1"', '"hostname" : ""', 1)
    with pytest.raises(FioParseError, match=r"client_stats\[0\]: no hostname"):
        parse_output(text)
