"""The examples a run decodes (runner/subset.py): `--limit`, or a seeded `--sample` spread
evenly over a group with `--stratify`; mistakes in the options are one-line errors."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.runfolder.records import DatasetSample, RunSettings
from edgebench.runner.subset import group_keys, sample_examples, select_examples, spread
from edgebench.tasks.base import Example


def ex(index: int, depth: int, domain: str = "movie") -> Example:
    return Example(
        id=f"r{index:03d}",
        text="t",
        schema_id=f"r{index:03d}",
        schema={"type": "object"},
        expected={},
        groups={"depth": str(depth), "domain": domain},
    )


def by_depth(counts: dict[int, int]) -> list[Example]:
    """`counts[depth]` examples per depth, ordered by depth like the public file."""
    labels = [depth for depth, count in counts.items() for _ in range(count)]
    return [ex(i, depth, "movie" if i % 2 else "plant") for i, depth in enumerate(labels)]


def depths(examples: list[Example]) -> dict[str, int]:
    return dict(Counter(e.groups["depth"] for e in examples))


# --- the even spread --------------------------------------------------------------------


def test_spread_gives_each_group_its_share_and_the_remainder_in_order() -> None:
    assert spread({"a": 10, "b": 10, "c": 10}, 9) == {"a": 3, "b": 3, "c": 3}
    assert spread({"a": 10, "b": 10, "c": 10}, 11) == {"a": 4, "b": 4, "c": 3}
    assert spread({"a": 10, "b": 10, "c": 10}, 2) == {"a": 1, "b": 1, "c": 0}


def test_a_short_group_gives_all_it_has_and_the_rest_goes_to_the_others() -> None:
    assert spread({"a": 1, "b": 10, "c": 10}, 9) == {"a": 1, "b": 4, "c": 4}
    assert spread({"a": 1, "b": 2, "c": 10}, 9) == {"a": 1, "b": 2, "c": 6}
    assert spread({"a": 1, "b": 2, "c": 3}, 6) == {"a": 1, "b": 2, "c": 3}


# --- sampling ---------------------------------------------------------------------------


def test_stratified_sample_takes_the_same_number_per_group_in_dataset_order() -> None:
    rows = by_depth({3: 10, 4: 12, 5: 9, 6: 11, 7: 10})
    chosen = sample_examples(rows, 25, "depth", seed=0)
    assert depths(chosen) == {"3": 5, "4": 5, "5": 5, "6": 5, "7": 5}
    positions = [rows.index(e) for e in chosen]
    assert positions == sorted(positions)  # the dataset's order is kept
    assert chosen == sample_examples(rows, 25, "depth", seed=0)  # the seed decides
    assert chosen != sample_examples(rows, 25, "depth", seed=1)
    # a remainder goes to the first depths; a short depth gives all it has
    assert depths(sample_examples(rows, 27, "depth", 0)) == {"3": 6, "4": 6, "5": 5, "6": 5, "7": 5}
    short = by_depth({3: 10, 4: 2, 5: 10})
    assert depths(sample_examples(short, 12, "depth", 0)) == {"3": 5, "4": 2, "5": 5}


def test_numeric_labels_are_ordered_by_value() -> None:
    rows = by_depth({10: 3, 9: 3, 8: 3})
    assert depths(sample_examples(rows, 2, "depth", 0)) == {"8": 1, "9": 1}


def test_uniform_sample_is_seeded_and_grows_by_adding() -> None:
    rows = by_depth({3: 30, 4: 30})
    small = sample_examples(rows, 10, None, seed=7)
    large = sample_examples(rows, 20, None, seed=7)
    assert len(small) == 10 and {e.id for e in small} <= {e.id for e in large}
    assert [e.id for e in small] == sorted(e.id for e in small)
    assert small != sample_examples(rows, 10, None, seed=8)
    assert len(sample_examples(rows, 60, None, seed=7)) == 60


def test_the_draw_depends_on_seed_and_id_only() -> None:
    """Another order of the same rows picks the same ids (no position enters the draw)."""
    rows = by_depth({3: 8, 4: 8})
    ids = {e.id for e in sample_examples(rows, 6, "depth", 3)}
    assert {e.id for e in sample_examples(rows[::-1], 6, "depth", 3)} == ids


# --- select_examples: the options together, and mistakes -----------------------------------


def select(rows: list[Example], **settings: Any) -> tuple[list[Example], DatasetSample | None]:
    return select_examples(rows, RunSettings(**settings))


def test_limit_sample_and_neither() -> None:
    rows = by_depth({3: 4, 4: 4})
    assert select(rows) == (rows, None)
    assert select(rows, limit=3) == (rows[:3], None)
    chosen, record = select(rows, sample=4, stratify="depth", seed=2)
    assert record == DatasetSample(4, "depth", 2, [e.id for e in chosen])
    assert depths(chosen) == {"3": 2, "4": 2}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"sample": 0}, "--sample: 0 is below the minimum of 1"),
        ({"sample": -3}, "--sample: -3 is below the minimum of 1"),
        ({"sample": 9}, "--sample 9: the dataset has only 8 examples"),
        (
            {"sample": 2, "stratify": "size"},
            "--stratify size: the dataset has no such group (its groups: depth, domain)",
        ),
        ({"stratify": "depth"}, "--stratify depth: give the sample size with --sample N"),
        ({"sample": 2, "limit": 2}, "--limit and --sample exclude each other: give one of them"),
    ],
)
def test_mistakes_are_one_line_errors(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError) as error:
        select(by_depth({3: 4, 4: 4}), **settings)
    assert str(error.value) == message


def test_an_example_without_the_group_is_named() -> None:
    rows = [*by_depth({3: 2}), Example("odd", "t", "s", {"type": "object"}, {}, {"domain": "x"})]
    assert group_keys(rows) == ["depth", "domain"]
    with pytest.raises(UserError, match="--stratify depth: example 'odd' has no depth group"):
        select(rows, sample=2, stratify="depth")
