"""A run's plan before any arm runs (the engine's `plan` step): what it decodes and the
prompts (`Selection`), each model's token counts and budget (`Counted`), a `--sample`
drawn from the examples every model can fit, and per model its context size, decoding
plan, memory estimate and jobs. Nothing here writes or starts a worker: the engine
holds the folder, the manifest and the workers, and asks these for the figures."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from edgebench.backends.answer_end import LoopRule
from edgebench.constraints import FREE_MODES, closes
from edgebench.errors import UserError
from edgebench.runfolder.records import (
    AnswerEndPlan,
    DecodingPlan,
    LoopRuleRecord,
    RunSettings,
)
from edgebench.runner.budget import (
    ContextPlan,
    TokenBudget,
    context_limit,
    misfit,
    plan_budget,
    plan_context,
    reference_text,
)
from edgebench.runner.jobs import Job
from edgebench.runner.prefixes import grouped_by_prefix, shared_prefixes
from edgebench.runner.preflight import MemoryEstimate, available_memory_bytes, estimate_memory
from edgebench.runner.request import RunRequest
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.subset import dataset_positions, sample_examples
from edgebench.runner.workers import Worker
from edgebench.tasks.base import Example

STOP_APPLIES_TO = "none (grammars end the JSON themselves)"


def answer_end_plan(settings: RunSettings) -> AnswerEndPlan:
    """The run's answer-ending policies, as the manifest records them."""
    return AnswerEndPlan(
        stop_at_json=settings.stop_at_json,
        stop_at_json_applies_to=list(FREE_MODES),
        loop_detection=LoopRuleRecord(**asdict(LoopRule())) if settings.loop_detection else None,
        close_arms=[mode for mode in settings.constraints if closes(mode)],
        close_tokens=settings.close_tokens,
    )


@dataclass(frozen=True)
class Selection:
    """The examples a run decodes, and every prompt per model (rendered for the whole
    dataset, which sizes the token budget)."""

    dataset: list[Example]  # the whole dataset
    examples: list[Example]  # those the run decodes
    positions: list[int]  # each run example's index in the dataset
    dataset_prompts: list[list[str]]  # per model, per dataset example
    prompts: list[list[str]]  # per model, per run example

    @classmethod
    def of(
        cls, dataset: list[Example], examples: list[Example], dataset_prompts: list[list[str]]
    ) -> Selection:
        positions = dataset_positions(dataset, examples)
        prompts = [[whole[i] for i in positions] for whole in dataset_prompts]
        return cls(dataset, examples, positions, dataset_prompts, prompts)


@dataclass(frozen=True)
class Counted:
    """One model's token counts of the whole dataset's prompts, and the budgets."""

    counts: list[int]  # per dataset example: its prompt's tokens
    budget: TokenBudget


@dataclass
class ModelJobs:
    """What every arm of one model shares: context size, stop strings, the jobs."""

    model: ModelUnderTest
    n_ctx: int
    stop: tuple[str, ...]
    jobs: list[Job]


@dataclass(frozen=True)
class Planned:
    """One model's plan: what the manifest records (context, decoding, memory
    estimate) and what its jobs are made from."""

    context: ContextPlan
    decoding: DecodingPlan
    estimate: MemoryEstimate
    stop: tuple[str, ...]


def unfit_note(dataset: list[Example], unfit: dict[int, str], stratify: str | None) -> str:
    """The line saying how many examples a `--sample` could not draw from, and why."""
    first = next(iter(unfit))
    note = (
        f"--sample: {len(unfit)} of {len(dataset)} examples cannot fit the context and are "
        f"not drawn from (the first, '{dataset[first].id}': {unfit[first]}; every id in "
        "manifest.json)"
    )
    if stratify is not None:
        kept = {ex.groups.get(stratify) for i, ex in enumerate(dataset) if i not in unfit}
        lost = sorted({ex.groups.get(stratify) for ex in dataset} - kept, key=str)
        if lost:
            note += f"; no example of {stratify} {', '.join(map(str, lost))} fits"
    return note


