"""The fidelity phase: how closely each GGUF variant of a model (Q8_0, Q4_K_M, ...) follows
the run's highest-precision variant of it, without a task score: mean, median and 99th
percentile KL divergence and top-1 agreement of the next-token distributions over the
run's own prompts followed by each example's expected answer (teacher forcing, as
`llama-perplexity --kl-divergence`; definitions in docs/metrics.md).

    variant_groups   GGUF models of one base (`NAME@TYPE` labels, `NAME.Q8_0` file
                     stems, the label without the type compared in lower case), two
                     or more: the
                     reference is the highest precision_rank, ties the first
    per variant      one worker with the reference and the variant side by side
                     (backends/teacher_forcing.py): count tokens, load at the n_ctx the
                     longest prompt + answer needs, then per example -> per-position KL
                     and top-1 back to this process; the live bar shows the running mean
    fidelity.json    written after each variant (status running), at the end completed;
                     Ctrl-C writes what was done with status interrupted and stops

It runs after the arms of `edgebench run` (`--no-fidelity` skips it) and on its own for an
existing run folder (`edgebench fidelity RUN`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from edgebench.backends.base import now
from edgebench.backends.teacher_forcing import TeacherForcingWorker
from edgebench.errors import UserError
from edgebench.failures import WORKER_FAILURES
from edgebench.models.quant_types import QUANT_TYPES, precision_rank
from edgebench.runfolder.folder import RunFolder
from edgebench.runfolder.read import read_manifest, read_samples
from edgebench.runfolder.records import (
    FidelityRecord,
    FidelityVariant,
    ModelRecord,
    SampleRecord,
)
from edgebench.scoring.fidelity import PositionScores, summarize_positions
from edgebench.system.memory import MemoryPeak
from edgebench.system.versions import utc_now

# What a failed variant costs: itself only (recorded with its error); anything else stops.
_VARIANT_FAILURES = (*WORKER_FAILURES, UserError)
_CTX_STEP = 64


def answer_text(expected: Any) -> str:
    """The expected answer as the model is made to read it: the JSON pretty-printed with a
    two-space indent, as the token budget counts it (runner/budget.py)."""
    return json.dumps(expected, indent=2, ensure_ascii=False)


# What separates a quantization type from the model's name in a label: `NAME@Q8_0` (the
# model cache's variants), `SmolLM2-135M-Instruct.Q8_0`, `model-q4_k_m` (file names).
_SEPARATORS = "@.-_"


def base_name(model: ModelRecord) -> str | None:
    """The model a GGUF file is a variant of, in lower case: its label without a trailing
    quantization type (`NAME@Q8_0`, a file stem `NAME.Q8_0` or `NAME-q8_0`), else the whole
    label; None for a model that is not GGUF."""
    if model.format != "gguf":
        return None
    label = model.label
    for quant in sorted(QUANT_TYPES, key=len, reverse=True):  # Q4_K_M before K_M-less ones
        cut = len(label) - len(quant) - 1  # where the separator would be
        if cut > 0 and label.upper().endswith(quant) and label[cut] in _SEPARATORS:
            return label[:cut].lower()
    return label.lower()


@dataclass(frozen=True)
class VariantGroup:
    """GGUF variants of one base in a run: the reference and the others, in run order."""

    reference: ModelRecord
    variants: list[ModelRecord]


def variant_groups(models: list[ModelRecord]) -> list[VariantGroup]:
    """Every base with two or more GGUF variants in the run, in run order; its reference
    is the variant of the highest precision (models/quant_types.py), the first of equals."""
    by_base: dict[str, list[ModelRecord]] = {}
    for model in models:
        base = base_name(model)
        if base is not None:
            by_base.setdefault(base, []).append(model)
    groups = []
    for members in by_base.values():
        if len(members) < 2:
            continue
        best = max(precision_rank(m.quantization) for m in members)
        reference = next(m for m in members if precision_rank(m.quantization) == best)
        groups.append(VariantGroup(reference, [m for m in members if m is not reference]))
    return groups


@dataclass(frozen=True)
class FidelityExample:
    """One example as the run's reference model read it, and its expected answer."""

    id: str
    prompt: str
    answer: str | None  # None: the example has no expected answer (JSONSchemaBench)


