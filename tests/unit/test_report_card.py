"""`edgebench card` from fake-backend runs: Hub metadata that huggingface_hub parses back
with the run's numbers, every section, plots next to the card, hostile text inert and
intact, generic breakdowns, metric families and device fields, and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import ModelCard, metadata_load
from markdown_it import MarkdownIt

from edgebench.cli.app import main
from edgebench.errors import UserError
from edgebench.report.card import pick_model, write_card
from edgebench.report.facts import device_rows
from edgebench.report.rundata import RunFolder, load_run
from tests.unit.report_runs import (
    CHAT_TEMPLATE,
    HOSTILE_OUTPUTS,
    IMG,
    MODEL_LABEL,
    PIPE,
    REMOTE_IMAGE,
    SCRIPT,
    TEMPLATE_INJECTION,
    make_run,
)
from tests.unit.test_cli_run_errors import assert_one_line_error, run_cli
from tests.unit.test_report_markdown import Page

PI_DEVICE = {
    "cpu_model": "Cortex-A76",
    "threads_used": 4,
    "board": {"model": "Raspberry Pi 5 Model B Rev 1.0"},
    "temperature_c": {"start": 51.2, "end": 63.0},
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("card") / "run", depth=True, device=PI_DEVICE)


@pytest.fixture(scope="module")
def card_path(run_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "card.md"
    write_card(load_run(run_dir), out, examples=3)
    return out


def test_metadata_parses_and_holds_the_runs_numbers(run_dir: Path, card_path: Path) -> None:
    summary = json.loads((run_dir / "summary.json").read_text())
    card = ModelCard.load(card_path, ignore_metadata_errors=False)
    assert card.data.model_name == MODEL_LABEL
    assert card.data.license == "apache-2.0"
    assert card.data.base_model == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert card.data.pipeline_tag == "text-generation"
    results = {(r.metric_config, r.metric_type): r for r in card.data.eval_results}
    for mode, result in summary["by_constraint"].items():
        for metric in ("json_exact", "field_f1", "schema_compliance", "valid_json"):
            got = results[(f"constraint={mode}", metric)]
            assert got.metric_value == pytest.approx(result["metrics"][metric], abs=1e-4)
            assert got.task_type == "text-generation" and got.dataset_split == "test"
            assert got.dataset_revision == "ab" * 32
        speed = results[(f"constraint={mode}", "decode_tokens_per_second_p50")]
        assert speed.metric_value == pytest.approx(result["perf"]["decode_tok_s"]["p50"], 1e-4)
    # The fake decodes `mask` twice as fast: the card says so in numbers.
    decode = {
        m: results[(f"constraint={m}", "decode_tokens_per_second_p50")].metric_value
        for m in ("none", "mask")
    }
    assert decode["mask"] == pytest.approx(2 * decode["none"], rel=1e-3)
    assert metadata_load(card_path)["model-index"][0]["name"] == MODEL_LABEL


def test_card_has_every_section_and_its_plots_next_to_it(card_path: Path) -> None:
    text = card_path.read_text()
    for heading in (
        "## Device",
        "## How it was run",
        "### Prompt",
        "## Accuracy",
        "### By complexity",
        "### By depth",
        "### By schema",
        "## Performance",
        "## Plots",
        "## Sample outputs",
    ):
        assert f"\n{heading}" in text, heading
    for plot in (
        "accuracy-by-complexity",
        "accuracy-by-depth",
        "constraint-modes",
        "latency",
        "accuracy-speed-memory",
    ):
        png = card_path.parent / f"card-{plot}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", plot
        assert f"](card-{plot}.png)" in text
    assert "accuracy-by-schema" not in text  # per-schema results are a table
    # Device facts whatever their shape, the runtime, TTFT and decode p50/p95.
    assert "| board.model | Raspberry Pi 5 Model B Rev 1.0 |" in text
    assert "temperature\\_c.end" in text and "63.0" in text
    assert "decode tok/s p95" in text and "TTFT p50 (s)" in text
    assert not list(card_path.parent.glob(".*tmp"))  # atomic writes leave no temp files


def rendered(card_path: Path) -> Page:
    body = card_path.read_text().split("\n---\n", 1)[1]  # the Markdown after the metadata
    return Page(MarkdownIt("commonmark", {"html": True}).enable("table").render(body))


def test_hostile_text_is_inert_and_intact_in_the_card(card_path: Path) -> None:
    page = rendered(card_path)
    # The only elements with a source are the card's own local plots.
    images = [attrs for tag, attrs in page.tags if tag == "img"]
    assert images and all(
        a["src"].startswith("card-") and a["src"].endswith(".png") for a in images
    )
    assert "script" not in page.names()
    assert not any(k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert not any(tag == "a" for tag, _ in page.tags)
    # Model outputs come back verbatim, newlines, fences and all.
    for output in HOSTILE_OUTPUTS:
        assert output in page.text
    # The GGUF name (a table cell), the chat template (a code block), the dataset text.
    assert f"{SCRIPT} {IMG} {PIPE}" in page.text
    assert CHAT_TEMPLATE in page.text
    assert REMOTE_IMAGE in page.text and TEMPLATE_INJECTION in page.text
    assert MODEL_LABEL in page.text


def test_no_examples_leaves_out_the_section(run_dir: Path, tmp_path: Path) -> None:
    write_card(load_run(run_dir), tmp_path / "c.md", examples=0)
    assert "## Sample outputs" not in (tmp_path / "c.md").read_text()


def test_metric_families_appear_in_tables_and_model_index(run_dir: Path, tmp_path: Path) -> None:
    run = load_run(run_dir)
    for result in run.summary["by_constraint"].values():
        result["metrics"]["sted"] = {"similarity": 0.625}
    write_card(run, tmp_path / "card.md")
    card = ModelCard.load(tmp_path / "card.md")
    assert {r.metric_type for r in card.data.eval_results} >= {"sted.similarity"}
    assert "| sted similarity |" in (tmp_path / "card.md").read_text()


def test_a_run_of_several_models_needs_model(run_dir: Path) -> None:
    run = load_run(run_dir)
    several = RunFolder(
        run.path,
        run.manifest,
        run.samples,
        {**run.summary, "by_model": {"a": run.summary, "b": run.summary}},
    )
    with pytest.raises(UserError, match="holds 2 models \\(a, b\\); choose one with --model"):
        pick_model(several, None)
    assert pick_model(several, "b") == "b"
    with pytest.raises(UserError, match="no model 'c'"):
        pick_model(several, "c")


def test_cli_writes_the_card_into_the_run_folder(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["card", str(run_dir)])
    assert not done.value.code
    out = capsys.readouterr().out
    assert f"card: {run_dir / 'card.md'}" in out and out.count("plot: ") == 5
    ModelCard.load(run_dir / "card.md", ignore_metadata_errors=False)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["nope"], "no such run folder"),
        (["."], "not a run folder (no manifest.json)"),
        (["RUN", "--out", "card.txt"], "expected a .md file name"),
        (["RUN", "--out", "missing/card.md"], "does not exist"),
    ],
)
def test_card_errors_are_one_line(
    args: list[str],
    fragment: str,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    args = [str(run_dir) if a == "RUN" else a for a in args]
    code, err = run_cli(capsys, "card", *args)
    assert_one_line_error(code, err, fragment)


def test_corrupt_samples_are_a_one_line_error(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text((run_dir / "manifest.json").read_text())
    (broken / "samples.jsonl").write_text('{"id": 1}\n{oops\n{"id": 2}\n')
    code, err = run_cli(capsys, "card", str(broken))
    assert_one_line_error(code, err, "samples.jsonl: line 2: not valid JSON")


def test_a_run_killed_before_its_first_example_still_renders(run_dir: Path, tmp_path: Path) -> None:
    from edgebench.report.html import render_report

    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest.update(status="running", arms={})
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text(json.dumps(manifest))
    files = write_card(load_run(tmp_path / "run"), tmp_path / "card.md")
    assert files.plots == [] and "## Device" in files.card.read_text()
    ModelCard.load(files.card, ignore_metadata_errors=False)
    assert 'id="leaderboard"' in render_report([load_run(tmp_path / "run")])


def test_device_rows_show_the_runtime_once(tmp_path: Path) -> None:
    # The device block's `runtime` is the arm's runtime `build`: not listed twice.
    run = load_run(make_run(tmp_path / "run", modes="none", n=1))
    names = [name for name, _ in device_rows(run)]
    assert run.manifest["device"]["runtime"] == {"name": "fake"}
    assert names.count("runtime.name") == 1
    assert not any(name.startswith("runtime.build") for name in names)
