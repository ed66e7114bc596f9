"""What `engine.execute` is asked to run (`RunRequest`) and the world it runs in
(`RunEnvironment`): workers, progress, clocks, power, heat and CPU times. The environment's
defaults are the real machine's, so a library caller passes only what it changes; tests
pass fakes through it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from edgebench.runfolder.records import DatasetRecord, RunSettings, SampleRecord
from edgebench.runner.cooling import Waits
from edgebench.runner.fidelity import FidelityFactory
from edgebench.runner.jobs import GreedyRun, RunKind
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.timeline import INTERVAL_S, HeatReader
from edgebench.runner.workers import WorkerFactory
from edgebench.system.cpu_share import CpuTimes
from edgebench.system.heat import heat_sample
from edgebench.system.power import PowerChoice
from edgebench.tasks.base import Example, PromptingTask


class Progress(Protocol):
    def start(self, total: int, description: str, run_left: int) -> None:
        """An arm of `total` jobs begins; `run_left` jobs are left in the run, its own
        included."""

    def advance(self, sample: SampleRecord) -> None: ...
    def step(self, stats: str) -> None:
        """One example of the fidelity phase done; `stats`: its running figures."""

    def note(self, message: str) -> None: ...
    def stop(self) -> None: ...


@dataclass(frozen=True)
class RunRequest:
    """One run: the examples of `dataset` the settings select (all, the first `--limit`,
    or a `--sample`) through each model, once per constraint mode, as the run `kind`
    says (default: every example once, greedily). With `resume`, `settings.out` is an
    earlier run of the same models, dataset and settings. `device_name`
    (`--device-name`, checked) names the device in its identity (None:
    $EDGEBENCH_DEVICE_NAME, else the hostname)."""

    settings: RunSettings
    models: list[ModelUnderTest]
    task: PromptingTask
    dataset: list[Example]  # the whole dataset: it sizes the token budget
    dataset_record: DatasetRecord
    kind: RunKind = field(default_factory=GreedyRun)
    resume: bool = False
    device_name: str | None = None


@dataclass(frozen=True)
class RunEnvironment:
    """Where a run gets its workers, shows its progress and reads the machine; every
    default is the real one.

    `worker_factory`: each (model, mode)'s worker (None: a worker process of the model's
    backend). `progress`: the arms' and fidelity phase's progress (None: nothing shown).
    `waits`: the clock, sleep and thermometer of --delay and --wait-cool. `power`: the
    power source the timeline polls every `timeline_interval` seconds (None: chosen from
    the settings), with `heat` (temperature, clocks, throttling). `fidelity_factory`:
    teacher forcing for the fidelity phase (None: a worker process per variant).
    `cpu_times`: makes the source of CPU times each arm and the timeline read (None:
    `engine.CPU_TIMES`, psutil)."""

    worker_factory: WorkerFactory | None = None
    progress: Progress | None = None
    waits: Waits = field(default_factory=Waits)
    power: PowerChoice | None = None
    timeline_interval: float = INTERVAL_S
    heat: HeatReader = heat_sample
    fidelity_factory: FidelityFactory | None = None
    cpu_times: Callable[[], CpuTimes] | None = None
