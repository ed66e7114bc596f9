"""Chat templates from model files are strangers' code: rendered in a throwaway process
with a memory cap and a time limit, a hostile one costs that process and ends in a
one-line error; a normal one renders as it would in this process."""

from __future__ import annotations

import time

import pytest

from edgebench.errors import UserError
from edgebench.prompts import STYLE_CHAT, PromptFormat, render_chat_template, render_isolated
from edgebench.tasks.base import Prompt

MESSAGES = [[{"role": "user", "content": "hi"}]]
# Far above what the 2 s render limit plus starting a process takes, far below a template
# left to run (the nested loop below is 10^10 iterations).
GENEROUS_S = 30.0


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            "{{ messages.__class__.__mro__ }}",
            "access to attribute '__class__' of 'list' object is unsafe",
        ),
        ("{{ 'x'.ljust(10**10) }}", "needed more than 1,024 MB to render"),
        ("{{ 'x' * 10**10 }}", "needed more than 1,024 MB to render"),
        ("{% for i in range(10**9) %}{% endfor %}", "Range too big"),
        ("{{ 1 / 0 }}", "ZeroDivisionError: division by zero"),
        ("{{ 2 ** 100000 }}", "Exceeds the limit (4300 digits)"),
        (
            "{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
            "did not finish rendering within 2 s",
        ),
    ],
)
def test_hostile_chat_templates_cost_a_throwaway_process(template: str, message: str) -> None:
    start = time.monotonic()
    with pytest.raises(UserError, match="chat template") as info:
        render_isolated(template, MESSAGES, bos_token=None, eos_token=None, timeout=2)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert time.monotonic() - start < GENEROUS_S


def test_a_normal_chat_template_renders_the_same_isolated() -> None:
    template = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
    rendered = render_isolated(template, MESSAGES * 2, bos_token=None, eos_token=None)
    assert rendered == ["<|user|>hi", "<|user|>hi"]
    here = render_chat_template(template, MESSAGES[0], bos_token=None, eos_token=None)
    assert rendered == [here, here]


def test_a_runs_prompts_are_rendered_isolated_and_a_hostile_template_is_refused() -> None:
    """`render_many` (what a run calls) goes through the throwaway process."""
    chatml = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
    fmt = PromptFormat(style=STYLE_CHAT, chat_template=chatml)
    prompts = [Prompt(system="Be terse.", user="Hi"), Prompt(system=None, user="Yo")]
    assert fmt.render_many(prompts) == [fmt.render(p) for p in prompts]
    # 2 GB: over the renderer's 1 GB cap, and bearable should it ever render here.
    hostile = PromptFormat(style=STYLE_CHAT, chat_template="{{ 'x' * 2 * 10**9 }}")
    with pytest.raises(UserError, match="needed more than 1,024 MB to render"):
        hostile.render_many(prompts)
