"""The tools' side effects happen on the node where they run (issue 10): version probes, fio's
option table and its reading of the job, prepare(), the probe server's file and python, and
the protections recorded for the run, all asked of the node over a real OpenSSH sshd.

The node's side differs from this machine by its PATH: the sshd's ``SetEnv PATH=...`` (then a
SIGHUP: sshd re-reads its config) puts a directory of this test first, with wrapper scripts
that answer another version (and log how they were called) or with every program of /usr/bin
but the tool (a node where it is not installed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState
from racperf_tui.core.contract.invocation import ToolNotFound
from racperf_tui.core.remote.cluster import LOCAL, load_cluster, node_spec
from racperf_tui.core.remote.ssh import SshTarget
from racperf_tui.core.remote.ssh_host import SshHost
from racperf_tui.core.store import Store
from racperf_tui.orchestration.supervisor import Supervisor
from racperf_tui.tools import calibrate_io, iperf3, netperf, orion, probe
from tests.helpers import FAKES, FIXTURES
from tests.helpers.cluster_helpers import isolated_home, node_table, racperf, remote_base, remote_runs  # noqa: F401
from tests.helpers.sshd_helpers import Sshd, set_node_path

# real runs over a real sshd, one of them reads a node's whole fio option table: slow lane
pytestmark = [pytest.mark.usefixtures("isolated_home", "remote_runs"), pytest.mark.slow]


def wrapper(directory: Path, name: str, version_line: str, real: str, log: Path | None = None) -> Path:
    """``name`` in ``directory``: says ``version_line`` to --version, else runs ``real``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    # inside the run's jail every mount is read-only: the run's own call goes to stderr (the
    # run's record) when the log cannot be written
    logging = f'printf "%s\\n" "$*" 2>/dev/null >> {log} || printf "called: %s\\n" "$*" >&2\n' if log else ""
    path.write_text(
        f'#!/bin/sh\n{logging}if [ "$1" = --version ]; then echo "{version_line}"; exit 0; fi\nexec {real} "$@"\n'
    )
    path.chmod(0o755)
    return path


def without(directory: Path, *missing: str) -> Path:
    """A PATH directory holding every program of /usr/bin (as links) except ``missing``."""
    directory.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir("/usr/bin"):
        if entry.name not in missing:
            (directory / entry.name).symlink_to(entry.path)
    return directory


def host_of(server: Sshd) -> SshHost:
    target = SshTarget(server.host, server.user, server.port, str(server.user_key), (str(server.known_hosts),))
    return SshHost(target, name="rac1")


@pytest.fixture
def cluster_file(sshd: Sshd, tmp_path: Path) -> Path:
    path = tmp_path / "cluster.toml"
    path.write_text('[cluster]\nname = "test"\n\n' + node_table("rac1", sshd))
    return path


def test_a_short_command_on_a_node_answers_with_its_output_env_and_stdin(sshd: Sshd) -> None:
    host = host_of(sshd)
    answer = host.run_briefly(
        ["sh", "-c", 'cat; printf "%s|" "$FOO"; exit 3'], 10, env={"FOO": "a b;$(x)"}, stdin="in\n"
    )
    assert (answer.returncode, answer.stdout) == (3, "in\na b;$(x)|")
    with pytest.raises(FileNotFoundError, match=r"rac1: 'no-such-program' not found on the node"):
        host.run_briefly(["no-such-program", "--version"], 10)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="rac1: sleep did not end within 1 s"):
        host.run_briefly(["sleep", "30"], 1)
    assert time.monotonic() - started < 8  # the node's timeout ended it, not the 30 s


