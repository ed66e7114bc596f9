"""The prompt prefix a schema's examples share, for the prefix cache (`--prefix-cache`).

A task writes each prompt as instructions, schema, then the example's text. Rendering the
same prompt with the text replaced by a marker shows exactly what comes before the text:
the system prompt, the instructions and the schema, as the model's template writes them.
That prefix depends only on the schema and the template, never on which examples run or
in what order, so the KV a backend keeps for it is the same in every run.
"""

from __future__ import annotations

from dataclasses import replace

from edgebench.constraints import engine_mode
from edgebench.errors import UserError
from edgebench.prompts import PromptFormat
from edgebench.runner.spec import ModelUnderTest
from edgebench.runtimes import RUNTIMES
from edgebench.tasks.base import DEFAULT_STYLE, Example, PromptingTask

_MARKER = "\x1eEDGEBENCH-TEXT\x1e"


def shared_prefixes(
    prompt_format: PromptFormat,
    task: PromptingTask,
    examples: list[Example],
    prompts: list[str],
    style: str = DEFAULT_STYLE,
) -> list[str | None]:
    """Per example, the rendered prompt's text (in the prompt `style` the run uses) before
    the example's own text; None where the task does not place the text in the prompt
    that way."""
    marked = prompt_format.render_many(
        [task.build_prompt(replace(example, text=_MARKER), style) for example in examples]
    )
    prefixes: list[str | None] = []
    for rendered, prompt in zip(marked, prompts, strict=True):
        head, found, _ = rendered.partition(_MARKER)
        prefixes.append(head if found and prompt.startswith(head) else None)
    return prefixes


def grouped_by_prefix(
    order: list[int], prefixes: list[str | None], prompt_tokens: list[int]
) -> list[int]:
    """`order` (example indices) with the examples of one prefix one after another, in
    the order each prefix first appears, longest prompt first within a group: a backend
    keeps fewer prefix tokens after a short prompt (it evaluates at least 64 after the
    cached part), so longest first lets every later example of the group reuse it."""
    first: dict[str | None, int] = {}
    for position, index in enumerate(order):
        first.setdefault(prefixes[index], position)
    position = {index: at for at, index in enumerate(order)}
    return sorted(order, key=lambda i: (first[prefixes[i]], -prompt_tokens[i], position[i]))


def check_prefix_cache(models: list[ModelUnderTest], modes: tuple[str, ...]) -> None:
    """Refuse `--prefix-cache` where no backend keeps a prefix: models of a runtime that
    declares none (ONNX), and the `outlines` mode (llama-cpp-python's own completion loop)."""
    keeping = [r for r in RUNTIMES.values() if r.prefix_cache]
    built_for = ", ".join(f"{r.label} ({r.model_format.upper()})" for r in keeping)
    for model in models:
        if model.backend not in {r.name for r in keeping}:
            raise UserError(
                f"--prefix-cache is built for {built_for} models; {model.label} runs on "
                f"{model.backend}"
            )
    if any(engine_mode(mode) == "outlines" for mode in modes):
        raise UserError("--prefix-cache is built for none, json, gbnf and mask, not outlines")
