"""Whole-file writes are atomic: a reader sees the old file or the new one, never half of
one, and a failed write leaves no temporary file behind."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from edgebench.io import (
    JsonlAppender,
    json_text,
    read_jsonl,
    write_bytes_atomic,
    write_json_atomic,
    write_jsonl_atomic,
    write_text_atomic,
)


def test_failed_rename_keeps_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = tmp_path / "card.md"
    card.write_text("old card")

    def refuse(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(card, "new card " * 1000)
    assert card.read_text() == "old card"
    assert [p.name for p in tmp_path.iterdir()] == ["card.md"]


def test_writes_replace_whole_files_with_normal_permissions(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "a" / "card.md", "é | ```")
        write_bytes_atomic(tmp_path / "plot.png", b"\x89PNG")
        write_json_atomic(tmp_path / "s.json", {"x": "é"})
    finally:
        os.umask(previous)
    assert (tmp_path / "a" / "card.md").read_text(encoding="utf-8") == "é | ```"
    assert (tmp_path / "plot.png").read_bytes() == b"\x89PNG"
    assert (tmp_path / "s.json").read_text(encoding="utf-8") == '{\n  "x": "é"\n}\n'
    # Readable by a web server or a colleague, not mkstemp's private 0600.
    assert stat.S_IMODE((tmp_path / "plot.png").stat().st_mode) == 0o644


def test_every_json_writer_escapes_lone_surrogates_as_the_run_log_does(tmp_path: Path) -> None:
    """A lone surrogate (valid JSON, "\\ud800") cannot be encoded as UTF-8: every writer
    escapes such a record, and it reads back the same; other text stays as it is."""
    records = [{"a": "\ud800", "b": "深度"}, {"a": "plain é"}]
    with JsonlAppender(tmp_path / "appended.jsonl") as log:
        for record in records:
            log.append(record)
    write_jsonl_atomic(tmp_path / "replaced.jsonl", records)
    assert (tmp_path / "replaced.jsonl").read_bytes() == (tmp_path / "appended.jsonl").read_bytes()
    assert read_jsonl(tmp_path / "replaced.jsonl") == records
    assert "plain é" in (tmp_path / "replaced.jsonl").read_text(encoding="utf-8")
    write_json_atomic(tmp_path / "whole.json", records[0])
    assert json.loads((tmp_path / "whole.json").read_text(encoding="utf-8")) == records[0]
    assert json_text({"b": "深度"}) == '{\n  "b": "深度"\n}\n'
