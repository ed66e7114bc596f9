"""JSONSchemaBench on the real SmolLM2 under gbnf and mask: three schemas laid out like the
release (data/<Subset>/<name>.json), one with a look-ahead pattern both engines refuse;
real compile records, coverage per subset, and compliance of real outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.run_folder import final_samples

pytestmark = pytest.mark.model

SCHEMAS = {
    "Glaiveai2K/search_restaurants": {
        "properties": {
            "cuisine": {"description": "The cuisine to search for", "type": "string"},
            "location": {"description": "Where to search", "type": "string"},
        },
        "required": ["location", "cuisine"],
        "type": "object",
    },
    "Kubernetes/host_alias": {
        "properties": {
            "hostnames": {"items": {"type": ["string", "null"]}, "type": ["array", "null"]},
            "ip": {"type": ["string", "null"]},
        },
        "required": ["ip"],
        "type": "object",
    },
    "Github_easy/lookahead": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^(?!x)[a-z]{3}$"}},
        "required": ["code"],
    },
}


@pytest.fixture(scope="module")
def run_dir(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("schemas")
    for name, schema in SCHEMAS.items():
        path = folder / "data" / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(schema))
    out = folder / "run"
    done = subprocess.run(
        [sys.executable, "-m", "edgebench", "run", "--task", "schemas", "--dataset",
         str(folder), "--constraint", "gbnf,mask", "--max-tokens", "64", "--threads", "2",
         "--verbose", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "schema engine coverage" in done.stdout
    return out


def test_real_compile_records_and_coverage_per_subset(run_dir: Path) -> None:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    for arm in manifest["arms"]:
        compiled = {c["label"]: c["ok"] for c in arm["compile"]}
        assert compiled == {
            "Github_easy/lookahead": False,
            "Glaiveai2K/search_restaurants": True,
            "Kubernetes/host_alias": True,
        }
    summary = json.loads((run_dir / "summary.json").read_text())
    for arm in summary["arms"]:
        by_subset = arm["coverage"]["groups"]["subset"]
        assert by_subset["Github_easy"]["refused"] == 1
        (reason,) = by_subset["Github_easy"]["refusals"]
        assert "(?!x)" in reason  # the engine's own message about the look-ahead
        for subset in ("Glaiveai2K", "Kubernetes"):
            assert by_subset[subset]["compiled"] == 1
            assert by_subset[subset]["compile_s"]["n"] == 1
        assert arm["coverage"]["overall"]["crashed"] == 0


def test_real_outputs_are_scored_for_compliance(run_dir: Path) -> None:
    samples = final_samples(run_dir)
    assert len(samples) == 6
    for sample in samples:
        scores = sample["scores"]["schemas"]
        assert set(scores) == {"schema_compliance", "valid_json"}
        if sample["compile_outcome"] == "refused":
            assert sample["finish_reason"] == "unsupported" and scores["valid_json"] == 0
    # A grammar-constrained answer that ended by itself is valid JSON of its schema.
    restaurants = [s for s in samples if s["id"] == "Glaiveai2K/search_restaurants"]
    for sample in restaurants:
        assert sample["compile_outcome"] == "compiled" and sample["finish_reason"] == "stop"
        assert sample["scores"]["schemas"]["schema_compliance"] == 1
