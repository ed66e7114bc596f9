"""`summary.json`: derived from a run folder's manifest and samples, never kept by hand."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np

ACCURACY_METRICS = (
    "json_exact",
    "field_f1",
    "field_precision",
    "field_recall",
    "schema_compliance",
    "valid_json",
)
TIMING_FIELDS = ("ttft_s", "latency_s", "prefill_tok_s", "decode_tok_s")


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


def mean_scores(samples: list[dict[str, Any]]) -> dict[str, float | int]:
    """Mean of each accuracy metric; a sample without scores (error) counts as 0."""
    n = len(samples)
    result: dict[str, float | int] = {"n": n}
    for metric in ACCURACY_METRICS:
        total = sum(float((s.get("scores") or {}).get(metric, 0.0)) for s in samples)
        result[metric] = total / n if n else 0.0
    return result


def grouped_scores(samples: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """`by_<group>` tables, e.g. by_complexity and by_schema, from each sample's groups."""
    buckets: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for sample in samples:
        for key, value in (sample.get("groups") or {}).items():
            buckets[key][value].append(sample)
    return {
        f"by_{key}": {value: mean_scores(items) for value, items in sorted(groups.items())}
        for key, groups in sorted(buckets.items())
    }


def perf_summary(samples: list[dict[str, Any]], manifest: dict[str, Any]) -> dict[str, Any]:
    timed = [s for s in samples if s.get("timings")]
    perf: dict[str, Any] = {
        "load_s": manifest.get("load_s"),
        **{k: v for k, v in (manifest.get("memory") or {}).items() if k.startswith("peak_")},
    }
    for field in TIMING_FIELDS:
        perf[field] = distribution(
            [s["timings"][field] for s in timed if s["timings"].get(field) is not None]
        )
    perf["prompt_tokens_total"] = sum(s.get("prompt_tokens") or 0 for s in samples)
    perf["output_tokens_total"] = sum(s.get("output_tokens") or 0 for s in samples)
    perf["generated_tokens_total"] = sum(s.get("generated_tokens") or 0 for s in samples)
    perf["finish_reasons"] = dict(Counter(s.get("finish_reason") or "none" for s in samples))
    perf["hit_token_limit"] = perf["finish_reasons"].get("length", 0)
    perf["wall_s"] = manifest.get("wall_s")
    return perf


def summarize(manifest: dict[str, Any], samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "run_id": manifest.get("run_id"),
        "model": (manifest.get("model") or {}).get("label"),
        "task": (manifest.get("task") or {}).get("name"),
        "status": manifest.get("status"),
        "n_examples": len(samples),
        "n_errors": sum(1 for s in samples if s.get("error")),
        "metrics": mean_scores(samples),
        **grouped_scores(samples),
        "perf": perf_summary(samples, manifest),
    }
