"""`edgebench models check`: is a model file safe to load, and does llama.cpp accept it?

Two steps, the second only for files that pass the first:
1. the header, read in pure Python (models/gguf.py): magic, version, counts, every
   length inside the file, the tensor table as llama.cpp lays it out;
2. a native load and a two-token decode in a worker process, so a file that crashes
   llama.cpp (the GGUF CVEs) kills that worker, not edgebench. One worker serves file
   after file; after a crash a fresh one takes over.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.backends import backend_for
from edgebench.backends.base import DecodeSettings
from edgebench.backends.worker import BackendWorker
from edgebench.errors import UserError
from edgebench.failures import WorkerDied, WorkerError, WorkerTimeout, worker_failure
from edgebench.models.gguf import read_gguf
from edgebench.runtimes import runtime_for_format

CHECK_N_CTX = 64
CHECK_TIMEOUT_S = 60.0

OK, REJECTED, REFUSED, CRASHED, TIMEOUT = "ok", "rejected", "refused", "crashed", "timeout"


@dataclass(frozen=True)
class ModelCheck:
    """`verdict`: ok; rejected (by the header check, nothing native ran); refused (by
    llama.cpp, cleanly); crashed (the worker died); timeout (it hung)."""

    path: Path
    verdict: str
    detail: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "detail", " ".join(self.detail.split()))  # one line

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "verdict": self.verdict, "detail": self.detail}


def check_models(
    paths: list[Path], *, load: bool = True, timeout: float = CHECK_TIMEOUT_S
) -> list[ModelCheck]:
    results: dict[Path, ModelCheck] = {}
    loadable: list[tuple[Path, int]] = []
    for path in paths:
        try:
            header = read_gguf(path)
        except UserError as exc:
            results[path] = ModelCheck(path, REJECTED, str(exc))
            continue
        except Exception as exc:  # a reader bug on one stranger's file
            # must not cost the report on the others: it is that file's verdict.
            detail = f"the header reader failed on {path}: {type(exc).__name__}: {exc}"
            results[path] = ModelCheck(path, REJECTED, detail)
            continue
        n_ctx = min(CHECK_N_CTX, header.context_length or CHECK_N_CTX)
        if load:
            loadable.append((path, max(n_ctx, 8)))
        else:
            results[path] = ModelCheck(path, OK, "header checked (not loaded)")
    results.update(_load_each(loadable, timeout))
    return [results[p] for p in paths]


def _load_each(files: list[tuple[Path, int]], timeout: float) -> dict[Path, ModelCheck]:
    results: dict[Path, ModelCheck] = {}
    worker: BackendWorker | None = None
    runtime = runtime_for_format("gguf")  # the runtime that loads GGUF files
    backend, mode_options = backend_for(runtime.name, "none")
    try:
        for path, n_ctx in files:
            options = {"model_path": str(path), "n_threads": 1, **mode_options}
            try:
                if worker is None:
                    worker = BackendWorker(backend, options)
                else:
                    worker.reopen(backend, options)
                worker.load(n_ctx, timeout=timeout)
                gen = worker.generate("Hello", DecodeSettings(max_tokens=2), timeout=timeout)
                detail = f"loads and decodes ({gen.output_tokens} tokens)"
                results[path] = ModelCheck(path, OK, detail)
            except WorkerError as exc:
                results[path] = ModelCheck(path, REFUSED, str(exc))
            except WorkerDied as exc:
                died = worker_failure(exc, f"during {exc.during}", who="the worker").line
                results[path] = ModelCheck(path, CRASHED, f"{runtime.label} crashed: {died}")
                worker.close()  # type: ignore[union-attr]
                worker = None
            except WorkerTimeout as exc:
                results[path] = ModelCheck(path, TIMEOUT, str(exc))
                worker.close()  # type: ignore[union-attr]
                worker = None
    finally:
        if worker is not None:
            worker.close()
    return results
