"""Whether an example's expected output validates against its own schema.

A public file can hold rows whose ground truth breaks the schema it ships with (a required
key missing, a key the schema does not declare); a model that answers such a row
correctly would fail its schema score. The run leaves such rows out (or refuses the file
with `--strict-data`); `data validate` lists them. Examples without an expected answer
(`expected` is None) are not checked.
"""

from __future__ import annotations

from edgebench.scoring.schema import get_checker
from edgebench.tasks.base import Example


def expected_errors(example: Example, *, check_formats: bool = False, limit: int = 1) -> list[str]:
    """The first `limit` validation errors of the example's expected output ("JSON path:
    message"); [] when it validates or there is none."""
    if example.expected is None:
        return []
    checker = get_checker(
        example.schema, source=f"schema '{example.schema_id}'", check_formats=check_formats
    )
    return checker.errors(example.expected, limit)


def split_invalid(examples: list[Example]) -> tuple[list[Example], list[tuple[Example, str]]]:
    """The examples whose expected output validates, and the others with their first error."""
    valid: list[Example] = []
    invalid: list[tuple[Example, str]] = []
    for example in examples:
        errors = expected_errors(example)
        if errors:
            invalid.append((example, errors[0]))
        else:
            valid.append(example)
    return valid, invalid
