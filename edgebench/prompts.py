"""Turn a task's prompt into the exact text a model reads.

Chat models use the chat template stored in their GGUF file; base models get a plain
completion prompt that opens a ```json fence, so the answer is the JSON and the closing
fence stops generation. Chat templates come from model files downloaded from strangers,
so they are rendered in Jinja's sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from edgebench.errors import UserError
from edgebench.tasks.base import Prompt

STYLE_CHAT = "chat"
STYLE_COMPLETION = "completion"

COMPLETION_TEMPLATE = "{system}{user}\n\nAnswer:\n```json\n"
COMPLETION_STOP = ("```",)


@dataclass(frozen=True)
class PromptFormat:
    """How prompts are rendered for one model; recorded in the run manifest."""

    style: str
    chat_template: str | None = None
    bos_token: str | None = None
    eos_token: str | None = None

    @property
    def stop(self) -> tuple[str, ...]:
        return COMPLETION_STOP if self.style == STYLE_COMPLETION else ()

    def describe(self) -> dict[str, Any]:
        if self.style == STYLE_COMPLETION:
            return {"style": self.style, "template": COMPLETION_TEMPLATE, "stop": list(self.stop)}
        return {"style": self.style, "chat_template": self.chat_template}

    def render(self, prompt: Prompt) -> str:
        if self.style == STYLE_COMPLETION:
            system = f"{prompt.system}\n\n" if prompt.system else ""
            return COMPLETION_TEMPLATE.format(system=system, user=prompt.user)
        if not self.chat_template:
            raise UserError("the model has no chat template; use a completion prompt style for it")
        messages = []
        if prompt.system:
            messages.append({"role": "system", "content": prompt.system})
        messages.append({"role": "user", "content": prompt.user})
        return render_chat_template(
            self.chat_template, messages, bos_token=self.bos_token, eos_token=self.eos_token
        )


def _raise_exception(message: str) -> None:
    raise TemplateError(message)


def render_chat_template(
    template: str,
    messages: list[dict[str, str]],
    *,
    bos_token: str | None,
    eos_token: str | None,
) -> str:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    try:
        return env.from_string(template).render(
            messages=messages,
            add_generation_prompt=True,
            bos_token=bos_token or "",
            eos_token=eos_token or "",
        )
    except TemplateError as exc:
        raise UserError(f"the model's chat template failed to render: {exc}") from None
