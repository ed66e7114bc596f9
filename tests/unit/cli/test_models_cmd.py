"""`edgebench models list|pull|info|convert` in this process (no network): registry
models, converted ONNX variants, and the one-line errors of `convert`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from edgebench.cli.app import main
from edgebench.cli.models_cmd import models_app
from edgebench.errors import UserError
from edgebench.models.quantized import quantized_root
from edgebench.models.registry import load_registry
from tests.helpers.gguf_factory import setup_tiny_model, write_gguf
from tests.helpers.onnx_fakes import fake_converted

runner = CliRunner()


@pytest.fixture(autouse=True)
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty cache and a user registry with the model "tiny" (pip faked for it)."""
    return setup_tiny_model(monkeypatch, tmp_path).parent


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


def test_piped_list_lines_end_at_their_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped, the console is PIPED_WIDTH columns wide; a caption's lines still end at
    their text (they were padded with spaces to all 10,000), and no line is wider than
    its table."""
    from rich.cells import cell_len

    monkeypatch.delenv("COLUMNS", raising=False)
    quantized_root().mkdir(parents=True)  # a variant: the second table and its caption
    (quantized_root() / "tiny@Q2_K.gguf").write_bytes(b"GGUF")
    result = runner.invoke(models_app, ["list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    bottoms = [i for i, line in enumerate(lines) if line.startswith("└")]
    assert len(bottoms) == 2  # the models and the quantized variants
    widest = max(cell_len(line) for line in lines if line.startswith("┏"))
    assert max(cell_len(line) for line in lines) <= widest
    captions = [lines[bottoms[0] + 1], *lines[bottoms[1] + 1 :]]
    assert captions[0].startswith("* default model") and captions[-1].startswith("full sha256")
    assert [line for line in captions if line != line.rstrip()] == []


def test_list_json_gives_numbers_booleans_and_nulls() -> None:
    """`models list --json` is JSON a script reads without parsing strings (issue 37):
    sizes are numbers, `cached` a boolean, what is not known null."""
    # a quantized variant without its record: nothing known about it but its name
    quantized_root().mkdir(parents=True)
    (quantized_root() / "tiny@Q2_K.gguf").write_bytes(b"GGUF")

    def listed() -> dict[str, dict]:
        result = runner.invoke(models_app, ["list", "--json"])
        assert result.exit_code == 0, result.output
        return {row["name"]: row for row in json.loads(result.stdout)}

    rows = listed()
    tiny = rows["tiny"]
    assert tiny["cached"] is False and tiny["corrupt"] is False
    assert tiny["size_mb"] == pytest.approx(load_registry()["tiny"].size_bytes / 1e6)
    unknown = rows["tiny@Q2_K"]
    assert unknown["size_mb"] is None and unknown["family"] is None and unknown["license"] is None
    assert unknown["requantized"] is None and isinstance(unknown["cached"], bool)
    assert not [(r["name"], k) for r in rows.values() for k, v in r.items() if v == "-"]
    assert runner.invoke(models_app, ["pull", "tiny"]).exit_code == 0
    assert listed()["tiny"]["cached"] is True


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


# --- converted ONNX variants -------------------------------------------------------------


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


def test_missing_conversion_extras_are_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
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


def test_missing_openvino_extras_are_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib import metadata

    def version(name: str) -> str:
        if name in ("optimum-intel", "nncf"):
            raise metadata.PackageNotFoundError(name)
        return "1.0"

    monkeypatch.setattr("edgebench.models.openvino_convert.metadata.version", version)
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "convert", "smollm2-135m-instruct", "--to", "openvino"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "error: converting to OpenVINO needs optimum-intel, nncf: pip install 'edgebench[convert]'"
    )


def test_convert_to_openvino_prints_the_folder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI hands --to openvino to the OpenVINO conversion: progress on stderr, the
    folder on stdout."""
    from edgebench.models import openvino_convert
    from tests.helpers.openvino_export_fakes import fake_openvino_converted

    asked: list[tuple[str, str, bool, int | None]] = []

    def convert(name: str, precision: str, *, force: bool, threads: int | None, say):
        asked.append((name, precision, force, threads))
        say(f"{name}@openvino-{precision}: converting")
        folder = fake_openvino_converted(cache_root(), base=name, precision=precision)
        return openvino_convert.read_export(folder)

    monkeypatch.setattr(openvino_convert, "convert", convert)
    with pytest.raises(SystemExit) as done:
        main(["models", "convert", "tiny", "--to", "openvino", "--precision", "int8", "-t", "2"])
    assert not done.value.code
    captured = capsys.readouterr()
    assert asked == [("tiny", "int8", False, 2)]
    assert captured.out.strip().endswith("openvino/tiny-int8")
    assert "tiny@openvino-int8: converting" in captured.err


