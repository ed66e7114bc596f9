"""Generate the built-in DeepJSONEval-style set and write it to a folder.

Per target depth 3..7 and example, from a seeded `random.Random("<seed>/<depth>/<i>")`:
pick a domain (rotating through all), a root (the domain root half of the time, else an
object deep enough for the target), top_k and the size window; run Algorithm 1
(`subtree.grow`) with d_min = d_max = the target depth until a subtree meets both windows;
turn it into a JSON Schema and a ground truth valid against it; write the text. Rows are
ordered depth by depth in turn (3, 4, 5, 6, 7, 3, ...) so `--limit 25` takes five of each.
Nothing depends on the clock or the machine: the same seed writes byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from edgebench.datagen.deepjson.association import EMBEDDING_DIM, Association
from edgebench.datagen.deepjson.domains import DOMAINS
from edgebench.datagen.deepjson.instance import build_schema, build_value
from edgebench.datagen.deepjson.prose import render_text
from edgebench.datagen.deepjson.subtree import Subtree, SubtreeParams, grow
from edgebench.datagen.deepjson.tree import OBJECT, Tree
from edgebench.errors import UserError
from edgebench.io import json_text, jsonl_text, write_text_files

GENERATOR_VERSION = "1.1"  # 1.1: objects allow no additional properties
DEFAULT_SEED = 5
DEFAULT_PER_DEPTH = 48
DEPTHS = (3, 4, 5, 6, 7)
DATASET_FILE = "test.jsonl"
MANIFEST_FILE = "generation.json"

# Size window |V_S| (nodes, the root included): n_min = 2 * depth + U{0..3},
# n_max = n_min + SIZE_SPAN: a deep schema needs its chain of objects plus leaves to fill.
# top_k (beam width) is drawn from TOP_K.
SIZE_SPAN = 6
TOP_K = (2, 4)
NOISE = 0.3  # standard deviation of the seeded noise on Val (see subtree.py)
ROOT_IS_DOMAIN_ROOT = 0.5
MAX_ATTEMPTS = 200


def _trees() -> dict[str, tuple[Tree, Association]]:
    trees = {}
    for domain in DOMAINS:
        tree = Tree.build(domain)
        trees[domain.name] = (tree, Association(tree))
    return trees


def _draw_subtree(
    tree: Tree, assoc: Association, depth: int, rng: random.Random
) -> tuple[Subtree, SubtreeParams]:
    roots = [n for n, p in tree.nodes.items() if p.kind == OBJECT and tree.height(n) >= depth]
    for _ in range(MAX_ATTEMPTS):
        use_domain_root = tree.height(tree.root) >= depth and rng.random() < ROOT_IS_DOMAIN_ROOT
        root = tree.root if use_domain_root else rng.choice(roots)
        params = SubtreeParams(
            d_min=depth,
            d_max=depth,
            n_min=(n_min := 2 * depth + rng.randint(0, 3)),
            n_max=n_min + SIZE_SPAN,
            top_k=rng.randint(*TOP_K),
            noise=NOISE,
        )
        subtree = grow(tree, root, params, assoc, rng)
        if subtree is not None:
            return subtree, params
    raise RuntimeError(f"{tree.domain.name}: no subtree of depth {depth} in {MAX_ATTEMPTS} tries")


def generate_example(
    trees: dict[str, tuple[Tree, Association]], seed: int, depth: int, index: int
) -> dict[str, Any]:
    rng = random.Random(f"{seed}/{depth}/{index}")
    domain = DOMAINS[(index + depth) % len(DOMAINS)]
    tree, assoc = trees[domain.name]
    subtree, params = _draw_subtree(tree, assoc, depth, rng)
    schema = build_schema(tree, subtree)
    truth = build_value(tree, subtree, subtree.root, rng)
    entity = rng.choice(domain.names)
    return {
        "id": f"deepjson-d{depth}-{index:03d}",
        "category": domain.name,
        "true_depth": depth,
        "schema": schema,
        "json": truth,
        "text": render_text(tree, subtree, truth, entity, rng),
        "meta": {
            "root": subtree.root,
            "properties": len(subtree.nodes) - 1,
            "rounds": subtree.rounds,
            "top_k": params.top_k,
            "n_window": [params.n_min, params.n_max],
        },
    }


def generate_rows(seed: int = DEFAULT_SEED, per_depth: int = DEFAULT_PER_DEPTH) -> list[dict]:
    trees = _trees()
    return [
        generate_example(trees, seed, depth, index)
        for index in range(per_depth)
        for depth in DEPTHS
    ]


def _manifest(rows: list[dict[str, Any]], seed: int, per_depth: int, sha256: str) -> dict:
    return {
        "generator": "edgebench.datagen.deepjson",
        "generator_version": GENERATOR_VERSION,
        "algorithm": "DeepJSONEval (arXiv:2509.25922) Algorithm 1, beam subtree construction",
        "seed": seed,
        "examples_per_depth": per_depth,
        "rows": len(rows),
        "rows_per_depth": {
            str(d): c for d, c in sorted(Counter(r["true_depth"] for r in rows).items())
        },
        "rows_per_domain": dict(sorted(Counter(r["category"] for r in rows).items())),
        "parameters": {
            "size_window": f"n_min = 2 * depth + U{{0..3}}, n_max = n_min + {SIZE_SPAN}",
            "top_k": list(TOP_K),
            "noise": NOISE,
            "association": {
                "alpha": Association.alpha,
                "lambda_name": Association.lambda_name,
                "lambda_desc": Association.lambda_desc,
                "description_embedding": f"hashed words + char 3-grams, {EMBEDDING_DIM} dims",
            },
            "value": {k: getattr(SubtreeParams, k) for k in (
                "alpha", "gamma", "lambda_depth", "lambda_size", "eta", "epsilon")},
        },
        "files": {DATASET_FILE: {"sha256": sha256}},
    }  # fmt: skip


def render_files(seed: int = DEFAULT_SEED, per_depth: int = DEFAULT_PER_DEPTH) -> dict[str, str]:
    rows = generate_rows(seed, per_depth)
    dataset = jsonl_text(rows)
    sha256 = hashlib.sha256(dataset.encode("utf-8")).hexdigest()
    manifest = _manifest(rows, seed, per_depth, sha256)
    return {DATASET_FILE: dataset, MANIFEST_FILE: json_text(manifest)}


def write_dataset(
    out_dir: Path, seed: int = DEFAULT_SEED, per_depth: int = DEFAULT_PER_DEPTH
) -> dict[str, Any]:
    """Write test.jsonl and generation.json into `out_dir`; return the manifest."""
    if per_depth < 1:
        raise UserError(f"--examples-per-depth must be at least 1, got {per_depth}")
    files = render_files(seed, per_depth)
    write_text_files(out_dir, files)
    return json.loads(files[MANIFEST_FILE])
