"""Checks on the prompts: unique, prose rather than forms, holding the expected values, short."""

from __future__ import annotations

import json
import re
import statistics
from typing import Any

from edgebench.datagen.edgejson.outcome import CheckResult, Status, outcome, repeated
from edgebench.datagen.edgejson.shape import leaf_values
from edgebench.tasks.formats.edgejson import EdgeJSONDataset as Dataset
from edgebench.tasks.formats.edgejson import EdgeJSONRow as Row

# A line reading like a form field: a label of one to four words, a colon, then a value or
# nothing (a section header such as "Items:"). "at 09:30" does not count: no space after ":".
_KEY_VALUE_LINE = re.compile(r"^\s*(?:[-*]\s+)?[A-Za-z][\w()/&.'-]*(?: [\w()/&.'-]+){0,3}:(\s|$)")
# A prompt is not prose when more than this share of its non-blank lines are form fields.
KEY_VALUE_LINE_LIMIT = 0.25
MAX_PROMPT_WORDS = 250
MIN_SHORT_SHARE = 0.9  # "most prompts" are at most MAX_PROMPT_WORDS words
# A number standing alone: not the "2" of "CO2" nor the "-03" inside "2025-03-14".
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


def prompt_key(prompt: str) -> str:
    """Prompts that differ only in case or spacing count as duplicates."""
    return " ".join(prompt.lower().split())


def _where(row: Row) -> str:
    return f"{row.id} (line {row.line})"


def duplicate_prompts(ds: Dataset) -> CheckResult:
    groups = repeated(ds.rows, lambda row: prompt_key(row.prompt))
    problems = [f"same prompt in {', '.join(_where(row) for row in group)}" for group in groups]
    extra = sum(len(group) - 1 for group in groups)
    return outcome("no duplicate prompts", problems, f"{extra} duplicates among {len(ds.rows)}")


def key_value_share(prompt: str) -> float:
    lines = [line for line in prompt.split("\n") if line.strip()]
    return sum(1 for line in lines if _KEY_VALUE_LINE.match(line)) / max(len(lines), 1)


def prose_prompts(ds: Dataset) -> CheckResult:
    problems = []
    for row in ds.rows:
        share = key_value_share(row.prompt)
        if share > KEY_VALUE_LINE_LIMIT:
            problems.append(f"{_where(row)}: {share:.0%} of its lines look like 'Key: value'")
    detail = (
        f"{len(problems)} of {len(ds.rows)} prompts have over {KEY_VALUE_LINE_LIMIT:.0%} of"
        f" their lines like 'Key: value' (threshold {KEY_VALUE_LINE_LIMIT:.0%})"
    )
    return outcome("prompts are prose", problems, detail)


_SHOWN_CHARS = 80


def _shortened(text: str) -> str:
    """A value as a problem line shows it: a 100,000-character string stays one line."""
    if len(text) <= _SHOWN_CHARS:
        return text
    half = _SHOWN_CHARS // 2 - 2
    return f"{text[:half]}...{text[-half:]}"


def missing_values(prompt: str, expected: Any) -> list[str]:
    """Expected strings and numbers the prompt does not contain (booleans can't be looked up)."""
    text = prompt.lower()
    numbers = [float(token) for token in _NUMBER.findall(prompt)]
    missing = []
    for path, value in leaf_values(expected):
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, str):
            found = value.strip().lower() in text
        elif isinstance(value, (int, float)):
            found = any(abs(number - value) < 1e-9 for number in numbers)
        else:
            found = True
        if not found:
            missing.append(f"{path or '(root)'} = {_shortened(json.dumps(value))}")
    return missing


def values_in_prompt(ds: Dataset) -> CheckResult:
    problems = []
    for row in ds.rows:
        missing = missing_values(row.prompt, row.expected)
        if missing:
            shown = "; ".join(missing[:3]) + (
                f"; +{len(missing) - 3} more" if len(missing) > 3 else ""
            )
            problems.append(f"{_where(row)}: not in the prompt: {shown}")
    detail = f"{len(ds.rows) - len(problems)} of {len(ds.rows)} outputs fully stated in the prompt"
    return outcome("expected values appear in prompt", problems, detail)


def prompt_length(ds: Dataset) -> CheckResult:
    words = {row.id: len(row.prompt.split()) for row in ds.rows}
    short = sum(1 for count in words.values() if count <= MAX_PROMPT_WORDS)
    detail = (
        f"{short} of {len(words)} prompts at most {MAX_PROMPT_WORDS} words (need"
        f" {MIN_SHORT_SHARE:.0%}); longest {max(words.values())}, median"
        f" {statistics.median(words.values()):g}"
    )
    if short >= MIN_SHORT_SHARE * len(words):
        return CheckResult("prompt length", Status.PASS, detail)
    longest = sorted(words, key=words.__getitem__, reverse=True)
    problems = tuple(f"{row_id}: {words[row_id]} words" for row_id in longest[:10])
    return CheckResult("prompt length", Status.FAIL, detail, problems)
