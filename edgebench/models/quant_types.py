"""llama.cpp's quantization types: their ftype ids and their precision (bits per weight),
so variants of one base sort from the most to the least precise.

The bits per weight follow llama.cpp's own list of quantization options
(tools/quantize/quantize.cpp); a type not listed ranks by the number in its name."""

from __future__ import annotations

import re

# name -> llama ftype id (enum llama_ftype in llama.h)
QUANT_TYPES: dict[str, int] = {
    "F32": 0,
    "F16": 1,
    "Q4_0": 2,
    "Q4_1": 3,
    "Q8_0": 7,
    "Q5_0": 8,
    "Q5_1": 9,
    "Q2_K": 10,
    "Q3_K_S": 11,
    "Q3_K_M": 12,
    "Q3_K_L": 13,
    "Q4_K_S": 14,
    "Q4_K_M": 15,
    "Q5_K_S": 16,
    "Q5_K_M": 17,
    "Q6_K": 18,
    "BF16": 32,
}

_BITS: dict[str, float] = {
    "F32": 32.0,
    "F16": 16.0,
    "BF16": 16.0,
    "Q8_0": 8.5,
    "Q6_K": 6.56,
    "Q5_1": 6.0,
    "Q5_K_M": 5.5,
    "Q5_K_S": 5.5,
    "Q5_0": 5.5,
    "Q4_1": 5.0,
    "Q4_K_M": 4.85,
    "Q4_K_S": 4.58,
    "Q4_0": 4.5,
    "Q3_K_L": 4.27,
    "Q3_K_M": 3.9,
    "Q3_K_S": 3.5,
    "Q2_K": 3.35,
}


def precision_rank(quantization: str | None) -> float:
    """Bits per weight of a type (higher: more precise); 0 when unknown."""
    if not quantization:
        return 0.0
    name = quantization.upper()
    if name in _BITS:
        return _BITS[name]
    digits = re.search(r"(\d+)", name)
    return float(digits.group(1)) if digits else 0.0
