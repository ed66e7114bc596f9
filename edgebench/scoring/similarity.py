"""String similarity shared by STED and SO-Bench's fuzzy matching.

Normalised Levenshtein similarity, 1 - distance / max(len(a), len(b)), from rapidfuzz
(C++): "kitten" vs "sitting" is 1 - 3/7 = 0.571. Two empty strings are equal (1.0).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

STRING_SIMILARITY = "normalised Levenshtein similarity (rapidfuzz)"

# camelCase and PascalCase boundaries, acronyms kept together: "HTTPStatusCode" ->
# "HTTP Status Code", "userName2" -> "user Name2".
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s_\-.]+")


@lru_cache(maxsize=1)
def _levenshtein() -> Any:
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:  # a core dependency; only a broken install gets here
        from edgebench.errors import UserError

        raise UserError("string similarity needs rapidfuzz: pip install 'rapidfuzz>=3'") from None
    return Levenshtein


def text_similarity(a: str, b: str) -> float:
    """Normalised Levenshtein similarity in [0, 1]."""
    if a == b:
        return 1.0
    return float(_levenshtein().normalized_similarity(a, b))


@lru_cache(maxsize=65536)
def normalise_key(key: str) -> str:
    """camelCase, PascalCase, snake_case and kebab-case -> lower-case words:
    "userName", "user_name", "user-name" and "UserName" all become "user name"."""
    spaced = _CAMEL.sub(" ", key)
    return " ".join(word for word in _SEPARATORS.split(spaced.lower()) if word)
