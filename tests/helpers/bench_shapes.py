"""The shape of bench.json files written through the fake backend: every object's keys
and every value's JSON type, for scenarios that cover how a bench ends (completed,
crashed, stopped, interrupted, two models, `--duration` with `--wait-cool`, a worker
that fails to load). `tests/unit/bench/data/bench_shapes.json` holds the shapes the
bench wrote before `BenchRecord` built it; `test_bench_shapes.py` holds it to them."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edgebench.bench.execute import BenchSettings, execute_bench
from edgebench.isolation import WorkerDied
from edgebench.runner.spec import ModelUnderTest
from tests.helpers.bench_fakes import SpeedWorkers, TimedWorker, bench_model
from tests.helpers.waits import FakeTime

GOLDEN = Path(__file__).parents[1] / "unit" / "bench" / "data" / "bench_shapes.json"


def shape(value: Any) -> Any:
    """Keys (sorted: JSON objects are unordered) and JSON types, recursively."""
    if isinstance(value, dict):
        return {key: shape(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [shape(item) for item in value]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"


# Values a machine decides, not the bench: CPU shares are None until a tick passes, and
# `git` is None outside a checkout (the golden was written from an export of main),
# `command` is whatever argv the test process has.
VOLATILE = ("cpu_others", "cpu_others_max", "cpu_steal", "cpu_steal_max", "git", "command")


def comparable(value: Any) -> Any:
    """A shape with the VOLATILE keys' shapes left out of the comparison."""
    if isinstance(value, dict):
        return {k: "*" if k in VOLATILE else comparable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [comparable(item) for item in value]
    return value


def _failing_load(model: ModelUnderTest, threads: int) -> Any:
    worker = SpeedWorkers()(model, threads)

    def load(n_ctx: int) -> Any:
        raise WorkerDied(-9, "load")

    worker.load = load
    return worker


def _timed(time: FakeTime) -> Callable[[ModelUnderTest, int], TimedWorker]:
    return lambda model, threads: TimedWorker(time, lambda t: 100.0 - t / 10)


def _scenarios() -> dict[str, tuple[dict[str, Any], list[ModelUnderTest], Any, FakeTime | None]]:
    cool = FakeTime(temperatures=(70.0, 50.0))
    return {
        "completed": (
            {"threads": (1, 2), "prompt_tokens": (64,), "gen_tokens": (16,), "repetitions": 3},
            [bench_model()],
            SpeedWorkers(),
            None,
        ),
        "crashed": (
            {"threads": (1, 2, 4), "prompt_tokens": (8,), "gen_tokens": (0,), "interleave": False},
            [bench_model()],
            SpeedWorkers(die_at=2),
            None,
        ),
        "stopped": (
            {"threads": (1, 2, 4), "prompt_tokens": (8,), "gen_tokens": (0,)},
            [bench_model()],
            SpeedWorkers(die_at=2),
            None,
        ),
        "interrupted": (
            {"threads": (1, 2), "prompt_tokens": (8,), "gen_tokens": (0,), "interleave": False},
            [bench_model()],
            SpeedWorkers(die_at=2, failure=KeyboardInterrupt()),
            None,
        ),
        "two_models": (
            {"threads": (1,), "prompt_tokens": (8,), "gen_tokens": (2,), "repetitions": 2},
            [bench_model(label="a"), bench_model(label="b", quantization="Q8_0")],
            SpeedWorkers(),
            None,
        ),
        "load_failed": (
            {"threads": (1,), "prompt_tokens": (8,), "gen_tokens": (0,)},
            [bench_model()],
            _failing_load,
            None,
        ),
        "duration_wait_cool": (
            {
                "threads": (1,),
                "prompt_tokens": (0,),
                "gen_tokens": (100,),
                "duration_s": 150.0,
                "cooldown_s": 1.0,
                "wait_cool": 55.0,
                "wait_cool_timeout": 60.0,
            },
            [bench_model()],
            _timed(cool),
            cool,
        ),
    }


def bench_shapes(tmp_path: Path) -> dict[str, Any]:
    """Each scenario's bench.json, as `shape` gives it."""
    shapes = {}
    for name, (chosen, models, factory, time) in _scenarios().items():
        out = tmp_path / f"{name}.json"
        # the failing scenarios raise: their file is what counts
        with contextlib.suppress(Exception, KeyboardInterrupt):
            execute_bench(
                BenchSettings(**chosen, out=out),
                models,
                worker_factory=factory,
                root=tmp_path,
                **({"waits": time.waits()} if time else {}),
            )
        shapes[name] = shape(json.loads(out.read_text()))
    return shapes


if __name__ == "__main__":  # writes the golden (run once, on the tree it describes)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        GOLDEN.write_text(json.dumps(bench_shapes(Path(folder)), indent=1) + "\n")
