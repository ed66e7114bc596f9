"""The report's "Devices" section, shown when the runs come from more than one device: a
leaderboard per device, the device x (model, mode) matrix grouped by model of device,
and the spread between units of one model of device (the data: devices.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgebench.analysis.devices import (
    ColumnKey,
    DeviceGroup,
    MatrixCell,
    Range,
    device_groups,
    matrix_columns,
    matrix_row,
    primary_metric,
    ranked,
    spans_devices,
    spreads,
)
from edgebench.analysis.figures import metric_label
from edgebench.analysis.rundata import ArmView, labels_by_run
from edgebench.report import energy, facts
from edgebench.report.cells import (
    Column,
    TableCell,
    num_cell,
    perf_cell,
    rate_cell,
    table_data,
    text_cell,
)

# The cost of a row in a device's leaderboard, by facts.PERF_COLUMNS key.
DEVICE_PERF = ("perf.decode_tok_s.p50", facts.TTFT_KEY, "perf.peak_rss_mb")
# Its energy, when some arm was measured, by energy.ENERGY_COLUMNS key.
DEVICE_ENERGY = ("energy.j_per_answer", "energy.j_per_decode_token")
MATRIX_NOTE = (
    "Each cell: {metric}, decode tok/s p50 under it (the mean over the device's runs of "
    "that model and mode when it has several); —: the device did not run it."
)
SPREAD_NOTE = (
    "Units of one model of device (same board or CPU, architecture, RAM and cores) on the "
    "same model and mode: lowest–highest of the units' figures, and the relative spread "
    "(highest − lowest) / mean."
)


def _leaderboard(
    group: DeviceGroup, metric: str | None, run_label: dict[int, str], with_energy: bool
) -> dict[str, Any]:
    """The device's arms, best first on the primary metric."""
    perf = {key: (label, read, digits) for label, key, read, digits in facts.PERF_COLUMNS}
    power = {key: (label, read, digits) for label, key, read, digits in energy.ENERGY_COLUMNS}
    shown_power = DEVICE_ENERGY if with_energy else ()
    columns = [
        Column("rank", "#"),
        Column("run", "run"),
        Column("model", "model"),
        Column("quant", "quant"),
        Column("runtime", "runtime"),
        Column("constraint", "mode"),
        Column("engine", "engine"),
        Column("n", "n"),
        *([Column(f"metric:{metric}", metric_label(metric))] if metric else []),
        *(Column(key, perf[key][0]) for key in DEVICE_PERF),
        *(Column(key, power[key][0]) for key in shown_power),
    ]
    rows = []
    for rank, arm in enumerate(ranked(group.arms, metric), start=1):
        cells = [
            num_cell(rank, 0),
            text_cell(run_label[id(arm.run)]),
            text_cell(arm.model),
            text_cell(arm.run.manifest.model(arm.model).quantization),
            text_cell(facts.runtime_cell(arm.result)),
            text_cell(arm.constraint),
            text_cell(facts.engine_cell(arm.result)),
            num_cell(arm.result.n_scored, 0),
        ]
        if metric:
            cells.append(rate_cell(arm.metrics.get(metric), arm.intervals.get(metric)))
        for key in DEVICE_PERF:
            _, read, digits = perf[key]
            cells.append(perf_cell(arm, key, read(arm.result), digits))
        for key in shown_power:
            _, read, digits = power[key]
            cells.append(num_cell(read(arm.result), digits))
        rows.append(cells)
    identity = group.identity
    return table_data(
        columns,
        rows,
        device=group.label,
        model_label=identity.model_label,
        fingerprint=identity.fingerprint,
    )


def _matrix_cell(cell: MatrixCell | None) -> TableCell:
    if cell is None:
        return num_cell(None, 3)
    speed = facts.fmt(cell.decode_tok_s, 1) + " tok/s"
    runs = f" · {cell.runs} runs" if cell.runs > 1 else ""
    return TableCell(num_cell(cell.metric, 3).text, cell.metric, True, note=speed + runs)


def _matrix(
    groups: Sequence[DeviceGroup], columns: Sequence[ColumnKey], metric: str | None
) -> dict[str, Any]:
    """Rows = devices, one body per model of device; columns = (model, mode)."""
    bodies: dict[str, list[list[TableCell]]] = {}
    for group in groups:
        row = [text_cell(group.label)] + [
            _matrix_cell(cell) for cell in matrix_row(group, columns, metric)
        ]
        bodies.setdefault(group.identity.model_label, []).append(row)
    header = [Column("device", "device")] + [
        Column(f"matrix:{i}", f"{model} · {mode}") for i, (model, mode) in enumerate(columns)
    ]
    return table_data(
        header,
        [row for rows in bodies.values() for row in rows],
        bodies=[{"model_label": label, "rows": rows} for label, rows in bodies.items()],
        note=MATRIX_NOTE.format(metric=metric_label(metric) if metric else "no score"),
    )


def _range_cells(value: Range | None, digits: int) -> list[TableCell]:
    """ "12.0–13.5" sorting on the lowest, then the relative spread as a percentage."""
    if value is None:
        return [num_cell(None, digits), num_cell(None, 1)]
    text = f"{facts.fmt(value.low, digits)}–{facts.fmt(value.high, digits)}"
    relative = None if value.relative is None else value.relative * 100
    return [TableCell(text, value.low, True), num_cell(relative, 1)]


def _spread(
    groups: Sequence[DeviceGroup], columns: Sequence[ColumnKey], metric: str | None
) -> dict[str, Any] | None:
    found = spreads(groups, columns, metric)
    if not found:
        return None
    label = metric_label(metric) if metric else "metric"
    header = [
        Column("model_label", "model of device"),
        Column("arm", "model · mode"),
        Column("units", "units"),
        Column("spread:decode", "decode tok/s p50"),
        Column("spread:decode_rel", "decode spread %"),
        Column("spread:metric", label),
        Column("spread:metric_rel", f"{label} spread %"),
    ]
    rows = [
        [
            text_cell(spread.model_label),
            text_cell(" · ".join(spread.column)),
            num_cell(spread.units, 0),
            *_range_cells(spread.decode_tok_s, 1),
            *_range_cells(spread.metric, 3),
        ]
        for spread in found
    ]
    return table_data(header, rows, note=SPREAD_NOTE)


def devices_section(all_arms: list[ArmView]) -> dict[str, Any] | None:
    """The section's tables; None when every arm ran on one device."""
    if not spans_devices(all_arms):
        return None
    groups = device_groups(all_arms)
    metric = primary_metric(all_arms)
    columns = matrix_columns(all_arms)
    run_label = labels_by_run(all_arms)
    with_energy = energy.measured([arm.result for arm in all_arms])
    return {
        "metric": metric_label(metric) if metric else None,
        "count": len(groups),
        "models_of_device": len({g.identity.model_id for g in groups}),
        "leaderboards": [_leaderboard(g, metric, run_label, with_energy) for g in groups],
        "matrix": _matrix(groups, columns, metric),
        "spread": _spread(groups, columns, metric),
    }
