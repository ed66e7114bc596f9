"""Every manifest's and bench record's device block holds the llama.cpp build's CPU
features (its system info, parsed) and what this CPU has beyond them, once a model has
loaded; a record written before these fields reads with them unknown."""

from __future__ import annotations

import json
from pathlib import Path

from edgebench.backends.fake import FakeBackend
from edgebench.bench.execute import BenchSettings, execute_bench
from edgebench.system.build_features import build_facts
from edgebench.system.records import Device
from tests.helpers.bench_fakes import bench_model, built_for
from tests.helpers.device_trees import pi5_tree
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake

NEW_PI = "CPU : NEON = 1 | ARM_FMA = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
NEW_X86 = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "


def test_a_runs_manifest_names_the_builds_features(run_fake: RunFake) -> None:
    result = run_fake(FakeBackend([RIGHT, RIGHT], system_info=NEW_X86), n=2)
    device = json.loads((result.run_dir / "manifest.json").read_text())["device"]
    assert device["runtime"]["system_info"] == NEW_X86
    assert device["build_features"] == ["SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"]
    # this machine's CPU flags against that build: whatever it has beyond AVX2
    expected = build_facts(device["cpu_flags"], {"system_info": NEW_X86})
    assert device["build_missing"] == expected["build_missing"]
    assert device["build_hint"] == expected["build_hint"]


def test_a_bench_record_on_a_pi5_names_dotprod_and_fp16_missing(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    settings = BenchSettings(prompt_tokens=(0,), gen_tokens=(8,), repetitions=1, out=out)
    worker = built_for(NEW_PI)
    execute_bench(settings, [bench_model()], worker_factory=worker, root=pi5_tree(tmp_path))
    device = json.loads(out.read_text())["device"]
    assert device["thermal_zones"] == {"thermal_zone0 (cpu-thermal)": 51.35}
    assert device["build_missing"] == ["dotprod", "fp16"]
    assert "-DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod+fp16" in device["build_hint"]


def test_a_device_block_of_schema_2_5_reads() -> None:
    device = Device.from_json({"cpu_model": "Cortex-A76", "governor": "ondemand"})
    assert device.build_features is None and device.build_missing is None
    assert device.build_hint is None and device.thermal_zones is None
