"""The speed probe inside a worker, on the fake backend's virtual clock: rates, the order
of evaluations, the untimed depth fill, the statistics of a row."""

from __future__ import annotations

import pytest

from edgebench.backends.fake import FakeBackend, FakeTimings
from edgebench.backends.speed_test import SpeedPlan, SpeedTest, measure_speed, rate_stats
from edgebench.errors import UserError

TIMINGS = FakeTimings(per_prompt_token=0.002, per_output_token=0.01)


def fake() -> FakeBackend:
    backend = FakeBackend(timings=TIMINGS)
    backend.load(4096)
    return backend


def test_rates_come_from_the_probe_clock() -> None:
    backend = fake()
    plan = SpeedPlan((SpeedTest("pp", 512), SpeedTest("tg", 128)), repetitions=3, warmup=1)
    pp, tg = measure_speed(backend, plan, clock=backend.virtual_clock)
    assert pp.test.name == "pp512" and tg.test.name == "tg128"
    assert pp.tok_s == pytest.approx([500.0] * 3)  # 1 / 0.002 s per prompt token
    assert tg.tok_s == pytest.approx([100.0] * 3)  # 1 / 0.01 s per generated token
    row = tg.to_dict()
    assert row["tok_s_mean"] == pytest.approx(100.0) and row["tok_s_std"] == pytest.approx(0)
    assert len(row["cpu_others"]) == 3 and len(row["seconds"]) == 3


def test_order_warmup_then_round_robin_from_an_empty_cache() -> None:
    backend = fake()
    plan = SpeedPlan((SpeedTest("pp", 4), SpeedTest("tg", 3)), repetitions=2, warmup=1)
    measure_speed(backend, plan, clock=backend.virtual_clock)
    sizes = [len(tokens) for tokens in backend.evaluated]
    # warm-up pp4, warm-up tg3 (3 single steps), then pp4, tg3, pp4, tg3
    assert sizes == [4, 1, 1, 1] * 3
    pp_tokens = backend.evaluated[0]
    assert pp_tokens[0] == FakeBackend.VOCAB.bos  # a sequence starts with BOS
    assert all(0 <= t < FakeBackend.VOCAB.size for t in pp_tokens)
    assert backend.evaluated[4] == pp_tokens  # the same ids every repetition
    assert backend.cached == 0  # the cache is left empty


def test_depth_fills_the_cache_untimed() -> None:
    backend = fake()
    plan = SpeedPlan((SpeedTest("tg", 4, depth=100),), repetitions=2, warmup=0)
    (result,) = measure_speed(backend, plan, clock=backend.virtual_clock)
    assert result.test.name == "tg4 @ d100"
    assert result.tok_s == pytest.approx([100.0, 100.0])  # the depth prefill is not timed
    assert [len(t) for t in backend.evaluated] == [100, 1, 1, 1, 1] * 2


def test_rate_stats() -> None:
    stats = rate_stats([90.0, 100.0, 110.0])
    assert stats["tok_s_mean"] == pytest.approx(100.0)
    assert stats["tok_s_std"] == pytest.approx(10.0)  # sample std (n - 1), as llama-bench
    assert stats["tok_s_cv"] == pytest.approx(0.1)
    assert stats["tok_s_median"] == 100.0
    assert (stats["tok_s_min"], stats["tok_s_max"]) == (90.0, 110.0)
    assert rate_stats([100.0])["tok_s_std"] is None


def test_backend_without_speed_probe_is_a_user_error() -> None:
    class NoProbe:
        name = "plain"

    with pytest.raises(UserError, match="the plain backend cannot run `edgebench bench`"):
        measure_speed(NoProbe(), SpeedPlan((SpeedTest("tg", 1),)))  # type: ignore[arg-type]
