"""`racperf report`: real fio runs (2 s each, capped by rate_iops so the figures are known),
reported as HTML and Markdown; the report's figures are the store's, a real headless Chromium
renders it and it loads nothing from outside; bad requests get one line and no file."""

from __future__ import annotations

import hashlib
import http.server
import os
import re
import subprocess
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from racperf_tui.core.contract.events import RunState, Sample
from racperf_tui.core.store import Store
from racperf_tui.reporting.figures import full
from racperf_tui.tools.fio import RESULTS, result_figures
from tests.helpers import needs_chromium, needs_fio, racperf_cmd
from tests.helpers.report_pages import chromium_dom, outside_loads, parsed

pytestmark = needs_fio
SPECS = {spec.key: spec for spec in RESULTS}


def racperf(data_dir: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*racperf_cmd(), args[0], "--data-dir", str(data_dir), *args[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run 1 capped at 1,000 IOPS, run 2 at 2,000: 2.5 s of 4k random reads each."""
    data_dir = tmp_path_factory.mktemp("report")
    for rate in (1000, 2000):
        done = racperf(
            data_dir,
            "run",
            "fio",
            "--",
            "--name=rep",
            f"--filename={data_dir / 'f.dat'}",
            "--size=8m",
            "--rw=randread",
            "--bs=4k",
            "--ioengine=psync",
            f"--rate_iops={rate}",
            "--runtime=2500ms",
            "--time_based",
        )
        assert done.returncode == 0, done.stderr
    return data_dir


def test_the_html_report_says_the_stores_figures(two_runs: Path, tmp_path: Path) -> None:
    criteria = tmp_path / "criteria.txt"
    criteria.write_text("read_iops >= 1500 at read_clat_p99_us <= 100000\n")
    done = racperf(two_runs, "report", "1", "2", "-o", str(tmp_path / "r.html"), "--criteria", str(criteria))
    # run 1 (1,000 IOPS) fails the criterion, so the report is written and the exit says so
    assert done.returncode == 5, done.stderr
    assert done.stdout.strip() == str(tmp_path / "r.html") and done.stderr == ""
    html = (tmp_path / "r.html").read_text()
    cells = parsed(html)
    with Store.open(two_runs, read_only=True) as store:
        for run_id in (1, 2):
            figures = result_figures(store.result(run_id))
            shown = cells.figures[f"figures-{run_id}"]
            assert shown["read_iops"] == full(SPECS["read_iops"], figures["read_iops"])
            assert shown["read_clat_p99_us"] == full(SPECS["read_clat_p99_us"], figures["read_clat_p99_us"])
            assert set(shown) == {key for key, value in figures.items() if value}
            stdout = store.raw_output(run_id, "stdout").encode()
            assert hashlib.sha256(stdout).hexdigest() in html
            assert store.raw_output(run_id, "file:job.fio").strip().splitlines()[1] in html
    # in full with the unit: 1,000 IOPS, never 1.0k
    assert re.fullmatch(r"\d,\d{3} IOPS", cells.figures["figures-2"]["read_iops"])
    assert int(cells.figures["figures-2"]["read_iops"].split()[0].replace(",", "")) == pytest.approx(2000, rel=0.05)
    # the verdict comes first: FAIL, run 1 failing and run 2 passing
    assert html.index('id="verdict"') < html.index('id="comparison"') < html.index('id="run-1"')
    assert re.search(r'id="outcome">FAIL: 1 of 2 criteria passed', html)
    assert {"comparison-table", "devices-1", "devices-2", "conditions-1", "criteria"} <= cells.ids
    assert f"{os.uname().release}" in html  # the kernel, as the run recorded it
    assert html.count("<svg") >= 4 and "<script" not in html
    assert cells.csp is not None and "default-src 'none'" in cells.csp
    assert outside_loads(cells, html) == []


def test_the_markdown_report_keeps_its_charts_beside_it(two_runs: Path, tmp_path: Path) -> None:
    done = racperf(two_runs, "report", "2", "-o", str(tmp_path / "r.md"))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "r.md").read_text()
    charts = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert charts and all(path.startswith("r-charts/") for path in charts)
    for path in charts:
        svg = (tmp_path / path).read_text()
        root = ET.fromstring(svg.split("?>", 1)[1])
        assert root.tag == "{http://www.w3.org/2000/svg}svg" and "<script" not in svg
    with Store.open(two_runs, read_only=True) as store:
        figures = result_figures(store.result(2))
    assert f"| read IOPS | {full(SPECS['read_iops'], figures['read_iops'])} |" in text
    assert "| device | intervals |" in text  # its devices' iostat over the run


def test_bad_requests_get_one_line_and_no_file(two_runs: Path, tmp_path: Path) -> None:
    with Store.open(two_runs) as store:
        failed = store.create_run("fio", "local", None, {}, ["fio"], None)
        store.set_state(failed, RunState.FAILED, message="fio: bad option")
        empty = store.create_run("fio", "local", None, {}, ["fio"], None)
        store.set_state(empty, RunState.STOPPED)
        going = store.create_run("fio", "local", None, {}, ["fio"], None)
        store.set_state(going, RunState.RUNNING)
        store.set_supervisor_pid(going, os.getpid())
        store.add_sample(going, Sample(t=1.0, metrics={"read_iops": 1234.0}))
    out = tmp_path / "bad.html"
    for args, status, said in (
        (["99"], 1, "no run with id 99 in"),
        ([str(failed)], 2, f"run {failed} failed: fio: bad option: nothing to report"),
        ([str(empty)], 2, f"run {empty} stopped before any figure"),
        (["1", "-o", str(tmp_path / "nodir" / "r.html")], 2, "no directory"),
        (["1", "-o", "/proc/racperf-report.html"], 2, "cannot write the report /proc/racperf-report.html"),
        (["1", "-o", str(tmp_path / "r.txt")], 2, "a report is FILE.html or FILE.md"),
    ):
        argv = args if "-o" in args else [*args, "-o", str(out)]
        done = racperf(two_runs, "report", *argv)
        assert done.returncode == status, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and said in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr and done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    done = racperf(two_runs, "report", str(going), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert f"run {going} is still running: reported as far as it went" in done.stderr
    assert f'id="unfinished-{going}"' in out.read_text()
    # as far as it went: its one sample's figure, said to be no result
    assert parsed(out.read_text()).figures[f"figures-{going}"] == {"read_iops": "1,234 IOPS"}
    assert "No result yet: each figure is the mean of its 1 interval figures so far" in out.read_text()


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@needs_chromium
def test_chromium_renders_it_and_it_loads_nothing(two_runs: Path, tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    assert racperf(two_runs, "report", "1", "2", "-o", str(page)).returncode == 0
    dom = chromium_dom(page, tmp_path / "profile")
    cells = parsed(dom)
    with Store.open(two_runs, read_only=True) as store:
        figures = result_figures(store.result(2))
    # rendered: the figures are in the browser's DOM, the charts drawn as SVG elements in it
    assert cells.figures["figures-2"]["read_iops"] == full(SPECS["read_iops"], figures["read_iops"])
    assert dom.count("<svg") >= 4 and "<path" in dom
    assert outside_loads(cells, dom) == []

    # the check and the CSP can fail: a page that asks for an image from a server here is
    # caught by the check, refused by the CSP (no request), and fetched without the CSP
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        probe = f'<img src="http://127.0.0.1:{server.server_address[1]}/probe.png">'
        html = page.read_text().replace("<h1>", probe + "<h1>", 1)
        guarded = tmp_path / "guarded.html"
        guarded.write_text(html)
        dom = chromium_dom(guarded, tmp_path / "profile")
        assert outside_loads(parsed(dom), dom) == [f"http://127.0.0.1:{server.server_address[1]}/probe.png"]
        assert _Counter.hits == []
        bare = tmp_path / "bare.html"
        bare.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html))
        chromium_dom(bare, tmp_path / "profile")
        assert _Counter.hits == ["/probe.png"]
    finally:
        server.shutdown()
        server.server_close()
