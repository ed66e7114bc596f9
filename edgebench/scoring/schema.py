"""JSON Schema validation without network access (docs/metrics.md, "Schema validation").

The dialect comes from `$schema` (Draft 7 when absent), `format` is an annotation unless a
run asks for it, and a `$ref` that points outside the schema document is an error: it is
never fetched. Every `$ref` is resolved once when the checker is built, so a bad
reference stops a run before the first model call instead of in the middle of scoring.
Regex keywords (`pattern`, `patternProperties`) are matched in bounded time
(scoring/patterns.py), so a pathological pattern cannot hang a run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping
from typing import Any

import referencing
import referencing.jsonschema
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.exceptions import SchemaError, relevance
from jsonschema.validators import validator_for
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing.exceptions import Unresolvable

from edgebench.errors import UserError
from edgebench.scoring.patterns import bounded_validator, time_budget

DEFAULT_MAX_ERRORS = 3
# Validation errors gathered before ranking them: enough for a good pick, and bounded for
# outputs that are wrong everywhere.
_ERRORS_TO_RANK = 50
_MESSAGE_CHARS = 200


class _OfflineRetrieval(Exception):
    """Raised by the registry for any URI not inside the schema itself."""


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    raise _OfflineRetrieval(uri)


def _one_line(text: str, limit: int = _MESSAGE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class SchemaChecker:
    """Validates instances against one schema; build it once per schema (see `get_checker`).

    `source` names the schema (file path or id) in error messages.
    """

    def __init__(
        self,
        schema: Mapping[str, Any] | bool,
        *,
        source: str,
        check_formats: bool = False,
        dialect: str | None = None,
    ) -> None:
        self.source = source
        self.check_formats = check_formats
        cls = DIALECTS[dialect] if dialect else _dialect(schema, source)
        try:
            cls.check_schema(schema)
        except SchemaError as exc:
            message = f"{source}: invalid JSON Schema at {exc.json_path}: {_one_line(exc.message)}"
            raise UserError(message) from None
        # The same resource and registry the validator will use, so the up-front $ref check
        # and validation agree; SPECIFICATIONS lets the official meta-schemas resolve offline.
        resource = _specification(cls).create_resource(schema)
        registry = SPECIFICATIONS.combine(referencing.Registry(retrieve=_refuse_retrieval))
        root_uri = resource.id() or ""
        registry = registry.with_resource(root_uri, resource)
        self._check_refs(resource, registry.resolver(root_uri))
        self._validator = bounded_validator(cls)(
            schema,
            registry=registry,
            format_checker=cls.FORMAT_CHECKER if check_formats else None,
        )

    def _check_refs(self, root: referencing.Resource[Any], resolver: Any) -> None:
        """Resolve every `$ref` now; walk subschemas iteratively (schemas can be deep)."""
        pending = [(root, resolver)]
        while pending:
            resource, parent = pending.pop()
            scope = parent.in_subresource(resource)
            contents = resource.contents
            ref = contents.get("$ref") if isinstance(contents, Mapping) else None
            if isinstance(ref, str):
                try:
                    scope.lookup(ref)
                except Unresolvable as exc:
                    raise UserError(f"{self.source}: {_ref_problem(ref, exc)}") from None
            pending.extend((sub, scope) for sub in resource.subresources())

    def errors(self, instance: Any, limit: int = DEFAULT_MAX_ERRORS) -> list[str]:
        """The `limit` most relevant problems, each as "JSON path: message"; [] when valid."""
        try:
            with time_budget():
                found = list(
                    itertools.islice(self._validator.iter_errors(instance), _ERRORS_TO_RANK)
                )
        except RecursionError:
            return ["$: value nested too deeply to validate"]
        except Unresolvable as exc:  # e.g. a $dynamicRef, which the up-front check skips
            ref = str(getattr(exc, "ref", exc))
            raise UserError(f"{self.source}: {_ref_problem(ref, exc)}") from None
        found.sort(key=relevance)
        return [f"{e.json_path}: {_one_line(e.message)}" for e in found[:limit]]

    def is_valid(self, instance: Any) -> bool:
        return not self.errors(instance, limit=1)


# `dialect`: validate every schema as this draft whatever its `$schema` says (a benchmark
# whose own validator does so, e.g. JSONSchemaBench's Draft 2020-12).
DIALECTS: dict[str, Any] = {"2020-12": Draft202012Validator, "7": Draft7Validator}


def _dialect(schema: Mapping[str, Any] | bool, source: str) -> Any:
    """The validator class named by `$schema`; Draft 7 when there is none."""
    if not isinstance(schema, Mapping) or "$schema" not in schema:
        return Draft7Validator
    uri = schema["$schema"]
    cls = validator_for(schema, default=None) if isinstance(uri, str) else None
    if cls is None:
        raise UserError(f"{source}: unknown $schema {uri!r}")
    return cls


def _specification(cls: Any) -> referencing.Specification[Any]:
    """The referencing dialect matching a validator class (how jsonschema itself picks it)."""
    return referencing.jsonschema.specification_with(cls.ID_OF(cls.META_SCHEMA))


def _ref_problem(ref: str, exc: BaseException) -> str:
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, _OfflineRetrieval):
        cause = cause.__cause__ or cause.__context__
    if cause is not None:  # the registry was asked to fetch it
        return (
            f"$ref {ref!r} points outside the schema; edgebench never fetches remote or "
            "file references (inline the definition)"
        )
    return f"$ref {ref!r} does not resolve: no such location in the schema"


_CACHE: dict[tuple[str, bool, str | None], SchemaChecker] = {}


def schema_key(schema: Mapping[str, Any] | bool) -> str:
    """A stable name for a schema's content: sha256 of its canonical JSON. Names a
    compiled grammar (constraints) and a cached schema checker (`get_checker`)."""
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def get_checker(
    schema: Mapping[str, Any] | bool,
    *,
    source: str,
    check_formats: bool = False,
    dialect: str | None = None,
) -> SchemaChecker:
    """The cached checker for `schema` (building it validates the schema and its refs);
    equal schemas from different examples share one checker (`schema_key`)."""
    key = (schema_key(schema), check_formats, dialect)
    checker = _CACHE.get(key)
    if checker is None:
        checker = _CACHE[key] = SchemaChecker(
            schema, source=source, check_formats=check_formats, dialect=dialect
        )
    return checker
