"""What a run decodes: jobs, one per (example[, draw]) that every arm of a model runs.

A plain run decodes every example once, greedily. A consistency run decodes every
example N times per temperature, each with its own seed; its jobs carry their draw
(`Sampling`), and the run engine treats them like any other (resume, timeouts, crashes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from edgebench.errors import UserError
from edgebench.metrics import get_family
from edgebench.runfolder.records import ConsistencyPlan, JobKey, Sampling, job_key
from edgebench.tasks.base import Example


@dataclass(frozen=True)
class Job:
    """One example as every arm of a model decodes it: the rendered prompt, its token
    budget, and for a sampled generation its draw."""

    index: int  # position among the run's examples
    example: Example
    prompt: str
    max_tokens: int
    skip_reason: str | None = None  # set: does not fit the context, recorded undecoded
    sampling: Sampling | None = None  # None: greedy
    prefix: str | None = None  # the prompt's shared prefix, for the prefix cache
    # set: fits only without the closing room, so the `+close` arms skip it (the others run it)
    close_skip_reason: str | None = None

    @property
    def key(self) -> JobKey:
        """Unique within an arm; the same as the key of the job's sample record."""
        return job_key(self.example.id, self.sampling)


class RunKind(Protocol):
    """How a kind of run turns the planned examples (one greedy job each) into jobs."""

    name: str  # the manifest's `kind`
    strategy: str  # the decoding plan's `strategy`

    def jobs(self, planned: list[Job]) -> list[Job]: ...

    def plan_record(self) -> ConsistencyPlan | None: ...


class GreedyRun:
    """`edgebench run`: every example once, greedily."""

    name = "run"
    strategy = "greedy"

    def jobs(self, planned: list[Job]) -> list[Job]:
        return planned

    def plan_record(self) -> ConsistencyPlan | None:
        return None


SAMPLER = "temperature + dist(seed) over the whole vocabulary (no top-k, top-p or min-p)"


@dataclass(frozen=True)
class ConsistencyRun:
    """`edgebench consistency`: for every temperature and example, `samples` generations
    with seeds seed, seed+1, ..., seed+samples-1 (temperature, then example, then draw)."""

    samples: int = 5
    temperatures: tuple[float, ...] = (0.2, 0.5, 0.8)
    seed: int = 0
    sted_parameters: tuple[tuple[str, float], ...] = ()

    name = "consistency"
    strategy = "sampling"

    def __post_init__(self) -> None:
        if self.samples < 2:
            raise UserError("--samples: at least 2 generations per prompt are needed to compare")
        if not self.temperatures:
            raise UserError("--temperatures: give at least one temperature")
        for t in self.temperatures:
            if not t > 0:
                raise UserError(f"--temperatures: {t} is not above 0 (0 would be greedy)")

    def seeds(self) -> list[int]:
        return [self.seed + i for i in range(self.samples)]

    def jobs(self, planned: list[Job]) -> list[Job]:
        return [
            replace(p, sampling=Sampling(t, seed, n))
            for t in self.temperatures
            for p in planned
            for n, seed in enumerate(self.seeds())
        ]

    def plan_record(self) -> ConsistencyPlan:
        return ConsistencyPlan(
            samples_per_prompt=self.samples,
            temperatures=list(self.temperatures),
            seed=self.seed,
            seeds=self.seeds(),
            sampler=SAMPLER,
            sted_parameters=dict(self.sted_parameters),
        )

    @classmethod
    def from_record(cls, plan: ConsistencyPlan) -> ConsistencyRun:
        """The run kind of a stored consistency run (`--resume`)."""
        return cls(
            plan.samples_per_prompt,
            tuple(plan.temperatures),
            plan.seed,
            tuple(plan.sted_parameters.items()),
        )


def sted_parameters(
    stored: Mapping[str, float], metric_params: Mapping[str, Mapping[str, Any]]
) -> dict[str, float]:
    """The STED parameters a consistency run compares its samples with: `stored` (the
    run's recorded ones; empty for the defaults) with `--metric-param sted.*` on top. No
    other family's parameters apply to a consistency run."""
    unknown = [name for name in metric_params if name != "sted"]
    if unknown:
        raise UserError(f"--metric-param: a consistency run uses only sted.*, not '{unknown[0]}'")
    return get_family("sted", {**stored, **metric_params.get("sted", {})}).parameters()
