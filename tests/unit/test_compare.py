"""`edgebench compare`: the table from run folders, and one-line errors for bad folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.cli.app import main
from tests.unit.test_cli_run_errors import assert_one_line_error, run_cli
from tests.unit.test_constraints import fakes, run_modes


def compare_out(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as done:
        main(["compare", *args])
    assert not done.value.code
    return capsys.readouterr().out


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    run_modes(tmp_path, "none,gbnf,mask", fakes("none,gbnf,mask"))
    return tmp_path / "run"


def test_compare_prints_every_mode(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = compare_out(capsys, str(run_dir))
    for mode in ("none", "gbnf", "mask"):
        assert f"│ {mode}" in out
    assert "×none" in out and "compile ms" in out


def test_compare_json_rows(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = json.loads(compare_out(capsys, str(run_dir), "--json"))
    assert [r["constraint"] for r in rows] == ["none", "gbnf", "mask"]
    assert all(r["decode_ratio_to_none"] == pytest.approx(1.0) for r in rows)
    assert rows[1]["compile.first_s.p50"] == pytest.approx(0.005)


def test_compare_rederives_a_run_without_summary(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_dir / "summary.json").unlink()  # e.g. a run killed before it wrote one
    assert len(json.loads(compare_out(capsys, str(run_dir), "--json"))) == 3


def test_compare_missing_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, err = run_cli(capsys, "compare", str(tmp_path / "nope"))
    assert_one_line_error(code, err, "no such run folder")


def test_compare_folder_without_manifest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = run_cli(capsys, "compare", str(tmp_path))
    assert_one_line_error(code, err, "not a run folder")


def test_compare_broken_manifest(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{not json")
    code, err = run_cli(capsys, "compare", str(tmp_path))
    assert_one_line_error(code, err, "manifest.json", "not valid JSON")


def test_compare_broken_samples_line(capsys: pytest.CaptureFixture[str], run_dir: Path) -> None:
    with (run_dir / "samples.jsonl").open("a") as handle:
        handle.write("{oops\n{}\n")
    code, err = run_cli(capsys, "compare", str(run_dir))
    assert_one_line_error(code, err, "samples.jsonl", "not valid JSON")
