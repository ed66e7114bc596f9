"""Which extraction turns a task's raw outputs into the JSON value it scores: `--parse`.

`lenient` (the default) is edgebench's own rule (scoring/parse.py); `reference` is what
the task's published reference scorer accepts (scoring/reference.py), keyed by the
scorer's name, which the task declares (tasks/__init__.py).
A task with no published scorer (roundtrip) is scored leniently in both modes, and says so.
Valid JSON is the same in both modes: the answer's own top-level value parses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from edgebench.errors import UserError
from edgebench.scoring.parse import ParseResult, parse_json_output
from edgebench.scoring.reference import (
    deepjsoneval_parse,
    edgejson_harness_parse,
    jsonschemabench_parse,
)

PARSE_MODES = ("lenient", "reference")
DEFAULT_PARSE = "lenient"


@dataclass(frozen=True)
class Extraction:
    """One way of extracting the scored value: its name and where its rule comes from."""

    name: str  # lenient, or the reference scorer's name
    source: str  # the code or document that defines it
    extract: Callable[[str], ParseResult]

    def parse(self, raw: str) -> ParseResult:
        """The scored value, with valid JSON by the lenient rule whatever extracted it."""
        result = self.extract(raw)
        if self.extract is parse_json_output:
            return result
        return replace(result, answer_json=parse_json_output(raw).ok)


LENIENT = Extraction("lenient", "docs/metrics.md, Shared rules", parse_json_output)

# scorer name -> its extraction; a task names its published scorer (tasks/__init__.py)
REFERENCES = {
    e.name: e
    for e in (
        Extraction(
            "deepjsoneval",
            "GTS-AI-Infra-Lab-SotaS/DeepJSONEval utils.py json_evaluation_new",
            deepjsoneval_parse,
        ),
        Extraction(
            "edgejson-harness",
            "CycleCore-Technologies/slmbench benchmarks/edge_json/scripts/eval.py "
            "extract_json_from_text",
            edgejson_harness_parse,
        ),
        Extraction(
            "jsonschemabench",
            "guidance-ai/jsonschemabench eval.py validation_process",
            jsonschemabench_parse,
        ),
    )
}


def check_parse_mode(mode: str) -> str:
    """`mode` if it is one, else a one-line error naming the option."""
    if mode not in PARSE_MODES:
        raise UserError(f"--parse: unknown mode {mode!r} (use {' or '.join(PARSE_MODES)})")
    return mode


def extraction_for(mode: str, reference: str | None) -> Extraction:
    """The extraction `--parse MODE` means for a task whose published scorer is
    `reference` (None: it has none)."""
    if check_parse_mode(mode) == "reference":
        return REFERENCES.get(reference or "", LENIENT)
    return LENIENT


def describe_parse(mode: str, task: str, reference: str | None) -> str:
    """How a run's outputs were extracted, in a few words for tables and cards."""
    if mode not in PARSE_MODES:  # a record written by another version: shown as is
        return mode
    extraction = extraction_for(mode, reference)
    if mode == "lenient":
        return "lenient"
    if extraction is LENIENT:
        return f"reference (no published scorer for {task}: lenient)"
    return f"reference ({extraction.name})"
