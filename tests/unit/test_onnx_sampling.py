"""The ONNX backend's decode loop with `DecodeSettings(temperature, seed)`: greedy at 0,
above it a seeded draw from the softmax of the logits through the shared `softmax_draw`,
unconstrained and under the `json` constraint. A fake InferenceSession stands in for the
graph (logits from a fixed table indexed by the last token); the tokenizer is real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgebench.backends.base import FINISH_STOP, DecodeSettings
from edgebench.backends.decoding import softmax_draw
from edgebench.constraints import request_for
from edgebench.models.onnx_model import FORMAT, GRAPH, PROVENANCE, TOKENIZER

tokenizers = pytest.importorskip("tokenizers")

VOCAB = 257  # the 256 byte-level symbols and <eos>
EOS = 256
PROMPT = "Answer in JSON:"


class TableSession:
    """An InferenceSession whose logits at each position depend only on that position's
    token (row `token` of `table`); the KV cache grows as the real graph's would."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table
        self.calls = 0

    def run(self, names: list[str], feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.calls += 1
        ids = feed["input_ids"][0]
        past = feed["past_key_values.0.key"].shape[2]
        kv = np.zeros((1, 1, past + len(ids), 1), dtype=np.float32)
        return [self.table[ids][None], kv, kv]


def write_folder(folder: Path) -> None:
    """A converted folder without a graph: the provenance file and a byte-level BPE
    tokenizer.json (what the backend reads besides the graph)."""
    folder.mkdir(parents=True)
    alphabet = sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())
    vocab = {symbol: i for i, symbol in enumerate(alphabet)}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tokenizers.decoders.ByteLevel()
    tokenizer.add_special_tokens(["<eos>"])
    assert tokenizer.token_to_id("<eos>") == EOS
    tokenizer.save(str(folder / TOKENIZER))
    provenance = {
        "format": FORMAT,
        "name": "tiny@onnx-fp32",
        "precision": "fp32",
        "weights": {"file": GRAPH, "sha256": "0" * 64, "size_bytes": 1, "external_data": []},
        "context_length": 512,
        "prompt": {"style": "completion", "stop": []},
        "tokens": {"add_bos": False, "eos_id": EOS, "eog_ids": [EOS], "vocab_size": VOCAB},
    }
    (folder / PROVENANCE).write_text(json.dumps(provenance))


@pytest.fixture
def table() -> np.ndarray:
    logits = np.random.default_rng(0).normal(0.0, 2.0, size=(VOCAB, VOCAB)).astype(np.float32)
    logits[:, EOS] = -4.0  # rare, so answers run to their budget
    return logits


def backend_for_table(folder: Path, table: np.ndarray, mode: str = "none") -> Any:
    from edgebench.backends.onnx_runtime import OnnxBackend

    write_folder(folder)
    backend = OnnxBackend(str(folder), n_threads=1, constraint_mode=mode)
    backend.session = TableSession(table)
    backend.layers, backend.kv_shape, backend.n_ctx = 1, (1, 1), 512
    backend.encode(PROMPT)  # loads the tokenizer
    if mode != "none":
        backend._load_llguidance()
    return backend


def expected_ids(table: np.ndarray, prompt_ids: list[int], pick: Any, max_tokens: int) -> list[int]:
    """What an unconstrained loop that picks with `pick(logits)` must produce."""
    ids: list[int] = []
    last = prompt_ids[-1]
    while len(ids) < max_tokens:
        token = pick(table[last])
        if token == EOS:
            break
        ids.append(token)
        last = token
    return ids


def test_temperature_zero_is_greedy(tmp_path: Path, table: np.ndarray) -> None:
    backend = backend_for_table(tmp_path / "m", table)
    gen = backend.generate(PROMPT, DecodeSettings(max_tokens=12))
    ids = expected_ids(table, backend.encode(PROMPT), lambda row: int(np.argmax(row)), 12)
    assert gen.text == backend._decode(ids) and gen.output_tokens == 12


def test_sampling_draws_from_the_softmax_with_the_seed(tmp_path: Path, table: np.ndarray) -> None:
    backend = backend_for_table(tmp_path / "m", table)
    prompt_ids = backend.encode(PROMPT)

    def sampled(seed: int) -> str:
        settings = DecodeSettings(max_tokens=16, temperature=0.8, seed=seed)
        return backend.generate(PROMPT, settings).text

    first = sampled(7)
    # The shared helper with the request's temperature and seed, one generator per request.
    assert first == backend._decode(expected_ids(table, prompt_ids, softmax_draw(0.8, 7), 16))
    assert sampled(7) == first  # reproducible
    assert sampled(8) != first  # and the seed matters
    greedy = backend.generate(PROMPT, DecodeSettings(max_tokens=16)).text
    assert greedy != first


def test_sampling_under_the_json_constraint_is_seeded_and_stays_json(
    tmp_path: Path, table: np.ndarray
) -> None:
    pytest.importorskip("llguidance")
    backend = backend_for_table(tmp_path / "m", table, mode="json")
    request = request_for("json", {}, "json")
    assert request is not None
    assert backend.compile_constraint(request).ok

    def sampled(seed: int, temperature: float = 1.0) -> Any:
        settings = DecodeSettings(
            max_tokens=48, constraint=request, temperature=temperature, seed=seed
        )
        return backend.generate(PROMPT, settings)

    runs = [sampled(seed) for seed in (1, 1, 2, 3)]
    assert runs[0].text == runs[1].text
    assert len({r.text for r in runs}) > 1
    for gen in runs:
        assert gen.error is None
        assert gen.text.lstrip()[:1] in ("{", "[")
        if gen.finish_reason == FINISH_STOP:
            json.loads(gen.text)
