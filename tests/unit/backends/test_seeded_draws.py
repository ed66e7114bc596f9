"""Seeded sampling: the same seed draws the same answer (the fake backend, as consistency
tests rely on) and the softmax draw the real backends use never takes a refused token."""

from __future__ import annotations

import numpy as np
import pytest

from edgebench.backends.base import DecodeSettings
from edgebench.backends.decoding import softmax_draw
from edgebench.backends.fake import FakeBackend

ANSWERS = ['{"a":1,"b":"x"}', '{"b":"x","a":1}', '{"a":2}', "no json"]


def test_the_same_seed_gives_the_same_answer() -> None:
    backend = FakeBackend(sampled=ANSWERS)
    draws = [
        backend.generate("p", DecodeSettings(temperature=0.7, seed=seed)).text
        for seed in (1, 2, 1, 3, 1)
    ]
    assert draws[0] == draws[2] == draws[4]
    # Across seeds the answers vary (the draw is not one fixed answer).
    varied = {
        backend.generate("p", DecodeSettings(temperature=0.7, seed=s)).text for s in range(20)
    }
    assert len(varied) > 1
    assert backend.generate("p", DecodeSettings()).text == "{}"  # greedy: the queue
    with pytest.raises(ValueError, match="temperature"):
        DecodeSettings(temperature=-0.1)
    with pytest.raises(ValueError, match="seed"):
        DecodeSettings(seed=-1)


def test_softmax_draw_is_seeded_and_never_takes_a_refused_token() -> None:
    scores = np.array([1.0, 2.0, -np.inf, 1.5])
    first = [softmax_draw(1.0, 7)(scores) for _ in range(3)]
    assert len(set(first)) == 1  # a fresh generator per request: the same first draw
    draw = softmax_draw(1.0, 7)
    picks = [draw(scores) for _ in range(300)]
    assert 2 not in picks and set(picks) == {0, 1, 3}
    cold = softmax_draw(0.01, 7)
    assert {cold(scores) for _ in range(50)} == {1}  # near zero temperature: the best
    assert softmax_draw(1.0, 0)(np.array([-np.inf, -np.inf])) == 0
