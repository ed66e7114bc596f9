"""Does re-timing give back the quiet machine's speed when other jobs disturbed a run?

Usage: flock /tmp/edgebench-cpu.lock python benchmarks/contention.py [--limit 20]
       [--constraint none,mask] [--threads 2] [--load 2] [--retime-max 2] [--persistent]

The same `edgebench run --limit N --constraint none,mask` runs in this process, through
the run engine, three times on the default model (SmolLM2-135M), after an untimed
one-example run that warms the page cache and the grammar cache (else the first run
pays for them and the wall-time comparison with it):

1. quiet, `--retime contended` (the default);
2. quiet, `--retime none` (1 and 2 side by side: what re-timing costs a quiet run);
3. loaded, `--retime contended`: `--load` busy-loop processes started here compete for
   the CPU while each arm decodes its examples. They stand for a job that disturbs the
   examples and is gone when the arm ends: they are paused (SIGSTOP) while the arm
   re-times and go on (SIGCONT) when the next arm starts. With `--persistent` they run
   through the re-timing too (then no pass is clean and the speed stays not clean).

Printed per arm: decode tok/s and TTFT p50 with a 95% percentile-bootstrap interval over
examples (the resampling of summary/uncertainty.py, median per resample) for quiet (run
1), loaded-raw (each example's first pass in run 3) and loaded-retimed (run 3's final
timings); the share of examples flagged contended on their first pass and left contended
after re-timing; whether every re-timed output was byte-identical to its first pass; and
the wall time of runs 1 and 2. The machine should be otherwise quiet: other jobs make
run 1 contended too (its flagged share says so).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import signal
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgebench.runfolder.read import read_samples
from edgebench.runfolder.records import RunSettings, SampleRecord, Timings
from edgebench.runner.engine import execute
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.summary.uncertainty import LEVEL, RESAMPLES, SEED
from edgebench.system.cpu_share import CONTENDED_SHARE
from edgebench.system.device import device_info
from edgebench.tasks import get_task


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


def run_once(args: argparse.Namespace, out: Path, retime: str, progress: object = None) -> Run:
    settings = RunSettings(
        limit=args.limit,
        threads=args.threads,
        constraints=tuple(args.constraint.split(",")),
        out=out,
        retime=retime,
        retime_max=args.retime_max,
        idle_baseline=0.0,
    )
    task = get_task(settings.task)
    examples, dataset = load_examples(task, settings)
    model = model_under_test(None)
    t0 = time.perf_counter()
    result = execute(settings, [model], task, examples, dataset, progress=progress)  # type: ignore[arg-type]
    wall = time.perf_counter() - t0
    return Run(read_samples(result.run_dir)[0], wall)


def first_pass(sample: SampleRecord) -> Timings:
    """The timings of an example's first pass: replaced only when a clean pass was found."""
    replaced = sample.passes > 1 and not sample.contended and not sample.retime_mismatch
    return sample.timings_disturbed[0] if replaced else sample.timings


def median_ci(values: Sequence[float]) -> tuple[float, float, float] | None:
    """p50 and its 95% percentile-bootstrap interval over examples."""
    array = np.asarray([v for v in values if v is not None], dtype=float)
    if not len(array):
        return None
    picks = np.random.default_rng(SEED).integers(0, len(array), size=(RESAMPLES, len(array)))
    medians = np.median(array[picks], axis=1)
    tail = (1 - LEVEL) / 2 * 100
    lo, hi = np.percentile(medians, [tail, 100 - tail], method="inverted_cdf")
    return float(np.median(array)), float(lo), float(hi)


def shown(figure: tuple[float, float, float] | None, digits: int) -> str:
    if figure is None:
        return "-"
    p50, lo, hi = figure
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
    parser.add_argument("--constraint", default="none,mask")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--load", type=int, default=2, help="busy-loop processes")
    parser.add_argument("--retime-max", type=int, default=2)
    parser.add_argument("--persistent", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="edgebench-contention-"))

    run_once(argparse.Namespace(**{**vars(args), "limit": 1}), scratch / "warm-up", "none")
    quiet = run_once(args, scratch / "quiet", "contended")
    plain = run_once(args, scratch / "quiet-none", "none")
    load = Load(args.load)
    try:
        loaded = run_once(
            args, scratch / "loaded", "contended", LoadWhileDecoding(load, args.persistent)
        )
    finally:
        load.close()

    device = device_info(args.threads)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {device['cpu_model']} · "
        f"{platform.platform()} · {args.threads} threads · --limit {args.limit} · "
        f"{args.load} busy loops{' (persistent)' if args.persistent else ''} · "
        f"--retime-max {args.retime_max} · contended: others or steal > "
        f"{100 * CONTENDED_SHARE:g}% of all cores"
    )
    print(
        "| arm | run | decode tok/s p50 [95% CI] | TTFT ms p50 [95% CI] | flagged | "
        "left contended |"
    )
    print("|---|---|---|---|---|---|")
    quiet_arms, loaded_arms = arms(quiet.samples), arms(loaded.samples)
    for arm, samples in quiet_arms.items():
        rows = [
            ("quiet", samples, [s.timings for s in samples]),
            (
                "loaded, raw",
                loaded_arms.get(arm, []),
                [first_pass(s) for s in loaded_arms.get(arm, [])],
            ),
            (
                "loaded, re-timed",
                loaded_arms.get(arm, []),
                [s.timings for s in loaded_arms.get(arm, [])],
            ),
        ]
        for label, records, timings in rows:
            n = len(records)
            flagged = sum(1 for s in records if s.passes > 1 or s.contended)
            left = sum(1 for s in records if s.contended)
            decode = median_ci([t.decode_tok_s for t in timings])  # type: ignore[misc]
            ttft = median_ci([1e3 * t.ttft_s for t in timings if t.ttft_s is not None])
            print(
                f"| {arm} | {label} | {shown(decode, 1)} | {shown(ttft, 1)} | "
                f"{flagged}/{n} | {left if label != 'loaded, raw' else flagged}/{n} |"
            )
    retimed = [s for s in quiet.samples + loaded.samples if s.passes > 1]
    mismatches = sum(1 for s in retimed if s.retime_mismatch)
    print(
        f"re-timed examples: {len(retimed)}; byte-identical outputs: "
        f"{'all' if not mismatches else f'{len(retimed) - mismatches} of {len(retimed)}'}"
    )
    print(
        f"quiet wall time: --retime contended {quiet.wall_s:.1f} s, --retime none "
        f"{plain.wall_s:.1f} s ({100 * (quiet.wall_s / plain.wall_s - 1):+.1f}%); "
        f"loaded --retime contended {loaded.wall_s:.1f} s"
    )
    print(f"run folders under {scratch}")


if __name__ == "__main__":
    main()
