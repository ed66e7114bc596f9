"""`resolve_model`: registry names, local paths, hf: specs (never the network), errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models.hashing import sha256_file
from edgebench.models.registry import DEFAULT_MODEL
from edgebench.models.resolve import resolve_model
from tests.helpers.fake_hub import FakeHub, loopback_only, refused_endpoint, serve
from tests.helpers.gguf_factory import TINY_GGUF, sample_metadata, setup_tiny_model, write_gguf

CALLS: list[list[str]] = []


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    CALLS.clear()
    return setup_tiny_model(monkeypatch, tmp_path, CALLS)


def test_registry_name_is_pulled_when_missing(cache: Path) -> None:
    model = resolve_model("tiny")
    assert model.path == cache / "tiny.gguf"
    assert model.label == "tiny"
    assert model.entry is not None and model.entry.name == "tiny"
    assert model.prompt_style == "chat"
    assert model.stop == ["<|im_end|>"]
    assert model.size_bytes == len(TINY_GGUF)
    assert model.sha256 == sha256_file(model.path)
    resolve_model("tiny")
    assert len(CALLS) == 1


def test_registry_name_without_pulling(cache: Path) -> None:
    with pytest.raises(UserError, match="edgebench models pull tiny"):
        resolve_model("tiny", pull_missing=False)


def test_none_means_the_default_model(cache: Path) -> None:
    with pytest.raises(UserError, match=f"models pull {DEFAULT_MODEL}"):
        resolve_model(None, pull_missing=False)


@pytest.mark.parametrize(("chat", "style"), [(True, "chat"), (False, "completion")])
def test_local_path(cache: Path, tmp_path: Path, chat: bool, style: str) -> None:
    path = write_gguf(tmp_path / "My-Model.Q8_0.gguf", sample_metadata(chat=chat))
    model = resolve_model(str(path))
    assert model.path == path
    assert model.label == "My-Model.Q8_0"
    assert model.entry is None
    assert model.prompt_style == style
    assert model.stop == []
    assert model.size_bytes == path.stat().st_size
    assert model.sha256 == sha256_file(path)


def test_not_a_gguf_file(cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "weights.gguf"
    path.write_bytes(b"PK\x03\x04 zip, not gguf")
    with pytest.raises(UserError, match=r"not a GGUF file: .*weights\.gguf \(starts with b'PK"):
        resolve_model(str(path))


def test_missing_path_and_directory(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="model file not found"):
        resolve_model(str(tmp_path / "nowhere.gguf"))
    with pytest.raises(UserError, match="not a file"):
        resolve_model(str(tmp_path) + "/")


def test_unknown_name_suggests(cache: Path) -> None:
    with pytest.raises(UserError, match="did you mean 'tiny'"):
        resolve_model("tinny")


def test_hf_spec_downloads_through_the_hub(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("huggingface_hub")
    loopback_only(monkeypatch)
    data = write_gguf(tmp_path / "hub-file.gguf").read_bytes()
    repo, file = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF", "sub/smollm2-135m-instruct-q8_0.gguf"
    with serve(FakeHub(files={(repo, file): data}), monkeypatch) as hub:
        model = resolve_model(f"hf:{repo}/{file}")
    assert any(f"/{repo}/resolve/main/{file}" in request for request in hub.requests)
    assert model.path.read_bytes() == data
    assert model.label == f"hf:{repo}/{file}"
    assert model.prompt_style == "chat"


def test_hf_offline_is_a_user_error(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("huggingface_hub")
    loopback_only(monkeypatch)
    monkeypatch.setenv("HF_ENDPOINT", refused_endpoint())
    with pytest.raises(UserError) as info:
        resolve_model("hf:org/repo/model.gguf")
    message = str(info.value)
    assert message.startswith("hf:org/repo/model.gguf: cannot reach the Hugging Face Hub")
    assert "(offline?)" in message
    assert "Connection refused" in message
    assert "\n" not in message


def test_hf_without_the_package(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import raises ImportError
    with pytest.raises(UserError, match=r"pip install 'edgebench\[hf\]'"):
        resolve_model("hf:org/repo/model.gguf")


@pytest.mark.parametrize("spec", ["hf:org/model.gguf", "hf:", "hf:org//x.gguf"])
def test_bad_hf_spec(cache: Path, spec: str) -> None:
    with pytest.raises(UserError, match=r"expected hf:OWNER/REPO/FILE\.gguf"):
        resolve_model(spec)