def test_the_run_reports_the_version_of_the_nodes_program(sshd: Sshd, cluster_file: Path, tmp_path: Path) -> None:
    """iperf3 on the node is another build than here: the run records the node's version."""
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 not installed")
    node_bin = tmp_path / "node-bin"
    wrapper(node_bin, "iperf3", "iperf 3.9.1 (racperf node wrapper)", "/usr/bin/iperf3")
    set_node_path(sshd, node_bin, "/usr/bin", "/bin")
    here = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    assert "3.9.1" not in here
    server = subprocess.Popen(["iperf3", "-s", "-1", "-p", "5299", "-B", "127.0.0.1"], stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        data = tmp_path / "data"
        done = racperf(
            "run", "iperf3", "--node", "rac1", "--cluster", str(cluster_file), "--data-dir", str(data),
            "--set", "host=127.0.0.1", "--set", "port=5299", "--set", "duration_s=1",
        )  # fmt: skip
    finally:
        server.kill()
        server.wait()
    assert done.returncode == 0, done.stderr
    with Store.open(data) as store:
        (record,) = store.list_runs()
    assert record.state is RunState.SUCCEEDED
    assert record.tool_version == "iperf 3.9.1 (racperf node wrapper)"


@pytest.mark.parametrize(
    ("tool", "args", "words"),
    [
        ("fio", ["--", "--name=r", "--filename=/tmp/racperf-never-made.fio", "--rw=read", "--size=1m"],
         "fio is not installed on rac1"),
        ("iperf3", ["--set", "host=127.0.0.1", "--set", "duration_s=1"], "iperf3: 'iperf3' not found on PATH on rac1"),
    ],
)  # fmt: skip
def test_a_node_without_the_tool_says_so_and_nothing_runs_here(
    sshd: Sshd, cluster_file: Path, tmp_path: Path, tool: str, args: list[str], words: str
) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed here")
    set_node_path(sshd, without(tmp_path / "node-bin", "fio", "iperf3"))
    data = tmp_path / "data"
    done = racperf("run", tool, "--node", "rac1", "--cluster", str(cluster_file), "--data-dir", str(data), *args)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert words in done.stderr, done.stderr
    assert done.stdout == ""
    # refused before anything was recorded or started: no run, here or there
    if (data / "racperf.db").exists() or any(data.glob("*.db")):
        with Store.open(data) as store:
            assert store.list_runs() == []
    assert not Path("/tmp/racperf-never-made.fio").exists()


def test_fio_on_a_node_is_planned_by_the_nodes_fio_and_records_the_nodes_protections(
    sshd: Sshd, cluster_file: Path, tmp_path: Path
) -> None:
    """The node's fio (a wrapper logging its calls, another version) reads the option table and
    the job; the run records its version and the write watch / device jail of the node."""
    log = tmp_path / "node-fio.log"
    node_bin = tmp_path / "node-bin"
    fio_wrapper = wrapper(node_bin, "fio", "fio-3.99-node", shutil.which("fio") or "/usr/bin/fio", log)
    set_node_path(sshd, node_bin, "/usr/bin", "/bin")
    target = tmp_path / "data.fio"
    target.write_bytes(os.urandom(1 << 20))
    data = tmp_path / "data"
    started = time.monotonic()
    done = racperf(
        "run", "fio", "--node", "rac1", "--cluster", str(cluster_file), "--data-dir", str(data),
        "--", "--name=r", f"--filename={target}", "--rw=read", "--size=1m",
        timeout_s=400,
    )  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])["result"]
    assert sum(job["read"]["io_kib"] for job in result["jobs"]) == 1024
    calls = log.read_text().splitlines()
    # the option table, the job read and read back, and the run itself: all by the node's fio
    assert sum(line.startswith("--cmdhelp=") for line in calls) > 100
    assert sum(line.startswith("--parse-only --debug=parse") for line in calls) >= 4  # launcher + supervisor
    with Store.open(data) as store:
        (record,) = store.list_runs()
        stderr = store.raw_output(record.id, "stderr")
    # the run itself, inside the node's jail (read-only mounts: its call is in its stderr)
    assert any(line.startswith("--output-format=json+") for line in calls) or "called: --output-format=json+" in stderr
    assert record.argv[0] == str(fio_wrapper)
    assert record.tool_version == "fio-3.99-node"
    shown = racperf("runs", "show", str(record.id), "--data-dir", str(data))
    assert shown.returncode == 0, shown.stderr
    assert "write watch on the node (every process of the run, by device number) (rac1)" in shown.stdout
    assert "device jail" in shown.stdout and "(rac1)" in shown.stdout
    assert "write guard (mounts, swap, holders, open files, signatures) on rac1" in shown.stdout
    print(f"fio run on a node with a cold option table: {took:.1f} s")


