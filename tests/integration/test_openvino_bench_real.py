"""`edgebench bench` on SmolLM2's OpenVINO int4 folder: pp and tg rows timed by the
pipeline's PerfMetrics, the record saying so, memory and the runtime block. Uses the
folder `models convert` left in the model cache, else converts one into a cache of its
own first (about 1 minute); the bench itself takes about 15 s on 2 cores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from edgebench.paths import cache_dir
from edgebench.runtimes import OPENVINO
from tests.helpers.bench_report import completed_bench
from tests.helpers.cli import edgebench_ok as run_cli
from tests.helpers.needs import unavailable
from tests.helpers.openvino_real import convert_int4

pytestmark = pytest.mark.model

BASE = "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def int4_cache(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding the int4 folder: the user's when it has one, else a new one."""
    from edgebench.models.openvino_model import is_folder, variant_dir

    try:
        import openvino_genai  # noqa: F401
    except ImportError:
        unavailable("openvino-genai is not installed: pip install 'edgebench[openvino]'")
    if is_folder(variant_dir(BASE, "int4")):
        return cache_dir()
    cache = tmp_path_factory.mktemp("openvino-bench-cache")
    convert_int4(smollm2, cache)
    return cache


@pytest.fixture
def in_cache(int4_cache: Path) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDGEBENCH_CACHE", str(int4_cache))
        yield


def test_bench_rows_of_the_openvino_folder(in_cache: None, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    model = f"{BASE}@openvino-int4"
    args = ["-m", model, "-t", "2", "-p", "32", "-n", "8", "-r", "2", "-o", str(out)]
    done = run_cli("bench", *args)
    assert "pp32" in done.stdout and "tg8" in done.stdout and " ± " in done.stdout
    assert "OpenVINO GenAI rows: OpenVINO GenAI's own PerfMetrics" in " ".join(done.stdout.split())
    report = completed_bench(out, (2,), ("pp32", "tg8"))
    pp, tg = report["results"]
    for row in (pp, tg):
        assert row["repetitions"] == 2 and row["tok_s_mean"] > 1
        assert row["backend"] == "OpenVINO GenAI" and row["model"] == model
        assert 50 < row["peak_rss_mb"] < 2000
    # a batch of 32 prompt tokens is faster per token than decoding one at a time
    assert pp["tok_s_mean"] > tg["tok_s_mean"]
    assert report["settings"]["timing"] == {"openvino": OPENVINO.bench_timing}
    (worker,) = report["workers"]
    assert worker["runtime"]["openvino_genai"] and worker["runtime"]["inference_num_threads"] == 2
