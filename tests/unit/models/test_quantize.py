"""`models quantize` with a fake quantizer: names, the cache, provenance, skips, and that a
failed, interrupted or corrupt quantization leaves no file in the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models.quantize import quantize
from edgebench.models.quantized import (
    base_name_of,
    quantized_root,
    quantized_state,
    quantized_variants,
    split_quant_variant,
    variant_file,
)
from edgebench.models.resolve import check_variants_ready, resolve_model
from tests.helpers.gguf_factory import setup_tiny_model
from tests.helpers.quantize_fakes import (
    FakeQuantizer,
    gguf_of_type,
    half_then,
    quantized_source_gguf,
    writes,
)


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty cache and a registry model "tiny" (pulled on demand, pip faked)."""
    return setup_tiny_model(monkeypatch, tmp_path)


def quiet(_: str) -> None:
    pass


def cache_files() -> list[str]:
    """Everything under the quantized-variant folder, hidden files included."""
    root = quantized_root()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_names_and_short_names() -> None:
    assert split_quant_variant("tiny@q4_k_m") == ("tiny", "Q4_K_M")
    assert split_quant_variant("tiny@Q4_K") == ("tiny", "Q4_K_M")
    assert split_quant_variant("tiny@onnx-int4") is None
    assert split_quant_variant("tiny") is None
    assert split_quant_variant("@Q8_0") is None
    assert base_name_of("My Model@v2") == "My-Model-v2"


def test_quantize_writes_each_type_with_its_provenance() -> None:
    fake = FakeQuantizer()
    made = quantize("tiny", "Q8_0,Q2_K", threads=3, say=quiet, quantizer=fake)
    assert [m.name for m in made] == ["tiny@Q8_0", "tiny@Q2_K"]
    assert [(j.quant_type, j.threads, j.allow_requantize) for j in fake.jobs] == [
        ("Q8_0", 3, False),
        ("Q2_K", 3, False),
    ]
    assert cache_files() == ["tiny@Q2_K.gguf", "tiny@Q2_K.json", "tiny@Q8_0.gguf", "tiny@Q8_0.json"]
    record = json.loads((quantized_root() / "tiny@Q8_0.json").read_text())
    assert record["type"] == "Q8_0" and record["ftype"] == 7
    assert record["source"]["name"] == "tiny" and record["source"]["quantization"] == "Q4_1"
    assert len(record["source"]["sha256"]) == 64
    assert record["size_bytes"] == variant_file("tiny", "Q8_0").stat().st_size
    assert record["requantized"] is False and record["note"] is None
    assert "llama-cpp-python" in record["tools"]
    assert record["tensor_types"] == {"F32": 2}  # what the tensors really hold
    assert quantized_variants() == [("tiny", "Q8_0"), ("tiny", "Q2_K")]
    assert quantized_state("tiny", "Q8_0") == "yes"


def test_a_variant_there_is_skipped_unless_forced() -> None:
    fake = FakeQuantizer()
    quantize("tiny", "Q8_0", say=quiet, quantizer=fake)
    said: list[str] = []
    quantize("tiny", "Q8_0", say=said.append, quantizer=fake)
    assert len(fake.jobs) == 1
    assert said[0].startswith("tiny@Q8_0: already there (sha256 ")
    quantize("tiny", "Q8_0", force=True, say=quiet, quantizer=fake)
    assert len(fake.jobs) == 2


def test_an_already_quantized_source_is_requantized_and_says_so(tmp_path: Path) -> None:
    source = tmp_path / "SmolQ4.gguf"
    source.write_bytes(quantized_source_gguf())
    fake = FakeQuantizer()
    q2, q8 = quantize(str(source), "Q2_K,Q8_0", say=quiet, quantizer=fake)
    assert all(job.allow_requantize for job in fake.jobs)
    assert q2.name == "SmolQ4@Q2_K" and q2.requantized
    assert q2.note == "requantized from Q4_1: the ceiling is the source's quality"
    assert q8.note is not None and q8.note.startswith(
        "requantized from Q4_1: the ceiling is the source's quality (Q8_0 stores more bits"
    )
    assert q2.source["name"] == str(source.resolve())


def test_a_variant_is_never_a_source() -> None:
    with pytest.raises(UserError, match="is a variant: quantize from its source"):
        quantize("tiny@Q8_0", "Q2_K", say=quiet, quantizer=FakeQuantizer())


