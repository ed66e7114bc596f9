"""`edgebench compare`: the table and the JSON rows (plain keys, the runs' figures) from
run folders, derived again from the records, and one-line errors for bad folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.worker import InProcessWorker
from edgebench.cli.app import main
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.db_runs import with_model_facts
from tests.helpers.fakes import RIGHT, WRONG, fake_model
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of

MODES = ("none", "gbnf", "mask")
# Every key of a JSON row: plain names, no dotted paths.
ROW_KEYS = {
    "energy.j_per_prefill_token",
    "energy.j_per_decode_token",
    "energy.j_per_answer",
    "energy.j_per_compliant_answer",
    "energy.j_per_exact_answer",
    "energy.total_j",
    "energy_reason",
    "throttled_during_run",
    "run",
    "device",
    "device_fingerprint",
    "model",
    "runtime",  # llama.cpp, onnxruntime ... (a runtime not known here: its name)
    "runtime_version",
    "constraint",
    "engine",  # what enforced the mode: llguidance, llama.cpp GBNF; "-" for none
    "engine_version",
    "quantization",
    "threads",
    "temperature",
    "parse",
    "n",
    "n_skipped",
    "n_invalid_data",
    "skipped",
    "loops",
    "closed",
    "wall_s",
    "ttft_warm",
    "step_times",
    "fidelity",  # variant or reference when the run has fidelity.json, else None
    "kl_mean",
    "top1_agreement",
    "valid_json",
    "schema_compliance",
    "json_exact",
    "field_f1",
    "ttft_s_p50",
    "decode_tok_s_p50",
    "decode_ratio_to_none",
    "latency_s_p50",
    "compile_ms_p50",
    "cached_compile_ms_p50",
    "compiled_per_answer",  # the engine compiles the grammar again in every answer
    "hit_token_limit",
    "n_unsupported",
    "peak_rss_mib",
    "load_s",
    "model_size_mb",
    "decode_ratio_to_first_model",
    "ci95",
    "differences",
    "indicative",
}


def compare_out(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as done:
        main(["compare", *args])
    assert not done.value.code
    return capsys.readouterr().out


def compare_json(capsys: pytest.CaptureFixture[str], *run_dirs: Path) -> list[dict[str, Any]]:
    return json.loads(compare_out(capsys, *map(str, run_dirs), "--json"))


def fast_and_slow(fast: str) -> Any:
    """A worker factory: a fake of its own per arm, one token per 10 ms, or per 5 ms
    for the arms whose model label or mode is `fast`."""

    def factory(model: ModelUnderTest, mode: str) -> InProcessWorker:
        per_token = 0.005 if fast in (model.label, mode) else 0.01
        outputs = [RIGHT, WRONG, RIGHT]
        return InProcessWorker(
            FakeBackend(outputs, timings=FakeTimings(per_output_token=per_token))
        )

    return factory


@pytest.fixture
def run_dir(run_fake: RunFake) -> Path:
    return run_fake(constraints=MODES, factory=fast_and_slow("mask")).run_dir


def test_compare_prints_every_mode(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = compare_out(capsys, str(run_dir))
    for mode in MODES:
        assert f"│ {mode}" in out
    assert "×none" in out and "compile ms" in out
    assert f"constraint modes side by side · fake-model · {run_dir.name}" in out
    assert "×1st" not in out  # one model: no ratio to the first one


def test_compare_json_names_each_arms_quantization_and_threads(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two arms of two runs are told apart by what they ran with (issue 37)."""
    with_model_facts(run_dir, "Q4_K_M", 100_000, 300.0)
    threads = manifest_of(run_dir)["settings"]["threads"]
    rows = compare_json(capsys, run_dir)
    assert [(r["quantization"], r["threads"]) for r in rows] == [("Q4_K_M", threads)] * 3
    assert isinstance(threads, int) and threads > 0


