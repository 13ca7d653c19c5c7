"""ORION: its parsers on every sample (tests/fixtures/orion), the planned matrix, the config,
the Invocation, ORACLE_HOME discovery, the live progress."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from racperf_tui.core import settings
from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.tools import orion, tool_description, tool_modules
from racperf_tui.tools.orion.oracle_home import SETTING_ORACLE_HOME, resolve_binary
from tests.helpers import FIXTURES, REPO, racperf_cmd

ORION_FIXTURES = FIXTURES / "orion"
S112 = ORION_FIXTURES / "11.2.0.4-advanced-stdout.txt"
D111 = ORION_FIXTURES / "11.1.0.7"
D19 = ORION_FIXTURES / "reconstructed-19c"


# --------------------------------------------------------------------------- parsers


def test_parse_11_2_advanced_stdout() -> None:
    result = orion.parse_output(S112.read_text())
    assert result["tool"] == "orion" and result["version"] == "11.2.0.4.0"
    assert result["testname"] == "tlun" and result["run_stamp"] == "20220904_1717"
    assert result["max_large_mbps"] == 74.07 and result["max_large_mbps_at"] == {"small": 0, "large": 6}
    assert result["max_small_iops"] == 9583 and result["max_small_iops_at"] == {"small": 6, "large": 0}
    assert result["min_small_latency_us"] == 208 and result["min_small_latency_at"] == {"small": 1, "large": 0}
    assert result["small_read_latency_us"] == {
        "avg": 623,
        "min": 85,
        "max": 10795,
        "stdev": 257,
        "at": {"small": 6, "large": 0},
    }
    assert result["small_write_latency_us"] == {
        "avg": 627,
        "min": 94,
        "max": 10431,
        "stdev": 243,
        "at": {"small": 6, "large": 0},
    }
    # the latencies at the minimum-latency point are kept too
    assert [(l["kind"], l["avg"], l["at"]["small"]) for l in result["latencies"]] == [
        ("read", 623, 6),
        ("write", 627, 6),
        ("read", 232, 1),
        ("write", 151, 1),
    ]
    histogram = result["histogram"]
    assert len(histogram) == 28 and result["histogram_at"] == {"small": 1, "large": 0}
    assert histogram[0] == {"low_us": 0, "high_us": 1, "read": 0, "write": 0}
    assert histogram[6] == {"low_us": 64, "high_us": 128, "read": 42901, "write": 42021}
    assert histogram[-1]["high_us"] == 268435456
    assert sum(r["read"] for r in histogram) == 42901 + 98451 + 57190 + 2413 + 522 + 126 + 15
    assert result["orion_estimate_s"] == 23 * 60


def test_parse_11_1_summary_latency_in_ms_becomes_us() -> None:
    result = orion.parse_output((D111 / "simple-vdb_summary.txt").read_text())
    assert result["version"] == "11.1.0.7.0" and result["testname"] == "orion"
    assert result["max_large_mbps"] == 1554.54 and result["max_large_mbps_at"] == {"small": 0, "large": 2}
    assert result["max_small_iops"] == 19019 and result["max_small_iops_at"] == {"small": 5, "large": 0}
    assert result["min_small_latency_us"] == 260.0  # "Minimum Small Latency=0.26": ms, unitless
    assert result["min_small_latency_at"] == {"small": 5, "large": 0}
    assert result["total_data_points"] == 8 and result["duration_s"] == 60
    assert result["small_columns"] == [0] and result["large_columns"] == [0, 1, 2]
    assert result["luns"] == [{"name": "/dev/vdb", "size_bytes": 21474836480}]
    assert "histogram" not in result and "small_read_latency_us" not in result


def test_parse_11_1_matrices() -> None:
    iops = orion.parse_csv((D111 / "rjx_20130805_1550_iops.csv").read_text())
    assert iops == {
        "small_loads": [1, 2, 3, 4, 5],
        "large_loads": [0, 1, 2],
        "values": [[2302, 4398, 5450, 6006, 6210], [None] * 5, [None] * 5],
    }
    mbps = orion.parse_csv((D111 / "rjx_20130805_1550_mbps.csv").read_text())
    assert mbps == {"small_loads": [0], "large_loads": [1, 2], "values": [[271.58], [374.26]]}
    files = {p.name: p.read_text() for p in D111.glob("rjx_*")}
    # with an 11.1 summary beside them the unit comes from the version
    files["rjx_20130805_1550_summary.txt"] = (D111 / "simple-vdb_summary.txt").read_text()
    result = orion.parse_result_files("", files)
    assert result["lat"]["values"][0] == [430.0, 450.0, 550.0, 670.0, 800.0]
    assert result["lat"]["unit"] == "us" and result["lat"]["printed_unit"] == "ms"
    assert result["lat"]["unit_from"] == "version 11.1.0.7.0"
    assert result["iops"]["values"][0][4] == 6210 and result["mbps"]["values"][1] == [374.26]
    assert result["testname"] == "orion" and result["max_small_iops"] == 19019


def test_parse_19c_reconstructed_formats() -> None:
    result = orion.parse_output((D19 / "o19-stdout.txt").read_text())
    assert result["version"] == "RDBMS_19.3.0.0.0DBRU_LINUX.X64_190417"
    assert result["max_large_mbps"] == 1532.417 and result["max_small_iops"] == 48211.25
    assert result["min_small_latency_us"] == 81.24
    assert result["small_read_latency_us"]["stdev"] == 51.472 and "small_write_latency_us" not in result
    row = next(r for r in result["histogram"] if r["low_us"] == 64)
    assert row == {
        "low_us": 64,
        "high_us": 128,
        "read": 1112243,
        "write": 0,
        "read_cum_pct": 91.12,
        "write_cum_pct": 0.0,
    }
    assert result["histogram"][-1]["read_cum_pct"] == 100.0
    whole = orion.parse_path(D19)
    assert whole["lat"]["values"][0] == [81.24, 84.9, 88.17, 93.05, 103.67]  # preamble skipped; us from 11.2
    assert whole["lat"]["unit_from"].startswith("version RDBMS_19")
    assert whole["mbps"]["values"] == [[1021.334], [1532.417]]
    assert whole["iops"]["values"][0][-1] == 48211
    assert whole["total_data_points"] == 8 and whole["testname"] == "o19"
    assert whole["files"] == sorted(
        f"o19_20240312_0930_{k}" for k in ("summary.txt", "iops.csv", "mbps.csv", "lat.csv", "hist.txt")
    )


def test_csv_without_a_large_small_row_is_refused() -> None:
    with pytest.raises(ValueError, match="Large/Small"):
        orion.parse_csv("1,2,3\n")


@pytest.mark.parametrize(
    ("text", "fix"),
    [
        (
            "ORION: ORacle IO Numbers -- Version 11.2.0.4.0\nERROR:\nFailed to allocate shared global region "
            "with large pages, unix errno = 12.\n",
            "hugenotneeded",
        ),
        (
            "ORION: ORacle IO Numbers -- Version 11.2.0.4.0\nx.lun_20240101_1200\nFailure in opening .lun file\n",
            "without .lun",
        ),
    ],
)
def test_orions_failures_name_the_fix(text: str, fix: str) -> None:
    with pytest.raises(orion.OrionError, match=fix):
        orion.parse_output(text)
    result = orion.parse_result_files(text, {})
    ok, message = orion.succeeded(result, 1)
    assert not ok and fix in message


def test_other_text_is_not_orion_output() -> None:
    with pytest.raises(ValueError, match="not ORION output"):
        orion.parse_output("hello\n")


def test_racperf_parse_cli(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for path in (S112, D111 / "simple-vdb_summary.txt", D19, D19 / "o19_20240312_0930_summary.txt"):
        done = subprocess.run(
            [*racperf_cmd(), "parse", "orion", str(path)], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert result["tool"] == "orion" and "max_small_iops" in result
    # a summary file brings its sibling matrices
    assert "lat" in result and result["lat"]["values"][0][0] == 81.24
    bad = tmp_path / "hp.txt"
    bad.write_text("ERROR:\nFailed to allocate shared global region with large pages, unix errno = 12.\n")
    done = subprocess.run(
        [*racperf_cmd(), "parse", "orion", str(bad)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 1 and "hugenotneeded" in done.stderr


# --------------------------------------------------------------------------- the planned matrix


def test_planned_matrix_of_each_run_level() -> None:
    luns = ["/dev/a"]
    assert orion.planned_matrix({"run": "simple", "lun": luns}) == (
        [(s, 0) for s in range(6)] + [(0, 1), (0, 2)]
    )  # the 11.1 sample's 8 data points
    assert len(orion.planned_matrix({"run": "normal", "lun": luns, "num_disks": 2})) == 11 * 5
    assert orion.planned_matrix({"run": "oltp", "lun": luns}) == [(s, 0) for s in range(6)]
    assert orion.planned_matrix({"run": "dss", "lun": luns}) == [(0, l) for l in range(3)]
    assert orion.planned_matrix(
        {"run": "advanced", "lun": luns, "matrix": "point", "num_small": 4, "num_large": 2}
    ) == [(4, 2)]
    assert orion.planned_matrix({"run": "advanced", "lun": luns, "matrix": "row", "num_large": 1, "num_disks": 1}) == [
        (s, 1) for s in range(6)
    ]
    assert orion.planned_matrix({"run": "advanced", "lun": luns, "matrix": "col", "num_small": 3}) == [
        (3, l) for l in range(3)
    ]
    assert (
        len(orion.planned_matrix({"run": "advanced", "lun": luns, "matrix": "max", "num_small": 4, "num_large": 2}))
        == 15
    )


def test_the_model_matches_orions_own_estimates_in_the_samples() -> None:
    # 11.1 -run simple on one disk: "Test will take approximately 9 minutes", 8 data points
    simple = {"run": "simple", "lun": ["/dev/vdb"]}
    assert len(orion.planned_matrix(simple)) == 8 and orion.orion_estimate_s(simple) == 9 * 60
    # 11.2 advanced on 3 disks: "Calibration will take approximately 23 minutes."
    advanced = {
        "run": "advanced",
        "lun": ["/dev/a"],
        "num_disks": 3,
        "size_small": 8,
        "size_large": 8,
        "type": "rand",
        "write": 30,
        "hugenotneeded": True,
    }
    assert len(orion.planned_matrix(advanced)) == 22 and orion.orion_estimate_s(advanced) == 23 * 60


def test_planned_duration_adds_cache_warming_unless_cache_size_0() -> None:
    simple = {"run": "simple", "lun": ["/dev/vdb"]}
    assert orion.planned_duration_s(simple) == 8 * 60 + 2 * 120
    assert orion.planned_duration_s({**simple, "cache_size": 0}) == 8 * 60
    assert orion.planned_duration_s({"run": "dss", "lun": ["/dev/a"]}) == 3 * 240 + 2 * 120
    assert orion.hard_limit_s(simple) == 720 * 1.5 + 600
    points = orion.schedule(simple)
    assert points[6].start_s == 6 * 60 and points[6].length_s == 180 and points[-1].large == 2


# --------------------------------------------------------------------------- config and Invocation


@pytest.fixture
def oracle_home(tmp_path: Path) -> Path:
    """A temporary ORACLE_HOME with a stand-in bin/orion."""
    home = tmp_path / "oracle_home"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    (home / "bin" / "orion").write_text("#!/bin/sh\n")
    os.chmod(home / "bin" / "orion", 0o755)
    return home


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"run": "advanced", "matrix": "point", "num_small": 4}, "matrix point needs num_large"),
        ({"run": "advanced", "matrix": "row"}, "matrix row needs num_large"),
        ({"run": "advanced", "num_small": 4}, "num_small is only taken with matrix col, max, point"),
        ({"run": "advanced", "simulate": "raid0"}, "give num_disks"),
        ({"run": "advanced", "num_streamIO": 4}, "only with type=seq"),
        ({"run": "simple", "size_small": 8}, "use run=advanced"),
        ({"run": "advanced", "write": 101}, "write must be 0 to 100"),
        ({"run": "advanced", "duration": 0}, "duration must be 1 to"),
        ({"run": "advanced", "size_small": 2048}, "size_small must be 1 to 1024 KB"),
        ({"run": "turbo"}, "run must be one of"),
        ({"lun": []}, "no LUN"),
        ({"lun": ["dev/sdb"]}, "absolute path"),
        ({"lun": ["/dev/a\n/dev/sda"]}, "control characters"),
        ({"lun": ["/dev/a", "/dev/a"]}, "given twice"),
        ({"testname": "../x"}, "testname"),
        ({"num_disks": 1.5}, "whole number"),
    ],
)
def test_config_validation(config: dict, message: str) -> None:
    base = {"lun": ["/dev/loop0"]}
    with pytest.raises(ValueError, match=message):
        orion.OrionConfig.from_mapping({**base, **config})


def test_invocation(oracle_home: Path, tmp_path: Path) -> None:
    lun = tmp_path / "lun.img"
    lun.write_bytes(b"\0" * 4096)
    planned = orion.invocation(
        {
            "run": "advanced",
            "testname": "calib.lun",
            "lun": [str(lun), "/dev/null"],
            "num_disks": 2,
            "size_small": 8,
            "write": 30,
            "hugenotneeded": True,
            "oracle_home": str(oracle_home),
        },
        str(tmp_path / "run"),
    )
    assert planned.argv == [
        str(oracle_home / "bin" / "orion"),
        "-run",
        "advanced",
        "-testname",
        "calib",
        "-num_disks",
        "2",
        "-size_small",
        "8",
        "-write",
        "30",
        "-hugenotneeded",
    ]
    assert planned.env == {"ORACLE_HOME": str(oracle_home), "LD_LIBRARY_PATH": str(oracle_home / "lib")}
    assert planned.cwd == "." and planned.files == {"calib.lun": f"{lun}\n/dev/null\n"}
    assert planned.result_files == ("calib_*",)
    assert [(t.path, t.access) for t in planned.targets] == [(str(lun), "write"), ("/dev/null", "write")]
    assert any("calib.lun" in note and "'calib'" in note for note in planned.notes)
    assert planned.hard_limit_s == orion.hard_limit_s({"run": "advanced", "lun": ["/a"], "num_disks": 2})
    read_only = orion.invocation({"lun": [str(lun)], "oracle_home": str(oracle_home)})
    assert [t.access for t in read_only.targets] == ["read"] and read_only.argv[1:] == [
        "-run",
        "simple",
        "-testname",
        "orion",
    ]


def test_invocation_refuses_a_missing_lun_file(oracle_home: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        orion.invocation({"lun": [str(tmp_path / "nope.img")], "oracle_home": str(oracle_home)})


# --------------------------------------------------------------------------- ORACLE_HOME


def _home(root: Path, home: str) -> None:
    binary = root / home.lstrip("/") / "bin" / "orion"
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)


def test_oracle_home_from_a_fake_oratab(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc" / "oracle").mkdir(parents=True)
    (root / "etc" / "oratab").write_text(
        "# comment line\n+ASM1:/u01/app/19.0.0/grid:N\n\nORCL1:/u01/app/oracle/product/19.0.0/dbhome_1:N  # db\n"
        "OLD:/u01/app/oracle/product/11.1.0/db_1:N\n"
    )
    (root / "etc" / "oracle" / "olr.loc").write_text("olrconfig_loc=/x\ncrs_home=/u01/app/21.0.0/grid\n")
    data = tmp_path / "data"
    found = orion.oracle_home_candidates(root, environ={}, data_dir=data)
    assert found == [
        ("/u01/app/oracle/product/19.0.0/dbhome_1", "/etc/oratab"),
        ("/u01/app/oracle/product/11.1.0/db_1", "/etc/oratab"),
        ("/u01/app/19.0.0/grid", "/etc/oratab (grid)"),
        ("/u01/app/21.0.0/grid", "/etc/oracle/olr.loc (grid)"),
    ]
    assert orion.find_oracle_home(root, environ={}, data_dir=data) is None  # no bin/orion anywhere yet
    _home(root, "/u01/app/19.0.0/grid")
    assert orion.find_oracle_home(root, environ={}, data_dir=data) == "/u01/app/19.0.0/grid"
    _home(root, "/u01/app/oracle/product/19.0.0/dbhome_1")
    assert orion.find_oracle_home(root, environ={}, data_dir=data) == "/u01/app/oracle/product/19.0.0/dbhome_1"
    _home(root, "/opt/env_home")
    assert orion.find_oracle_home(root, environ={"ORACLE_HOME": "/opt/env_home"}, data_dir=data) == "/opt/env_home"
    _home(root, "/opt/remembered")
    settings.set(SETTING_ORACLE_HOME, "/opt/remembered", data)
    assert orion.find_oracle_home(root, environ={"ORACLE_HOME": "/opt/env_home"}, data_dir=data) == "/opt/remembered"


def test_no_oracle_home_says_where_it_looked(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORACLE_HOME", str(tmp_path / "nothing"))
    with pytest.raises(ToolNotFound, match="tried: .*nothing.*ORACLE_HOME"):
        resolve_binary(orion.OrionConfig.from_mapping({"lun": ["/dev/a"]}), root=tmp_path)
    with pytest.raises(ToolNotFound, match="bin/orion not found"):
        resolve_binary(orion.OrionConfig.from_mapping({"lun": ["/dev/a"], "oracle_home": str(tmp_path)}))


# --------------------------------------------------------------------------- live


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_schedule_of_points_starts_at_orion_s_estimate_line() -> None:
    """On a node ORION starts seconds after the supervisor (the channel, the node's net, its
    own start): the data point running is read from the estimate line ORION prints right
    before its first point, so the live figures go to the point that really runs."""
    clock = Clock()
    parser = orion.OrionStreamParser({"run": "simple", "lun": ["/dev/vdb"]}, clock=clock)  # 60 s points
    clock.now += 20.0
    [planned] = parser.feed("Calibration will take approximately 9 minutes.")
    assert planned.extra["elapsed_s"] == 20.0 and planned.extra["data_point"] == 1
    clock.now = 1000.0 + 75.0  # 55 s into ORION's points: still the first (0, 0)
    [sample] = parser.tick()
    assert sample.extra["elapsed_s"] == 75.0 and sample.extra["data_point"] == 1
    assert sample.extra["progress_pct"] == round(100 * 75 / 720, 2)  # progress stays the run's clock
    clock.now = 1000.0 + 85.0  # 65 s into them: the second, small=1
    [sample] = parser.tick()
    assert sample.extra["data_point"] == 2 and (sample.extra["small"], sample.extra["large"]) == (1, 0)


def test_stream_parser_turns_the_estimate_into_progress_over_time() -> None:
    clock = Clock()
    config = {"run": "simple", "lun": ["/dev/vdb"]}  # 8 data points, 720 s planned with warming
    parser = orion.OrionStreamParser(config, clock=clock)
    assert parser.feed("ORION: ORacle IO Numbers -- Version 11.1.0.7.0") == []
    assert parser.feed("orion_20130805_1550") == []
    assert parser.tick() == []  # nothing planned yet
    clock.now += 0.5
    [planned] = parser.feed("Test will take approximately 9 minutes")
    assert planned.extra["planned_s"] == 720.0  # the model (warming) is longer than ORION's 540 s
    assert planned.extra["orion_estimate_s"] == 540.0 and planned.extra["phase"] == "planned"
    assert planned.extra["data_point"] == 1 and planned.extra["data_points"] == 8
    assert parser.feed("Larger caches may take longer") == []
    clock.now += 0.5
    assert parser.tick() == []  # less than PROGRESS_INTERVAL_S since the last sample
    clock.now = 1000.0 + 390.0
    [sample] = parser.tick()
    assert sample.t == 390.0 and sample.extra["elapsed_s"] == 390.0
    assert sample.extra["progress_pct"] == round(100 * 390 / 720, 2) and sample.extra["eta_s"] == 330.0
    assert sample.extra["data_point"] == 7 and (sample.extra["small"], sample.extra["large"]) == (0, 1)
    clock.now = 1000.0 + 5000.0
    [late] = parser.tick()
    assert late.extra["progress_pct"] == 99.9 and late.extra["eta_s"] == 0.0  # overrunning: never 100
    [done] = parser.feed("Maximum Large MBPS=1554.54 @ Small=0 and Large=2")
    assert done.extra["progress_pct"] == 100.0 and done.extra["phase"] == "done"
    clock.now += 10
    assert parser.tick() == [] and parser.finish() == []


def test_stream_parser_uses_orions_estimate_when_it_is_longer() -> None:
    parser = orion.OrionStreamParser({"run": "oltp", "lun": ["/dev/a"]}, clock=Clock())
    [planned] = parser.feed("Calibration will take approximately 24 minutes.")
    assert planned.extra["planned_s"] == 24 * 60


def test_stream_parser_stops_at_orions_failure() -> None:
    clock = Clock()
    parser = orion.OrionStreamParser({"lun": ["/dev/a"]}, clock=clock)
    parser.feed("ERROR:")
    assert parser.feed("Failed to allocate shared global region with large pages, unix errno = 12.") == []
    clock.now += 60
    assert parser.tick() == [] and "hugenotneeded" in (parser.failed or "")


def test_description_metrics_and_registration() -> None:
    description = tool_description("orion")
    names = [o.name for o in description.options]
    assert names == [
        "run",
        "testname",
        "lun",
        "num_disks",
        "size_small",
        "size_large",
        "type",
        "num_streamIO",
        "simulate",
        "write",
        "cache_size",
        "duration",
        "num_small",
        "num_large",
        "matrix",
        "hugenotneeded",
        "verbose",
        "storax",
        "oracle_home",
        "orion",
    ]
    assert all(o.help for o in description.options) and description.option("lun").repeatable
    parser = orion.OrionStreamParser({"lun": ["/dev/a"]}, clock=Clock())
    [sample] = parser.feed("Calibration will take approximately 9 minutes.")
    # the clock's figures are the progress bar's, no sparklines: the metrics are the LUNs' load
    assert {"planned_s", "eta_s", "progress_pct"} <= set(sample.extra) & set(sample.metrics)
    assert [m.key for m in description.live_metrics(list(sample.metrics) + ["lun_iops"])] == ["lun_iops"]
    assert [m.key for m in description.metrics] == ["lun_iops", "lun_mbps", "lun_await_ms", "lun_avgqu_sz"]
    assert description.metric("lun_await_ms").format(0.256) == "0.26 ms"
    assert tool_modules()["orion"] == "racperf_tui.tools.orion"
    assert 'orion = "racperf_tui.tools.orion"' in (REPO / "pyproject.toml").read_text()
    config = description.settings_to_config(
        [("lun", "/dev/a"), ("lun", "/dev/b"), ("num_disks", "2"), ("hugenotneeded", "true"), ("run", "ADVANCED")]
    )
    assert config == {"lun": ["/dev/a", "/dev/b"], "num_disks": 2, "hugenotneeded": True, "run": "advanced"}


def test_orions_extra_minute_does_not_stretch_the_schedule() -> None:
    # 8 points of 60 s without warming (480 s); ORION says 9 minutes: its points' 8 plus one
    clock = Clock()
    parser = orion.OrionStreamParser({"run": "simple", "lun": ["/dev/vdb"], "cache_size": 0}, clock=clock)
    [planned] = parser.feed("Calibration will take approximately 9 minutes.")
    assert planned.extra["planned_s"] == 540.0
    clock.now += 130.0
    [sample] = parser.tick()
    assert sample.extra["data_point"] == 3 and (sample.extra["small"], sample.extra["large"]) == (2, 0)
    assert sample.extra["progress_pct"] == round(100 * 130 / 540, 2)
    assert sample.extra["eta_s"] == 410.0
    # an estimate longer than the model's points (loads stepped differently): stretched to it
    parser = orion.OrionStreamParser({"run": "simple", "lun": ["/dev/vdb"], "cache_size": 0}, clock=clock)
    parser.feed("Calibration will take approximately 17 minutes.")  # 960 s for the points
    clock.now += 130.0
    assert parser.tick()[0].extra["data_point"] == 2  # 130 s of 960 = 65 s of 480
