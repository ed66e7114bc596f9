"""bench.json keeps its shape now that `BenchRecord` builds it: the same keys, of the
same JSON types, in every way a bench ends, as the dict-built file had
(tests/unit/bench/data/bench_shapes.json was written by the bench before the change)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.bench_shapes import GOLDEN, bench_shapes, comparable


def test_bench_json_has_the_shape_it_always_had(tmp_path: Path) -> None:
    golden = json.loads(GOLDEN.read_text())
    shapes = bench_shapes(tmp_path)
    assert list(shapes) == list(golden)
    for name, expected in golden.items():
        assert comparable(shapes[name]) == comparable(expected), name


@pytest.mark.parametrize("name", ["completed", "crashed", "duration_wait_cool"])
def test_every_bench_json_reads_back_as_its_record(tmp_path: Path, name: str) -> None:
    from edgebench.bench.execute import bench_json
    from edgebench.runfolder.records import BenchRecord

    bench_shapes(tmp_path)
    written = json.loads((tmp_path / f"{name}.json").read_text())
    assert bench_json(BenchRecord.from_json(written)) == written
