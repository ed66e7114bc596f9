"""What both `models convert` targets share (models/conversion.py), on the branches the
converters' own tests do not reach: a GGUF without a chat template, a refused copy, a
failure inside the private folder, an older folder published over."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.io import WriteFailed
from edgebench.models.conversion import (
    copy_into,
    gguf_prompt,
    gguf_tokens,
    private_workdir,
    publish,
    require_registry,
    write_chat_template,
)
from edgebench.models.gguf import read_gguf
from edgebench.models.resolve import ResolvedModel
from tests.helpers.gguf_factory import sample_metadata, write_gguf


def _local(path: Path) -> ResolvedModel:
    return ResolvedModel(
        spec=str(path),
        label=path.stem,
        path=path,
        entry=None,
        sha256="0" * 64,
        size_bytes=path.stat().st_size,
        prompt_style="completion",
        stop=["\n\n"],
    )


def test_a_gguf_without_a_chat_template_writes_none_and_records_none(tmp_path: Path) -> None:
    header = read_gguf(write_gguf(tmp_path / "plain.gguf", sample_metadata(chat=False)))
    write_chat_template(tmp_path / "chat_template.jinja", header)
    assert not (tmp_path / "chat_template.jinja").exists()
    prompt = gguf_prompt(_local(tmp_path / "plain.gguf"), header)
    assert prompt == {
        "style": "completion",
        "chat_template": None,
        "bos_token": "<|im_start|>",
        "eos_token": "<|im_end|>",
        "stop": ["\n\n"],
    }
    assert gguf_tokens(header)["bos_id"] == 1 and gguf_tokens(header)["eos_id"] == 2


def test_a_local_gguf_is_refused_in_one_line(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "local.gguf")
    with pytest.raises(UserError) as error:
        require_registry("local", _local(path))
    assert str(error.value) == (
        "'local': only registry models can be converted (see `models list`)"
    )


def test_a_refused_copy_is_one_line_naming_the_file(tmp_path: Path) -> None:
    item = tmp_path / "tokenizer.json"
    item.write_text("{}")
    with pytest.raises(WriteFailed) as error:
        copy_into(item, tmp_path / "missing")  # no such folder: the copy fails
    assert str(error.value).startswith(f"{tmp_path / 'missing' / 'tokenizer.json'}: cannot write")


def test_a_failure_in_the_private_folder_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "onnx" / "tiny-int4"
    with pytest.raises(RuntimeError), private_workdir(target, None, ()) as tmp:
        assert tmp.parent == target.parent and tmp.name.startswith(".convert-")
        (tmp / "out").mkdir()
        raise RuntimeError("the export failed")
    assert list(target.parent.iterdir()) == []


def test_publish_replaces_an_older_folder(tmp_path: Path) -> None:
    target = tmp_path / "tiny-int4"
    target.mkdir()
    (target / "stale.onnx").write_text("old")
    with private_workdir(target, None, ()) as tmp:
        out = tmp / "out"
        out.mkdir()
        (out / "model.onnx").write_text("new")
        publish(out, target, "edgebench-onnx.json", {"name": "tiny@onnx-int4"})
        assert not out.exists()
    assert sorted(p.name for p in target.iterdir()) == ["edgebench-onnx.json", "model.onnx"]
    assert (target / "edgebench-onnx.json").read_text().startswith("{")
    assert [p.name for p in tmp_path.iterdir()] == ["tiny-int4"]  # the private folder gone
