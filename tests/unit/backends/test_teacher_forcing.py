"""Teacher forcing of two models on the same tokens, with the fake logits model: which
positions are scored, and what a mismatched pair is told."""

from __future__ import annotations

import math

import numpy as np
import pytest

from edgebench.backends.fake import FakeLogits
from edgebench.backends.teacher_forcing import TeacherForcing
from edgebench.errors import UserError

HALF = [math.log(0.5), math.log(0.25), math.log(0.25)]
SWAPPED = [math.log(0.25), math.log(0.5), math.log(0.25)]


class Recording(FakeLogits):
    """FakeLogits that remembers what it was asked to evaluate."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.calls: list[tuple[list[int], int]] = []

    def logits(self, tokens: list[int], first: int) -> np.ndarray:
        self.calls.append((list(tokens), first))
        return super().logits(tokens, first)


def pair(reference_rows: list[list[float]], variant_rows: list[list[float]]) -> TeacherForcing:
    logits = {"ref.gguf": reference_rows, "var.gguf": variant_rows}
    service = TeacherForcing(Recording("ref.gguf", logits), Recording("var.gguf", logits))
    service.load(64)
    return service


def test_the_answer_tokens_are_the_positions_scored() -> None:
    service = pair([HALF], [SWAPPED])
    # prompt: 3 tokens, answer: 4 tokens -> 4 positions: the prompt's last token predicts
    # the answer's first, answer tokens 1-3 predict 2-4; the last answer token is not read
    scores = service.compare("p1 p2 p3", "a1 a2 a3 a4")
    assert scores.positions == 4
    reference = service.reference
    assert isinstance(reference, Recording)
    ((tokens, first),) = reference.calls
    assert len(tokens) == 3 + 4 - 1
    assert first == 2
    assert scores.kl.tolist() == pytest.approx([0.25 * math.log(2)] * 4)
    assert not scores.same_top.any()


def test_both_models_read_the_same_tokens() -> None:
    service = pair([HALF], [HALF])
    scores = service.compare("a bb ccc", "dddd e")
    assert isinstance(service.reference, Recording) and isinstance(service.variant, Recording)
    assert service.reference.calls == service.variant.calls
    assert scores.kl.tolist() == [0.0, 0.0]
    assert scores.same_top.all()


def test_an_empty_answer_scores_nothing() -> None:
    assert pair([HALF], [HALF]).compare("a b", "").positions == 0


def test_counts_are_prompt_and_answer_tokens() -> None:
    assert pair([HALF], [HALF]).count([("a b c", "d e"), ("a", "")]) == [(3, 2), (1, 0)]


def test_variants_with_another_vocabulary_are_refused() -> None:
    logits = {"ref.gguf": [HALF], "var.gguf": [[0.0, 0.0]]}
    service = TeacherForcing(FakeLogits("ref.gguf", logits), FakeLogits("var.gguf", logits))
    with pytest.raises(UserError, match="not variants of one model"):
        service.load(64)
