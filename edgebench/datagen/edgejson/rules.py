"""Derived numbers (line totals, subtotals, tax, totals, averages) as data.

The generator applies a schema's rules in order to fill the derived fields, and the checker
recomputes the same rules from the stated inputs, so both sides share one definition.
Paths: `subtotal` is a top-level field; `items[].line_total` is that field in every item.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

# The EdgeJSON paper's tolerance for derived money values.
TOLERANCE = 0.02


@dataclass(frozen=True)
class Derived:
    """One derived value: where it lives, what it should be, and how it was computed."""

    container: dict[str, Any]
    key: str
    value: float
    where: str
    formula: str


class Rule(Protocol):
    def derive(self, record: dict[str, Any]) -> list[Derived]: ...


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers(record: dict[str, Any], path: str) -> list[float]:
    """The numbers at `path`; absent fields yield nothing (an absent discount counts as 0)."""
    if "[]." in path:
        array, field = path.split("[].", 1)
        items = record.get(array)
        rows = [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
        values = [row.get(field) for row in rows]
    else:
        values = [record.get(path)]
    return [value for value in values if _is_number(value)]


@dataclass(frozen=True)
class Product:
    """target = a x b, in each item of `each` when given, else at the top level."""

    target: str
    factors: tuple[str, str]
    each: str | None = None

    def _rows(self, record: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
        if self.each is None:
            yield record, self.target
            return
        items = record.get(self.each)
        for index, item in enumerate(items if isinstance(items, list) else []):
            if isinstance(item, dict):
                yield item, f"{self.each}[{index}].{self.target}"

    def derive(self, record: dict[str, Any]) -> list[Derived]:
        first, second = self.factors
        found = []
        for row, where in self._rows(record):
            if _is_number(row.get(first)) and _is_number(row.get(second)):
                value = round(row[first] * row[second], 2)
                found.append(Derived(row, self.target, value, where, f"{first} x {second}"))
        return found


@dataclass(frozen=True)
class Sum:
    """target = the sum of the terms; a term starting with "-" is subtracted."""

    target: str
    terms: tuple[str, ...]

    def derive(self, record: dict[str, Any]) -> list[Derived]:
        total, seen = 0.0, False
        for term in self.terms:
            numbers = _numbers(record, term.lstrip("-"))
            seen = seen or bool(numbers)
            total += (-1 if term.startswith("-") else 1) * sum(numbers)
        if not seen:
            return []
        formula = " + ".join(self.terms).replace("+ -", "- ")
        return [Derived(record, self.target, round(total, 2), self.target, formula)]


@dataclass(frozen=True)
class Percent:
    """target = base x rate / 100."""

    target: str
    base: str
    rate: str

    def derive(self, record: dict[str, Any]) -> list[Derived]:
        base, rate = record.get(self.base), record.get(self.rate)
        if not (_is_number(base) and _is_number(rate)):
            return []
        value = round(base * rate / 100, 2)
        return [Derived(record, self.target, value, self.target, f"{self.base} x {self.rate}%")]


@dataclass(frozen=True)
class Mean:
    """target = the mean of the numbers at `of`."""

    target: str
    of: str

    def derive(self, record: dict[str, Any]) -> list[Derived]:
        values = _numbers(record, self.of)
        if not values:
            return []
        value = round(sum(values) / len(values), 2)
        return [Derived(record, self.target, value, self.target, f"mean of {self.of}")]


def apply(rules: Iterable[Rule], record: dict[str, Any]) -> None:
    """Fill the derived fields in order (line totals before the subtotal that sums them)."""
    for rule in rules:
        for derived in rule.derive(record):
            derived.container[derived.key] = derived.value


def mismatches(rules: Iterable[Rule], record: dict[str, Any]) -> list[str]:
    """Derived fields whose stated value is off by more than TOLERANCE; absent ones pass."""
    found = []
    for rule in rules:
        for derived in rule.derive(record):
            stated = derived.container.get(derived.key)
            if stated is None:
                continue
            if not _is_number(stated) or abs(stated - derived.value) > TOLERANCE + 1e-9:
                found.append(
                    f"{derived.where} is {stated}, recomputed {derived.value} ({derived.formula})"
                )
    return found
