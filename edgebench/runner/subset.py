"""Which examples a run decodes: all of them, the first `--limit`, or a seeded `--sample`.

`--sample N --stratify KEY` spreads N examples evenly over the groups of `Example.groups[KEY]`
(depth, difficulty, domain for deepjson; complexity, schema for edgejson): each group gets
N // groups, the remainder goes one each to the groups in order (labels sorted, numbers by
value: depth 3 before 10), and a group with too few examples gives all it has while the
rest is spread the same way over the others. Without `--stratify` the N are drawn from the
whole dataset. Within a group (or the dataset) each example's draw is the sha256 of the
seed and its id, and the lowest draws are taken: the same seed and file give the same ids
on any machine and Python, and a larger N only adds examples. The chosen examples keep
their dataset order.

The subset decides only what is decoded: token budgets are sized from the whole dataset
(runner/engine.py), so a subset measures the same thing as the full run. Once the prompts
are counted, the engine draws a `--sample` again from the rows that fit the context, with
the same rule (`sample_examples`).
`--limit` and `--sample` exclude each other.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

from edgebench.errors import UserError
from edgebench.runfolder.records import DatasetSample, RunSettings
from edgebench.tasks.base import Example


def _label_order(label: str) -> tuple[int, float, str]:
    """Numbers by value before other labels, those alphabetically."""
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def _draw(seed: int, example: Example) -> str:
    return hashlib.sha256(f"{seed}\0{example.id}".encode()).hexdigest()


def _lowest_draws(indices: list[int], k: int, examples: list[Example], seed: int) -> list[int]:
    return sorted(indices, key=lambda i: _draw(seed, examples[i]))[:k]


def spread(sizes: dict[str, int], n: int) -> dict[str, int]:
    """How many examples each group gives (groups in their fixed order, n <= the total):
    an even share, the remainder one each to the first groups, a group short of its share
    giving all it has and the rest spread again over the groups with examples left."""
    quota = dict.fromkeys(sizes, 0)
    left = n
    while left > 0:
        open_groups = [group for group in sizes if quota[group] < sizes[group]]
        share, extra = divmod(left, len(open_groups))
        for position, group in enumerate(open_groups):
            give = min(sizes[group] - quota[group], share + (1 if position < extra else 0))
            quota[group] += give
            left -= give
    return quota


def group_keys(examples: list[Example]) -> list[str]:
    """The group keys the dataset's examples have, sorted."""
    return sorted({key for example in examples for key in example.groups})


def _groups(examples: list[Example], key: str) -> dict[str, list[int]]:
    """Example indices per label of `key`, the labels in their fixed order."""
    if key not in group_keys(examples):
        known = ", ".join(group_keys(examples)) or "none"
        raise UserError(f"--stratify {key}: the dataset has no such group (its groups: {known})")
    members: dict[str, list[int]] = defaultdict(list)
    for index, example in enumerate(examples):
        label = example.groups.get(key)
        if label is None:
            raise UserError(f"--stratify {key}: example '{example.id}' has no {key} group")
        members[label].append(index)
    return {label: members[label] for label in sorted(members, key=_label_order)}


def sample_examples(
    examples: list[Example], n: int, stratify: str | None, seed: int
) -> list[Example]:
    """`n` examples, spread evenly over the groups of `stratify` (None: drawn from all),
    in dataset order (see the module docstring)."""
    if n < 1:
        raise UserError(f"--sample: {n} is below the minimum of 1")
    if n > len(examples):
        raise UserError(f"--sample {n}: the dataset has only {len(examples)} examples")
    if stratify is None:
        chosen = _lowest_draws(list(range(len(examples))), n, examples, seed)
    else:
        groups = _groups(examples, stratify)
        quota = spread({label: len(members) for label, members in groups.items()}, n)
        chosen = [
            index
            for label, members in groups.items()
            for index in _lowest_draws(members, quota[label], examples, seed)
        ]
    return [examples[i] for i in sorted(chosen)]


def select_examples(
    dataset: list[Example], settings: RunSettings
) -> tuple[list[Example], DatasetSample | None]:
    """The examples the run decodes (`--limit`, `--sample`, or all) and, for a sample, its
    record for the manifest. Mistakes in the options are one-line errors."""
    if settings.stratify is not None and settings.sample is None:
        raise UserError(f"--stratify {settings.stratify}: give the sample size with --sample N")
    if settings.sample is None:
        return (dataset[: settings.limit] if settings.limit else dataset), None
    if settings.limit is not None:
        raise UserError("--limit and --sample exclude each other: give one of them")
    chosen = sample_examples(dataset, settings.sample, settings.stratify, settings.seed)
    record = DatasetSample(
        n=settings.sample,
        stratify=settings.stratify,
        seed=settings.seed,
        ids=[example.id for example in chosen],
    )
    return chosen, record


def dataset_positions(dataset: list[Example], examples: list[Example]) -> list[int]:
    """Each chosen example's index in `dataset` (they are its own objects, in its order)."""
    index = {id(example): position for position, example in enumerate(dataset)}
    return [index[id(example)] for example in examples]
