"""plan.toml -> a checked `Plan`: every mistake one line naming the file, the line and the key.

    models = ["smollm2-135m-instruct"]     # registry names, NAME@TYPE, .gguf paths, hf:...
    quantizations = ["Q8_0", "Q4_K_M"]     # optional: each model as these variants
    constraints = ["none", "mask"]
    threads = [2]                          # optional (default: physical cores)
    repetitions = 1                        # optional

    [run]                                  # options of `edgebench run`, every cell
    limit = 20

    [[tasks]]                              # optional (default: the built-in edgejson)
    task = "deepjson"
    dataset = "data/deep.jsonl"            # relative to the plan file
    limit = 10                             # a [run] option for this task only

    [bench]                                # optional: `edgebench bench` per model
    prompt_tokens = [512]

Paths are resolved against the plan file's folder, so a plan and its data travel together.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.constraints.spec import parse_modes
from edgebench.errors import UserError
from edgebench.metrics import parse_metrics
from edgebench.models.onnx_model import split_variant
from edgebench.models.openvino_model import split_openvino_variant
from edgebench.models.quant_types import canonical_type
from edgebench.models.quantized import base_name_of, split_quant_variant, variant_label
from edgebench.models.registry import load_registry, unknown_model_error
from edgebench.readback import MAX_PLAN_BYTES, MAX_PLAN_NESTING, check_regular, read_toml
from edgebench.runfolder.records import RETIME_MODES
from edgebench.scoring.extract import check_parse_mode
from edgebench.tasks import DEFAULT_TASK, TASKS, task_names
from edgebench.tasks.base import PROMPT_STYLES

HF_PREFIX = "hf:"
# The most cells a plan may expand to (models x quantizations x tasks x constraints x
# threads x repetitions, plus the bench cells): a plan of more would not finish on one
# device, and a mistyped `repetitions` must be a one-line error, not a machine out of
# memory.
MAX_CELLS = 10_000


# -- the value kinds a key may hold ---------------------------------------------------
@dataclass(frozen=True)
class Kind:
    """What one key holds: a name for messages and a check returning the value or a
    problem (a str starting with '!')."""

    name: str
    check: Callable[[Any], Any]


def _int(minimum: int) -> Kind:
    def check(value: Any) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            return f"!must be a whole number, got {value!r}"
        return value if value >= minimum else f"!{value} is below the minimum of {minimum}"

    return Kind(f"a whole number >= {minimum}", check)


def _number(minimum: float, above: bool = False) -> Kind:
    def check(value: Any) -> Any:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return f"!must be a number, got {value!r}"
        if not math.isfinite(value):  # TOML has nan and inf; no time or heat is either
            return f"!must be a finite number, got {value!r}"
        if value < minimum or (above and value == minimum):
            return f"!{value} must be {'above' if above else 'at least'} {minimum:g}"
        return float(value)

    return Kind("a number", check)


def _bool(value: Any) -> Any:
    return value if isinstance(value, bool) else f"!must be true or false, got {value!r}"


def _text(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        return f"!must be a non-empty string, got {value!r}"
    return value.strip()


def _choice(choices: tuple[str, ...]) -> Kind:
    def check(value: Any) -> Any:
        text = _text(value)
        if text.startswith("!") or text in choices:
            return text
        return f"!{text!r} is not one of: {', '.join(choices)}"

    return Kind("a string", check)


def _checked(convert: Callable[[str], Any]) -> Kind:
    """A string a project parser checks (its UserError becomes the key's problem)."""

    def check(value: Any) -> Any:
        text = _text(value)
        if text.startswith("!"):
            return text
        try:
            convert(text)
        except UserError as exc:
            return f"!{exc}"
        return text

    return Kind("a string", check)


BOOL, TEXT = Kind("true or false", _bool), Kind("a string", _text)

# The options of `edgebench run` a plan may set, in [run] or per [[tasks]] entry: the key
# is the option's name with `_` for `-`. `model`, `task`, `dataset`, `constraint`,
# `threads` and `out` come from the matrix; per-run files (power logs) have no place here.
RUN_OPTIONS: dict[str, Kind] = {
    "limit": _int(1),
    "sample": _int(1),
    "stratify": TEXT,
    "seed": _int(0),
    "strict_data": BOOL,
    "max_tokens": _int(1),
    "n_ctx": _int(64),
    "max_context": _int(64),
    "warmup": BOOL,
    "guard": BOOL,
    "metrics": _checked(parse_metrics),
    "stop_at_json": BOOL,
    "loop_detection": BOOL,
    "close_tokens": _int(1),
    "prefix_cache": BOOL,
    "parse": _checked(check_parse_mode),
    "prompt": _choice(PROMPT_STYLES),
    "timeout": _number(0.1),
    "compile_timeout": _number(0.1),
    "max_crashes": _int(1),
    "ignore_memory_check": BOOL,
    "delay": _number(0),
    "wait_cool": _number(0, above=True),
    "wait_cool_timeout": _number(1),
    "idle_baseline": _number(0),
    "timeline": BOOL,
    "retime": _choice(RETIME_MODES),
    "retime_max": _int(1),
}
# Options that decide how a run copes with trouble, not what it measures: a plan may
# change them between runs of the same folder (`edgebench run --resume` takes them too).
COPING_OPTIONS = ("timeout", "compile_timeout", "max_crashes", "ignore_memory_check")

# `edgebench bench`: its options as a [bench] table (lists for its comma lists).
BENCH_OPTIONS: dict[str, Kind] = {
    "prompt_tokens": _int(0),
    "gen_tokens": _int(0),
    "depth": _int(0),
    "repetitions": _int(1),
    "warmup": _int(0),
    "n_ctx": _int(64),
    "seed": _int(0),
    "pin": BOOL,
    "interleave": BOOL,
    "duration": TEXT,
    "cooldown": _number(0),
    "wait_cool": _number(0, above=True),
    "wait_cool_timeout": _number(1),
}
BENCH_LISTS = ("prompt_tokens", "gen_tokens", "depth")
_TOP_KEYS = ("models", "quantizations", "constraints", "threads", "repetitions", "run", "tasks")
_TASK_KEYS = ("task", "name", "dataset", "schemas")


# -- the checked plan -----------------------------------------------------------------
@dataclass(frozen=True)
class PlanModel:
    """One model of the matrix: the spec `edgebench run --model` gets (paths absolute),
    its label in cell ids, and the source `models quantize` makes it from, when it is a
    variant the plan may make."""

    spec: str
    label: str
    source: str | None = None  # registry name or absolute .gguf path
    quant_type: str | None = None


@dataclass(frozen=True)
class TaskEntry:
    """One task of the matrix with its dataset (absolute) and its run options."""

    label: str
    task: str
    dataset: Path | None
    schemas: Path | None
    options: dict[str, Any]


@dataclass(frozen=True)
class BenchEntry:
    """[bench]: `edgebench bench` per model, over the thread counts."""

    models: tuple[PlanModel, ...]
    threads: tuple[int, ...]
    options: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    path: Path
    text: str  # the file as read: copied into the plan folder as run
    models: tuple[PlanModel, ...]
    constraints: tuple[str, ...]
    threads: tuple[int, ...]
    repetitions: int
    tasks: tuple[TaskEntry, ...]
    bench: BenchEntry | None = None
    quantizations: tuple[str, ...] = field(default=())


class _Table:
    """One TOML table of the plan, with errors naming the file, the line and the key."""

    def __init__(self, plan: _Source, data: Any, prefix: str, header: str | None) -> None:
        self.plan, self.prefix, self.header = plan, prefix, header
        if not isinstance(data, dict):
            raise plan.error(prefix.rstrip(".") or "plan", None, "must be a table")
        self.data: dict[str, Any] = data

    def error(self, key: str, problem: str) -> UserError:
        return self.plan.error(self.prefix + key, self.plan.line_of(self.header, key), problem)

    def reject_unknown(self, allowed: tuple[str, ...]) -> None:
        for key in self.data:
            if key not in allowed:
                raise self.error(key, f"unknown key (known: {', '.join(allowed)})")

    def value(self, key: str, kind: Kind) -> Any:
        result = kind.check(self.data[key])
        if isinstance(result, str) and result.startswith("!"):
            raise self.error(key, result[1:])
        return result

    def items(self, key: str, kind: Kind, *, default: list[Any] | None = None) -> list[Any]:
        """A non-empty list without repeats, each item checked."""
        if key not in self.data:
            if default is None:
                raise self.error(key, "missing")
            return default
        raw = self.data[key]
        if not isinstance(raw, list):
            raw = [raw]  # one value where a list is expected: take it as a list of one
        if not raw:
            raise self.error(key, "must not be empty")
        values = []
        for item in raw:
            result = kind.check(item)
            if isinstance(result, str) and result.startswith("!"):
                raise self.error(key, f"item {item!r}: {result[1:]}")
            if result in values:
                raise self.error(key, f"{item!r} is listed twice")
            values.append(result)
        return values

    def options(self, known: dict[str, Kind]) -> dict[str, Any]:
        return {key: self.value(key, known[key]) for key in self.data if key in known}


@dataclass
class _Source:
    path: Path
    text: str

    def error(self, key: str, line: int | None, problem: str) -> UserError:
        where = f"{self.path}:{line}" if line else f"{self.path}"
        return UserError(f"{where}: {key}: {problem}")

    def line_of(self, header: str | None, key: str) -> int | None:
        """The line `key = ...` is on, below the table header `header` (None: the top,
        `tasks#2`: the second [[tasks]]); None when it cannot be found."""
        name, _, nth = (header or "").partition("#")
        seen, current = 0, None
        assign = re.compile(rf"\s*(\"?){re.escape(key)}\1\s*=")
        for number, line in enumerate(self.text.split("\n"), start=1):
            stripped = line.strip()
            if stripped.startswith("["):
                table = stripped.strip("[] \t").split("]")[0].strip()
                if stripped.startswith("[[") and table == name:
                    seen += 1
                current = table if not stripped.startswith("[[") else f"{table}#{seen}"
                continue
            wanted = f"{name}#{nth}" if nth else (name or None)
            if current == wanted and assign.match(line):
                return number
        return None


def load_plan(path: Path, default_threads: int) -> Plan:
    """Read and check the plan file; `default_threads` when it sets none."""
    text, data = read_toml(path, "plan file", MAX_PLAN_BYTES, MAX_PLAN_NESTING)
    source = _Source(path, text)
    top = _Table(source, data, "", None)
    top.reject_unknown((*_TOP_KEYS, "bench"))
    base = path.parent
    models = _models(top, base)
    quantizations = tuple(top.items("quantizations", Kind("a type", _quant_type), default=[]))
    if quantizations:
        models = _variants(top, models, quantizations)
    constraints = tuple(top.items("constraints", Kind("a mode", _mode), default=["none"]))
    threads = tuple(top.items("threads", _int(1), default=[default_threads]))
    repetitions = top.value("repetitions", _int(1)) if "repetitions" in data else 1
    run = _Table(source, data.get("run", {}), "run.", "run")
    run.reject_unknown(tuple(RUN_OPTIONS))
    tasks = _tasks(source, data.get("tasks"), _run_options(run), base)
    bench = None
    if "bench" in data:
        bench = _bench(_Table(source, data["bench"], "bench.", "bench"), models, threads, base)
    _check_size(source, models, quantizations, tasks, constraints, threads, repetitions, bench)
    return Plan(
        path=path,
        text=text,
        models=tuple(models),
        constraints=constraints,
        threads=threads,
        repetitions=repetitions,
        tasks=tasks,
        bench=bench,
        quantizations=quantizations,
    )


def _check_size(
    source: _Source,
    models: list[PlanModel],
    quantizations: tuple[str, ...],
    tasks: tuple[TaskEntry, ...],
    constraints: tuple[str, ...],
    threads: tuple[int, ...],
    repetitions: int,
    bench: BenchEntry | None,
) -> None:
    """At most MAX_CELLS cells, counted before any is built; the error names the keys
    that multiply, with their sizes."""
    bench_cells = len(bench.models) if bench is not None else 0
    total = len(models) * len(tasks) * len(constraints) * len(threads) * repetitions
    total += bench_cells
    if total <= MAX_CELLS:
        return
    factors = [
        f"models {len(models) // max(len(quantizations), 1)}",
        *([f"quantizations {len(quantizations)}"] if quantizations else []),
        f"tasks {len(tasks)}",
        f"constraints {len(constraints)}",
        f"threads {len(threads)}",
        f"repetitions {repetitions}",
    ]
    line = source.line_of(None, "repetitions") if repetitions > 1 else None
    where = f"{source.path}:{line}" if line else f"{source.path}"
    raise UserError(
        f"{where}: the plan expands to {total:,} cells, more than the {MAX_CELLS:,} a plan may "
        f"hold ({' x '.join(factors)}"
        + (f", + {bench_cells} bench" if bench_cells else "")
        + "); split it into plans of fewer cells"
    )


def _quant_type(value: Any) -> Any:
    text = _text(value)
    if text.startswith("!"):
        return text
    return canonical_type(text) or f"!unknown llama.cpp type {text!r} (e.g. Q8_0, Q4_K_M, Q2_K)"


def _mode(value: Any) -> Any:
    text = _text(value)
    if text.startswith("!"):
        return text
    try:
        return parse_modes(text)[0] if "," not in text else f"!one mode per item: {text!r}"
    except UserError as exc:
        return "!" + str(exc).removeprefix("--constraint: ")


def _models(top: _Table, base: Path) -> list[PlanModel]:
    """The table's `models`, each checked, no model twice."""
    registry = load_registry()
    entries: list[PlanModel] = []
    for spec in top.items("models", TEXT):
        try:
            entry = model_entry(spec, base, registry)
        except UserError as exc:
            raise top.error("models", str(exc)) from None
        _add_unique(top, "models", entries, entry)
    return entries


def _add_unique(table: _Table, key: str, entries: list[PlanModel], entry: PlanModel) -> None:
    clash = next((e for e in entries if e.label == entry.label), None)
    if clash is not None:
        raise table.error(
            key, f"{clash.spec!r} and {entry.spec!r} are both '{entry.label}' (one model twice)"
        )
    entries.append(entry)


def model_entry(spec: str, base: Path, registry: dict[str, Any]) -> PlanModel:
    """A model as the plan names it, checked without loading or pulling anything."""
    if spec in registry:
        return PlanModel(spec, spec, source=spec)
    quantized = split_quant_variant(spec)
    if quantized is not None:
        name, quant_type = quantized
        label = variant_label(name, quant_type)
        if name in registry:
            return PlanModel(label, label, source=name, quant_type=quant_type)
        return PlanModel(label, label)  # a variant of a local file: made beforehand
    if spec.startswith(HF_PREFIX):
        return PlanModel(spec, _slug(Path(spec).stem))
    converted = "@" in spec and "/" not in spec
    if converted and (split_openvino_variant(spec) or split_variant(spec)) is not None:
        onnx_base = spec.rpartition("@")[0]
        if onnx_base not in registry:
            raise unknown_model_error(onnx_base, list(registry))
        return PlanModel(spec, _slug(spec))
    if "/" in spec or "\\" in spec or spec.lower().endswith(".gguf"):
        path = _resolved(base / spec, spec)
        if not path.is_file():
            raise UserError(f"model file {spec!r} not found (looked for {path})")
        return PlanModel(str(path), base_name_of(path.stem), source=str(path))
    raise unknown_model_error(spec, list(registry))


def _variants(
    top: _Table, models: list[PlanModel], quantizations: tuple[str, ...]
) -> list[PlanModel]:
    """`quantizations`: each model (a registry name or a .gguf file) as each variant."""
    variants: list[PlanModel] = []
    for model in models:
        if model.source is None or model.quant_type is not None:
            raise top.error(
                "quantizations",
                f"model {model.spec!r} cannot be quantized here: list the registry name "
                "or .gguf file it comes from",
            )
        for quant_type in quantizations:
            label = variant_label(model.label, quant_type)
            entry = PlanModel(label, label, source=model.source, quant_type=quant_type)
            _add_unique(top, "quantizations", variants, entry)
    return variants


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._@+-]+", "-", text).strip(".-") or "x"


