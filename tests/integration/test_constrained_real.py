"""Every constraint mode on the real SmolLM2 (3 examples), and grammars the engines refuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.base import DecodeSettings
from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.backends.llama_outlines import OutlinesLlamaBackend
from edgebench.constraints import gbnf, parse_modes, request_for
from edgebench.resources import resource_dir
from edgebench.runfolder.records import RunSettings
from edgebench.runner.engine import execute
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.request import RunRequest
from edgebench.scoring.schema import get_checker
from edgebench.tasks import get_task
from edgebench.tasks.base import Prompt
from edgebench.tasks.formats.edgejson import read_schema_folder
from tests.helpers.run_folder import final_samples

pytestmark = pytest.mark.model

MODES = "none,json,gbnf,outlines,mask"
SCHEMA_MODES = ("gbnf", "outlines", "mask")
# The public EdgeJSON contact_info phone pattern: the converter writes `\s` into the
# grammar, which llama.cpp cannot parse (and LlamaGrammar would segfault on).
CONTACT_INFO = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "phone": {"type": "string", "pattern": "^\\+?[0-9\\-\\s()]+$"},
    },
    "required": ["name", "phone"],
}


@pytest.fixture(scope="module")
def constrained_run(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("constrained") / "run"
    settings = RunSettings(limit=3, threads=2, out=out, constraints=tuple(parse_modes(MODES)))
    task = get_task("edgejson")
    examples, info = load_examples(task, settings)
    execute(RunRequest(settings, [model_under_test(None)], task, examples, info))
    return out


def by_mode(run: Path) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for sample in final_samples(run):
        grouped.setdefault(sample["constraint"], []).append(sample)
    return grouped


def test_every_mode_runs_the_same_three_examples(constrained_run: Path) -> None:
    grouped = by_mode(constrained_run)
    assert list(grouped) == parse_modes(MODES)
    ids = [s["id"] for s in grouped["none"]]
    assert len(ids) == 3 and all([s["id"] for s in grouped[m]] == ids for m in grouped)
    for samples in grouped.values():
        for sample in samples:
            assert sample["timings"]["decode_tok_s"] > 0 and sample["output_tokens"] > 0
            assert sample["finish_reason"] in ("stop", "json_complete", "loop", "length")


def test_schema_modes_give_parseable_compliant_json(constrained_run: Path) -> None:
    grouped = by_mode(constrained_run)
    for mode in SCHEMA_MODES:
        for sample in grouped[mode]:
            assert sample["constraint_status"] == "applied"
            if sample["hit_token_limit"]:
                continue  # a runaway value, flagged
            assert sample["parse"]["ok"], (mode, sample["raw_output"])
            # Whole-output parse: a grammar leaves no prose or code fence around the JSON.
            assert json.loads(sample["raw_output"]) == sample["parsed"]
    # The mask grammar fixes separators, so keys and punctuation arrive fast-forwarded.
    assert sum(s["forced_tokens"] for s in grouped["mask"]) > 20


def test_summary_and_manifest_report_each_mode(constrained_run: Path) -> None:
    summary = json.loads((constrained_run / "summary.json").read_text())
    manifest = json.loads((constrained_run / "manifest.json").read_text())
    assert summary["status"] == "completed"
    arms = {arm["constraint"]: arm for arm in summary["arms"]}
    records = {arm["constraint"]: arm for arm in manifest["arms"]}
    assert list(arms) == list(records) == parse_modes(MODES)
    for mode in parse_modes(MODES):
        result = arms[mode]
        assert result["n_examples"] == 3 and result["decode_ratio_to_none"] > 0
        assert result["perf"]["peak_rss_mb"] > 50
        assert records[mode]["runtime"]["n_threads"] == 2
    for mode in SCHEMA_MODES:
        compile_info = arms[mode]["compile"]
        assert compile_info["schemas"] == 3 and compile_info["unsupported"] == 0
        assert compile_info["first_s"]["p50"] > 0
        assert compile_info["cached_s"]["p50"] < compile_info["first_s"]["p50"]
    # The built-in schemas' GBNF ships in grammars/, so nothing is converted.
    assert arms["gbnf"]["compile"]["sources"] == {"bundled": 3}
    assert records["mask"]["runtime"]["grammar_tokenizer_s"] > 0


def test_card_of_the_real_run_parses_with_its_numbers(
    constrained_run: Path, tmp_path: Path
) -> None:
    """The model card huggingface_hub reads back: model-index values are the run's."""
    from huggingface_hub import ModelCard, metadata_load

    from edgebench.report.card import write_card
    from edgebench.report.html import write_report
    from edgebench.summary import load_run

    run = load_run(constrained_run)
    # published whatever the machine was doing: the values are what this test checks
    files = write_card(run, tmp_path / "card.md", allow_contended=True)
    assert len(files.plots) >= 4 and all(p.stat().st_size > 5000 for p in files.plots)
    card = ModelCard.load(files.card, ignore_metadata_errors=False)
    assert card.data.model_name == "smollm2-135m-instruct"
    assert card.data.license == "apache-2.0"
    assert card.data.base_model == "HuggingFaceTB/SmolLM2-135M-Instruct"
    summary = json.loads((constrained_run / "summary.json").read_text())
    # Each result's config: `constraint=<mode>; backend=...; threads=...; quantization=...`.
    configs = [
        dict(p.split("=", 1) for p in r.metric_config.split("; ")) for r in card.data.eval_results
    ]
    assert all(c["backend"].startswith("llama.cpp") and c["quantization"] for c in configs)
    results = {
        (f"constraint={c['constraint']}", r.metric_type): r.metric_value
        for c, r in zip(configs, card.data.eval_results, strict=True)
    }
    for result in summary["arms"]:
        mode = result["constraint"]
        for metric, value in result["families"]["edgejson"]["overall"].items():
            if metric != "n":
                assert results[(f"constraint={mode}", metric)] == pytest.approx(value, abs=1e-4)
        decode = result["perf"]["decode_tok_s"]["p50"]
        assert decode > 0
        got = results[(f"constraint={mode}", "decode_tokens_per_second_p50")]
        assert got == pytest.approx(decode, rel=1e-4)
        rss = results[(f"constraint={mode}", "peak_rss_mib")]
        assert rss == pytest.approx(result["perf"]["peak_rss_mb"], rel=1e-4)
    assert metadata_load(files.card)["edgebench"]["runtime"].startswith("llama.cpp")
    page = write_report([run], tmp_path / "report.html").read_text()
    assert page.count('<tr class="leaderboard-row">') == len(parse_modes(MODES))


