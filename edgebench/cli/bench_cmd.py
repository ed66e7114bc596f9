"""`edgebench bench`: llama-bench-style prompt and generation speed on this device."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.console import escape, say, stderr_console, stdout_console, stop_signals
from edgebench.cli.options import (
    DEFAULT_WAIT_COOL_TIMEOUT,
    DeviceNameOpt,
    FormatOpt,
    JsonOpt,
    ModelsOpt,
    WaitCoolOpt,
    WaitCoolTimeoutOpt,
    check_wait_cool,
    default_threads,
    join_models,
    out_option,
    parse_duration,
    parse_int_list,
    parse_model_list,
)


def bench(
    model: ModelsOpt = None,
    threads: Annotated[
        str | None,
        typer.Option(
            "--threads",
            "-t",
            metavar="N[,N]",
            help="Thread counts, comma-separated (default: physical cores).",
        ),
    ] = None,
    prompt_tokens: Annotated[
        str,
        typer.Option(
            "--prompt-tokens",
            "-p",
            metavar="N[,N]",
            help="ppN rows: prompt lengths, comma-separated; 0 for none.",
        ),
    ] = "512",
    gen_tokens: Annotated[
        str,
        typer.Option(
            "--gen-tokens",
            "-n",
            metavar="N[,N]",
            help="tgN rows: generated tokens, comma-separated; 0 for none.",
        ),
    ] = "128",
    depth: Annotated[
        str,
        typer.Option(
            "--depth",
            "-d",
            metavar="N[,N]",
            help="Tokens already in the KV cache before each test (rows '@ dN'), "
            "comma-separated; on OpenVINO GenAI models tgN rows only.",
        ),
    ] = "0",
    repetitions: Annotated[
        int,
        typer.Option("--repetitions", "-r", min=1, metavar="N", help="Timed repetitions per row."),
    ] = 5,
    warmup: Annotated[
        int, typer.Option("--warmup", min=0, metavar="N", help="Untimed repetitions per row first.")
    ] = 1,
    n_ctx: Annotated[
        int | None,
        typer.Option(
            "--n-ctx",
            min=64,
            metavar="TOKENS",
            help="Context size (default: what the largest row needs).",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="Seed of the random token ids.")
    ] = 42,
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
        out_option(
            "The bench's JSON record to write, every model and repetition "
            "(default: runs/<time>-<model>-bench.json); `card` and `report` read it."
        ),
    ] = None,
    output_format: FormatOpt = "table",
    duration: Annotated[
        str | None,
        typer.Option(
            "--duration",
            metavar="TIME",
            help="Repeat the rows for this much wall time (90s, 10m, 1h or plain seconds) "
            "instead of --repetitions, and report each row's first-minute and last-minute "
            "speed and the drop: does it stay fast once the device is hot?",
        ),
    ] = None,
    cooldown: Annotated[
        float,
        typer.Option(
            "--cooldown",
            "--delay",
            metavar="SECONDS",
            min=0,
            help="Pause this long before each timed repetition but the first (llama-bench's "
            "--delay), so heat from one row does not slow the next; not timed, but it "
            "lengthens the wall time.",
        ),
    ] = 0.0,
    wait_cool: WaitCoolOpt = None,
    wait_cool_timeout: WaitCoolTimeoutOpt = None,
    device_name: DeviceNameOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Prompt processing (ppN) and generation (tgN) speed, mean ± std, like llama-bench.

    ppN: N prompt tokens in one batch. tgN: N tokens decoded one at a time. KV cache cleared.

    OpenVINO GenAI models: timed by the pipeline's own PerfMetrics (the table says how).

    One worker process per model and thread count (its peak RSS is reported), models in turn.

    One table; a JSON record with every repetition, which `card` and `report` read.

    Example: edgebench bench --threads 1,2 --prompt-tokens 128,512 --gen-tokens 128

    Example: edgebench bench -m smollm2-135m-instruct,gemma3-270m -p 512 -n 128 --format md

    Example: edgebench bench --duration 10m --wait-cool 50

    Example: edgebench bench --threads 1,2 --cooldown 30

    Example: edgebench bench --device-name pi5-kitchen
    """
    from edgebench.bench.execute import BenchInterrupted, BenchSettings, execute_bench, plan_tests
    from edgebench.cli.progress import BenchRichProgress
    from edgebench.report.bench_table import (
        RENDERERS,
        bench_notes,
        bench_table,
        speed_rows,
    )
    from edgebench.report.formats import check_out, chosen_format
    from edgebench.runner.prepare import model_under_test
    from edgebench.system.identity import requested_name

    render = RENDERERS.get(chosen_format(output_format, as_json))
    check_out(out)
    settings = BenchSettings(
        model=join_models(model),
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
        duration_s=parse_duration(duration, "--duration") if duration is not None else None,
        cooldown_s=cooldown,
        wait_cool=check_wait_cool(wait_cool),
        wait_cool_timeout=wait_cool_timeout or DEFAULT_WAIT_COOL_TIMEOUT,
    )
    plan_tests(settings)  # a bad combination fails before the model is resolved
    name = requested_name(device_name)
    console = stderr_console()
    try:
        with stop_signals():  # SIGTERM and SIGHUP stop it as Ctrl-C does
            models = [model_under_test(spec) for spec in parse_model_list(settings.model)]
            result = execute_bench(
                settings,
                models,
                progress=BenchRichProgress(console),
                notify=lambda line: console.print(escape(line), highlight=False, soft_wrap=True),
                device_name=name,
            )
    except KeyboardInterrupt as stopped:
        kept = "nothing was measured"
        if isinstance(stopped, BenchInterrupted):
            kept = f"what was measured is kept in {stopped.path}"
        say(console, f"[bold yellow]interrupted:[/] {escape(kept)}")
        raise typer.Exit(130) from None
    if render is None:
        stdout_console().print(bench_table(result.record))
    else:  # exactly the text: no markup, no wrapping
        typer.echo(render(speed_rows(result.record)), nl=False)
    for note in bench_notes(result.record):
        console.print(f"[yellow]not clean:[/] {escape(note)}", highlight=False, soft_wrap=True)
    console.print(f"results: [bold]{escape(str(result.path))}[/]", soft_wrap=True)
