"""`identity_of`: the stored identity of a device block, or for a run written before format
2.8 (no identity) one derived from its facts, with the same model and config ids a new run
of the same machine gets and an unknown unit."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from edgebench.runfolder.identity import identity_of
from edgebench.runfolder.read import read_manifest
from edgebench.system.device import device_info
from edgebench.system.identity import ENV_NAME
from edgebench.system.records import Device
from tests.helpers.device_trees import pi5_tree
from tests.helpers.run_fake import RunFake


@pytest.fixture(autouse=True)
def _no_name_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_NAME, raising=False)


def old_format(run_dir: Path) -> None:
    """Make the run's manifest one of format 2.7: no `device.identity`."""
    path = run_dir / "manifest.json"
    data = json.loads(path.read_text())
    data["schema_version"] = "2.7"
    del data["device"]["identity"]
    path.write_text(json.dumps(data))


def test_a_stored_identity_is_returned_as_it_is(run_fake: RunFake) -> None:
    device = read_manifest(run_fake().run_dir).device
    assert device.identity is not None
    assert identity_of(device) is device.identity


def test_a_manifest_of_format_2_7_gets_a_fallback_identity(run_fake: RunFake) -> None:
    run_dir = run_fake().run_dir
    stored = read_manifest(run_dir).device.identity
    old_format(run_dir)
    device = read_manifest(run_dir).device
    assert device.identity is None
    derived = identity_of(device)
    assert re.fullmatch(r"u-unknown-[0-9a-f]{12}", derived.unit_id)
    assert derived.unit_sources == [] and derived.hostname is None
    # the kind of device and its software are the same facts a new run hashes
    assert (derived.model_id, derived.config_id) == (stored.model_id, stored.config_id)
    assert derived.name == derived.model_label == stored.model_label
    assert re.fullmatch(r"d[0-9a-f]{12}", derived.fingerprint)
    assert identity_of(read_manifest(run_dir).device) == derived  # the same every time


def test_old_runs_of_two_kinds_of_device_are_told_apart(tmp_path: Path) -> None:
    pi = replace(device_info(4, root=pi5_tree(tmp_path)), identity=None)
    other = Device.from_json({**pi.to_json(), "ram_total_mb": 3_900})
    assert identity_of(pi).unit_id != identity_of(other).unit_id
    assert identity_of(pi).model_id != identity_of(other).model_id
    assert identity_of(other).model_label == "Raspberry Pi 5 Model B Rev 1.0 · 4 GB"


def test_an_old_llama_run_gets_the_config_of_a_new_run_on_the_same_install(
    tmp_path: Path,
) -> None:
    """A 2.7 run recorded the llama.cpp it loaded in `runtime`; a new run records the one
    installed (`llama_cpp_build`) before loading anything: the same build, the same config.
    Another build, or an ONNX run's absent one, is another config."""
    cmake = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON"
    facts = device_info(4, root=pi5_tree(tmp_path)).to_json()
    new = Device.from_json({**facts, "llama_cpp_build": f"0.3.36 native {cmake}"})
    runtime = {"name": "llama.cpp", "llama_cpp_python": "0.3.36", "edgebench_build": "native"}
    old = {key: value for key, value in facts.items() if key != "identity"}
    same = Device.from_json({**old, "runtime": {**runtime, "cmake_args": cmake}})
    other = Device.from_json({**old, "runtime": {**runtime, "cmake_args": "-DGGML_NATIVE=ON"}})
    expected = identity_of(
        Device.from_json({**new.to_json(), "identity": None})
    ).config_id  # derived from the new run's own facts
    assert identity_of(same).config_id == expected
    assert identity_of(other).config_id != expected
