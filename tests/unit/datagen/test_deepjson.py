"""The depth-stratified generator: Algorithm 1 and its association score, the generated
rows (reproducible, valid, depth on target, values in the text) and its checks."""

from __future__ import annotations

import json
import math
import random
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from edgebench.cli.data_cmd import data_app
from edgebench.datagen.deepjson import checks, generator
from edgebench.datagen.deepjson.association import (
    Association,
    hashed_embedding,
    name_similarity,
)
from edgebench.datagen.deepjson.domains import DEVICE, DOMAINS
from edgebench.datagen.deepjson.subtree import (
    SubtreeParams,
    candidate_paths,
    extract_subtrees,
    frontier,
    grow,
    path_value,
    subtree_depth,
)
from edgebench.datagen.deepjson.tree import Tree
from edgebench.datagen.edgejson.outcome import Status
from edgebench.resources import resource_dir
from edgebench.tasks.deepjson import schema_depth, value_depth
from edgebench.tasks.formats.deepjson import deepjson_row, read_deepjson

TREE = Tree.build(DEVICE)
ASSOC = Association(TREE)


def test_every_domain_reaches_depth_seven():
    assert len(DOMAINS) >= 5
    for domain in DOMAINS:
        assert Tree.build(domain).height(domain.root.name) >= 7, domain.name


def test_association_is_in_unit_range_and_decays_with_distance():
    parent, child = "Device.Hardware.Processor", "Device.Hardware.Processor.CoreCount"
    far = "Device.Battery.Charger.Connector"
    near, remote = ASSOC(parent, child), ASSOC(far, child)
    assert 0 <= remote < near <= 1
    assert ASSOC(child, parent) == near  # symmetric
    assert TREE.distance(far, child) == 6
    assert name_similarity("SampleRateHz", "SampleRateHz") == 1.0
    # the cheap description embedding: unit length, deterministic, similar texts closer
    a = hashed_embedding("Cache size in KB")
    assert math.isclose(float(a @ a), 1.0)
    assert float(a @ hashed_embedding("Cache memory of the cluster")) > float(
        a @ hashed_embedding("Flower colours")
    )
    with pytest.raises(ValueError, match="must be 1"):
        Association(TREE, lambda_name=0.5, lambda_desc=0.6)


def test_candidate_paths_start_at_the_frontier_and_end_at_leaves():
    nodes = {"Device", "Device.Hardware"}
    params = SubtreeParams(d_min=3, d_max=3, n_min=3, n_max=20)
    assert "Device.Hardware.Processor" in frontier(TREE, nodes)
    paths = list(candidate_paths(TREE, "Device", nodes, params))
    assert paths and all(TREE.nodes[p[-1]].is_leaf for p in paths)
    assert all(TREE.parent[p[0]] in nodes and p[0] not in nodes for p in paths)
    # depth 3 allows level-3 leaves only: nothing below Processor fits
    assert ("Device.Hardware.MemoryGB",) in paths
    assert not any(len(p) > 1 and p[0] == "Device.Hardware.Processor" for p in paths)


def test_path_value_rewards_the_depth_window_and_rejects_infeasible_paths():
    nodes = {"Device"}
    params = SubtreeParams(d_min=3, d_max=3, n_min=3, n_max=8)
    to_depth_3 = ("Device.Battery", "Device.Battery.CapacityMah")
    to_depth_2 = ("Device.Brand",)
    assert path_value(TREE, "Device", nodes, to_depth_3, ASSOC, params) > path_value(
        TREE, "Device", nodes, to_depth_2, ASSOC, params
    )
    too_deep = ("Device.Battery", "Device.Battery.Charger", "Device.Battery.Charger.PowerWatts")
    assert path_value(TREE, "Device", nodes, too_deep, ASSOC, params) == -math.inf
    # eq. 5: a path that does not start at the frontier is penalised by eta
    detached = ("Device.Battery.CapacityMah",)
    attached = ("Device.Brand",)
    gap = path_value(TREE, "Device", nodes, attached, ASSOC, params) - path_value(
        TREE, "Device", nodes, detached, ASSOC, params
    )
    assert gap > params.eta - 2


def test_grow_meets_both_windows_or_gives_up():
    for depth in range(3, 8):
        params = SubtreeParams(d_min=depth, d_max=depth, n_min=2 * depth, n_max=2 * depth + 6)
        subtree = grow(TREE, "Device", params, ASSOC, random.Random(depth))
        assert subtree is not None
        assert subtree.depth == depth == subtree_depth(TREE, "Device", subtree.nodes)
        assert params.n_min <= len(subtree.nodes) <= params.n_max
        assert subtree.nodes[0] == "Device"
    impossible = SubtreeParams(d_min=7, d_max=7, n_min=60, n_max=61)  # the tree has 43
    assert grow(TREE, "Device", impossible, ASSOC) is None
    # the paper's form: one attempt per root, deterministic
    found = extract_subtrees(TREE, SubtreeParams(d_min=3, d_max=4, n_min=5, n_max=12))
    assert found == extract_subtrees(TREE, SubtreeParams(d_min=3, d_max=4, n_min=5, n_max=12))
    assert all(3 <= s.depth <= 4 for s in found)


