"""How many tokens an answer may take, and how big the context must be for that.

The automatic budget is set per schema, from the answers the dataset itself expects for
that schema: the longest of them (pretty-printed, counted by the model's tokenizer) plus
headroom. A three-field reading and a ten-line purchase order get budgets that fit their
own answers, so a small model that loops stops after a few dozen tokens on the first and
still has room for a long correct answer on the second.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from edgebench.errors import UserError
from edgebench.tasks.base import Example

CONTEXT_ROUND = 256  # n_ctx is rounded up to a multiple of this
BUDGET_HEADROOM = 1.25  # x the longest expected answer of the schema ...
BUDGET_EXTRA = 32  # ... plus room for a code fence or a sentence around the JSON
BUDGET_ROUND = 32
BUDGET_MIN = 64
# Examples without an expected answer (JSONSchemaBench's schemas) have nothing to size a
# budget from: a fixed one, the max_new_tokens of the benchmark's own evaluation script.
UNLABELLED_BUDGET = 500


def reference_text(example: Example) -> str:
    """The expected answer as the budget counts it: pretty-printed, two-space indent."""
    return json.dumps(example.expected, indent=2, ensure_ascii=False)


def _round_up(value: float, step: int) -> int:
    return -(-int(value) // step) * step


@dataclass(frozen=True)
class TokenBudget:
    """max_tokens for each example: fixed by `--max-tokens`, or per schema id."""

    rule: str
    fixed: int | None = None
    by_schema: dict[str, int] | None = None
    # budget group -> (id of the example with the longest expected answer, its tokens):
    # what set each automatic budget, for the error when nothing fits (not recorded).
    set_by: dict[str, tuple[str, int]] | None = None

    def for_example(self, example: Example) -> int:
        if self.fixed is not None:
            return self.fixed
        assert self.by_schema is not None
        return self.by_schema[example.budget_group]

    def origin(self, example: Example) -> str:
        """Where the example's budget comes from, and how to change it (one clause)."""
        if self.rule == "--max-tokens":
            return f"max tokens {self.fixed} is --max-tokens: give a smaller one"
        if self.fixed is not None:
            return (
                f"max tokens {self.fixed} is the fixed budget of examples without an "
                "expected answer: give --max-tokens N to use N instead"
            )
        assert self.by_schema is not None and self.set_by is not None
        group = example.budget_group
        row, tokens = self.set_by[group]
        return (
            f"max tokens {self.by_schema[group]} of '{group}' is set by example '{row}' "
            f"(an expected answer of {tokens} tokens): give --max-tokens N to use N for "
            "every example"
        )

    def largest(self) -> int:
        return self.fixed if self.fixed is not None else max((self.by_schema or {}).values())

    def describe(self) -> dict[str, Any]:
        """For the manifest: the rule and every budget it produced."""
        return {
            "max_tokens": self.largest(),
            "max_tokens_rule": self.rule,
            "max_tokens_by_schema": self.by_schema,
        }


def plan_budget(
    max_tokens: int | None, dataset: list[Example], reference_tokens: list[int]
) -> TokenBudget:
    """`--max-tokens` when given, else a budget per schema (per `Example.budget_group`:
    the schema id unless the task groups otherwise, e.g. deepjson by depth) from the whole
    dataset's expected answers (`reference_tokens[i]` is the token count of `dataset[i]`'s)."""
    if max_tokens is not None:
        return TokenBudget(rule="--max-tokens", fixed=max_tokens)
    if dataset and all(example.expected is None for example in dataset):
        rule = (
            f"fixed {UNLABELLED_BUDGET}: no example has an expected answer to size a budget "
            "from (JSONSchemaBench's own max_new_tokens)"
        )
        return TokenBudget(rule=rule, fixed=UNLABELLED_BUDGET)
    longest: dict[str, int] = defaultdict(int)
    set_by: dict[str, tuple[str, int]] = {}
    for example, count in zip(dataset, reference_tokens, strict=True):
        key = example.budget_group
        if key not in set_by or count > longest[key]:
            set_by[key] = (example.id, count)
        longest[key] = max(longest[key], count)
    by_schema = {
        schema_id: max(BUDGET_MIN, _round_up(n * BUDGET_HEADROOM + BUDGET_EXTRA, BUDGET_ROUND))
        for schema_id, n in sorted(longest.items())
    }
    rule = (
        f"auto, per schema (or the task's budget group): the longest expected answer of "
        f"the group in the dataset "
        f"(pretty-printed, model tokens) x {BUDGET_HEADROOM} + {BUDGET_EXTRA}, rounded up "
        f"to {BUDGET_ROUND}, at least {BUDGET_MIN}"
    )
    return TokenBudget(rule=rule, by_schema=by_schema, set_by=set_by)


