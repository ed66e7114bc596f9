"""Whole-file writes are atomic: a reader sees the old file or the new one, never half of
one, and a failed write leaves no temporary file behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from edgebench.io import write_bytes_atomic, write_json_atomic, write_text_atomic


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
