"""The ONNX backend: its decode loop with `DecodeSettings(temperature, seed)` (greedy at
0, above it a seeded draw from the softmax of the logits through the shared
`softmax_draw`, unconstrained and under the `json` constraint), its speed probe, the file
check before onnxruntime opens a graph, and the tokenizer it hands llguidance. A fake
InferenceSession stands in for the graph (logits from a fixed table indexed by the last
token); the tokenizer is real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgebench.backends.base import DecodeSettings
from edgebench.backends.decoding import softmax_draw
from edgebench.backends.speed import ProbeVocab
from edgebench.backends.speed_test import SpeedPlan, SpeedTest, measure_speed
from edgebench.constraints import request_for
from edgebench.errors import UserError
from edgebench.runfolder.records import FINISH_STOP
from tests.helpers.onnx_fakes import (
    EOS,
    PROMPT,
    VOCAB,
    TableSession,
    backend_for_table,
    fake_converted,
    tiny_onnx_graph,
)


@pytest.fixture
def table() -> np.ndarray:
    logits = np.random.default_rng(0).normal(0.0, 2.0, size=(VOCAB, VOCAB)).astype(np.float32)
    logits[:, EOS] = -4.0  # rare, so answers run to their budget
    return logits


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


def test_the_speed_probe_runs_on_an_empty_past_every_repetition(tmp_path: Path) -> None:
    """ppN is one session.run of N ids on an empty past; tgN @ dD fills D ids untimed, then
    N runs of one id each on a growing past; every repetition starts from an empty past."""

    class LoggingSession(TableSession):
        def __init__(self, table: Any) -> None:
            super().__init__(table)
            self.feeds: list[tuple[int, int]] = []  # (ids in this run, past length)

        def run(self, names: list[str], feed: dict[str, Any]) -> list[Any]:
            self.feeds.append((feed["input_ids"].shape[1], feed["past_key_values.0.key"].shape[2]))
            assert int(feed["input_ids"].max()) < VOCAB
            return super().run(names, feed)

    table = np.zeros((VOCAB, VOCAB), dtype=np.float32)
    backend = backend_for_table(tmp_path / "tiny", table)
    backend.session = session = LoggingSession(table)
    plan = SpeedPlan((SpeedTest("pp", 16), SpeedTest("tg", 3, depth=8)), repetitions=2, warmup=1)
    pp, tg = measure_speed(backend, plan)
    assert len(pp.seconds) == len(tg.seconds) == 2
    one_pp = [(16, 0)]
    one_tg = [(8, 0), (1, 8), (1, 9), (1, 10)]
    assert session.feeds == (one_pp + one_tg) * 3  # warm-up, then 2 round-robin repetitions
    assert backend.probe_vocab() == ProbeVocab(size=VOCAB, bos=None)


def test_the_file_is_checked_before_onnxruntime_opens_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime")
    import onnxruntime

    from edgebench.backends.onnx_runtime import OnnxBackend

    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path / "cache"))
    folder = fake_converted(tmp_path / "cache")
    tiny_onnx_graph(folder, location="../../outside.bin")
    opened: list[object] = []

    def must_not_load(*args: object, **kwargs: object) -> None:
        opened.append(args)
        raise AssertionError("onnxruntime opened the model")

    monkeypatch.setattr(onnxruntime, "InferenceSession", must_not_load)
    with pytest.raises(UserError, match="outside the model folder"):
        OnnxBackend(str(folder), n_threads=1).load(512)
    assert opened == []


def test_llguidance_reads_a_gguf_style_byte_level_tokenizer_as_bytes() -> None:
    """transformers writes GGUF BPE tokenizers with a decoder chain llguidance does not
    take for byte-level; the backend hands it the plain ByteLevel decoder."""
    llguidance = pytest.importorskip("llguidance")
    tokenizers = pytest.importorskip("tokenizers")
    from edgebench.backends.onnx_runtime import plain_byte_level

    alphabet = tokenizers.pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    vocab["Ġ{"] = len(vocab)
    model = tokenizers.models.BPE(vocab=vocab, merges=[("Ġ", "{")])
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.Sequence(
        [
            tokenizers.decoders.ByteFallback(),
            tokenizers.decoders.Fuse(),
            tokenizers.decoders.Replace("▁", " "),
            tokenizers.decoders.ByteLevel(),
        ]
    )
    text = tok.to_str()
    space_brace = vocab["Ġ{"]
    plain = llguidance.LLTokenizer(plain_byte_level(text), eos_token=0)
    assert plain.decode_bytes([space_brace]) == b" {"
    assert llguidance.LLTokenizer(text, eos_token=0).decode_bytes([space_brace]) != b" {"
    # A tokenizer without a ByteLevel pre-tokenizer is left alone.
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    assert plain_byte_level(tok.to_str()) == tok.to_str()


def test_the_masked_loop_times_each_phase_once_per_call(tmp_path: Path, table: np.ndarray) -> None:
    """One mask, one apply and one advance per sampled token; one decode per forward pass
    after the prompt; the forced-token lookup after each token the matcher took."""
    pytest.importorskip("llguidance")
    backend = backend_for_table(tmp_path / "m", table, mode="mask")
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["name", "n"],
    }
    request = request_for("mask", schema, "s")
    assert request is not None and backend.compile_constraint(request).ok
    gen = backend.generate(PROMPT, DecodeSettings(max_tokens=24, constraint=request))
    steps = gen.step_ns
    assert gen.error is None and gen.forced_tokens > 0  # the keys were forced
    sampled = gen.generated_tokens - gen.forced_tokens
    assert len(steps["mask"]) >= sampled and len(steps["apply"]) == sampled
    assert len(steps["decode"]) == gen.forward_passes
    assert len(steps["advance"]) <= sampled  # an end token is chosen, never taken
    assert all(ns > 0 for phase in steps.values() for ns in phase)
    assert "guard" not in steps  # nothing in this schema for the keyword guard