def _tasks(
    source: _Source, raw: Any, run_options: dict[str, Any], base: Path
) -> tuple[TaskEntry, ...]:
    if raw is None:
        return (TaskEntry(DEFAULT_TASK, DEFAULT_TASK, None, None, run_options),)
    if not isinstance(raw, list) or not raw:
        raise source.error("tasks", source.line_of(None, "tasks"), "give [[tasks]] tables")
    entries: list[TaskEntry] = []
    for number, data in enumerate(raw, start=1):
        table = _Table(source, data, f"tasks[{number}].", f"tasks#{number}")
        table.reject_unknown((*_TASK_KEYS, *RUN_OPTIONS))
        if "task" not in table.data:
            raise table.error("task", f"missing (known: {', '.join(task_names())})")
        task = table.value("task", _choice(tuple(task_names())))
        dataset = _file(table, "dataset", base, folder=TASKS[task].dataset_folder)
        schemas = _file(table, "schemas", base, folder=True)
        label = table.value("name", TEXT) if "name" in table.data else task
        if dataset is not None and "name" not in table.data:
            label = f"{task}-{dataset.stem}"
        label = _slug(label)
        if any(e.label == label for e in entries):
            raise table.error("name" if "name" in table.data else "task", f"'{label}' twice")
        own = _run_options(table)
        inherited = {
            k: v for k, v in run_options.items() if not own.keys() & _EXCLUSIVE.get(k, set())
        }
        entries.append(TaskEntry(label, task, dataset, schemas, {**inherited, **own}))
    return tuple(entries)


