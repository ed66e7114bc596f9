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