def test_grammar_llama_cpp_cannot_parse_is_unsupported_not_a_crash(smollm2: Path) -> None:
    backend = LlamaCppBackend(str(smollm2), n_threads=2, constraint_mode="gbnf")
    try:
        backend.load(512)
        request = request_for("gbnf", CONTACT_INFO, "contact_info")
        assert request is not None
        report = backend.compile_constraint(request)
        assert not report.ok and "unknown escape" in (report.error or "")
        # The backend still decodes (unconstrained here) after refusing the grammar.
        gen = backend.generate("Say hi:", DecodeSettings(max_tokens=4))
        assert gen.output_tokens == 4
    finally:
        backend.close()


def test_a_grammar_too_deep_for_llama_cpp_is_refused_before_it_and_ignored_keywords_listed(
    smollm2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """maxLength 32767 killed the worker with SIGSEGV inside llama.cpp's grammar parser;
    it is now refused before conversion. Keywords the converter reads past are listed."""
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path))
    deep = {"type": "object", "properties": {"note": {"type": "string", "maxLength": 32767}}}
    loose = {
        "type": "object",
        "properties": {"kind": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
        "patternProperties": {"^x-": {}},
        "minProperties": 1,
    }
    backend = LlamaCppBackend(str(smollm2), n_threads=2, constraint_mode="gbnf")
    try:
        backend.load(512)
        report = backend.compile_constraint(request_for("gbnf", deep, "deep"))  # type: ignore[arg-type]
        assert not report.ok and report.outcome == "refused" and report.source == "edgebench"
        assert (report.error or "").startswith("$.note: maxLength 32767 would nest the GBNF")
        assert not list(gbnf.grammar_cache_dir().glob("*.gbnf"))  # never converted
        report = backend.compile_constraint(request_for("gbnf", loose, "loose"))  # type: ignore[arg-type]
        assert report.ok
        assert report.warnings == (
            "$: patternProperties, minProperties",
            "$.kind: oneOf (as anyOf)",
        )
    finally:
        backend.close()


def test_schema_llguidance_refuses_is_unsupported_by_the_mask(smollm2: Path) -> None:
    backend = LlamaCppBackend(str(smollm2), n_threads=2, constraint_mode="mask")
    schema = {"type": "object", "properties": {"x": {"type": "string", "pattern": "(["}}}
    try:
        backend.load(512)
        request = request_for("mask", schema, "odd_format")
        assert request is not None
        report = backend.compile_constraint(request)
        assert not report.ok and report.error and report.error.startswith("llguidance:")
    finally:
        backend.close()


def test_keywords_llguidance_has_not_implemented_are_listed_not_refused(smollm2: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}},
    }
    for guard in (False, True):
        backend = LlamaCppBackend(str(smollm2), n_threads=2, constraint_mode="mask", guard=guard)
        try:
            backend.load(512)
            report = backend.compile_constraint(request_for("mask", schema, "tags"))  # type: ignore[arg-type]
        finally:
            backend.close()
        assert report.ok
        if guard:  # the keyword guard enforces uniqueItems: nothing left unenforced
            assert report.warnings == () and report.guarded == ("$.tags: uniqueItems",)
        else:
            assert "uniqueItems" in report.warnings[0] and report.guarded == ()


