"""What a run is asked to do: its settings and the model under test (no behaviour here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.prompts import PromptFormat

DEFAULT_MAX_CRASHES = 3


@dataclass(frozen=True)
class RunSettings:
    """Everything that decides what a run measures; all of it lands in the manifest.

    `timeout`, `max_crashes` and `check_memory` decide how the run copes with trouble,
    not what it measures, so `--resume` may change them (see `RESUMABLE_CHANGES`)."""

    model: str | None = None
    task: str = "edgejson"
    dataset: Path | None = None
    schemas: Path | None = None
    limit: int | None = None
    threads: int = 2
    max_tokens: int | None = None  # None: per schema, from the dataset's expected answers
    n_ctx: int | None = None  # None: sized to the longest prompt + its max_tokens
    out: Path | None = None
    warmup: bool = True
    constraints: tuple[str, ...] = ("none",)
    guard: bool = True  # the keyword guard in the schema modes (gbnf, outlines, mask)
    timeout: float | None = None  # seconds of wall clock per example; None: no limit
    max_crashes: int = DEFAULT_MAX_CRASHES  # worker failures in a row before an arm gives up
    check_memory: bool = True  # refuse a model that will not fit in available memory
    # Metric families beyond the task's own (`--metrics`), and their parameters.
    metrics: tuple[str, ...] = ()
    metric_params: dict[str, dict[str, Any]] = field(default_factory=dict)


# Settings `--resume` may change: how trouble is handled, and where things are (the model
# and the dataset are compared by content hash instead).
RESUMABLE_CHANGES = frozenset(
    {"model", "dataset", "schemas", "out", "timeout", "max_crashes", "check_memory"}
)


@dataclass
class ModelUnderTest:
    """The model as the runner needs it: a label, a file, its identity and prompt format."""

    label: str
    path: Path
    sha256: str
    size_bytes: int
    prompt_format: PromptFormat
    n_ctx_train: int | None
    backend: str = "llama"
    details: dict[str, Any] = field(default_factory=dict)
    stop: tuple[str, ...] = ()
    # K and V cache bytes per token of context (from the model's metadata), for the
    # memory pre-check; None when the model does not say.
    kv_bytes_per_token: int | None = None
