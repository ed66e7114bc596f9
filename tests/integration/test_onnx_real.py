"""SmolLM2 converted to ONNX (once per session, from the cached GGUF, offline) and run on
onnxruntime: the same greedy tokens as transformers, every decode loop's tokens equal to
the old numpy loop's on both graphs (gqa, the default, and optimum's), and a real
two-runtime run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgebench.runfolder.records import RunSettings
from edgebench.runner.engine import execute
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.request import RunRequest
from edgebench.tasks import get_task
from tests.helpers.cli import edgebench_ok as run_cli
from tests.helpers.needs import unavailable
from tests.helpers.run_folder import final_samples

pytestmark = pytest.mark.model

N_PROMPTS = 5
NEW_TOKENS = 64


@pytest.fixture(scope="session")
def onnx_models(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """fp32 and int4 gqa folders converted into a private cache (the int4 quantizes the
    fp32 graph), and an int4 of optimum's graph in another: about 2 minutes on 2 cores."""
    from edgebench.errors import UserError
    from edgebench.models.convert import check_convert_extras, convert

    try:
        check_convert_extras()
    except UserError as exc:
        unavailable(str(exc))
    folders = {}
    for graph in ("gqa", "optimum"):
        cache = tmp_path_factory.mktemp(f"onnx-cache-{graph}")
        (cache / "models").mkdir()
        (cache / "models" / smollm2.name).symlink_to(smollm2)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("EDGEBENCH_CACHE", str(cache))
            precisions = ("fp32", "int4") if graph == "gqa" else ("int4",)
            for precision in precisions:
                model = convert(
                    "smollm2-135m-instruct", precision, threads=2, graph=graph, say=lambda _: None
                )
                folders[precision if graph == "gqa" else f"{precision}-{graph}"] = model.folder
    return folders


@pytest.fixture(scope="module")
def prompts() -> list[str]:
    """The first built-in EdgeJSON prompts, rendered with SmolLM2's chat template."""
    task = get_task("edgejson")
    examples, _ = load_examples(task, RunSettings(limit=N_PROMPTS))
    model = model_under_test(None)
    return [model.prompt_format.render(task.build_prompt(ex)) for ex in examples[:N_PROMPTS]]


@pytest.fixture
def offline() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


def transformers_greedy(model: Any, prompt_ids: list[int], steps: int) -> list[int]:
    """The argmax token at each step with transformers' own KV cache (end-of-text
    ignored, like OnnxBackend.greedy_token_ids)."""
    import torch

    out: list[int] = []
    past = None
    tokens = torch.tensor([prompt_ids])
    with torch.no_grad():
        for _ in range(steps):
            result = model(input_ids=tokens, past_key_values=past, use_cache=True)
            past = result.past_key_values
            token = int(torch.argmax(result.logits[0, -1]))
            out.append(token)
            tokens = torch.tensor([[token]])
    return out


def test_onnx_fp32_greedy_tokens_equal_the_transformers_model(
    onnx_models: dict[str, Path], smollm2: Path, prompts: list[str], offline: None
) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from edgebench.backends.onnx_runtime import OnnxBackend

    torch.set_num_threads(2)
    reference = AutoModelForCausalLM.from_pretrained(
        smollm2.parent, gguf_file=smollm2.name, dtype=torch.float32
    ).eval()
    backend = OnnxBackend(str(onnx_models["fp32"]), n_threads=2)
    backend.load(2048)
    assert len(prompts) == N_PROMPTS
    for prompt in prompts:
        ids = backend.encode(prompt)
        expected = transformers_greedy(reference, ids, NEW_TOKENS)
        assert backend.greedy_token_ids(ids, NEW_TOKENS) == expected
    backend.close()


@pytest.mark.parametrize("variant", ["int4", "int4-optimum"])
def test_onnx_int4_loops_give_the_old_loops_tokens(
    onnx_models: dict[str, Path], prompts: list[str], variant: str
) -> None:
    """The KV cache in IO-bound buffers, and in place on the gqa graph (its default),
    against the old numpy loop (backends/onnx_kv.py): the same greedy ids, prompt after
    prompt on one session."""
    from edgebench.backends.onnx_kv import BoundKV, SharedKV
    from edgebench.backends.onnx_runtime import OnnxBackend

    backend = OnnxBackend(str(onnx_models[variant]), n_threads=2)
    backend.load(2048)
    default = SharedKV if variant == "int4" else BoundKV
    assert isinstance(backend.new_session(), default)
    loops = [backend._numpy_kv, backend._bound_kv, backend._shared_kv]
    for prompt in prompts:
        ids = backend.encode(prompt)
        runs = []
        for make in loops[: 3 if variant == "int4" else 2]:
            backend.kv_cache = make
            runs.append(backend.greedy_token_ids(ids, NEW_TOKENS))
        assert all(run == runs[0] for run in runs)
    backend.close()


