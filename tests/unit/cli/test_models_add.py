"""`models add hf:...` against a local fake Hub (tests/helpers/fake_hub.py): the entry it
writes, then `models pull NAME`; each mistake in one line; offline `models pull`, `models
info`, `models add` and `run --model hf:...` in one line within a second."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models.registry import get_entry, load_entry
from tests.helpers.cli import assert_one_line_error, cli_error, run_cli, stdout_of
from tests.helpers.fake_hub import COMMIT, FakeHub, record_attempts, refused_endpoint, serve
from tests.helpers.gguf_factory import build_gguf, entry_toml, isolate, user_registry

pytest.importorskip("huggingface_hub")

REPO = "Qwen/Qwen2.5-0.5B-Instruct-GGUF"
FILE = "qwen2.5-0.5b-instruct-q4_k_m.gguf"
SPEC = f"hf:{REPO}/{FILE}"
CONTENT = build_gguf({"general.architecture": "qwen2"}) + b"\x00" * 512


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path) / "models"


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch, network: list[str]) -> Iterator[FakeHub]:
    card = {"license": "apache-2.0", "base_model": "Qwen/Qwen2.5-0.5B-Instruct"}
    with serve(FakeHub(files={(REPO, FILE): CONTENT}, card=card), monkeypatch) as hub:
        yield hub


def test_add_writes_a_pinned_entry_that_pull_fetches(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cache: Path, fake_hub: FakeHub
) -> None:
    out = stdout_of(capsys, "models", "add", SPEC)
    path = Path(out.strip())
    assert path == tmp_path / "user-registry" / "qwen2.5-0.5b-instruct-q4_k_m.toml"
    entry = load_entry(path)
    assert (entry.name, entry.family, entry.params) == (path.stem, "qwen2.5", "0.5B")
    assert (entry.quantization, entry.license, entry.tuning) == ("Q4_K_M", "apache-2.0", "instruct")
    assert entry.base_model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert entry.prompt_style == "chat"
    assert (entry.file, entry.size_bytes) == (FILE, len(CONTENT))
    source = entry.source
    assert (source.kind, source.repo, source.file, source.revision) == ("hf", REPO, FILE, COMMIT)
    pulled = Path(stdout_of(capsys, "models", "pull", entry.name).strip())
    assert pulled == cache / FILE
    assert pulled.read_bytes() == CONTENT
    listed = json.loads(stdout_of(capsys, "models", "list", "--json"))
    assert {"name": entry.name, "cached": True}.items() <= next(
        row for row in listed if row["name"] == entry.name
    ).items()


def test_add_resolves_a_tag_to_its_commit_and_takes_a_name(
    capsys: pytest.CaptureFixture[str], fake_hub: FakeHub
) -> None:
    stdout_of(capsys, "models", "add", SPEC, "--name", "qwen-small", "--revision", "v1")
    assert get_entry("qwen-small").source.revision == COMMIT


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["hf:Qwen/only-two"], "expected hf:OWNER/REPO/FILE.gguf"),
        (["hf:Qwen/r/../x.gguf"], "expected hf:OWNER/REPO/FILE.gguf"),
        ([f"hf:{REPO}/README.md"], "only GGUF files"),
        (["models/mine.gguf"], "models add takes hf:OWNER/REPO/FILE.gguf"),
        ([SPEC, "--name", "Big Model"], "--name: 'Big Model' is not a valid model name"),
        ([SPEC, "--name", "smollm2-135m-instruct"], "exists already"),
        ([f"hf:Qwen/nope-GGUF/{FILE}"], "no such repo"),
        ([f"hf:{REPO}/nope.gguf"], "no such file in the repo"),
        ([SPEC, "--revision", "v9"], "no such revision"),
    ],
)
def test_add_mistakes_are_one_line(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    fake_hub: FakeHub,
    args: list[str],
    fragment: str,
) -> None:
    assert fragment in cli_error(capsys, "models", "add", *args)
    assert not list((tmp_path / "user-registry").glob("*.toml"))


def test_a_name_in_the_user_registry_is_taken_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fake_hub: FakeHub
) -> None:
    stdout_of(capsys, "models", "add", SPEC)
    err = cli_error(capsys, "models", "add", SPEC)
    assert "'qwen2.5-0.5b-instruct-q4_k_m' exists already" in err
    assert "--name" in err


def test_pull_of_an_hf_spec_prints_the_cached_path(
    capsys: pytest.CaptureFixture[str], cache: Path, fake_hub: FakeHub
) -> None:
    path = Path(stdout_of(capsys, "models", "pull", SPEC).strip())
    assert path.read_bytes() == CONTENT
    assert path.is_relative_to(cache / "hf")


def _dataset(folder: Path) -> Path:
    """A valid one-row EdgeJSON dataset (so `run` gets as far as the model)."""
    (folder / "schemas" / "simple").mkdir(parents=True)
    (folder / "schemas" / "simple" / "s.json").write_text('{"type": "object"}')
    row = {"id": "r1", "schema_id": "s", "prompt": "p", "expected_output": {}}
    path = folder / "data.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def _hf_registry_entry(tmp_path: Path) -> None:
    head = entry_toml("qwen", CONTENT).split("[source]")[0]
    source = f'[source]\nkind = "hf"\nrepo = "{REPO}"\nfile = "{FILE}"\nrevision = "{COMMIT}"\n'
    (user_registry(tmp_path) / "qwen.toml").write_text(head + source)


@pytest.mark.parametrize(
    "args",
    [
        ["models", "pull", SPEC],
        ["models", "info", SPEC],
        ["models", "add", SPEC],
        ["models", "pull", "qwen"],
        ["run", "--model", SPEC, "--dataset", "DATASET"],
    ],
    ids=["pull-spec", "info", "add", "pull-entry", "run"],
)
def test_offline_is_one_line_at_once(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    network: list[str],
    args: list[str],
) -> None:
    endpoint = refused_endpoint()
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    _hf_registry_entry(tmp_path)
    dataset = _dataset(tmp_path)
    args = [str(dataset) if a == "DATASET" else a for a in args]
    attempts = record_attempts(monkeypatch, endpoint)
    code, err = run_cli(capsys, *args)
    assert_one_line_error(code, err, "cannot reach the Hugging Face Hub", "(offline?)")
    assert len(attempts.connects) == 1 and attempts.sleeps == []  # no retry, no wait


def test_an_hf_spec_is_never_answered_with_the_hf_form() -> None:
    with pytest.raises(UserError) as info:
        get_entry("hf:owner/repo/m.gguf")
    assert "or give" not in str(info.value)
    assert "edgebench models add hf:owner/repo/m.gguf" in str(info.value)
