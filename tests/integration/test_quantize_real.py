"""SmolLM2 (Q4_1) requantized by llama.cpp's own quantizer to Q8_0 and Q2_K in a private
cache (a few seconds each): each variant loads and greedy-decodes through the real
backend, and a two-example sweep runs both variants, each in its own workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.base import DecodeSettings
from edgebench.backends.worker import BackendWorker
from edgebench.models.gguf import read_gguf
from edgebench.models.quantize import quantize
from edgebench.models.quantized import QuantizedModel
from tests.helpers.cli import edgebench_ok

pytestmark = pytest.mark.model

TYPES = ("Q8_0", "Q2_K")


@pytest.fixture(scope="module")
def variants(
    smollm2: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, QuantizedModel]]:
    """The private cache (the registry's SmolLM2 linked in) and the two variants."""
    cache = tmp_path_factory.mktemp("quant-cache")
    (cache / "models").mkdir()
    (cache / "models" / smollm2.name).symlink_to(smollm2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDGEBENCH_CACHE", str(cache))
        made = quantize("smollm2-135m-instruct", list(TYPES), threads=2, say=lambda _: None)
    return cache, {m.quant_type: m for m in made}


def test_requantized_variants_are_what_they_say(
    variants: tuple[Path, dict[str, QuantizedModel]], smollm2: Path
) -> None:
    _, made = variants
    source_size = smollm2.stat().st_size
    for quant_type, model in made.items():
        assert read_gguf(model.path).quantization == quant_type
        assert model.requantized and model.source["quantization"] == "Q4_1"
        assert model.note is not None and model.note.startswith("requantized from Q4_1")
        assert model.path.stat().st_size == model.size_bytes
        # Every weight re-encoded: none of the source's Q4_1 tensors is left as it was.
        assert "Q4_1" not in model.provenance["tensor_types"]
    # Q8_0 holds more bits per weight than the Q4_1 source, Q2_K fewer.
    assert made["Q8_0"].size_bytes > source_size > made["Q2_K"].size_bytes


@pytest.mark.parametrize("quant_type", TYPES)
def test_each_variant_loads_and_greedy_decodes(
    variants: tuple[Path, dict[str, QuantizedModel]], quant_type: str
) -> None:
    model = variants[1][quant_type]
    worker = BackendWorker("llama", {"model_path": str(model.path), "n_threads": 2})
    try:
        worker.load(256, timeout=120)
        prompt = "<|im_start|>user\nName a colour.<|im_end|>\n<|im_start|>assistant\n"
        first = worker.generate(prompt, DecodeSettings(max_tokens=8), timeout=120)
        again = worker.generate(prompt, DecodeSettings(max_tokens=8), timeout=120)
    finally:
        worker.close()
    assert first.generated_tokens > 0 and first.text.strip()
    assert again.text == first.text  # greedy: the same tokens again


def test_a_sweep_runs_each_variant_in_its_own_workers(
    variants: tuple[Path, dict[str, QuantizedModel]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache, made = variants
    monkeypatch.setenv("EDGEBENCH_CACHE", str(cache))
    out = tmp_path / "sweep"
    spec = "smollm2-135m-instruct@Q8_0,@Q2_K"
    edgebench_ok("run", "--model", spec, "--limit", "2", "--threads", "2", "--out", str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    models = {m["label"]: m for m in manifest["models"]}
    assert list(models) == ["smollm2-135m-instruct@Q8_0", "smollm2-135m-instruct@Q2_K"]
    for quant_type in TYPES:
        record = models[f"smollm2-135m-instruct@{quant_type}"]
        assert record["quantization"] == quant_type
        assert record["sha256"] == made[quant_type].sha256
        assert record["quantized_from"]["source"] == "smollm2-135m-instruct"
        assert record["quantized_from"]["requantized"] is True
        assert record["quantized_from"]["note"] == made[quant_type].note
    arms = {arm["model"]: arm for arm in manifest["arms"]}
    assert set(arms) == set(models)
    assert all(arm["status"] == "completed" for arm in arms.values())
    # Each variant's own worker, its own peak: the file-backed part follows the file
    # (144.8 MB vs 88.2 MB); the total need not (llama.cpp repacks Q2_K's Q4_0 tensors
    # into anonymous memory: 261 vs 250 MB on the README's run).
    memory = {label: arm["memory"] for label, arm in arms.items()}
    q8, q2 = memory["smollm2-135m-instruct@Q8_0"], memory["smollm2-135m-instruct@Q2_K"]
    assert q8["peak_rss_mb"] > 0 and q2["peak_rss_mb"] > 0
    assert q8["peak_rss_file_mb"] > q2["peak_rss_file_mb"]
