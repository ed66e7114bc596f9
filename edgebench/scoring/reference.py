"""The extractions of the benchmarks' published reference scorers (`--parse reference`),
rebuilt quirks included, so scores can be set beside the papers' tables.

- DeepJSONEval (GTS-AI-Infra-Lab-SotaS/DeepJSONEval, utils.py `json_evaluation_new`):
  `json.loads(output.split("```json")[-1].split("```")[0])`. The text after the last
  ```json (case-sensitive) up to the next ```; without one, the text before the first ```
  (so an untagged or upper-case fence leaves the prose before it), else the whole text.
  Prose around bare JSON, text after it, or a broken last ```json block: no value.
- EdgeJSON (CycleCore-Technologies/slmbench, benchmarks/edge_json/scripts/eval.py
  `extract_json_from_text`): the whole text (stripped) as any JSON value; else the first
  match of `\\{[^{}]*(?:\\{[^{}]*\\}[^{}]*)*\\}` (objects nested at most two deep) that
  decodes, which may be an object inside a longer or cut-off answer.
- JSONSchemaBench (guidance-ai/jsonschemabench, eval.py `validation_process`):
  `json.loads` of the whole (stripped) output, nothing else.

One deliberate difference from Python's `json.loads`, shared with the lenient rule:
NaN/Infinity, out-of-range numbers and integers over 4300 digits are refused
(scoring/strict.py), as a run record cannot carry them as JSON.
"""

from __future__ import annotations

import re

from edgebench.scoring.parse import ParsePath, ParseResult
from edgebench.scoring.strict import InvalidJSON, decode_strict

# The harness's pattern, verbatim (`re.findall(..., re.DOTALL)`).
_HARNESS_OBJECT = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}", re.DOTALL)


def _decoded(body: str, path: ParsePath) -> ParseResult:
    try:
        return ParseResult(True, decode_strict(body), path)
    except InvalidJSON as failure:
        reason = "JSON refused" if failure.refused else "invalid JSON"
        return ParseResult(False, None, "none", f"{reason} ({path}): {failure}")


def deepjsoneval_parse(raw: str) -> ParseResult:
    """DeepJSONEval's `json_evaluation_new` extraction."""
    if "```json" in raw:
        path: ParsePath = "fenced_json"
    elif "```" in raw:
        path = "before_fence"
    else:
        path = "whole"
    body = raw.split("```json")[-1].split("```")[0]
    if not body.strip():
        return ParseResult(False, None, "none", f"empty output ({path})")
    return _decoded(body, path)


def edgejson_harness_parse(raw: str) -> ParseResult:
    """The EdgeJSON harness's `extract_json_from_text`."""
    text = raw.strip()
    whole = _decoded(text, "whole")
    if whole.ok:
        return whole
    for match in _HARNESS_OBJECT.finditer(raw):
        found = _decoded(match.group(0), "brace_regex")
        if found.ok:
            return found
    if not text:
        return ParseResult(False, None, "none", "empty output")
    return ParseResult(False, None, "none", f"no object the harness decodes; {whole.error}")


def jsonschemabench_parse(raw: str) -> ParseResult:
    """JSONSchemaBench's `json.loads(output_text)` of the stripped output."""
    text = raw.strip()
    if not text:
        return ParseResult(False, None, "none", "empty output")
    return _decoded(text, "whole")
