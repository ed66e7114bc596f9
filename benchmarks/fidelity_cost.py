"""What the fidelity phase costs beside the arms of the same run: seconds per example and
the worker's peak RSS (reference and variant loaded side by side), against the run's own
arms on the same examples (wall seconds per example, peak RSS of one model).

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/fidelity_cost.py RUN_DIR [--limit N]
           [--n-batch 128,512]
RUN_DIR: a run with two or more GGUF variants of one model, e.g. made with
    edgebench run --model smollm2-135m-instruct,/tmp/x/smollm2-135m-instruct@Q8_0.gguf \
        --limit 20 --no-fidelity --out RUN_DIR
The fidelity is measured again here (`edgebench fidelity RUN_DIR --limit N`: fidelity.json
is replaced) and its figures printed with the arms' from the same run folder; with
several --n-batch values, once per llama.cpp batch size, one after another in this process.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from edgebench.backends.teacher_forcing import LOGITS_BATCH, TeacherForcingWorker
from edgebench.runfolder.read import read_manifest
from edgebench.runfolder.records import Manifest, ModelRecord
from edgebench.runner.fidelity import fidelity_of_run
from edgebench.system.versions import utc_now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--n-batch", default=str(LOGITS_BATCH))
    args = parser.parse_args()
    manifest = read_manifest(args.run_dir)
    print(f"# {utc_now()} threads {manifest.settings.threads} limit {args.limit}")
    for n_batch in (int(n) for n in args.n_batch.split(",")):
        phase(args.run_dir, args.limit, n_batch)
    arms(manifest)


def phase(run_dir: Path, limit: int, n_batch: int) -> None:
    def factory(reference: ModelRecord, variant: ModelRecord, threads: int) -> Any:
        return TeacherForcingWorker(
            {
                "backend": reference.backend,
                "reference": reference.path,
                "variant": variant.path,
                "n_threads": threads,
                "options": {"n_batch": n_batch},
            }
        )

    record = fidelity_of_run(run_dir, limit=limit, factory=factory)
    print(f"## fidelity phase, n_batch {n_batch} (one worker per variant: both models loaded)")
    for label, v in record.variants.items():
        per_example = v.wall_s / v.prompts if v.wall_s and v.prompts else None
        print(
            f"{label} vs {v.reference}: {v.prompts} examples, {v.positions} positions, "
            f"{v.wall_s:.1f} s (load included) = {per_example:.2f} s/example, "
            f"peak RSS {v.peak_rss_mb:.0f} MB; KL mean {v.kl_mean:.4f} median "
            f"{v.kl_median:.4f} p99 {v.kl_p99:.4f} nats, top-1 {v.top1_agreement:.3f}"
        )


def arms(manifest: Manifest) -> None:
    print("## the run's arms (greedy decoding of the same examples)")
    for arm in manifest.arms:
        n = manifest.settings.limit or 0
        memory = arm.memory.peak_rss_mb if arm.memory is not None else None
        per_example = arm.wall_s / n if n else float("nan")
        print(
            f"{arm.model} · {arm.constraint}: {arm.wall_s:.1f} s = {per_example:.2f} s/example, "
            f"peak RSS {memory if memory is None else round(memory)} MB"
        )


if __name__ == "__main__":
    main()
