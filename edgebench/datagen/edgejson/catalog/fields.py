"""Fields several schema types share, so they are described the same way everywhere."""

from __future__ import annotations

from edgebench.datagen.edgejson import schema_dsl as s

TIME = "Local time, 24-hour HH:MM"


def named_place(name: str, description: str) -> s.Schema:
    """A business and its city: a store, a filling station."""
    return s.obj({"name": s.string(name), "city": s.string("City")}, description=description)


def city_country(description: str) -> s.Schema:
    return s.obj(
        {"city": s.string("City"), "country": s.string("Country")}, description=description
    )