# A bound and a unique enum array the text invites the model to break.
RIVER = {
    "type": "object",
    "properties": {
        "level_cm": {"type": "integer", "minimum": 0, "maximum": 10},
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["high", "low", "flood"]},
            "uniqueItems": True,
        },
    },
    "required": ["level_cm", "tags"],
}
RIVER_TEXT = (
    "The river gauge reads 700 cm, flood, flood, high. Answer as JSON with level_cm and tags."
)


def _schema_backend(path: Path, mode: str, guard: bool) -> Any:
    if mode == "outlines":
        return OutlinesLlamaBackend(str(path), 2, guard=guard)
    return LlamaCppBackend(str(path), 2, constraint_mode=mode, guard=guard)


def _decode(path: Path, mode: str, guard: bool, schema: dict[str, Any], text: str) -> Any:
    prompt = model_under_test(None).prompt_format.render(Prompt(None, text))
    backend = _schema_backend(path, mode, guard)
    try:
        backend.load(512)
        request = request_for(mode, schema, "river")
        backend.compile_constraint(request)
        return backend.generate(prompt, DecodeSettings(max_tokens=60, constraint=request))
    finally:
        backend.close()


@pytest.mark.parametrize("mode", SCHEMA_MODES)
def test_keyword_guard_makes_every_engine_keep_bounds_and_unique_items(
    smollm2: Path, mode: str
) -> None:
    checker = get_checker(RIVER, source="river")
    free = _decode(smollm2, mode, False, RIVER, RIVER_TEXT)
    guarded = _decode(smollm2, mode, True, RIVER, RIVER_TEXT)
    # The engine alone: gbnf and outlines let 700 through. llguidance keeps the bound;
    # whether the model then repeats "flood" until the budget depends on the llama.cpp
    # build (the AVX2 build's greedy answer does, the AVX-512 build's answers
    # {"level_cm": 7, "tags": ["high"]}): kernels round differently, near-ties flip.
    free_broke = free.finish_reason == "length" or bool(checker.errors(json.loads(free.text)))
    if mode != "mask":
        assert free_broke
    answer = json.loads(guarded.text)
    assert checker.errors(answer) == [] and guarded.finish_reason == "stop"
    assert guarded.guard_dead_ends == 0
    if free_broke:
        assert guarded.guard_vetoes > 0
    else:  # nothing to refuse: the guard leaves the engine's answer as it is
        assert guarded.guard_vetoes == 0 and guarded.text == free.text


def test_guarded_grammar_sampling_picks_what_llama_cpp_picks(smollm2: Path) -> None:
    # A bound the answer never comes near: the guard is active (the grammar is sampled
    # from Python) but refuses nothing, so the text equals llama.cpp's own sampler's.
    loose = {
        "type": "object",
        "properties": {
            "level_cm": {"type": "integer", "maximum": 10**9},
            "note": {"type": "string"},
        },
        "required": ["level_cm", "note"],
    }
    text = "The river gauge reads 70 cm. Answer as JSON with level_cm and a note."
    in_c = _decode(smollm2, "gbnf", False, loose, text)
    in_python = _decode(smollm2, "gbnf", True, loose, text)
    assert in_python.guard_vetoes == 0
    assert in_python.text == in_c.text and in_python.generated_tokens == in_c.generated_tokens


def test_every_bundled_grammar_parses_in_llama_cpp(smollm2: Path) -> None:
    backend = LlamaCppBackend(str(smollm2), n_threads=2, constraint_mode="gbnf")
    schemas = read_schema_folder(resource_dir("data") / "edgejson" / "schemas")
    try:
        backend.load(256)
        for schema_id, schema in schemas.items():
            report = backend.compile_constraint(request_for("gbnf", schema, schema_id))  # type: ignore[arg-type]
            assert report.ok and report.source == "bundled", (schema_id, report.error)
    finally:
        backend.close()
    assert len(schemas) == len(list(gbnf.bundled_grammar_folder("edgejson").glob("*.gbnf")))