def test_the_probe_server_is_copied_to_the_node_and_run_by_its_python(
    sshd: Sshd, cluster_file: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    done = racperf(
        "pair", "probe", "--server-node", "rac1", "--cluster", str(cluster_file), "--data-dir", str(data),
        "--server", "port=0", "--set", "duration_s=1", "--set", "interval_s=0.5",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    head = json.loads(done.stdout.splitlines()[0])
    with Store.open(data) as store:
        server = store.get_run(head["server_run_id"])
        copied = store.raw_output(server.id, f"file:{probe.SERVER_FILE_NAME}")
        client = store.get_run(head["client_run_id"])
    assert server.host == "rac1" and server.state.finished and client.state is RunState.SUCCEEDED
    assert server.argv[:3] == ["python3", "-I", "-u"]  # isolated: the run directory is on no path
    assert copied == probe.server_source()
    on_node = Path(host_of(sshd).remote_dir(data / "runs" / str(server.id))) / probe.SERVER_FILE_NAME
    assert on_node.read_text() == probe.server_source()
    # the argv names the run's directory as racperf does; the node's side maps it to its own
    assert server.argv[3] == str(data / "runs" / str(server.id) / probe.SERVER_FILE_NAME)


def test_a_node_python_older_than_3_6_is_refused_for_the_probe_server(
    sshd: Sshd, cluster_file: Path, tmp_path: Path
) -> None:
    old = tmp_path / "node-bin" / "python3"
    old.parent.mkdir()
    old.write_text("#!/bin/sh\nprintf 3.5\n")
    old.chmod(0o755)
    data = tmp_path / "data"
    done = racperf(
        "pair", "probe", "--server-node", "rac1", "--cluster", str(cluster_file), "--data-dir", str(data),
        "--server", "port=0", "--server", f"python={old}", "--set", "duration_s=1",
    )  # fmt: skip
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    with Store.open(data) as store:
        (server,) = [run for run in store.list_runs() if run.config.get("role") == "server"]
    assert server.state is RunState.FAILED
    assert server.message == f"probe: the server needs python3 >= 3.6; {old} on rac1 is 3.5"


OLD_TOOL = '''
"""A tool written before hosts were passed: prepare(config, planned), tool_version(argv)."""
from dataclasses import replace
from pathlib import Path

import racperf_ext_demo as demo
from tests.helpers import FIXTURES

MARKER = Path({marker!r})


def prepare(config, planned):
    MARKER.write_text("prepared here")


TOOL = replace(demo.TOOL, name="oldprep", tool_version=lambda argv: "oldprep 1")
object.__setattr__(TOOL, "prepare", prepare)
parse_output = demo.parse_output
'''


@pytest.fixture
def old_style_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An extension tool (a module and its dist-info on sys.path) with the old signatures;
    returns the marker file its prepare writes."""
    package = tmp_path / "oldprep"
    info = package / "racperf_oldprep-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: racperf-oldprep\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[racperf.tools]\noldprep = racperf_oldprep\n")
    marker = tmp_path / "prepared"
    (package / "racperf_oldprep.py").write_text(OLD_TOOL.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(FIXTURES / "ext_tool"))
    monkeypatch.syspath_prepend(str(package))
    return marker


def test_a_tool_with_the_old_prepare_runs_here_and_is_refused_on_a_node_saying_why(
    sshd: Sshd, cluster_file: Path, tmp_path: Path, old_style_tool: Path
) -> None:
    node = load_cluster(cluster_file).node("rac1")
    with Store.open(tmp_path / "data") as store:
        here = store.create_run("oldprep", LOCAL.name, None, {"ops": 2, "interval_s": 0.05}, [], None)
        record = Supervisor(store, here, handle_signals=False).run()
        assert record.state is RunState.SUCCEEDED, record.message
        assert record.tool_version == "oldprep 1"
        assert old_style_tool.read_text() == "prepared here"
        old_style_tool.unlink()
        config = {"ops": 2, "interval_s": 0.05, "host_spec": node_spec(node)}
        there = store.create_run("oldprep", "rac1", None, config, [], None)
        record = Supervisor(store, there, handle_signals=False).run()
    assert record.state is RunState.FAILED
    assert record.message == (
        "oldprep: its prepare(config, planned) takes no host, so it would prepare this machine, not rac1; "
        "the tool must take prepare(config, planned, host) to run on another node "
        "(docs/ARCHITECTURE.md, How to add a tool)"
    )
    assert not old_style_tool.exists()  # nothing prepared here for a run there


def test_netperf_on_a_node_is_adapted_to_the_nodes_build(sshd: Sshd, tmp_path: Path) -> None:
    """The node's netperf is a build without --enable-demo (the emulator with
    RACPERF_FAKE_NETPERF_DEMO=0 there); here it has -D. The plan for the node drops -D and
    says which build; the plan here keeps it."""
    set_node_path(
        sshd, "/usr/bin", "/bin", env={"RACPERF_FAKE_NETPERF_DEMO": "0", "RACPERF_FAKE_NETPERF_VERSION": "2.6.0"}
    )
    fake = str(FAKES / "netperf")
    config = {"role": "client", "host": "127.0.0.1", "netperf": fake, "duration_s": 5, "interim_s": 1}
    here = netperf.invocation(config, None)
    assert "-D" in here.argv and here.notes == ()
    there = netperf.invocation(config, None, host_of(sshd))
    assert "-D" not in there.argv
    assert there.notes == (
        "this netperf (2.6.0) was built without --enable-demo: no interim results (-D), only the final figures",
    )
    assert netperf.tool_version([fake], host_of(sshd)) == "Netperf version 2.6.0"
    with pytest.raises(ValueError, match="netperf: '/no/such/netperf' not found on rac1"):
        netperf.invocation({**config, "netperf": "/no/such/netperf"}, None, host_of(sshd))


def test_calibrate_io_reads_the_aio_slots_of_its_node(sshd: Sshd) -> None:
    tool = calibrate_io.TOOL
    planned = tool.invocation({"sid": "ORCL", "oracle_home": "/x", "sqlplus": "/bin/true"})
    assert calibrate_io.aio_problem() is None  # this machine (the node is this machine too)
    assert tool.prepare({}, planned, host_of(sshd)) is None
    assert calibrate_io.aio_problem_of("65000\n65536\n") == (
        f"aio-nr 65000 of aio-max-nr 65536 (536 free): {calibrate_io.CHECK_FIXES['aio']}"
    )


def test_orion_and_sqlplus_are_looked_for_on_the_node(sshd: Sshd, tmp_path: Path) -> None:
    """ORION's home comes from the node's $ORACLE_HOME (unset here), its LUN files and the
    binary must exist there; CALIBRATE_IO's sqlplus too, and this machine's PATH is not sent."""
    lun = tmp_path / "lun.img"
    lun.write_bytes(b"\0" * 4096)
    home = tmp_path / "oracle"
    (home / "bin").mkdir(parents=True)
    shutil.copy(FAKES / "orion", home / "bin" / "orion")
    set_node_path(sshd, "/usr/bin", "/bin", env={"ORACLE_HOME": str(home)})
    host = host_of(sshd)
    planned = orion.invocation({"run": "simple", "lun": [str(lun)]}, None, host)
    assert planned.argv[0] == f"{home}/bin/orion"
    assert planned.env == {"ORACLE_HOME": str(home), "LD_LIBRARY_PATH": f"{home}/lib"}
    assert orion.tool_version(planned.argv, host) == "ORION 11.2.0.4.0"
    missing = tmp_path / "no-such-lun"
    with pytest.raises(ValueError, match=f"orion: LUN {missing} does not exist on rac1"):
        orion.invocation({"run": "simple", "lun": [str(missing)]}, None, host)
    with pytest.raises(ToolNotFound, match="orion: /no/bin/orion is not an executable file on rac1"):
        orion.invocation({"run": "simple", "lun": [str(lun)], "orion": "/no/bin/orion"}, None, host)
    base = {"sid": "ORCL", "oracle_home": "/x"}
    with pytest.raises(ToolNotFound, match="calibrate_io: /no/sqlplus not found or not executable on rac1"):
        calibrate_io.TOOL.invocation({**base, "sqlplus": "/no/sqlplus"}, None, host)
    planned = calibrate_io.TOOL.invocation({**base, "sqlplus": "/bin/true"}, None, host)
    assert planned.env["PATH"] == "/x/bin:" + calibrate_io.NODE_SYSTEM_PATH
    assert planned.env["LD_LIBRARY_PATH"] == "/x/lib"


def test_iperf3_json_stream_auto_is_decided_by_the_nodes_build(sshd: Sshd, tmp_path: Path) -> None:
    """The node's iperf3 says 3.99 (json-stream since 3.17), this machine's is older: the plan
    for the node streams JSON, the plan here does not."""
    if shutil.which("iperf3") is None or iperf3.supports_json_stream("iperf3"):
        pytest.skip("needs an iperf3 here without --json-stream")
    wrapper(tmp_path / "node-bin", "iperf3", "iperf 3.99.1 (racperf node wrapper)", "/usr/bin/iperf3")
    set_node_path(sshd, tmp_path / "node-bin", "/usr/bin", "/bin")
    assert "--json-stream" not in iperf3.TOOL.invocation({"host": "h"}, None).argv
    assert iperf3.TOOL.invocation({"host": "h"}, None, host_of(sshd)).argv[-2:] == ["-J", "--json-stream"]
