"""`edgebench consistency`: sample each prompt N times per temperature and measure how
much the answers agree (STED and the consistency score)."""

from __future__ import annotations

from edgebench.cli.options import (
    CompileTimeoutOpt,
    ConsistencyConstraintOpt,
    DatasetOpt,
    DeviceNameOpt,
    GuardOpt,
    IgnoreMemoryOpt,
    JsonOpt,
    LimitOpt,
    MaxCrashesOpt,
    MaxTokensOpt,
    MetricParamOpt,
    ModelOpt,
    NCtxOpt,
    OutOpt,
    PromptOpt,
    ResumeOpt,
    SampleOpt,
    SamplesOpt,
    SchemasOpt,
    SeedOpt,
    StratifyOpt,
    StrictDataOpt,
    TaskOpt,
    TemperaturesOpt,
    ThreadsOpt,
    TimeoutOpt,
    WarmupOpt,
    run_settings,
)
from edgebench.errors import UserError


def parse_temperatures(text: str) -> tuple[float, ...]:
    values = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            values.append(float(part))
        except ValueError:
            raise UserError(f"--temperatures: '{part}' is not a number") from None
    return tuple(dict.fromkeys(values))


def consistency(
    model: ModelOpt = None,
    task: TaskOpt = None,
    samples: SamplesOpt = None,
    temperatures: TemperaturesOpt = None,
    seed: SeedOpt = None,
    constraint: ConsistencyConstraintOpt = None,
    resume: ResumeOpt = None,
    dataset: DatasetOpt = None,
    schemas: SchemasOpt = None,
    limit: LimitOpt = None,
    sample: SampleOpt = None,
    stratify: StratifyOpt = None,
    strict_data: StrictDataOpt = None,
    threads: ThreadsOpt = None,
    max_tokens: MaxTokensOpt = None,
    n_ctx: NCtxOpt = None,
    out: OutOpt = None,
    timeout: TimeoutOpt = None,
    compile_timeout: CompileTimeoutOpt = None,
    max_crashes: MaxCrashesOpt = None,
    ignore_memory_check: IgnoreMemoryOpt = False,
    warmup: WarmupOpt = None,
    prompt: PromptOpt = None,
    guard: GuardOpt = None,
    metric_param: MetricParamOpt = None,
    device_name: DeviceNameOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Sample every prompt N times at each temperature (seeded) and score how consistent
    the answers are: pairwise STED and the consistency score per prompt and temperature,
    with structural-only and semantic-only variants. A crashed or hung worker costs one
    generation; --resume continues an interrupted run.

    Example: edgebench consistency --samples 5 --limit 10 --temperatures 0.2,0.5,0.8

    Example: edgebench consistency --task roundtrip --constraint gbnf --limit 5

    Example: edgebench consistency --device-name pi5-kitchen --limit 5

    Example: edgebench consistency --resume runs/20261124T1015-smollm2-consistency-edgejson
    """
    from edgebench.cli.output import run_and_show
    from edgebench.constraints import parse_modes
    from edgebench.metrics import parse_metric_params
    from edgebench.report.table import render_consistency
    from edgebench.runfolder.read import read_manifest
    from edgebench.runner.jobs import ConsistencyRun, sted_parameters
    from edgebench.system.identity import requested_name
    from edgebench.tasks import get_task
    from edgebench.tasks.base import prompt_template_for

    modes = parse_modes(constraint) if constraint is not None else None
    if modes is not None and len(modes) != 1:
        raise UserError("--constraint: consistency runs one constraint mode at a time")
    params = parse_metric_params(metric_param or [])
    name = requested_name(device_name)  # a bad name fails before any loading
    settings = run_settings(
        locals(),
        resume,
        constraints=tuple(modes) if modes is not None else None,
        check_memory=False if ignore_memory_check else None,
    )
    task_impl = get_task(settings.task)
    prompt_template_for(task_impl, settings.prompt)  # a bad --prompt fails before any loading
    stored = read_manifest(resume).consistency if resume is not None else None
    base = ConsistencyRun.from_record(stored) if stored is not None else ConsistencyRun()
    sted = sted_parameters(dict(base.sted_parameters), params)
    kind = ConsistencyRun(
        samples=samples if samples is not None else base.samples,
        temperatures=(
            parse_temperatures(temperatures) if temperatures is not None else base.temperatures
        ),
        seed=seed if seed is not None else base.seed,
        sted_parameters=tuple(sted.items()),
    )
    run_and_show(
        settings,
        [settings.model],
        task_impl,
        kind,
        resume=resume is not None,
        render=render_consistency,
        as_json=as_json,
        device_name=name,
    )
