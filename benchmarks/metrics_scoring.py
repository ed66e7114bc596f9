"""How long does scoring stored samples with every metric family take?

Builds N samples (default 1,000) from the built-in EdgeJSON set: for each example, in
turn, the right answer, the answer with values changed (numbers +7%, a letter
dropped from strings), the answer with its structure changed (a key renamed to
camelCase, one dropped, the object wrapped in {"data": ...}), the example's JSON Schema
echoed as the answer (what SmolLM2-135M writes most often), and a truncated,
unparseable answer; with --from RUN_DIR the raw outputs of a real run come first.
Then it times `score_output` (parse, then every metric family: the task's EdgeJSON
scores, deepjson, structure, sted and sobench), in the sample record a run writes, and
the aggregation into a summary, all in this one process, and prints the time per family
and in all.

    python benchmarks/metrics_scoring.py
    python benchmarks/metrics_scoring.py --n 1000 --from runs/20261122T0210-smollm2-edgejson
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import random
import re
import time
from pathlib import Path
from typing import Any

from edgebench.backends.base import Generation
from edgebench.io import read_jsonl
from edgebench.metrics import Family, family_names, select_families
from edgebench.metrics.score import describe_families, score_output
from edgebench.runfolder.records import (
    SCHEMA_VERSION,
    ArmRecord,
    DatasetRecord,
    Device,
    Manifest,
    ModelRecord,
    PromptFormatRecord,
    RunSettings,
    TaskRecord,
)
from edgebench.runner.jobs import Job
from edgebench.runner.prepare import load_examples
from edgebench.runner.samples import build_sample
from edgebench.summary import summarize
from edgebench.tasks import get_task
from edgebench.tasks.base import Example, Task

MODEL = "stored-outputs"  # the one arm the samples are summarised as


def _change_values(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        return {k: _change_values(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_change_values(v, rng) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return round(value * 1.07, 2)
    if isinstance(value, str) and len(value) > 2:
        cut = rng.randrange(len(value))
        return value[:cut] + value[cut + 1 :]
    return value


def _camel(key: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def _change_structure(value: Any, rng: random.Random) -> Any:
    changed = copy.deepcopy(value)
    if isinstance(changed, dict) and changed:
        keys = list(changed)
        dropped = rng.choice(keys)
        changed.pop(dropped)
        changed = {_camel(k): v for k, v in changed.items()}
    return {"data": changed}


def variants(example: Example, rng: random.Random) -> list[str]:
    answer = json.dumps(example.expected, indent=2)
    return [
        answer,
        json.dumps(_change_values(example.expected, rng), indent=2),
        json.dumps(_change_structure(example.expected, rng)),
        json.dumps(example.schema, indent=2),
        answer[: len(answer) * 2 // 3],
    ]


def build_samples(n: int, run_dir: Path | None) -> list[tuple[str, Example]]:
    task = get_task("edgejson")
    examples, _ = load_examples(task, RunSettings())
    by_id = {e.id: e for e in examples}
    samples: list[tuple[str, Example]] = []
    if run_dir is not None:
        for record in read_jsonl(run_dir / "samples.jsonl"):
            if record.get("id") in by_id:
                samples.append((record.get("raw_output") or "", by_id[record["id"]]))
    rng = random.Random(17)
    index = 0
    while len(samples) < n:
        example = examples[index % len(examples)]
        samples.extend((text, example) for text in variants(example, rng))
        index += 1
    return samples[:n]


def answer(raw: str) -> Generation:
    """A stored output as the generation a run would score (nothing timed)."""
    return Generation(
        text=raw,
        prompt_tokens=0,
        output_tokens=0,
        generated_tokens=0,
        finish_reason="stop",
        t_start=0.0,
        t_first_token=None,
        t_end=0.0,
    )


def scoring_manifest(task: Task, families: list[Family]) -> Manifest:
    """A manifest of one arm (`MODEL`, none) scored with `families`: what `summarize`
    needs to aggregate the samples."""
    model = ModelRecord(
        label=MODEL,
        path="",
        sha256="",
        size_bytes=0,
        backend="none",
        format="none",
        prompt_format=PromptFormatRecord(style="completion"),
    )
    return Manifest(
        schema_version=SCHEMA_VERSION,
        kind="run",
        run_id="metrics-scoring",
        status="completed",
        started_at="",
        command=[],
        settings=RunSettings(),
        models=[model],
        task=TaskRecord(task.name, task.prompt_template, task.metric_family),
        dataset=DatasetRecord(),
        device=Device(),
        packages={},
        git=None,
        families=describe_families(families, task.metric_family),
        arms=[ArmRecord(MODEL, "none", "completed")],
        consistency=None,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="samples to score")
    parser.add_argument(
        "--from", dest="run_dir", type=Path, help="a run folder's raw outputs first"
    )
    args = parser.parse_args()

    task = get_task("edgejson")
    samples = build_samples(args.n, args.run_dir)
    families = select_families(task.metric_family, family_names())
    print(
        f"{platform.processor() or platform.machine()} · {os.cpu_count()} cores · "
        f"Python {platform.python_version()} · {len(samples)} samples"
    )

    # All families as `edgebench score` does it (first, so nothing is cached yet), then
    # each family alone.
    start = time.perf_counter()
    records = []
    for index, (raw, example) in enumerate(samples):
        job = Job(index, example, prompt="", max_tokens=0)
        records.append(build_sample(job, MODEL, "none", answer(raw), families))
    scored_s = time.perf_counter() - start
    manifest = scoring_manifest(task, families)
    start = time.perf_counter()
    summarize(manifest, records)
    summary_s = time.perf_counter() - start
    total = scored_s + summary_s
    print(f"all families: scoring {scored_s:.2f} s + summary {summary_s:.2f} s = {total:.2f} s")
    print(f"per sample: {total / len(samples) * 1000:.2f} ms")
    for family in families:
        # A run always scores with the task's own family (select_families puts it first),
        # so a family "alone" is timed as `--metrics FAMILY` scores it: the task's
        # EdgeJSON scores plus its own.
        alone = select_families(task.metric_family, [family.name])
        start = time.perf_counter()
        for raw, example in samples:
            score_output(alone, raw, example.expected, example.schema)
        print(
            f"  again, {family.name:<10} alone: {time.perf_counter() - start:6.2f} s (warm caches)"
        )


if __name__ == "__main__":
    main()
