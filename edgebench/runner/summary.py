"""`summary.json`: derived from a run folder's manifest and samples, never kept by hand."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np

from edgebench.backends.base import FINISH_SKIPPED
from edgebench.metrics.apply import summarize_families, task_score_names
from edgebench.runner.samples import is_skipped
from edgebench.scoring.edgejson import SCORE_NAMES

# The task scores of a run made before runs recorded their metric families (EdgeJSON's).
ACCURACY_METRICS = SCORE_NAMES
TIMING_FIELDS = ("ttft_s", "latency_s", "prefill_tok_s", "decode_tok_s")
# Examples nothing was decoded for: no speed figures to take from them.
_UNTIMED = ("unsupported", "crashed", "timeout", FINISH_SKIPPED)
# The task score that says "the output validates against its schema", by task.
_SCHEMA_SCORES = ("schema_compliance", "syntax")


def distribution(values: list[float]) -> dict[str, float | None]:
    """p50, p95 (linear interpolation) and mean; None when there is nothing to measure."""
    if not values:
        return {"p50": None, "p95": None, "mean": None, "n": 0}
    array = np.asarray(values, dtype=float)
    return {
        "p50": float(np.percentile(array, 50)),
        "p95": float(np.percentile(array, 95)),
        "mean": float(array.mean()),
        "n": len(values),
    }


def mean_scores(
    samples: list[dict[str, Any]], names: tuple[str, ...] = ACCURACY_METRICS
) -> dict[str, float | int]:
    """Mean of each of the task's scores; a sample without scores (error) counts as 0.
    Skipped samples are left out of `n` and counted in `n_skipped` (only when there are
    some)."""
    scored = [s for s in samples if not is_skipped(s)]
    n = len(scored)
    result: dict[str, float | int] = {"n": n}
    if n < len(samples):
        result["n_skipped"] = len(samples) - n
    for metric in names:
        total = sum(float((s.get("scores") or {}).get(metric, 0.0)) for s in scored)
        result[metric] = total / n if n else 0.0
    return result


def grouped_scores(
    samples: list[dict[str, Any]], names: tuple[str, ...] = ACCURACY_METRICS
) -> dict[str, dict[str, dict[str, Any]]]:
    """`by_<group>` tables, e.g. by_complexity and by_schema, from each sample's groups."""
    buckets: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for sample in samples:
        for key, value in (sample.get("groups") or {}).items():
            buckets[key][value].append(sample)
    tables = {
        f"by_{key}": {value: mean_scores(items, names) for value, items in sorted(groups.items())}
        for key, groups in sorted(buckets.items())
    }
    by_type = element_type_table(samples)
    if by_type:
        tables["by_element_type"] = by_type
    return tables


