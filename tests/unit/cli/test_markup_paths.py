"""Paths, run ids and model names are printed as text, never as Rich markup: a `[a]` in
`--out` is kept (in the path and the `--resume` hint) and a `[/x]` does not crash the
print, through run, score, compare, card and report."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.cli.app import main
from tests.helpers.cli_model import RoundtripCli
from tests.helpers.faults import DyingWorker

MODEL = "evil[/x][bold]model"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`edgebench ARGS` in this process: exit code, stdout, stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    return int(exit_info.value.code or 0), captured.out, captured.err


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> RoundtripCli:
    payloads = tmp_path / "payloads.jsonl"
    payloads.write_text("".join(f'{{"k": {i}}}\n' for i in range(3)))
    # A `[/x]` closing tag in a folder name, a `[a](...)` link-like tag in the run id.
    out = tmp_path / "a[/x]" / "x[a](...)"
    return RoundtripCli(capsys, monkeypatch, payloads, out)


def test_markup_in_paths_and_names_is_printed_as_it_is(
    cli: RoundtripCli, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = FakeBackend(default_output='{"k": 0}')
    cli.workers(lambda model, mode: DyingWorker(backend, marker="with value 1."))
    code, err = cli.start("run", "--model", MODEL)
    assert code == 0, err
    said = " ".join(err.split())
    assert "Traceback" not in err
    assert f"run folder: {cli.out}" in said
    # The hint is the path as a shell reads it back, brackets and parentheses kept.
    hint = f"edgebench run --resume {shlex.quote(str(cli.out))}"
    assert f"`{hint}` runs them again" in said
    assert shlex.split(hint)[-1] == str(cli.out)

    code, out, err = _cli(capsys, "score", str(cli.out))
    assert code == 0, err
    assert f"re-scored: {cli.out / 'summary.json'}" in " ".join(err.split())
    assert MODEL in out

    code, out, err = _cli(capsys, "compare", str(cli.out))
    assert code == 0, err
    assert MODEL in out and "x[a](...)" in out

    code, out, err = _cli(capsys, "card", str(cli.out))
    assert code == 0, err
    assert f"card: {cli.out / 'card.md'}" in out

    page = cli.out / "r[b](c).html"
    code, out, err = _cli(capsys, "report", str(cli.out), "--html", str(page))
    assert code == 0, err
    assert f"report: {page}" in out and page.is_file()


def test_an_error_naming_a_marked_up_path_keeps_it(
    cli: RoundtripCli, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = cli.out.parent / "gone[/x]"
    code, _out, err = _cli(capsys, "score", str(missing))
    assert code == 2 and "Traceback" not in err
    assert str(missing) in " ".join(err.split())


def test_models_check_prints_a_marked_up_file_name_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a short relative path: the table does not wrap it
    (tmp_path / "d[/x]").mkdir(parents=True)
    Path("d[/x]/m[a].gguf").write_bytes(b"not a gguf [/x]")
    code, out, err = _cli(capsys, "models", "check", "--no-load", "d[/x]/m[a].gguf")
    assert code == 1 and "Traceback" not in err, err
    assert "d[/x]/m[a].gguf" in out