def cache_root() -> Path:
    from edgebench.paths import cache_dir

    return cache_dir()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--to", "tflite"],
            "--to: 'tflite' is not a supported target (supported: onnx, openvino)",
        ),
        (["--precision", "int8"], "--precision: 'int8' is not one of: fp32, int4"),
        (
            ["--to", "openvino", "--precision", "fp32"],
            "--precision: 'fp32' is not one of: int4, int8, fp16 (for --to openvino)",
        ),
        (["--to", "openvino", "--graph", "gqa"], "--graph: only for --to onnx"),
        (
            ["--to", "openvino", "--graph", "optimum", "--lm-head", "int4"],
            "--graph and --lm-head: only for --to onnx",
        ),
    ],
)
def test_convert_refuses_unknown_targets_and_precisions(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "convert", "smollm2-135m-instruct", *args])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip() == f"error: {message}"


def test_pulling_a_variant_says_it_is_converted_not_pulled(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "pull", "smollm2-135m-instruct@onnx-int4"])
    assert exit_info.value.code == 2
    assert "edgebench models convert smollm2-135m-instruct" in capsys.readouterr().err


def test_pulling_an_openvino_variant_says_the_convert_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "pull", "smollm2-135m-instruct@openvino-int4"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip() == (
        "error: 'smollm2-135m-instruct@openvino-int4' is not pulled but converted locally: "
        "edgebench models pull smollm2-135m-instruct && edgebench models convert "
        "smollm2-135m-instruct --to openvino --precision int4"
    )


def test_pulling_an_unknown_openvino_precision_names_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "pull", "smollm2-135m-instruct@openvino-fp32"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "unknown variant '@openvino-fp32'" in err and "openvino-int4" in err
    assert len(err.splitlines()) == 1


def test_models_list_shows_converted_openvino_folders(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers.openvino_export_fakes import fake_openvino_converted

    fake_openvino_converted(cache)
    broken = fake_openvino_converted(cache, precision="fp16")
    (broken / "openvino_model.bin").write_bytes(b"other weights")
    with pytest.raises(SystemExit) as done:
        main(["models", "list"])
    assert not done.value.code
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "@openvino-int4" in line)
    assert "openvino" in row and "int4" in row and "yes" in row
    row = next(line for line in out.splitlines() if "@openvino-fp16" in line)
    assert "corrupt" in row


def test_info_on_an_exported_openvino_folder_reads_its_provenance(tmp_path: Path) -> None:
    from edgebench.models.openvino_model import FOLDER_FILES, PROVENANCE

    folder = tmp_path / "smollm2-int4"
    folder.mkdir()
    for name in FOLDER_FILES:
        (folder / name).write_bytes(b"{}" if name.endswith(".json") else b"x" * 8)
    provenance = {
        "name": "smollm2-135m-instruct@openvino-int4",
        "source_gguf_sha256": "a" * 64,
        "precision": "int4",
        "weights_bytes": 8,
        "context_length": 8192,
        "source": {"architecture": "llama", "parameters": 134515008, "file": "s.gguf"},
        "quantization": {"method": "nncf.compress_weights", "bits": 4},
        "prompt": {"style": "chat", "chat_template": "{{ x }}"},
        "tools": {"openvino": "2026.4.1", "nncf": None},
    }
    (folder / PROVENANCE).write_text(json.dumps(provenance))
    result = runner.invoke(models_app, ["info", str(folder), "--json"])
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert facts["label"] == "smollm2-135m-instruct@openvino-int4"
    assert facts["format"] == "openvino" and facts["precision"] == "int4"
    assert facts["quantization"] == "nncf.compress_weights"
    assert facts["architecture"] == "llama" and facts["parameter_count"] == 134515008
    assert facts["context_length"] == 8192 and facts["chat_template"] is True
    assert facts["source_sha256"] == "a" * 64 and facts["file_size_bytes"] == 8
    assert facts["tools"] == "openvino 2026.4.1"


# --- models check, header only -------------------------------------------------------------


def test_check_without_loading_reads_headers_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--no-load: the pure-Python header check and nothing native; a bad file exits 1."""
    from edgebench.backends.worker import BackendWorker

    started: list[object] = []
    monkeypatch.setattr(BackendWorker, "__init__", lambda self, *a, **k: started.append(a))
    good = write_gguf(tmp_path / "good.gguf")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGML" + good.read_bytes()[4:])
    result = runner.invoke(models_app, ["check", "--no-load", "--json", str(good), str(bad)])
    assert result.exit_code == 1, result.output
    verdicts = json.loads(result.stdout)
    assert [(v["path"], v["verdict"]) for v in verdicts] == [
        (str(good), "ok"),
        (str(bad), "rejected"),
    ]
    assert verdicts[0]["detail"] == "header checked (not loaded)"
    assert verdicts[1]["detail"].startswith("not a GGUF file")
    assert started == []
