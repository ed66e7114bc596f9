"""The reader of a round-trip corpus (tasks/formats/objects.py): one JSON object per line;
`edgebench run --task roundtrip` gives its errors as one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.tasks.formats.objects import read_objects
from tests.helpers.cli import cli_error
from tests.helpers.dataset_files import NO_MODEL


def test_objects_come_with_their_line_numbers_and_blank_lines_are_skipped(
    tmp_path: Path,
) -> None:
    objects = tmp_path / "objects.jsonl"
    objects.write_text('{"a": 1}\n\n{"b": [2]}\n')
    assert read_objects(objects) == [(1, {"a": 1}), (3, {"b": [2]})]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("o.jsonl", '{"a": NaN}\n', "o.jsonl:1: not valid JSON (NaN is not valid JSON)"),
        ("o.jsonl", "[[" * 60 + "]]" * 60 + "\n", "o.jsonl:1: not valid JSON (JSON nested too"),
        ("o.json", '{"a": 1}\n', "o.json: unsupported dataset format '.json' (roundtrip reads"),
    ],
)
def test_roundtrip_corpus_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(UserError, match=re.escape(message)):
        read_objects(path)
    err = cli_error(
        capsys, "run", "--task", "roundtrip", "--model", NO_MODEL, "--dataset", str(path)
    )
    assert message in err
