"""Rows whose expected output fails their own schema (runner/prepare.py): left out and
listed by default, the file refused with --strict-data; examples without an expected
answer are not checked. The DeepJSONEval case end to end is in test_public_deepjson.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.runfolder.records import InvalidDataRow, RunSettings
from edgebench.runner.prepare import invalid_data_warning, load_examples
from edgebench.tasks.base import Example
from edgebench.tasks.edgejson import EdgeJSONTask
from edgebench.tasks.expected import split_invalid

CART = {
    "type": "object",
    "properties": {"total": {"type": "number"}, "sent": {"type": "string", "format": "date"}},
    "required": ["total"],
}


def edgejson_file(root: Path, outputs: list[Any]) -> RunSettings:
    """An EdgeJSON file with one row per expected output (ids c1, c2 ...), schema `cart`."""
    (root / "schemas" / "simple").mkdir(parents=True)
    (root / "schemas" / "simple" / "cart.json").write_text(json.dumps(CART))
    rows = [
        {"id": f"c{i}", "schema_id": "cart", "prompt": "Cart", "expected_output": output}
        for i, output in enumerate(outputs, start=1)
    ]
    (root / "data.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return RunSettings(dataset=root / "data.jsonl", schemas=root / "schemas")


def test_edgejson_rows_that_fail_their_schema_are_left_out_and_listed(tmp_path: Path) -> None:
    """A `format` is an annotation here, as the edgejson family scores it by default."""
    settings = edgejson_file(tmp_path, [{"total": 1}, {"total": "9.5"}, {"total": 2, "sent": "x"}])
    examples, record = load_examples(EdgeJSONTask(), settings)
    assert [e.id for e in examples] == ["c1", "c3"]
    assert record.n_examples == 2 and record.n_invalid_data == 1
    assert record.invalid_rows == [InvalidDataRow("c2", "$.total: '9.5' is not of type 'number'")]
    assert invalid_data_warning(record) == (
        f"1 row(s) of {settings.dataset} left out: their expected output fails their own "
        "schema (c2; each id and error in manifest.json; --strict-data refuses the file)"
    )


def test_strict_data_refuses_the_file_naming_the_line(tmp_path: Path) -> None:
    settings = edgejson_file(tmp_path, [{"total": 1}, {"total": "9.5"}])
    strict = RunSettings(dataset=settings.dataset, schemas=settings.schemas, strict_data=True)
    with pytest.raises(UserError) as error:
        load_examples(EdgeJSONTask(), strict)
    assert str(error.value) == (
        f"{settings.dataset}:2: example 'c2': the expected output does not match its schema "
        "($.total: '9.5' is not of type 'number') (--strict-data)"
    )


def test_a_file_whose_every_row_fails_is_refused(tmp_path: Path) -> None:
    settings = edgejson_file(tmp_path, [{"total": "9.5"}])
    with pytest.raises(UserError, match=r"data.jsonl:1: example 'c1': .*\(every row fails"):
        load_examples(EdgeJSONTask(), settings)


def test_a_clean_file_warns_nothing(tmp_path: Path) -> None:
    examples, record = load_examples(EdgeJSONTask(), edgejson_file(tmp_path, [{"total": 1}]))
    assert len(examples) == 1 and record.invalid_rows == []
    assert invalid_data_warning(record) is None


def test_examples_without_an_expected_answer_are_not_checked() -> None:
    def example(expected: Any) -> Example:
        return Example("e", "t", "cart", CART, expected)

    valid, invalid = split_invalid([example(None), example({"total": "x"})])
    assert valid == [example(None)]
    assert invalid == [(example({"total": "x"}), "$.total: 'x' is not of type 'number'")]