def element_type_table(samples: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Key-matching per leaf element type (DeepJSONEval's Figure 8), pooled over fields:
    the sum of every field's score over the number of fields of that type. `n` counts the
    examples that have the type."""
    from edgebench.scoring.deepjson import ELEMENT_TYPES

    fields: Counter[str] = Counter()
    examples: Counter[str] = Counter()
    total: defaultdict[str, float] = defaultdict(float)
    for sample in samples:
        if is_skipped(sample):
            continue
        for kind, score in (sample.get("element_scores") or {}).items():
            examples[kind] += 1
            fields[kind] += score["fields"]
            total[kind] += score["key_matching"] * score["fields"]
    order = {kind: i for i, kind in enumerate(ELEMENT_TYPES)}
    return {
        kind: {"n": examples[kind], "fields": fields[kind], "key_matching": total[kind] / count}
        for kind, count in sorted(fields.items(), key=lambda kv: order.get(kv[0], len(order)))
    }


def perf_summary(samples: list[dict[str, Any]], arm: dict[str, Any]) -> dict[str, Any]:
    """Speed, memory and token totals of one constraint arm (its own worker)."""
    timed = [s for s in samples if s.get("timings") and s.get("finish_reason") not in _UNTIMED]
    perf: dict[str, Any] = {
        "load_s": arm.get("load_s"),
        **{k: v for k, v in (arm.get("memory") or {}).items() if k.startswith("peak_")},
    }
    for field in TIMING_FIELDS:
        perf[field] = distribution(
            [s["timings"][field] for s in timed if s["timings"].get(field) is not None]
        )
    for total in ("prompt_tokens", "output_tokens", "generated_tokens", "forced_tokens"):
        perf[f"{total}_total"] = sum(s.get(total) or 0 for s in samples)
    perf["finish_reasons"] = dict(Counter(s.get("finish_reason") or "none" for s in samples))
    perf["hit_token_limit"] = perf["finish_reasons"].get("length", 0)
    perf["wall_s"] = arm.get("wall_s")
    return perf


def compile_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Grammar compile times per distinct schema: the first compile and the cached one."""
    failed = [r for r in records if not r.get("ok")]
    return {
        "schemas": len(records),
        "unsupported": len(failed),
        "first_s": distribution([r["seconds"] for r in records]),
        "cached_s": distribution(
            [r["cached_seconds"] for r in records if r.get("cached_seconds") is not None]
        ),
        "first_total_s": sum(r["seconds"] for r in records),
        "sources": dict(Counter(r.get("source") or "" for r in records)),
        "errors": {r["label"]: r["error"] for r in failed},
        "schemas_with_unenforced_keywords": sum(1 for r in records if r.get("warnings")),
    }


def noncompliance(
    samples: list[dict[str, Any]], score: str = "schema_compliance"
) -> dict[str, int]:
    """Why outputs failed the schema (the task's `score`: EdgeJSON's schema compliance,
    DeepJSONEval's syntax): cut at max_tokens, refused schema, a schema keyword the
    engine does not enforce (listed in the sample's constraint_warnings), or other."""
    reasons: Counter[str] = Counter()
    for sample in samples:
        if is_skipped(sample) or (sample.get("scores") or {}).get(score):
            continue
        if sample.get("hit_token_limit"):
            reasons["hit_token_limit"] += 1
        elif sample.get("constraint_status") == "unsupported":
            reasons["unsupported"] += 1
        elif sample.get("finish_reason") in ("crashed", "timeout"):
            reasons["worker_failure"] += 1
        elif sample.get("constraint_warnings"):
            reasons["unenforced_keyword"] += 1
        else:
            reasons["other"] += 1
    return {"total": sum(reasons.values()), **reasons}


def guard_summary(samples: list[dict[str, Any]]) -> dict[str, int]:
    """What the keyword guard did: samples whose schema it guarded, candidate tokens it
    struck out, and times every allowed token was refused (the engine's best taken)."""
    return {
        "samples_guarded": sum(1 for s in samples if s.get("constraint_guarded")),
        "vetoes": sum(s.get("guard_vetoes") or 0 for s in samples),
        "dead_ends": sum(s.get("guard_dead_ends") or 0 for s in samples),
    }


def score_names(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The task's per-sample score names: from the families the run recorded, else (a run
    made before runs recorded them) from the task's own family, else EdgeJSON's."""
    recorded = task_score_names(manifest)
    if recorded:
        return recorded
    from edgebench.metrics import get_family, task_family
    from edgebench.tasks import get_task, task_names

    name = (manifest.get("task") or {}).get("name")
    if name in task_names():
        return get_family(task_family(get_task(name))).score_names
    return ACCURACY_METRICS


def arm_summary(
    samples: list[dict[str, Any]], arm: dict[str, Any], manifest: dict[str, Any] | None = None
) -> dict[str, Any]:
    manifest = manifest or {}
    names = score_names(manifest)
    schema_score = next((name for name in _SCHEMA_SCORES if name in names), None)
    summary = {
        "status": arm.get("status"),
        "n_examples": len(samples),
        "n_errors": sum(1 for s in samples if s.get("error") and not is_skipped(s)),
        "n_unsupported": sum(1 for s in samples if s.get("constraint_status") == "unsupported"),
        "n_crashed": sum(1 for s in samples if s.get("finish_reason") == "crashed"),
        "n_timeout": sum(1 for s in samples if s.get("finish_reason") == "timeout"),
        "n_skipped": sum(1 for s in samples if is_skipped(s)),
        "metrics": mean_scores(samples, names),
        # Only a task that scores schema validity can say why outputs failed it.
        "noncompliant": noncompliance(samples, schema_score) if schema_score else None,
        **grouped_scores(samples, names),
        "perf": perf_summary(samples, arm),
        "compile": compile_summary(arm.get("compile") or []),
        "guard": guard_summary(samples),
    }
    families = summarize_families(manifest, [s for s in samples if not is_skipped(s)])
    if families is not None:
        summary["families"] = families
    return summary


def _decode_ratios(by_constraint: dict[str, dict[str, Any]]) -> None:
    """p50 decode tokens/s of each mode over that of `none` in the same run."""
    base = (by_constraint.get("none") or {}).get("perf", {}).get("decode_tok_s", {}).get("p50")
    for result in by_constraint.values():
        p50 = result["perf"]["decode_tok_s"]["p50"]
        result["decode_ratio_to_none"] = p50 / base if base and p50 is not None else None


def _model_facts(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """label -> what a comparison across runtimes needs to know about the model."""
    records = manifest.get("models") or [manifest.get("model") or {}]
    return {
        str(r.get("label")): {
            "format": r.get("format") or "gguf",
            "backend": r.get("backend"),
            "quantization": r.get("quantization"),
            "size_bytes": r.get("size_bytes"),
            "sha256": r.get("sha256"),
        }
        for r in records
    }


def _model_ratios(by_model: dict[str, dict[str, Any]]) -> None:
    """p50 decode tokens/s of each model over that of the first model, per mode."""
    first = next(iter(by_model.values()))["by_constraint"]
    for result in by_model.values():
        for mode, arm in result["by_constraint"].items():
            base = ((first.get(mode) or {}).get("perf") or {}).get("decode_tok_s", {}).get("p50")
            p50 = arm["perf"]["decode_tok_s"]["p50"]
            arm["decode_ratio_to_first_model"] = p50 / base if base and p50 is not None else None


def summarize(manifest: dict[str, Any], samples: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's figures per constraint mode (`by_constraint`, the first model's) and, in a
    run of several models, per model (`by_model`); the top-level figures are those of the
    first model's first mode, so a single-mode run reads the same as before. A
    consistency run (`edgebench consistency`) has a summary of its own."""
    if manifest.get("kind") == "consistency":
        from edgebench.runner.consistency import summarize_consistency

        return summarize_consistency(manifest, samples)
    arms: dict[str, Any] = manifest.get("arms") or {"none": {}}
    default_label = (manifest.get("model") or {}).get("label")
    facts = _model_facts(manifest)
    grouped: dict[str, dict[str, Any]] = {}
    for key, arm in arms.items():
        label = arm.get("model", default_label)
        mode = arm.get("constraint", key)
        chosen = [
            s
            for s in samples
            if s.get("model", default_label) == label and s.get("constraint", "none") == mode
        ]
        result = arm_summary(chosen, arm, manifest)
        if arm.get("status") == "skipped":
            result["skip_reason"] = arm.get("reason")
        size = (facts.get(str(label)) or {}).get("size_bytes")
        result["model_size_mb"] = size / 1e6 if size else None
        grouped.setdefault(label, {})[mode] = result
    for per_mode in grouped.values():
        _decode_ratios(per_mode)
    by_model = {
        str(label): {**facts.get(str(label), {}), "by_constraint": per_mode}
        for label, per_mode in grouped.items()
    }
    if len(by_model) > 1:
        _model_ratios(by_model)
    by_constraint = next(iter(grouped.values()))
    modes = list(by_constraint)
    primary = by_constraint[modes[0]]
    summary = {
        "run_id": manifest.get("run_id"),
        "model": default_label,
        "models": list(by_model),
        "task": (manifest.get("task") or {}).get("name"),
        "status": manifest.get("status"),
        "constraints": modes,
        "primary_constraint": modes[0],
        "n_examples": primary["n_examples"],
        "n_errors": primary["n_errors"],
        "n_crashed": primary["n_crashed"],
        "n_timeout": primary["n_timeout"],
        "n_skipped": primary["n_skipped"],
        "metrics": primary["metrics"],
        **{k: v for k, v in primary.items() if k.startswith("by_")},
        "perf": primary["perf"],
        "by_constraint": by_constraint,
    }
    if len(by_model) > 1:  # one model: by_constraint says it all
        summary["by_model"] = by_model
    if "families" in primary:
        summary["families"] = primary["families"]
    return summary