def test_a_corrupt_source_is_one_line_and_quantizes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "broken.gguf"
    source.write_bytes(gguf_of_type("F16")[:60])
    fake = FakeQuantizer()
    with pytest.raises(UserError) as info:
        quantize(str(source), "Q8_0", say=quiet, quantizer=fake)
    assert str(info.value).startswith(f"corrupt GGUF file {source}: ")
    assert "\n" not in str(info.value)
    assert not fake.jobs and cache_files() == []


@pytest.mark.parametrize(
    "quantizer",
    [
        half_then(UserError("llama.cpp could not quantize tiny.gguf: out of disk")),
        half_then(KeyboardInterrupt()),
    ],
    ids=["fails midway", "interrupted"],
)
def test_failed_or_interrupted_quantization_leaves_no_file(quantizer: object) -> None:
    with pytest.raises((UserError, KeyboardInterrupt)):
        quantize("tiny", "Q8_0", say=quiet, quantizer=quantizer)  # type: ignore[arg-type]
    assert cache_files() == []
    assert quantized_state("tiny", "Q8_0") == "no"


def test_a_corrupt_result_never_lands() -> None:
    with pytest.raises(UserError) as info:
        quantize("tiny", "Q8_0", say=quiet, quantizer=writes(b"GGUF" + bytes(10)))
    assert str(info.value).startswith("tiny@Q8_0: the quantized file is unreadable (")
    assert str(info.value).endswith("nothing was kept")
    assert cache_files() == []


def test_a_result_of_another_type_never_lands() -> None:
    with pytest.raises(UserError, match="says it is Q4_0, not Q8_0; nothing was kept"):
        quantize("tiny", "Q8_0", say=quiet, quantizer=writes(gguf_of_type("Q4_0")))
    assert cache_files() == []


def test_a_forced_redo_that_fails_keeps_the_old_variant() -> None:
    quantize("tiny", "Q8_0", say=quiet, quantizer=FakeQuantizer())
    before = variant_file("tiny", "Q8_0").read_bytes()
    with pytest.raises(UserError):
        quantize("tiny", "Q8_0", force=True, say=quiet, quantizer=writes(b"junk"))
    assert variant_file("tiny", "Q8_0").read_bytes() == before
    assert quantized_state("tiny", "Q8_0") == "yes"


# --- resolving NAME@TYPE -----------------------------------------------------------------


def test_a_variant_resolves_to_its_file_with_the_registry_prompt() -> None:
    quantize("tiny", "Q4_K_M", say=quiet, quantizer=FakeQuantizer())
    model = resolve_model("tiny@q4_k_m")
    assert model.label == "tiny@Q4_K_M"
    assert model.path == variant_file("tiny", "Q4_K_M")
    assert model.entry is not None and model.entry.name == "tiny"
    assert model.stop == ["<|im_end|>"] and model.prompt_style == "chat"
    assert model.quantized is not None and model.sha256 == model.quantized.sha256


def test_a_variant_not_quantized_names_the_command() -> None:
    with pytest.raises(UserError) as info:
        resolve_model("tiny@Q8_0")
    assert str(info.value) == (
        "model 'tiny@Q8_0' is not quantized yet: run `edgebench models quantize tiny --types Q8_0`"
    )


def test_an_unknown_base_is_an_unknown_model() -> None:
    with pytest.raises(UserError, match=r"unknown model 'nosuch@Q8_0'"):
        resolve_model("nosuch@Q8_0")


def test_a_damaged_variant_names_the_fix() -> None:
    quantize("tiny", "Q8_0", say=quiet, quantizer=FakeQuantizer())
    path = variant_file("tiny", "Q8_0")
    path.write_bytes(path.read_bytes() + b"x")
    with pytest.raises(UserError, match=r"damaged .*--types Q8_0 --force"):
        resolve_model("tiny@Q8_0")


def test_a_sweep_names_every_missing_variant_in_one_command() -> None:
    quantize("tiny", "Q8_0", say=quiet, quantizer=FakeQuantizer())
    check_variants_ready(["tiny@Q8_0", None, "tiny"])
    with pytest.raises(UserError) as info:
        check_variants_ready(["tiny@Q8_0", "tiny@Q4_K_M", "tiny@Q2_K"])
    assert str(info.value) == (
        "not quantized yet: tiny@Q4_K_M, tiny@Q2_K: run "
        "`edgebench models quantize tiny --types Q4_K_M,Q2_K`"
    )
