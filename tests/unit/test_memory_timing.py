"""Memory readings from /proc and the timing arithmetic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edgebench.backends.base import Generation
from edgebench.backends.llama_cpp import _cut_at_stop
from edgebench.runner.timing import compute_timings
from edgebench.system.memory import MemorySampler, read_status

STATUS = """Name:\tpython
VmHWM:\t  204800 kB
VmRSS:\t  102400 kB
RssAnon:\t   40960 kB
RssFile:\t   61440 kB
"""


def test_read_status_splits_anon_and_file(tmp_path: Path) -> None:
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "status").write_text(STATUS)
    values = read_status(42, proc_root=tmp_path)
    assert values == {
        "hwm": 200 * 2**20,
        "rss": 100 * 2**20,
        "anon": 40 * 2**20,
        "file": 60 * 2**20,
    }
    assert read_status(43, proc_root=tmp_path) is None


def test_sampler_reports_own_process_peak() -> None:
    sampler = MemorySampler(os.getpid()).start()
    ballast = bytearray(64 * 2**20)  # touch 64 MB
    ballast[::4096] = b"x" * len(ballast[::4096])
    sampler.sample()
    peak = sampler.stop()
    assert peak.peak_rss_mb >= 64
    if peak.source == "proc":
        assert peak.peak_rss_anon_mb is not None and peak.peak_rss_anon_mb >= 64


def gen(**kw) -> Generation:
    base = dict(
        text="",
        prompt_tokens=100,
        output_tokens=10,
        generated_tokens=11,
        finish_reason="stop",
        t_start=10.0,
        t_first_token=10.5,
        t_end=11.5,
    )
    base.update(kw)
    return Generation(**base)


def test_timings_from_timestamps() -> None:
    t = compute_timings(gen())
    assert t.ttft_s == pytest.approx(0.5)
    assert t.prefill_tok_s == pytest.approx(200.0)
    assert t.decode_tok_s == pytest.approx(10.0)  # 10 forward passes after the first token
    assert t.latency_s == pytest.approx(1.5)


def test_timings_without_tokens_have_no_rates() -> None:
    t = compute_timings(gen(t_first_token=None, generated_tokens=0, output_tokens=0))
    assert t.ttft_s is None and t.decode_tok_s is None and t.latency_s == pytest.approx(1.5)
    one = compute_timings(gen(generated_tokens=1, output_tokens=0, t_end=10.5))
    assert one.decode_tok_s is None and one.ttft_s == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("text", "start", "expected", "found"),
    [
        (b'{"a": 1}\n```', 0, b'{"a": 1}\n', True),
        (b'{"a": 1}\n``', 0, b'{"a": 1}\n``', False),
        (b"``` earlier ``` later", 10, b"``` earlier ", True),
    ],
)
def test_stop_string_cut(text: bytes, start: int, expected: bytes, found: bool) -> None:
    out = bytearray(text)
    assert _cut_at_stop(out, [b"```"], start) is found
    assert bytes(out) == expected


def test_tokens_forced_before_the_first_sample_are_not_decode_tokens() -> None:
    from edgebench.backends.base import Generation
    from edgebench.runner.timing import compute_timings

    gen = Generation(
        text="x",
        prompt_tokens=10,
        output_tokens=13,
        generated_tokens=13,
        finish_reason="stop",
        t_start=0.0,
        t_first_token=1.0,
        t_end=2.0,
        forced_tokens=5,
        forced_prefix_tokens=3,
    )
    # 13 tokens: 3 forced with the prompt, the first sampled one at t=1, 9 more by t=2.
    assert compute_timings(gen).decode_tok_s == 9.0


def test_sampler_paces_itself_by_what_it_can_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """With /proc (VmHWM, the exact peak) it samples slowly; with psutil only, often."""
    from edgebench.system import memory

    assert MemorySampler(os.getpid(), interval_s=0.5).interval_s == 0.5
    monkeypatch.setattr(memory, "read_status", lambda pid: {"hwm": 1})
    assert MemorySampler(os.getpid()).interval_s == memory.PROC_INTERVAL_S
    monkeypatch.setattr(memory, "read_status", lambda pid: None)
    assert MemorySampler(os.getpid()).interval_s == memory.PSUTIL_INTERVAL_S
