"""Metric families by name, imported lazily: `--metrics edgejson,deepjson,structure,sted,sobench`.

Every family is a pure scorer of (parsed output, expected value, schema) with its own
aggregation (see `base.Family`). A task names its own family (`Task.metric_family`);
`--metrics` adds others to any task; `score.score_output` parses once and lets each
selected family score the parse. To add a family, write a `Family` subclass and
register it here.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from edgebench.errors import UserError
from edgebench.metrics.base import Family, Scores

__all__ = [
    "Family",
    "Scores",
    "family_names",
    "get_family",
    "parse_metric_params",
    "parse_metrics",
    "select_families",
]


@dataclass(frozen=True)
class FamilyInfo:
    """What views and help texts say of a family without loading it: the label of each
    figure, the headline columns of a comparison of runs of its task, the score the
    live progress bar shows."""

    name: str
    module: str
    class_name: str
    note: str | None = None  # beside the name in --metrics' help (cli/choices.py copies it)
    labels: Mapping[str, str] = field(default_factory=dict)  # figure -> label in tables
    # (short header, figure) of `compare`'s accuracy columns for runs of its task;
    # `coverage.X` is the schema engine's coverage count X (compiled, refused, crashed).
    headline: tuple[tuple[str, str], ...] = ()
    progress: str | None = None  # the figure the progress bar shows (else the first score)


_VALID = ("valid", "valid_json")
_INFOS = (
    FamilyInfo(
        "edgejson",
        "edgebench.metrics.edgejson",
        "EdgeJSONFamily",
        labels=MappingProxyType(
            {
                "json_exact": "JSONExact",
                "field_f1": "Field F1",
                "field_precision": "Precision",
                "field_recall": "Recall",
                "schema_compliance": "Schema",
                "valid_json": "Valid JSON",
            }
        ),
        headline=(
            _VALID,
            ("schema", "schema_compliance"),
            ("exact", "json_exact"),
            ("F1", "field_f1"),
        ),
        progress="json_exact",
    ),
    FamilyInfo(
        "deepjson",
        "edgebench.metrics.deepjson",
        "DeepJSONFamily",
        labels=MappingProxyType(
            {
                "syntax": "Syntax",
                "key_matching": "Key match",
                "strict": "Strict",
                "valid_json": "Valid JSON",
            }
        ),
        headline=(_VALID, ("syntax", "syntax"), ("km", "key_matching"), ("strict", "strict")),
        progress="key_matching",
    ),
    FamilyInfo(
        "structure",
        "edgebench.metrics.structure",
        "StructureFamily",
        note="CSA, NTED",
        labels=MappingProxyType({"csa": "CSA", "nted": "NTED", "valid_json": "Valid JSON"}),
    ),
    FamilyInfo(
        "sted",
        "edgebench.metrics.sted",
        "StedFamily",
        labels=MappingProxyType(
            {"sted": "STED", "sted_structural": "STED struct", "sted_semantic": "STED sem"}
        ),
    ),
    FamilyInfo(
        "sobench",
        "edgebench.metrics.sobench",
        "SOBenchFamily",
        note="FMA, FSMA",
        labels=MappingProxyType(
            {
                "schema_validation_accuracy": "Schema valid",
                "fma_exact": "FMA",
                "fma_fuzzy": "FMA fuzzy",
                "fsma_exact": "FSMA",
                "fsma_fuzzy": "FSMA fuzzy",
            }
        ),
    ),
    FamilyInfo(
        "schemas",
        "edgebench.metrics.schemas",
        "SchemasFamily",
        note="JSONSchemaBench compliance",
        labels=MappingProxyType({"schema_compliance": "Schema", "valid_json": "Valid JSON"}),
        # no expected answers: the schema engine's coverage instead
        headline=(
            _VALID,
            ("schema", "schema_compliance"),
            ("compiled", "coverage.compiled"),
            ("refused", "coverage.refused"),
            ("crashed", "coverage.crashed"),
        ),
    ),
)
FAMILIES: Mapping[str, FamilyInfo] = MappingProxyType({info.name: info for info in _INFOS})
# name -> (module, class)
_FAMILIES: dict[str, tuple[str, str]] = {
    info.name: (info.module, info.class_name) for info in _INFOS
}


def family_names() -> list[str]:
    return list(_FAMILIES)


def _family_class(name: str) -> type[Family]:
    try:
        module_name, class_name = _FAMILIES[name]
    except KeyError:
        close = difflib.get_close_matches(name, _FAMILIES, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise UserError(
            f"unknown metric family '{name}': {hint}known: {', '.join(_FAMILIES)}"
        ) from None
    return getattr(importlib.import_module(module_name), class_name)


def get_family(name: str, parameters: Mapping[str, Any] | None = None) -> Family:
    """Family `name` with `parameters` (values may be strings from the command line)."""
    cls = _family_class(name)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, raw in (parameters or {}).items():
        if key not in fields:
            known = ", ".join(fields) or "none"
            raise UserError(f"metric family '{name}' has no parameter '{key}' (known: {known})")
        values[key] = _convert(name, key, raw, type(fields[key].default))
    return cls(**values)


def _convert(family: str, key: str, raw: Any, kind: type) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        if kind is bool:
            if raw.lower() not in ("true", "false"):
                raise ValueError
            return raw.lower() == "true"
        return kind(raw)
    except ValueError:
        raise UserError(
            f"metric parameter {family}.{key}: '{raw}' is not a {kind.__name__}"
        ) from None


def parse_metrics(text: str | None) -> tuple[str, ...]:
    """`--metrics a,b` -> known family names in order, without repeats."""
    if not text:
        return ()
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    for name in names:
        _family_class(name)  # unknown names fail here, before anything runs
    return names


def parse_metric_params(items: Iterable[str]) -> dict[str, dict[str, str]]:
    """`--metric-param sted.size_penalty=0.2` (repeatable) -> {"sted": {"size_penalty": "0.2"}}."""
    params: dict[str, dict[str, str]] = {}
    for item in items:
        name, _, value = item.partition("=")
        family, _, key = name.strip().partition(".")
        if not family or not key or not _:
            raise UserError(
                f"--metric-param '{item}': expected FAMILY.NAME=VALUE, "
                "e.g. sobench.fuzzy_string_threshold=0.9"
            )
        params.setdefault(family, {})[key] = value.strip()
    return params


def select_families(
    task_family: str,
    names: Iterable[str],
    parameters: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Family]:
    """The task's own family first, then the requested ones, each with its parameters.
    A parameter for a family that is not selected is an error (it would do nothing)."""
    parameters = parameters or {}
    ordered = list(dict.fromkeys([task_family, *names]))
    for family in parameters:
        if family not in ordered:
            raise UserError(
                f"--metric-param for '{family}', which this run does not use "
                f"(families: {', '.join(ordered)}; add it with --metrics)"
            )
    return [get_family(name, parameters.get(name)) for name in ordered]
