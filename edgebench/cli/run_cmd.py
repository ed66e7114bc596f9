"""`edgebench run`: benchmark models on a task and print the summary."""

from __future__ import annotations

from typing import Annotated

import typer

from edgebench.cli.options import (
    MODES_HELP,
    CloseOpt,
    CloseTokensOpt,
    CompileTimeoutOpt,
    DatasetOpt,
    DelayOpt,
    DeviceNameOpt,
    FidelityOpt,
    FormatOpt,
    GuardOpt,
    IdleBaselineOpt,
    IgnoreMemoryOpt,
    JsonOpt,
    LimitOpt,
    LoopDetectionOpt,
    MaxContextOpt,
    MaxCrashesOpt,
    MaxTokensOpt,
    MetricParamOpt,
    MetricsOpt,
    ModelsOpt,
    NCtxOpt,
    OutOpt,
    ParseOpt,
    PowerCommandOpt,
    PowerLogOpt,
    PrefixCacheOpt,
    PromptOpt,
    ResumeOpt,
    RetimeMaxOpt,
    RetimeOpt,
    SampleOpt,
    SampleSeedOpt,
    SchemasOpt,
    StopAtJsonOpt,
    StratifyOpt,
    StrictDataOpt,
    TaskOpt,
    ThreadsOpt,
    TimelineOpt,
    TimeoutOpt,
    WaitCoolOpt,
    WaitCoolTimeoutOpt,
    WarmupOpt,
    check_retime,
    check_wait_cool,
    join_models,
    parse_model_list,
    run_settings,
)
from edgebench.errors import UserError


def run(
    model: ModelsOpt = None,
    task: TaskOpt = None,
    dataset: DatasetOpt = None,
    schemas: SchemasOpt = None,
    limit: LimitOpt = None,
    sample: SampleOpt = None,
    stratify: StratifyOpt = None,
    seed: SampleSeedOpt = None,
    strict_data: StrictDataOpt = None,
    threads: ThreadsOpt = None,
    max_tokens: MaxTokensOpt = None,
    n_ctx: NCtxOpt = None,
    max_context: MaxContextOpt = None,
    out: OutOpt = None,
    constraint: Annotated[
        str | None,
        typer.Option(
            "--constraint",
            "-c",
            metavar="MODE[,MODE]",
            help=MODES_HELP,
        ),
    ] = None,
    warmup: WarmupOpt = None,
    guard: GuardOpt = None,
    resume: ResumeOpt = None,
    timeout: TimeoutOpt = None,
    compile_timeout: CompileTimeoutOpt = None,
    max_crashes: MaxCrashesOpt = None,
    ignore_memory_check: IgnoreMemoryOpt = False,
    metrics: MetricsOpt = None,
    metric_param: MetricParamOpt = None,
    stop_at_json: StopAtJsonOpt = None,
    loop_detection: LoopDetectionOpt = None,
    close: CloseOpt = False,
    close_tokens: CloseTokensOpt = None,
    prefix_cache: PrefixCacheOpt = None,
    parse: ParseOpt = None,
    prompt: PromptOpt = None,
    delay: DelayOpt = None,
    wait_cool: WaitCoolOpt = None,
    wait_cool_timeout: WaitCoolTimeoutOpt = None,
    power_command: PowerCommandOpt = None,
    power_log: PowerLogOpt = None,
    idle_baseline: IdleBaselineOpt = None,
    timeline: TimelineOpt = None,
    fidelity: FidelityOpt = None,
    retime: RetimeOpt = None,
    retime_max: RetimeMaxOpt = None,
    device_name: DeviceNameOpt = None,
    as_json: JsonOpt = False,
    output_format: FormatOpt = "table",
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Print every table: the scores by group, each metric family, speed in "
            "detail, the totals, the arms side by side and their paired differences "
            "(default: the scores and speed per arm, and the warnings).",
        ),
    ] = False,
) -> None:
    """Decode every example greedily and record accuracy, latency, tokens/s and peak memory.

    Example: edgebench run --model smollm2-135m-instruct --limit 20 --threads 2

    Example: edgebench run --constraint none,gbnf,mask --limit 20 --timeout 120

    Example: edgebench run --model smollm2-135m-instruct,smollm2-135m-instruct@onnx-int4

    Example: edgebench run --task roundtrip --limit 20 --metrics sted,sobench

    Example: edgebench run --task deepjson --dataset deepjsoneval.jsonl --max-context 4096

    Example: edgebench run --task deepjson --dataset DeepJSONEval.xlsx --sample 25 --stratify depth

    Example: edgebench run --constraint none,mask,mask+close

    Example: edgebench run --no-stop-at-json --limit 20

    Example: edgebench run --prefix-cache

    Example: edgebench run --task deepjson --parse reference

    Example: edgebench run --task deepjson --dataset sample.jsonl --prompt reference

    Example: edgebench run --limit 20 --delay 10 --wait-cool 50

    Example: edgebench run --power-log usb-meter.csv --idle-baseline 10

    Example: edgebench run --power-command 'python read_ina219.py' --limit 20

    Example: edgebench run --no-timeline --limit 20

    Example: edgebench run --model smollm2-135m-instruct,smollm2-135m-instruct@Q8_0 --no-fidelity

    Example: edgebench run --device-name pi5-kitchen --limit 20

    Example: edgebench run --limit 20 --retime contended --retime-max 3

    Example: edgebench run --constraint none,json,mask --limit 20 --format md

    Example: edgebench run --resume runs/20261122T002458-smollm2-135m-instruct-edgejson
    """
    from edgebench.cli.output import run_and_show
    from edgebench.constraints import parse_modes
    from edgebench.metrics import parse_metric_params, parse_metrics, select_families
    from edgebench.report.compact import formatted, render_compact
    from edgebench.report.formats import check_out, chosen_format
    from edgebench.report.table import render_summary
    from edgebench.runner.jobs import GreedyRun
    from edgebench.runner.power import check_power_settings
    from edgebench.scoring.extract import check_parse_mode
    from edgebench.system.identity import requested_name
    from edgebench.tasks import get_task
    from edgebench.tasks.base import prompt_template_for

    shown_as = chosen_format(output_format, as_json)
    check_out(out)
    if close and constraint is None:
        raise UserError("--close: give the schema modes to close, e.g. --constraint mask --close")
    check_wait_cool(wait_cool)
    name = requested_name(device_name)  # a bad name fails before any loading
    settings = run_settings(
        locals(),
        resume,
        constraints=tuple(parse_modes(constraint, close)) if constraint is not None else None,
        check_memory=False if ignore_memory_check else None,
        metrics=parse_metrics(metrics) if metrics is not None else None,
        metric_params=parse_metric_params(metric_param) if metric_param else None,
        parse=check_parse_mode(parse) if parse is not None else None,
        retime=check_retime(retime) if retime is not None else None,
        model=join_models(model),
    )
    check_power_settings(settings)  # a missing --power-log fails before any loading
    task_impl = get_task(settings.task)
    prompt_template_for(task_impl, settings.prompt)  # a bad --prompt fails before any loading
    # A mistake in --metrics or --metric-param fails now, before the dataset loads or a
    # model is pulled (the engine selects the families again for the run).
    select_families(task_impl.metric_family, settings.metrics, settings.metric_params)
    specs = parse_model_list(settings.model)
    run_and_show(
        settings,
        specs,
        task_impl,
        GreedyRun(),
        resume=resume is not None,
        render=render_summary if verbose else render_compact,
        device_name=name,
        output_format=shown_as,
        formatted=formatted,
    )
