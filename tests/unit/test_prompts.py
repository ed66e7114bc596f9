"""Prompt rendering in this process: chat templates from model files (sandboxed) and
completion prompts. The isolated renderer a run uses: tests/system/test_hostile_templates.py."""

from __future__ import annotations

import pytest

from edgebench.errors import UserError
from edgebench.prompts import (
    COMPLETION_TEMPLATE,
    STYLE_CHAT,
    STYLE_COMPLETION,
    PromptFormat,
    render_chat_template,
)
from edgebench.tasks.base import Prompt

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def test_chat_template_renders_system_user_and_generation_prompt() -> None:
    fmt = PromptFormat(style=STYLE_CHAT, chat_template=CHATML)
    text = fmt.render(Prompt(system="Be terse.", user="Hi"))
    assert text == (
        "<|im_start|>system\nBe terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_bos_token_is_available_to_templates() -> None:
    text = render_chat_template(
        "{{ bos_token }}{{ messages[0]['content'] }}",
        [{"role": "user", "content": "x"}],
        bos_token="<s>",
        eos_token="</s>",
    )
    assert text == "<s>x"


def test_completion_prompt_opens_a_json_fence_and_stops_at_its_end() -> None:
    fmt = PromptFormat(style=STYLE_COMPLETION)
    assert fmt.render(Prompt(system=None, user="Extract.")).endswith("Answer:\n```json\n")
    assert fmt.stop == ("```",)
    # What the manifest records: enough to render the same prompt again.
    assert fmt.describe() == {
        "style": "completion",
        "template": COMPLETION_TEMPLATE,
        "stop": ["```"],
    }
    with_system = fmt.render(Prompt(system="Be terse.", user="Extract."))
    assert with_system == COMPLETION_TEMPLATE.format(system="Be terse.\n\n", user="Extract.")


def test_chat_style_records_its_template_and_adds_no_stop_string() -> None:
    fmt = PromptFormat(style=STYLE_CHAT, chat_template=CHATML)
    assert fmt.stop == ()  # the model's end-of-turn token ends the answer
    assert fmt.describe() == {"style": "chat", "chat_template": CHATML}


def test_hostile_template_cannot_reach_python_internals() -> None:
    evil = "{{ messages.__class__.__mro__[1].__subclasses__() }}"
    with pytest.raises(UserError, match="chat template failed"):
        render_chat_template(
            evil, [{"role": "user", "content": "x"}], bos_token=None, eos_token=None
        )


def test_template_raise_exception_is_a_user_error() -> None:
    with pytest.raises(UserError, match="roles must alternate"):
        render_chat_template(
            "{{ raise_exception('roles must alternate') }}", [], bos_token=None, eos_token=None
        )


def test_chat_style_without_template_is_refused() -> None:
    with pytest.raises(UserError, match="no chat template"):
        PromptFormat(style=STYLE_CHAT).render(Prompt(system=None, user="x"))