def test_gguf_and_onnx_int4_in_one_run(onnx_models: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "run"
    settings = RunSettings(
        limit=2, threads=2, out=out, max_tokens=48, constraints=("none", "json", "mask", "gbnf")
    )
    task = get_task("edgejson")
    examples, info = load_examples(task, settings)
    models = [model_under_test(None), model_under_test(str(onnx_models["int4"]))]
    result = execute(RunRequest(settings, models, task, examples, info))
    onnx_label = models[1].label
    assert onnx_label == "smollm2-135m-instruct@onnx-int4"
    # The memory pre-check's KV cache: float32 on onnxruntime, f16 in llama.cpp.
    assert models[1].kv_bytes_per_token == 2 * models[0].kv_bytes_per_token

    samples = final_samples(out)
    by_arm: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for sample in samples:
        by_arm.setdefault((sample["model"], sample["constraint"]), []).append(sample)
    assert set(by_arm) == {
        ("smollm2-135m-instruct", "none"),
        ("smollm2-135m-instruct", "json"),
        ("smollm2-135m-instruct", "mask"),
        ("smollm2-135m-instruct", "gbnf"),
        (onnx_label, "none"),
        (onnx_label, "json"),
        (onnx_label, "mask"),
    }
    # Both runtimes read the same token ids for the same prompt.
    gguf_none, onnx_none = by_arm[("smollm2-135m-instruct", "none")], by_arm[(onnx_label, "none")]
    assert [s["prompt_tokens"] for s in gguf_none] == [s["prompt_tokens"] for s in onnx_none]
    for sample in onnx_none:
        assert sample["raw_output"] and sample["error"] is None
        assert sample["timings"]["ttft_s"] > 0 and sample["timings"]["decode_tok_s"] > 1
        counters = sample["runtime_counters"]
        assert counters["n_p_eval"] == sample["prompt_tokens"]
        assert counters["n_eval"] == sample["forward_passes"] == sample["generated_tokens"] - 1
    for sample in by_arm[(onnx_label, "json")]:
        # The grammar's text, as bytes of the real tokens (not byte-level symbols like Ġ).
        assert sample["error"] is None and sample["raw_output"].startswith("{")
        assert "Ġ" not in sample["raw_output"]
    for sample in by_arm[(onnx_label, "mask")]:
        # The schema's grammar: a complete answer is valid JSON; one the 48-token budget
        # cut short (SmolLM2 often writes more) is a prefix of it and can be neither.
        assert sample["error"] is None and sample["raw_output"].startswith("{")
        valid = sample["scores"]["edgejson"]["valid_json"]
        assert valid == 1 or sample["finish_reason"] in ("length", "loop")
        assert sample["constraint_status"] == "applied"

    summary = result.summary
    record = json.loads((out / "manifest.json").read_text())["models"][1]
    assert record["format"] == "onnx" and record["size_bytes"] > 100e6
    skipped = summary.arm(onnx_label, "gbnf")
    assert skipped is not None and skipped.skip_reason.startswith("constraint 'gbnf'")
    onnx_none = summary.arm(onnx_label, "none")
    assert onnx_none is not None
    # The int4 weights are read into the worker's own memory (not mmapped like a GGUF).
    assert onnx_none.perf.peak_rss_mb > 150 and onnx_none.perf.peak_rss_anon_mb > 150
    assert onnx_none.perf.load_s > 0
    gguf_none = summary.arm("smollm2-135m-instruct", "none")
    assert gguf_none is not None and gguf_none.perf.peak_rss_mb > 50
    assert onnx_none.decode_ratio_to_first_model > 0


def test_bench_on_onnx_int4(onnx_models: dict[str, Path], tmp_path: Path) -> None:
    """`edgebench bench` on a converted folder: pp and tg rows, the onnxruntime build in
    the device block, the worker's peak RSS."""
    out = tmp_path / "bench.json"
    model = str(onnx_models["int4"])
    done = run_cli(
        "bench", "-m", model, "-t", "2", "-p", "64", "-n", "16", "-r", "2", "-o", str(out)
    )
    assert "onnxruntime" in done.stdout and "pp64" in done.stdout and "tg16" in done.stdout
    report = json.loads(out.read_text())
    assert report["status"] == "completed"
    assert [r["test"] for r in report["results"]] == ["pp64", "tg16"]
    for row in report["results"]:
        assert row["repetitions"] == 2 and row["tok_s_mean"] > 1
        assert 50 < row["peak_rss_mb"] < 4000
    runtime = report["device"]["runtime"]
    assert runtime["name"] == "onnxruntime" and runtime["onnxruntime"]
    assert "CPUExecutionProvider" in runtime["available_providers"]
