"""All schema types of the built-in dataset, in the order the generator writes them."""

from __future__ import annotations

from edgebench.datagen.edgejson.catalog.complex import COMPLEX_SPECS
from edgebench.datagen.edgejson.catalog.medium import MEDIUM_SPECS
from edgebench.datagen.edgejson.catalog.simple import SIMPLE_SPECS
from edgebench.datagen.edgejson.spec import SchemaSpec

ALL_SPECS: tuple[SchemaSpec, ...] = SIMPLE_SPECS + MEDIUM_SPECS + COMPLEX_SPECS
SPECS_BY_ID: dict[str, SchemaSpec] = {spec.schema_id: spec for spec in ALL_SPECS}

if len(SPECS_BY_ID) != len(ALL_SPECS):  # fails at import, so any test catches it
    raise RuntimeError("two schema specs share a schema_id")
