"""Turn what the user typed for `--model` into a model file on disk.

A spec is a registry name (`smollm2-135m-instruct`, pulled when missing), a path to a
`.gguf` file, `hf:OWNER/REPO/FILE.gguf` (downloaded from the Hugging Face Hub, which
needs the `hf` extra and internet), a quantized variant `NAME@Q4_K_M` (made by
`models quantize`), a converted variant `NAME@onnx-int4` (made by `models convert`) or
the path of such a converted folder; `NAME@openvino` (the registry GGUF read by OpenVINO
GenAI) and `NAME@openvino-int4` or the path of an exported OpenVINO folder
(models/openvino_model.py). None means the default model.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from edgebench.errors import UserError
from edgebench.models import hub
from edgebench.models.fetch import cache_state, cached_file, pull_entry
from edgebench.models.gguf import read_gguf
from edgebench.models.hashing import sha256_file
from edgebench.models.onnx_model import (
    PROVENANCE,
    OnnxModel,
    read_provenance,
    split_variant,
    variant_dir,
    verify_weights,
)
from edgebench.models.openvino_model import (
    OpenVinoModel,
    read_folder,
    read_variant,
    split_openvino_variant,
    variant_name,
)
from edgebench.models.openvino_model import is_folder as is_openvino_folder
from edgebench.models.openvino_model import variant_dir as openvino_dir
from edgebench.models.quantized import (
    QuantizedModel,
    provenance_file,
    quantized_state,
    quantized_variants,
    read_quantized,
    split_quant_variant,
    variant_label,
    verify_quantized,
)
from edgebench.models.registry import (
    DEFAULT_MODEL,
    ModelEntry,
    load_registry,
    unknown_model_error,
)
from edgebench.paths import model_cache_dir

HF_PREFIX = hub.HF_PREFIX


@dataclass(frozen=True)
class ResolvedModel:
    """A model file ready to load, and how to prompt it."""

    spec: str  # what the user asked for
    label: str  # short name for reports: the registry name, file stem or hf: spec
    path: Path
    entry: ModelEntry | None  # None for local paths and hf: files
    sha256: str
    size_bytes: int
    prompt_style: str  # "chat" (the GGUF's chat template) or "completion"
    stop: list[str] = field(default_factory=list)
    onnx: OnnxModel | None = None  # a converted ONNX folder (then `path` is the folder)
    quantized: QuantizedModel | None = None  # a variant `models quantize` made
    # read by OpenVINO GenAI: an exported folder (`path`), or the GGUF file itself
    openvino: OpenVinoModel | None = None

    @property
    def runtime(self) -> str:
        """The backend family that runs it: llama (GGUF), onnx or openvino."""
        if self.openvino is not None:
            return "openvino"
        return "onnx" if self.onnx is not None else "llama"


def resolve_model(spec: str | None, *, pull_missing: bool = True) -> ResolvedModel:
    """Resolve a registry name, a `.gguf` path or `hf:OWNER/REPO/FILE`; None = default."""
    spec = DEFAULT_MODEL if spec is None else spec.strip()
    registry = load_registry()
    if spec in registry:
        return _from_registry(spec, registry[spec], pull_missing=pull_missing)
    quantized = split_quant_variant(spec)
    if quantized is not None:
        return _from_quantized(spec, *quantized, registry)
    openvino = split_openvino_variant(spec)
    if openvino is not None:
        return _from_openvino(spec, *openvino, registry, pull_missing=pull_missing)
    variant = split_variant(spec)
    if variant is not None:
        base, precision = variant
        folder = variant_dir(base, precision)
        if not (folder / PROVENANCE).is_file():
            if base not in registry:
                raise unknown_model_error(base, list(registry))
            raise UserError(
                f"model {spec!r} is not converted yet: run `edgebench models convert {base} "
                f"--to onnx --precision {precision}`"
            )
        return _from_onnx(
            spec, folder, registry.get(base), force_hint=f"{base} --precision {precision}"
        )
    if Path(spec).expanduser().is_dir() and (Path(spec).expanduser() / PROVENANCE).is_file():
        return _from_onnx(spec, Path(spec).expanduser(), None, force_hint="NAME")
    if is_openvino_folder(Path(spec).expanduser()):
        return _openvino_folder(spec, read_folder(Path(spec).expanduser()), None)
    if spec.startswith(HF_PREFIX):
        return _from_local(spec, hf_file(spec), label=spec)
    if _looks_like_path(spec):
        path = Path(spec).expanduser()
        return _from_local(spec, path, label=path.stem)
    raise unknown_model_error(spec, list(registry))


def _from_onnx(
    spec: str, folder: Path, entry: ModelEntry | None, *, force_hint: str
) -> ResolvedModel:
    model = read_provenance(folder)
    problem = verify_weights(model)
    if problem:
        raise UserError(
            f"converted model {model.name!r} in {folder} is damaged ({problem}): run "
            f"`edgebench models convert {force_hint} --to onnx --force`"
        )
    prompt = model.prompt
    return ResolvedModel(
        spec=spec,
        label=model.name,
        path=folder,
        entry=entry,
        sha256=model.sha256,
        size_bytes=model.size_bytes,
        prompt_style=str(prompt.get("style") or "chat"),
        stop=list(prompt.get("stop") or []),
        onnx=model,
    )


def _from_openvino(
    spec: str,
    base: str,
    precision: str | None,
    registry: dict[str, ModelEntry],
    *,
    pull_missing: bool,
) -> ResolvedModel:
    """`NAME@openvino`: the registry GGUF, read by OpenVINO GenAI; `NAME@openvino-P`:
    the folder `models convert --to openvino` made (never made here)."""
    entry = registry.get(base)
    if precision is None:
        if entry is None:
            raise unknown_model_error(base, list(registry))
        gguf = _from_registry(base, entry, pull_missing=pull_missing)
        return replace(
            gguf,
            spec=spec,
            label=variant_name(base, None),
            openvino=OpenVinoModel(path=gguf.path),
        )
    if entry is None and not is_openvino_folder(openvino_dir(base, precision)):
        raise unknown_model_error(base, list(registry))
    return _openvino_folder(spec, read_variant(base, precision), entry)


def _openvino_folder(spec: str, model: OpenVinoModel, entry: ModelEntry | None) -> ResolvedModel:
    """An exported folder: identified by its weights' sha256 (remembered per size and
    mtime); prompted as its provenance says, else as its registry entry does."""
    prompt = model.prompt or {}
    name = model.provenance.get("name") if model.provenance else None
    return ResolvedModel(
        spec=spec,
        label=str(name) if name else (model.path.name if entry is None else spec),
        path=model.path,
        entry=entry,
        sha256=sha256_file(model.weights),
        size_bytes=int(model.weights_bytes or 0),
        prompt_style=str(prompt.get("style") or (entry.prompt_style if entry else "chat")),
        stop=list(prompt.get("stop") or (entry.stop if entry else [])),
        openvino=model,
    )


def check_variants_ready(specs: list[str | None]) -> None:
    """Every `NAME@TYPE` of a run is quantized, or one line naming the command that makes
    the missing ones (all of them, so a sweep needs one command, not one per try)."""
    missing: dict[str, list[str]] = {}
    registry = load_registry()
    for spec in specs:
        variant = split_quant_variant(spec.strip()) if spec else None
        if variant is None or quantized_state(*variant) != "no":
            continue
        if variant[0] in registry or provenance_file(*variant).is_file():
            missing.setdefault(variant[0], []).append(variant[1])
    if missing:
        labels = [variant_label(base, t) for base, types in missing.items() for t in types]
        commands = " && ".join(
            f"edgebench models quantize {base} --types {','.join(types)}"
            for base, types in missing.items()
        )
        raise UserError(f"not quantized yet: {', '.join(labels)}: run `{commands}`")


def _from_quantized(
    spec: str, base: str, quant_type: str, registry: dict[str, ModelEntry]
) -> ResolvedModel:
    """`NAME@Q4_K_M`: the variant `models quantize` made (never made here: a run must
    not quietly spend minutes quantizing)."""
    label = variant_label(base, quant_type)
    state = quantized_state(base, quant_type)
    if state == "no":
        if base not in registry and not provenance_file(base, quant_type).is_file():
            known = [*registry, *(variant_label(*v) for v in quantized_variants())]
            raise unknown_model_error(label, known)
        raise UserError(
            f"model {label!r} is not quantized yet: run `edgebench models quantize "
            f"{base} --types {quant_type}`"
        )
    model = read_quantized(base, quant_type)
    if state == "corrupt":
        raise UserError(
            f"quantized model {label!r} is damaged ({verify_quantized(model)}): run "
            f"`edgebench models quantize {model.source.get('name') or base} --types "
            f"{quant_type} --force`"
        )
    entry = registry.get(base)
    if entry is not None:
        style, stop = entry.prompt_style, list(entry.stop)
    else:
        style = "chat" if read_gguf(model.path).chat_template else "completion"
        stop = []
    return ResolvedModel(
        spec=spec,
        label=label,
        path=model.path,
        entry=entry,
        sha256=model.sha256,
        size_bytes=model.size_bytes,
        prompt_style=style,
        stop=stop,
        quantized=model,
    )


def _looks_like_path(spec: str) -> bool:
    return "/" in spec or "\\" in spec or spec.lower().endswith(".gguf") or Path(spec).exists()


def _from_registry(spec: str, entry: ModelEntry, *, pull_missing: bool) -> ResolvedModel:
    state = cache_state(entry)
    if state != "yes":
        if not pull_missing:
            problem = "is not in the cache" if state == "no" else "has a wrong sha256 in the cache"
            raise UserError(f"model {entry.name!r} {problem}: run `edgebench models pull {spec}`")
        pull_entry(entry, force=True)
    return ResolvedModel(
        spec=spec,
        label=entry.name,
        path=cached_file(entry),
        entry=entry,
        sha256=entry.sha256,
        size_bytes=entry.size_bytes,
        prompt_style=entry.prompt_style,
        stop=list(entry.stop),
    )


def _from_local(spec: str, path: Path, *, label: str) -> ResolvedModel:
    if not path.exists():
        raise UserError(f"model file not found: {path}")
    if not path.is_file():
        raise UserError(f"model path is not a file: {path}")
    # Without a registry entry the file itself says how to prompt it (and reading it
    # checks that it is a GGUF file at all).
    style = "chat" if read_gguf(path).chat_template else "completion"
    return ResolvedModel(
        spec=spec,
        label=label,
        path=path,
        entry=None,
        sha256=sha256_file(path),
        size_bytes=path.stat().st_size,
        prompt_style=style,
    )


def hf_file(spec: str) -> Path:
    """An `hf:` spec's file through huggingface_hub's cache; one line when it cannot be
    fetched (offline, no such repo or file), within a second when offline."""
    return hub.download(hub.parse_spec(spec), revision=None, cache=model_cache_dir() / "hf")
