"""Does re-timing give back the quiet machine's speed when other jobs disturbed a run?

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/contention.py [--limit 20]
       [--block 5] [--constraint none,mask] [--threads 2] [--load 2] [--retime-max 2]
       [--persistent] [--quiet-only]

The first `--limit N` examples of the built-in dataset run through the run engine, in this
process, on the default model (SmolLM2-135M), three ways, after an untimed one-example run
that warms the page cache and the grammar cache:

- quiet, `--retime contended` (the default);
- quiet, `--retime none` (against the first: what re-timing costs a quiet run);
- loaded, `--retime contended`: `--load` busy-loop processes started here compete for
  the CPU while each arm decodes its examples. They stand for a job that disturbs the
  examples and is gone when the arm ends: they are paused (SIGSTOP) while the arm
  re-times and go on (SIGCONT) when the next arm starts. With `--persistent` they run
  through the re-timing too (then no pass is clean and the speed stays not clean).

A VM's speed drifts by 10-20% between minutes, more than the differences measured here,
so the three are interleaved rather than run one after the other: the examples go in
blocks of `--block`, and each block runs quiet, loaded, quiet (the two quiet ways
swapping places from block to block, A/B/B/A). Each block's run decodes the whole
dataset's token budget (the examples are put first in the dataset, the run takes
`--limit` of them), so its outputs are those of one whole run.

Printed per arm: decode tok/s and TTFT p50 with a 95% percentile-bootstrap interval over
examples (summary/uncertainty.py) for quiet, loaded-raw (each example's first pass) and
loaded-re-timed (the final timings), the paired ratio of re-timed to quiet decode p50 on
the same examples with its interval, the share of examples flagged contended on their
first pass and left contended after re-timing, whether every re-timed output was
byte-identical to its first pass, and the summed wall time of the two quiet ways with
their ratio and its 95% interval paired over blocks (each resample draws blocks and takes
both ways' wall times there, so a block's examples and its minute of drift cancel).
`--quiet-only` leaves the loaded runs out: only the two quiet ways, for the wall-time
question with more blocks in the same time.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import signal
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from edgebench.runfolder.read import read_samples
from edgebench.runfolder.records import DatasetRecord, RunSettings, SampleRecord, Timings
from edgebench.runner.engine import execute
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.summary.uncertainty import bootstrap_ci, median_ci, paired_median_ratio
from edgebench.system.cpu_share import CONTENDED_SHARE
from edgebench.system.device import device_info
from edgebench.tasks import get_task
from edgebench.tasks.base import Example


def _busy() -> None:
    while True:
        pass


class Load:
    """`n` busy-loop processes; paused and resumed with signals, ended by `close`."""

    def __init__(self, n: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.processes = [context.Process(target=_busy, daemon=True) for _ in range(n)]
        for process in self.processes:
            process.start()

    def signal(self, signum: int) -> None:
        for process in self.processes:
            if process.pid is not None:
                os.kill(process.pid, signum)

    def close(self) -> None:
        self.signal(signal.SIGCONT)
        for process in self.processes:
            process.terminate()
            process.join()


class LoadWhileDecoding:
    """The engine's progress hooks: the load runs while an arm decodes its examples and
    pauses when the arm re-times (unless persistent)."""

    def __init__(self, load: Load, persistent: bool) -> None:
        self.load, self.persistent = load, persistent

    def start(self, total: int, description: str, run_left: int) -> None:
        self.load.signal(signal.SIGCONT)

    def advance(self, sample: SampleRecord) -> None:
        pass

    def step(self, stats: str) -> None:
        pass

    def note(self, message: str) -> None:
        if message.startswith("re-timing ") and not self.persistent:
            self.load.signal(signal.SIGSTOP)

    def stop(self) -> None:
        pass


@dataclass
class Run:
    samples: list[SampleRecord]
    wall_s: float


def run_block(
    args: argparse.Namespace,
    block: list[Example],
    dataset: tuple[list[Example], DatasetRecord],
    out: Path,
    retime: str,
    progress: object = None,
) -> Run:
    """One run of `block`'s examples: put first in the whole dataset, which still sizes
    the token budget, and taken with --limit."""
    examples, record = dataset
    ids = {example.id for example in block}
    rest = [example for example in examples if example.id not in ids]
    settings = RunSettings(
        limit=len(block),
        threads=args.threads,
        constraints=tuple(args.constraint.split(",")),
        out=out,
        retime=retime,
        retime_max=args.retime_max,
        idle_baseline=0.0,
    )
    task = get_task(settings.task)
    model = model_under_test(None)
    t0 = time.perf_counter()
    result = execute(settings, [model], task, [*block, *rest], record, progress=progress)  # type: ignore[arg-type]
    wall = time.perf_counter() - t0
    return Run(read_samples(result.run_dir)[0], wall)


def merged(runs: list[Run]) -> Run:
    return Run([s for run in runs for s in run.samples], sum(run.wall_s for run in runs))


def first_pass(sample: SampleRecord) -> Timings:
    """The timings of an example's first pass: replaced only when a clean pass was found."""
    replaced = sample.passes > 1 and not sample.contended and not sample.retime_mismatch
    return sample.timings_disturbed[0] if replaced else sample.timings


