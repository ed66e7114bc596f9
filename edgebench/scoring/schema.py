"""JSON Schema validation without network access (docs/metrics.md, "Schema validation").

The dialect comes from `$schema` (Draft 7 when absent), `format` is an annotation unless a
run asks for it, and a `$ref` that points outside the schema document is an error: it is
never fetched. Every `$ref` is resolved once when the checker is built, so a bad
reference stops a run before the first model call instead of in the middle of scoring.
Regex keywords (`pattern`, `patternProperties`) are matched in bounded time
(scoring/patterns.py), so a pathological pattern cannot hang a run.

This is the one way edgebench builds a validator: `run`, `score`, the task readers and
`data validate` all go through `get_checker`. Building one never raises anything but a
one-line UserError naming the schema: a schema nested deeper than MAX_SCHEMA_DEPTH is
refused before jsonschema sees it (its checks recurse), and whatever jsonschema or
referencing raise on a schema they cannot handle is reported the same way.
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
from jsonschema.exceptions import SchemaError, ValidationError, relevance
from jsonschema.validators import validator_for
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing.exceptions import Unresolvable

from edgebench.errors import UserError
from edgebench.scoring.ir import depth
from edgebench.scoring.patterns import bounded_validator, time_budget

DEFAULT_MAX_ERRORS = 3
# Validation errors gathered before ranking them: enough for a good pick, and bounded for
# outputs that are wrong everywhere.
_ERRORS_TO_RANK = 50
_MESSAGE_CHARS = 200
# JSON nesting levels of a schema document (`{"properties": {"a": {...}}}` is 2 per
# level). jsonschema checks a schema recursively, a few stack frames per level: about 340
# levels exhaust Python's default stack. The dataset readers refuse deeper JSON at the
# same figure (tasks/formats/jsonl.py); real schemas stay far below (the deepest of
# DeepJSONEval's and EdgeJSON's nest about 25).
MAX_SCHEMA_DEPTH = 100


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
        _check_depth(schema, source)
        cls = DIALECTS[dialect] if dialect else _dialect(schema, source)
        try:
            self._validator = self._build(schema, cls)
        except UserError:
            raise
        except SchemaError as exc:
            message = f"{source}: invalid JSON Schema at {exc.json_path}: {_one_line(exc.message)}"
            raise UserError(message) from None
        except Exception as exc:  # jsonschema or referencing failing on a schema they take
            raise UserError(f"{source}: {_unusable(exc)}") from None

    def _build(self, schema: Mapping[str, Any] | bool, cls: Any) -> Any:
        cls.check_schema(schema)
        # The same resource and registry the validator will use, so the up-front $ref check
        # and validation agree; SPECIFICATIONS lets the official meta-schemas resolve offline.
        resource = _specification(cls).create_resource(schema)
        registry = SPECIFICATIONS.combine(referencing.Registry(retrieve=_refuse_retrieval))
        root_uri = resource.id() or ""
        registry = registry.with_resource(root_uri, resource)
        self._check_refs(resource, registry.resolver(root_uri))
        return bounded_validator(cls)(
            schema,
            registry=registry,
            format_checker=cls.FORMAT_CHECKER if self.check_formats else None,
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
            # referencing yields every value of a Draft 4-7 `dependencies` whose first value
            # is a schema, the property lists too (`{"a": {}, "b": ["a"]}`): skip those.
            pending.extend(
                (sub, scope)
                for sub in resource.subresources()
                if isinstance(sub.contents, Mapping | bool)
            )

    def validation_errors(self, instance: Any) -> list[ValidationError]:
        """jsonschema's errors for `instance` (at most _ERRORS_TO_RANK), most relevant
        first; [] when it is valid. Pattern matches share one time budget."""
        try:
            with time_budget():
                found = list(
                    itertools.islice(self._validator.iter_errors(instance), _ERRORS_TO_RANK)
                )
        except RecursionError:
            return [ValidationError("value nested too deeply to validate")]
        except Unresolvable as exc:  # e.g. a $dynamicRef, which the up-front check skips
            ref = str(getattr(exc, "ref", exc))
            raise UserError(f"{self.source}: {_ref_problem(ref, exc)}") from None
        except Exception as exc:  # jsonschema or referencing failing on this schema
            raise UserError(f"{self.source}: {_unusable(exc)}") from None
        found.sort(key=relevance)
        return found

    def errors(self, instance: Any, limit: int = DEFAULT_MAX_ERRORS) -> list[str]:
        """The `limit` most relevant problems, each as "JSON path: message"; [] when valid."""
        found = self.validation_errors(instance)[:limit]
        return [f"{e.json_path}: {_one_line(e.message)}" for e in found]

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


def _check_depth(schema: Mapping[str, Any] | bool, source: str) -> None:
    """Refuse a schema deeper than MAX_SCHEMA_DEPTH (counted without recursion)."""
    levels = depth(schema)
    if levels > MAX_SCHEMA_DEPTH:
        raise UserError(
            f"{source}: schema nested too deeply: {levels} JSON levels (limit {MAX_SCHEMA_DEPTH})"
        )


def _unusable(exc: BaseException) -> str:
    """A jsonschema or referencing failure on a schema as one line: a schema that is
    nested too deeply for the stack, or one the libraries cannot handle."""
    if isinstance(exc, RecursionError):
        return f"schema too deeply nested to check (limit {MAX_SCHEMA_DEPTH} levels)"
    detail = _one_line(str(exc)) or "no detail"
    return f"cannot be used as a JSON Schema ({type(exc).__name__}: {detail})"


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
    _check_depth(schema, source)  # before schema_key, whose json.dumps recurses too
    key = (schema_key(schema), check_formats, dialect)
    checker = _CACHE.get(key)
    if checker is None:
        checker = _CACHE[key] = SchemaChecker(
            schema, source=source, check_formats=check_formats, dialect=dialect
        )
    return checker