def size_context(
    examples: list[Example],
    prompt_tokens: list[int],
    budgets: list[int],
    n_ctx: int | None,
    n_ctx_train: int | None,
) -> int:
    """The smallest context (rounded up) that fits every prompt plus its budget; a prompt
    that cannot fit is the user's to fix, so it is an error naming the example.

    `n_ctx` is the user's `--n-ctx` (None: automatic)."""
    limit = n_ctx or n_ctx_train
    for example, count, budget in zip(examples, prompt_tokens, budgets, strict=True):
        if limit is not None and count + budget > limit:
            source = "--n-ctx" if n_ctx else "the model's context length"
            raise UserError(
                f"example '{example.id}': prompt of {count} tokens + max tokens "
                f"{budget} does not fit {source} ({limit})"
            )
    if n_ctx:
        return n_ctx
    needed = max((c + b for c, b in zip(prompt_tokens, budgets, strict=True)), default=0)
    rounded = _round_up(needed, CONTEXT_ROUND)
    return min(rounded, n_ctx_train) if n_ctx_train else rounded


@dataclass(frozen=True)
class ContextPlan:
    """The context to load the model with, and the examples that cannot fit in it."""

    n_ctx: int
    skipped: dict[int, str]  # example index -> why no arm runs it
    # example index -> why the `+close` arms skip it: it fits only without the closing room
    close_skipped: dict[int, str] = field(default_factory=dict)


def context_limit(
    n_ctx: int | None, max_context: int | None, n_ctx_train: int | None
) -> tuple[int | None, str]:
    """The largest context a run may load, and the option or fact that sets it:
    `--n-ctx`, else the smaller of `--max-context` and the model's context length."""
    if n_ctx is not None:
        return n_ctx, "--n-ctx"
    limits = [(max_context, "--max-context"), (n_ctx_train, "the model's context length")]
    known = [(value, source) for value, source in limits if value]
    return min(known) if known else (None, "")


def misfit(count: int, budget: int, room: int, limit: int | None, source: str) -> str | None:
    """Why a prompt of `count` tokens with its budget (and a `+close` arm's closing room)
    does not fit `limit`, with the real numbers; None when it fits."""
    total = count + budget + room
    if limit is None or total <= limit:
        return None
    closing = f" + closing room {room} (--close-tokens)" if room else ""
    return (
        f"prompt of {count} tokens + max tokens {budget}{closing} = {total} does not fit "
        f"{source} ({limit})"
    )


def _at(
    indices: list[int], examples: list[Example], prompt_tokens: list[int], budgets: list[int]
) -> tuple[list[Example], list[int], list[int]]:
    """The examples at `indices` with their prompt tokens and budgets."""
    return (
        [examples[i] for i in indices],
        [prompt_tokens[i] for i in indices],
        [budgets[i] for i in indices],
    )


def plan_context(
    examples: list[Example],
    prompt_tokens: list[int],
    budgets: list[int],
    *,
    n_ctx: int | None,
    max_context: int | None,
    n_ctx_train: int | None,
    run: list[int] | None = None,
    token_budget: TokenBudget | None = None,
    room: int = 0,
) -> ContextPlan:
    """Size `n_ctx` to the examples the run decodes that fit, never beyond `--max-context`
    or the model's context length; the others are skipped with the reason (never
    truncated).

    `run` holds the indices of the examples the run decodes (None: all of them); the
    skipped ones are keyed by position in `run`. `room` is what a `+close` arm may add
    after the budget (`--close-tokens`; 0 without such arms): only those arms need it, so
    an example that fits without it is run by the others and skipped by the closing arms
    alone (`close_skipped`). A fixed `--n-ctx` is the user's explicit choice: every example
    of the run must fit it without the room. `token_budget` (the plan the budgets come
    from) lets the error when nothing fits say which example set the budget and how to
    change it."""
    run = list(range(len(examples))) if run is None else run
    if n_ctx is not None and max_context is not None:
        raise UserError("--n-ctx and --max-context exclude each other: give one of them")
    limit, source = context_limit(n_ctx, max_context, n_ctx_train)
    if n_ctx is not None:
        size_context(*_at(run, examples, prompt_tokens, budgets), n_ctx, n_ctx_train)
    skipped: dict[int, str] = {}
    close_skipped: dict[int, str] = {}
    needs: list[int] = []
    for position, index in enumerate(run):
        count, budget = prompt_tokens[index], budgets[index]
        reason = misfit(count, budget, 0, limit, source)
        if reason is not None:
            skipped[position] = reason
            continue
        closing = misfit(count, budget, room, limit, source) if room else None
        if closing is not None:
            close_skipped[position] = closing
        needs.append(count + budget + (room if closing is None else 0))
    if not needs:
        totals = [prompt_tokens[i] + budgets[i] for i in run]
        smallest = min(totals)
        origin = ""
        if token_budget is not None:
            origin = f"; {token_budget.origin(examples[run[totals.index(smallest)]])}"
        raise UserError(
            f"no example fits {source} ({limit}): the smallest needs {smallest} tokens "
            f"(prompt + max tokens){origin}"
        )
    if n_ctx is not None:
        return ContextPlan(n_ctx, {}, close_skipped)
    rounded = _round_up(max(needs), CONTEXT_ROUND)
    return ContextPlan(min(rounded, limit) if limit else rounded, skipped, close_skipped)