def shown(values: list[float], digits: int) -> str:
    """p50 [lo, hi] of one value per example."""
    if not values:
        return "-"
    lo, hi = median_ci(values) or (float("nan"), float("nan"))
    p50 = statistics.median(values)
    return f"{p50:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def arms(samples: list[SampleRecord]) -> dict[str, list[SampleRecord]]:
    by_arm: dict[str, list[SampleRecord]] = {}
    for sample in samples:
        if sample.cpu is not None:  # answered and measured
            by_arm.setdefault(sample.constraint, []).append(sample)
    return by_arm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--block", type=int, default=5, help="examples per interleaved block")
    parser.add_argument("--constraint", default="none,mask")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--load", type=int, default=2, help="busy-loop processes")
    parser.add_argument("--retime-max", type=int, default=2)
    parser.add_argument("--persistent", action="store_true")
    parser.add_argument("--quiet-only", action="store_true", help="leave the loaded runs out")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="edgebench-contention-"))
    task = get_task("edgejson")
    examples, record = load_examples(task, RunSettings(limit=args.limit))
    dataset = (examples, record)
    chosen = examples[: args.limit]
    blocks = [chosen[i : i + args.block] for i in range(0, len(chosen), args.block)]

    started = time.gmtime()
    run_block(args, chosen[:1], dataset, scratch / "warm-up", "none")
    quiet: list[Run] = []
    plain: list[Run] = []
    loaded: list[Run] = []
    for number, block in enumerate(blocks):
        first, last = ("contended", "none") if number % 2 == 0 else ("none", "contended")
        ways = [("before", first), ("loaded", "contended"), ("after", last)]
        for when, retime in [w for w in ways if not (args.quiet_only and w[0] == "loaded")]:
            out = scratch / f"block{number}-{when}-{retime}"
            if when == "loaded":
                load = Load(args.load)
                try:
                    hooks = LoadWhileDecoding(load, args.persistent)
                    loaded.append(run_block(args, block, dataset, out, retime, hooks))
                finally:
                    load.close()
                continue
            (quiet if retime == "contended" else plain).append(
                run_block(args, block, dataset, out, retime)
            )
    quiet_run, plain_run, loaded_run = merged(quiet), merged(plain), merged(loaded)
    block_walls = ([run.wall_s for run in quiet], [run.wall_s for run in plain])

    device = device_info(args.threads)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M', started)}-{time.strftime('%H:%M UTC', time.gmtime())}"
        f" · {device.cpu_model} · {platform.platform()} · {args.threads} threads · "
        f"--limit {args.limit} in blocks of {args.block} · {args.load} busy loops"
        f"{' (persistent)' if args.persistent else ''}"
        f"{' · quiet only' if args.quiet_only else ''} · --retime-max {args.retime_max} · "
        f"contended: others or steal > {100 * CONTENDED_SHARE:g}% of all cores"
    )
    print(
        "| arm | run | decode tok/s p50 [95% CI] | x quiet, paired [95% CI] | "
        "TTFT ms p50 [95% CI] | flagged | left contended |"
    )
    print("|---|---|---|---|---|---|---|")
    quiet_arms, plain_arms, loaded_arms = (
        arms(quiet_run.samples),
        arms(plain_run.samples),
        arms(loaded_run.samples),
    )
    for arm, samples in quiet_arms.items():
        reference = {s.id: s.timings.decode_tok_s for s in samples}
        rows = [
            ("quiet", samples, [s.timings for s in samples]),
            ("quiet, --retime none", plain_arms.get(arm, []), None),
        ]
        if not args.quiet_only:
            rows += [
                ("loaded, raw", loaded_arms.get(arm, []), "first"),
                ("loaded, re-timed", loaded_arms.get(arm, []), None),
            ]
        for label, records, how in rows:
            timings = [first_pass(s) if how == "first" else s.timings for s in records]
            n = len(records)
            flagged = sum(1 for s in records if s.passes > 1 or s.contended)
            left = flagged if label == "loaded, raw" else sum(1 for s in records if s.contended)
            decode = [t.decode_tok_s for t in timings if t.decode_tok_s is not None]
            ttft = [1e3 * t.ttft_s for t in timings if t.ttft_s is not None]
            print(
                f"| {arm} | {label} | {shown(decode, 1)} | "
                f"{paired(reference, records, timings)} | {shown(ttft, 1)} | "
                f"{flagged}/{n} | {left}/{n} |"
            )
    retimed = [s for s in quiet_run.samples + loaded_run.samples if s.passes > 1]
    mismatches = sum(1 for s in retimed if s.retime_mismatch)
    print(
        f"re-timed examples: {len(retimed)}; byte-identical outputs: "
        f"{'all' if not mismatches else f'{len(retimed) - mismatches} of {len(retimed)}'}"
    )
    print(
        f"quiet wall time, summed over blocks: --retime contended {quiet_run.wall_s:.1f} s, "
        f"--retime none {plain_run.wall_s:.1f} s "
        f"({100 * (quiet_run.wall_s / plain_run.wall_s - 1):+.1f}%)"
        + ("" if args.quiet_only else f"; loaded --retime contended {loaded_run.wall_s:.1f} s")
    )
    print(wall_ratio(*block_walls, quiet))
    print(f"run folders under {scratch}")


