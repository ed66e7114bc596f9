"""What the runner sends a backend about a constraint, and what the backend reports back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from edgebench.errors import UserError
from edgebench.runfolder.records import CompileOutcome
from edgebench.scoring.schema import schema_key

# mode -> what it forces; the order is the order results are listed in
MODES: dict[str, str] = {
    "none": "no constraint: the model's own output",
    "json": "any JSON object (hand-written GBNF grammar, llama.cpp sampler)",
    "gbnf": "the task's JSON Schema as GBNF (llama-cpp-python's converter, llama.cpp sampler)",
    "outlines": "the task's JSON Schema through Outlines 1.x (outlines-core index)",
    "mask": "the task's JSON Schema as a token mask from llguidance, with fast-forwarding",
    "xgrammar": "the task's JSON Schema through XGrammar inside OpenVINO GenAI (structured output)",
}


FREE_MODES = ("none", "json")  # the model decides where the JSON ends
# `MODE+close`: the arm closes answers cut off by the budget or a loop (`answer_end`).
CLOSE_SUFFIX = "+close"
CLOSABLE_MODES = ("mask",)


def accepted_modes() -> list[str]:
    """Every value `--constraint` takes: the modes, then each closing arm (`mask+close`)."""
    return [*MODES, *(f"{m}{CLOSE_SUFFIX}" for m in CLOSABLE_MODES)]


def engine_mode(arm_mode: str) -> str:
    """The constraint engine of an arm: `mask+close` decodes under `mask`."""
    return arm_mode.removesuffix(CLOSE_SUFFIX)


def closes(arm_mode: str) -> bool:
    """Whether an arm closes cut-off answers."""
    return arm_mode.endswith(CLOSE_SUFFIX)


def parse_modes(text: str, close: bool = False) -> list[str]:
    """`--constraint` value -> arm modes in the order given, without repeats; with
    `close` (`--close`) every schema mode becomes its closing arm."""
    modes = [part.strip() for part in text.split(",") if part.strip()]
    if not modes:
        raise UserError(f"--constraint: give at least one mode ({', '.join(accepted_modes())})")
    for mode in modes:
        engine = engine_mode(mode)
        if engine not in MODES:
            known = ", ".join(accepted_modes())
            raise UserError(f"--constraint: unknown mode '{mode}' (known: {known})")
        if closes(mode) and engine not in CLOSABLE_MODES:
            raise UserError(f"--constraint: '{mode}': closing is built for {_closable()}")
    if close:
        modes = [_closing_arm(mode) for mode in modes]
    return list(dict.fromkeys(modes))


def _closable() -> str:
    return ", ".join(f"{m}{CLOSE_SUFFIX}" for m in CLOSABLE_MODES)


def _closing_arm(mode: str) -> str:
    engine = engine_mode(mode)
    if engine in FREE_MODES:
        return mode
    if engine not in CLOSABLE_MODES:
        raise UserError(
            f"--close: '{mode}' cannot close answers (closing is built for {_closable()})"
        )
    return engine + CLOSE_SUFFIX


@dataclass(frozen=True)
class ConstraintRequest:
    """One constraint as a backend compiles it: the mode and, for schema modes, the schema.

    `key` names the compiled grammar in the backend's cache."""

    mode: str
    key: str
    schema: dict[str, Any] | None = None
    label: str = ""  # for messages: the schema id


def request_for(mode: str, schema: dict[str, Any], label: str) -> ConstraintRequest | None:
    """The request for one example under arm mode `mode`; None for `none`."""
    mode = engine_mode(mode)
    if mode == "none":
        return None
    if mode == "json":
        return ConstraintRequest(mode="json", key="json", label="json")
    return ConstraintRequest(mode=mode, key=schema_key(schema), schema=schema, label=label)


# The source of a compile that raised in the engine, killed or hung the worker: the
# schema is unsupported, and counted as a crash, not as the engine's refusal.
CRASHED_SOURCE = "worker"


@dataclass(frozen=True)
class CompileReport:
    """How compiling one constraint went.

    `seconds` covers everything from the schema to a grammar ready to decode with;
    `cached` says whether a compiled grammar already existed in memory; `source` says
    where the grammar text came from (for GBNF: converted, disk cache or bundled);
    `warnings` lists schema keywords the engine reads past without enforcing them."""

    mode: str
    key: str
    label: str
    ok: bool
    seconds: float
    cached: bool
    source: str = ""
    error: str | None = None
    # Schema keywords the engine accepted but does not enforce (output may break them).
    warnings: tuple[str, ...] = ()
    # Where edgebench's keyword guard enforces what the engine reads past.
    guarded: tuple[str, ...] = ()

    @classmethod
    def new(
        cls,
        request: ConstraintRequest,
        source: str,
        *,
        error: str | None = None,
        warnings: tuple[str, ...] = (),
        guarded: tuple[str, ...] = (),
        seconds: float = 0.0,
    ) -> CompileReport:
        """A first compile of `request` (ok unless `error`)."""
        return cls(
            request.mode,
            request.key,
            request.label,
            error is None,
            seconds,
            False,
            source,
            error,
            warnings,
            guarded,
        )

    @property
    def outcome(self) -> CompileOutcome | None:
        """compiled, refused or crashed for a schema constraint; None for `json`."""
        if self.mode == "json":
            return None
        if self.ok:
            return "compiled"
        return "crashed" if self.source == CRASHED_SOURCE else "refused"

    def as_cached(self, seconds: float) -> CompileReport:
        """The same outcome served again from a backend's in-memory cache."""
        return replace(self, seconds=seconds, cached=True, source="memory")

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["warnings"] = list(self.warnings)
        record["guarded"] = list(self.guarded)
        return record
