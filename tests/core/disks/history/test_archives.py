"""OSWatcher and ExaWatcher archives built to their formats: every container, snapshot
times, hosts, hourly files stitched in time order, truncated files named."""

from __future__ import annotations

import bz2
import datetime as dt
import gzip
import tarfile
import zipfile
from pathlib import Path

from racperf_tui.core.disks.history.archive import container_of, name_facts
from racperf_tui.core.disks.history.reader import read_history
from racperf_tui.core.disks.history.report import HistoryReport, Problem
from tests.helpers.oswatcher_archive import H10, H11, HEADER, device_line, osw_hour, osw_name

UTC = dt.UTC


def reports_and_problems(
    *paths: Path, devices: frozenset[str] | None = None
) -> tuple[list[HistoryReport], list[Problem]]:
    items = list(read_history(list(paths), devices))
    return [i for i in items if isinstance(i, HistoryReport)], [i for i in items if isinstance(i, Problem)]


def test_snapshot_reports_timed_from_the_marker_first_since_boot(tmp_path: Path) -> None:
    path = tmp_path / osw_name("racnode1", H10)
    path.write_text(osw_hour("racnode1", H10))
    reports, problems = reports_and_problems(path)
    assert problems == []
    assert len(reports) == 6
    t0 = H10.replace(tzinfo=UTC)
    assert [r.time for r in reports] == [t0 + dt.timedelta(seconds=s) for s in (0, 1, 2, 30, 31, 32)]
    assert [r.since_boot for r in reports] == [True, False, False, True, False, False]
    assert [r.interval_s for r in reports] == [None, 1.0, 1.0, None, 1.0, 1.0]
    assert {r.host for r in reports} == {"racnode1"}
    sda = reports[4].rows[0]
    assert sda.device == "sda" and sda.values[0] == 21.0 and sda.values[2] == 168.0
    assert reports[4].as_dict()["time"] == "2020-06-01T10:00:31+00:00"


def test_every_container_and_hourly_files_stitched_per_host(tmp_path: Path) -> None:
    """Two hosts, two hours each, in .dat, .gz, .bz2, inside a directory, a zip, a tar.gz:
    each host's reports come out in time order whatever the order of the files."""
    texts = {(h, t): osw_hour(h, t) for h in ("racnode2", "racnode1") for t in (H11, H10)}
    tree = tmp_path / "archive" / "oswiostat"
    tree.mkdir(parents=True)
    (tmp_path / "archive" / "oswvmstat").mkdir()
    (tmp_path / "archive" / "oswvmstat" / "racnode1_vmstat_20.06.01.1000.dat").write_text("zzz not iostat\n")
    for (host, hour), text in texts.items():
        name = osw_name(host, hour)
        if host == "racnode1" and hour == H10:
            (tree / f"{name}.gz").write_bytes(gzip.compress(text.encode()))
        elif host == "racnode1":
            (tree / f"{name}.bz2").write_bytes(bz2.compress(text.encode()))
        else:
            (tree / name).write_text(text)
    expected_times = [H10 + dt.timedelta(seconds=s) for s in (0, 1, 2, 30, 31, 32)]
    expected_times += [t + dt.timedelta(hours=1) for t in expected_times]

    def check(reports: list[HistoryReport], problems: list[Problem]) -> None:
        assert problems == []
        assert [r.host for r in reports] == ["racnode1"] * 12 + ["racnode2"] * 12
        assert [r.time.replace(tzinfo=None) for r in reports if r.time] == expected_times * 2

    check(*reports_and_problems(tmp_path / "archive"))
    zipped = tmp_path / "osw.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        for path in sorted(tree.iterdir(), reverse=True):
            archive.write(path, f"archive/oswiostat/{path.name}")
    check(*reports_and_problems(zipped))
    tarred = tmp_path / "osw.tar.gz"
    with tarfile.open(tarred, "w:gz") as archive:
        archive.add(tmp_path / "archive", "archive")
    check(*reports_and_problems(tarred))


def test_device_filter(tmp_path: Path) -> None:
    path = tmp_path / osw_name("racnode1", H10)
    path.write_text(osw_hour("racnode1", H10, snapshots=1))
    reports, _ = reports_and_problems(path, devices=frozenset({"sdb"}))
    assert [[row.device for row in r.rows] for r in reports] == [["sdb"]] * 3


def test_a_truncated_gzip_is_named_and_what_was_read_kept(tmp_path: Path) -> None:
    text = osw_hour("racnode1", H10, snapshots=20)
    packed = gzip.compress(text.encode())
    path = tmp_path / f"{osw_name('racnode1', H10)}.gz"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    reports, problems = reports_and_problems(path)
    assert 10 < len(reports) < 60
    assert len(problems) == 1 and problems[0].source == str(path)
    assert "truncated or unreadable" in problems[0].message and problems[0].line > 100


def test_a_marker_in_another_locale_is_named_not_guessed(tmp_path: Path) -> None:
    text = osw_hour("racnode1", H10, snapshots=1).replace("zzz ***Mon Jun  1", "zzz ***lun. juin  1")
    path = tmp_path / "french.dat"
    path.write_text(text)
    reports, problems = reports_and_problems(path)
    assert len(problems) == 1 and problems[0].line == 5 and "another locale" in problems[0].message
    assert [r.time for r in reports] == [None, None, None]  # not guessed
    assert reports[0].since_boot and reports[0].host == "racnode1"


