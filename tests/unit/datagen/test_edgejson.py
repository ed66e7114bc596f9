"""The built-in EdgeJSON-style generator: reproducible, in sync with data/, well shaped."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from jsonschema import Draft7Validator

from edgebench.datagen.edgejson import DEFAULT_SEED, generate_rows, render_files, write_dataset
from edgebench.datagen.edgejson.catalog import ALL_SPECS
from edgebench.datagen.edgejson.prose import render, slot_paths
from edgebench.datagen.edgejson.rules import Mean, Percent, Product, Sum, apply, mismatches
from edgebench.datagen.edgejson.shape import BOUNDS, leaves
from edgebench.resources import resource_dir

BUILTIN = resource_dir("data") / "edgejson"


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_same_seed_writes_identical_bytes(tmp_path: Path) -> None:
    write_dataset(tmp_path / "a", seed=7, examples_per_schema=3)
    write_dataset(tmp_path / "b", seed=7, examples_per_schema=3)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_different_seed_gives_different_rows() -> None:
    first = render_files(seed=1, examples_per_schema=3)["test.jsonl"]
    second = render_files(seed=2, examples_per_schema=3)["test.jsonl"]
    assert first != second


def test_committed_data_is_what_the_default_seed_generates() -> None:
    # Fails when a catalog edit was not followed by `edgebench data generate edgejson`.
    expected = {name: text.encode("utf-8") for name, text in render_files().items()}
    assert _tree(BUILTIN) == expected


def test_manifest_records_seed_counts_and_hash(tmp_path: Path) -> None:
    manifest = write_dataset(tmp_path, seed=DEFAULT_SEED, examples_per_schema=2)
    assert manifest["seed"] == DEFAULT_SEED
    assert manifest["rows"] == 2 * len(ALL_SPECS)
    assert sum(manifest["rows_per_complexity"].values()) == manifest["rows"]
    assert len(manifest["files"]["test.jsonl"]["sha256"]) == 64


def test_regenerating_removes_schemas_it_no_longer_writes(tmp_path: Path) -> None:
    write_dataset(tmp_path, examples_per_schema=1)
    stale = tmp_path / "schemas" / "simple" / "retired_schema.json"
    stale.write_text("{}")
    write_dataset(tmp_path, examples_per_schema=1)
    assert not stale.exists()


def test_schema_counts_per_complexity() -> None:
    counts = Counter(spec.complexity for spec in ALL_SPECS)
    assert len(ALL_SPECS) >= 24
    assert counts["simple"] >= 9 and counts["medium"] >= 8 and counts["complex"] >= 5


@pytest.mark.parametrize("spec", ALL_SPECS, ids=lambda spec: spec.schema_id)
def test_schema_is_draft07_and_within_its_complexity_bounds(spec) -> None:
    schema = spec.json_schema()
    Draft7Validator.check_schema(schema)
    assert schema["additionalProperties"] is False
    assert "pattern" not in str(schema)  # llama.cpp's grammar converter rejects many regexes
    assert BOUNDS[spec.complexity].problems(schema) == []


@pytest.mark.parametrize("spec", ALL_SPECS, ids=lambda spec: spec.schema_id)
def test_every_template_mentions_every_field(spec) -> None:
    fields = {leaf.path: leaf.required for leaf in leaves(spec.json_schema())}
    assert len(spec.templates) >= 3
    for template in spec.templates:
        always, optional = slot_paths(template, spec.parts)
        assert always | optional == set(fields), template
        # A required field inside [ ] could vanish from the text but not from the output.
        assert not {path for path in optional - always if fields[path]}, template


def test_rows_have_the_edgejson_v3_format() -> None:
    rows = generate_rows(examples_per_schema=2)
    assert all(
        list(row) == ["id", "schema_id", "complexity", "prompt", "expected_output"] for row in rows
    )
    assert all(row["prompt"].rstrip().endswith("as JSON.") for row in rows)


def test_render_fills_slots_and_drops_optional_segments() -> None:
    parts = {"item": "{qty} x {name}"}
    template = "{who} is {ok?fine|not fine}[, aged {age}]; bought {items:item} and {tags}."
    record = {"who": "Ann", "ok": False, "items": [{"qty": 2, "name": "tea"}], "tags": ["a", "b"]}
    assert render(template, record, parts) == "Ann is not fine; bought 2 x tea and a and b."
    assert "aged 40" in render(template, {**record, "age": 40}, parts)


def test_rules_fill_and_recheck_totals() -> None:
    rules = (
        Product("line_total", ("quantity", "unit_price"), each="items"),
        Sum("subtotal", ("items[].line_total",)),
        Percent("tax", "subtotal", "rate"),
        Sum("total", ("subtotal", "tax", "-discount")),
        Mean("average", "items[].unit_price"),
    )
    record = {"items": [{"quantity": 3, "unit_price": 1.1}, {"quantity": 1, "unit_price": 2.5}]}
    record.update(rate=10, discount=1)
    apply(rules, record)
    assert record["subtotal"] == 5.8 and record["tax"] == 0.58 and record["total"] == 5.38
    assert record["average"] == 1.8
    assert mismatches(rules, record) == []
    record["total"] = 5.41  # off by more than 0.02
    assert mismatches(rules, record) == [
        "total is 5.41, recomputed 5.38 (subtotal + tax - discount)"
    ]
