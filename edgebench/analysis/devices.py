"""The device axis of results from many devices: arms grouped by the device that ran
them (its identity's fingerprint), each device's arms ranked, a device x (model, mode)
matrix, and, for a model of device with several units, the spread between the units.
Pure data; the HTML page (device_view.py), `compare` and the card render it.

Identity comes from `runfolder.identity.identity_of`, so runs written before devices
had one (format < 2.8) group by their derived identity."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from edgebench.analysis.device_names import device_label
from edgebench.analysis.rundata import ArmView
from edgebench.analysis.sweep import metric_names, pick_metric
from edgebench.runfolder.identity import identity_of
from edgebench.system.records import DeviceIdentity


def arm_identity(arm: ArmView) -> DeviceIdentity:
    return identity_of(arm.run.manifest.device)


@dataclass(frozen=True)
class DeviceGroup:
    """One device (one fingerprint: a unit with its software) and its arms, run order."""

    identity: DeviceIdentity
    label: str  # unique among the groups shown together
    arms: list[ArmView]


def _unique(labels: list[str], identities: list[DeviceIdentity]) -> list[str]:
    """One unit seen with two configurations (an OS update): its config id tells them
    apart."""
    return [
        f"{label} · {identity.config_id}" if labels.count(label) > 1 else label
        for label, identity in zip(labels, identities, strict=True)
    ]


def device_groups(all_arms: Sequence[ArmView]) -> list[DeviceGroup]:
    """The devices, grouped by model of device (its label), then by name and unit."""
    by_fingerprint: dict[str, tuple[DeviceIdentity, list[ArmView]]] = {}
    for arm in all_arms:
        identity = arm_identity(arm)
        by_fingerprint.setdefault(identity.fingerprint, (identity, []))[1].append(arm)
    ordered = sorted(
        by_fingerprint.values(),
        key=lambda item: (item[0].model_label, item[0].name, item[0].unit_id),
    )
    identities = [identity for identity, _ in ordered]
    labels = _unique([device_label(i) for i in identities], identities)
    return [
        DeviceGroup(identity, label, arms)
        for label, (identity, arms) in zip(labels, ordered, strict=True)
    ]


def spans_devices(all_arms: Sequence[ArmView]) -> bool:
    """The arms come from more than one device."""
    return len({arm_identity(arm).fingerprint for arm in all_arms}) > 1


def labels_by_arm(all_arms: Sequence[ArmView]) -> dict[int, str]:
    """Each arm's device label, keyed by the arm's identity; empty for one device."""
    if not spans_devices(all_arms):
        return {}
    return {id(arm): group.label for group in device_groups(all_arms) for arm in group.arms}


def primary_metric(all_arms: Sequence[ArmView]) -> str | None:
    """The task's headline figure (as the sweep and plots pick it); None: nothing scored."""
    return pick_metric(all_arms, None) if metric_names(all_arms) else None


def decode_tok_s(arm: ArmView) -> float | None:
    return arm.result.perf.decode_tok_s.p50


def ranked(device_arms: Sequence[ArmView], metric: str | None) -> list[ArmView]:
    """Best first on `metric`, then on decode tok/s; an arm without the figure last."""

    def key(arm: ArmView) -> tuple[bool, float, bool, float]:
        score = arm.metrics.get(metric) if metric else None
        speed = decode_tok_s(arm)
        return (score is None, -(score or 0.0), speed is None, -(speed or 0.0))

    return sorted(device_arms, key=key)


# -- the device x (model, mode) matrix ------------------------------------------------
ColumnKey = tuple[str, str]  # (model, constraint mode)


@dataclass(frozen=True)
class MatrixCell:
    """A device's figures for one (model, mode): means over its runs of it."""

    metric: float | None
    decode_tok_s: float | None
    runs: int  # how many runs of this (model, mode) the device has


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def _cell(arms: Sequence[ArmView], metric: str | None) -> MatrixCell:
    return MatrixCell(
        metric=_mean([arm.metrics.get(metric) if metric else None for arm in arms]),
        decode_tok_s=_mean([decode_tok_s(arm) for arm in arms]),
        runs=len(arms),
    )


def _in_column(arms: Sequence[ArmView], column: ColumnKey) -> list[ArmView]:
    return [arm for arm in arms if (arm.model, arm.constraint) == column]


def matrix_columns(all_arms: Sequence[ArmView]) -> list[ColumnKey]:
    """Every (model, mode) any device ran, in first-seen order."""
    return list(dict.fromkeys((arm.model, arm.constraint) for arm in all_arms))


def matrix_row(
    group: DeviceGroup, columns: Sequence[ColumnKey], metric: str | None
) -> list[MatrixCell | None]:
    """The device's cell under each column; None where it did not run that (model, mode)."""
    return [
        _cell(arms, metric) if arms else None
        for arms in (_in_column(group.arms, column) for column in columns)
    ]


# -- the spread between units of one model of device -----------------------------------
@dataclass(frozen=True)
class Range:
    """Per-unit values of one figure: lowest, highest, and (highest - lowest) / mean."""

    low: float
    high: float
    relative: float | None  # None when the mean is 0

    @classmethod
    def of(cls, values: Sequence[float | None]) -> Range | None:
        present = [v for v in values if v is not None]
        if len(present) < 2:
            return None
        mean = fmean(present)
        low, high = min(present), max(present)
        return cls(low, high, (high - low) / mean if mean else None)


@dataclass(frozen=True)
class Spread:
    """How the units of one model of device differ on one (model, mode)."""

    model_label: str  # the model of device
    column: ColumnKey
    units: int  # units that ran this (model, mode)
    decode_tok_s: Range | None
    metric: Range | None


def _units(groups: Sequence[DeviceGroup]) -> dict[str, list[DeviceGroup]]:
    """Each unit's devices (one per configuration it ran under)."""
    units: dict[str, list[DeviceGroup]] = {}
    for group in groups:
        units.setdefault(group.identity.unit_id, []).append(group)
    return units


def spreads(
    groups: Sequence[DeviceGroup], columns: Sequence[ColumnKey], metric: str | None
) -> list[Spread]:
    """For each model of device with 2+ units: per (model, mode) two or more of them ran,
    the range of the units' decode tok/s and primary metric (each unit's mean)."""
    by_model: dict[str, list[DeviceGroup]] = {}
    for group in groups:
        by_model.setdefault(group.identity.model_id, []).append(group)
    result = []
    for model_groups in by_model.values():
        units = _units(model_groups)
        if len(units) < 2:
            continue
        for column in columns:
            cells = [
                _cell(_in_column([a for g in unit for a in g.arms], column), metric)
                for unit in units.values()
            ]
            ran = [cell for cell in cells if cell.runs]
            if len(ran) < 2:
                continue
            result.append(
                Spread(
                    model_label=model_groups[0].identity.model_label,
                    column=column,
                    units=len(ran),
                    decode_tok_s=Range.of([c.decode_tok_s for c in ran]),
                    metric=Range.of([c.metric for c in ran]),
                )
            )
    return result