def test_generation_is_reproducible_and_seeded():
    first = generator.render_files(seed=11, per_depth=2)
    assert first == generator.render_files(seed=11, per_depth=2)
    assert first != generator.render_files(seed=12, per_depth=2)


def test_generated_rows_pass_every_check_of_their_own():
    rows = generator.generate_rows(seed=3, per_depth=6)
    assert [r["true_depth"] for r in rows[:5]] == [3, 4, 5, 6, 7]
    for row in rows:
        assert schema_depth(row["schema"]) == row["true_depth"] == value_depth(row["json"])
        assert row["schema"]["additionalProperties"] is False  # exactly the stated keys
    parsed = [deepjson_row(r, f"rows:{i}", f"row-{i}") for i, r in enumerate(rows, 1)]
    results = {r.name: r for r in checks.run_checks(parsed, builtin=True)}
    for name in ("rows load", "depth equals the target", "object validates against its schema",
                 "every leaf value appears in the text", "no duplicate texts",
                 "at least 5 domains"):  # fmt: skip
        assert results[name].status is Status.PASS, results[name]
    assert [row.id for row in parsed] == [r["id"] for r in rows]
    # 6 per depth is below the 40 the built-in set needs
    assert results["at least 40 examples per depth 3-7"].status is Status.FAIL


def test_built_in_data_is_what_the_generator_writes():
    folder = resource_dir("data") / "deepjson"
    manifest = json.loads((folder / generator.MANIFEST_FILE).read_text())
    files = generator.render_files(manifest["seed"], manifest["examples_per_depth"])
    assert (folder / generator.DATASET_FILE).read_text() == files[generator.DATASET_FILE]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(resource_dir("data") / "deepjson", tmp_path / "deepjson")
    return tmp_path / "deepjson"


def _rewrite(folder: Path, change) -> None:
    path = folder / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    change(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_validate_passes_on_the_built_in_set_and_catches_each_problem(copy: Path):
    runner = CliRunner()
    ok = runner.invoke(data_app, ["validate", "--task", "deepjson"])
    assert ok.exit_code == 0, ok.output
    assert "all 7 checks passed" in ok.output

    def break_rows(rows):
        rows[0]["true_depth"] = 4  # depth no longer on target
        rows[1]["json"] = {"unexpected": 1}  # invalid against its schema
        rows[2]["text"] = "Nothing to see here."  # values missing from the text

    _rewrite(copy, break_rows)
    failed = runner.invoke(data_app, ["validate", "--task", "deepjson", str(copy)])
    assert failed.exit_code == 1
    rows = read_deepjson(copy / "test.jsonl")
    results = {r.name: r for r in checks.run_checks(rows, builtin=False)}
    assert "target depth 4, schema depth 3" in results["depth equals the target"].problems[0]
    assert results["object validates against its schema"].problems[0].startswith("deepjson-d4-000")
    assert "not in the text" in results["every leaf value appears in the text"].problems[0]


def test_boolean_values_are_checked_through_their_phrase(copy: Path):
    rows = [json.loads(line) for line in (copy / "test.jsonl").read_text().splitlines()]
    # a row with a single boolean (in a list, both predicates may be stated)
    with_bool = next(r for r in rows if json.dumps(r["json"]).count('": true') == 1
                     and '": false' not in json.dumps(r["json"]))  # fmt: skip
    row = deepjson_row(with_bool, "test.jsonl:1", "unused", "line 1")
    assert checks.values_in_text([row]).status is Status.PASS
    flipped = json.loads(json.dumps(with_bool["json"]).replace('": true', '": false', 1))
    assert checks.values_in_text([replace(row, expected=flipped)]).status is Status.FAIL
    # without the subtree root the booleans cannot be looked up: not checked, not failed
    unrooted = checks.values_in_text([replace(row, meta={})])
    assert unrooted.status is Status.PASS and "booleans outside" in unrooted.detail


def test_generate_command_writes_and_help_shows_examples(tmp_path: Path):
    runner = CliRunner()
    result = runner.invoke(
        data_app,
        ["generate", "deepjson", "--out", str(tmp_path), "--examples-per-depth", "1"],
    )
    assert result.exit_code == 0, result.output
    assert "wrote 5 rows" in result.output
    assert len((tmp_path / "test.jsonl").read_text().splitlines()) == 5
    bad = runner.invoke(data_app, ["generate", "deepjson", "--out", str(tmp_path),
                                   "--examples-per-depth", "0"])  # fmt: skip
    assert "at least 1" in str(bad.exception)
    help_text = runner.invoke(data_app, ["generate", "deepjson", "--help"]).output
    assert "Example: edgebench data generate deepjson" in help_text
