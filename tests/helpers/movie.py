"""A small DeepJSONEval-style example (a movie with ratings) that the scoring and metric
tests work by hand: every leaf element type of the paper's Figure 8 but number_list."""

from __future__ import annotations

from typing import Any

MOVIE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["Year", "IsSequel", "Ratings", "Genres"],
    "properties": {
        "Year": {"type": "number"},
        "IsSequel": {"type": "boolean"},
        "Genres": {"type": "array", "items": {"type": "string"}},
        "Ratings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["Source", "Score"],
                "properties": {
                    "Source": {"type": "string", "enum": ["IMDb", "Metacritic"]},
                    "Score": {"type": "number"},
                },
            },
        },
    },
}
MOVIE: dict[str, Any] = {
    "Year": 2023,
    "IsSequel": False,
    "Genres": ["Thriller", "Sci-Fi"],
    "Ratings": [{"Source": "IMDb", "Score": 8.2}, {"Source": "Metacritic", "Score": 88}],
}
