"""`edgebench models quantize`, `models list` of its variants, the sweep short form of
`--model` and what a variant's manifest record carries (fake quantizer, no process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.cli.options import parse_model_list
from edgebench.errors import UserError
from edgebench.models.quantize import quantize
from edgebench.runfolder.records import ModelRecord, QuantizedFrom
from edgebench.runner.prepare import model_under_test
from tests.helpers.cli import cli_error, stdout_of
from tests.helpers.fake_hub import loopback_only, refused_endpoint
from tests.helpers.gguf_factory import setup_tiny_model
from tests.helpers.quantize_fakes import FakeQuantizer, quantized_source_gguf


@pytest.fixture(autouse=True)
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeQuantizer:
    """A registry model "tiny" in an empty cache, and a fake quantizer for the command."""
    setup_tiny_model(monkeypatch, tmp_path)
    quantizer = FakeQuantizer()
    monkeypatch.setattr("edgebench.models.quantize.run_quantizer", quantizer)
    return quantizer


def test_quantize_prints_one_line_per_variant(
    fake: FakeQuantizer, capsys: pytest.CaptureFixture[str]
) -> None:
    out = stdout_of(capsys, "models", "quantize", "tiny", "--types", "q8_0,Q2_K", "-t", "2")
    lines = out.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["tiny@Q8_0", "tiny@Q2_K"]
    assert lines[0].endswith("tiny@Q8_0.gguf")
    assert [job.threads for job in fake.jobs] == [2, 2]
    again = stdout_of(capsys, "models", "quantize", "tiny", "--types", "Q8_0")
    assert again.startswith("tiny@Q8_0\t") and len(fake.jobs) == 2


def test_an_unknown_type_is_one_line_before_anything_is_pulled(
    fake: FakeQuantizer, capsys: pytest.CaptureFixture[str]
) -> None:
    err = cli_error(capsys, "models", "quantize", "tiny", "--types", "Q8_0,Q4_K_X")
    assert "--types: 'Q4_K_X' is not a llama.cpp quantization type (valid: F32, " in err
    assert not fake.jobs


def test_an_unknown_source_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = cli_error(capsys, "models", "quantize", "nosuch", "--types", "Q8_0")
    assert "unknown model 'nosuch'" in err


def test_models_list_shows_variants_with_size_source_and_sha256(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "SmolQ4.gguf"
    source.write_bytes(quantized_source_gguf())
    made = quantize(str(source), "Q2_K", say=lambda _: None)
    out = stdout_of(capsys, "models", "list")
    assert "quantized variants" in out
    flat = " ".join(out.split())
    assert "SmolQ4@Q2_K" in flat and made[0].sha256[:16] in flat
    assert "requantized from Q4_1" in flat
    rows = json.loads(stdout_of(capsys, "models", "list", "--json"))
    row = next(r for r in rows if r["name"] == "SmolQ4@Q2_K")
    assert row["format"] == "gguf" and row["quantization"] == "Q2_K" and row["cached"] is True
    assert row["sha256"] == made[0].sha256 and row["source"] == str(source.resolve())
    assert row["source_quantization"] == "Q4_1" and row["requantized"] is True


def test_the_sweep_short_form_repeats_the_base_name() -> None:
    assert parse_model_list("tiny@Q8_0,@Q4_K_M,@Q2_K") == ["tiny@Q8_0", "tiny@Q4_K_M", "tiny@Q2_K"]
    assert parse_model_list("tiny,@Q8_0,other,@onnx-int4") == [
        "tiny",
        "tiny@Q8_0",
        "other",
        "other@onnx-int4",
    ]
    with pytest.raises(UserError, match="--model: '@Q8_0' needs a model name before it"):
        parse_model_list("@Q8_0,tiny")


def test_a_sweep_of_variants_not_quantized_names_the_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    quantize("tiny", "Q8_0", say=lambda _: None)
    capsys.readouterr()  # the pull's progress lines
    err = cli_error(capsys, "run", "--model", "tiny@Q8_0,@Q4_K_M,@Q2_K", "--limit", "1")
    assert err == (
        "error: not quantized yet: tiny@Q4_K_M, tiny@Q2_K: run "
        "`edgebench models quantize tiny --types Q4_K_M,Q2_K`"
    )


def test_a_variants_record_says_what_it_was_made_from(tmp_path: Path) -> None:
    source = tmp_path / "SmolQ4.gguf"
    source.write_bytes(quantized_source_gguf())
    quantize(str(source), "Q4_K_M", say=lambda _: None)
    record = model_under_test("SmolQ4@Q4_K_M").record()
    assert record.label == "SmolQ4@Q4_K_M" and record.quantization == "Q4_K_M"
    origin = record.quantized_from
    assert isinstance(origin, QuantizedFrom)
    assert origin.source == str(source.resolve()) and origin.source_quantization == "Q4_1"
    assert origin.requantized
    assert origin.note == "requantized from Q4_1: the ceiling is the source's quality"
    assert origin.quantizer is not None and origin.quantizer.startswith("llama-cpp-python")
    assert ModelRecord.from_json(record.to_json()) == record
    plain = model_under_test("tiny").record()
    assert plain.quantized_from is None


def test_pull_of_a_variant_names_the_quantize_command(capsys: pytest.CaptureFixture[str]) -> None:
    err = cli_error(capsys, "models", "pull", "tiny@Q4_K_M")
    assert err == (
        "error: 'tiny@Q4_K_M' is not pulled but quantized locally: "
        "edgebench models quantize tiny --types Q4_K_M"
    )


def test_info_of_a_variant_says_what_it_was_made_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "SmolQ4.gguf"
    source.write_bytes(quantized_source_gguf())
    quantize(str(source), "Q2_K", say=lambda _: None)
    facts = json.loads(stdout_of(capsys, "models", "info", "SmolQ4@Q2_K", "--json"))
    assert facts["label"] == "SmolQ4@Q2_K" and facts["quantization"] == "Q2_K"
    assert facts["quantized_from"] == str(source.resolve())
    assert facts["note"] == "requantized from Q4_1: the ceiling is the source's quality"


def test_an_hf_source_offline_is_the_usual_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("huggingface_hub")
    loopback_only(monkeypatch)
    monkeypatch.setenv("HF_ENDPOINT", refused_endpoint())
    err = cli_error(capsys, "models", "quantize", "hf:owner/repo/m-f16.gguf", "--types", "Q8_0")
    assert "hf:owner/repo/m-f16.gguf: cannot reach the Hugging Face Hub" in err
    assert "(offline?)" in err
