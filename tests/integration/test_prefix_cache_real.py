"""`--prefix-cache` on the real SmolLM2: the same outputs whatever the order of the
examples, prompt tokens served from the cache, and TTFT labelled warm."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.runfolder.records import RunSettings
from edgebench.runner.engine import execute
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.runner.request import RunRequest
from edgebench.tasks import get_task
from tests.helpers.run_folder import final_samples

pytestmark = pytest.mark.model

LIMIT = 10


def run(out: Path, reverse: bool) -> dict[str, dict]:
    settings = RunSettings(limit=LIMIT, threads=2, out=out, prefix_cache=True, max_tokens=48)
    task = get_task("edgejson")
    examples, info = load_examples(task, RunSettings())
    chosen = examples[:LIMIT]
    if reverse:
        chosen = chosen[::-1]
    result = execute(RunRequest(settings, [model_under_test(None)], task, chosen, info))
    assert result.summary.arms[0].perf.ttft_warm
    return {s["id"]: s for s in final_samples(out)}


def test_outputs_do_not_depend_on_the_order_and_the_prefix_is_served(
    smollm2: Path, tmp_path: Path
) -> None:
    forward = run(tmp_path / "forward", reverse=False)
    backward = run(tmp_path / "backward", reverse=True)
    assert forward.keys() == backward.keys()
    for key, sample in forward.items():
        assert sample["raw_output"] == backward[key]["raw_output"], key
    served = [s["cached_prompt_tokens"] for s in forward.values()]
    # The built-in file's first 10 rows repeat some schemas: those examples reuse a prefix.
    assert any(n > 100 for n in served) and all(
        n < s["prompt_tokens"] - 63 for n, s in zip(served, forward.values(), strict=True)
    )
