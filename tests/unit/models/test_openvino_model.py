"""OpenVINO model specs: `NAME@openvino` (the registry GGUF, read by OpenVINO GenAI) and
exported folders `NAME@openvino-PRECISION` (or their path): the convert command when one
is missing, one line naming the file for a damaged folder or provenance, and the model
under test they give."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models import resolve
from edgebench.models.openvino_model import (
    MODEL_BIN,
    PROVENANCE,
    split_openvino_variant,
    variant_dir,
)
from edgebench.models.resolve import resolve_model
from edgebench.runner.prepare import model_under_test
from tests.helpers.gguf_factory import CHAT_TEMPLATE, sample_metadata, write_gguf
from tests.helpers.openvino_export_fakes import BASE, TEMPLATE, exported


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_variant_names_split_and_unknown_precisions_are_refused() -> None:
    assert split_openvino_variant(f"{BASE}@openvino") == (BASE, None)
    assert split_openvino_variant(f"{BASE}@openvino-int8") == (BASE, "int8")
    assert split_openvino_variant(f"{BASE}@onnx-int4") is None
    assert split_openvino_variant(BASE) is None
    with pytest.raises(UserError) as err:
        split_openvino_variant(f"{BASE}@openvino-int3")
    assert str(err.value) == (
        f"model '{BASE}@openvino-int3': unknown variant '@openvino-int3' "
        "(known: openvino, openvino-int4, openvino-int8, openvino-fp16)"
    )


def test_a_folder_not_converted_yet_says_the_command_that_makes_it(cache: Path) -> None:
    with pytest.raises(UserError) as err:
        resolve_model(f"{BASE}@openvino-fp16")
    assert str(err.value) == (
        f"model '{BASE}@openvino-fp16' is not converted yet: run `edgebench models convert "
        f"{BASE} --to openvino --precision fp16`"
    )


def test_an_unknown_base_lists_the_known_models(cache: Path) -> None:
    with pytest.raises(UserError, match="unknown model 'smolm2'"):
        resolve_model("smolm2@openvino-int4")
    with pytest.raises(UserError, match="unknown model 'smolm2'"):
        resolve_model("smolm2@openvino")


def test_an_exported_folder_resolves_by_name_and_by_path(cache: Path) -> None:
    folder = exported(variant_dir(BASE, "int4"))
    by_name = resolve_model(f"{BASE}@openvino-int4")
    by_path = resolve_model(str(folder))
    assert by_name.runtime == by_path.runtime == "openvino"
    assert by_name.path == by_path.path == folder
    assert by_name.label == f"{BASE}@openvino-int4" and by_name.size_bytes == 8
    assert by_name.entry is not None and by_path.entry is None
    model = model_under_test(f"{BASE}@openvino-int4")
    assert model.backend == "openvino" and model.n_ctx_train == 8192
    assert model.prompt_format.chat_template == TEMPLATE
    record = model.record()
    assert (record.format, record.quantization, record.architecture) == (
        "openvino",
        "int4",
        "llama",
    )


@pytest.mark.parametrize("name", ["openvino_model.xml", "openvino_detokenizer.bin"])
def test_a_folder_missing_a_file_names_it(cache: Path, name: str) -> None:
    folder = exported(variant_dir(BASE, "int4"))
    (folder / name).unlink()
    with pytest.raises(UserError) as err:
        resolve_model(f"{BASE}@openvino-int4")
    assert str(err.value) == f"{folder / name}: missing (OpenVINO GenAI needs it to load)"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"precision": "int3"}, "'precision' must be one of int4, int8, fp16, not 'int3'"),
        ({"source_gguf_sha256": "abc"}, "'source_gguf_sha256' must be the source GGUF's"),
        ({"weights_bytes": "8"}, "'weights_bytes' must be a positive integer, not a string"),
        ({"prompt": "chatml"}, "'prompt' must be a JSON object, got a string"),
    ],
)
def test_a_bad_provenance_field_names_the_file(
    cache: Path, change: dict[str, object], message: str
) -> None:
    folder = exported(variant_dir(BASE, "int4"), **change)
    with pytest.raises(UserError) as err:
        resolve_model(str(folder))
    assert str(err.value).startswith(f"{folder / PROVENANCE}: {message}")
    assert "\n" not in str(err.value)


def test_a_provenance_file_that_is_not_json_names_it(cache: Path) -> None:
    folder = exported(variant_dir(BASE, "int4"))
    (folder / PROVENANCE).write_text("{not json")
    with pytest.raises(UserError, match=str(folder / PROVENANCE)):
        resolve_model(f"{BASE}@openvino-int4")


def test_weights_of_another_size_are_a_damaged_export(cache: Path) -> None:
    folder = exported(variant_dir(BASE, "int4"), weights_bytes=9)
    with pytest.raises(UserError) as err:
        resolve_model(f"{BASE}@openvino-int4")
    assert str(err.value).startswith(f"{folder / MODEL_BIN}: 8 bytes, {PROVENANCE} says 9")


def test_the_registry_gguf_read_by_openvino_keeps_its_identity(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = cache / "models" / "model.gguf"
    path.parent.mkdir(parents=True)
    write_gguf(path, sample_metadata())

    def cached(spec: str, entry: object, *, pull_missing: bool) -> resolve.ResolvedModel:
        return resolve.ResolvedModel(spec, spec, path, None, "b" * 64, 4, "chat")

    monkeypatch.setattr(resolve, "_from_registry", cached)
    resolved = resolve_model(f"{BASE}@openvino")
    assert resolved.runtime == "openvino" and resolved.path == path
    assert resolved.label == f"{BASE}@openvino" and resolved.sha256 == "b" * 64
    model = model_under_test(f"{BASE}@openvino")
    assert model.backend == "openvino" and model.record().format == "gguf"
    assert model.prompt_format.chat_template == CHAT_TEMPLATE
