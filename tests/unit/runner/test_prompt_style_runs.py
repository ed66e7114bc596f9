"""`--prompt` through a run: the prompts the model reads, the manifest's record of style,
template and dataset file, the prefix cache's prefixes, and the card and report."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from edgebench.io import read_jsonl
from edgebench.prompts import STYLE_COMPLETION, PromptFormat
from edgebench.report.card import write_card
from edgebench.report.html import render_report
from edgebench.runfolder.records import RunSettings
from edgebench.runner.prefixes import shared_prefixes
from edgebench.runner.prepare import load_examples
from edgebench.summary import load_run
from edgebench.tasks import get_task
from edgebench.tasks.deepjson import REFERENCE_TEMPLATE
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of

ROW = {  # a Chinese row, as half the DeepJSONEval release is
    "schema": {
        "type": "object",
        "properties": {"a": {"type": "integer", "description": "甲的数量"}},
        "required": ["a"],
    },
    "text": "甲的数量是一。",
    "json": {"a": 1},
    "category": "misc",
    "true_depth": 3,
}


def test_the_manifest_records_the_style_and_the_template_used(
    run_fake: RunFake, tmp_path: Path
) -> None:
    result = run_fake([RIGHT] * 2, n=2, prompt="reference")
    manifest = manifest_of(result.run_dir)
    assert manifest["settings"]["prompt"] == "reference"
    assert manifest["task"]["prompt_style"] == "reference"
    assert manifest["task"]["prompt_template"] == "Reference: {text}"
    prompts = [s["prompt"] for s in read_jsonl(result.run_dir / "samples.jsonl")]
    assert all("Reference: word word" in p for p in prompts)
    default = manifest_of(run_fake([RIGHT], n=1, out=tmp_path / "default").run_dir)
    assert default["task"]["prompt_style"] == "default"
    assert default["task"]["prompt_template"] == "{text}"


def test_a_deepjson_run_reads_the_benchmarks_prompt(run_fake: RunFake, tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(ROW) + "\n")
    task = get_task("deepjson")
    settings = RunSettings(task="deepjson", dataset=path)
    exs, record = load_examples(task, settings)
    result = run_fake(
        ['```json\n{"a": 1}\n```'], task_impl=task, examples=exs, dataset_record=record,
        prompt="reference",
    )  # fmt: skip
    manifest = manifest_of(result.run_dir)
    assert manifest["task"]["prompt_template"] == REFERENCE_TEMPLATE
    (sample,) = read_jsonl(result.run_dir / "samples.jsonl")
    assert '*** JSON Schema\n{\n  "type": "object",' in sample["prompt"]
    # the rendered prompt the model read keeps the CJK text and schema, and the language rule
    assert sample["prompt"].count("甲的数量") == 2 and "\\u" not in sample["prompt"]
    assert "must match the language type of the text description" in sample["prompt"]
    assert sample["scores"]["deepjson"]["strict"] == 1
    # the file's own sha256 beside the hash of data and schemas
    assert manifest["dataset"]["file_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert manifest["dataset"]["sha256"] and manifest["dataset"]["n_invalid_data"] == 0


def test_prefix_cache_prefixes_are_those_of_the_style_the_run_uses() -> None:
    task = get_task("edgejson")
    loaded = task.load(*task.resolve_paths(None, None))
    exs = [ex for ex in loaded if ex.schema_id == loaded[0].schema_id][:2]
    completion = PromptFormat(STYLE_COMPLETION)
    prompts = completion.render_many([task.build_prompt(ex, "reference") for ex in exs])
    prefixes = shared_prefixes(completion, task, exs, prompts, "reference")
    assert prefixes == [
        "Extract the structured JSON data from the following text.\n\nInput: "
    ] * len(exs)
    assert shared_prefixes(completion, task, exs, prompts) == [None] * len(exs)


def test_card_and_report_show_the_prompt_style(run_fake: RunFake, tmp_path: Path) -> None:
    result = run_fake([RIGHT] * 2, n=2, prompt="reference")
    run = load_run(result.run_dir)
    card = tmp_path / "card.md"
    write_card(run, card, examples=1)
    text = card.read_text()
    title = "Task prompt template · style reference (the benchmark's own published prompt)"
    assert title in text and "\nReference: {text}\n" in text  # the template, as code
    assert "task prompt style | reference" in text.replace("\\", "")
    page = render_report([run])
    assert title.replace("'", "&#39;") in page
