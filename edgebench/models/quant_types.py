"""llama.cpp's quantization types: their names, ftype ids and an order by precision.

The names and ids are llama.cpp's own (`QUANT_OPTIONS` in tools/quantize/quantize.cpp;
the ids are llama-cpp-python's `LLAMA_FTYPE_MOSTLY_*` constants, checked by a test). The
order comes from the same table: llama.cpp describes each k-/legacy type by the size of
Llama-3-8B quantized with it, which this module turns into bits per weight of the whole
file (mixtures such as Q4_K_M keep some tensors at a higher type, so their figure is the
file's, not the block's); types described directly in bits per weight keep that figure.
"""

from __future__ import annotations

from edgebench.errors import UserError

# Canonical name -> llama ftype id (LLAMA_FTYPE_MOSTLY_*; F32 is LLAMA_FTYPE_ALL_F32).
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
    "IQ4_NL": 25,
    "IQ4_XS": 30,
    "Q3_K_L": 13,
    "Q3_K_M": 12,
    "Q3_K_S": 11,
    "IQ3_M": 27,
    "IQ3_S": 26,
    "IQ3_XS": 22,
    "IQ3_XXS": 23,
    "Q2_K": 10,
    "Q2_K_S": 21,
    "IQ2_M": 29,
    "IQ2_S": 28,
    "IQ2_XS": 20,
    "IQ2_XXS": 19,
    "IQ1_M": 31,
    "IQ1_S": 24,
    "TQ2_0": 37,
    "TQ1_0": 36,
}
# ggml tensor types by id (ggml.h `enum ggml_type`): what a file's tensors really hold.
# llama.cpp keeps some tensors above the file's type (k-quant mixtures) and falls back
# to another type for rows a k-quant block (256) does not divide (SmolLM2's 576).
GGML_TYPE_NAMES: dict[int, str] = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    6: "Q5_0",
    7: "Q5_1",
    8: "Q8_0",
    9: "Q8_1",
    10: "Q2_K",
    11: "Q3_K",
    12: "Q4_K",
    13: "Q5_K",
    14: "Q6_K",
    15: "Q8_K",
    16: "IQ2_XXS",
    17: "IQ2_XS",
    18: "IQ3_XXS",
    19: "IQ1_S",
    20: "IQ4_NL",
    21: "IQ3_S",
    22: "IQ2_S",
    23: "IQ4_XS",
    29: "IQ1_M",
    30: "BF16",
    34: "TQ1_0",
    35: "TQ2_0",
}
# quantize.cpp's aliases: `Q4_K` means Q4_K_M.
ALIASES = {"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}
# llama.cpp refuses these without an importance matrix ("Missing importance matrix for
# tensor ... in a very low-bit quantization"; IQ2_M's tensors are IQ2_S, and recent
# llama.cpp adds IQ3_XXS), which edgebench does not compute.
NEEDS_IMATRIX = frozenset(
    {"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ1_S", "IQ1_M", "IQ3_XXS", "Q2_K_S"}
)
# Not quantized: a source of one of these types is quantized, not requantized.
FLOAT_TYPES = frozenset({"F32", "F16", "BF16"})

# quantize.cpp's sizes of Llama-3-8B (8.03e9 weights) per type, in its "G" (GiB).
_LLAMA3_8B_GIB = {
    "Q8_0": 7.96,
    "Q6_K": 6.14,
    "Q5_1": 5.65,
    "Q5_K_M": 5.33,
    "Q5_K_S": 5.21,
    "Q5_0": 5.21,
    "Q4_1": 4.78,
    "Q4_K_M": 4.58,
    "Q4_K_S": 4.37,
    "Q4_0": 4.34,
    "Q3_K_L": 4.03,
    "Q3_K_M": 3.74,
    "Q3_K_S": 3.41,
    "Q2_K": 2.96,
    "Q2_K_S": 2.96,
}
_LLAMA3_8B_WEIGHTS = 8.03e9
# Types quantize.cpp describes in bits per weight directly, and the float types.
_STATED_BPW = {
    "F32": 32.0,
    "F16": 16.0,
    "BF16": 16.0,
    "IQ4_NL": 4.5,
    "IQ4_XS": 4.25,
    "IQ3_M": 3.66,
    "IQ3_S": 3.44,
    "IQ3_XS": 3.3,
    "IQ3_XXS": 3.06,
    "IQ2_M": 2.7,
    "IQ2_S": 2.5,
    "IQ2_XS": 2.31,
    "IQ2_XXS": 2.06,
    "IQ1_M": 1.75,
    "IQ1_S": 1.56,
    "TQ2_0": 2.06,
    "TQ1_0": 1.69,
    # ONNX precisions (`NAME@onnx-int4`), so a mixed run still sorts.
    "FP32": 32.0,
    "INT4": 4.0,
}
BITS_PER_WEIGHT: dict[str, float] = {
    **_STATED_BPW,
    **{
        name: round(gib * (1 << 30) * 8 / _LLAMA3_8B_WEIGHTS, 2)
        for name, gib in _LLAMA3_8B_GIB.items()
    },
}


def precision_rank(quantization: str | None) -> float:
    """Bits per weight of a quantization type (Q8_0 8.52, Q4_K_M 4.9, Q2_K 3.17 ...):
    higher is more precise. 0.0 for None or a type this table does not know, so such
    models sort last."""
    if quantization is None:
        return 0.0
    name = quantization.strip().upper()
    return BITS_PER_WEIGHT.get(ALIASES.get(name, name), 0.0)


def canonical_type(name: str) -> str | None:
    """`q4_k_m` -> `Q4_K_M`, `Q4_K` -> `Q4_K_M`; None when llama.cpp has no such type."""
    upper = name.strip().upper()
    upper = ALIASES.get(upper, upper)
    return upper if upper in QUANT_TYPES else None


def parse_types(text: str, option: str = "--types") -> list[str]:
    """'Q8_0,q4_k_m,Q2_K' -> canonical names in the order given, without repeats. An
    unknown type, or one that needs an importance matrix, is a one-line error."""
    names: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name = canonical_type(item)
        if name is None:
            raise UserError(
                f"{option}: {item!r} is not a llama.cpp quantization type "
                f"(valid: {', '.join(usable_types())})"
            )
        if name in NEEDS_IMATRIX:
            raise UserError(
                f"{option}: {name} needs an importance matrix (llama-imatrix), which edgebench "
                f"does not compute (valid: {', '.join(usable_types())})"
            )
        if name not in names:
            names.append(name)
    if not names:
        raise UserError(f"{option}: give at least one type, e.g. Q8_0,Q4_K_M,Q2_K")
    return names


def usable_types() -> list[str]:
    """The types `models quantize` makes, most precise first."""
    usable = [name for name in QUANT_TYPES if name not in NEEDS_IMATRIX]
    return sorted(usable, key=precision_rank, reverse=True)
