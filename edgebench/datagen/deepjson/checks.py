"""The generator's own checks, run by `edgebench data validate --task deepjson` on any
file in the DeepJSONEval format (.jsonl or .xlsx, read by tasks/formats/deepjson.py, the
reader `run` uses): every example's depth equals its target, its ground truth validates
against its schema, and every leaf value appears in its text; texts are unique; and the
built-in set's size rules, examples per depth and domains."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import cache

from edgebench.datagen.deepjson.domains import DOMAINS
from edgebench.datagen.deepjson.tree import Tree
from edgebench.datagen.edgejson.outcome import CheckResult, Status, outcome, repeated, size_rule
from edgebench.datagen.edgejson.shape import leaf_values
from edgebench.datagen.edgejson.text_checks import missing_values, prompt_key
from edgebench.tasks.deepjson import ground_truth_problem, schema_depth, value_depth
from edgebench.tasks.formats.deepjson import DeepJSONRow as Row

DEPTHS = (3, 4, 5, 6, 7)
MIN_PER_DEPTH = 40
MIN_DOMAINS = 5
_INDEX = re.compile(r"\[\d+\]")
_SHOWN = 3


def _label(row: Row) -> str:
    return f"{row.id} ({row.place})"


def rows_load(rows: list[Row]) -> CheckResult:
    # The reader refuses unreadable rows, duplicate ids and invalid schemas with a
    # UserError, so reaching this check means all of that holds.
    detail = f"{len(rows)} rows read, ids unique, every schema a valid JSON Schema"
    return CheckResult("rows load", Status.PASS, detail)


def depth_matches(rows: list[Row]) -> CheckResult:
    problems = []
    for row in rows:
        of_schema, of_truth = schema_depth(row.schema), value_depth(row.expected)
        if not (row.depth == of_schema == of_truth):
            problems.append(
                f"{_label(row)}: target depth {row.depth}, schema depth {of_schema}, "
                f"ground-truth depth {of_truth}"
            )
    detail = f"{len(rows) - len(problems)} of {len(rows)} rows: schema and object at the target"
    return outcome("depth equals the target", problems, detail)


def truth_validates(rows: list[Row]) -> CheckResult:
    problems = []
    for row in rows:
        if (problem := ground_truth_problem(row)) is not None:
            problems.append(f"{_label(row)}: {problem}")
    detail = f"{len(rows) - len(problems)} of {len(rows)} ground truths valid against their schema"
    return outcome("object validates against its schema", problems, detail)


@cache
def _trees() -> dict[str, Tree]:
    return {domain.name: Tree.build(domain) for domain in DOMAINS}


def _boolean_problems(row: Row) -> tuple[list[str], int]:
    """Booleans are stated as the property's yes/no predicate, found through the domain
    tree (generated rows name their subtree root). Returns problems and unchecked count."""
    booleans = [(p, v) for p, v in leaf_values(row.expected) if isinstance(v, bool)]
    tree = _trees().get(row.domain)
    root = row.meta.get("root")
    if tree is None or not isinstance(root, str) or root not in tree.nodes:
        return [], len(booleans)
    text = row.text.lower()
    problems = []
    for path, value in booleans:
        node = f"{root}.{_INDEX.sub('', path)}"
        prop = tree.nodes.get(node)
        phrase = (prop.yes if value else prop.no) if prop else None
        if phrase is None or phrase.lower() not in text:
            problems.append(f"{path} = {str(value).lower()}")
    return problems, 0


def values_in_text(rows: list[Row]) -> CheckResult:
    problems = []
    unchecked = 0
    for row in rows:
        missing = missing_values(row.text, row.expected)
        boolean_missing, skipped = _boolean_problems(row)
        unchecked += skipped
        missing += boolean_missing
        if missing:
            more = f"; +{len(missing) - _SHOWN} more" if len(missing) > _SHOWN else ""
            problems.append(f"{_label(row)}: not in the text: {'; '.join(missing[:_SHOWN])}{more}")
    detail = f"{len(rows) - len(problems)} of {len(rows)} texts state every leaf value"
    if unchecked:
        detail += f" ({unchecked} booleans outside the built-in domains not checkable)"
    return outcome("every leaf value appears in the text", problems, detail)


def duplicate_texts(rows: list[Row]) -> CheckResult:
    groups = repeated(rows, lambda row: prompt_key(row.text))
    problems = [f"same text in {', '.join(_label(r) for r in group)}" for group in groups]
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
    rows_load,
    depth_matches,
    truth_validates,
    values_in_text,
    duplicate_texts,
)
SIZE_RULES: tuple[Callable[[list[Row]], CheckResult], ...] = (per_depth, domains)


def run_checks(rows: list[Row], *, builtin: bool) -> list[CheckResult]:
    """Every check; the size rules assert only with `builtin` (the built-in set)."""
    return [check(rows) for check in CHECKS] + [
        size_rule(rule(rows), builtin=builtin) for rule in SIZE_RULES
    ]
