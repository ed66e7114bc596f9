"""Turn a task's prompt into the exact text a model reads.

Chat models use the chat template stored in their GGUF file; base models get a plain
completion prompt that opens a ```json fence, so the answer is the JSON and the closing
fence stops generation. Chat templates come from model files downloaded from strangers,
so they are rendered in Jinja's sandbox (no attribute tricks, no Python internals), and a
run renders all its prompts in a throwaway process with a memory cap and a time limit
(`render_prompts`): a template that loops for hours or builds a 10 GB string costs that
process, not the one holding the results.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from edgebench.errors import UserError
from edgebench.failures import OutOfMemory, WorkerDied, WorkerTimeout, worker_failure
from edgebench.isolation import call_isolated
from edgebench.tasks.base import Prompt

STYLE_CHAT = "chat"
STYLE_COMPLETION = "completion"

COMPLETION_TEMPLATE = "{system}{user}\n\nAnswer:\n```json\n"
COMPLETION_STOP = ("```",)

# Limits for the process that renders a run's chat prompts.
RENDER_TIMEOUT_S = 60.0
RENDER_MEMORY_BYTES = 1 << 30


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
        return render_chat_template(
            self._template(),
            chat_messages(prompt),
            bos_token=self.bos_token,
            eos_token=self.eos_token,
        )

    def render_many(self, prompts: list[Prompt]) -> list[str]:
        """Every prompt of a run; chat templates run in an isolated process
        (`render_isolated`)."""
        if self.style == STYLE_COMPLETION:
            return [self.render(p) for p in prompts]
        return render_isolated(
            self._template(),
            [chat_messages(p) for p in prompts],
            bos_token=self.bos_token,
            eos_token=self.eos_token,
        )

    def _template(self) -> str:
        if not self.chat_template:
            raise UserError("the model has no chat template; use a completion prompt style for it")
        return self.chat_template


def chat_messages(prompt: Prompt) -> list[dict[str, str]]:
    messages = []
    if prompt.system:
        messages.append({"role": "system", "content": prompt.system})
    messages.append({"role": "user", "content": prompt.user})
    return messages


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
    except (ArithmeticError, ValueError, TypeError, LookupError, RecursionError) as exc:
        # Hostile or broken templates: 1/0, 2**10**6 printed, huge ranges, deep macros.
        reason = f"{type(exc).__name__}: {exc}"
        raise UserError(f"the model's chat template failed to render: {reason}") from None


def render_isolated(
    template: str,
    conversations: list[list[dict[str, str]]],
    *,
    bos_token: str | None,
    eos_token: str | None,
    timeout: float = RENDER_TIMEOUT_S,
    memory_bytes: int = RENDER_MEMORY_BYTES,
) -> list[str]:
    """`render_chat_template` for each conversation, in a child process limited to
    `memory_bytes` of address space and `timeout` seconds; any failure is a UserError."""
    what = "the model's chat template"
    try:
        return call_isolated(
            render_all,
            (template, conversations, bos_token, eos_token),
            timeout=timeout,
            memory_bytes=memory_bytes,
        )
    except WorkerTimeout:
        raise UserError(
            f"{what} did not finish rendering within {timeout:g} s (a hostile template?)"
        ) from None
    except OutOfMemory as exc:
        raise UserError(f"{what} {exc} to render") from None
    except WorkerDied as exc:
        died = worker_failure(exc, "", who="the rendering process").line
        raise UserError(f"{what} failed to render: {died}") from None


def render_all(
    template: str,
    conversations: list[list[dict[str, str]]],
    bos_token: str | None,
    eos_token: str | None,
) -> list[str]:
    """`render_chat_template` for each conversation, in this process: the sandbox applies
    but no memory cap or time limit. A run renders through `render_isolated`, which calls
    this in a throwaway child process; call it directly only on templates you trust (a
    test's own)."""
    return [
        render_chat_template(template, c, bos_token=bos_token, eos_token=eos_token)
        for c in conversations
    ]
