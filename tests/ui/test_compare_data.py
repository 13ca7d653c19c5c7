"""The criteria file the compare screen names: remembered in settings.json, vetted like the
settings file before every read (a file another user can write would decide what passes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from racperf_tui.core.criteria import CriteriaError
from racperf_tui.ui.compare_data import (
    SETTING_CRITERIA_FILE,
    read_criteria,
    remember_criteria_file,
    remembered_criteria_file,
)


def test_a_criteria_file_is_remembered_absolute_and_forgotten(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "signoff.criteria").write_text("read_iops >= 20_000 at read_clat_p99_us <= 5,000\n")
    monkeypatch.chdir(tmp_path)
    assert remembered_criteria_file(data_dir) is None
    assert remember_criteria_file(data_dir, "signoff.criteria") == str(tmp_path / "signoff.criteria")
    assert json.loads((data_dir / "settings.json").read_text()) == {
        SETTING_CRITERIA_FILE: str(tmp_path / "signoff.criteria")
    }
    assert remembered_criteria_file(data_dir) == str(tmp_path / "signoff.criteria")
    (criterion,) = read_criteria(str(tmp_path / "signoff.criteria"))
    assert [(c.metric, c.op, c.value) for c in criterion.conditions] == [
        ("read_iops", ">=", 20000.0),
        ("read_clat_p99_us", "<=", 5000.0),
    ]
    assert remember_criteria_file(data_dir, None) is None and remembered_criteria_file(data_dir) is None


def test_a_criteria_file_others_can_write_is_refused_and_not_remembered(data_dir: Path, tmp_path: Path) -> None:
    criteria = tmp_path / "shared.criteria"
    criteria.write_text("read_iops > 0\n")
    os.chmod(criteria, 0o666)
    with pytest.raises(CriteriaError) as caught:
        remember_criteria_file(data_dir, str(criteria))
    said = str(caught.value)
    assert "the criteria file" in said and str(criteria) in said and "writable" in said
    assert remembered_criteria_file(data_dir) is None


def test_a_file_that_is_not_criteria_names_the_line(data_dir: Path, tmp_path: Path) -> None:
    criteria = tmp_path / "bad.criteria"
    criteria.write_text("read_iops > 0\nfast please\n")
    with pytest.raises(CriteriaError, match=r"bad.criteria:2: 'fast please' is not a condition"):
        remember_criteria_file(data_dir, str(criteria))
