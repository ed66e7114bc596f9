"""`models convert --to openvino` without optimum-intel, NNCF or torch: transformers'
step and optimum-intel's export are faked; the checks, the folder, the provenance and
every error's one line are the converter's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.models import openvino_convert as ov
from edgebench.models.fetch import pull
from tests.helpers.gguf_factory import setup_tiny_model
from tests.helpers.openvino_export_fakes import fake_export_files

REAL_EXPORT = ov.export
# The modules `export` imports, faked whole (optimum-intel need not be installed).
FAKE_OPTIMUM = (
    "optimum",
    "optimum.exporters",
    "optimum.exporters.openvino",
    "optimum.exporters.openvino.__main__",
    "optimum.intel",
)


def fake_transformers_folder(gguf: Path, hf_dir: Path, model_type: str = "llama") -> None:
    hf_dir.mkdir(parents=True)
    (hf_dir / "config.json").write_text(json.dumps({"model_type": model_type}))
    (hf_dir / "model.safetensors").write_bytes(b"\0" * 16)
    (hf_dir / "tokenizer.json").write_text("{}")
    (hf_dir / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<s>"}))
    (hf_dir / "generation_config.json").write_text("{}")


@pytest.fixture
def exports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The model "tiny" pulled, the extras taken as installed, the two heavy steps faked;
    the precisions the export was asked for."""
    setup_tiny_model(monkeypatch, tmp_path)
    pull("tiny")
    asked: list[str] = []

    def export(hf_dir: Path, out_dir: Path, precision: str) -> None:
        asked.append(precision)
        fake_export_files(out_dir, weights=precision.encode() * 16)

    monkeypatch.setattr(ov, "check_openvino_extras", lambda: None)
    monkeypatch.setattr(ov, "gguf_to_transformers", fake_transformers_folder)
    monkeypatch.setattr(ov, "supported_model_types", lambda: frozenset({"llama", "qwen2"}))
    monkeypatch.setattr(ov, "export", export)
    return asked


@pytest.mark.parametrize("precision", ov.PRECISIONS)
def test_a_conversion_leaves_the_folder_and_its_provenance(
    exports: list[str], precision: str
) -> None:
    said: list[str] = []
    done = ov.convert("tiny", precision, say=said.append)
    assert done.folder == ov.variant_dir("tiny", precision)
    assert done.folder.parent.name == "openvino" and done.folder.name == f"tiny-{precision}"
    assert ov.export_state("tiny", precision) == "yes"
    provenance = done.provenance
    assert provenance["format"] == ov.FORMAT and provenance["name"] == f"tiny@openvino-{precision}"
    assert provenance["precision"] == precision and len(provenance["source"]["sha256"]) == 64
    weights = provenance["weights"]
    assert weights["sha256"] == ov.sha256_file(done.folder / ov.MODEL_BIN)
    ir = [done.folder / ov.MODEL_XML, done.folder / ov.MODEL_BIN]
    assert weights["size_bytes"] == sum(p.stat().st_size for p in ir) == done.size_bytes
    assert provenance["weights_bytes"] == ir[1].stat().st_size
    assert provenance["source_gguf_sha256"] == provenance["source"]["sha256"]
    assert set(provenance["tools"]) >= {"optimum-intel", "nncf", "openvino", "transformers"}
    assert provenance["prompt"]["chat_template"] and provenance["tokens"]["eos_id"] is not None
    assert (done.folder / ov.CHAT_TEMPLATE).read_text() == provenance["prompt"]["chat_template"]
    assert set(provenance["export"]["steps_s"]) == {"gguf_to_transformers", "openvino_export"}
    # the transformers folder's tokenizer and configs beside the IR, never its weights
    assert (done.folder / "tokenizer.json").is_file()
    # ... aligned with the GGUF before the export read them
    config = json.loads((done.folder / "tokenizer_config.json").read_text())
    assert config["eos_token"] == provenance["prompt"]["eos_token"]
    assert not (done.folder / "model.safetensors").exists()
    # progress lines as the ONNX conversion prints them, the folder last
    assert said[0] == f"tiny@openvino-{precision}: reading {ov.resolve_model('tiny').path.name}"
    assert said[1].startswith(f"tiny@openvino-{precision}: exporting to OpenVINO IR")
    assert said[-1].startswith(f"tiny@openvino-{precision}: ") and said[-1].endswith(
        f"s: {done.folder}"
    )
    assert " MB in " in said[-1]
    assert not list(done.folder.parent.glob(".convert-*"))  # the private folder is gone


