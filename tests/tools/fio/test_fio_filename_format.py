"""fio's file names as fio makes them: every filename_format form racperf accepts is checked
against the files real fio creates (``create_only``), and a format near fio's PATH_MAX budget,
where make_filename() cuts the name silently, is refused naming the option and why."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from racperf_tui.tools.fio.plan import FIO_NAME_MARGIN, FIO_PATH_MAX, FioJob, job_paths
from tests.helpers import needs_fio

pytestmark = [needs_fio, pytest.mark.timeout(120)]


def _fio_files(work: Path, name: str, options: dict[str, str]) -> set[str]:
    """The regular files real fio creates for one job (run in ``work``), relative to it."""
    argv = ["fio", f"--name={name}", "--create_only=1", "--size=8k", "--rw=write", "--bs=4k"]
    argv += [f"--{key}={value}" for key, value in options.items()]
    done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    found = set()
    for root, _dirs, files in os.walk(work):
        found |= {os.path.relpath(os.path.join(root, f), work) for f in files}
    return found


def _judged(work: Path, name: str, options: dict[str, str]) -> tuple[set[str], list[str]]:
    """The files racperf judges for the job, relative to ``work`` (fio's working directory)."""
    before = Path.cwd()
    os.chdir(work)  # fio's exists_and_not_regfile() looks at the job name in its working directory
    try:
        paths, problems = job_paths(FioJob(name, "job 1", dict(options)))
    finally:
        os.chdir(before)
    return {os.path.normpath(os.path.relpath(os.path.join(work, p), work)) for p in paths}, problems


ACCEPTED = {
    "no format": ("plain", {"numjobs": "2", "nrfiles": "3"}),
    "the default, spelled out": ("spelled", {"filename_format": "$jobname.$jobnum.$filenum", "nrfiles": "2"}),
    "any case, in directories fio creates": (
        "cased",
        {"filename_format": "$JOBNAME-$JobNum/sub/f.$FileNum", "numjobs": "2", "nrfiles": "2"},
    ),
    "a keyword repeated": ("rep", {"filename_format": "$jobnum.$jobnum.$filenum.$FILENUM.$jobname", "nrfiles": "2"}),
    "keywords side by side": ("side", {"filename_format": "$jobname$jobnum$filenum", "numjobs": "3"}),
    "no keyword at all": ("fixed", {"filename_format": "one.file", "numjobs": "2"}),
    "with directory=": ("indir", {"filename_format": "f$filenum", "directory": "d1", "nrfiles": "2"}),
    "a job name that looks like a path": ("a/b", {"filename_format": "x-$jobname-$jobnum", "numjobs": "2"}),
}


@pytest.mark.parametrize("form", list(ACCEPTED), ids=list(ACCEPTED))
def test_every_accepted_form_names_the_files_fio_creates(tmp_path: Path, form: str) -> None:
    name, options = ACCEPTED[form]
    work = tmp_path / "work"
    work.mkdir()
    if "directory" in options:
        (work / options["directory"]).mkdir()  # fio wants its directory= to exist
    judged, problems = _judged(work, name, options)
    assert problems == []
    made = _fio_files(work, name, options)
    assert made == judged
    assert made


def test_a_format_near_the_budget_is_refused_where_fio_cuts_the_name(tmp_path: Path) -> None:
    """The review's sample: slashes around $jobname so that fio's budget has exactly one byte
    left at $jobnum; fio then writes .../victim/img, not the .../victim/img0 racperf judged."""
    work = tmp_path / "work"
    work.mkdir()
    head = f"{work}" + "/" * 1000
    # budget left at $jobnum: 4095 - (len(head) + 6) - (len(head) + 6 + slashes + 3) == 1
    slashes = 4079 - 2 * len(head)
    fmt = head + "$jobname" + "/" * slashes + "img$jobnum"
    assert max(len(line) for line in fmt.splitlines()) < 4094  # within fio's line limit
    paths, problems = job_paths(FioJob("victim", "job 1", {"filename_format": fmt}))
    assert paths == []
    assert len(problems) == 1 and problems[0].startswith("job 1: fio's make_filename() spends one PATH_MAX (4096)")
    assert "too near the limit where fio cuts the name silently" in problems[0]
    assert problems[0].endswith("refused: racperf judges only the file fio will open")
    # real fio: the file it makes is cut before $jobnum (the full expansion was judged before)
    assert _fio_files(work, "victim", {"filename_format": fmt}) == {"victim/img"}


def test_just_inside_the_margin_is_accepted_and_exact(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    head = f"{work}/"
    limit = FIO_PATH_MAX - 1 - FIO_NAME_MARGIN
    # charged: (len(head) + pad) for $jobname + (that + len("j.")) for $jobnum + (... "j.0.") for $filenum
    pad = (limit - 3 * len(head) - len("j.") - len("j.0.") - len("j.0.0")) // 3 - 2
    fmt = head + "/" * pad + "$jobname.$jobnum.$filenum"
    paths, problems = job_paths(FioJob("j", "job 1", {"filename_format": fmt}))
    assert problems == [] and len(paths) == 1
    made = _fio_files(work, "j", {"filename_format": fmt})
    assert made == {"j.0.0"}
    assert os.path.normpath(paths[0]) == str(work / "j.0.0")
    over = head + "/" * (pad + 20) + "$jobname.$jobnum.$filenum"
    assert job_paths(FioJob("j", "job 1", {"filename_format": over}))[0] == []


def test_a_job_name_holding_its_own_keyword_is_refused() -> None:
    paths, problems = job_paths(FioJob("x$JOBNAME", "job 1", {"filename_format": "$jobname"}))
    assert paths == [] and "holds $jobname, which fio's make_filename replaces again" in problems[0]


def test_a_directory_and_name_near_path_max_is_refused() -> None:
    directory = "/tmp/" + "d" * 200 + "/" * 3800
    paths, problems = job_paths(FioJob("j", "job 1", {"directory": directory}))
    assert any("too near fio's PATH_MAX (4096)" in p for p in problems), problems