# `run` options that exclude each other: a task's own one replaces the [run] one
_EXCLUSIVE = {"limit": {"sample"}, "sample": {"limit"}}


def _run_options(table: _Table) -> dict[str, Any]:
    options = table.options(RUN_OPTIONS)
    for key, others in _EXCLUSIVE.items():
        clash = others & options.keys()
        if key in options and clash:
            raise table.error(key, f"excludes {clash.pop()} (set one of them)")
    return options


def _resolved(path: Path, given: str) -> Path:
    """`path` with `~` and its links resolved; a link loop is one line (pathlib raises
    a RuntimeError for it)."""
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError) as exc:
        raise UserError(f"{given!r}: cannot follow its links ({exc})") from None


def _file(table: _Table, key: str, base: Path, *, folder: bool) -> Path | None:
    if key not in table.data:
        return None
    text = table.value(key, TEXT)
    try:
        path = _resolved(base / text, text)
    except UserError as exc:
        raise table.error(key, str(exc)) from None
    if not path.exists():
        raise table.error(key, f"{text!r} not found (looked for {path})")
    if not folder and path.is_dir():
        raise table.error(key, f"{text!r} is a folder, not a file")
    if not path.is_dir():
        # a FIFO would hang the dataset's hash (and every reader), a device never ends
        try:
            check_regular(path, "it")
        except UserError as exc:
            raise table.error(key, f"{text!r}: {str(exc).removeprefix(f'{path}: it ')}") from None
    return path


def _bench(
    table: _Table, models: list[PlanModel], threads: tuple[int, ...], base: Path
) -> BenchEntry:
    table.reject_unknown(("models", "threads", *BENCH_OPTIONS))
    bench_models = _models(table, base) if "models" in table.data else models
    options = {
        key: table.items(key, kind) if key in BENCH_LISTS else table.value(key, kind)
        for key, kind in BENCH_OPTIONS.items()
        if key in table.data
    }
    bench_threads = tuple(table.items("threads", _int(1), default=list(threads)))
    return BenchEntry(tuple(bench_models), bench_threads, options)