def test_exawatcher_marker_and_own_time_lines(tmp_path: Path) -> None:
    lines = ["zzz <06/01/2020 10:00:00> Count:3"]
    lines += ["Linux 4.14.35-2047.el7uek.x86_64 (exadb01) \t06/01/2020 \t_x86_64_\t(48 CPU)", ""]
    for i, clock in enumerate(("10:00:00 AM", "10:00:05 AM", "10:00:10 AM")):
        lines += [f"06/01/2020 {clock}", HEADER, device_line("sda", i), ""]
    path = tmp_path / "2020_06_01_10_00_00_IostatExaWatcher_exadb01.dat.bz2"
    path.write_bytes(bz2.compress("\n".join(lines).encode()))
    reports, problems = reports_and_problems(path)
    assert problems == []
    assert [r.time for r in reports] == [dt.datetime(2020, 6, 1, 10, 0, s) for s in (0, 5, 10)]
    assert [r.interval_s for r in reports] == [None, 5.0, 5.0]
    assert reports[0].since_boot and reports[0].host == "exadb01"


def test_old_exadata_time_lines_dated_by_the_marker(tmp_path: Path) -> None:
    lines = ["zzz ***Mon Jun  1 23:59:58 PDT 2020"]
    for clock in ("23:59:58", "00:00:03"):
        lines += [f"Time: {clock}", HEADER, device_line("sda", 1), ""]
    path = tmp_path / "cell01_iostat_20.06.01.2300.dat"
    path.write_text("\n".join(lines) + "\n")
    reports, problems = reports_and_problems(path)
    assert problems == []
    assert [r.time for r in reports] == [dt.datetime(2020, 6, 1, 23, 59, 58), dt.datetime(2020, 6, 2, 0, 0, 3)]
    assert [r.host for r in reports] == ["cell01", "cell01"]  # from the file name


def test_names_say_host_and_hour() -> None:
    assert name_facts("a/b/racnode1_iostat_20.06.01.1000.dat.gz") == ("racnode1", dt.datetime(2020, 6, 1, 10))
    assert name_facts("2020_06_01_10_00_00_IostatExaWatcher_exadb01.dat.bz2") == (
        "exadb01",
        dt.datetime(2020, 6, 1, 10),
    )
    assert name_facts("iostat.log") == ("", None)


def test_missing_path_and_bad_zip_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "broken.zip"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    reports, problems = reports_and_problems(tmp_path / "nope", bad)
    assert reports == []
    assert [p.source for p in problems] == [str(tmp_path / "nope"), str(bad)]


def test_crlf_lines_and_an_endless_line_are_read_bounded(tmp_path: Path) -> None:
    """A file saved with CRLF reads as with LF; a 3 MB line is cut at MAX_LINE_CHARS, named,
    and the reports after it are kept."""
    text = osw_hour("racnode1", H10, snapshots=2)
    marker = "zzz ***Mon Jun  1 10:00:30 UTC 2020"
    text = text.replace(marker, "y" * 3_000_000 + "\n" + marker)
    path = tmp_path / osw_name("racnode1", H10)
    path.write_bytes(text.replace("\n", "\r\n").encode())
    reports, problems = reports_and_problems(path)
    assert len(reports) == 6
    assert len(problems) == 1 and "line not understood" in problems[0].message
    first_line_of_it = text.splitlines().index("y" * 3_000_000) + 1
    assert problems[0].line == first_line_of_it
    assert reports[3].time == dt.datetime(2020, 6, 1, 10, 0, 30, tzinfo=UTC)


def test_a_cut_tar_keeps_the_members_before_the_cut(tmp_path: Path) -> None:
    tree = tmp_path / "archive" / "oswiostat"
    tree.mkdir(parents=True)
    hours = [H10 + dt.timedelta(hours=h) for h in range(4)]
    for hour in hours:
        # a padding comment so the cut falls inside the third member, past its reports
        (tree / osw_name("racnode1", hour)).write_text(osw_hour("racnode1", hour) + "# " + "p" * 64_000 + "\n")
    tarred = tmp_path / "osw.tar"
    with tarfile.open(tarred, "w") as archive:
        for hour in hours:
            archive.add(tree / osw_name("racnode1", hour), f"archive/oswiostat/{osw_name('racnode1', hour)}")
    data = tarred.read_bytes()
    third = data.index(osw_name("racnode1", hours[2]).encode())
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: third + 20000])
    reports, problems = reports_and_problems(cut)
    assert {r.time.hour for r in reports if r.time} == {10, 11, 12}
    assert len([r for r in reports if r.time and r.time.hour < 12]) == 12
    assert (
        len(problems) == 1 and problems[0].source == str(cut) and "cut short after 3 member(s)" in problems[0].message
    )


def test_container_of_says_what_a_source_was_read_from() -> None:
    assert container_of("/a/iostat.log") == ""
    assert container_of("/a/x:y/n1_iostat_20.06.01.1000.dat.gz") == "OSWatcher hourly file, gzip"
    assert (
        container_of("/a/osw.tar.gz:archive/oswiostat/n1_iostat_20.06.01.1000.dat.bz2")
        == "OSWatcher hourly file, bzip2, member of a tar"
    )
    assert (
        container_of("/a/exa.zip:2020_06_01_10_00_00_IostatExaWatcher_cel01.dat")
        == "ExaWatcher hourly file, member of a zip"
    )
