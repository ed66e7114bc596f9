"""The result of one dataset check, as the validate command shows it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

T = TypeVar("T")


class Status(str, Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "not checked"


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: Status
    detail: str
    problems: tuple[str, ...] = ()


def outcome(name: str, problems: Iterable[str], detail: str) -> CheckResult:
    """Pass when there are no problems; the detail line is shown either way."""
    found = tuple(problems)
    return CheckResult(name, Status.FAIL if found else Status.PASS, detail, found)


def size_rule(result: CheckResult, *, builtin: bool) -> CheckResult:
    """A size rule of the built-in set (rows, schema types, examples per depth, domains)
    binds only that set (`data validate --builtin`); on a user's file the counts are
    shown and nothing is asserted."""
    if builtin:
        return result
    return CheckResult(result.name, Status.SKIP, f"{result.detail} (built-in set rule: --builtin)")


def repeated(items: Iterable[T], key: Callable[[T], str]) -> list[list[T]]:
    """Groups of items sharing a key, for duplicate ids and duplicate prompts alike."""
    groups: dict[str, list[T]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return [group for group in groups.values() if len(group) > 1]
