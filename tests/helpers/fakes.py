"""A fake model, a minimal task scored by the real EdgeJSON family, and its examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from edgebench.backends.fake import FakeBackend
from edgebench.backends.worker import InProcessWorker
from edgebench.prompts import STYLE_COMPLETION, PromptFormat
from edgebench.runner.spec import ModelUnderTest
from edgebench.runner.workers import WorkerFactory
from edgebench.tasks.base import DEFAULT_STYLE, Example, Prompt, fill_template, prompt_template_for

# What the fake answers and what the examples expect: one word = one token.
RIGHT = '{"a": 1}'
WRONG = '{"a": 2}'
OBJECT_SCHEMA: dict[str, Any] = {"type": "object"}


class EchoTask:
    """A minimal `PromptingTask` (all the engine asks of a task): the prompt is the
    example text; scored by the EdgeJSON family."""

    name = "echo"
    prompt_template = "{text}"
    prompt_templates: ClassVar[dict[str, str]] = {
        "default": "{text}",
        "reference": "Reference: {text}",
    }
    metric_family = "edgejson"

    def build_prompt(self, example: Example, style: str = DEFAULT_STYLE) -> Prompt:
        return Prompt(
            system=None, user=fill_template(prompt_template_for(self, style), text=example.text)
        )


def example(index: int, *, text: str | None = None, expected: Any = None) -> Example:
    """Example `ex<index>`: a prompt of index + 2 words, complexity alternating."""
    return Example(
        id=f"ex{index}",
        text=text if text is not None else " ".join(["word"] * (index + 2)),
        schema_id="s",
        schema=OBJECT_SCHEMA,
        expected={"a": 1} if expected is None else expected,
        groups={"complexity": "simple" if index % 2 else "complex", "schema": "s"},
    )


def examples(n: int) -> list[Example]:
    return [example(i) for i in range(n)]


def fake_model(label: str = "fake-model", **changes: Any) -> ModelUnderTest:
    values: dict[str, Any] = {
        "label": label,
        "path": Path(f"/nonexistent/{label}.gguf"),
        "sha256": "0" * 64,
        "size_bytes": 1,
        "prompt_format": PromptFormat(style=STYLE_COMPLETION),
        "n_ctx_train": 4096,
        "backend": "fake",
        **changes,
    }
    return ModelUnderTest(**values)


def in_process(backend: FakeBackend) -> WorkerFactory:
    """Every arm's worker around the same backend object, in this process."""
    return lambda model, mode: InProcessWorker(backend)
