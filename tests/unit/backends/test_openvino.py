"""The openvino backend on a fake `openvino_genai` (tests/helpers/openvino_fakes.py): every
failure path in one line (missing extra, a topology the pipeline cannot load, a schema
the structured output refuses, a bench row it cannot time), the happy path's tokens,
finish reasons and timing math on the fake pipeline's virtual clock, and the bench rows
its PerfMetrics time. The worker
crash is tests/system/test_openvino_worker.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from edgebench.backends import UnsupportedConstraint, backend_for
from edgebench.backends.answer_end import EndPolicy
from edgebench.backends.base import DecodeSettings
from edgebench.backends.openvino import OpenVinoBackend, probe_seconds, vocab_size
from edgebench.backends.speed_test import SpeedPlan, SpeedTest, measure_speed
from edgebench.constraints import request_for
from edgebench.errors import UserError
from edgebench.runfolder.records import FINISH_JSON_COMPLETE, FINISH_LENGTH, FINISH_STOP
from edgebench.runtimes import runtime_for_format
from tests.helpers import openvino_fakes as fakes
from tests.helpers.gguf_factory import sample_metadata, write_gguf

VOCAB = 256 + fakes.OFFSET  # every id the fake byte tokenizer decodes
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
PROMPT = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    # a GGUF header with a vocabulary (the bench draws its ids from it)
    return write_gguf(tmp_path / "model.gguf", sample_metadata(tokens=VOCAB))


def loaded(model: Path, mode: str = "none") -> OpenVinoBackend:
    backend = OpenVinoBackend(str(model), n_threads=2, constraint_mode=mode)
    backend.load(2048)
    return backend


def test_a_missing_extra_is_one_line_with_the_install_command(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openvino_genai", None)  # import raises ImportError
    backend = OpenVinoBackend(str(model), n_threads=2)
    for call in (lambda: backend.load(2048), lambda: backend.count_tokens(["x"])):
        with pytest.raises(UserError) as err:
            call()
        assert str(err.value) == (
            "the openvino backend needs openvino-genai: pip install 'edgebench[openvino]'"
        )


def test_a_model_the_pipeline_cannot_load_names_the_file(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.install(monkeypatch, fakes.Script(fail_load="Unsupported architecture: gpt2\ntrace"))
    with pytest.raises(UserError) as err:
        OpenVinoBackend(str(model), n_threads=2).load(2048)
    assert str(err.value) == (
        f"OpenVINO GenAI could not load {model}: Unsupported architecture: gpt2"
    )


def test_a_missing_model_file_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fakes.install(monkeypatch)
    with pytest.raises(UserError, match=r"model not found: .*nothing\.gguf"):
        OpenVinoBackend(str(tmp_path / "nothing.gguf"), n_threads=2).load(2048)


def test_load_reports_the_runtime_block(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = fakes.install(monkeypatch)
    backend = OpenVinoBackend(str(model), n_threads=3)
    info = backend.load(1024)
    assert info.n_ctx == 1024
    assert info.runtime["name"] == "OpenVINO GenAI"
    assert info.runtime["openvino_genai"] == "2026.4.1.0-fake"
    assert info.runtime["build"] == {
        "openvino": "2026.4.1-fake",
        "full_device_name": "Fake CPU",
        "optimization_capabilities": ["FP32", "INT8"],
    }
    assert script.pipeline_props == {
        "path": str(model),
        "device": "CPU",
        "INFERENCE_NUM_THREADS": 3,
    }


def test_a_schema_the_structured_output_refuses_is_a_refused_compile(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.install(monkeypatch)
    backend = loaded(model, "xgrammar")
    bad = {**SCHEMA, "x-refuse": True}
    report = backend.compile_constraint(request_for("xgrammar", bad, "bad"))
    assert not report.ok and report.outcome == "refused"
    assert report.error == 'XGrammar: Unsupported type "x"'
    with pytest.raises(RuntimeError, match="constraint bad unsupported: XGrammar"):
        backend.generate(PROMPT, DecodeSettings(constraint=request_for("xgrammar", bad, "bad")))


def test_a_schema_compiles_once_and_rides_on_every_request(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fakes.install(monkeypatch)
    backend = loaded(model, "xgrammar")
    request = request_for("xgrammar", SCHEMA, "s")
    assert request is not None
    first = backend.compile_constraint(request)
    again = backend.compile_constraint(request)
    assert first.ok and first.source == "xgrammar" and not first.cached
    # XGrammar's own compile time (PerfMetrics), not the one-token check around it
    assert first.seconds == pytest.approx(fakes.GRAMMAR_MS / 1000)
    assert again.cached and again.source == "memory"
    check = script.requests[-1]["config"]
    assert check.max_new_tokens == 1 and script.requests[-1]["prompt"] == [fakes.BOS]
    gen = backend.generate(PROMPT, DecodeSettings(max_tokens=20, constraint=request))
    assert gen.text == '{"a": 1}' and gen.finish_reason == FINISH_STOP
    config = script.requests[-1]["config"]
    assert json.loads(config.structured_output_config.json_schema) == SCHEMA
    assert gen.runtime_counters["grammar_compile_ms"] == fakes.GRAMMAR_MS


def test_json_is_xgrammars_any_object(model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = fakes.install(monkeypatch)
    backend = loaded(model, "json")
    request = request_for("json", SCHEMA, "s")
    assert request is not None
    report = backend.compile_constraint(request)
    assert report.ok and report.source == "xgrammar: any JSON object"
    backend.generate(PROMPT, DecodeSettings(constraint=request))
    config = script.requests[-1]["config"]
    assert json.loads(config.structured_output_config.json_schema) == {"type": "object"}


def test_the_rendered_prompt_is_not_templated_again_and_counts_as_llama_reads_it(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fakes.install(monkeypatch)
    backend = loaded(model)
    gen = backend.generate(PROMPT, DecodeSettings(max_tokens=20))
    sent = script.requests[-1]
    config = sent["config"]
    assert config.apply_chat_template is False and config.structured_output_config is None
    # greedy, whatever the model's generation config says
    assert (config.do_sample, config.repetition_penalty, config.num_beams) == (False, 1.0, 1)
    # BOS once (the model adds one), the template's end marker parsed as one token
    assert sent["prompt"][0] == fakes.BOS and sent["prompt"].count(fakes.BOS) == 1
    assert fakes.EOS in sent["prompt"]
    assert gen.prompt_tokens == len(sent["prompt"]) == backend.count_tokens([PROMPT])[0]
    with_bos = backend.count_tokens([backend.tokenizer.decode([fakes.BOS]) + "x"])[0]
    assert with_bos == 2  # "x" and one BOS (the byte tokenizer drops BOS in decode)


def test_happy_path_timing_comes_from_the_streamed_tokens(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fakes.install(monkeypatch)
    backend = loaded(model)
    gen = backend.generate(PROMPT, DecodeSettings(max_tokens=20))
    answer = len('{"a": 1}')
    assert gen.text == '{"a": 1}' and gen.finish_reason == FINISH_STOP
    assert gen.output_tokens == answer and gen.generated_tokens == answer + 1  # + EOS
    assert gen.t_first_token is not None
    # first token after the prefill; the last (EOS) `answer` steps later; the pipeline's
    # bookkeeping after it is not decode time
    assert gen.t_first_token - gen.t_start == pytest.approx(fakes.PREFILL_S)
    assert gen.t_end - gen.t_first_token == pytest.approx(answer * fakes.STEP_S)
    counters = gen.runtime_counters
    assert counters["after_last_token_ms"] == pytest.approx(fakes.TAIL_S * 1000)
    assert counters["ttft_ms"] == pytest.approx(fakes.PREFILL_S * 1000)
    assert counters["tpot_ms"] == pytest.approx(fakes.STEP_S * 1000)
    assert counters["num_generated_tokens"] == answer + 1
    assert counters["num_input_tokens"] == gen.prompt_tokens
    assert script.clock() - gen.t_start == pytest.approx(
        fakes.PREFILL_S + answer * fakes.STEP_S + fakes.TAIL_S
    )


def test_the_budget_ends_an_answer_with_finish_length(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fakes.install(monkeypatch, fakes.Script(answer="abcdefghij"))
    backend = loaded(model)
    gen = backend.generate(PROMPT, DecodeSettings(max_tokens=4))
    assert script.requests[-1]["config"].max_new_tokens == 4
    assert (gen.text, gen.output_tokens, gen.finish_reason) == ("abcd", 4, FINISH_LENGTH)


def test_a_stop_string_cuts_the_text_and_stops_the_pipeline(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.install(monkeypatch, fakes.Script(answer="abc\n\nmore text"))
    gen = loaded(model).generate(PROMPT, DecodeSettings(max_tokens=40, stop=("\n\n",)))
    assert gen.text == "abc" and gen.finish_reason == FINISH_STOP
    assert gen.generated_tokens == len("abc\n\n")  # stopped at the stop string


def test_answer_ending_policies_stop_the_pipeline(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.install(monkeypatch, fakes.Script(answer='{"a": 1} and then some'))
    settings = DecodeSettings(max_tokens=40, end=EndPolicy(stop_at_json=True))
    gen = loaded(model).generate(PROMPT, settings)
    assert gen.finish_reason == FINISH_JSON_COMPLETE and gen.text == '{"a": 1}'
    assert gen.answer_tokens == len('{"a": 1}') == gen.generated_tokens


def test_sampling_asks_the_pipeline_for_a_seeded_full_vocabulary_draw(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fakes.install(monkeypatch)
    backend = loaded(model)
    backend.generate(PROMPT, DecodeSettings(max_tokens=5))
    greedy = script.requests[-1]["config"]
    backend.generate(PROMPT, DecodeSettings(max_tokens=5, temperature=0.7, seed=11))
    sampled = script.requests[-1]["config"]
    assert greedy.do_sample is False
    assert (sampled.do_sample, sampled.temperature, sampled.rng_seed) == (True, 0.7, 11)
    assert (sampled.top_k, sampled.top_p, sampled.min_p) == (2**64 - 1, 1.0, 0.0)


def test_a_prompt_over_the_context_is_one_line(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.install(monkeypatch)
    backend = OpenVinoBackend(str(model), n_threads=2)
    backend.load(16)
    with pytest.raises(UserError, match="does not fit n_ctx 16"):
        backend.generate(PROMPT, DecodeSettings(max_tokens=8))


def test_bench_rows_come_from_the_pipelines_perf_metrics(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = fakes.install(monkeypatch)
    tests = (SpeedTest("pp", 8), SpeedTest("tg", 4), SpeedTest("tg", 4, depth=16))
    plan = SpeedPlan(tests=tests, repetitions=2, warmup=1, seed=0)
    pp, tg, deep = measure_speed(loaded(model), plan, clock=script.clock)
    # pp: the inference of the prefill (the fake's PREFILL_S, whatever the prompt's length);
    # tg: the 4 intervals after the first new token, STEP_S each
    assert pp.tok_s == pytest.approx([8 / fakes.PREFILL_S] * 2)
    assert tg.tok_s == deep.tok_s == pytest.approx([1 / fakes.STEP_S] * 2)
    assert len(script.requests) == 3 * 3  # one warm-up and 2 repetitions of each row
    first_pp, first_tg, first_deep = script.requests[:3]
    assert len(first_pp["prompt"]) == 8 and first_pp["prompt"][0] == fakes.BOS
    assert all(0 <= t < VOCAB for t in first_pp["prompt"])
    assert first_pp["config"].max_new_tokens == first_pp["config"].min_new_tokens == 1
    assert first_tg["prompt"] == [fakes.BOS]  # a prompt needs one token: the first timed
    assert len(first_deep["prompt"]) == 16  # the depth: prefilled, not timed
    for sent in (first_tg, first_deep):
        config = sent["config"]
        assert (config.max_new_tokens, config.min_new_tokens, config.ignore_eos) == (5, 5, True)
        assert config.apply_chat_template is False and config.do_sample is False
    assert script.requests[3]["prompt"] == first_pp["prompt"]  # the same ids every time


def test_pp_after_a_filled_cache_is_refused_in_one_line(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.install(monkeypatch)
    plan = SpeedPlan(tests=(SpeedTest("pp", 8, depth=16),), repetitions=1, warmup=0, seed=0)
    with pytest.raises(UserError) as err:
        measure_speed(loaded(model), plan)
    message = str(err.value)
    assert message.startswith("pp8 @ d16 cannot be measured on OpenVINO GenAI: ")
    assert "\n" not in message


def test_a_pipeline_that_makes_fewer_tokens_fails_the_row_in_one_line(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.install(monkeypatch, fakes.Script(short_by=1))
    plan = SpeedPlan(tests=(SpeedTest("tg", 4),), repetitions=1, warmup=0, seed=0)
    with pytest.raises(RuntimeError) as err:
        measure_speed(loaded(model), plan)
    assert str(err.value) == (
        "OpenVINO GenAI read 1 prompt tokens and made 4 new ones; the bench asked for 1 and 5"
    )


def test_a_pipeline_error_in_a_row_is_one_line(
    model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fakes.install(monkeypatch, fakes.Script(fail_generate="Exception from src/infer.cpp\ntrace"))
    plan = SpeedPlan(tests=(SpeedTest("pp", 8),), repetitions=1, warmup=0, seed=0)
    with pytest.raises(RuntimeError) as err:
        measure_speed(loaded(model), plan)
    assert str(err.value) == "OpenVINO GenAI failed on pp8: Exception from src/infer.cpp"


def test_the_vocabulary_comes_from_the_models_files(tmp_path: Path) -> None:
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"vocab_size": 49152}))
    assert vocab_size(folder) == 49152
    assert vocab_size(write_gguf(tmp_path / "m.gguf", sample_metadata(tokens=12))) == 12
    (folder / "config.json").write_text("{}")
    with pytest.raises(UserError) as err:
        vocab_size(folder)
    assert str(err.value) == (
        f"{folder}: no vocabulary size (config.json's vocab_size, a GGUF's token list) to "
        "draw the bench's token ids from"
    )


def perf(n_in: int, n_new: int, inference_ms: float, steps: list[float]) -> SimpleNamespace:
    """PerfMetrics as `probe_seconds` reads them (TPOT: the mean of the intervals, whose
    raw unit, µs in 2026.4, the getters turn into ms)."""
    return SimpleNamespace(
        get_num_input_tokens=lambda: n_in,
        get_num_generated_tokens=lambda: n_new,
        get_inference_duration=lambda: fakes.MeanStd(inference_ms),
        get_tpot=lambda: fakes.MeanStd(sum(steps) / len(steps) / 1000 if steps else -1.0),
        raw_metrics=SimpleNamespace(m_durations=steps),
    )


def test_probe_seconds_read_the_durations_and_refuse_missing_ones() -> None:
    """PerfMetrics give -1 for a duration they did not record, and fewer intervals than
    tokens when the pipeline stamped a batch of them at once: no row beats a wrong one."""
    assert probe_seconds(perf(8, 1, 40.0, []), "pp", 8, 1) == pytest.approx(0.040)
    steps = [9000.0, 10000.0, 11000.0, 12000.0]  # µs, as the raw list holds them
    assert probe_seconds(perf(1, 5, 99.0, steps), "tg", 1, 5) == pytest.approx(0.042)
    with pytest.raises(RuntimeError, match="PerfMetrics have no pp duration to time"):
        probe_seconds(perf(8, 1, -1.0, []), "pp", 8, 1)
    with pytest.raises(RuntimeError, match="PerfMetrics have no tg duration to time"):
        probe_seconds(perf(1, 5, 99.0, [20000.0, 20000.0]), "tg", 1, 5)


def test_modes_it_cannot_decode_are_refused_with_their_reasons(model: Path) -> None:
    with pytest.raises(UserError, match="has no 'mask' constraint mode"):
        OpenVinoBackend(str(model), n_threads=2, constraint_mode="mask")
    for mode in ("mask", "gbnf", "outlines"):
        with pytest.raises(UnsupportedConstraint) as err:
            backend_for("openvino", mode)
        assert f"constraint '{mode}' is not available for openvino models: " in str(err.value)
        assert "\n" not in str(err.value)
    for runtime in ("llama", "onnx"):
        with pytest.raises(UnsupportedConstraint, match="XGrammar runs inside OpenVINO GenAI"):
            backend_for(runtime, "xgrammar")
    assert backend_for("openvino", "xgrammar") == ("openvino", {"constraint_mode": "xgrammar"})
    assert runtime_for_format("gguf").name == "llama"
