"""A GGUF key edgebench reads, stored with the wrong type (issue 25, case 5): `general.alignment`
as a string was a TypeError traceback in `models info`, `models check` (which then reported
none of the other files) and `run`. Now each is one line naming the file; `models check`
reports every file, this one `rejected`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.cli.app import main
from edgebench.doctor import model_check
from edgebench.doctor.model_check import OK, REJECTED, ModelCheck, check_models
from tests.helpers.cli import assert_one_line_error, run_cli, run_one_row
from tests.helpers.gguf_factory import isolate, sample_metadata, write_gguf

# "32" is what made `alignment <= 0` raise; llama.cpp aborts on any non-uint32 alignment.
MISTYPED = {"string": "32", "not a number": "abc", "float": 32.0, "array": [32]}
_TYPES = {"string": "string", "not a number": "string", "float": "float32", "array": "array"}


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate(monkeypatch, tmp_path)


def mistyped(tmp_path: Path, case: str) -> Path:
    meta = sample_metadata() | {"general.alignment": MISTYPED[case]}
    return write_gguf(tmp_path / f"{case.replace(' ', '_')}.gguf", meta)


@pytest.mark.parametrize("case", list(MISTYPED))
def test_models_info_is_one_line(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = mistyped(tmp_path, case)
    code, err = run_cli(capsys, "models", "info", str(path))
    message = f"general.alignment is stored as {_TYPES[case]}"
    assert_one_line_error(code, err, str(path), message, "llama.cpp reads only a uint32")


@pytest.mark.parametrize("case", list(MISTYPED))
def test_run_refuses_it_at_preparation_and_starts_no_worker(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str], workers_started: list[object]
) -> None:
    path = mistyped(tmp_path, case)
    code, err, out = run_one_row(capsys, tmp_path, path, "p")
    assert_one_line_error(code, err, path.name, "general.alignment is stored as")
    assert workers_started == [] and not out.exists()


def test_models_check_reports_it_and_every_other_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers_started: list[object]
) -> None:
    first = write_gguf(tmp_path / "first.gguf")
    bad = mistyped(tmp_path, "string")
    last = write_gguf(tmp_path / "last.gguf")
    with pytest.raises(SystemExit) as exit_info:
        main(["models", "check", "--no-load", "--json", str(first), str(bad), str(last)])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 1 and "Traceback" not in err
    verdicts = [(v["path"], v["verdict"]) for v in json.loads(out)]
    assert verdicts == [(str(first), OK), (str(bad), REJECTED), (str(last), OK)]
    assert "general.alignment is stored as string" in json.loads(out)[1]["detail"]


def test_models_check_loads_the_files_after_a_rejected_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded: list[Path] = []

    def load_each(files: list[tuple[Path, int]], timeout: float) -> dict[Path, ModelCheck]:
        loaded.extend(path for path, _ in files)
        return {path: ModelCheck(path, OK, "loads") for path, _ in files}

    monkeypatch.setattr(model_check, "_load_each", load_each)
    bad, good = mistyped(tmp_path, "float"), write_gguf(tmp_path / "good.gguf")
    results = check_models([bad, good])
    assert [r.verdict for r in results] == [REJECTED, OK] and loaded == [good]


def test_a_reader_failure_on_one_file_is_that_files_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the reader itself fail on some file (a bug), the other files are still
    checked and that file is `rejected` with the failure, not a traceback."""
    real = model_check.read_gguf
    bad, good = tmp_path / "bad.gguf", write_gguf(tmp_path / "good.gguf")
    bad.write_bytes(good.read_bytes())

    def read(path: Path) -> object:
        if path == bad:
            raise TypeError("'<=' not supported between instances of 'str' and 'int'")
        return real(path)

    monkeypatch.setattr(model_check, "read_gguf", read)
    results = check_models([bad, good], load=False)
    assert [r.verdict for r in results] == [REJECTED, OK]
    assert results[0].detail.startswith(f"the header reader failed on {bad}: TypeError")
