"""benchmarks/openvino_parity.py's own logic: cutting a sequence at its end token, what
the comparison against the reference counts, the reference's cache (what a rerun takes
from it, what makes it decode again), the rows it prints and its arguments. The runtimes
are measured by running the benchmark, not here."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.scripts import load_script

EOG = frozenset({2, 9})


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("benchmarks/openvino_parity.py")


def test_a_sequence_is_cut_after_its_first_end_token(bench: ModuleType) -> None:
    assert bench.cut_at_end([5, 6, 9, 7, 2], EOG) == [5, 6, 9]
    assert bench.cut_at_end([2, 5], EOG) == [2]
    assert bench.cut_at_end([5, 6, 7], EOG) == [5, 6, 7]
    assert bench.cut_at_end([], EOG) == []


def test_identical_sequences_agree_on_every_reference_position(bench: ModuleType) -> None:
    ref = [[1, 2], [3, 4, 5]]
    parity = bench.compare(ref, [list(s) for s in ref])
    assert (parity.prompts, parity.identical) == (2, 2)
    assert parity.mean_prefix == 2.5
    assert parity.divergences == ()
    assert (parity.agreed, parity.compared, parity.top1) == (5, 5, 1.0)


def test_agreement_counts_the_common_prefix_and_one_step_at_the_divergence(
    bench: ModuleType,
) -> None:
    ref = [[1, 2, 3, 4], [5, 6, 7], [8, 9]]
    cand = [[1, 2, 0, 4], [5, 6, 7], [0, 9]]
    parity = bench.compare(ref, cand)
    assert parity.identical == 1
    assert parity.divergences == (2, 0)
    assert parity.mean_prefix == pytest.approx((2 + 3 + 0) / 3)
    # Positions after a divergence are not compared: the contexts differ there.
    assert (parity.agreed, parity.compared) == (5, 5 + 2)
    assert parity.top1 == pytest.approx(5 / 7)


def test_a_candidate_that_ends_early_diverges_where_it_stopped(bench: ModuleType) -> None:
    parity = bench.compare([[1, 2, 3, 4]], [[1, 2, 2]])
    assert parity.divergences == (2,)
    assert (parity.agreed, parity.compared) == (2, 3)


def test_a_candidate_that_goes_on_past_the_reference_adds_no_reference_position(
    bench: ModuleType,
) -> None:
    parity = bench.compare([[1, 2]], [[1, 2, 3]])
    assert parity.identical == 0
    assert parity.divergences == (2,)
    assert (parity.agreed, parity.compared) == (2, 2)


def test_nothing_to_compare_is_nan_and_unequal_prompt_counts_refuse(bench: ModuleType) -> None:
    assert math.isnan(bench.compare([], []).top1)
    with pytest.raises(ValueError, match="2 reference sequences, 1 candidates"):
        bench.compare([[1], [2]], [[1]])


# -- the reference's cache --------------------------------------------------------------
IDENTITY = {"model_sha256": "ab" * 32, "steps": 4, "torch": "2.0", "transformers": "4.0"}


class FakeReference:
    """A reference that loads once and answers each prompt with its ids reversed."""

    def __init__(self) -> None:
        self.loads = 0
        self.decoded: list[list[int]] = []

    def load(self) -> Callable[[list[int]], list[int]]:
        self.loads += 1

        def greedy(ids: list[int]) -> list[int]:
            self.decoded.append(ids)
            return ids[::-1]

        return greedy


def reference(
    bench: ModuleType, path: Path, prompts: list[list[int]], fresh: bool = False, **identity: Any
) -> tuple[list[list[int]], Any, FakeReference]:
    fake = FakeReference()
    cache = bench.ReferenceCache.open(path, {**IDENTITY, **identity})
    ids, run = bench.reference_ids(prompts, cache, fake.load, fresh)
    return ids, run, fake


def test_a_rerun_takes_the_reference_from_the_cache_without_loading_it(
    bench: ModuleType, tmp_path: Path
) -> None:
    path = tmp_path / "cache" / "reference.json"
    first, run, fake = reference(bench, path, [[1, 2], [3, 4, 5]])
    assert first == [[2, 1], [5, 4, 3]]
    assert (run.cached, run.decoded, fake.loads) == (0, 2, 1)
    again, run, fake = reference(bench, path, [[1, 2], [3, 4, 5]])
    assert again == first
    assert (run.cached, run.decoded, fake.loads, run.load_s) == (2, 0, 0, 0.0)


def test_only_the_prompts_the_cache_lacks_are_decoded(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "reference.json"
    reference(bench, path, [[1, 2]])
    ids, run, fake = reference(bench, path, [[1, 2], [7, 8]])
    assert ids == [[2, 1], [8, 7]]
    assert fake.decoded == [[7, 8]]
    assert (run.cached, run.decoded) == (1, 1)


@pytest.mark.parametrize(
    "changed", [{"steps": 8}, {"model_sha256": "cd" * 32}, {"torch": "2.1"}, {"transformers": "5"}]
)
def test_another_model_step_count_or_library_version_decodes_again(
    bench: ModuleType, tmp_path: Path, changed: dict[str, Any]
) -> None:
    path = tmp_path / "reference.json"
    reference(bench, path, [[1, 2]])
    _, run, fake = reference(bench, path, [[1, 2]], **changed)
    assert (run.cached, run.decoded, fake.loads) == (0, 1, 1)
    # both entries are kept: going back to the first identity decodes nothing
    _, run, _ = reference(bench, path, [[1, 2]])
    assert run.cached == 1


def test_fresh_decodes_every_prompt_again(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "reference.json"
    reference(bench, path, [[1, 2]])
    _, run, fake = reference(bench, path, [[1, 2]], fresh=True)
    assert (run.cached, run.decoded, fake.decoded) == (0, 1, [[1, 2]])


def test_each_prompt_is_saved_as_it_is_decoded(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "reference.json"
    cache = bench.ReferenceCache.open(path, IDENTITY)

    def load() -> Callable[[list[int]], list[int]]:
        def greedy(ids: list[int]) -> list[int]:
            if ids == [9]:
                raise KeyboardInterrupt  # the run is stopped on the second prompt
            return [0]

        return greedy

    with pytest.raises(KeyboardInterrupt):
        bench.reference_ids([[1], [9]], cache, load, False)
    entries = json.loads(path.read_text())["entries"]
    assert [e["ids"] for e in entries.values()] == [[0]]
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize("text", ["{not json", '{"entries": []}', '{"other": 1}'])
def test_an_unreadable_cache_is_said_and_decoded_anew(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "reference.json"
    path.write_text(text)
    ids, run, _ = reference(bench, path, [[1, 2]])
    assert (ids, run.decoded) == ([[2, 1]], 1)
    assert "unreadable" in capsys.readouterr().err
    assert len(json.loads(path.read_text())["entries"]) == 1


def test_a_damaged_entry_is_decoded_again(bench: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "reference.json"
    reference(bench, path, [[1, 2]])
    data = json.loads(path.read_text())
    for entry in data["entries"].values():
        entry["ids"] = "lost"
    path.write_text(json.dumps(data))
    _, run, _ = reference(bench, path, [[1, 2]])
    assert run.decoded == 1


# -- the rows and the command line --------------------------------------------------------
def test_a_row_holds_the_comparison_the_tokenizer_and_the_wall_time(bench: ModuleType) -> None:
    parity = bench.compare([[1, 2, 3], [4]], [[1, 0, 3], [4]])
    line = bench.row("int4", parity, "2/2", 12.4)
    assert line == "| int4 | 1/2 | 1.0 | 1 | 0.667 (2/3) | 2/2 | 12 |"
    assert line.count("|") == bench.HEADER.splitlines()[0].count("|")


def test_a_failing_candidate_is_a_row_of_its_own(bench: ModuleType) -> None:
    def make() -> Callable[[list[int]], list[int]]:
        raise RuntimeError("model not found: /x\nmore")

    line = bench.candidate_row(make, ["p"], [[1]], [[2]], EOG, "fp16")
    assert line.startswith("| fp16 | failed: RuntimeError: model not found: /x |")
    assert line.count("|") == bench.HEADER.splitlines()[0].count("|")


def test_a_candidate_row_cuts_its_sequences_at_the_end_token(bench: ModuleType) -> None:
    line = bench.candidate_row(lambda: lambda ids: [5, 9, 6], ["p"], [[1]], [[5, 9]], EOG, "c")
    assert line.startswith("| c | 1/1 | 2.0 | - | 1.000 (2/2) | - |")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--prompts", "0"], "--prompts must be at least 1, not 0"),
        (["--steps", "-1"], "--steps must be at least 1, not -1"),
        (["--threads", "0"], "--threads must be at least 1, not 0"),
        (["--skip", "int4,fp32"], "--skip: unknown fp32 (known: fp16, int4, gguf, llama.cpp)"),
    ],
)
def test_bad_arguments_are_one_line(bench: ModuleType, argv: list[str], message: str) -> None:
    with pytest.raises(SystemExit, match=f"^{re.escape(message)}$"):
        bench.parse_args(argv)


def test_the_reference_cache_defaults_to_edgebench_s_cache(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path))
    args = bench.parse_args(["--skip", "fp16,gguf"])
    assert args.reference_cache == tmp_path / "openvino_parity_reference.json"
    assert args.skip == {"fp16", "gguf"}
    assert (args.prompts, args.steps, args.fresh_reference) == (10, 64, False)
    assert bench.parse_args(["--reference-cache", "r.json"]).reference_cache == Path("r.json")
