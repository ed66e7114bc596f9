"""llama.cpp's quantization types: their ftype ids and how many bits a weight keeps.

`precision_rank` orders variants of one model (the highest is the fidelity reference);
the bits per weight are those llama.cpp's quantize tool lists for each type (a K-quant
mix is its typical average), so the order is llama.cpp's own.
"""

from __future__ import annotations

# name -> llama_ftype id (llama.h `LLAMA_FTYPE_*`)
QUANT_TYPES: dict[str, int] = {
    "F32": 0,
    "F16": 1,
    "BF16": 32,
    "Q8_0": 7,
    "Q6_K": 18,
    "Q5_K_M": 17,
    "Q5_K_S": 16,
    "Q5_1": 9,
    "Q5_0": 8,
    "Q4_K_M": 15,
    "Q4_K_S": 14,
    "Q4_1": 3,
    "Q4_0": 2,
    "Q3_K_L": 13,
    "Q3_K_M": 12,
    "Q3_K_S": 11,
    "Q2_K": 10,
}

# name -> bits per weight
_BITS: dict[str, float] = {
    "F32": 32.0,
    "F16": 16.0,
    "BF16": 16.0,
    "Q8_0": 8.5,
    "Q6_K": 6.56,
    "Q5_K_M": 5.69,
    "Q5_K_S": 5.54,
    "Q5_1": 6.0,
    "Q5_0": 5.5,
    "Q4_K_M": 4.89,
    "Q4_K_S": 4.58,
    "Q4_1": 5.0,
    "Q4_0": 4.5,
    "Q3_K_L": 4.27,
    "Q3_K_M": 3.91,
    "Q3_K_S": 3.5,
    "Q2_K": 3.35,
}


def precision_rank(quantization: str | None) -> float:
    """Bits per weight of a quantization type (case-insensitive); 0 for an unknown or
    missing one, so a known type always ranks above it."""
    if quantization is None:
        return 0.0
    return _BITS.get(quantization.upper(), 0.0)
