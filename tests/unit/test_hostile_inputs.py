"""Datasets, schemas, chat templates and model outputs from strangers: a bad line is a
one-line error naming file and line, a remote $ref is never fetched, a pathological
pattern cannot hang scoring, hostile output costs its own sample, a hostile chat
template costs a throwaway process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.cli.app import main
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.prompts import render_isolated
from edgebench.runner.run import RunSettings, execute
from edgebench.scoring.schema import SchemaChecker
from edgebench.tasks.base import Example
from edgebench.tasks.edgejson import EdgeJSONTask
from tests.unit.test_runner import model

PATHOLOGICAL = "^(a+)+$"


def cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "Traceback" not in err, err
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
    return " ".join(err.split())


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    schemas = tmp_path / "schemas" / "simple"
    schemas.mkdir(parents=True)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    (schemas / "thing.json").write_text(json.dumps(schema))
    row = {"id": "r1", "schema_id": "thing", "prompt": "a is 1", "expected_output": {"a": 1}}
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"{oops", "not valid JSON"),
        (
            b'{"id": "r2", "schema_id": "thing", "prompt": "\xff\xfe", "expected_output": {}}',
            "not UTF-8 text",
        ),
        (
            b'{"id": "r2", "schema_id": "thing", "prompt": "x", "expected_output": NaN}',
            "NaN is not valid JSON",
        ),
        (
            b'{"id": "r2", "schema_id": "thing", "prompt": "x", "expected_output": '
            + b"9" * 5000
            + b"}",
            "integer with 5000 digits is too long",
        ),
        (
            b'{"id": "r2", "expected_output": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "nested too deeply",
        ),
    ],
)
def test_a_bad_dataset_line_is_a_one_line_error_with_file_and_line(
    capsys: pytest.CaptureFixture[str], dataset: Path, line: bytes, message: str
) -> None:
    with dataset.open("ab") as handle:
        handle.write(line + b"\n")
    err = cli_error(capsys, "run", "--dataset", str(dataset))
    assert f"{dataset}:2:" in err and message in err


def test_a_schema_with_an_http_ref_is_refused_without_opening_a_socket(
    capsys: pytest.CaptureFixture[str], dataset: Path, no_network: list[str]
) -> None:
    schema_file = dataset.parent / "schemas" / "simple" / "thing.json"
    schema = {"type": "object", "properties": {"a": {"$ref": "http://example.com/a.json"}}}
    schema_file.write_text(json.dumps(schema))
    err = cli_error(capsys, "run", "--dataset", str(dataset))
    assert str(schema_file) in err
    assert "'http://example.com/a.json' points outside the schema" in err
    assert no_network == []


def test_a_pathological_pattern_is_checked_in_bounded_time() -> None:
    checker = SchemaChecker({"type": "string", "pattern": PATHOLOGICAL}, source="s.json")
    start = time.perf_counter()
    errors = checker.errors("a" * 100_000 + "!")
    assert time.perf_counter() - start < 2.0
    assert len(errors) == 1 and "not checked against '^(a+)+$'" in errors[0]
    # Ordinary strings still match or fail as usual.
    assert checker.errors("aaaa") == []
    assert "does not match" in checker.errors("ab")[0]


def test_pattern_properties_and_additional_properties_are_bounded() -> None:
    schema = {
        "patternProperties": {PATHOLOGICAL: {"type": "integer"}},
        "additionalProperties": False,
    }
    checker = SchemaChecker(schema, source="s.json")
    start = time.perf_counter()
    errors = checker.errors({"a" * 50_000 + "!": 1})
    assert time.perf_counter() - start < 2.0
    assert errors and all("not checked against" in e for e in errors)
    assert checker.errors({"aaa": 1}) == []
    assert checker.errors({"b": 1}) == ["$: 'b' does not match any of the regexes: '^(a+)+$'"]


def edgejson_examples(n: int, schema: dict) -> list[Example]:
    return [Example(f"e{i}", "text", "thing", schema, {"a": "x"}, {}) for i in range(n)]


def run_outputs(tmp_path: Path, outputs: list[str], schema: dict) -> list[dict]:
    backend = FakeBackend(outputs)  # answers verbatim (each has fewer than 10 words)
    cfg = RunSettings(out=tmp_path / "run", warmup=False, max_tokens=10)
    execute(
        cfg,
        model(),
        EdgeJSONTask(),
        edgejson_examples(len(outputs), schema),
        {"path": "mem"},
        worker_factory=lambda mode: InProcessWorker(backend),
    )
    return read_jsonl(tmp_path / "run" / "samples.jsonl")


def test_hostile_model_outputs_are_per_sample_errors(tmp_path: Path) -> None:
    outputs = [
        "[" * 5000 + "]" * 5000,  # deeper than the parser allows
        "[" * 500 + "]" * 500,  # parses; the schema says object
        '{"a": "\\ud800"}',  # a lone surrogate: valid JSON, not encodable as UTF-8
        '{"a": NaN}',
        '{"a": ' + "9" * 5000 + "}",
        '{"a": "\ufffd\ufffd"}',  # what invalid UTF-8 from the runtime decodes to
        '{"a": "' + "a" * 20_000 + '!"}',  # pathological pattern
        '{"a": "x"}',
    ]
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": PATHOLOGICAL}}}
    start = time.perf_counter()
    samples = run_outputs(tmp_path, outputs, schema)
    assert time.perf_counter() - start < 10
    assert [s["id"] for s in samples] == [f"e{i}" for i in range(8)]
    deep, deep_ok, surrogate, nan, digits, replaced, slow, fine = samples
    assert deep["parse"]["error"] == "JSON refused: JSON nested too deeply"
    assert deep_ok["parse"]["ok"] and deep_ok["scores"]["schema_compliance"] == 0
    assert surrogate["parsed"] == {"a": "\ud800"}  # written escaped, read back the same
    assert nan["parse"]["error"] == "JSON refused: NaN is not valid JSON"
    assert digits["parse"]["error"] == "JSON refused: integer with 5000 digits is too long"
    assert replaced["parse"]["ok"]
    assert "not checked against '^(a+)+$'" in slow["schema_errors"][0]
    assert fine["scores"]["json_exact"] == 1
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["n_examples"] == 8


def test_a_scorer_that_fails_costs_its_sample_not_the_run(tmp_path: Path) -> None:
    class BrokenTask(EdgeJSONTask):
        def score(self, raw_output: str, example: Example) -> dict:
            if example.id == "e1":
                raise RecursionError("maximum recursion depth exceeded")
            return super().score(raw_output, example)

    backend = FakeBackend(['{"a": "x"}'] * 3)
    cfg = RunSettings(out=tmp_path / "run", warmup=False, max_tokens=10)
    execute(
        cfg,
        model(),
        BrokenTask(),
        edgejson_examples(3, {"type": "object"}),
        {"path": "mem"},
        worker_factory=lambda mode: InProcessWorker(backend),
    )
    samples = read_jsonl(tmp_path / "run" / "samples.jsonl")
    assert samples[1]["error"] == "scoring failed: RecursionError: maximum recursion depth exceeded"
    assert samples[1]["scores"] == {} and samples[2]["scores"]["json_exact"] == 1


MESSAGES = [[{"role": "user", "content": "hi"}]]


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            "{{ messages.__class__.__mro__ }}",
            "access to attribute '__class__' of 'list' object is unsafe",
        ),
        ("{{ 'x'.ljust(10**10) }}", "needed more than 1,024 MB to render"),
        ("{{ 'x' * 10**10 }}", "needed more than 1,024 MB to render"),
        ("{% for i in range(10**9) %}{% endfor %}", "Range too big"),
        ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero"),
        ("{{ 2 ** 100000 }}", "Exceeds the limit (4300 digits)"),
        (
            "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
            "did not finish rendering within 2 s",
        ),
    ],
)
def test_hostile_chat_templates_cost_a_throwaway_process(template: str, message: str) -> None:
    start = time.perf_counter()
    with pytest.raises(UserError, match="chat template") as info:
        render_isolated(template, MESSAGES, bos_token=None, eos_token=None, timeout=2)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert time.perf_counter() - start < 10


def test_a_normal_chat_template_renders_the_same_isolated() -> None:
    template = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
    assert render_isolated(template, MESSAGES * 2, bos_token=None, eos_token=None) == [
        "<|user|>hi",
        "<|user|>hi",
    ]
