"""What the fidelity phase costs beside the arms of the same run: seconds per example and
the worker's peak RSS (reference and variant loaded side by side), against the run's own
arms on the same examples (wall seconds per example, peak RSS of one model).

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/fidelity_cost.py RUN_DIR [--limit N]
RUN_DIR: a run with two or more GGUF variants of one model, e.g. made with
    edgebench run --model smollm2-135m-instruct,/tmp/x/smollm2-135m-instruct@Q8_0.gguf \
        --limit 20 --no-fidelity --out RUN_DIR
The fidelity is measured again here (`edgebench fidelity RUN_DIR --limit N`: fidelity.json
is replaced) and its figures printed with the arms' from the same run folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from edgebench.runfolder.read import read_manifest
from edgebench.runner.fidelity import fidelity_of_run
from edgebench.system.versions import utc_now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--limit", type=int, default=20)
    args = parser.parse_args()
    manifest = read_manifest(args.run_dir)
    print(f"# {utc_now()} threads {manifest.settings.threads} limit {args.limit}")
    record = fidelity_of_run(args.run_dir, limit=args.limit)
    print("## fidelity phase (one worker per variant: reference + variant, both loaded)")
    for label, v in record.variants.items():
        per_example = v.wall_s / v.prompts if v.wall_s and v.prompts else None
        print(
            f"{label} vs {v.reference}: {v.prompts} examples, {v.positions} positions, "
            f"{v.wall_s:.1f} s (load included) = {per_example:.2f} s/example, "
            f"peak RSS {v.peak_rss_mb:.0f} MB; KL mean {v.kl_mean:.4f} median "
            f"{v.kl_median:.4f} p99 {v.kl_p99:.4f} nats, top-1 {v.top1_agreement:.3f}"
        )
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
