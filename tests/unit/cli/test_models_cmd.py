"""`edgebench models list|pull|info` through Typer's test runner (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from edgebench.cli.models_cmd import models_app
from edgebench.errors import UserError
from tests.helpers.gguf_factory import setup_tiny_model, write_gguf

runner = CliRunner()


@pytest.fixture(autouse=True)
def _registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    setup_tiny_model(monkeypatch, tmp_path)


def test_list_shows_registry_and_cache_state() -> None:
    before = runner.invoke(models_app, ["list"])
    assert before.exit_code == 0, before.output
    assert "smollm2-135m-instruct *" in before.output
    assert "gemma3-270m" in before.output
    tiny_row = next(line for line in before.output.splitlines() if "tiny" in line)
    assert "no" in tiny_row
    assert runner.invoke(models_app, ["pull", "tiny"]).exit_code == 0
    after = runner.invoke(models_app, ["list"])
    assert "yes" in next(line for line in after.output.splitlines() if "tiny" in line)


def test_pull_prints_the_path() -> None:
    result = runner.invoke(models_app, ["pull", "tiny"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().endswith("tiny.gguf")


def test_info_json_for_a_path(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "local.gguf")
    result = runner.invoke(models_app, ["info", str(path), "--json"])
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["architecture"] == "llama"
    assert facts["quantization"] == "Q4_1"
    assert facts["context_length"] == 2048
    assert facts["chat_template"] is True
    assert facts["vocab_size"] == 8
    assert facts["parameter_count"] == 36
    assert facts["file_size_bytes"] == path.stat().st_size
    assert len(facts["sha256"]) == 64
    assert facts["eos_token"] == "<|im_end|>"


def test_info_table_for_a_pulled_model() -> None:
    runner.invoke(models_app, ["pull", "tiny"])
    result = runner.invoke(models_app, ["info", "tiny"])
    assert result.exit_code == 0, result.output
    assert "chat template" in result.output
    assert "Tiny Test Model" in result.output


def test_info_on_a_model_not_pulled_is_a_user_error() -> None:
    result = runner.invoke(models_app, ["info", "tiny"])
    assert isinstance(result.exception, UserError)
    assert "models pull tiny" in str(result.exception)


@pytest.mark.parametrize("command", ["list", "pull", "info"])
def test_help_shows_an_example(command: str) -> None:
    result = runner.invoke(models_app, [command, "--help"])
    assert result.exit_code == 0
    assert "Example: edgebench models" in result.output