def wall_ratio(contended: list[float], plain: list[float], quiet: list[Run]) -> str:
    """The two quiet ways' wall-time ratio paired over blocks, in all blocks and in the
    blocks where the default way re-timed nothing (there both ways run the same code)."""
    lines = []
    untouched = [i for i, run in enumerate(quiet) if not any(s.passes > 1 for s in run.samples)]
    every = list(range(len(contended)))
    for label, kept in (("all blocks", every), ("blocks re-timing nothing", untouched)):
        a, b = [contended[i] for i in kept], [plain[i] for i in kept]
        if not a:
            continue
        lo, hi = bootstrap_ci(a, b) or (float("nan"), float("nan"))
        per_block = ", ".join(f"{100 * (x / y - 1):+.1f}%" for x, y in zip(a, b, strict=True))
        lines.append(
            f"quiet wall ratio --retime contended / none, {label} ({len(a)}): "
            f"{sum(a) / sum(b):.3f} [{lo:.3f}, {hi:.3f}] (per block {per_block})"
        )
    return "\n".join(lines)


def paired(
    reference: dict[str, float | None], records: list[SampleRecord], timings: list[Timings]
) -> str:
    """p50 of these decode speeds over the quiet run's on the same examples."""
    pairs = [
        (reference[s.id], t.decode_tok_s)
        for s, t in zip(records, timings, strict=True)
        if reference.get(s.id) is not None and t.decode_tok_s is not None
    ]
    if not pairs:
        return "-"
    base, other = [p[0] for p in pairs], [p[1] for p in pairs]
    ratio = statistics.median(other) / statistics.median(base)
    lo, hi = paired_median_ratio(base, other) or (float("nan"), float("nan"))
    return f"{ratio:.3f} [{lo:.3f}, {hi:.3f}]"


if __name__ == "__main__":
    main()
