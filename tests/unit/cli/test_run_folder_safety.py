"""Issue 25 cases 8, 10 and 12 through the CLI on the fake model (tests/helpers/cli_model.py):
Ctrl-C before the first arm says what was kept and how to continue, and a hand-damaged run
folder (a samples line that is not an object, a manifest setting of the wrong type) is a
one-line error naming the file, the line and the field, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.backends.fake import FakeBackend
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.cli_model import RoundtripCli, roundtrip_cli
from tests.helpers.run_folder import manifest_of


class CtrlCWhileCounting(FakeBackend):
    """Ctrl-C arrives while the run counts tokens (before any arm starts)."""

    def count_tokens(self, prompts: list[str]) -> list[int]:
        raise KeyboardInterrupt


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    return roundtrip_cli(capsys, monkeypatch, tmp_path, [{"a": 1}, {"b": [2]}])


def last_line(err: str) -> str:
    return [line for line in err.strip().splitlines() if line.strip()][-1]


# -- case 8: Ctrl-C at any stage -----------------------------------------------------
def test_ctrl_c_while_counting_tokens_says_what_was_kept_and_how_to_continue(
    cli: RoundtripCli,
) -> None:
    cli.answer_with(CtrlCWhileCounting())
    code, err = cli.start("run")
    assert code == 130 and "Traceback" not in err
    assert last_line(err) == (
        f"interrupted: 0 completed examples kept in {cli.out}; "
        f"continue with: edgebench run --resume {cli.out}"
    )
    assert manifest_of(cli.out)["status"] == "interrupted"

    cli.answer_with(FakeBackend())  # the hint works: the resumed run finishes
    code, err = cli.resume("run")
    assert code == 0, err
    assert manifest_of(cli.out)["status"] == "completed"


def test_ctrl_c_while_a_resumed_run_counts_tokens_counts_the_kept_examples(
    cli: RoundtripCli,
) -> None:
    cli.answer_with(FakeBackend())
    assert cli.start("run")[0] == 0
    cli.answer_with(CtrlCWhileCounting())
    code, err = cli.resume("run")
    assert code == 130 and "Traceback" not in err
    assert last_line(err).startswith(f"interrupted: 2 completed examples kept in {cli.out};")
    assert len((cli.out / "samples.jsonl").read_text().splitlines()) == 2


def test_ctrl_c_before_the_run_folder_exists_says_nothing_was_written(
    cli: RoundtripCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from edgebench.runner import start

    def interrupted(*args: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(start, "load_examples", interrupted)
    cli.answer_with(FakeBackend())
    code, err = cli.start("run")
    assert code == 130 and "Traceback" not in err
    assert last_line(err) == "interrupted: before the run folder was made; nothing was written"
    assert not cli.out.exists()


def test_ctrl_c_while_a_consistency_run_counts_tokens_gives_its_resume_hint(
    cli: RoundtripCli,
) -> None:
    cli.answer_with(CtrlCWhileCounting())
    code, err = cli.start("consistency", "--samples", "2", "--temperatures", "0.5")
    assert code == 130 and "Traceback" not in err
    assert f"continue with: edgebench consistency --resume {cli.out}" in last_line(err)


def test_ctrl_c_during_a_bench_says_where_what_was_measured_is_kept(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from edgebench.bench import execute as bench
    from tests.helpers.bench_fakes import SpeedWorkers
    from tests.helpers.gguf_factory import isolate, write_gguf

    isolate(monkeypatch, tmp_path)
    workers = SpeedWorkers(die_at=2, failure=KeyboardInterrupt())
    monkeypatch.setattr(
        bench, "start_worker", lambda model, mode, **kw: workers(model, kw["threads"])
    )
    out = tmp_path / "bench.json"
    model = str(write_gguf(tmp_path / "tiny.gguf"))
    code, err = run_cli(
        capsys, "bench", "-m", model, "-t", "1,2", "-p", "8", "-n", "0", "-o", str(out)
    )
    assert code == 130 and "Traceback" not in err
    assert last_line(err) == f"interrupted: what was measured is kept in {out}"
    assert json.loads(out.read_text())["status"] == "interrupted"


# -- case 10: a samples.jsonl line that is JSON but not an object ----------------------
@pytest.fixture
def finished(cli: RoundtripCli) -> RoundtripCli:
    cli.answer_with(FakeBackend())
    code, err = cli.start("run")
    assert code == 0, err
    return cli


@pytest.mark.parametrize("line", ["[1, 2]", '"text"', "3", "null"])
@pytest.mark.parametrize("command", ["report", "score", "compare", "card"])
def test_a_samples_line_that_is_not_an_object_is_a_one_line_error(
    finished: RoundtripCli, tmp_path: Path, command: str, line: str
) -> None:
    samples = finished.out / "samples.jsonl"
    rows = samples.read_text().splitlines()
    # A blank line first: the error still names the line as an editor numbers it.
    samples.write_text(rows[0] + "\n\n" + line + "\n" + rows[1] + "\n")
    args = [str(finished.out)] * (2 if command == "compare" else 1)
    if command == "report":
        args += ["--html", str(tmp_path / "report.html")]
    if command == "card":
        args += ["--out", str(tmp_path / "card.md")]
    code, err = run_cli(finished.capsys, command, *args)
    assert_one_line_error(code, err, "expected an object")
    assert f"{samples}:3:" in " ".join(err.split())


def test_a_samples_line_missing_a_field_names_file_line_and_field(
    finished: RoundtripCli,
) -> None:
    samples = finished.out / "samples.jsonl"
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    del rows[1]["constraint"]
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, err = run_cli(finished.capsys, "score", str(finished.out))
    assert_one_line_error(code, err, f"{samples}:2:", "'constraint' is missing")


# -- case 12: a hand-damaged manifest setting ----------------------------------------
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("limit", "abc", "settings.limit: expected an integer, got a string"),
        ("threads", None, "settings.threads: expected an integer, got null"),
        ("constraints", "none", "settings.constraints: expected an array, got a string"),
        # The right type, a value the option refuses: named as the file's, not the option's.
        ("limit", 0, "settings.limit: 0 is below the minimum of 1"),
        ("threads", -2, "settings.threads: -2 is below the minimum of 1"),
        ("n_ctx", 1, "settings.n_ctx: 1 is below the minimum of 64"),
        ("timeout", -1, "settings.timeout: -1.0 is below the minimum of 0.1"),
        ("sample", 0, "settings.sample: 0 is below the minimum of 1"),
        ("parse", "zz", "settings.parse: --parse: unknown mode 'zz'"),
        ("delay", -5, "settings.delay: -5.0 is below the minimum of 0"),
        ("wait_cool_timeout", 0, "settings.wait_cool_timeout: 0.0 is below the minimum of 1"),
        ("wait_cool", -5, "settings.wait_cool: --wait-cool -5: give a temperature in °C"),
        ("retime", "often", "settings.retime: --retime: 'often' is not one of: contended, none"),
        ("retime_max", 0, "settings.retime_max: 0 is below the minimum of 1"),
    ],
)
def test_a_damaged_manifest_setting_is_a_one_line_error_on_resume(
    finished: RoundtripCli, field: str, value: Any, message: str
) -> None:
    path = finished.out / "manifest.json"
    manifest = manifest_of(finished.out)
    manifest["settings"][field] = value
    path.write_text(json.dumps(manifest))
    code, err = finished.resume("run")
    assert_one_line_error(code, err, str(path), message)


def test_every_jsonl_reader_refuses_a_line_that_is_not_an_object(tmp_path: Path) -> None:
    from edgebench.errors import UserError
    from edgebench.io import read_jsonl

    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n[1]\n')
    with pytest.raises(UserError, match=r"rows.jsonl: line 3: expected a JSON object$"):
        read_jsonl(path)
