"""The pure-Python GGUF reader on the real SmolLM2 file (header only, no weights loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.models.gguf import GGUFFile, read_gguf, special_tokens


@pytest.mark.model
def test_real_smollm2_metadata(smollm2: Path) -> None:
    # `smollm2` (tests/conftest.py) skips without the pulled file, and fails in CI.
    gguf: GGUFFile = read_gguf(smollm2)
    assert gguf.architecture == "llama"
    assert gguf.chat_template and "<|im_start|>" in gguf.chat_template
    assert gguf.quantization == "Q4_1"
    assert gguf.vocab_size == 49152
    assert special_tokens(gguf.metadata)["eos_token"] == "<|im_end|>"
