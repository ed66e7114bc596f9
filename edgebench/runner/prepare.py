"""Turn what the user named (a model spec, a task and dataset) into what the runner needs."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.models.gguf import kv_cache_bytes_per_token, read_gguf
from edgebench.models.openvino_model import context_length as openvino_context_length
from edgebench.models.quantized import QuantizedModel
from edgebench.models.registry import tuning_of
from edgebench.models.resolve import ResolvedModel, resolve_model
from edgebench.prompts import PromptFormat
from edgebench.readback import MAX_DATASET_BYTES, read_bytes
from edgebench.runfolder.records import (
    DatasetRecord,
    InvalidDataRow,
    QuantizedFrom,
    RunSettings,
)
from edgebench.runner.spec import ModelUnderTest
from edgebench.runtimes import LLAMA, RUNTIMES
from edgebench.tasks.base import Example, Task
from edgebench.tasks.expected import split_invalid


def mixed_tuning_warning(models: list[ModelUnderTest]) -> str | None:
    """A run that puts a base model beside an instruct model: said once, since a base
    model is not tuned to follow the extraction instructions and will score lower."""
    base = [m.label for m in models if m.tuning == "base"]
    if not base or not any(m.tuning == "instruct" for m in models):
        return None
    return (
        f"{', '.join(base)} {'is a base model' if len(base) == 1 else 'are base models'} "
        "(not instruction-tuned), compared here with instruct models: its scores measure "
        "text continuation, not instruction following"
    )


def model_under_test(spec: str | None) -> ModelUnderTest:
    """Resolve (and pull if needed) the model and read its prompt format from the GGUF
    header, without loading any weights in this process."""
    if spec is not None and "," in spec:
        raise UserError(
            f"--model {spec!r}: one model here (a comma-separated list is for `edgebench run`)"
        )
    resolved = resolve_model(spec)
    if resolved.onnx is not None:
        return _onnx_under_test(resolved)
    if resolved.openvino is not None and resolved.openvino.exported:
        return _exported_under_test(resolved)
    header = read_gguf(resolved.path)
    tokens = header.special_tokens()
    prompt_format = PromptFormat(
        style=resolved.prompt_style,
        chat_template=header.chat_template,
        bos_token=tokens["bos_token"],
        eos_token=tokens["eos_token"],
    )
    entry = resolved.entry
    details: dict[str, Any] = {
        "registry_name": entry.name if entry else None,
        "format": "gguf",
        "architecture": header.architecture,
        "gguf_name": header.name,
        "quantization": header.quantization,
        "parameters": header.parameter_count,
        "context_length": header.context_length,
        "license": entry.license if entry else None,
        "base_model": (entry.base_model or None) if entry else None,
        "quantized_from": quantized_from(resolved.quantized),
    }
    return ModelUnderTest(
        label=resolved.label,
        path=resolved.path,
        sha256=resolved.sha256,
        size_bytes=resolved.size_bytes,
        prompt_format=prompt_format,
        n_ctx_train=header.context_length,
        details=details,
        stop=tuple(resolved.stop),
        kv_bytes_per_token=kv_cache_bytes_per_token(header.metadata),
        tuning=tuning_of(entry, header.chat_template is not None),
        backend=resolved.runtime,  # a GGUF OpenVINO GenAI reads (NAME@openvino) too
    )


def quantized_from(model: QuantizedModel | None) -> QuantizedFrom | None:
    """The record of what a quantized variant was made from (None for other models)."""
    if model is None:
        return None
    source = model.source
    version = (model.provenance.get("tools") or {}).get(LLAMA.package)  # the quantizer
    return QuantizedFrom(
        source=str(source.get("name")),
        source_quantization=source.get("quantization"),
        requantized=model.requantized,
        note=model.note,
        source_sha256=source.get("sha256"),
        quantizer=f"{LLAMA.package} {version}" if version else None,
    )


def _onnx_under_test(resolved: ResolvedModel) -> ModelUnderTest:
    """A converted ONNX folder: the prompt format and identity come from its provenance
    file (the chat template and special tokens of the GGUF it was made from)."""
    assert resolved.onnx is not None
    provenance = resolved.onnx.provenance
    entry = resolved.entry
    details = _converted_details(
        resolved,
        provenance,
        registry_name=entry.name if entry else provenance.get("base_model"),
        quantization=provenance.get("precision"),
        context_length=provenance.get("context_length"),
    )
    details["onnx"] = {k: provenance.get(k) for k in ("source", "quantization", "export", "tools")}
    return _converted_under_test(
        resolved, resolved.onnx.prompt, details, kv_bytes_per_token=_onnx_kv_bytes(provenance)
    )


def _exported_under_test(resolved: ResolvedModel) -> ModelUnderTest:
    """An exported OpenVINO folder: prompted as its provenance says, else as the GGUF it
    was exported from (the registry entry's file, which must be in the cache)."""
    model = resolved.openvino
    assert model is not None and model.provenance is not None
    prompt = model.prompt
    if prompt is None:
        prompt = _source_prompt(resolved)
    entry = resolved.entry
    details = _converted_details(
        resolved,
        model.provenance,
        registry_name=entry.name if entry else None,
        quantization=model.precision,
        context_length=openvino_context_length(model),
    )
    details["base_model"] = (entry.base_model or None) if entry else None
    return _converted_under_test(resolved, prompt, details)


def _converted_details(
    resolved: ResolvedModel,
    provenance: dict[str, Any],
    *,
    registry_name: str | None,
    quantization: str | None,
    context_length: int | None,
) -> dict[str, Any]:
    """The details a converted folder (ONNX or OpenVINO) gives of itself: what its
    provenance file says of the source GGUF, beside the registry entry's licence."""
    source = provenance.get("source") or {}
    entry = resolved.entry
    return {
        "registry_name": registry_name,
        "format": RUNTIMES[resolved.runtime].model_format,
        "architecture": source.get("architecture"),
        "quantization": quantization,
        "parameters": source.get("parameters"),
        "context_length": context_length,
        "license": entry.license if entry else None,
    }


def _converted_under_test(
    resolved: ResolvedModel,
    prompt: dict[str, Any],
    details: dict[str, Any],
    *,
    kv_bytes_per_token: int | None = None,
) -> ModelUnderTest:
    """A converted folder prompted as `prompt` (a provenance file's prompt block), its
    training context the `details`' context length."""
    return ModelUnderTest(
        label=resolved.label,
        path=resolved.path,
        sha256=resolved.sha256,
        size_bytes=resolved.size_bytes,
        prompt_format=PromptFormat(
            style=resolved.prompt_style,
            chat_template=prompt.get("chat_template"),
            bos_token=prompt.get("bos_token"),
            eos_token=prompt.get("eos_token"),
        ),
        n_ctx_train=details["context_length"],
        backend=resolved.runtime,
        kv_bytes_per_token=kv_bytes_per_token,
        tuning=tuning_of(resolved.entry, prompt.get("chat_template") is not None),
        details=details,
        stop=tuple(resolved.stop),
    )


def _source_prompt(resolved: ResolvedModel) -> dict[str, Any]:
    """The chat template and special tokens of the GGUF an export came from, when its
    provenance records none: the registry entry's cached file, checked by sha256."""
    model = resolved.openvino
    assert model is not None
    entry = resolved.entry
    if entry is None or entry.sha256 != model.source_sha256:
        raise UserError(
            f"{resolved.path}: the provenance file records no prompt format and its source "
            f"GGUF (sha256 {str(model.source_sha256)[:12]}...) is not a registry model"
        )
    gguf = resolve_model(entry.name, pull_missing=False)
    header = read_gguf(gguf.path)
    tokens = header.special_tokens()
    return {
        "chat_template": header.chat_template,
        "bos_token": tokens["bos_token"],
        "eos_token": tokens["eos_token"],
    }


def _onnx_kv_bytes(provenance: dict[str, Any]) -> int | None:
    """K and V bytes per token of context, recorded at conversion (folders converted
    before edgebench recorded it: None, and the memory check counts the file only)."""
    kv = provenance.get("kv_cache")
    value = kv.get("bytes_per_token") if isinstance(kv, dict) else None
    return value if isinstance(value, int) and value > 0 else None


def load_examples(task: Task, settings: RunSettings) -> tuple[list[Example], DatasetRecord]:
    """The task's examples (the run takes `--limit` or `--sample` of them) and the
    dataset's identity. Rows whose expected output fails their own schema are left out and
    listed in the record, or with `--strict-data` the file is refused at the first one."""
    dataset, schemas = task.resolve_paths(settings.dataset, settings.schemas)
    examples, invalid = split_invalid(task.load(dataset, schemas))
    if invalid and (settings.strict_data or not examples):
        example, error = invalid[0]
        why = "--strict-data" if settings.strict_data else "every row fails its schema"
        raise UserError(
            f"{example.where or dataset}: example '{example.id}': the expected output does "
            f"not match its schema ({error}) ({why})"
        )
    combined, own = dataset_hashes(Path(dataset), Path(schemas) if schemas else None)
    record = DatasetRecord(
        path=str(dataset),
        schemas=str(schemas) if schemas else None,
        sha256=combined,
        file_sha256=own,
        n_examples=len(examples),  # usable ones; the run may take --limit or --sample
        limit=settings.limit,
        n_invalid_data=len(invalid),
        invalid_rows=[InvalidDataRow(example.id, error) for example, error in invalid],
    )
    return examples, record


_IDS_SHOWN = 5


def invalid_data_warning(record: DatasetRecord) -> str | None:
    """One line on the rows left out as invalid (None: there are none)."""
    if not record.n_invalid_data:
        return None
    ids = [row.id for row in record.invalid_rows]
    shown = ", ".join(ids[:_IDS_SHOWN]) + (", ..." if len(ids) > _IDS_SHOWN else "")
    return (
        f"{record.n_invalid_data} row(s) of {record.path} left out: their expected output "
        f"fails their own schema ({shown}; each id and error in manifest.json; "
        "--strict-data refuses the file)"
    )


def dataset_hashes(dataset: Path, schemas: Path | None) -> tuple[str, str | None]:
    """sha256 over the dataset file and every schema (relative name and bytes), so the
    same data in another folder hashes the same and any edit changes the hash; and the
    dataset file's own sha256, to match a published release's checksum (None for a
    folder dataset such as JSONSchemaBench's). Each file is read once."""
    if dataset.is_dir():  # the dataset is a folder of schemas (JSONSchemaBench)
        named: list[tuple[str, Path]] = []
        schemas = dataset
    else:
        named = [(dataset.name, dataset)]
    if schemas is not None and schemas.is_dir():
        named += [(p.relative_to(schemas).as_posix(), p) for p in sorted(schemas.rglob("*.json"))]
    digest = hashlib.sha256()
    own: str | None = None
    for name, path in named:
        data = read_bytes(path, "dataset file", MAX_DATASET_BYTES)  # no FIFO, no device
        if path is dataset:
            own = hashlib.sha256(data).hexdigest()
        digest.update(name.encode() + b"\0" + data + b"\0")
    return digest.hexdigest(), own
