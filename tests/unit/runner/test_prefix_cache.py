"""`--prefix-cache` in the runner: each example's shared prompt prefix (everything before
its text), examples of one prefix run one after another, the prefix reaches the backend,
and the option is refused where no backend keeps a prefix."""

from __future__ import annotations

import json

import pytest

from edgebench.backends.base import DecodeSettings, Generation
from edgebench.backends.fake import FakeBackend
from edgebench.errors import UserError
from edgebench.io import read_jsonl
from edgebench.runner.prefixes import check_prefix_cache, grouped_by_prefix, shared_prefixes
from edgebench.tasks.edgejson import EdgeJSONTask
from tests.helpers.constraints import examples
from tests.helpers.fakes import fake_model
from tests.helpers.run_fake import RunFake


def test_the_prefix_is_the_prompt_up_to_the_examples_text() -> None:
    model, task, exs = fake_model(), EdgeJSONTask(), examples()
    prompts = model.prompt_format.render_many([task.build_prompt(ex) for ex in exs])
    prefixes = shared_prefixes(model.prompt_format, task, exs, prompts)
    for prefix, prompt, ex in zip(prefixes, prompts, exs, strict=True):
        assert prefix is not None and prefix.endswith("Text:\n")
        assert prompt == prefix + prompt[len(prefix) :] and ex.text not in prefix
    assert prefixes[0] == prefixes[2] != prefixes[1]  # e0, e2 share schema alpha


def test_examples_of_one_prefix_run_together_longest_prompt_first() -> None:
    prefixes = ["a", "b", "a", None, "b", "a"]
    tokens = [100, 100, 300, 50, 100, 100]
    # Groups in first-seen order (a, b, None); within a group the longest prompt first,
    # then the given order.
    assert grouped_by_prefix([0, 1, 2, 3, 4, 5], prefixes, tokens) == [2, 0, 5, 1, 4, 3]


def test_a_run_with_the_prefix_cache_groups_examples_and_sends_each_prefix(
    run_fake: RunFake,
) -> None:
    seen: list[tuple[str, str | None]] = []

    class Recording(FakeBackend):
        def generate(self, prompt: str, settings: DecodeSettings) -> Generation:
            seen.append((prompt.split("Text:\n")[1].split("\n")[0], settings.prefix))
            return super().generate(prompt, settings)

    llama = fake_model(backend="llama")
    result = run_fake(
        Recording(),
        task_impl=EdgeJSONTask(),
        examples=examples(),
        models=[llama],
        prefix_cache=True,
    )
    texts = [text for text, _ in seen]
    assert texts == ["one two", "five six", "three four"]  # alpha, alpha, beta
    assert all(prefix is not None and prefix.endswith("Text:\n") for _, prefix in seen)
    ids = [s["id"] for s in read_jsonl(result.run_dir / "samples.jsonl")]
    assert ids == ["e0", "e2", "e1"]
    plan = json.loads((result.run_dir / "manifest.json").read_text())["models"][0]["plan"]
    assert plan["decoding"]["prefix_cache"] is True


def test_without_the_option_no_prefix_is_sent(run_fake: RunFake) -> None:
    backend = FakeBackend()
    run_fake(backend, examples=examples(), task_impl=EdgeJSONTask())
    assert [s.prefix for s in backend.settings] == [None, None, None]


def test_the_prefix_cache_is_refused_where_no_backend_keeps_one() -> None:
    with pytest.raises(UserError, match=r"\(GGUF\) models; m runs on onnx"):
        check_prefix_cache([fake_model("m", backend="onnx")], ("none",))
    with pytest.raises(UserError, match="not outlines"):
        check_prefix_cache([fake_model("m", backend="llama")], ("none", "outlines"))
    check_prefix_cache([fake_model("m", backend="llama")], ("none", "mask", "mask+close"))
