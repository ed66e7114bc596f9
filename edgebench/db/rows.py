"""A loaded run as the rows of the database's tables: what SQL queries read. The run's
files themselves are stored verbatim beside them (ingest.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from edgebench.runfolder.records import ArmSummary, Manifest, SampleRecord, Summary
from edgebench.summary import LoadedRun
from edgebench.system.records import Device

if TYPE_CHECKING:  # annotations only: the identity record may live in records.py
    from edgebench.runfolder.identity import DeviceIdentity

Row = dict[str, Any]


@dataclass(frozen=True)
class RunRows:
    """Every row one run adds (the device row is shared by the device's runs)."""

    device: Row
    run: Row
    arms: list[Row]
    arm_metrics: list[Row]
    arm_group_metrics: list[Row]
    differences: list[Row]
    samples: list[Row]
    sample_scores: list[Row]


def device_row(identity: DeviceIdentity, device: Device) -> Row:
    return {
        "fingerprint": identity.fingerprint,
        "name": identity.name,
        "hostname": identity.hostname,
        "unit_id": identity.unit_id,
        "unit_sources": json.dumps(list(identity.unit_sources)),
        "model_id": identity.model_id,
        "model_label": identity.model_label,
        "config_id": identity.config_id,
        "cpu_model": device.cpu_model,
        "machine": device.machine,
        "board_model": device.board_model,
        "ram_total_mb": device.ram_total_mb,
        "logical_cores": device.logical_cores,
        "os": device.os,
        "kernel": device.kernel,
    }


def _number(value: Any) -> float | None:
    """A figure as SQL reads it: numbers (booleans as 0/1), else NULL."""
    return float(value) if isinstance(value, int | float) else None


def _arm_row(run_key: str, manifest: Manifest, arm: ArmSummary) -> Row:
    model = next((m for m in manifest.models if m.label == arm.model), None)
    perf, energy = arm.perf, arm.energy
    return {
        "run_key": run_key,
        "model": arm.model,
        "constraint_mode": arm.constraint,
        "status": arm.status,
        "registry_name": model.registry_name if model else None,
        "quant_type": model.quantization if model else None,
        "file_size_bytes": model.size_bytes if model else None,
        "backend": model.backend if model else None,
        "threads": manifest.settings.threads,
        "n_examples": arm.n_examples,
        "n_scored": arm.n_scored,
        "n_errors": arm.n_errors,
        "ttft_s_p50": perf.ttft_s.p50,
        "ttft_s_p95": perf.ttft_s.p95,
        "latency_s_p50": perf.latency_s.p50,
        "prefill_tok_s_p50": perf.prefill_tok_s.p50,
        "decode_tok_s_p50": perf.decode_tok_s.p50,
        "peak_rss_mib": perf.peak_rss_mb,
        "j_per_decode_token": energy.j_per_decode_token if energy else None,
        "j_per_answer": energy.j_per_answer if energy else None,
        "total_j": energy.total_j if energy else None,
        **_bounds("ttft_s_p50", perf.p50_ci95.get("ttft_s")),
        **_bounds("latency_s_p50", perf.p50_ci95.get("latency_s")),
        **_bounds("prefill_tok_s_p50", perf.p50_ci95.get("prefill_tok_s")),
        **_bounds("decode_tok_s_p50", perf.p50_ci95.get("decode_tok_s")),
        "decode_ratio_to_none": arm.decode_ratio_to_none,
        **_bounds("decode_ratio_to_none", perf.decode_ratio_to_none_ci95),
        "contended_examples": perf.contended_examples if perf.speed_clean is not None else None,
        "speed_clean": _number(perf.speed_clean),  # NULL: not measured (before 2.9)
    }


def _bounds(figure: str, interval: list[float] | None) -> Row:
    """A figure's 95% interval as its `_lo` and `_hi` columns (NULL: none)."""
    lo, hi = interval if interval else (None, None)
    return {f"{figure}_lo": lo, f"{figure}_hi": hi}


def _metric_rows(run_key: str, arm: ArmSummary) -> list[Row]:
    return [
        {
            "run_key": run_key,
            "model": arm.model,
            "constraint_mode": arm.constraint,
            "family": family,
            "role": summary.role,
            "metric": metric,
            "value": _number(value),
            **_bounds("value", summary.ci95.get(metric)),
        }
        for family, summary in arm.families.items()
        for metric, value in summary.overall.items()
    ]


def _group_metric_rows(run_key: str, arm: ArmSummary) -> list[Row]:
    """Every family's figures per group of examples (complexity, schema ...), each
    with its interval."""
    return [
        {
            "run_key": run_key,
            "model": arm.model,
            "constraint_mode": arm.constraint,
            "family": family,
            "group_key": key,
            "group_value": group_value,
            "metric": metric,
            "value": _number(value),
            **_bounds("value", summary.groups_ci95.get(key, {}).get(group_value, {}).get(metric)),
        }
        for family, summary in arm.families.items()
        for key, groups in summary.groups.items()
        for group_value, figures in groups.items()
        for metric, value in figures.items()
    ]


def _difference_rows(run_key: str, summary: Summary) -> list[Row]:
    """Arm minus arm on the examples both scored, with the paired interval."""
    return [
        {
            "run_key": run_key,
            "family": d.family,
            "metric": d.metric,
            "base_model": d.base_model,
            "base_constraint": d.base_constraint,
            "other_model": d.other_model,
            "other_constraint": d.other_constraint,
            "n": d.n,
            "difference": d.difference,
            **_bounds("difference", d.ci95),
        }
        for d in summary.differences
    ]


def _sample_row(run_key: str, line: int, sample: SampleRecord) -> Row:
    timings = sample.timings
    return {
        "run_key": run_key,
        "line": line,
        "model": sample.model,
        "constraint_mode": sample.constraint,
        "example_index": sample.index,
        "example_id": sample.id,
        "temperature": sample.sampling.temperature if sample.sampling else None,
        "seed": sample.sampling.seed if sample.sampling else None,
        "finish_reason": sample.finish_reason,
        "prompt_tokens": sample.prompt_tokens,
        "output_tokens": sample.output_tokens,
        "ttft_s": timings.ttft_s,
        "latency_s": timings.latency_s,
        "prefill_tok_s": timings.prefill_tok_s,
        "decode_tok_s": timings.decode_tok_s,
        "error": sample.error,
    }


def _score_rows(run_key: str, line: int, sample: SampleRecord) -> list[Row]:
    return [
        {
            "run_key": run_key,
            "line": line,
            "family": family,
            "metric": metric,
            "value": _number(value),
        }
        for family, scores in (sample.scores or {}).items()
        for metric, value in scores.items()
    ]


def run_rows(run: LoadedRun, identity: DeviceIdentity, run_key: str, run_row: Row) -> RunRows:
    """The rows of `run` (its `runs` row given: it names the folder and content hash)."""
    manifest = run.manifest
    arms = run.summary.arms
    # `line`: the sample's position among the run's records, unique even for draws
    numbered = list(enumerate(run.samples, start=1))
    return RunRows(
        device=device_row(identity, manifest.device),
        run=run_row,
        arms=[_arm_row(run_key, manifest, arm) for arm in arms],
        arm_metrics=[row for arm in arms for row in _metric_rows(run_key, arm)],
        arm_group_metrics=[row for arm in arms for row in _group_metric_rows(run_key, arm)],
        differences=_difference_rows(run_key, run.summary),
        samples=[_sample_row(run_key, line, s) for line, s in numbered],
        sample_scores=[row for line, s in numbered for row in _score_rows(run_key, line, s)],
    )