def test_the_quantization_settings_are_recorded(exports: list[str]) -> None:
    int4 = ov.convert("tiny", "int4", say=lambda _: None).provenance["quantization"]
    assert int4 == {
        "method": "nncf.compress_weights",
        "bits": 4,
        "sym": True,
        "group_size": ov.INT4_GROUP_SIZE,
        "ratio": 1.0,
        "dataset": None,
        "all_layers": False,
        "backup_precision": "int8_asym",
    }
    int8 = ov.convert("tiny", "int8", say=lambda _: None).provenance["quantization"]
    assert (int8["bits"], int8["sym"], int8["group_size"]) == (8, False, -1)
    assert "backup_precision" not in int8
    fp16 = ov.convert("tiny", "fp16", say=lambda _: None).provenance["quantization"]
    assert fp16 == {"method": "fp16", "dtype": "float16"}


def test_a_converted_folder_is_kept_unless_forced_or_damaged(
    exports: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    first = ov.convert("tiny", "int4", say=said.append)
    again = ov.convert("tiny", "int4", say=said.append)
    assert exports == ["int4"] and again.folder == first.folder
    assert (
        said[-1]
        == f"tiny@openvino-int4: already converted: {first.folder} (--force converts again)"
    )
    ov.convert("tiny", "int4", force=True, say=said.append)
    assert exports == ["int4", "int4"]
    # a folder made with other settings (another group size) is made again
    usual = ov.WEIGHT_CONFIGS["int4"]
    monkeypatch.setitem(ov.WEIGHT_CONFIGS, "int4", {**usual, "group_size": 32})
    ov.convert("tiny", "int4", say=said.append)
    assert said[-4] == "tiny@openvino-int4: converted with other settings; converting again"
    assert exports == ["int4"] * 3
    monkeypatch.setitem(ov.WEIGHT_CONFIGS, "int4", usual)
    with open(first.folder / ov.MODEL_BIN, "ab") as weights:
        weights.write(b"\0")
    assert ov.export_state("tiny", "int4") == "corrupt"
    ov.convert("tiny", "int4", say=said.append)
    assert exports == ["int4"] * 4 and ov.export_state("tiny", "int4") == "yes"


def test_an_unknown_precision_is_one_line(exports: list[str]) -> None:
    with pytest.raises(UserError) as error:
        ov.convert("tiny", "fp32")
    assert str(error.value) == (
        "--precision: 'fp32' is not one of: int4, int8, fp16 (for --to openvino)"
    )
    assert exports == []


def test_missing_extras_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    real = metadata.version

    def version(name: str) -> str:
        if name in ("optimum-intel", "nncf"):
            raise metadata.PackageNotFoundError(name)
        return real(name) if name not in ov.REQUIRED else "1.0"

    monkeypatch.setattr(ov.metadata, "version", version)
    with pytest.raises(UserError) as error:
        ov.check_openvino_extras()
    assert str(error.value) == (
        "converting to OpenVINO needs optimum-intel, nncf: pip install 'edgebench[convert]'"
    )


def test_an_architecture_optimum_intel_cannot_export_is_one_line(
    exports: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def bert(gguf: Path, hf_dir: Path) -> None:
        fake_transformers_folder(gguf, hf_dir, model_type="bert")

    monkeypatch.setattr(ov, "gguf_to_transformers", bert)
    with pytest.raises(UserError) as error:
        ov.convert("tiny", "int4", say=lambda _: None)
    assert str(error.value) == (
        "'tiny': optimum-intel cannot export the 'bert' architecture to OpenVINO for text "
        "generation"
    )
    assert exports == [] and not ov.variant_dir("tiny", "int4").exists()


def test_an_export_without_tokenizers_is_one_line_and_leaves_nothing(
    exports: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_tokenizer(hf_dir: Path, out_dir: Path, precision: str) -> None:
        fake_export_files(out_dir)
        (out_dir / ov.DETOKENIZER_XML).unlink()

    monkeypatch.setattr(ov, "export", no_tokenizer)
    with pytest.raises(UserError) as error:
        ov.convert("tiny", "int8", say=lambda _: None)
    assert str(error.value) == "tiny@openvino-int8: the export wrote no openvino_detokenizer.xml"
    assert not ov.variant_dir("tiny", "int8").exists()
    assert not list(ov.variant_dir("tiny", "int8").parent.glob(".convert-*"))


def test_an_exporter_failure_is_its_first_line(
    exports: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real `export` turns whatever optimum-intel raises into one line."""
    import sys
    import types

    def main_export(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Exception from src/core/src/node.cpp:1\nstack trace ...")

    def config(**kwargs: Any) -> dict[str, Any]:
        return kwargs

    fakes = {name: types.ModuleType(name) for name in FAKE_OPTIMUM}
    setattr(fakes["optimum.exporters.openvino"], "main_export", main_export)  # noqa: B010
    setattr(fakes["optimum.exporters.openvino.__main__"], "_main_quantize", main_export)  # noqa: B010
    setattr(fakes["optimum.intel"], "OVConfig", config)  # noqa: B010
    for name, module in fakes.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(ov, "export", REAL_EXPORT)
    with pytest.raises(UserError) as error:
        ov.convert("tiny", "int4", say=lambda _: None)
    assert str(error.value) == (
        "optimum-intel could not export to OpenVINO: Exception from src/core/src/node.cpp:1"
    )


def test_only_registry_models_are_converted(
    exports: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.gguf_factory import write_gguf

    path = write_gguf(tmp_path / "local.gguf")
    with pytest.raises(UserError, match=r"only registry models can be converted"):
        ov.convert(str(path), "int4")


@pytest.mark.parametrize(
    ("spec", "split"),
    [
        ("smollm2-135m-instruct@openvino-int4", ("smollm2-135m-instruct", "int4")),
        ("a@b@openvino-fp16", ("a@b", "fp16")),
        ("smollm2-135m-instruct@openvino-fp32", None),
        ("smollm2-135m-instruct@onnx-int4", None),
        ("@openvino-int4", None),
        ("smollm2-135m-instruct", None),
    ],
)
def test_variant_names(spec: str, split: tuple[str, str] | None) -> None:
    assert ov.split_variant(spec) == split
    if split:
        assert ov.variant_name(*split) == spec


class GGUFHeader:
    """What `aligned_tokenizer` reads of a GGUF header: SmolLM2's, or one adding BOS."""

    def __init__(self, add_bos: bool, model: str = "gpt2") -> None:
        self.add_bos_token = add_bos
        self.metadata = {"tokenizer.ggml.model": model}

    def special_tokens(self) -> dict[str, str]:
        return {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}

    def token_id(self, kind: str) -> int:
        return {"bos": 1, "eos": 2}[kind]


# What transformers' GGUF reader writes for SmolLM2 (a llama GGUF, GPT-2 vocabulary).
READER_TOKENIZER = {
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
    "post_processor": {
        "type": "TemplateProcessing",
        "single": [
            {"SpecialToken": {"id": "<|im_start|>", "type_id": 0}},
            {"Sequence": {"id": "A", "type_id": 0}},
        ],
    },
    "decoder": {
        "type": "Sequence",
        "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}, {"type": "ByteLevel"}],
    },
    "model": {"type": "BPE"},
}
READER_CONFIG = {"bos_token": "<|im_start|>", "eos_token": "<|im_start|>", "add_bos_token": True}


def test_the_tokenizer_is_aligned_with_the_gguf() -> None:
    """No BOS where the GGUF adds none, EOS the GGUF's, the byte-level decoder alone
    (openvino-tokenizers cannot convert the reader's SentencePiece steps before it)."""
    tokenizer, config = ov.aligned_tokenizer(READER_TOKENIZER, READER_CONFIG, GGUFHeader(False))
    assert tokenizer["decoder"]["type"] == "ByteLevel"
    assert tokenizer["post_processor"]["single"] == [{"Sequence": {"id": "A", "type_id": 0}}]
    assert (
        tokenizer["model"] == {"type": "BPE"} and tokenizer["pre_tokenizer"]["type"] == "ByteLevel"
    )
    assert config["eos_token"] == "<|im_end|>" and config["eos_token_id"] == 2
    assert config["add_bos_token"] is False and config["bos_token_id"] == 1
    assert READER_CONFIG["eos_token"] == "<|im_start|>"  # the input is not changed


def test_a_gguf_that_adds_bos_keeps_it_and_its_decoder() -> None:
    tokenizer, config = ov.aligned_tokenizer(
        READER_TOKENIZER, READER_CONFIG, GGUFHeader(True, model="llama")
    )
    assert tokenizer["decoder"] == READER_TOKENIZER["decoder"]  # a SentencePiece vocabulary
    post = tokenizer["post_processor"]
    assert post["single"][0] == {"SpecialToken": {"id": "<|im_start|>", "type_id": 0}}
    assert post["special_tokens"] == {
        "<|im_start|>": {"id": "<|im_start|>", "ids": [1], "tokens": ["<|im_start|>"]}
    }
    assert config["add_bos_token"] is True
