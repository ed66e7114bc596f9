"""Fidelity on the real SmolLM2: a run of the registry's Q4_1 file and a Q2_K copy
requantized from it (llama.cpp's own quantizer, into the test's folder) measures KL > 0
and top-1 < 1 for the Q2_K against the Q4_1 reference; the Q4_1 against itself, on the
same prompts and answers, gives KL 0 and top-1 1.0."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from edgebench.backends.teacher_forcing import TeacherForcingWorker
from edgebench.runfolder.read import read_fidelity, read_samples
from edgebench.runfolder.records import RunSettings
from edgebench.runner.engine import execute
from edgebench.runner.fidelity import fidelity_examples
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.request import RunRequest
from edgebench.scoring.fidelity import summarize_positions
from edgebench.tasks import get_task

pytestmark = pytest.mark.model

BASE = "smollm2-135m-instruct"
LIMIT = 2


def requantize(source: Path, target: Path, quantization: str) -> None:
    """`source` requantized to `quantization` with llama_model_quantize (20A's
    `models quantize` does this for users; here only a second real variant is needed)."""
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{quantization}")
    params.allow_requantize = True
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(
        str(source).encode(), str(target).encode(), ctypes.byref(params)
    )
    assert rc == 0 and target.is_file()


@pytest.fixture(scope="module")
def variant_run(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fidelity")
    # label: the file's stem, a variant of BASE (a path cannot hold `@`: resolve reads
    # NAME@VARIANT there)
    q2 = folder / f"{BASE}.Q2_K.gguf"
    requantize(smollm2, q2, "Q2_K")
    out = folder / "run"
    settings = RunSettings(limit=LIMIT, threads=2, out=out, warmup=False)
    task = get_task("edgejson")
    examples, info = load_examples(task, settings)
    execute(
        RunRequest(
            settings, [model_under_test(None), model_under_test(str(q2))], task, examples, info
        )
    )
    return out


def test_the_q2_k_against_the_q4_1_reference_differs(variant_run: Path) -> None:
    fidelity = read_fidelity(variant_run)
    assert fidelity is not None and fidelity.status == "completed"
    assert (fidelity.reference, fidelity.reference_quantization) == (BASE, "Q4_1")
    variant = fidelity.variants[f"{BASE}.Q2_K"]
    assert variant.quantization == "Q2_K"
    assert variant.prompts == LIMIT and variant.positions > 20
    assert variant.kl_mean is not None and variant.kl_mean > 0
    assert variant.kl_median is not None and variant.kl_p99 is not None
    assert variant.kl_p99 >= variant.kl_median
    assert variant.top1_agreement is not None and variant.top1_agreement < 1.0


def test_a_model_against_itself_has_kl_zero_and_full_agreement(
    variant_run: Path, smollm2: Path
) -> None:
    samples, _ = read_samples(variant_run)
    examples = fidelity_examples(samples, BASE)
    worker = TeacherForcingWorker(
        {"backend": "llama", "reference": str(smollm2), "variant": str(smollm2), "n_threads": 2}
    )
    try:
        worker.load(2048)
        scores = [worker.compare(e.prompt, e.answer or "") for e in examples]
    finally:
        worker.close()
    figures = summarize_positions(scores)
    assert len(scores) == LIMIT and figures.positions > 20
    assert figures.kl_mean is not None and figures.kl_mean < 1e-6
    assert max(float(s.kl.max()) for s in scores) < 1e-6
    assert figures.top1_agreement == 1.0
