"""`--device-name` on run, consistency and bench (else $EDGEBENCH_DEVICE_NAME, else the
hostname): recorded in the device's identity; a bad name is one line naming the option or
the variable, before anything is loaded or written. `compare` names each run's device by
name and short fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.system.identity import ENV_NAME
from tests.helpers.bench_fakes import SpeedWorkers, fake_start_worker
from tests.helpers.cli import assert_one_line_error, run_cli, stdout_of
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.gguf_factory import isolate, write_gguf
from tests.helpers.run_folder import manifest_of

PAYLOADS = [{"a": 1}, {"b": [1, 2]}]
ANSWERS = ['{"a": 1}', '{"b": [1, 2]}']
BAD = [
    ("", "the device name is empty"),
    ("a" * 65, "at most 64"),
    ("pi\x07", "control character"),
    ("lab/pi5", "may not hold '/'"),
]


@pytest.fixture(autouse=True)
def _no_name_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_NAME, raising=False)
    isolate(monkeypatch, tmp_path)


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    made = roundtrip_cli(capsys, monkeypatch, tmp_path, PAYLOADS)
    made.answer_with(FakeBackend(ANSWERS * 4))
    return made


def name_of(run_dir: Path) -> str:
    return manifest_of(run_dir)["device"]["identity"]["name"]


def test_run_records_the_name_given(cli: RoundtripCli) -> None:
    code, err = cli.start("run", "--device-name", "pi5-kitchen")
    assert code == 0, err
    assert name_of(cli.out) == "pi5-kitchen"


def test_the_option_wins_over_the_environment_which_wins_over_the_hostname(
    cli: RoundtripCli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_NAME, "from-env")
    code, err = cli.start("run", "--device-name", "from-option")
    assert code == 0, err
    assert name_of(cli.out) == "from-option"
    cli.out = tmp_path / "second"
    code, err = cli.start("run")
    assert code == 0, err
    assert name_of(cli.out) == "from-env"
    monkeypatch.delenv(ENV_NAME)
    cli.out = tmp_path / "third"
    code, err = cli.start("run")
    assert code == 0, err
    identity = manifest_of(cli.out)["device"]["identity"]
    assert identity["name"] == identity["hostname"]


def test_consistency_records_the_name_given(cli: RoundtripCli) -> None:
    cli.answer_with(FakeBackend(sampled=ANSWERS))
    args = ("--samples", "2", "--temperatures", "0.5", "--device-name", "lab-2")
    code, err = cli.start("consistency", *args)
    assert code == 0, err
    assert name_of(cli.out) == "lab-2"


@pytest.mark.parametrize("command", ["run", "consistency"])
@pytest.mark.parametrize(("name", "fragment"), BAD)
def test_a_bad_name_is_one_line_and_writes_nothing(
    cli: RoundtripCli, command: str, name: str, fragment: str
) -> None:
    code, err = cli.start(command, "--device-name", name)
    assert_one_line_error(code, err, "--device-name", fragment)
    assert not cli.out.exists()


@pytest.mark.parametrize(("name", "fragment"), BAD)
def test_a_bad_name_in_the_environment_is_one_line_naming_it(
    cli: RoundtripCli, monkeypatch: pytest.MonkeyPatch, name: str, fragment: str
) -> None:
    monkeypatch.setenv(ENV_NAME, name)
    code, err = cli.start("run")
    assert_one_line_error(code, err, ENV_NAME, fragment)
    assert not cli.out.exists()


def test_bench_records_the_name_and_refuses_a_bad_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_start_worker(monkeypatch, SpeedWorkers())
    model = str(write_gguf(tmp_path / "tiny.gguf"))
    out = tmp_path / "bench.json"
    args = ["bench", "--model", model, "-p", "8", "-n", "2", "-r", "1", "--out", str(out)]
    code, err = run_cli(capsys, *args, "--device-name", "lab/3")
    assert_one_line_error(code, err, "--device-name 'lab/3'", "may not hold '/'")
    assert not out.exists()
    code, err = run_cli(capsys, *args, "--device-name", "lab-3")
    assert code == 0, err
    assert json.loads(out.read_text())["device"]["identity"]["name"] == "lab-3"


def test_compare_names_the_device_of_each_run(
    cli: RoundtripCli, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    first = cli.out
    assert cli.start("run", "--device-name", "pi5-a")[0] == 0
    one = stdout_of(capsys, "compare", str(first))
    fingerprint = manifest_of(first)["device"]["identity"]["fingerprint"]
    assert f"on pi5-a · {fingerprint[:8]}" in one  # one device: said in the title
    cli.out = first.parent / "second"
    assert cli.start("run", "--device-name", "pi5-b")[0] == 0
    both = stdout_of(capsys, "compare", str(first), str(cli.out))
    assert "device" in both and "pi5-a · d" in both and "pi5-b · d" in both
    rows = json.loads(stdout_of(capsys, "compare", str(first), str(cli.out), "--json"))
    assert {row["device"] for row in rows} == {"pi5-a", "pi5-b"}
    assert {row["device_fingerprint"] for row in rows} >= {fingerprint}


@pytest.mark.parametrize(("name", "fragment"), BAD)
def test_plan_run_refuses_a_bad_name_before_any_cell(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, fragment: str
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('models = ["smollm2-135m-instruct"]\nconstraints = ["none"]\n')
    out = tmp_path / "results"
    code, err = run_cli(capsys, "plan", "run", str(plan), "--out", str(out), "--device-name", name)
    assert_one_line_error(code, err, "--device-name", fragment)
    assert not out.exists()
