"""The pre-load check of an ONNX file: external data must stay inside the model folder,
and a corrupt file is a one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models.onnx_check import check_model_file, external_tensors
from tests.helpers.onnx_fakes import tiny_onnx_graph


def test_a_model_with_inline_weights_passes(tmp_path: Path) -> None:
    path = tiny_onnx_graph(tmp_path / "m")
    assert check_model_file(path, path.parent) == []


def test_external_data_inside_the_folder_passes(tmp_path: Path) -> None:
    path = tiny_onnx_graph(tmp_path / "m", location="weights.bin")
    (tmp_path / "m" / "weights.bin").write_bytes(bytes(16))
    [tensor] = check_model_file(path, path.parent)
    assert (tensor.tensor, tensor.location) == ("W", "weights.bin")


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "sub/../../secret.bin"])
def test_external_data_outside_the_folder_is_refused(tmp_path: Path, location: str) -> None:
    (tmp_path / "secret.bin").write_bytes(bytes(16))
    path = tiny_onnx_graph(tmp_path / "m", location=location)
    with pytest.raises(UserError, match="outside the model folder") as err:
        check_model_file(path, path.parent)
    assert "\n" not in str(err.value) and "tensor 'W'" in str(err.value)


def test_external_data_in_a_node_attribute_is_checked_too(tmp_path: Path) -> None:
    path = tiny_onnx_graph(tmp_path / "m", location="../secret.bin", in_node=True)
    with pytest.raises(UserError, match="outside the model folder"):
        check_model_file(path, path.parent)


def test_a_symlink_that_leaves_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.bin").write_bytes(bytes(16))
    path = tiny_onnx_graph(tmp_path / "m", location="weights.bin")
    (tmp_path / "m" / "weights.bin").symlink_to(tmp_path / "secret.bin")
    with pytest.raises(UserError, match="outside the model folder"):
        check_model_file(path, path.parent)


def test_missing_external_data_file_is_named(tmp_path: Path) -> None:
    path = tiny_onnx_graph(tmp_path / "m", location="weights.bin")
    with pytest.raises(UserError, match=r"external data file 'weights\.bin' is missing"):
        check_model_file(path, path.parent)


@pytest.mark.parametrize(
    "damage", ["truncate", "garbage", "empty", "text"], ids=lambda d: f"corrupt-{d}"
)
def test_corrupt_onnx_file_is_one_line(tmp_path: Path, damage: str) -> None:
    path = tiny_onnx_graph(tmp_path / "m")
    data = path.read_bytes()
    broken = {
        "truncate": data[: len(data) // 2],
        "garbage": bytes(range(256)) * 4,
        "empty": b"",
        "text": b"this is not a model\n",
    }[damage]
    path.write_bytes(broken)
    with pytest.raises(UserError, match="not a valid ONNX model") as err:
        external_tensors(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
