"""Converted ONNX folders: variant names, where they live, resolving them by name or
folder, damaged weights, and the model under test they give."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models.onnx_model import GRAPH, read_provenance, split_variant, variant_dir
from edgebench.models.resolve import resolve_model
from edgebench.runner.prepare import model_under_test
from tests.helpers.onnx_fakes import fake_converted


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_variant_names_split_and_unknown_variants_are_refused() -> None:
    assert split_variant("smollm2-135m-instruct@onnx-int4") == ("smollm2-135m-instruct", "int4")
    assert split_variant("smollm2-135m-instruct") is None
    with pytest.raises(UserError, match=r"unknown variant '@onnx-int8' \(known: onnx-fp32"):
        split_variant("smollm2-135m-instruct@onnx-int8")


def test_variant_folder_is_inside_the_model_cache(cache: Path) -> None:
    assert variant_dir("x", "int4") == cache / "models" / "onnx" / "x-int4"


def test_a_variant_not_converted_yet_says_how_to_convert_it(cache: Path) -> None:
    with pytest.raises(UserError) as err:
        resolve_model("smollm2-135m-instruct@onnx-fp32")
    assert str(err.value) == (
        "model 'smollm2-135m-instruct@onnx-fp32' is not converted yet: run `edgebench models "
        "convert smollm2-135m-instruct --to onnx --precision fp32`"
    )


def test_a_variant_of_an_unknown_model_lists_the_known_ones(cache: Path) -> None:
    with pytest.raises(UserError, match="unknown model 'smolm2'"):
        resolve_model("smolm2@onnx-int4")


def test_a_converted_variant_resolves_by_name_and_by_folder(cache: Path) -> None:
    folder = fake_converted(cache)
    by_name = resolve_model("smollm2-135m-instruct@onnx-int4")
    by_path = resolve_model(str(folder))
    assert by_name.runtime == by_path.runtime == "onnx"
    assert by_name.path == folder and by_name.label == "smollm2-135m-instruct@onnx-int4"
    assert by_name.sha256 == read_provenance(folder).sha256


def test_damaged_weights_are_reported_with_the_fix(cache: Path) -> None:
    folder = fake_converted(cache)
    with open(folder / GRAPH, "ab") as f:
        f.write(b"\0")
    with pytest.raises(UserError, match=r"is damaged \(weights are \d+ bytes.*--force"):
        resolve_model("smollm2-135m-instruct@onnx-int4")


def test_a_model_under_test_from_a_converted_folder(cache: Path) -> None:
    fake_converted(cache)
    model = model_under_test("smollm2-135m-instruct@onnx-int4")
    assert model.backend == "onnx"
    assert model.n_ctx_train == 2048
    assert model.prompt_format.chat_template == "{{ messages[0]['content'] }}"
    assert model.details["format"] == "onnx" and model.details["registry_name"]
    assert model.kv_bytes_per_token == 46080  # for the memory pre-check
