"""What `fleet run` ships to every host: the edgebench source it runs from, the plan with
the files it names, and (with --push-models) the cached model files the plan names.

Tarballs are byte-for-byte deterministic (sorted members, fixed times and owners, gzip
without a timestamp), so the source's hash names exactly what a host has installed and
an unchanged source is not installed again.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

import edgebench
from edgebench.datagen.edgejson.shape import leaf_values
from edgebench.errors import UserError
from edgebench.models import openvino_convert
from edgebench.models.fetch import cached_file
from edgebench.models.onnx_model import PROVENANCE, onnx_state, split_variant, variant_dir
from edgebench.models.quantized import provenance_file, split_quant_variant, variant_file
from edgebench.models.registry import ModelEntry, load_registry
from edgebench.paths import model_cache_dir
from edgebench.readback import MAX_PLAN_BYTES, MAX_PLAN_NESTING, read_toml

# What install.sh and the package build need: the package, the registry, grammars and
# built-in data it bundles (pyproject's force-include), and the files pip reads.
SOURCE_DIRS = ("edgebench", "models", "grammars", "data")
SOURCE_FILES = ("install.sh", "pyproject.toml", "README.md")
_SKIPPED = ("__pycache__", ".pyc", ".egg-info")
# The plan's keys that name models (plan/file.py): the matrix's and [bench]'s own list.
_MODEL_KEY = re.compile(r"(bench\.)?models(\[\d+\])?")


@dataclass(frozen=True)
class Tarball:
    path: Path
    sha256: str  # of the uncompressed tar: the same files give the same hash


def source_checkout(package_dir: Path | None = None) -> Path:
    """The source tree of the running edgebench (the folder holding install.sh and
    pyproject.toml beside the package); a UserError saying how to get one otherwise."""
    package = (package_dir or Path(edgebench.__file__).parent).resolve()
    root = package.parent
    missing = [name for name in ("install.sh", "pyproject.toml") if not (root / name).is_file()]
    if missing:
        raise UserError(
            f"fleet run ships the edgebench source it runs from, but {package} is an "
            f"installed package without its source tree (no {', '.join(missing)} in {root}): "
            "run fleet run from a git clone installed with ./install.sh"
        )
    return root


def source_members(root: Path) -> list[tuple[str, Path]]:
    """(name in the tarball, file) for every file a host needs to install edgebench."""
    members = [(name, root / name) for name in SOURCE_FILES if (root / name).is_file()]
    for folder in SOURCE_DIRS:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and not any(part.endswith(_SKIPPED) for part in path.parts):
                members.append((path.relative_to(root).as_posix(), path))
    return members


def write_tarball(members: list[tuple[str, Path]], dest: Path) -> Tarball:
    """`members` as a deterministic .tar.gz at `dest`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in sorted(members):
            info = tarfile.TarInfo(name)
            data = path.read_bytes()
            info.size = len(data)
            info.mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    raw = buffer.getvalue()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with (
        dest.open("wb") as out,
        gzip.GzipFile(filename="", fileobj=out, mode="wb", mtime=0) as zipped,
    ):
        zipped.write(raw)
    return Tarball(dest, hashlib.sha256(raw).hexdigest())


@dataclass(frozen=True)
class PlanPayload:
    plan: Path
    files: tuple[str, ...]  # paths relative to the plan's folder it names (datasets, schemas)
    # registry models, NAME@TYPE, NAME@onnx-PRECISION and NAME@openvino-PRECISION it names
    models: tuple[str, ...]


def read_plan_payload(plan: Path) -> PlanPayload:
    """The files and models a plan names. The plan's own format is checked by `plan run`;
    here every string value counts: one naming a file or folder beside the plan is copied
    (it must not leave the plan's folder); one under a key that lists models (`models`,
    `bench.models`) naming a registry model or a variant of one is a model."""
    # bounded as `plan run` reads it (a plan names the files a host gets)
    _text, data = read_toml(plan, "plan file", MAX_PLAN_BYTES, MAX_PLAN_NESTING)
    registry = load_registry()
    folder = plan.resolve().parent
    files: list[str] = []
    models: list[str] = []
    for key, value in leaf_values(data):
        if not isinstance(value, str):
            continue
        for name in value.split(",") if _MODEL_KEY.fullmatch(key) else []:
            if _model_base(name.strip(), registry) and name.strip() not in models:
                models.append(name.strip())
        relative = _plan_file(value, folder, plan, key)
        if relative and relative not in files:
            files.append(relative)
    return PlanPayload(plan, tuple(files), tuple(models))


def _plan_file(value: str, folder: Path, plan: Path, key: str) -> str | None:
    """`value` relative to the plan's folder when it names a file or folder there."""
    if not value or "\n" in value or "\x00" in value:
        return None
    path = Path(value).expanduser()
    target = path if path.is_absolute() else folder / path
    try:
        if not target.exists() or target.resolve() == plan.resolve():
            return None
    except OSError:
        return None
    resolved = target.resolve()
    if resolved == folder or folder not in resolved.parents:
        raise UserError(
            f"{plan}: {key} = '{value}' is outside the plan's folder; fleet run copies "
            "the plan's folder only: put the file beside the plan and name it relatively"
        )
    return resolved.relative_to(folder).as_posix()


