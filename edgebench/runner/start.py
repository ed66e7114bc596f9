"""Starting a run from what a user names: the sequence `edgebench run` and `edgebench
consistency` follow, as a library call (the command line only adds its terminal: progress
bar, Ctrl-C, printing).

    start_run()
      dataset   loaded and checked first, so its mistakes are reported before any model
                is resolved or pulled; --limit/--sample/--stratify mistakes too
      models    every NAME@TYPE variant quantized already, then each model resolved
                (pulled if needed) and its prompt format read
      run       engine.execute with the request and the environment given
"""

from __future__ import annotations

from collections.abc import Callable

from edgebench.models.resolve import check_variants_ready
from edgebench.runfolder.records import RunSettings
from edgebench.runner.engine import RunResult, execute
from edgebench.runner.jobs import GreedyRun, RunKind
from edgebench.runner.prepare import (
    invalid_data_warning,
    load_examples,
    mixed_tuning_warning,
    model_under_test,
)
from edgebench.runner.request import RunEnvironment, RunRequest
from edgebench.runner.subset import select_examples
from edgebench.tasks.base import Task

Warn = Callable[[str], None]


def _ignore(warning: str) -> None:
    """A library caller that passes no `warn` hears none."""


def start_run(
    settings: RunSettings,
    model_specs: list[str | None],
    task: Task,
    kind: RunKind | None = None,
    *,
    resume: bool = False,
    device_name: str | None = None,
    environment: RunEnvironment | None = None,
    warn: Warn = _ignore,
) -> RunResult:
    """Load the task's dataset as `settings` say, resolve `model_specs` (a registry name,
    a GGUF path, `NAME@TYPE`; None: the default model) and run them as `kind` says
    (default: every example once, greedily) into one run folder. `warn` hears what a
    user should know but that does not stop the run (rows left out as invalid, a base
    model beside instruct ones), one line each; nothing is printed. Mistakes raise
    `UserError` (one line); see `engine.execute` for the rest."""
    examples, dataset = load_examples(task, settings)
    select_examples(examples, settings)  # --sample and --stratify mistakes, before a pull
    warning = invalid_data_warning(dataset)
    if warning is not None:
        warn(warning)
    check_variants_ready(model_specs)
    models = [model_under_test(spec) for spec in model_specs]
    tuning = mixed_tuning_warning(models)
    if tuning is not None:
        warn(tuning)
    request = RunRequest(
        settings, models, task, examples, dataset, kind or GreedyRun(), resume, device_name
    )
    return execute(request, environment)
