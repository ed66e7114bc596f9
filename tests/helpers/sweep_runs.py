"""A sweep run folder for report tests: several quantized variants of one base, each
with its own quantization, file size, speed, peak RSS and scores (fake backend on the
built-in EdgeJSON examples), the manifest's `quantized_from` and a fidelity.json as the
issue-20 interfaces write them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.worker import InProcessWorker
from edgebench.constraints import parse_modes
from edgebench.prompts import PromptFormat
from edgebench.runfolder.records import SCHEMA_VERSION, DatasetRecord, RunSettings
from edgebench.runner.engine import execute
from edgebench.runner.request import RunEnvironment, RunRequest
from edgebench.runner.spec import ModelUnderTest
from edgebench.tasks import get_task

BASE = "smollm2-135m-instruct"
REQUANTIZED = "requantized from Q4_1: the ceiling is the source's quality"
KV_BYTES_PER_TOKEN = 23_040  # SmolLM2-135M: 30 layers x 2 x 3 heads x 64 x 2 bytes


@dataclass(frozen=True)
class Variant:
    quantization: str
    size_mb: float  # file, 10^6 bytes
    per_token_s: float  # decode seconds per token (fake clock)
    correct: int  # of the examples, how many answered exactly
    peak_rss_mb: float  # written into the arm's memory record
    kl_mean: float | None  # None: the reference
    top1: float | None

    def label(self, base: str = BASE) -> str:
        return f"{base}@{self.quantization}"


# Q4_0 is bigger, slower, hungrier and less accurate than Q4_K_M: dominated by it.
VARIANTS = (
    Variant("Q8_0", 145.0, 0.020, 4, 310.0, None, None),
    Variant("Q4_K_M", 105.0, 0.010, 3, 230.0, 0.0412, 0.91),
    Variant("Q4_0", 110.0, 0.012, 2, 240.0, 0.0630, 0.88),
    Variant("Q2_K", 88.0, 0.008, 1, 190.0, 0.3100, 0.64),
)


def variant(quantization: str) -> Variant:
    return next(v for v in VARIANTS if v.quantization == quantization)


def _model(v: Variant, base: str) -> ModelUnderTest:
    return ModelUnderTest(
        label=v.label(base),
        path=Path(f"/cache/{BASE}@{v.quantization}.gguf"),
        sha256="0" * 64,
        size_bytes=int(v.size_mb * 1e6),
        prompt_format=PromptFormat(style="completion"),
        n_ctx_train=8192,
        backend="llama",
        details={"quantization": v.quantization, "registry_name": None},
        kv_bytes_per_token=KV_BYTES_PER_TOKEN,
    )


def make_sweep_run(
    out: Path,
    modes: str = "none,mask",
    n: int = 4,
    variants: tuple[Variant, ...] = VARIANTS,
    fidelity: bool = True,
    base: str = BASE,
    wrong_modes: tuple[str, ...] = (),
) -> Path:
    """A completed sweep of `variants` of `base` under `modes` on `n` built-in examples;
    `mask` answers as `none` does (the same scores); a mode in `wrong_modes` answers
    every example with `{}` (scores 0)."""
    task = get_task("edgejson")
    examples = task.load(*task.resolve_paths(None, None))[:n]
    answers = [json.dumps(ex.expected) for ex in examples]
    by_label = {v.label(base): v for v in variants}

    def backend(model: ModelUnderTest, mode: str) -> FakeBackend:
        v = by_label[model.label]
        correct = 0 if mode in wrong_modes else v.correct
        outputs = [a if i < correct else "{}" for i, a in enumerate(answers)]
        return FakeBackend(outputs, timings=FakeTimings(per_output_token=v.per_token_s))

    # the fidelity phase is not run: the fixture writes its own fidelity.json below
    settings = RunSettings(
        out=out,
        warmup=False,
        limit=n,
        constraints=tuple(parse_modes(modes)),
        fidelity=False,
    )
    dataset = DatasetRecord(path="data/edgejson/test.jsonl", sha256="ab" * 32, n_examples=n)
    execute(
        RunRequest(settings, [_model(v, base) for v in variants], task, examples, dataset),
        RunEnvironment(
            worker_factory=lambda model, mode: InProcessWorker(backend(model, str(mode)))
        ),
    )
    _set_memory_and_source(out, by_label)
    if fidelity:
        write_fidelity(out, variants, base)
    return out


def _set_memory_and_source(out: Path, by_label: dict[str, Variant]) -> None:
    """Each arm's peak RSS as the variant's; each variant requantized from Q4_1."""
    path = out / "manifest.json"
    manifest = json.loads(path.read_text())
    for arm in manifest["arms"]:
        rss = by_label[arm["model"]].peak_rss_mb
        arm["memory"] = {
            "peak_rss_mb": rss,
            "peak_rss_anon_mb": rss / 3,
            "peak_rss_file_mb": rss * 2 / 3,
            "samples": 3,
            "source": "proc",
        }
    for model in manifest["models"]:
        model["quantized_from"] = {
            "source": model["label"].split("@")[0],
            "source_quantization": "Q4_1",
            "requantized": True,
            "note": REQUANTIZED,
        }
    path.write_text(json.dumps(manifest))


def write_fidelity(out: Path, variants: tuple[Variant, ...] = VARIANTS, base: str = BASE) -> None:
    reference = variants[0]
    record = {
        "reference": reference.label(base),
        "reference_quantization": reference.quantization,
        "prompts": 4,
        "positions": 400,
        "schema_version": SCHEMA_VERSION,
        "variants": {
            v.label(base): {
                "quantization": v.quantization,
                "kl_mean": v.kl_mean,
                "kl_median": v.kl_mean,
                "kl_p99": v.kl_mean,
                "top1_agreement": v.top1,
                "positions": 400,
            }
            for v in variants[1:]
        },
    }
    (out / "fidelity.json").write_text(json.dumps(record))