def fidelity_examples(
    samples: list[SampleRecord], model: str, limit: int | None = None
) -> list[FidelityExample]:
    """The run's examples in run order, each once (a consistency draw or a second
    constraint arm adds nothing), with the prompt exactly as `model` read it."""
    seen: dict[str, FidelityExample] = {}
    for sample in sorted((s for s in samples if s.model == model), key=lambda s: s.index):
        if sample.id not in seen:
            answer = None if sample.expected is None else answer_text(sample.expected)
            seen[sample.id] = FidelityExample(sample.id, sample.prompt, answer)
    examples = list(seen.values())
    return examples[:limit] if limit is not None else examples


class FidelityWorker(Protocol):
    """Teacher forcing of a reference and a variant (a `TeacherForcingWorker`)."""

    def count(self, pairs: list[tuple[str, str]]) -> list[tuple[int, int]]: ...
    def load(self, n_ctx: int) -> None: ...
    def compare(self, prompt: str, answer: str) -> PositionScores: ...
    def close(self) -> MemoryPeak: ...


# (reference, variant, threads) -> a worker with both loaded; tests pass their own.
FidelityFactory = Callable[[ModelRecord, ModelRecord, int], FidelityWorker]


def start_teacher_forcing(
    reference: ModelRecord, variant: ModelRecord, threads: int
) -> TeacherForcingWorker:
    return TeacherForcingWorker(
        {
            "backend": reference.backend,
            "reference": reference.path,
            "variant": variant.path,
            "n_threads": threads,
        }
    )


class FidelityProgress(Protocol):
    def start(self, total: int, description: str, run_left: int) -> None: ...
    def step(self, stats: str) -> None: ...
    def note(self, message: str) -> None: ...
    def stop(self) -> None: ...


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def _context_cap(*models: ModelRecord) -> int | None:
    known = [m.context_length for m in models if m.context_length]
    return min(known) if known else None


@dataclass
class _Phase:
    """One fidelity phase over the variant groups of a run."""

    groups: list[VariantGroup]
    samples: list[SampleRecord]
    threads: int
    limit: int | None
    write: Callable[[FidelityRecord], None]
    factory: FidelityFactory
    progress: FidelityProgress | None
    check_stop: Callable[[], None]

    def run(self) -> FidelityRecord:
        first = self.groups[0].reference
        record = FidelityRecord(
            reference=first.label,
            reference_quantization=first.quantization,
            prompts=0,
            positions=0,
            variants={},
            status="running",
            threads=self.threads,
            limit=self.limit,
            started_at=utc_now(),
        )
        left = sum(len(g.variants) for g in self.groups)
        try:
            for group in self.groups:
                examples = fidelity_examples(self.samples, group.reference.label, self.limit)
                for variant in group.variants:
                    result = self._variant(group.reference, variant, examples, left)
                    left -= 1
                    record = self._with(record, variant.label, result)
                    self.write(record)
        except KeyboardInterrupt:
            self.write(replace(record, status="interrupted", finished_at=utc_now()))
            raise
        record = replace(record, status="completed", finished_at=utc_now())
        self.write(record)
        return record

    @staticmethod
    def _with(record: FidelityRecord, label: str, result: FidelityVariant) -> FidelityRecord:
        variants = {**record.variants, label: result}
        if result.reference != record.reference:
            return replace(record, variants=variants)
        return replace(
            record,
            variants=variants,
            prompts=max(record.prompts, result.prompts),
            positions=max(record.positions, result.positions),
        )

    def _variant(
        self,
        reference: ModelRecord,
        variant: ModelRecord,
        examples: list[FidelityExample],
        left: int,
    ) -> FidelityVariant:
        t_start = now()
        answered = [e for e in examples if e.answer is not None]
        base = FidelityVariant(
            quantization=variant.quantization,
            kl_mean=None,
            kl_median=None,
            kl_p99=None,
            top1_agreement=None,
            positions=0,
            reference=reference.label,
        )
        worker = self.factory(reference, variant, self.threads)
        scores: list[PositionScores] = []
        kept: list[FidelityExample] = []
        try:
            pairs = [(e.prompt, e.answer or "") for e in answered]
            counts = worker.count(pairs)
            cap = _context_cap(reference, variant)
            fitting = [
                (e, p + a)
                for e, (p, a) in zip(answered, counts, strict=True)
                if a > 0 and (cap is None or p + a <= cap)
            ]
            kept = [e for e, _ in fitting]
            if kept:
                n_ctx = _round_up(max(n for _, n in fitting), _CTX_STEP)
                worker.load(n_ctx if cap is None else min(n_ctx, cap))
            if self.progress is not None:
                description = f"fidelity · {variant.label} vs {reference.label}"
                self.progress.start(len(kept), description, len(kept) * left)
            for example in kept:
                scores.append(worker.compare(example.prompt, example.answer or ""))
                if self.progress is not None:
                    self.progress.step(_running(scores))
                self.check_stop()
        except _VARIANT_FAILURES as exc:
            message = f"fidelity of {variant.label}: {exc}"
            if self.progress is not None:
                self.progress.note(message)
            return replace(base, status="failed", error=message, wall_s=now() - t_start)
        finally:
            if self.progress is not None:
                self.progress.stop()
            peak = worker.close()
        figures = summarize_positions(scores)
        return replace(
            base,
            **asdict(figures),  # kl_mean, kl_median, kl_p99, top1_agreement, positions
            prompts=len(kept),
            skipped=len(examples) - len(kept),
            wall_s=now() - t_start,
            peak_rss_mb=peak.peak_rss_mb or None,
        )


