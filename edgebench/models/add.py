"""`models add hf:OWNER/REPO/FILE.gguf`: a registry entry of kind `hf`, written into the
user's registry folder (`user_registry_dir()`, which `load_registry` reads after the
built-in entries).

The Hub gives what must be exact: the revision resolved to a commit sha, and the file's
size and sha256 (its Git LFS metadata), so `models pull` later fetches exactly that file
and checks it. Family, size class, quantization and tuning are guessed from the repo and
file names, and the license from the model card; the entry is a plain TOML file to edit.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from edgebench.errors import UserError
from edgebench.models import hub
from edgebench.models.quant_types import canonical_type
from edgebench.models.registry import ModelEntry, load_entry, load_registry, name_problem
from edgebench.paths import user_registry_dir

_PARAMS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)([bBmM])(?![a-zA-Z])")
_INSTRUCT = re.compile(r"instruct|chat|(^|[-_])it([-_.]|$)", re.IGNORECASE)
_FLOATS = {"f16": "F16", "f32": "F32", "bf16": "BF16", "fp16": "F16"}


def add_hf(spec: str, *, name: str | None = None, revision: str | None = None) -> Path:
    """Write the entry for `spec` (at `revision`, default the main branch); its path."""
    target = hub.parse_spec(spec)
    if not target.file.lower().endswith(".gguf"):
        raise UserError(f"{spec}: only GGUF files can be added (the file name ends in .gguf)")
    name = name or default_name(target.file)
    problem = name_problem(name)
    if problem:
        raise UserError(f"--name: {name!r} is not a valid model name ({problem})")
    registry = load_registry()
    if name in registry:
        where = registry[name].registry_file
        raise UserError(
            f"a model named {name!r} exists already ({where}): choose another with --name"
        )
    facts = hub.file_facts(target, revision)
    text = entry_text(name, target, facts, registry)
    return _write(name, text)


def default_name(file: str) -> str:
    """The file's stem, lowercased, as a registry name: Qwen2.5-0.5B.Q4_K_M.gguf ->
    qwen2.5-0.5b.q4_k_m."""
    stem = Path(file).name[: -len(".gguf")].lower()
    return re.sub(r"[^a-z0-9._-]+", "-", stem).strip("-._") or "model"


def entry_text(
    name: str, target: hub.HubFile, facts: hub.FileFacts, registry: dict[str, ModelEntry]
) -> str:
    """The TOML of the entry (fields in the order of the built-in entries)."""
    repo_name = target.repo.split("/")[1]
    params = _PARAMS.search(repo_name) or _PARAMS.search(Path(target.file).name)
    family = repo_name[: params.start()] if params else re.sub(r"(?i)-gguf$", "", repo_name)
    instruct = bool(_INSTRUCT.search(f"{repo_name} {target.file}"))
    fields: list[tuple[str, object, str]] = [
        ("name", name, ""),
        ("family", family.strip("-_.").lower() or repo_name.lower(), "guessed from the repo name"),
        ("params", f"{params[1]}{params[2].upper()}" if params else "unknown", "likewise"),
        ("format", "gguf", ""),
        ("quantization", _quantization(target.file), "guessed from the file name"),
        ("license", facts.license or "unknown", "from the model card" if facts.license else ""),
    ]
    if facts.base_model and _is_repo(facts.base_model):
        fields.append(("base_model", facts.base_model, "from the model card"))
    fields += [
        ("description", f"{target.repo}/{target.file}", ""),
        ("file", _cache_file(name, target, facts, registry), "the name in the model cache"),
        ("sha256", facts.sha256, "from the Hub (Git LFS)"),
        ("size_bytes", facts.size, ""),
        # A chat template is what instruct GGUFs ship; a base model gets a plain prompt.
        ("prompt_style", "chat" if instruct else "completion", ""),
    ]
    if instruct:
        fields.append(("tuning", "instruct", "guessed from the name"))
    lines = ["# Written by `edgebench models add`; edit the guessed fields freely."]
    lines += [_line(key, value, note) for key, value, note in fields]
    lines += [
        "",
        "[source]",
        _line("kind", "hf", ""),
        _line("repo", target.repo, ""),
        _line("file", target.file, ""),
        _line("revision", facts.commit, "a commit sha: the file cannot change under it"),
    ]
    return "\n".join(lines) + "\n"


def _is_repo(repo: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", repo))


def _quantization(file: str) -> str:
    for token in re.split(r"[-.]", Path(file).name.lower()):
        known = canonical_type(token) or _FLOATS.get(token)
        if known:
            return known
    return "unknown"


def _cache_file(
    name: str, target: hub.HubFile, facts: hub.FileFacts, registry: dict[str, ModelEntry]
) -> str:
    """The Hub file's own name, unless another entry uses it for other bytes."""
    own = Path(target.file).name
    if any(e.file == own and e.sha256 != facts.sha256 for e in registry.values()):
        return f"{name}.gguf"
    return own


def _line(key: str, value: object, note: str) -> str:
    # A JSON string or integer is a valid TOML basic string or integer.
    text = f"{key} = {json.dumps(value, ensure_ascii=False)}"
    return f"{text}   # {note}" if note else text


def _write(name: str, text: str) -> Path:
    """Write the entry, checked by the registry's own reader first, so `models add`
    never leaves a file that would break every later command."""
    folder = user_registry_dir()
    path = folder / f"{name}.toml"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".add-", dir=folder) as tmp:
            draft = Path(tmp) / path.name  # the file name must be the entry's name
            draft.write_text(text, encoding="utf-8")
            load_entry(draft)
            os.replace(draft, path)
    except OSError as exc:
        raise UserError(f"cannot write the registry entry {path}: {exc}") from None
    return path
