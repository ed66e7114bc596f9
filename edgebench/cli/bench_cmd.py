"""`edgebench bench`: llama-bench-style prompt and generation speed on this device."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from edgebench.cli.options import ModelOpt, default_threads, parse_int_list
from edgebench.cli.output import stderr_console, stdout_console
from edgebench.report.bench_table import BenchRichProgress, bench_notes, bench_table
from edgebench.runner.bench import BenchInterrupted, BenchSettings, execute_bench, plan_tests
from edgebench.runner.prepare import model_under_test


def bench(
    model: ModelOpt = None,
    threads: Annotated[
        str | None,
        typer.Option(
            "--threads", "-t", help="Thread counts, comma-separated (default: physical cores)."
        ),
    ] = None,
    prompt_tokens: Annotated[
        str,
        typer.Option(
            "--prompt-tokens", "-p", help="ppN rows: prompt lengths, comma-separated; 0 for none."
        ),
    ] = "512",
    gen_tokens: Annotated[
        str,
        typer.Option(
            "--gen-tokens", "-n", help="tgN rows: generated tokens, comma-separated; 0 for none."
        ),
    ] = "128",
    depth: Annotated[
        str,
        typer.Option(
            "--depth", "-d", help="Tokens already in the KV cache before each test (rows '@ dN')."
        ),
    ] = "0",
    repetitions: Annotated[
        int, typer.Option("--repetitions", "-r", min=1, help="Timed repetitions per row.")
    ] = 5,
    warmup: Annotated[
        int, typer.Option("--warmup", min=0, help="Untimed repetitions per row first.")
    ] = 1,
    n_ctx: Annotated[
        int | None,
        typer.Option("--n-ctx", min=64, help="Context size (default: what the largest row needs)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random token ids.")] = 42,
    pin: Annotated[
        bool,
        typer.Option(
            "--pin/--no-pin",
            help="Pin llama.cpp's OpenMP threads to distinct cores (OMP_PROC_BIND=close, "
            "OMP_PLACES=cores) unless you set those variables yourself.",
        ),
    ] = True,
    interleave: Annotated[
        bool,
        typer.Option(
            "--interleave/--no-interleave",
            help="Load every thread count at once and alternate their repetitions, so a "
            "drift (heat, background load) hits them alike; --no-interleave: one after "
            "another, less memory.",
        ),
    ] = True,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="JSON file to write (default: runs/<time>-<model>-bench.json)."
        ),
    ] = None,
) -> None:
    """Prompt processing (ppN) and generation (tgN) speed, mean ± std, like llama-bench.

    ppN: N prompt tokens in one batch. tgN: N tokens decoded one at a time. KV cache cleared.

    One worker process per thread count (its peak RSS is reported); JSON with every repetition.

    Example: edgebench bench --threads 1,2 --prompt-tokens 128,512 --gen-tokens 128

    Example: edgebench bench -m gemma3-270m -p 512 -n 128 -d 0,1024 -r 5
    """
    settings = BenchSettings(
        model=model,
        threads=parse_int_list(threads, "--threads", 1) if threads else (default_threads(),),
        prompt_tokens=parse_int_list(prompt_tokens, "--prompt-tokens", 0),
        gen_tokens=parse_int_list(gen_tokens, "--gen-tokens", 0),
        depths=parse_int_list(depth, "--depth", 0),
        repetitions=repetitions,
        warmup=warmup,
        n_ctx=n_ctx,
        seed=seed,
        pin=pin,
        interleave=interleave,
        out=out,
    )
    plan_tests(settings)  # a bad combination fails before the model is resolved
    console = stderr_console()
    try:
        model_info = model_under_test(settings.model)
        result = execute_bench(settings, model_info, progress=BenchRichProgress(console))
    except KeyboardInterrupt as stopped:
        kept = "nothing was written"
        if isinstance(stopped, BenchInterrupted):
            kept = f"what was measured is kept in {stopped.path}"
        console.print(
            f"[bold yellow]interrupted:[/] {escape(kept)}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(130) from None
    stdout_console().print(bench_table(result.report))
    for note in bench_notes(result.report):
        console.print(f"[yellow]not clean:[/] {escape(note)}", highlight=False, soft_wrap=True)
    console.print(f"results: [bold]{escape(str(result.path))}[/]", soft_wrap=True)
