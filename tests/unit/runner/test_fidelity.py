"""The fidelity phase of a run (runner/fidelity.py) with fake models and fake logits: which
models are variants, the reference, fidelity.json, --no-fidelity, Ctrl-C and a failing
worker; `edgebench fidelity RUN` on a stored run and its one-line errors."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeLogits
from edgebench.backends.teacher_forcing import InProcessTeacherForcing, TeacherForcing
from edgebench.isolation import WorkerError
from edgebench.report.compare import compare_rows
from edgebench.runfolder.read import read_fidelity
from edgebench.runfolder.records import ModelRecord, PromptFormatRecord
from edgebench.runner import fidelity as fidelity_module
from edgebench.runner.engine import RunInterrupted
from edgebench.runner.fidelity import (
    answer_text,
    fidelity_of_run,
    variant_groups,
)
from edgebench.summary import load_run
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.fakes import fake_model

HALF = [math.log(0.5), math.log(0.25), math.log(0.25)]
SWAPPED = [math.log(0.25), math.log(0.5), math.log(0.25)]
KL = 0.25 * math.log(2)  # KL([1/2, 1/4, 1/4] || [1/4, 1/2, 1/4]) in nats


def record(label: str, quantization: str | None, fmt: str = "gguf") -> ModelRecord:
    return ModelRecord(
        label=label,
        path=f"/models/{label}.gguf",
        sha256="0" * 64,
        size_bytes=1,
        backend="llama",
        format=fmt,
        prompt_format=PromptFormatRecord(style="completion"),
        quantization=quantization,
    )


def test_variants_of_one_base_and_the_highest_precision_reference() -> None:
    models = [
        record("smol", "Q4_1"),
        record("smol@Q2_K", "Q2_K"),
        record("smol@Q8_0", "Q8_0"),
        record("smol@onnx-int4", "int4", fmt="onnx"),  # not GGUF: never a variant
        record("gemma", "Q4_K_M"),  # alone: no group
    ]
    (group,) = variant_groups(models)
    assert group.reference.label == "smol@Q8_0"
    assert [m.label for m in group.variants] == ["smol", "smol@Q2_K"]


def test_file_stems_with_a_quantization_type_are_variants_of_their_base() -> None:
    models = [
        record("smollm2-135m-instruct", "Q4_1"),  # a registry name
        record("SmolLM2-135M-Instruct.Q8_0", "Q8_0"),  # a local file's stem
        record("smollm2-135m-instruct-q4_k_m", "Q4_K_M"),
        record("smollm2-135m-instruct_Q2_K", "Q2_K"),
        record("smollm2-135m-instruct-v2", "Q4_1"),  # another model
    ]
    (group,) = variant_groups(models)
    assert group.reference.label == "SmolLM2-135M-Instruct.Q8_0"
    assert [m.label for m in group.variants] == [
        "smollm2-135m-instruct",
        "smollm2-135m-instruct-q4_k_m",
        "smollm2-135m-instruct_Q2_K",
    ]


def test_equal_precision_takes_the_first_and_one_model_has_no_group() -> None:
    (group,) = variant_groups([record("m@Q4_0", "Q4_0"), record("m", "Q4_0")])
    assert group.reference.label == "m@Q4_0"
    assert variant_groups([record("m", "Q4_1")]) == []
    # a suffix that is no quantization type is part of the name
    assert variant_groups([record("m@v2", "Q4_1"), record("m", "Q8_0")]) == []


def test_the_answer_is_the_expected_json_indented() -> None:
    assert answer_text({"a": [1, "é"]}) == '{\n  "a": [\n    1,\n    "é"\n  ]\n}'


def fake_variants(tmp_path: Path) -> list[Any]:
    """`smol` (Q4_1) and `smol@Q8_0`: the reference is smol@Q8_0. Their files exist (empty:
    the fake backends never open them)."""
    models = []
    for label, quant in (("smol", "Q4_1"), ("smol@Q8_0", "Q8_0")):
        path = tmp_path / f"{label}.gguf"
        path.write_bytes(b"")
        models.append(
            fake_model(label, path=path, details={"quantization": quant}, n_ctx_train=4096)
        )
    return models


class Factory:
    """Teacher forcing in this process: reference logits HALF, variant SWAPPED (KL = 1/4
    ln 2 at every position); `fail_at`: the compare call that raises `fail_with`."""

    def __init__(self, fail_at: int | None = None, fail_with: BaseException | None = None):
        self.fail_at = fail_at
        self.fail_with = fail_with
        self.calls = 0
        self.loaded: list[tuple[str, str]] = []

    def __call__(self, reference: ModelRecord, variant: ModelRecord, threads: int) -> Any:
        logits = {reference.path: [HALF], variant.path: [SWAPPED]}
        service = TeacherForcing(
            FakeLogits(reference.path, logits), FakeLogits(variant.path, logits)
        )
        self.loaded.append((reference.label, variant.label))
        factory = self

        class Worker(InProcessTeacherForcing):
            def compare(self, prompt: str, answer: str) -> Any:
                factory.calls += 1
                if factory.calls == factory.fail_at:
                    assert factory.fail_with is not None
                    raise factory.fail_with
                return super().compare(prompt, answer)

        return Worker(service)


def run_variants(run_fake: Any, tmp_path: Path, factory: Factory, n: int = 2, **kw: Any) -> Any:
    from edgebench.backends.fake import FakeBackend

    return run_fake(
        FakeBackend(default_output='{"a": 1}'),
        n=n,
        models=fake_variants(tmp_path),
        fidelity_factory=factory,
        **kw,
    )


def test_a_run_with_two_variants_writes_fidelity_json(run_fake: Any, tmp_path: Path) -> None:
    factory = Factory()
    result = run_variants(run_fake, tmp_path, factory)
    assert factory.loaded == [("smol@Q8_0", "smol")]
    fidelity = read_fidelity(result.run_dir)
    assert fidelity is not None
    assert fidelity.status == "completed"
    assert (fidelity.reference, fidelity.reference_quantization) == ("smol@Q8_0", "Q8_0")
    # the answer {"a": 1} indented is 4 words: `{`, `"a":`, `1`, `}` -> 4 positions each
    assert (fidelity.prompts, fidelity.positions) == (2, 8)
    variant = fidelity.variants["smol"]
    assert variant.quantization == "Q4_1"
    assert variant.kl_mean == pytest.approx(KL)
    assert variant.kl_median == pytest.approx(KL)
    assert variant.kl_p99 == pytest.approx(KL)
    assert variant.top1_agreement == 0.0
    assert (variant.positions, variant.prompts, variant.skipped) == (8, 2, 0)
    assert "smol@Q8_0" not in fidelity.variants
    raw = json.loads((result.run_dir / "fidelity.json").read_text())
    assert raw["schema_version"] == "2.11"
    # compare shows it beside the task scores
    rows = compare_rows([load_run(result.run_dir).summary], [fidelity])
    by_model = {row["model"]: row for row in rows}
    assert by_model["smol"]["kl_mean"] == pytest.approx(KL)
    assert by_model["smol"]["top1_agreement"] == 0.0
    assert by_model["smol@Q8_0"]["fidelity"] == "reference"


def test_no_fidelity_and_a_single_model_write_no_file(run_fake: Any, tmp_path: Path) -> None:
    factory = Factory()
    result = run_variants(run_fake, tmp_path, factory, fidelity=False)
    assert not (result.run_dir / "fidelity.json").exists()
    single = run_fake(out=tmp_path / "single", fidelity_factory=factory)
    assert not (single.run_dir / "fidelity.json").exists()
    assert factory.loaded == []


def test_a_failing_worker_costs_its_variant_only(run_fake: Any, tmp_path: Path) -> None:
    factory = Factory(fail_at=1, fail_with=WorkerError("RuntimeError", "llama_decode -1", ""))
    result = run_variants(run_fake, tmp_path, factory)
    fidelity = read_fidelity(result.run_dir)
    assert fidelity is not None and fidelity.status == "completed"
    variant = fidelity.variants["smol"]
    assert variant.status == "failed"
    assert variant.error is not None and "llama_decode -1" in variant.error
    assert variant.kl_mean is None
    assert load_run(result.run_dir).manifest.status == "completed"


def test_ctrl_c_in_the_phase_keeps_the_run_and_resume_finishes_it(
    run_fake: Any, tmp_path: Path
) -> None:
    with pytest.raises(RunInterrupted):
        run_variants(run_fake, tmp_path, Factory(fail_at=2, fail_with=KeyboardInterrupt()))
    run_dir = tmp_path / "run"
    stopped = read_fidelity(run_dir)
    assert stopped is not None and stopped.status == "interrupted"
    assert load_run(run_dir).manifest.status == "interrupted"
    again = Factory()
    result = run_variants(run_fake, tmp_path, again, resume=True)
    fidelity = read_fidelity(result.run_dir)
    assert fidelity is not None and fidelity.status == "completed"
    assert fidelity.variants["smol"].kl_mean == pytest.approx(KL)
    # resumed once more: the phase is complete, nothing is measured again
    later = Factory()
    run_variants(run_fake, tmp_path, later, resume=True)
    assert later.loaded == []


def test_fidelity_of_a_stored_run_with_limit(run_fake: Any, tmp_path: Path) -> None:
    result = run_variants(run_fake, tmp_path, Factory(), n=3, fidelity=False)
    fidelity = fidelity_of_run(result.run_dir, limit=1, factory=Factory())
    assert (fidelity.prompts, fidelity.positions, fidelity.limit) == (1, 4, 1)
    stored = read_fidelity(result.run_dir)
    assert stored is not None and stored.variants["smol"].positions == 4


def test_fidelity_command_prints_the_table(
    run_fake: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    result = run_variants(run_fake, tmp_path, Factory(), fidelity=False)
    monkeypatch.setattr(fidelity_module, "start_teacher_forcing", Factory())
    code, _ = run_cli(capsys, "fidelity", str(result.run_dir), "--json")
    assert code == 0


def test_fidelity_command_errors_are_one_line(
    run_fake: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli(capsys, "fidelity", str(tmp_path / "nowhere"))
    assert_one_line_error(code, err, "no such run folder")
    (tmp_path / "empty").mkdir()
    code, err = run_cli(capsys, "fidelity", str(tmp_path / "empty"))
    assert_one_line_error(code, err, "not a run folder")
    single = run_fake(out=tmp_path / "single")
    code, err = run_cli(capsys, "fidelity", str(single.run_dir))
    assert_one_line_error(code, err, "two or more GGUF variants", "fake-model")
    two = run_variants(run_fake, tmp_path, Factory(), fidelity=False)
    (tmp_path / "smol.gguf").unlink()
    code, err = run_cli(capsys, "fidelity", str(two.run_dir))
    assert_one_line_error(code, err, "smol.gguf", "missing")
    code, err = run_cli(capsys, "fidelity", str(two.run_dir), "--limit", "0")
    assert_one_line_error(code, err, "--limit")