def test_compare_json_rows_have_plain_keys_and_the_runs_figures(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = compare_json(capsys, run_dir)
    assert [r["constraint"] for r in rows] == list(MODES)
    for row in rows:
        assert set(row) == ROW_KEYS
        assert (row["run"], row["model"], row["n"], row["skipped"]) == (
            run_dir.name,
            "fake-model",
            3,
            None,
        )
        assert row["n_skipped"] == row["n_invalid_data"] == 0
        assert row["json_exact"] == pytest.approx(2 / 3) and row["valid_json"] == 1.0
        assert row["hit_token_limit"] == 0 and row["n_unsupported"] == 0
        assert row["loops"] == row["closed"] == 0 and row["wall_s"] is not None
        assert row["decode_ratio_to_first_model"] is None  # one model
        assert row["parse"] == "lenient"
        identity = manifest_of(run_dir)["device"]["identity"]
        assert (row["device"], row["device_fingerprint"]) == (
            identity["name"],
            identity["fingerprint"],
        )
    # `mask` decodes twice as fast (1 token per 5 ms, the others per 10 ms).
    assert [r["decode_tok_s_p50"] for r in rows] == pytest.approx([100, 100, 200])
    assert [r["decode_ratio_to_none"] for r in rows] == pytest.approx([1.0, 1.0, 2.0])
    # Compile times in milliseconds (the fake takes 5 ms, then 0 from its cache); `none`
    # compiles nothing.
    assert rows[0]["compile_ms_p50"] is None and rows[0]["cached_compile_ms_p50"] is None
    assert [r["compile_ms_p50"] for r in rows[1:]] == pytest.approx([5.0, 5.0])
    assert [r["cached_compile_ms_p50"] for r in rows[1:]] == [0.0, 0.0]
    assert all(r["model_size_mb"] == pytest.approx(1e-6) for r in rows)  # a 1-byte file


def test_two_models_get_a_ratio_to_the_first(
    run_fake: RunFake, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run_fake(
        models=[fake_model("a"), fake_model("b")],
        constraints=("none", "mask"),
        factory=fast_and_slow("b"),
    )
    rows = compare_json(capsys, result.run_dir)
    assert [(r["model"], r["constraint"]) for r in rows] == [
        ("a", "none"),
        ("a", "mask"),
        ("b", "none"),
        ("b", "mask"),
    ]
    assert [r["decode_ratio_to_first_model"] for r in rows] == pytest.approx([1, 1, 2, 2])
    assert [r["decode_ratio_to_none"] for r in rows] == pytest.approx([1, 1, 1, 1])
    out = compare_out(capsys, str(result.run_dir))
    assert "×1st" in out and "models and constraint modes side by side" in out


def test_several_runs_are_one_table(
    run_dir: Path, run_fake: RunFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = run_fake([RIGHT] * 3, out=tmp_path / "other").run_dir
    rows = compare_json(capsys, run_dir, other)
    assert [(r["run"], r["constraint"]) for r in rows] == [
        *((run_dir.name, m) for m in MODES),
        ("other", "none"),
    ]
    assert rows[-1]["json_exact"] == 1.0


def test_compare_derives_the_figures_again_from_the_records(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = compare_json(capsys, run_dir)
    # A summary edited by hand (or by an older edgebench) does not count ...
    summary = json.loads((run_dir / "summary.json").read_text())
    for arm in summary["arms"]:
        arm["families"]["edgejson"]["overall"]["json_exact"] = 0.0
    (run_dir / "summary.json").write_text(json.dumps(summary))
    assert compare_json(capsys, run_dir) == rows
    # ... nor one a run killed before it wrote one is missing.
    (run_dir / "summary.json").unlink()
    assert compare_json(capsys, run_dir) == rows


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
    assert_one_line_error(code, err, "samples.jsonl", "line 10", "not valid JSON")


def test_runs_extracted_differently_get_a_parse_column(
    run_dir: Path, run_fake: RunFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = compare_out(capsys, str(run_dir))
    assert "· parse lenient" in out  # one mode for the whole table: in the title
    other = run_fake([RIGHT] * 3, out=tmp_path / "other", parse="reference").run_dir
    rows = compare_json(capsys, run_dir, other)
    # The fake task has no published scorer: reference falls back to lenient, and says so.
    assert rows[-1]["parse"] == "reference (no published scorer for echo: lenient)"
    out = compare_out(capsys, str(run_dir), str(other))
    assert "parse lenient" not in out
    assert "no published scorer for echo" in out
    assert "their accuracy columns are not comparable" in " ".join(out.split())


def test_compare_shows_each_arms_time_per_decode_loop_call(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fake times a 50 µs mask per token under a constraint and one forward pass per
    token after the first (5 ms for `mask`, 10 ms for the others)."""
    out = compare_out(capsys, str(run_dir))
    table = out[out.index("decode loop, µs p50/p99") :]
    rows = {line.split("│")[1].strip(): line for line in table.splitlines() if "│" in line}
    assert "10000/10000" in rows["none"] and "50/50" not in rows["none"]
    assert "50/50" in rows["mask"] and "5000/5000" in rows["mask"]
    assert "decode: llama_decode" in table  # the caption says what each phase is
    by_mode = {row["constraint"]: row for row in compare_json(capsys, run_dir)}
    assert by_mode["mask"]["step_times"]["mask"]["p50_us"] == 50.0
    assert by_mode["mask"]["step_times"]["decode"]["calls"] > 0
    assert "mask" not in by_mode["none"]["step_times"]


def test_compare_of_a_run_without_step_times_has_no_step_table(run_dir: Path) -> None:
    """Runs written before format 2.6 timed no phases: no table, no empty rows."""
    from dataclasses import replace

    from edgebench.report.steps import step_table
    from edgebench.summary import load_run

    summary = load_run(run_dir).summary
    untimed = [replace(a, perf=replace(a.perf, step_times={})) for a in summary.arms]
    assert step_table([summary]) is not None
    assert step_table([replace(summary, arms=untimed)]) is None