def _running(scores: list[PositionScores]) -> str:
    figures = summarize_positions(scores)
    if figures.kl_mean is None or figures.top1_agreement is None:
        return ""
    return f"KL {figures.kl_mean:.4f} · top-1 {figures.top1_agreement:.3f}"


def measure_fidelity(
    groups: list[VariantGroup],
    samples: list[SampleRecord],
    *,
    threads: int,
    write: Callable[[FidelityRecord], None],
    limit: int | None = None,
    factory: FidelityFactory | None = None,
    progress: FidelityProgress | None = None,
    check_stop: Callable[[], None] = lambda: None,
) -> FidelityRecord:
    """Every variant of every group against its reference; `write` gets the record after
    each variant and at the end (Ctrl-C: what was done, status interrupted, then raised)."""
    return _Phase(
        groups,
        samples,
        threads,
        limit,
        write,
        factory or start_teacher_forcing,
        progress,
        check_stop,
    ).run()


def already_measured(record: FidelityRecord | None, groups: list[VariantGroup]) -> bool:
    """A complete fidelity.json of the whole run for these very groups (a resumed run
    that had finished its phase does not measure again)."""
    if record is None or record.status != "completed" or record.limit is not None:
        return False
    wanted = {v.label: g.reference.label for g in groups for v in g.variants}
    have = {label: v.reference for label, v in record.variants.items()}
    done = all(v.status == "completed" for v in record.variants.values())
    return done and have == wanted


def fidelity_of_run(
    run_dir: Path,
    *,
    limit: int | None = None,
    threads: int | None = None,
    factory: FidelityFactory | None = None,
    progress: FidelityProgress | None = None,
) -> FidelityRecord:
    """`edgebench fidelity RUN`: the phase for an existing run folder (locked meanwhile),
    on the prompts its reference read and its examples' expected answers; fidelity.json
    is replaced. Each mistake is a one-line error naming the folder or the file."""
    manifest = read_manifest(run_dir)
    groups = variant_groups(manifest.models)
    if not groups:
        labels = ", ".join(m.label for m in manifest.models)
        raise UserError(
            f"{run_dir}: fidelity needs two or more GGUF variants of one model "
            f"(NAME and NAME@TYPE, e.g. NAME@Q8_0); this run has {labels}"
        )
    for model in (m for g in groups for m in (g.reference, *g.variants)):
        if not Path(model.path).is_file():
            raise UserError(
                f"{model.path}: the model file of {model.label} is missing (moved or deleted "
                "since the run)"
            )
    samples, _ = read_samples(run_dir)
    for group in groups:
        examples = fidelity_examples(samples, group.reference.label, limit)
        if not any(e.answer is not None for e in examples):
            raise UserError(
                f"{run_dir}: no example of {group.reference.label} with an expected answer "
                "(fidelity reads the answers' tokens)"
            )
    folder = RunFolder.reopen(run_dir)
    try:
        return measure_fidelity(
            groups,
            samples,
            threads=threads or manifest.settings.threads,
            write=folder.write_fidelity,
            limit=limit,
            factory=factory,
            progress=progress,
        )
    finally:
        folder.release()
