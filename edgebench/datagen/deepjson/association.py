"""The node association score of DeepJSONEval (arXiv:2509.25922), Appendix B (eqs. 11-13).

    Assoc(u, v) = exp(-alpha * d(u, v)) * (lambda_name * s_name + lambda_desc * s_desc)

d is the distance in the property tree. s_name compares the property names (their words
after splitting CamelCase, by `difflib`'s ratio). s_desc is the cosine of description
embeddings phi(desc). The paper leaves phi open (a text embedding model); edgebench's
cheap default needs no model download: a 512-dimensional hashed bag of lower-cased words
and of character 3-grams inside words, L2-normalised. It makes "Cache size in KB" close to
"Cache memory of the cluster" and far from "Flower colours", which is what the score is
for. Any callable str -> unit vector can replace it (`Association(embed=...)`).
"""

from __future__ import annotations

import difflib
import math
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from edgebench.datagen.deepjson.tree import Tree

EMBEDDING_DIM = 512
_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def name_words(name: str) -> str:
    """`SampleRateHz` -> "sample rate hz"."""
    return " ".join(part.lower() for part in _CAMEL.split(name))


def hashed_embedding(text: str, dim: int = EMBEDDING_DIM) -> np.ndarray:
    """Words and in-word character 3-grams, hashed with CRC32 (stable across runs and
    machines, unlike Python's salted `hash`) into `dim` buckets; unit length."""
    vector = np.zeros(dim)
    for word in _WORD.findall(text.lower()):
        vector[zlib.crc32(word.encode()) % dim] += 1.0
        padded = f"<{word}>"
        for i in range(len(padded) - 2):
            vector[zlib.crc32(padded[i : i + 3].encode()) % dim] += 0.5
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def name_similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, name_words(a), name_words(b)).ratio()


@dataclass
class Association:
    """Assoc(u, v) over one tree, cached per pair (Algorithm 1 asks for it often)."""

    tree: Tree
    alpha: float = 0.35  # distance decay of eq. 11
    lambda_name: float = 0.4
    lambda_desc: float = 0.6
    embed: Callable[[str], np.ndarray] = hashed_embedding
    _vectors: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    _cache: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not math.isclose(self.lambda_name + self.lambda_desc, 1.0):
            raise ValueError("lambda_name + lambda_desc must be 1 (eq. 13)")

    def _vector(self, node: str) -> np.ndarray:
        if node not in self._vectors:
            self._vectors[node] = self.embed(self.tree.nodes[node].description)
        return self._vectors[node]

    def __call__(self, u: str, v: str) -> float:
        key = (u, v) if u <= v else (v, u)
        if key not in self._cache:
            kappa = math.exp(-self.alpha * self.tree.distance(u, v))
            s_name = name_similarity(self.tree.nodes[u].name, self.tree.nodes[v].name)
            s_desc = max(0.0, float(self._vector(u) @ self._vector(v)))
            self._cache[key] = kappa * (self.lambda_name * s_name + self.lambda_desc * s_desc)
        return self._cache[key]
