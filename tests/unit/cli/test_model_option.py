"""Issue 25 case 11: a model path may contain a comma. `--model` repeated takes each value
whole; in one value, commas separate models and `\\,` is a comma inside a path. The run
folder records the list so that `--resume` runs the same models."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.cli.run_cmd import join_models, parse_model_list
from edgebench.errors import UserError
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.run_folder import manifest_of

COMMA_PATH = "models/v1,v2/m.gguf"


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    cli = roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": 1}])
    cli.answer_with(FakeBackend())
    return cli


def run_models(cli: RoundtripCli, *args: str) -> list[str]:
    code, err = cli.start("run", *args)
    assert code == 0, err
    return [m["label"] for m in manifest_of(cli.out)["models"]]


@pytest.mark.parametrize(
    ("args", "models"),
    [
        (("--model", COMMA_PATH, "--model", "b"), [COMMA_PATH, "b"]),  # repeated: whole
        (("--model", COMMA_PATH, "--model", COMMA_PATH + "x"), [COMMA_PATH, COMMA_PATH + "x"]),
        (("--model", "models/v1\\,v2/m.gguf,b"), [COMMA_PATH, "b"]),  # escaped comma
        (("--model", "a,b"), ["a", "b"]),  # the comma list as before
        (("-m", "a", "-m", "b"), ["a", "b"]),
    ],
)
def test_a_comma_in_a_model_path_is_one_model(
    cli: RoundtripCli, args: tuple[str, ...], models: list[str]
) -> None:
    assert run_models(cli, *args) == models


def test_a_run_of_repeated_models_resumes_with_the_same_models(cli: RoundtripCli) -> None:
    assert run_models(cli, "--model", COMMA_PATH, "--model", "b") == [COMMA_PATH, "b"]
    code, err = cli.resume("run")
    assert code == 0, err
    assert [m["label"] for m in manifest_of(cli.out)["models"]] == [COMMA_PATH, "b"]
    assert manifest_of(cli.out)["status"] == "completed"


def test_repeated_models_round_trip_through_the_recorded_setting() -> None:
    values = [COMMA_PATH, "plain", "a\\,b"]
    assert parse_model_list(join_models(values)) == values
    assert join_models(["a,b"]) == "a,b"  # one value is kept as typed
    assert join_models(None) is None and parse_model_list(None) == [None]


def test_an_empty_model_name_is_a_one_line_error() -> None:
    with pytest.raises(UserError, match="or repeat --model"):
        parse_model_list("a,,b")