def _model_base(name: str, registry: dict[str, ModelEntry]) -> ModelEntry | None:
    """The registry entry `name` (or the NAME of NAME@TYPE, NAME@onnx-PRECISION or
    NAME@openvino-PRECISION) is, if any."""
    variant = split_quant_variant(name) or onnx_variant(name) or openvino_variant(name)
    return registry.get(variant[0] if variant else openvino_gguf(name) or name)


def onnx_variant(name: str) -> tuple[str, str] | None:
    """`NAME@onnx-int4` -> (NAME, "int4"); None for anything else. An unknown `@x` is no
    error here (`NAME@Q8_0` is a model too): the plan's own check reports a bad one."""
    try:
        return split_variant(name)
    except UserError:
        return None


def openvino_variant(name: str) -> tuple[str, str] | None:
    """`NAME@openvino-int4` -> (NAME, "int4"); None for anything else."""
    return openvino_convert.split_variant(name)


def openvino_gguf(name: str) -> str | None:
    """`NAME@openvino` (the registry GGUF, read by OpenVINO GenAI itself) -> NAME."""
    base, at, suffix = name.rpartition("@")
    return base if at and base and suffix == openvino_convert.TARGET else None


def plan_members(payload: PlanPayload) -> list[tuple[str, Path]]:
    """The plan under its own name and the files it names, folders walked: the members
    of the plan tarball."""
    folder = payload.plan.resolve().parent
    members = [(payload.plan.name, payload.plan)]
    for relative in payload.files:
        path = folder / relative
        paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        members += [(p.relative_to(folder).as_posix(), p) for p in paths]
    return sorted(set(members))


def model_files(models: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(path under the model cache, file on this machine) of every cached file the named
    models need, for --push-models; a UserError naming the first one not cached here."""
    registry = load_registry()
    cache = model_cache_dir()
    files: list[tuple[str, Path]] = []
    for name in models:
        variant = split_quant_variant(name)
        onnx = onnx_variant(name)
        if onnx:
            files += _onnx_files(name, *onnx, cache)
            continue
        openvino = openvino_variant(name)
        if openvino:
            files += _openvino_files(name, *openvino, cache)
            continue
        if variant:
            paths = [variant_file(*variant), provenance_file(*variant)]
            pull = f"edgebench models quantize {variant[0]} --types {variant[1]}"
        else:
            base = openvino_gguf(name) or name
            # Not its .sha256.json: that cache names this machine's path and mtime.
            paths = [cached_file(registry[base])]
            pull = f"edgebench models pull {base}"
        if not paths[0].is_file():
            raise _not_cached(name, paths[0], pull)
        files += [(p.relative_to(cache).as_posix(), p) for p in paths if p.is_file()]
    return files


def _not_cached(name: str, where: Path, make: str) -> UserError:
    """A pushed model missing here, and the command that makes it."""
    return UserError(
        f"--push-models: {name} is not in this machine's model cache ({where}): {make} first"
    )


def _onnx_files(name: str, base: str, precision: str, cache: Path) -> list[tuple[str, Path]]:
    """Every file of a converted folder (graph, external data, tokenizer, chat template,
    config, provenance), or a UserError when it is not converted here or damaged."""
    folder = variant_dir(base, precision)
    state = onnx_state(base, precision)
    convert = f"edgebench models convert {base} --to onnx --precision {precision}"
    return _folder_files(name, folder, state, folder / PROVENANCE, convert, cache)


def _openvino_files(name: str, base: str, precision: str, cache: Path) -> list[tuple[str, Path]]:
    """Every file of a converted OpenVINO folder (IR, tokenizers, config, provenance), or
    a UserError when it is not converted here or damaged."""
    folder = openvino_convert.variant_dir(base, precision)
    state = openvino_convert.export_state(base, precision)
    target = openvino_convert.TARGET
    convert = f"edgebench models convert {base} --to {target} --precision {precision}"
    provenance = folder / openvino_convert.PROVENANCE
    return _folder_files(name, folder, state, provenance, convert, cache)


def _folder_files(
    name: str, folder: Path, state: str, provenance: Path, convert: str, cache: Path
) -> list[tuple[str, Path]]:
    """The files of a converted folder in state `state` (made by `convert`)."""
    if state == "no":
        raise _not_cached(name, folder, convert)
    if state == "corrupt":
        raise UserError(
            f"--push-models: {name} in this machine's model cache is damaged (its files do "
            f"not match {provenance}): {convert} --force first"
        )
    # Never a hidden temporary file or a hash sidecar naming this machine's paths.
    return [
        (path.relative_to(cache).as_posix(), path)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and not path.name.startswith(".")
        and not path.name.endswith(".sha256.json")
    ]


def onnx_variants(models: tuple[str, ...]) -> list[str]:
    """The NAME@onnx-PRECISION models among `models`: a host cannot make them itself."""
    return [name for name in models if onnx_variant(name)]


def openvino_variants(models: tuple[str, ...]) -> list[str]:
    """The NAME@openvino-PRECISION models among `models`: a host cannot make them itself."""
    return [name for name in models if openvino_variant(name)]


def registry_bases(models: tuple[str, ...]) -> list[str]:
    """The registry models a host pulls itself (without --push-models): each NAME once.
    Not the base of a converted variant: `plan run` never converts, so its GGUF is no use."""
    bases: list[str] = []
    for name in models:
        if onnx_variant(name) or openvino_variant(name):
            continue
        variant = split_quant_variant(name)
        base = variant[0] if variant else openvino_gguf(name) or name
        if base not in bases:
            bases.append(base)
    return bases
