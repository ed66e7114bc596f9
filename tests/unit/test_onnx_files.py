"""Converted ONNX folders: the pre-load file check, variant names, resolving, listing, and
the one-line errors for missing extras, corrupt files and external data outside the folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from edgebench.cli.app import main
from edgebench.errors import UserError
from edgebench.models.onnx_check import check_model_file, external_tensors
from edgebench.models.onnx_model import (
    FORMAT,
    GRAPH,
    PROVENANCE,
    read_provenance,
    split_variant,
    variant_dir,
)
from edgebench.models.resolve import resolve_model

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def tiny_model(folder: Path, *, location: str | None = None, in_node: bool = False) -> Path:
    """A one-node ONNX graph (Y = X + W); with `location`, W's bytes live in that file."""
    folder.mkdir(parents=True, exist_ok=True)
    weight = numpy_helper.from_array(np.arange(4, dtype=np.float32), name="W")
    if location is not None:
        weight.ClearField("raw_data")
        weight.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", "0"), ("length", "16")):
            entry = weight.external_data.add()
            entry.key, entry.value = key, value
    nodes = [helper.make_node("Add", ["X", "W"], ["Y"])]
    initializers = [weight]
    if in_node:  # the tensor sits in a Constant node's attribute instead
        nodes.insert(0, helper.make_node("Constant", [], ["W"], value=weight))
        initializers = []
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4])],
        initializers,
    )
    path = folder / GRAPH
    path.write_bytes(helper.make_model(graph).SerializeToString())
    return path


def test_a_model_with_inline_weights_passes(tmp_path: Path) -> None:
    path = tiny_model(tmp_path / "m")
    assert check_model_file(path, path.parent) == []


def test_external_data_inside_the_folder_passes(tmp_path: Path) -> None:
    path = tiny_model(tmp_path / "m", location="weights.bin")
    (tmp_path / "m" / "weights.bin").write_bytes(bytes(16))
    [tensor] = check_model_file(path, path.parent)
    assert (tensor.tensor, tensor.location) == ("W", "weights.bin")


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "sub/../../secret.bin"])
def test_external_data_outside_the_folder_is_refused(tmp_path: Path, location: str) -> None:
    (tmp_path / "secret.bin").write_bytes(bytes(16))
    path = tiny_model(tmp_path / "m", location=location)
    with pytest.raises(UserError, match="outside the model folder") as err:
        check_model_file(path, path.parent)
    assert "\n" not in str(err.value) and "tensor 'W'" in str(err.value)


def test_external_data_in_a_node_attribute_is_checked_too(tmp_path: Path) -> None:
    path = tiny_model(tmp_path / "m", location="../secret.bin", in_node=True)
    with pytest.raises(UserError, match="outside the model folder"):
        check_model_file(path, path.parent)


def test_a_symlink_that_leaves_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.bin").write_bytes(bytes(16))
    path = tiny_model(tmp_path / "m", location="weights.bin")
    (tmp_path / "m" / "weights.bin").symlink_to(tmp_path / "secret.bin")
    with pytest.raises(UserError, match="outside the model folder"):
        check_model_file(path, path.parent)


def test_missing_external_data_file_is_named(tmp_path: Path) -> None:
    path = tiny_model(tmp_path / "m", location="weights.bin")
    with pytest.raises(UserError, match=r"external data file 'weights\.bin' is missing"):
        check_model_file(path, path.parent)


@pytest.mark.parametrize(
    "damage", ["truncate", "garbage", "empty", "text"], ids=lambda d: f"corrupt-{d}"
)
def test_corrupt_onnx_file_is_one_line(tmp_path: Path, damage: str) -> None:
    path = tiny_model(tmp_path / "m")
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


# -- converted folders in a temporary cache -------------------------------------------


def fake_converted(cache: Path, base: str = "smollm2-135m-instruct", precision: str = "int4"):
    """A converted folder as `models convert` leaves it, with a tiny graph."""
    from edgebench.models.hashing import sha256_file

    folder = cache / "models" / "onnx" / f"{base}-{precision}"
    graph = tiny_model(folder)
    provenance = {
        "format": FORMAT,
        "name": f"{base}@onnx-{precision}",
        "base_model": base,
        "precision": precision,
        "source": {"sha256": "0" * 64, "architecture": "llama", "parameters": 1},
        "weights": {
            "file": GRAPH,
            "sha256": sha256_file(graph),
            "size_bytes": graph.stat().st_size,
            "external_data": [],
        },
        "quantization": None,
        "context_length": 2048,
        "kv_cache": {"dtype": "float32", "bytes_per_token": 46080},
        "prompt": {"style": "chat", "chat_template": "{{ messages[0]['content'] }}", "stop": []},
        "tokens": {"add_bos": False, "bos_id": 1, "eos_id": 2, "eog_ids": [2], "vocab_size": 8},
        "tools": {"onnxruntime": "1.31.1"},
    }
    (folder / PROVENANCE).write_text(json.dumps(provenance))
    return folder


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EDGEBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_variant_names_split_and_unknown_variants_are_refused() -> None:
    assert split_variant("smollm2-135m-instruct@onnx-int4") == ("smollm2-135m-instruct", "int4")
    assert split_variant("smollm2-135m-instruct") is None
    with pytest.raises(UserError, match=r"unknown variant '@onnx-int8' \(known: onnx-fp32"):
        split_variant("smollm2-135m-instruct@onnx-int8")


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


