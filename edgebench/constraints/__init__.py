"""Constrained decoding: which output constraints exist and what each one needs.

A run can decode the same examples under several constraint modes (`--constraint
none,json,gbnf,outlines,mask`); each mode runs in its own worker so its memory and its
crashes are its own. See docs/constrained-decoding.md.
"""

from __future__ import annotations

from edgebench.constraints.spec import (
    CRASHED_SOURCE,
    FREE_MODES,
    MODES,
    CompileReport,
    ConstraintRequest,
    closes,
    engine_mode,
    parse_modes,
    request_for,
    schema_key,
)

__all__ = [
    "CRASHED_SOURCE",
    "FREE_MODES",
    "MODES",
    "CompileReport",
    "ConstraintRequest",
    "closes",
    "engine_mode",
    "parse_modes",
    "request_for",
    "schema_key",
]
