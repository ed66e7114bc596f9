"""What one schema type of the built-in dataset is: its JSON Schema, sampler and prose."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from edgebench.datagen.edgejson.rules import Rule
from edgebench.datagen.edgejson.schema_dsl import Schema, document
from edgebench.datagen.edgejson.values import Draw

Complexity = Literal["simple", "medium", "complex"]
COMPLEXITIES: tuple[Complexity, ...] = ("simple", "medium", "complex")


@dataclass(frozen=True)
class SchemaSpec:
    """One schema type.

    `sample` draws a full record (optional fields included; the generator drops some).
    `templates` are prose templates (see `prose`), `parts` the templates of list items, and
    `rules` fill the derived numbers after sampling. `noun` names the thing in the
    instruction that ends each prompt ("Extract the {noun} as JSON.").
    """

    schema_id: str
    complexity: Complexity
    title: str
    description: str
    noun: str
    properties: Mapping[str, Schema]
    sample: Callable[[Draw], dict[str, Any]]
    templates: tuple[str, ...]
    optional: tuple[str, ...] = ()
    parts: Mapping[str, str] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()

    def json_schema(self) -> Schema:
        return document(self.title, self.description, self.properties, self.optional)
