"""The generator's own checks, run by `edgebench data validate --task deepjson` on any
file in the DeepJSONEval format: every example's depth equals its target, its ground truth
validates against its schema, and every leaf value appears in its text; plus ids, texts,
domains and examples per depth."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from edgebench.datagen.deepjson.domains import DOMAINS
from edgebench.datagen.deepjson.tree import Tree
from edgebench.datagen.edgejson.outcome import CheckResult, outcome, repeated
from edgebench.datagen.edgejson.shape import leaf_values
from edgebench.datagen.edgejson.text_checks import missing_values, prompt_key
from edgebench.errors import UserError
from edgebench.io import numbered_lines
from edgebench.scoring.parse import InvalidJSON, decode_strict
from edgebench.scoring.schema import SchemaChecker
from edgebench.tasks.deepjson import schema_depth, value_depth

DEPTHS = (3, 4, 5, 6, 7)
MIN_PER_DEPTH = 40
MIN_DOMAINS = 5
_INDEX = re.compile(r"\[\d+\]")
_SHOWN = 3


@dataclass(frozen=True)
class Row:
    line: int
    id: str
    schema: dict[str, Any]
    truth: Any
    text: str
    domain: str
    depth: int | None
    root: str | None  # the subtree's root in the domain tree, for generated rows

    @property
    def where(self) -> str:
        return f"{self.id} (line {self.line})"


def _decoded(value: Any) -> Any:
    return decode_strict(value) if isinstance(value, str) else value


def load_rows(path: Path) -> list[Row]:
    """Rows of a DeepJSONEval `.jsonl` file, read leniently so each check can report on
    every row; only unreadable lines are errors."""
    rows = []
    for number, line in numbered_lines(path, "dataset file"):
        try:
            data = decode_strict(line)
            if not isinstance(data, dict):
                raise InvalidJSON("not a JSON object")
            rows.append(
                Row(
                    line=number,
                    id=str(data.get("id", f"line-{number}")),
                    schema=_decoded(data.get("schema")),
                    truth=_decoded(data.get("json")),
                    text=str(data.get("text") or ""),
                    domain=str(data.get("category") or "unknown"),
                    depth=data.get("true_depth"),
                    root=(data.get("meta") or {}).get("root"),
                )
            )
        except InvalidJSON as exc:
            raise UserError(f"{path}:{number}: not valid JSON ({exc})") from None
    if not rows:
        raise UserError(f"{path}: no rows")
    return rows


def unique_ids(rows: list[Row]) -> CheckResult:
    groups = repeated(rows, lambda row: row.id)
    problems = [f"id {group[0].id} on lines {', '.join(str(r.line) for r in group)}"
                for group in groups]  # fmt: skip
    return outcome("unique ids", problems, f"{len(problems)} ids used more than once")


def depth_matches(rows: list[Row]) -> CheckResult:
    problems = []
    for row in rows:
        if not isinstance(row.schema, dict):
            problems.append(f"{row.where}: no schema object")
            continue
        of_schema, of_truth = schema_depth(row.schema), value_depth(row.truth)
        if not (row.depth == of_schema == of_truth):
            problems.append(
                f"{row.where}: target depth {row.depth}, schema depth {of_schema}, "
                f"ground-truth depth {of_truth}"
            )
    detail = f"{len(rows) - len(problems)} of {len(rows)} rows: schema and object at the target"
    return outcome("depth equals the target", problems, detail)


def truth_validates(rows: list[Row]) -> CheckResult:
    problems = []
    for row in rows:
        try:
            errors = SchemaChecker(row.schema, source=row.where).errors(row.truth, 1)
        except UserError as exc:
            errors = [str(exc)]
        if errors:
            problems.append(f"{row.where}: {errors[0]}")
    detail = f"{len(rows) - len(problems)} of {len(rows)} ground truths valid against their schema"
    return outcome("object validates against its schema", problems, detail)


@cache
def _trees() -> dict[str, Tree]:
    return {domain.name: Tree.build(domain) for domain in DOMAINS}


def _boolean_problems(row: Row) -> tuple[list[str], int]:
    """Booleans are stated as the property's yes/no predicate, found through the domain
    tree (generated rows name their subtree root). Returns problems and unchecked count."""
    booleans = [(p, v) for p, v in leaf_values(row.truth) if isinstance(v, bool)]
    tree = _trees().get(row.domain)
    if tree is None or row.root not in (tree.nodes if tree else {}):
        return [], len(booleans)
    text = row.text.lower()
    problems = []
    for path, value in booleans:
        node = f"{row.root}.{_INDEX.sub('', path)}"
        prop = tree.nodes.get(node)
        phrase = (prop.yes if value else prop.no) if prop else None
        if phrase is None or phrase.lower() not in text:
            problems.append(f"{path} = {str(value).lower()}")
    return problems, 0


def values_in_text(rows: list[Row]) -> CheckResult:
    problems = []
    unchecked = 0
    for row in rows:
        missing = missing_values(row.text, row.truth)
        boolean_missing, skipped = _boolean_problems(row)
        unchecked += skipped
        missing += boolean_missing
        if missing:
            more = f"; +{len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
            problems.append(f"{row.where}: not in the text: {'; '.join(missing[:_SHOWN])}{more}")
    detail = f"{len(rows) - len(problems)} of {len(rows)} texts state every leaf value"
    if unchecked:
        detail += f" ({unchecked} booleans outside the built-in domains not checkable)"
    return outcome("every leaf value appears in the text", problems, detail)


def duplicate_texts(rows: list[Row]) -> CheckResult:
    groups = repeated(rows, lambda row: prompt_key(row.text))
    problems = [f"same text in {', '.join(r.where for r in group)}" for group in groups]
    return outcome("no duplicate texts", problems, f"{len(problems)} repeated texts")


def per_depth(rows: list[Row]) -> CheckResult:
    counts = Counter(row.depth for row in rows)
    problems = [f"depth {d}: {counts[d]} examples" for d in DEPTHS if counts[d] < MIN_PER_DEPTH]
    detail = ", ".join(f"depth {d}: {counts[d]}" for d in DEPTHS)
    return outcome(f"at least {MIN_PER_DEPTH} examples per depth 3-7", problems, detail)


def domains(rows: list[Row]) -> CheckResult:
    counts = Counter(row.domain for row in rows)
    problems = [f"{len(counts)} domains"] if len(counts) < MIN_DOMAINS else []
    detail = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
    return outcome(f"at least {MIN_DOMAINS} domains", problems, detail)


CHECKS: tuple[Callable[[list[Row]], CheckResult], ...] = (
    unique_ids,
    depth_matches,
    truth_validates,
    values_in_text,
    duplicate_texts,
    per_depth,
    domains,
)


def run_checks(rows: list[Row]) -> list[CheckResult]:
    return [check(rows) for check in CHECKS]
