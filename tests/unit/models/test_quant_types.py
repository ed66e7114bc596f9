"""llama.cpp's quantization types: names, ids, aliases and the precision order."""

from __future__ import annotations

import pytest

from edgebench.errors import UserError
from edgebench.models.quant_types import (
    BITS_PER_WEIGHT,
    GGML_TYPE_NAMES,
    NEEDS_IMATRIX,
    QUANT_TYPES,
    canonical_type,
    parse_types,
    precision_rank,
    usable_types,
)


def test_ids_are_llama_cpps_own() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    for name, ftype in QUANT_TYPES.items():
        constant = "LLAMA_FTYPE_ALL_F32" if name == "F32" else f"LLAMA_FTYPE_MOSTLY_{name}"
        assert getattr(llama_cpp, constant) == ftype, name


def test_every_type_has_a_rank_and_the_gguf_reader_knows_its_name() -> None:
    from edgebench.models.gguf import FILE_TYPES

    for name, ftype in QUANT_TYPES.items():
        assert name in BITS_PER_WEIGHT
        assert FILE_TYPES[ftype] == name


def test_every_ggml_type_the_reader_sizes_has_a_name() -> None:
    from edgebench.models.gguf import GGML_BLOCKS

    unnamed = set(GGML_BLOCKS) - set(GGML_TYPE_NAMES) - {24, 25, 26, 27, 28, 39}  # ints, MXFP4
    assert not unnamed


def test_ranks_follow_llama_cpps_table() -> None:
    # quantize.cpp: Q8_0 7.96G, Q4_K_M 4.58G, Q2_K 2.96G of Llama-3-8B (8.03e9 weights).
    assert precision_rank("Q8_0") == pytest.approx(8.52, abs=0.01)
    assert precision_rank("Q4_K_M") == pytest.approx(4.9, abs=0.01)
    assert precision_rank("Q2_K") == pytest.approx(3.17, abs=0.01)
    order = ["F32", "F16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_0", "Q4_1", "Q4_K_M", "Q4_0"]
    order += ["Q3_K_M", "Q2_K"]
    ranks = [precision_rank(name) for name in order]
    assert ranks == sorted(ranks, reverse=True)
    assert precision_rank("BF16") == precision_rank("F16") == 16.0


@pytest.mark.parametrize("value", [None, "ftype 99", "Q9_9", ""])
def test_unknown_types_rank_last(value: str | None) -> None:
    assert precision_rank(value) == 0.0


def test_names_are_case_blind_and_aliases_resolve() -> None:
    assert canonical_type("q4_k_m") == "Q4_K_M"
    assert canonical_type("Q4_K") == "Q4_K_M"
    assert canonical_type(" q8_0 ") == "Q8_0"
    assert canonical_type("onnx-int4") is None
    assert precision_rank("q4_k") == precision_rank("Q4_K_M")


def test_parse_types_keeps_order_without_repeats() -> None:
    assert parse_types("Q8_0, q4_k_m,Q2_K,Q4_K") == ["Q8_0", "Q4_K_M", "Q2_K"]


def test_an_unknown_type_lists_the_valid_ones() -> None:
    with pytest.raises(UserError) as info:
        parse_types("Q8_0,Q9_K")
    message = str(info.value)
    assert message.startswith("--types: 'Q9_K' is not a llama.cpp quantization type (valid: ")
    assert "Q8_0, Q6_K" in message and "\n" not in message


def test_types_that_need_an_importance_matrix_are_refused() -> None:
    with pytest.raises(UserError, match="IQ2_XS needs an importance matrix"):
        parse_types("iq2_xs")
    assert not NEEDS_IMATRIX & set(usable_types())


def test_no_types_is_an_error() -> None:
    with pytest.raises(UserError, match="give at least one type"):
        parse_types(" , ")
