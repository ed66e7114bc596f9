"""What `card` and `report` write, and where: an unwritable or read-only folder (and a
full disk) is a one-line error naming the file; URLs in untrusted text never become
links in the card; plot links resolve for a card whose name has a space in it."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

from edgebench import io
from edgebench.errors import RunFailure, UserError
from edgebench.report.card import write_card
from edgebench.summary import load_run
from tests.helpers.cli import assert_one_line_error, run_cli
from tests.helpers.inline_prompts import chat_templates_in_process
from tests.helpers.pages import render_markdown
from tests.helpers.report_runs import make_run

URL_ID = "https://evil.example/id"
URL_MODEL = "www.evil.example/model"
URL_DATASET = "http://evil.example/data.jsonl"
MAIL = "mailto:admin@evil.example"
# What an autolinker takes for a link in a run of plain text: GFM's extended autolinks
# (`http://`, `www.`, an e-mail address), linkify's schemes (also `mailto:` and the
# protocol-relative `//host`) and its fuzzy domains (`evil.example`).
AUTOLINKABLE = re.compile(
    r"(?i)(?:(?:https?|ftp)://|(?:mailto|xmpp):|//\w|www\.|[\w.+-]+@[\w-]+\.\w|\w\.[^\W\d_]{2,})"
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with chat_templates_in_process():
        return make_run(
            tmp_path_factory.mktemp("safety") / "run",
            modes="none",
            first_id=f"{URL_ID} {MAIL}",
            model_label=URL_MODEL,
            dataset_path=URL_DATASET,
        )


def _body(card: Path) -> str:
    return card.read_text(encoding="utf-8").split("\n---\n", 1)[1]


def _text_runs(markdown: str) -> Iterator[str]:
    """The runs of plain text a linkifier scans: inline `text` tokens before escaped
    characters are joined back into them (markdown-it's linkify sees exactly these)."""
    parser = MarkdownIt("commonmark", {"html": True}).enable("table").disable("text_join")
    for token in parser.parse(markdown):
        for child in token.children or []:
            if child.type == "text":
                yield child.content


# -- case 9: URLs in untrusted card text ------------------------------------------------


def test_urls_in_untrusted_text_are_shown_but_never_linkable(run_dir: Path, tmp_path: Path) -> None:
    card = tmp_path / "card.md"
    write_card(load_run(run_dir), card, examples=1)
    body = _body(card)
    linkable = [run for run in _text_runs(body) if AUTOLINKABLE.search(run)]
    assert linkable == []
    page = render_markdown(body)
    assert not any(tag == "a" for tag, _ in page.tags)
    # Shown exactly as they are.
    for text in (URL_ID, URL_MODEL, URL_DATASET, MAIL):
        assert text in page.text, text


def test_the_checker_sees_a_bare_url() -> None:
    """The check above would catch each of the unescaped strings."""
    for text in (URL_ID, URL_MODEL, URL_DATASET, MAIL, "see evil.example"):
        assert any(AUTOLINKABLE.search(run) for run in _text_runs(text)), text


# -- case 13: plot links of a card whose name has a space -------------------------------


@pytest.mark.parametrize("name", ["my card.md", "card (v2) #1.md"])
def test_plot_links_resolve_for_a_card_name_with_spaces(
    name: str, run_dir: Path, tmp_path: Path
) -> None:
    card = tmp_path / name
    files = write_card(load_run(run_dir), card, examples=0)
    page = render_markdown(_body(card))
    sources = [attrs["src"] for tag, attrs in page.tags if tag == "img"]
    assert sources and len(sources) == len(files.plots)
    resolved = {tmp_path / unquote(src or "") for src in sources}
    assert resolved == set(files.plots)
    assert all(path.is_file() for path in resolved)


# -- case 6: unwritable folders, read-only run folders, a full disk ---------------------


# Both commands that write a file the user names.
EACH_OUTPUT = pytest.mark.parametrize(
    ("command", "option", "name"), [("card", "--out", "c.md"), ("report", "--html", "r.html")]
)


def _refuse(monkeypatch: pytest.MonkeyPatch, folder: Path, code: int) -> None:
    """`folder` cannot take new files: really (mode 0555) when not root; as root, where
    permissions do not bind, the writer's temporary file is refused with the same error."""
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    if os.geteuid() != 0 and code == errno.EACCES:
        return
    real = io.tempfile.mkstemp

    def mkstemp(*args: object, dir: str | os.PathLike[str], **kwargs: object) -> object:
        if Path(dir) == folder:
            raise OSError(code, os.strerror(code))
        return real(*args, dir=dir, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(io.tempfile, "mkstemp", mkstemp)


@pytest.fixture
def ro_run(tmp_path: Path, run_dir: Path) -> Iterator[Path]:
    """A copy of the run in a folder that is made read-only by the test."""
    copy = tmp_path / "ro-run"
    copy.mkdir()
    for item in run_dir.iterdir():
        if item.is_file():
            (copy / item.name).write_bytes(item.read_bytes())
    yield copy
    copy.chmod(0o755)


def test_card_on_a_read_only_run_folder_is_one_line(
    ro_run: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _refuse(monkeypatch, ro_run, errno.EACCES)
    code, err = run_cli(capsys, "card", str(ro_run))
    # A refused write is exit 1 whatever the reason (failures.py), as in a run.
    said = "cannot write (Permission denied)"
    assert_one_line_error(code, err, str(ro_run), said, exit_code=1)
    assert not list(ro_run.glob(".*tmp"))


@pytest.mark.parametrize(
    ("command", "option", "name", "code", "said", "exit_code"),
    [
        # A refused write is never the user's typing mistake: exit 1, full disk or not.
        ("card", "--out", "c.md", errno.EACCES, "cannot write (Permission denied)", 1),
        ("report", "--html", "r.html", errno.EACCES, "cannot write (Permission denied)", 1),
        ("report", "--html", "r.html", errno.ENOSPC, "cannot write (No space left", 1),
    ],
)
def test_card_and_report_into_a_folder_that_refuses_writes_are_one_line(
    command: str,
    option: str,
    name: str,
    code: int,
    said: str,
    exit_code: int,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    _refuse(monkeypatch, folder, code)
    status, err = run_cli(capsys, command, str(run_dir), option, str(folder / name))
    assert_one_line_error(status, err, str(folder), said, exit_code=exit_code)
    folder.chmod(0o755)
    assert list(folder.iterdir()) == []


@EACH_OUTPUT
def test_an_output_under_a_file_is_one_line(
    command: str,
    option: str,
    name: str,
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a folder")
    code, err = run_cli(capsys, command, str(run_dir), option, str(blocker / name))
    assert_one_line_error(code, err, str(blocker), "not a folder")


def test_write_failed_names_the_file_is_a_run_failure_and_stays_an_os_error(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "f"
    blocker.write_text("x")
    with pytest.raises(io.WriteFailed) as failed:
        io.write_text_atomic(blocker / "sub" / "card.md", "text")
    assert isinstance(failed.value, OSError) and failed.value.errno is not None
    assert str(failed.value).startswith(f"{blocker / 'sub' / 'card.md'}: cannot write (")
    assert isinstance(failed.value, RunFailure) and not isinstance(failed.value, UserError)
    assert failed.value.exit_code == 1
