"""Model sidecars (a variant's provenance, an ONNX folder's provenance, the remembered
sha256 of a file) are read through the bounded reader: hostile ones are one line naming
the file (the provenance files) or simply not trusted (the hash record)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from edgebench.errors import UserError
from edgebench.models import hashing, quantized
from edgebench.models.onnx_model import PROVENANCE, read_provenance

DEEP = "[" * 100_000 + "]" * 100_000


def deep(path: Path) -> None:
    path.write_text('{"format": ' + DEEP + "}")


def huge_int(path: Path) -> None:
    path.write_text('{"format": ' + "9" * 5000 + "}")


def fifo(path: Path) -> None:
    os.mkfifo(path)


def zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


HOSTILE: list[tuple[Callable[[Path], None], str]] = [
    (deep, "nested too deeply"),
    (huge_int, "integer with 5000 digits"),
    (fifo, "is a FIFO"),
    (zero, "is a link to a character device"),
]


@pytest.mark.parametrize(("make", "fragment"), HOSTILE)
def test_a_hostile_onnx_provenance_is_one_line(
    make: Callable[[Path], None], fragment: str, tmp_path: Path
) -> None:
    make(tmp_path / PROVENANCE)
    with pytest.raises(UserError) as exc:
        read_provenance(tmp_path)
    assert str(tmp_path / PROVENANCE) in str(exc.value) and fragment in str(exc.value)


@pytest.mark.parametrize(("make", "fragment"), HOSTILE)
def test_a_hostile_variant_provenance_is_one_line(
    make: Callable[[Path], None], fragment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "m@Q8_0.json"
    monkeypatch.setattr(quantized, "provenance_file", lambda base, quant_type: record)
    make(record)
    with pytest.raises(UserError) as exc:
        quantized.read_quantized("m", "Q8_0")
    assert str(record) in str(exc.value) and fragment in str(exc.value)


@pytest.mark.parametrize(("make", "_fragment"), HOSTILE)
def test_a_hostile_hash_record_is_not_trusted(
    make: Callable[[Path], None], _fragment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    side = tmp_path / "m.gguf.sha256.json"
    monkeypatch.setattr(hashing, "sidecar_path", lambda path: side)
    make(side)
    assert hashing.remembered_sha256(model) is None
