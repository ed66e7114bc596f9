"""Registry entries of kind `hf` (and `local`) pulled through the real huggingface_hub from
a local fake Hub (tests/helpers/fake_hub.py), never the real network: sha256 checked,
a wrong file not kept, offline and unknown repo/file in one line at once."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models.fetch import cache_state, pull
from edgebench.models.registry import get_entry, load_entry
from edgebench.models.resolve import resolve_model
from tests.helpers.fake_hub import COMMIT, FakeHub, record_attempts, refused_endpoint, serve
from tests.helpers.gguf_factory import build_gguf, entry_toml, isolate, user_registry

pytest.importorskip("huggingface_hub")

REPO = "owner/tiny-GGUF"
FILE = "tiny-q4_k_m.gguf"
CONTENT = build_gguf({"general.architecture": "llama"}) + bytes(range(256)) * 8


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path) / "models"


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch, network: list[str]) -> Iterator[FakeHub]:
    with serve(FakeHub(files={(REPO, FILE): CONTENT}), monkeypatch) as hub:
        yield hub


def hf_entry(
    tmp_path: Path, name: str = "tiny", *, content: bytes = CONTENT, **source: str
) -> Path:
    """A registry entry of kind hf for `content` (its sha256 and size) in the user folder."""
    head = entry_toml(name, content).split("[source]")[0]
    fields = {"kind": "hf", "repo": REPO, "file": FILE, "revision": COMMIT, **source}
    body = "".join(f'{key} = "{value}"\n' for key, value in fields.items())
    path = user_registry(tmp_path) / f"{name}.toml"
    path.write_text(f"{head}[source]\n{body}")
    return path


@pytest.mark.parametrize("cdn", [False, True], ids=["direct", "cdn-redirect"])
def test_pull_an_hf_entry_checks_its_sha256(
    cache: Path, tmp_path: Path, fake_hub: FakeHub, cdn: bool
) -> None:
    fake_hub.cdn = cdn
    hf_entry(tmp_path)
    path = pull("tiny")
    assert path == cache / "tiny.gguf"
    assert path.read_bytes() == CONTENT
    assert cache_state(get_entry("tiny")) == "yes"
    assert any(f"/resolve/{COMMIT}/{FILE}" in r for r in fake_hub.requests)
    # Nothing but the file and its hash sidecar stays in the cache (no temp folders).
    assert sorted(p.name for p in cache.iterdir()) == ["tiny.gguf", "tiny.gguf.sha256.json"]
    fake_hub.requests.clear()
    assert pull("tiny") == path  # verified in the cache: the Hub is not asked again
    assert fake_hub.requests == []


def test_a_wrong_sha256_is_one_line_and_the_file_is_not_kept(
    cache: Path, tmp_path: Path, fake_hub: FakeHub
) -> None:
    other = bytes(reversed(CONTENT))  # same size, other bytes
    hf_entry(tmp_path, content=other)
    with pytest.raises(UserError) as info:
        pull("tiny")
    message = str(info.value)
    assert "sha256 mismatch" in message
    assert hashlib.sha256(CONTENT).hexdigest() in message
    assert "\n" not in message
    assert list(cache.iterdir()) == []  # neither the file nor a temp folder


def test_a_wrong_size_is_one_line(cache: Path, tmp_path: Path, fake_hub: FakeHub) -> None:
    hf_entry(tmp_path, content=CONTENT + b"x")
    with pytest.raises(UserError, match=r"the file has \d+ bytes, the registry expects"):
        pull("tiny")
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ({"repo": "owner/nope"}, "no such repo"),
        ({"file": "nope.gguf"}, "no such file in the repo"),
        ({"revision": "v9"}, "no such revision"),
    ],
)
def test_unknown_repo_file_or_revision_is_one_line(
    cache: Path, tmp_path: Path, fake_hub: FakeHub, source: dict[str, str], problem: str
) -> None:
    hf_entry(tmp_path, **source)
    with pytest.raises(UserError) as info:
        pull("tiny")
    assert problem in str(info.value)
    assert "\n" not in str(info.value)


def test_offline_pull_is_one_line_at_once(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: list[str]
) -> None:
    endpoint = refused_endpoint()
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    hf_entry(tmp_path)
    attempts = record_attempts(monkeypatch, endpoint)
    with pytest.raises(UserError) as info:
        pull("tiny")
    assert len(attempts.connects) == 1 and attempts.sleeps == []  # no retry, no wait
    assert "cannot reach the Hugging Face Hub" in str(info.value)
    assert "(offline?)" in str(info.value)
    assert "\n" not in str(info.value)


def test_an_hf_spec_downloads_through_the_hub_cache(cache: Path, fake_hub: FakeHub) -> None:
    model = resolve_model(f"hf:{REPO}/{FILE}")
    assert model.path.read_bytes() == CONTENT
    assert model.path.is_relative_to(cache / "hf")
    assert model.label == f"hf:{REPO}/{FILE}"


def test_an_hf_spec_offline_uses_the_cached_copy(
    cache: Path, monkeypatch: pytest.MonkeyPatch, network: list[str]
) -> None:
    with serve(FakeHub(files={(REPO, FILE): CONTENT}), monkeypatch):
        first = resolve_model(f"hf:{REPO}/{FILE}").path
    monkeypatch.setenv("HF_ENDPOINT", refused_endpoint())
    assert resolve_model(f"hf:{REPO}/{FILE}").path.read_bytes() == first.read_bytes()
    with pytest.raises(UserError, match=r"hf:owner/tiny-GGUF/other\.gguf: cannot reach"):
        resolve_model(f"hf:{REPO}/other.gguf")


def test_hf_hub_offline_asks_nothing_and_uses_the_cache(
    cache: Path, monkeypatch: pytest.MonkeyPatch, network: list[str]
) -> None:
    with serve(FakeHub(files={(REPO, FILE): CONTENT}), monkeypatch) as hub:
        resolve_model(f"hf:{REPO}/{FILE}")
        hub.requests.clear()
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        assert resolve_model(f"hf:{REPO}/{FILE}").path.read_bytes() == CONTENT
        with pytest.raises(UserError, match="HF_HUB_OFFLINE is set"):
            resolve_model(f"hf:{REPO}/other.gguf")
    assert hub.requests == []


def test_a_local_entry_is_copied_and_checked(cache: Path, tmp_path: Path) -> None:
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "mine.gguf").write_bytes(CONTENT)
    head = entry_toml("mine", CONTENT).split("[source]")[0]
    # A relative path is read from the registry file's folder.
    path = user_registry(tmp_path) / "mine.toml"
    path.write_text(f'{head}[source]\nkind = "local"\npath = "../weights/mine.gguf"\n')
    assert pull("mine").read_bytes() == CONTENT
    (tmp_path / "weights" / "mine.gguf").unlink()
    with pytest.raises(UserError, match=r"the local file .*mine\.gguf does not exist"):
        pull("mine", force=True)


@pytest.mark.parametrize(
    ("source", "field", "problem"),
    [
        ('kind = "hf"\nrepo = "owner/r"\nfile = "f.gguf"\n', "source.revision", "missing"),
        (
            'kind = "hf"\nrepo = "nope"\nfile = "f.gguf"\nrevision = "main"\n',
            "source.repo",
            "OWNER/REPO",
        ),
        (
            'kind = "hf"\nrepo = "o/r"\nfile = "../f.gguf"\nrevision = "main"\n',
            "source.file",
            "inside",
        ),
        (
            'kind = "hf"\nrepo = "o/r"\nfile = "f"\nrevision = "main"\npackages = []\n',
            "source.packages",
            "not a field of kind 'hf'",
        ),
        ('kind = "local"\n', "source.path", "missing"),
        ('kind = "s3"\n', "source.kind", "pypi, hf, local"),
    ],
)
def test_bad_source_fields_name_the_field(
    tmp_path: Path, source: str, field: str, problem: str
) -> None:
    head = entry_toml("bad", CONTENT).split("[source]")[0]
    path = tmp_path / "bad.toml"
    path.write_text(f"{head}[source]\n{source}")
    with pytest.raises(UserError) as info:
        load_entry(path)
    assert f"field '{field}'" in str(info.value)
    assert problem in str(info.value)


def test_add_guesses_a_base_model_and_a_float_file() -> None:
    from edgebench.models.add import default_name, entry_text
    from edgebench.models.hub import FileFacts, HubFile

    target = HubFile("google/gemma-3-270m-GGUF", "full/gemma-3-270m-F16.gguf")
    facts = FileFacts(commit=COMMIT, size=10, sha256="a" * 64, license="", base_model="")
    text = entry_text(default_name(target.file), target, facts, {})
    assert 'name = "gemma-3-270m-f16"' in text
    assert 'params = "270M"' in text
    assert 'quantization = "F16"' in text
    assert 'license = "unknown"' in text
    assert 'prompt_style = "completion"' in text  # no instruct/chat/-it in the names
    assert "tuning" not in text and "base_model" not in text
    assert 'file = "gemma-3-270m-F16.gguf"' in text  # the cache holds plain names
    assert 'file = "full/gemma-3-270m-F16.gguf"' in text  # the repo path keeps its folder
