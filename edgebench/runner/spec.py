"""The model under test as the runner needs it, and how it is listed in the manifest."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.prompts import PromptFormat
from edgebench.runfolder.records import ModelRecord, PromptFormatRecord
from edgebench.runtimes import DEFAULT_RUNTIME

# RunSettings a `--resume` may change: how trouble is handled, and where things are (the
# model and the dataset are compared by content hash instead).
RESUMABLE_CHANGES = frozenset(
    {
        "model",
        "dataset",
        "schemas",
        "out",
        "timeout",
        "compile_timeout",
        "max_crashes",
        "check_memory",
        # how long to wait for the machine: what each example measures stays the same
        "delay",
        "wait_cool",
        "wait_cool_timeout",
        "fidelity",  # the phase after the arms: measured again or not, the arms are the same
    }
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
    backend: str = DEFAULT_RUNTIME
    # What the model file says of itself: registry_name, format, architecture,
    # quantization ... (the optional fields of ModelRecord).
    details: dict[str, Any] = field(default_factory=dict)
    stop: tuple[str, ...] = ()
    # K and V cache bytes per token of context (from the model's metadata), for the
    # memory pre-check; None when the model does not say.
    kv_bytes_per_token: int | None = None
    # base or instruct (models/registry.py `tuning_of`); None when not known.
    tuning: str | None = None

    @property
    def prompt_record(self) -> PromptFormatRecord:
        return PromptFormatRecord.from_json(self.prompt_format.describe())

    def record(self) -> ModelRecord:
        """The model as the manifest lists it (its plan is added once the run plans it)."""
        details = {"format": "gguf", **self.details}
        return ModelRecord(
            label=self.label,
            path=str(self.path),
            sha256=self.sha256,
            size_bytes=self.size_bytes,
            backend=self.backend,
            prompt_format=self.prompt_record,
            **details,
        )
