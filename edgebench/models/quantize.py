"""`models quantize SOURCE --types Q8_0,Q4_K_M`: llama.cpp's own quantizer
(`llama_model_quantize`, through llama-cpp-python; no extra binary) into the model cache.

Each type is made in a throwaway child process (native code that crashes or is killed
takes only the child), into a private folder beside the destination; the result's header
is read back (models/gguf.py) and must name the type asked for, its provenance file is
written, and only then is it renamed into place. A failure, a crash or Ctrl-C removes the
private folder, so the cache never holds a partial file.

A source that is already quantized (the registry's SmolLM2 is Q4_1) is requantized
(llama.cpp's `allow_requantize`): allowed whatever the target, but recorded and said,
since no variant can be better than its source (quantized.py `requantize_note`).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from edgebench.errors import RunFailure, UserError
from edgebench.failures import WorkerDied, worker_failure
from edgebench.io import write_json_atomic
from edgebench.isolation import call_isolated
from edgebench.models.fetch import cache_workdir
from edgebench.models.gguf import GGUFFile, read_gguf
from edgebench.models.hashing import hash_file, remember_sha256
from edgebench.models.onnx_model import split_variant
from edgebench.models.quant_types import GGML_TYPE_NAMES, QUANT_TYPES, parse_types
from edgebench.models.quantized import (
    FORMAT,
    QuantizedModel,
    base_name_of,
    is_requantization,
    provenance_file,
    quantized_state,
    read_quantized,
    requantize_note,
    split_quant_variant,
    variant_file,
    variant_label,
)
from edgebench.models.resolve import HF_PREFIX, ResolvedModel, resolve_model
from edgebench.system.versions import utc_now

Say = Callable[[str], None]


@dataclass(frozen=True)
class QuantizeJob:
    """One call of llama_model_quantize (picklable: it crosses into the child)."""

    source: str
    destination: str
    quant_type: str
    threads: int  # 0: llama.cpp's own choice
    allow_requantize: bool


Quantizer = Callable[[QuantizeJob], None]


def quantize(
    source_spec: str,
    types: str | list[str],
    *,
    force: bool = False,
    threads: int | None = None,
    say: Say = print,
    quantizer: Quantizer | None = None,
) -> list[QuantizedModel]:
    """Quantize `source_spec` (a registry name, a .gguf path, `hf:...`) to each type into
    the model cache; a variant already there from the same source is kept unless
    `force`."""
    names = parse_types(types if isinstance(types, str) else ",".join(types))
    source = _source(source_spec)
    header = read_gguf(source.path)
    source_quant = header.quantization
    requantized = is_requantization(source_quant, {t.ggml_type for t in header.tensors})
    base = source.entry.name if source.entry else base_name_of(source.path.stem)
    run = quantizer or run_quantizer
    made = []
    for quant_type in names:
        label = variant_label(base, quant_type)
        if not force and quantized_state(base, quant_type) == "yes":
            existing = read_quantized(base, quant_type)
            if existing.source.get("sha256") == source.sha256:
                say(f"{label}: already there (sha256 {existing.sha256}; --force quantizes again)")
                made.append(existing)
                continue
            say(f"{label}: made from another {source.path.name}; quantizing again")
        job = QuantizeJob(
            source=str(source.path),
            destination="",
            quant_type=quant_type,
            threads=threads or 0,
            allow_requantize=requantized,
        )
        provenance = {
            "format": FORMAT,
            "name": label,
            "base": base,
            "type": quant_type,
            "ftype": QUANT_TYPES[quant_type],
            "source": {
                "name": _source_name(source),
                "spec": source.spec,
                "path": str(source.path),
                "sha256": source.sha256,
                "size_bytes": source.size_bytes,
                "quantization": source_quant,
            },
            "requantized": requantized,
            "note": requantize_note(source_quant, quant_type) if requantized else None,
            "tools": {"llama-cpp-python": _version("llama_cpp_python")},
            "threads": threads,
        }
        say(f"{label}: quantizing {source.path.name} ({source_quant or 'unknown type'})")
        made.append(_make(base, quant_type, job, provenance, run, say))
    return made


def _source(spec: str) -> ResolvedModel:
    """The file to quantize: pulled or downloaded as `run` would; never a variant."""
    if split_quant_variant(spec) is not None or split_variant(spec) is not None:
        raise UserError(
            f"{spec!r} is a variant: quantize from its source (the registry name or the "
            ".gguf file it was made from)"
        )
    source = resolve_model(spec)
    if source.onnx is not None:
        raise UserError(f"{spec!r} is an ONNX model: only GGUF files can be quantized")
    return source


def _source_name(source: ResolvedModel) -> str:
    """How the source is named again: its registry name, hf: spec or absolute path."""
    if source.entry is not None:
        return source.entry.name
    return source.spec if source.spec.startswith(HF_PREFIX) else str(source.path.resolve())


def _make(
    base: str,
    quant_type: str,
    job: QuantizeJob,
    provenance: dict[str, Any],
    run: Quantizer,
    say: Say,
) -> QuantizedModel:
    label, final = provenance["name"], variant_file(base, quant_type)
    with cache_workdir(final.parent, ".quantize-") as tmp:
        partial = Path(tmp) / final.name
        started = time.perf_counter()
        run(dataclasses.replace(job, destination=str(partial)))
        seconds = time.perf_counter() - started
        mix = tensor_mix(_check_result(partial, label, quant_type))
        digest = hash_file(partial)
        size = partial.stat().st_size
        record = {
            **provenance,
            "sha256": digest,
            "size_bytes": size,
            "tensor_types": mix,
            "created_at": utc_now(),
            "seconds": round(seconds, 2),
        }
        # The record first: a file without one is never listed, and a stale record
        # beside an old file says "corrupt" (sha256 differs), never a wrong identity.
        write_json_atomic(provenance_file(base, quant_type), record)
        os.replace(partial, final)
    remember_sha256(final, digest)
    weights = ", ".join(f"{name} x{n}" for name, n in mix.items() if name != "F32")
    say(f"{label}: {size / 1e6:.1f} MB in {seconds:.1f} s ({weights}), sha256 {digest}")
    return read_quantized(base, quant_type)


def tensor_mix(header: GGUFFile) -> dict[str, int]:
    """How many tensors of each ggml type the file holds, most first: a k-quant on a model
    whose rows 256 does not divide is partly another type (SmolLM2's Q2_K: mostly Q4_0)."""
    counts = Counter(GGML_TYPE_NAMES.get(t.ggml_type, str(t.ggml_type)) for t in header.tensors)
    return dict(counts.most_common())


def _check_result(partial: Path, label: str, quant_type: str) -> GGUFFile:
    """The quantizer's output must be a GGUF file of the type asked for."""
    if not partial.is_file():
        raise UserError(f"{label}: the quantizer wrote no file; nothing was kept")
    try:
        header = read_gguf(partial)
    except UserError as exc:
        raise UserError(
            f"{label}: the quantized file is unreadable ({exc}); nothing was kept"
        ) from None
    if header.quantization != quant_type:
        raise UserError(
            f"{label}: the quantized file says it is {header.quantization}, not {quant_type}; "
            "nothing was kept"
        )
    return header


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def run_quantizer(job: QuantizeJob, child: Callable[[QuantizeJob], None] | None = None) -> None:
    """`child(job)` (default: llama.cpp's quantizer) in a throwaway process; its death
    is a one-line error naming how it ended. No time or memory cap: a 7B model takes
    minutes and its own size in memory."""
    try:
        call_isolated(child or quantize_in_child, (job,), timeout=None, memory_bytes=None)
    except WorkerDied as exc:
        died = worker_failure(exc, "", who="the quantizer process").line  # crashed: exit 1
        raise RunFailure(
            f"quantizing to {job.quant_type} failed: {died}; nothing was kept"
        ) from None


def quantize_in_child(job: QuantizeJob) -> None:
    """Runs in the child: llama_model_quantize with llama.cpp's defaults, its per-tensor
    log kept out of the terminal and its error line returned as a UserError."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        import llama_cpp
    except ImportError:
        raise UserError("quantizing needs llama-cpp-python: run ./install.sh") from None
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = QUANT_TYPES[job.quant_type]
    params.nthread = job.threads
    params.allow_requantize = job.allow_requantize
    with tempfile.TemporaryFile() as log:
        saved = [os.dup(1), os.dup(2)]
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            status = llama_cpp.llama_model_quantize(
                job.source.encode(), job.destination.encode(), ctypes.byref(params)
            )
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
        log.seek(0)
        text = log.read().decode("utf-8", "replace")
    if status != 0:
        raise UserError(
            f"llama.cpp could not quantize {Path(job.source).name} to {job.quant_type}: "
            f"{_error_line(text)}"
        )


def _error_line(log: str) -> str:
    """The line saying why, from llama.cpp's log (it logs `failed to quantize: ...`)."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in reversed(lines):
        if "failed" in line.lower() or "error" in line.lower():
            return line
    return lines[-1] if lines else "no message from llama.cpp"