@dataclass(frozen=True)
class Planner:
    """The figures of one run's plan, from its request."""

    request: RunRequest

    @property
    def settings(self) -> RunSettings:
        return self.request.settings

    def count(self, worker: Worker, chosen: Selection, position: int) -> Counted:
        """The tokens of every prompt of the dataset, and the budgets its expected
        answers give (the whole dataset's, whatever the run decodes)."""
        whole = chosen.dataset_prompts[position]
        counts = worker.count_tokens(whole + [reference_text(ex) for ex in chosen.dataset])
        budget = plan_budget(self.settings.max_tokens, chosen.dataset, counts[len(whole) :])
        return Counted(counts[: len(whole)], budget)

    def closing_room(self) -> int:
        """What a `+close` arm may add after the budget (0 when the run has none)."""
        return self.settings.close_tokens if answer_end_plan(self.settings).close_arms else 0

    def draw(self, chosen: Selection, counted: list[Counted]) -> tuple[Selection, dict[int, str]]:
        """`--sample`: drawn from the examples every arm of every model can run (prompt,
        budget and any closing room within the context limit), so the sample is scored
        whole; with the dataset index of each example that cannot fit, and why."""
        room, settings, dataset = self.closing_room(), self.settings, chosen.dataset
        unfit: dict[int, str] = {}  # dataset index -> why it cannot fit
        for position, model in enumerate(self.request.models):
            limit, source = context_limit(settings.n_ctx, settings.max_context, model.n_ctx_train)
            counts, budget = counted[position].counts, counted[position].budget
            for index, example in enumerate(dataset):
                reason = misfit(counts[index], budget.for_example(example), room, limit, source)
                if reason is not None and index not in unfit:
                    unfit[index] = reason
        unfit = dict(sorted(unfit.items()))  # in dataset order
        fitting = [ex for i, ex in enumerate(dataset) if i not in unfit]
        n = settings.sample
        assert n is not None
        if n > len(fitting):
            first = next(iter(unfit))
            raise UserError(
                f"--sample {n}: only {len(fitting)} of the {len(dataset)} examples fit "
                f"the context (example '{dataset[first].id}': {unfit[first]}); give a "
                "smaller --sample or a larger --max-context"
            )
        drawn = sample_examples(fitting, n, settings.stratify, settings.seed)
        return Selection.of(dataset, drawn, chosen.dataset_prompts), unfit

    def plan(self, position: int, counted: Counted, chosen: Selection) -> Planned:
        """Model `position`'s context size, decoding plan and memory estimate."""
        model, settings = self.request.models[position], self.settings
        stop = tuple(dict.fromkeys(model.prompt_format.stop + model.stop))
        budget = counted.budget
        context = plan_context(
            chosen.dataset,
            counted.counts,
            [budget.for_example(ex) for ex in chosen.dataset],
            n_ctx=settings.n_ctx,
            max_context=settings.max_context,
            n_ctx_train=model.n_ctx_train,
            run=chosen.positions,
            token_budget=budget,
            room=self.closing_room(),  # the `+close` arms' only
        )
        decoding = DecodingPlan(
            strategy=self.request.kind.strategy,  # type: ignore[arg-type]
            max_tokens=budget.largest(),
            max_tokens_rule=budget.rule,
            max_tokens_by_schema=budget.by_schema,
            stop=list(stop),
            stop_applies_to=STOP_APPLIES_TO,
            constraints=list(settings.constraints),
            keyword_guard=settings.guard,
            skipped_examples=len(context.skipped),
            answer_end=answer_end_plan(settings),
            prefix_cache=settings.prefix_cache,
            close_skipped_examples=len(context.close_skipped),
        )
        estimate = estimate_memory(model, context.n_ctx, available_memory_bytes())
        return Planned(context, decoding, estimate, stop)

    def jobs(
        self, position: int, counted: Counted, chosen: Selection, planned: Planned
    ) -> ModelJobs:
        """Model `position`'s jobs as the run kind makes them, with their shared prompt
        prefixes under --prefix-cache."""
        model, context = self.request.models[position], planned.context
        jobs = [
            Job(
                i,
                ex,
                prompt,
                counted.budget.for_example(ex),
                context.skipped.get(i),
                close_skip_reason=context.close_skipped.get(i),
            )
            for i, (ex, prompt) in enumerate(
                zip(chosen.examples, chosen.prompts[position], strict=True)
            )
        ]
        if self.settings.prefix_cache:
            prompt_tokens = [counted.counts[i] for i in chosen.positions]
            jobs = self._with_prefixes(position, jobs, prompt_tokens, chosen)
        return ModelJobs(model, context.n_ctx, planned.stop, self.request.kind.jobs(jobs))

    def _with_prefixes(
        self, position: int, planned: list[Job], prompt_tokens: list[int], chosen: Selection
    ) -> list[Job]:
        """The jobs with their shared prompt prefix, the examples of one prefix in a row."""
        prefixes = shared_prefixes(
            self.request.models[position].prompt_format,
            self.request.task,
            chosen.examples,
            chosen.prompts[position],
            self.settings.prompt,
        )
        order = grouped_by_prefix(list(range(len(planned))), prefixes, prompt_tokens)
        return [replace(planned[i], prefix=prefixes[i]) for i in order]
