"""The converted-grammar cache keeps within its size limit, least recently used out
first, and never stores one grammar larger than its share."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edgebench.constraints import grammar_cache
from edgebench.constraints.grammar_cache import LIMIT_ENV, GrammarCache, limit_from_env
from edgebench.errors import UserError


def aged(cache: GrammarCache, name: str, text: str, when: int) -> None:
    """Store `name` and date its last use to `when` (seconds), as time passing would."""
    assert cache.put(name, text)
    os.utime(cache.folder / name, ns=(when * 10**9, when * 10**9))


def test_the_least_recently_used_grammars_go_first(tmp_path: Path) -> None:
    cache = GrammarCache(tmp_path, limit_bytes=800)  # 100 bytes per grammar at most
    for when, name in enumerate(["a.gbnf", "b.gbnf", "c.gbnf", "d.gbnf"], start=1):
        aged(cache, name, "x" * 100, when * 10)
    assert cache.get("a.gbnf") == "x" * 100  # a read makes `a` the most recent
    assert [p.name for _, _, p in cache.entries()] == ["b.gbnf", "c.gbnf", "d.gbnf", "a.gbnf"]
    tight = GrammarCache(tmp_path, limit_bytes=250)
    assert [p.name for p in tight.evict()] == ["b.gbnf", "c.gbnf"]
    assert sorted(p.name for p in tmp_path.glob("*.gbnf")) == ["a.gbnf", "d.gbnf"]
    assert sum(size for _, size, _ in tight.entries()) <= 250


def test_a_write_evicts_until_the_cache_fits(tmp_path: Path) -> None:
    cache = GrammarCache(tmp_path, limit_bytes=8 * 100)
    for when in range(12):
        aged(cache, f"g{when:02}.gbnf", "y" * 100, when)
    # eight fit; the oldest four went, the newest stayed
    assert sorted(p.name for p in tmp_path.glob("*.gbnf")) == [
        f"g{i:02}.gbnf" for i in range(4, 12)
    ]


def test_a_grammar_larger_than_its_share_is_not_stored(tmp_path: Path) -> None:
    cache = GrammarCache(tmp_path, limit_bytes=800)
    assert cache.put("big.gbnf", "z" * 101) is False
    assert cache.get("big.gbnf") is None and not list(tmp_path.iterdir())
    assert GrammarCache(tmp_path, limit_bytes=0).put("any.gbnf", "") is True  # empty fits
    assert GrammarCache(tmp_path, limit_bytes=0).put("one.gbnf", "a") is False  # 0: off


def test_an_unwritable_cache_does_not_fail_the_compile(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert GrammarCache(blocker / "grammars", 1 << 20).put("a.gbnf", "x") is False


def test_the_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LIMIT_ENV, raising=False)
    assert limit_from_env() == grammar_cache.DEFAULT_LIMIT_MB << 20 == 64 << 20
    monkeypatch.setenv(LIMIT_ENV, "0.5")
    assert limit_from_env() == 1 << 19
    for bad, said in [("lots", "'lots' is not a number of megabytes"), ("-1", "-1 is below 0")]:
        monkeypatch.setenv(LIMIT_ENV, bad)
        with pytest.raises(UserError) as info:
            limit_from_env()
        assert str(info.value) == f"{LIMIT_ENV}: {said}"
