"""benchmarks/mask_engines.py's own logic, with a fake engine: the teacher-forced walk (what
it times, where it stops and why) and the table it prints. The engines themselves are
measured by running the benchmark, not here."""

from __future__ import annotations

import json
from types import ModuleType

import numpy as np
import pytest

from tests.helpers.scripts import load_script


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("benchmarks/mask_engines.py")


class FakeWalker:
    """Allows every token but those in `refused`; records the calls."""

    def __init__(self, refused: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self.refused = refused
        self.calls: list[str] = []

    def start(self) -> None:
        self.calls.append("start")

    def prepare(self) -> None:
        self.calls.append("prepare")

    def mask(self) -> None:
        self.calls.append("mask")

    def allows(self, token: int) -> bool:
        return token not in self.refused

    def allowed_count(self) -> int:
        return 1000 - len(self.refused)

    def advance(self, token: int) -> None:
        self.calls.append(f"advance {token}")


EOS = 99


def test_a_walk_masks_every_token_and_the_end_and_advances_by_each_token(
    bench: ModuleType,
) -> None:
    walker, tally = FakeWalker(), bench.Tally()
    bench.walk(walker, [5, 6, 7], EOS, tally)
    assert walker.calls == [
        "start",
        *("prepare", "mask", "advance 5"),
        *("prepare", "mask", "advance 6"),
        *("prepare", "mask", "advance 7"),
        *("prepare", "mask"),  # the end: asked for, never advanced by
    ]
    assert (len(tally.mask_ns), len(tally.advance_ns), tally.walked) == (4, 3, 1)
    assert tally.allowed == [1000] * 4


def test_a_refused_token_stops_the_walk_says_where_and_counts_nothing(
    bench: ModuleType,
) -> None:
    walker, tally = FakeWalker(refused={6}), bench.Tally()
    with pytest.raises(bench.Refused, match=r"^token 1 \(6\) not allowed$"):
        bench.walk(walker, [5, 6, 7], EOS, tally)
    assert "advance 6" not in walker.calls
    assert (tally.mask_ns, tally.advance_ns, tally.allowed, tally.walked) == ([], [], [], 0)


def test_an_answer_the_engine_would_not_end_is_refused(bench: ModuleType) -> None:
    with pytest.raises(bench.Refused, match=r"^end-of-text not allowed$"):
        bench.walk(FakeWalker(refused={EOS}), [5], EOS, bench.Tally())


def test_a_warm_up_walk_records_nothing(bench: ModuleType) -> None:
    walker = FakeWalker()
    bench.walk(walker, [5], EOS, None)
    assert walker.calls.count("mask") == 2


def test_the_answer_is_one_line_with_the_schema_modes_separators(bench: ModuleType) -> None:
    text = bench.answer_text({"name": "Zoë", "tags": ["a", "b"], "n": 1})
    assert text == '{"name": "Zoë", "tags": ["a", "b"], "n": 1}'
    assert json.loads(text) == {"name": "Zoë", "tags": ["a", "b"], "n": 1}


def test_the_table_gives_percentiles_in_microseconds_and_dashes_for_nothing(
    bench: ModuleType,
) -> None:
    measured = bench.Tally(
        compile_ms=[1.0, 3.0, 2.0],
        again_ms=[0.004, 0.007, 0.006],
        mask_ns=[1_000 * v for v in range(1, 102)],  # 1..101 µs
        advance_ns=[500] * 100,
        allowed=[3, 40_000, 7],
        walked=3,
        rejected={"ex-9": "token 3 (12) not allowed"},
    )
    lines = bench.table([("xgrammar", "0.2.8", measured), ("gbnf", "x", bench.Tally())])
    assert lines[0].startswith("| engine | version | compile ms p50 (max) |")
    assert lines[2] == (
        "| xgrammar | 0.2.8 | 2.00 (3.00) | 0.006 | 3 | 1 | 101 | 51.0 | 100 | 51.0 | 0.500 "
        "| 7.00 (13,337) |"
    )
    assert lines[3] == "| gbnf | x | - (-) | - | 0 | 0 | 0 | - | - | - | - | - (-) |"


def test_popcount_counts_the_tokens_a_bitmask_allows(bench: ModuleType) -> None:
    words = np.array([0b101, -1, 0], dtype=np.int32)  # tokens 0 and 2, then all of 32-63
    assert bench.popcount(words) == 34


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "-"), (0.1234, "0.123"), (9.99, "9.99"), (47.3, "47.3"), (14_512.0, "14,512")],
)
def test_cells_keep_about_three_digits(bench: ModuleType, value: float | None, text: str) -> None:
    assert bench.cell(value) == text
