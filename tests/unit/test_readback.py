"""The bounded reader every read-back goes through, class by class: what is not a regular
file (FIFO, device, links to them, dangling links, folders), files over their limit
(sparse, so nothing is written), over-long integers, deep nesting, bytes that are not
UTF-8, torn and over-long JSONL lines. Each is one UserError line naming the file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from edgebench import readback
from edgebench.errors import UserError
from edgebench.tasks.formats.jsonl import jsonl_objects

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000


def fifo(path: Path) -> None:
    os.mkfifo(path)


def link_to_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_name("pipe"))
    path.symlink_to(path.with_name("pipe"))


def dangling(path: Path) -> None:
    path.symlink_to(path.with_name("nowhere"))


def folder(path: Path) -> None:
    path.mkdir()


def sparse(size: int) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        with path.open("wb") as handle:
            handle.truncate(size)

    return make


NOT_REGULAR = [
    (fifo, "is a FIFO, not a regular file"),
    (link_to_zero, "is a link to a character device"),
    (link_to_fifo, "is a link to a FIFO"),
    (dangling, "is a link to nothing"),
    (folder, "is a folder"),
]


def one_line(exc: pytest.ExceptionInfo[UserError], *fragments: str) -> None:
    message = str(exc.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize(("make", "fragment"), NOT_REGULAR)
def test_only_regular_files_are_read_and_nothing_blocks(
    make: Callable[[Path], None], fragment: str, tmp_path: Path
) -> None:
    path = tmp_path / "manifest.json"
    make(path)
    with pytest.raises(UserError) as exc:
        readback.read_json(path, "run file")
    one_line(exc, str(path), fragment)
    with pytest.raises(UserError) as exc:
        readback.jsonl_values(path, "run file")
    one_line(exc, str(path), fragment)
    with pytest.raises(UserError) as exc:
        readback.check_regular(path, "dataset")
    one_line(exc, str(path), fragment)


@pytest.mark.parametrize(
    ("read", "limit"),
    [
        (lambda p: readback.read_json(p, "run file"), readback.MAX_DOCUMENT_BYTES),
        (lambda p: readback.jsonl_values(p, "run file"), readback.MAX_JSONL_BYTES),
        (lambda p: readback.read_text(p, "plan file", 1 << 20), 1 << 20),
    ],
)
def test_a_file_over_its_limit_is_refused_before_it_is_read(
    read: Callable[[Path], object], limit: int, tmp_path: Path
) -> None:
    path = tmp_path / "big"
    sparse(limit + 1)(path)
    with pytest.raises(UserError) as exc:
        read(path)
    one_line(exc, str(path), "larger than the", "limit")


def test_a_file_that_lies_about_its_size_is_still_bounded() -> None:
    # /proc files say 0 bytes; reading stops at the limit all the same
    path = Path("/proc/self/maps")
    with pytest.raises(UserError) as exc:
        readback.read_bytes(path, "run file", limit=16)
    one_line(exc, "larger than the 16 bytes limit")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"a": ' + HUGE_INT + "}", "integer with 5000 digits, limit 4300"),
        ('{"a": -' + HUGE_INT + "}", "integer with 5000 digits"),
        ('{"a": ' + DEEP + "}", "nested too deeply"),
        ('{"a": ' + "[" * 300 + "]" * 300 + "}", "more than 200 levels"),
        ("{oops", "not valid JSON"),
        ("", "not valid JSON"),
    ],
)
def test_json_values_are_bounded(text: str, fragment: str, tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text(text)
    with pytest.raises(UserError) as exc:
        readback.read_json(path, "run file")
    one_line(exc, str(path), fragment)


def test_model_outputs_keep_the_parsers_own_bound(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    deep_ok = "[" * 500 + "]" * 500
    path.write_text('{"parsed": ' + deep_ok + "}\n" + '{"parsed": ' + DEEP + "}\n")
    with pytest.raises(UserError) as exc:
        readback.jsonl_values(path, "run file", nesting=readback.READ_BACK_ANY)
    one_line(exc, f"{path}: line 2", "nested too deeply")
    path.write_text('{"parsed": ' + deep_ok + "}\n")
    values, torn = readback.jsonl_values(path, "run file", nesting=readback.READ_BACK_ANY)
    assert len(values) == 1 and not torn


def test_nan_written_by_python_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "summary.json"
    path.write_text('{"a": NaN}')
    value = readback.read_json(path, "run file")
    assert value["a"] != value["a"]


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(b'{\n"a":\n"\xff"}')
    with pytest.raises(UserError) as exc:
        readback.read_json(path, "run file")
    one_line(exc, f"{path}:3", "not UTF-8")


def test_a_torn_last_line_is_left_out_and_said(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text('{"a": 1}\n\n{"a": 2}\n{"a": ' + HUGE_INT)
    values, torn = readback.jsonl_values(path, "run file")
    assert values == [(1, {"a": 1}), (3, {"a": 2})] and torn
    path.write_text('{"a": 1}\n{"a": ' + HUGE_INT + "}\n{}\n")
    with pytest.raises(UserError) as exc:
        readback.jsonl_values(path, "run file")
    one_line(exc, f"{path}: line 2", "integer with 5000 digits")


def test_an_over_long_line_is_refused_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(readback, "MAX_LINE_BYTES", 64)
    path = tmp_path / "timeline.jsonl"
    path.write_text('{"a": 1}\n{"a": "' + "x" * 200 + '"}\n')
    with pytest.raises(UserError) as exc:
        readback.jsonl_values(path, "run file")
    one_line(exc, f"{path}: line 2", "longer than the 64 bytes limit")


def test_jsonl_content_held_in_memory_reads_as_the_file_would() -> None:
    data = b'{"a": 1}\n{"a": 2}\n{"a": 3'
    assert readback.jsonl_bytes_values(data, "x.db") == [(1, {"a": 1}), (2, {"a": 2})]
    with pytest.raises(UserError, match=r"x.db: line 1: JSON nested too deeply"):
        readback.jsonl_bytes_values(DEEP.encode() + b"\n", "x.db")


def test_a_regular_file_reads(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text('\ufeff{"a": [1, 2]}')
    assert readback.read_json_object(path, "run file") == {"a": [1, 2]}
    link = tmp_path / "link.json"
    link.symlink_to(path)
    assert readback.read_json_object(link, "run file") == {"a": [1, 2]}
    path.write_text("[1]")
    with pytest.raises(UserError, match="must be a JSON object, got an array"):
        readback.read_json_object(path, "run file")


@pytest.mark.parametrize(("make", "fragment"), NOT_REGULAR[:3])
def test_the_dataset_reader_goes_through_it(
    make: Callable[[Path], None], fragment: str, tmp_path: Path
) -> None:
    path = tmp_path / "rows.jsonl"
    make(path)
    with pytest.raises(UserError) as exc:
        list(jsonl_objects(path))
    one_line(exc, str(path), "dataset file", fragment)
