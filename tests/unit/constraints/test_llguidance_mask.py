"""llguidance's token mask as edgebench reads it."""

from __future__ import annotations

import numpy as np

from edgebench.constraints.llguidance_mask import TokenMask


def test_token_mask_reads_llguidance_bit_order() -> None:
    mask = TokenMask(40)
    words = mask.words.view(np.uint32)
    words[:] = 0
    words[0] = (1 << 3) | (1 << 31)
    words[1] = 1 << 5  # token 37
    assert np.flatnonzero(mask.allowed()).tolist() == [3, 31, 37]
    assert not mask.allows_only(3)
    words[:] = 0
    words[1] = 1 << 5
    assert mask.allows_only(37) and not mask.allows_only(3)


def gathered_best(mask: TokenMask, logits: np.ndarray) -> int:
    """The loop's choice before `best`: argmax over the allowed tokens' logits."""
    allowed = np.flatnonzero(mask.allowed())
    return int(allowed[np.argmax(logits[allowed])])


def test_best_is_the_gathered_argmax_for_dense_and_sparse_masks_and_ties() -> None:
    rng = np.random.default_rng(0)
    mask = TokenMask(1000)
    for share in (0.999, 0.9, 0.6, 0.5, 0.4, 0.05, 0.001):
        for _ in range(20):
            bits = rng.random(mask.n_vocab) < share
            bits[rng.integers(mask.n_vocab)] = True  # at least one allowed
            packed = np.packbits(bits, bitorder="little")
            mask.words.view(np.uint8)[:] = 0
            mask.words.view(np.uint8)[: packed.size] = packed
            logits = rng.integers(-3, 3, mask.n_vocab).astype(np.float32)  # many ties
            assert mask.best(logits) == gathered_best(mask, logits)


def test_best_with_nothing_allowed_is_none_and_minus_infinity_stays_allowed() -> None:
    mask = TokenMask(64)
    mask.words[:] = 0
    assert mask.best(np.zeros(64, dtype=np.float32)) is None
    mask.words.view(np.uint32)[:] = 0xFFFFFFFF
    mask.words.view(np.uint32)[0] = 0xFFFFFFFE  # token 0 refused
    logits = np.full(64, -np.inf, dtype=np.float32)
    assert mask.best(logits) == 1  # the first allowed, not the refused token 0
