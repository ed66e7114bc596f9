"""Fidelity of a quantized model to a reference, position by position (pure numpy).

At each scored position both models see the same tokens (teacher forcing); their
next-token distributions are compared as llama.cpp's `llama-perplexity --kl-divergence`
does: KL(P_ref || P_var) = sum_i p_ref(i) (log p_ref(i) - log p_var(i)) over the whole
vocabulary from log-softmax, in nats, and "same top p": the two argmaxes agree (ties go to
the lowest token id in both, as there). Unlike llama.cpp, no term is left out (it skips
p_ref < e^-16) and the reference log-probabilities are not stored at 16 bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# Rows converted to float64 at a time: bounds the memory of a long answer over a large
# vocabulary (64 rows x 256k tokens x 8 bytes = 128 MB at most).
_CHUNK_ROWS = 64


def log_softmax(logits: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Row-wise log-softmax in float64 (max subtracted first, so no overflow)."""
    x = np.asarray(logits, dtype=np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@dataclass(frozen=True)
class PositionScores:
    """Per scored position: KL divergence in nats and whether the top tokens agree."""

    kl: npt.NDArray[np.float64]
    same_top: npt.NDArray[np.bool_]

    @property
    def positions(self) -> int:
        return int(self.kl.shape[0])


def compare_logits(reference: npt.ArrayLike, variant: npt.ArrayLike) -> PositionScores:
    """KL(reference || variant) and top-1 agreement for each row of two [positions,
    vocab] logit matrices taken at the same positions of the same token sequence."""
    ref = np.asarray(reference)
    var = np.asarray(variant)
    if ref.shape != var.shape or ref.ndim != 2:
        raise ValueError(f"logits of different shapes: {ref.shape} and {var.shape}")
    kl = np.empty(ref.shape[0], dtype=np.float64)
    for start in range(0, ref.shape[0], _CHUNK_ROWS):
        rows = slice(start, start + _CHUNK_ROWS)
        log_p = log_softmax(ref[rows])
        log_q = log_softmax(var[rows])
        # exp(log_p) is exactly 0 where p underflows: those terms add nothing, never NaN.
        kl[rows] = np.sum(np.exp(log_p) * (log_p - log_q), axis=-1)
    # A KL can come out a hair below 0 from rounding; it is 0 by definition.
    np.maximum(kl, 0.0, out=kl)
    same_top = ref.argmax(axis=-1) == var.argmax(axis=-1)
    return PositionScores(kl, same_top)


@dataclass(frozen=True)
class FidelityFigures:
    """Over every scored position of every example."""

    kl_mean: float | None
    kl_median: float | None
    kl_p99: float | None
    top1_agreement: float | None
    positions: int


def summarize_positions(scores: list[PositionScores]) -> FidelityFigures:
    """Mean, median and 99th percentile of the KL (linear interpolation between the
    sorted values, as llama.cpp's percentiles) and the share of agreeing top tokens,
    pooled over positions; None when nothing was scored."""
    kl = np.concatenate([s.kl for s in scores]) if scores else np.empty(0)
    same = np.concatenate([s.same_top for s in scores]) if scores else np.empty(0, dtype=bool)
    if kl.size == 0:
        return FidelityFigures(None, None, None, None, 0)
    return FidelityFigures(
        kl_mean=float(kl.mean()),
        kl_median=float(np.median(kl)),
        kl_p99=float(np.percentile(kl, 99)),
        top1_agreement=float(same.mean()),
        positions=int(kl.size),
    )
