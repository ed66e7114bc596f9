"""The cells a plan expands to, each one `edgebench run` (or `bench`) of its own.

A run cell is model variant x task x constraint mode x threads x repetition, with an id
that is readable, deterministic and safe as a folder name:
`smollm2-135m-instruct@Q4_K_M.edgejson.mask.t2.r1`. A bench cell is one model over the
[bench] thread counts: `smollm2-135m-instruct@Q4_K_M.bench`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

from edgebench.models.hashing import hash_file
from edgebench.plan.file import BENCH_LISTS, COPING_OPTIONS, Plan, PlanModel, TaskEntry

RUNS, BENCH = "runs", "bench"
CellKind = Literal["run", "bench"]


@dataclass(frozen=True)
class Cell:
    id: str
    kind: CellKind
    model: PlanModel
    # what the cell measures, as JSON: a cell of the same id must keep it (`state.py`)
    settings: dict[str, Any]
    args: tuple[str, ...]  # `edgebench ARGS` without the output (`command_for` adds it)
    coping: tuple[str, ...] = ()  # options `--resume` takes too (timeouts, crash limit)

    def output(self, root: Path) -> Path:
        """The run folder (runs/<id>/) or bench file (bench/<id>.json) under `root`."""
        return root / RUNS / self.id if self.kind == "run" else root / BENCH / f"{self.id}.json"


class Cells(Sequence[Cell]):
    """Every cell of a plan, in the order they run: per model, task, mode, threads and
    repetition; then the bench cells. Built when asked for, one at a time: the count is
    computed (`plan.file.cell_count`, bounded by MAX_CELLS when the plan is read), and
    each dataset is hashed once, not once per cell."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self._axes = (
            plan.models,
            plan.tasks,
            plan.constraints,
            plan.threads,
            range(1, plan.repetitions + 1),
        )
        self._runs = math.prod(len(axis) for axis in self._axes)
        self._benches = plan.bench.models if plan.bench is not None else ()
        self._identities: dict[Path, str] = {}

    def __len__(self) -> int:
        return self._runs + len(self._benches)

    @overload
    def __getitem__(self, index: int) -> Cell: ...

    @overload
    def __getitem__(self, index: slice) -> list[Cell]: ...

    def __getitem__(self, index: int | slice) -> Cell | list[Cell]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        if index >= self._runs:
            bench = self.plan.bench
            assert bench is not None
            return bench_cell(self._benches[index - self._runs], bench.threads, bench.options)
        picks: list[Any] = []
        for axis in reversed(self._axes):  # the last axis varies fastest
            index, position = divmod(index, len(axis))
            picks.append(axis[position])
        model, task, mode, threads, repetition = reversed(picks)
        return run_cell(model, task, mode, threads, repetition, self._identity(task.dataset))

    def __iter__(self) -> Iterator[Cell]:
        return (self[i] for i in range(len(self)))

    def _identity(self, path: Path | None) -> str | None:
        if path is None:
            return None
        if path not in self._identities:
            self._identities[path] = _identity(path)
        return self._identities[path]


def expand(plan: Plan) -> Cells:
    """Every cell of the plan (see `Cells`)."""
    return Cells(plan)


def run_cell(
    model: PlanModel,
    task: TaskEntry,
    mode: str,
    threads: int,
    repetition: int,
    dataset: str | None = None,
) -> Cell:
    """One run cell; `dataset`: the dataset's identity when known (`_identity`)."""
    args = ["run", "--model", _escaped(model.spec), "--task", task.task]
    args += ["--constraint", mode, "--threads", str(threads)]
    if task.dataset is not None:
        args += ["--dataset", str(task.dataset)]
    if task.schemas is not None:
        args += ["--schemas", str(task.schemas)]
    measured = {k: v for k, v in task.options.items() if k not in COPING_OPTIONS}
    coping = {k: v for k, v in task.options.items() if k in COPING_OPTIONS}
    settings = {
        "model": model.spec,
        "task": task.task,
        "dataset": dataset if dataset is not None else _identity(task.dataset),
        "schemas": task.schemas.name if task.schemas else None,
        "constraint": mode,
        "threads": threads,
        "repetition": repetition,
        **measured,
    }
    return Cell(
        id=f"{model.label}.{task.label}.{mode}.t{threads}.r{repetition}",
        kind="run",
        model=model,
        settings=settings,
        args=(*args, *option_args(measured)),
        coping=option_args(coping),
    )


def bench_cell(model: PlanModel, threads: tuple[int, ...], options: dict[str, Any]) -> Cell:
    args = ["bench", "--model", _escaped(model.spec), "--threads", _joined(threads)]
    settings = {"model": model.spec, "threads": list(threads), **options}
    return Cell(
        id=f"{model.label}.bench",
        kind="bench",
        model=model,
        settings=settings,
        args=(*args, *option_args(options)),
    )


def option_args(options: dict[str, Any]) -> tuple[str, ...]:
    """{"max_tokens": 64, "warmup": False} -> ("--max-tokens", "64", "--no-warmup")."""
    args: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            # `--ignore-memory-check` is a plain flag; the others come in pairs
            if value or key != "ignore_memory_check":
                args.append(flag if value else f"--no-{key.replace('_', '-')}")
        elif key in BENCH_LISTS:
            args += [flag, _joined(value)]
        else:
            args += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return tuple(args)


def _joined(values: Any) -> str:
    return ",".join(str(v) for v in values)


def _escaped(spec: str) -> str:
    return spec.replace(",", "\\,")  # `--model` splits at commas; one model is one value


def _identity(path: Path | None) -> str | None:
    """A dataset as a cell records it: its name and sha256, so a file edited under the
    same cell id is noticed wherever the plan folder moved (a folder, such as
    JSONSchemaBench's, by its name)."""
    if path is None:
        return None
    return path.name if path.is_dir() else f"{path.name} sha256:{hash_file(path)}"
