"""`edgebench doctor`'s section per optional runtime that declares one (`Runtime.doctor_facts`):
its versions and CPU plugin when installed, asked in a throwaway process (a plugin that
crashes dies there), or the line that installs it. A runtime not installed is found by
its package metadata, so nothing is imported for it."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from edgebench.errors import UserError
from edgebench.failures import OutOfMemory, WorkerDied, WorkerTimeout, worker_failure
from edgebench.isolation import call_isolated
from edgebench.runtimes import RUNTIMES, Runtime

_TIMEOUT = 60.0
_MEMORY = 2 * 1024**3

Call = Callable[[Callable[[], dict[str, str]]], dict[str, str]]


@dataclass
class RuntimeFacts:
    """One runtime's doctor section: `rows` label -> value, as its backend words them."""

    runtime: str
    label: str
    installed: bool
    rows: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runtime": self.runtime,
            "label": self.label,
            "installed": self.installed,
            "facts": self.rows,
        }


def _isolated(function: Callable[[], dict[str, str]]) -> dict[str, str]:
    return call_isolated(function, (), timeout=_TIMEOUT, memory_bytes=_MEMORY)


def installed(package: str) -> bool:
    try:
        metadata.version(package)
    except metadata.PackageNotFoundError:
        return False
    return True


def facts_of(runtime: Runtime, call: Call = _isolated) -> RuntimeFacts:
    """The facts `runtime` declares, or why there are none, as one line."""
    if runtime.doctor_facts is None or runtime.package is None:
        raise ValueError(f"runtime {runtime.name!r} declares no doctor facts")
    if not installed(runtime.package):
        hint = f"pip install 'edgebench[{runtime.install_extra}]'"
        return RuntimeFacts(runtime.name, runtime.label, False, {"not installed": hint})
    module, name = runtime.doctor_facts
    function = getattr(importlib.import_module(module), name)
    try:
        rows = call(function)
    except UserError as exc:
        rows = {"error": str(exc)}
    except WorkerDied as exc:
        rows = {"error": worker_failure(exc, "", who=f"loading {runtime.label}").line}
    except (WorkerTimeout, OutOfMemory) as exc:
        rows = {"error": f"loading {runtime.label} failed: {exc}"}
    return RuntimeFacts(runtime.name, runtime.label, True, rows)


def runtime_facts(
    runtimes: Iterable[Runtime] | None = None, call: Call = _isolated
) -> list[RuntimeFacts]:
    """A section per runtime that declares doctor facts, in registry order."""
    chosen = RUNTIMES.values() if runtimes is None else runtimes
    return [facts_of(r, call) for r in chosen if r.doctor_facts is not None]
