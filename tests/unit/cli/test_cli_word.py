"""What the CLI promises beside its help: base vs instruct shown and warned about, `--json`
on every command that prints results, `-o/--out` on every command that writes a file
(`report --html` kept as a hidden alias), in this process on the fake model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.cli.app import main
from edgebench.errors import UserError
from edgebench.models.registry import load_entry, tuning_of
from edgebench.runner.prepare import mixed_tuning_warning
from tests.helpers.cli import assert_one_line_error, cli_error, run_cli, stdout_of
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.fakes import fake_model
from tests.helpers.gguf_factory import TINY_GGUF, entry_toml, isolate

# --- base vs instruct ---------------------------------------------------------------------


def test_the_registry_says_gemma3_270m_is_a_base_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    isolate(monkeypatch, tmp_path)
    rows = {row["name"]: row for row in json.loads(stdout_of(capsys, "models", "list", "--json"))}
    assert rows["gemma3-270m"]["tuning"] == "base"
    assert rows["smollm2-135m-instruct"]["tuning"] == "instruct"
    monkeypatch.setenv("COLUMNS", "200")
    table = stdout_of(capsys, "models", "list")
    assert "tuning" in table
    assert "base" in next(line for line in table.splitlines() if "gemma3-270m" in line)


def test_models_info_says_base_or_instruct(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A file the registry does not know: its chat template decides (the tiny GGUF has one)."""
    isolate(monkeypatch, tmp_path)
    path = tmp_path / "local.gguf"
    path.write_bytes(TINY_GGUF)
    facts = json.loads(stdout_of(capsys, "models", "info", str(path), "--json"))
    assert facts["tuning"] == "instruct"


def test_the_registry_word_wins_over_the_chat_template(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(entry_toml("m", TINY_GGUF, tuning="base"))
    entry = load_entry(tmp_path / "m.toml")
    assert tuning_of(entry, has_chat_template=True) == "base"
    assert tuning_of(None, has_chat_template=True) == "instruct"
    assert tuning_of(None, has_chat_template=False) == "base"


def test_a_registry_tuning_that_is_neither_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "m.toml").write_text(entry_toml("m", TINY_GGUF, tuning="chat"))
    with pytest.raises(UserError, match=r"m\.toml:\d+: field 'tuning': 'chat' is not one of"):
        load_entry(tmp_path / "m.toml")


def test_the_warning_names_the_base_model_only_beside_an_instruct_one() -> None:
    base, instruct = fake_model("gemma", tuning="base"), fake_model("smol", tuning="instruct")
    warning = mixed_tuning_warning([instruct, base])
    assert warning is not None and warning.startswith("gemma is a base model")
    assert mixed_tuning_warning([base]) is None
    assert mixed_tuning_warning([instruct, fake_model("unknown")]) is None


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    return roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": 1}, {"b": 2}])


def _tuned(label: str | None) -> object:
    name = label or "fake-model"
    return fake_model(name, tuning="base" if "base" in name else "instruct")


def test_run_warns_once_when_a_base_model_meets_an_instruct_model(cli: RoundtripCli) -> None:
    from edgebench.runner import start

    cli.answer_with(FakeBackend(echo=True))
    cli.monkeypatch.setattr(start, "model_under_test", _tuned)
    code, err = cli.start("run", "--model", "smol,gemma-base")
    assert code == 0, err
    assert err.count("gemma-base is a base model") == 1


# --- --json wherever results are printed ---------------------------------------------------


def test_run_json_is_summary_json_on_stdout(cli: RoundtripCli) -> None:
    cli.answer_with(FakeBackend(echo=True))
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "--task",
                "roundtrip",
                "--dataset",
                str(cli.payloads),
                "-o",
                str(cli.out),
                "--json",
            ]
        )
    out = cli.capsys.readouterr().out
    assert not exit_info.value.code
    assert json.loads(out) == json.loads((cli.out / "summary.json").read_text())
    again = stdout_of(cli.capsys, "score", str(cli.out), "--json")
    assert json.loads(again)["arms"] == json.loads(out)["arms"]


# --- -o/--out wherever a file is written ----------------------------------------------------


def test_report_writes_with_out_and_keeps_html_as_a_hidden_alias(
    cli: RoundtripCli, tmp_path: Path
) -> None:
    cli.answer_with(FakeBackend(echo=True))
    assert cli.start("run")[0] == 0
    for option, name in (("-o", "a.html"), ("--out", "b.html"), ("--html", "c.html")):
        stdout_of(cli.capsys, "report", str(cli.out), option, str(tmp_path / name))
        assert (tmp_path / name).is_file()
    monkey_help = stdout_of(cli.capsys, "report", "--help")
    assert "--out" in monkey_help and "--html" not in monkey_help
    err = cli_error(
        cli.capsys, "report", str(cli.out), "--out", str(tmp_path / "x.html"), "--html", "y.html"
    )
    assert "give the page once" in err


@pytest.mark.parametrize(
    "command",
    [
        ("run",),
        ("consistency",),
        ("card",),
        ("report",),
        ("bench",),
        ("data", "grammars"),
        ("data", "generate", "edgejson"),
        ("data", "generate", "deepjson"),
    ],
    ids=" ".join,
)
def test_every_command_that_writes_a_file_takes_o(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    text = stdout_of(capsys, *command, "--help")
    assert "--out" in text and " -o " in text


@pytest.mark.parametrize(
    "command",
    [
        ("run",),
        ("consistency",),
        ("score",),
        ("compare",),
        ("models", "list"),
        ("models", "info"),
        ("models", "check"),
        ("data", "validate"),
    ],
    ids=" ".join,
)
def test_every_command_that_prints_results_takes_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert "--json" in stdout_of(capsys, *command, "--help")


def test_data_validate_json_lists_every_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "schemas" / "simple").mkdir(parents=True)
    (tmp_path / "schemas" / "simple" / "s.json").write_text('{"type": "object"}')
    row = {"id": "r1", "schema_id": "s", "prompt": "p", "expected_output": {}}
    (tmp_path / "test.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["data", "validate", str(tmp_path), "--json"])
    checks = json.loads(capsys.readouterr().out)
    assert checks and {"check", "status", "detail", "problems"} == set(checks[0])
    failed = any(check["status"] == "fail" for check in checks)
    assert (exit_info.value.code or 0) == (1 if failed else 0)


def test_a_bad_data_validate_task_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "data", "validate", "--task", "roundtrip")
    assert_one_line_error(code, err, "unknown task 'roundtrip'", "edgejson, deepjson")
