"""What a task is: examples with a schema and an expected output, a prompt, and scores."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class Example:
    """One benchmark item.

    `text` is the input the model reads; `groups` holds the labels results are broken
    down by (for EdgeJSON: {"complexity": "simple", "schema": "notification"}).
    `budget_key` groups examples for the automatic token budget (None: by `schema_id`);
    a task whose every example has its own schema sets a coarser key, such as the depth.
    `where` names the row in its file ("file:line", "file: row N") for messages.
    """

    id: str
    text: str
    schema_id: str
    schema: dict[str, Any]
    expected: Any
    groups: dict[str, str] = field(default_factory=dict)
    budget_key: str | None = None
    where: str | None = field(default=None, compare=False)

    @property
    def budget_group(self) -> str:
        return self.budget_key or self.schema_id


@dataclass(frozen=True)
class Prompt:
    """A prompt before the model's chat template is applied."""

    system: str | None
    user: str


class PromptingTask(Protocol):
    """What the run engine asks of a task: its name, how it turns an example into a
    prompt, and the metric family that scores the model's output (metrics/)."""

    name: str
    prompt_template: str  # recorded verbatim in the manifest
    metric_family: str  # the family whose scores are the task's own

    def build_prompt(self, example: Example) -> Prompt: ...


class Task(PromptingTask, Protocol):
    """A task also finds and loads its examples (`edgebench run`, `score`)."""

    def resolve_paths(self, dataset: Path | None, schemas: Path | None) -> tuple[Path, Path | None]:
        """The dataset and schema locations to use, filling in the task's defaults."""
        ...

    def load(self, dataset: Path, schemas: Path | None) -> list[Example]: ...
