"""SmolLM2 converted to OpenVINO int4 (once per session, from the cached GGUF, offline,
into a private cache) and loaded by OpenVINO GenAI: the folder is what the provenance
says and it answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.openvino_real import convert_int4

pytestmark = pytest.mark.model


@pytest.fixture(scope="session")
def openvino_int4(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The int4 folder (about 1 minute on 2 cores)."""
    return convert_int4(smollm2, tmp_path_factory.mktemp("openvino-cache"))


def test_the_int4_folder_is_what_its_provenance_says(openvino_int4: Path) -> None:
    import json

    from edgebench.models.hashing import sha256_file
    from edgebench.models.openvino_convert import INT4_GROUP_SIZE, MODEL_BIN, PROVENANCE

    provenance = json.loads((openvino_int4 / PROVENANCE).read_text())
    assert provenance["weights"]["sha256"] == sha256_file(openvino_int4 / MODEL_BIN)
    assert provenance["quantization"]["bits"] == 4
    assert provenance["quantization"]["group_size"] == INT4_GROUP_SIZE
    assert provenance["tools"]["optimum-intel"] == "1.27.0"
    # 4-bit weights and an 8-bit embedding: smaller than the Q4_1 GGUF (87 MB vs 98 MB)
    assert provenance["weights"]["size_bytes"] < provenance["source"]["size_bytes"]
    assert provenance["tokens"]["eos_id"] == 2 and provenance["tokens"]["add_bos"] is False


def test_openvino_genai_loads_the_int4_folder_and_it_answers(openvino_int4: Path) -> None:
    try:
        import openvino_genai
    except ImportError:
        pytest.skip("openvino-genai is not installed (the openvino extra)")
    pipe = openvino_genai.LLMPipeline(str(openvino_int4), "CPU", INFERENCE_NUM_THREADS=2)
    tokenizer = pipe.get_tokenizer()
    # the GGUF's EOS (<|im_end|>), not the BOS transformers' GGUF reader gives as EOS
    assert tokenizer.get_eos_token_id() == 2
    assert list(tokenizer.encode("The capital").input_ids.data[0]) == [504, 3575]  # no BOS
    config = openvino_genai.GenerationConfig()
    config.max_new_tokens = 5
    config.do_sample = False
    answer = pipe.generate("The capital of France is", config)
    assert isinstance(answer, str) and answer.strip()
