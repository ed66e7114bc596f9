"""A hostile GGUF header does not take `edgebench models info` past 200 MB (issue 25, case
4: 64 MB of u16 metadata arrays took 1.4 GB). The child's peak RSS is measured the way
benchmarks/gguf_header_memory.py prints it, through the same functions."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers.scripts import load_script


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script("benchmarks/gguf_header_memory.py")


# u16 arrays at the acceptance size; a vocabulary of one-byte tokens (every length walked)
# smaller, for the test's time.
@pytest.mark.parametrize(("kind", "mb"), [("uint16", 64), ("strings", 16)])
def test_models_info_on_a_hostile_header_stays_under_200_mb(
    bench: ModuleType, tmp_path: Path, kind: str, mb: int
) -> None:
    path = bench.write_hostile_header(tmp_path / "hostile.gguf", mb, kind)
    assert path.stat().st_size >= mb << 20
    peak = bench.models_info_peak_mb(path, tmp_path / "cache")
    assert 10 < peak < bench.BOUND_MB == 200
