"""Run folders from several devices for the report's device axis: each run's manifest
carries a `device.identity` as a device of format 2.8 writes it, so two units of one
model of device (same model_id, their own unit_id) and a third device of another kind
can be told apart. Decode speed is set per device (`slowdown`), accuracy by the answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from edgebench.tasks import get_task
from tests.helpers.report_runs import make_run

PI5 = "Raspberry Pi 5 Model B Rev 1.0 · 8 GB"
LAPTOP = "Intel Core i5-1135G7 · 16 GB"
LAPTOP_DEVICE = {"cpu_model": "Intel Core i5-1135G7", "ram_total_mb": 16000}


def identity(name: str, unit: str, model: str, model_label: str) -> dict[str, object]:
    """A `device.identity` block; ids padded to the documented shapes from short tags."""
    return {
        "name": name,
        "hostname": name,
        "unit_id": "u" + unit.ljust(12, "0"),
        "unit_sources": ["soc-serial", "machine-id"],
        "model_id": "m" + model.ljust(12, "0"),
        "model_label": model_label,
        "config_id": "c" + "1".ljust(12, "0"),
        "fingerprint": "d" + (model + unit).ljust(12, "0"),
    }


def pi_device(ident: dict[str, object]) -> dict[str, object]:
    return {
        "cpu_model": "Cortex-A76",
        "board_model": "Raspberry Pi 5 Model B Rev 1.0",
        "machine": "aarch64",
        "ram_total_mb": 8048,
        "logical_cores": 4,
        "threads_used": 4,
        "identity": ident,
    }


def answers(right: int, n: int = 3) -> list[str]:
    """The built-in examples' expected answers for the first `right`, then `{}`."""
    task = get_task("edgejson")
    examples = task.load(*task.resolve_paths(None, None))[:n]
    return [json.dumps(ex.expected) if i < right else "{}" for i, ex in enumerate(examples)]


@dataclass(frozen=True)
class Fleet:
    pi_a: Path  # Pi 5 unit a: every answer right, decode at full speed
    pi_b: Path  # Pi 5 unit b: 2 of 3 right, 25% slower
    laptop: Path  # another kind of device; ran `none` only: a missing matrix cell


def make_fleet(base: Path, model_label: str = "smollm2", laptop_name: str = "laptop") -> Fleet:
    """Three devices, 3 examples each: two Pi 5 units (none, mask) and a laptop (none)."""
    laptop = identity(laptop_name, "cccc", "7777", LAPTOP)
    # folder, modes, answers right, device block, slowdown
    devices = (
        ("pi5-a", "none,mask", 3, pi_device(identity("pi5-a", "aaaa", "5555", PI5)), 1.0),
        ("pi5-b", "none,mask", 2, pi_device(identity("pi5-b", "bbbb", "5555", PI5)), 1.25),
        ("laptop", "none", 1, {**LAPTOP_DEVICE, "identity": laptop}, 0.5),
    )
    folders = [
        make_run(
            base / folder / "run",
            modes=modes,
            outputs=answers(right),
            device=device,
            model_label=model_label,
            slowdown=slowdown,
        )
        for folder, modes, right, device, slowdown in devices
    ]
    return Fleet(*folders)