def test_models_list_shows_converted_variants(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_converted(cache)
    fake_converted(cache, precision="fp32")
    with pytest.raises(SystemExit) as done:
        main(["models", "list"])
    assert not done.value.code
    out = capsys.readouterr().out
    assert "smollm2-135m-instruct@onnx-int4" in out and "smollm2-135m-instruct@onnx-fp32" in out
    row = next(line for line in out.splitlines() if "@onnx-int4" in line)
    assert "onnx" in row and "yes" in row


def test_a_model_under_test_from_a_converted_folder(cache: Path) -> None:
    from edgebench.runner.prepare import model_under_test

    fake_converted(cache)
    model = model_under_test("smollm2-135m-instruct@onnx-int4")
    assert model.backend == "onnx"
    assert model.n_ctx_train == 2048
    assert model.prompt_format.chat_template == "{{ messages[0]['content'] }}"
    assert model.details["format"] == "onnx" and model.details["registry_name"]
    assert model.kv_bytes_per_token == 46080  # for the memory pre-check


def test_the_onnx_backend_checks_the_file_before_onnxruntime_opens_it(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime")
    import onnxruntime

    from edgebench.backends.onnx_runtime import OnnxBackend

    folder = fake_converted(cache)
    tiny_model(folder, location="../../outside.bin")

    def must_not_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("onnxruntime opened the model")

    monkeypatch.setattr(onnxruntime, "InferenceSession", must_not_load)
    with pytest.raises(UserError, match="outside the model folder"):
        OnnxBackend(str(folder), n_threads=1).load(512)


def test_missing_conversion_extras_are_one_line(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib import metadata

    real_version = metadata.version

    def version(name: str) -> str:
        if name in ("torch", "optimum-onnx"):
            raise metadata.PackageNotFoundError(name)
        return real_version(name)

    monkeypatch.setattr("edgebench.models.convert.metadata.version", version)
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "convert", "smollm2-135m-instruct", "--to", "onnx"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: converting to ONNX needs torch, optimum-onnx: pip install 'edgebench[convert]'"
    )


def test_convert_refuses_unknown_targets_and_precisions(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for args, message in (
        (["--to", "tflite"], "--to: 'tflite' is not a supported target (supported: onnx)"),
        (["--precision", "int8"], "--precision: 'int8' is not one of: fp32, int4"),
    ):
        with pytest.raises(SystemExit):
            main(["models", "convert", "smollm2-135m-instruct", *args])
        assert capsys.readouterr().err.strip() == f"error: {message}"


def test_pulling_a_variant_says_it_is_converted_not_pulled(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["models", "pull", "smollm2-135m-instruct@onnx-int4"])
    assert "edgebench models convert smollm2-135m-instruct" in capsys.readouterr().err


def test_variant_folder_is_inside_the_model_cache(cache: Path) -> None:
    assert variant_dir("x", "int4") == cache / "models" / "onnx" / "x-int4"


def test_llguidance_reads_a_gguf_style_byte_level_tokenizer_as_bytes() -> None:
    """transformers writes GGUF BPE tokenizers with a decoder chain llguidance does not
    take for byte-level; the backend hands it the plain ByteLevel decoder."""
    llguidance = pytest.importorskip("llguidance")
    tokenizers = pytest.importorskip("tokenizers")
    from edgebench.backends.onnx_runtime import plain_byte_level

    alphabet = tokenizers.pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    vocab["Ġ{"] = len(vocab)
    model = tokenizers.models.BPE(vocab=vocab, merges=[("Ġ", "{")])
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.Sequence(
        [
            tokenizers.decoders.ByteFallback(),
            tokenizers.decoders.Fuse(),
            tokenizers.decoders.Replace("▁", " "),
            tokenizers.decoders.ByteLevel(),
        ]
    )
    text = tok.to_str()
    space_brace = vocab["Ġ{"]
    plain = llguidance.LLTokenizer(plain_byte_level(text), eos_token=0)
    assert plain.decode_bytes([space_brace]) == b" {"
    assert llguidance.LLTokenizer(text, eos_token=0).decode_bytes([space_brace]) != b" {"
    # A tokenizer without a ByteLevel pre-tokenizer is left alone.
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    assert plain_byte_level(tok.to_str()) == tok.to_str()
