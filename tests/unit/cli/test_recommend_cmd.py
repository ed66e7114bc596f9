"""`edgebench recommend` from the command line: the picks with reasons, the left-out
ones with why, the Pi verdicts, --json, at 80 columns; every bad input one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import assert_one_line_error, run_cli, stdout_of
from tests.helpers.sweep_runs import make_sweep_run


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sweep_run(tmp_path_factory.mktemp("cli") / "sweep")


def test_picks_and_exclusions_with_their_reasons(
    sweep_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = stdout_of(capsys, "recommend", str(sweep_dir), "--max-memory", "235MiB", "--arm", "mask")
    assert max(len(line) for line in out.splitlines()) <= 80
    flat = " ".join(out.split())
    assert "✓ smollm2-135m-instruct@Q4_K_M · mask: on the front among those that fit" in flat
    assert "5 MiB to spare: most accurate" in flat
    assert "✗ smollm2-135m-instruct@Q8_0 · mask: over budget by 75 MiB (needs 310 MiB)" in flat
    assert "Raspberry Pi 4/5: does it fit?" in flat and "not measured on a Pi" in flat
    assert " none " not in flat.split("recommend ·")[1]  # --arm mask: only its rows


def test_nothing_fits_exits_0_and_says_so(
    sweep_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = stdout_of(capsys, "recommend", str(sweep_dir), "--max-memory", "100MB")
    assert "no variant fits" in out


def test_json(sweep_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        "recommend",
        str(sweep_dir),
        "--json",
        "--min-accuracy",
        "0.6",
        "--metric",
        "json_exact",
    )
    data = json.loads(stdout_of(capsys, *args))
    assert data["metric"] == "json_exact" and data["min_accuracy"] == 0.6
    assert data["picks"] == [
        "smollm2-135m-instruct@Q8_0 · none",
        "smollm2-135m-instruct@Q8_0 · mask",
        "smollm2-135m-instruct@Q4_K_M · none",
        "smollm2-135m-instruct@Q4_K_M · mask",
    ]
    q2 = next(v for v in data["variants"] if v["quantization"] == "Q2_K")
    assert q2["reasons"] == ["below min accuracy: JSONExact 0.250 < 0.6"]
    assert q2["devices"] == {
        "Raspberry Pi 4/5 2 GB": "fits",
        "Raspberry Pi 4/5 4 GB": "fits",
        "Raspberry Pi 4/5 8 GB": "fits",
    }
    assert q2["need_mib"] == 190.0 and q2["kv_in_peak_rss"] is True
    assert q2["kl_mean"] == 0.31 and q2["on_front"] is True


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--max-memory", "4XB"], ["--max-memory 4XB: not a memory size", "4GiB"]),
        (["--metric", "bleu"], ["--metric bleu: not a figure of this run", "field_f1"]),
        (["--arm", "gbnf"], ["--arm gbnf: not a constraint mode of this run", "none, mask"]),
        (["--min-accuracy", "1.5"], ["--min-accuracy 1.5: must be between 0 and 1"]),
        (["--min-accuracy", "-0.5"], ["--min-accuracy -0.5: must be between 0 and 1"]),
    ],
)
def test_bad_options_are_one_line(
    sweep_dir: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragments: list[str]
) -> None:
    code, err = run_cli(capsys, "recommend", str(sweep_dir), *args)
    assert_one_line_error(code, err, *fragments)


def test_not_a_run_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "recommend", str(tmp_path))
    assert_one_line_error(code, err, "not a run folder")
    code, err = run_cli(capsys, "recommend", str(tmp_path / "missing"))
    assert_one_line_error(code, err, "no such run folder")


def test_a_run_with_no_variants_is_one_line(
    sweep_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    manifest = json.loads((sweep_dir / "manifest.json").read_text())
    manifest["models"], manifest["arms"] = [], []
    (empty / "manifest.json").write_text(json.dumps(manifest))
    code, err = run_cli(capsys, "recommend", str(empty))
    assert_one_line_error(code, err, "no variants to compare")


def test_a_run_with_no_scored_example_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = make_sweep_run(tmp_path / "run", modes="none", n=2)
    (run_dir / "samples.jsonl").write_text("")
    code, err = run_cli(capsys, "recommend", str(run_dir))
    assert_one_line_error(code, err, "no arm of the run scored an example: nothing to compare")
