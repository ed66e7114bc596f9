"""Every manifest and bench record carries the device's identity: named as asked, its
config read again once llama.cpp's build features are known, kept on --resume; a resume
on another device is refused naming both fingerprints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgebench.backends.fake import FakeBackend
from edgebench.bench.execute import BenchSettings, execute_bench
from edgebench.errors import UserError
from edgebench.system.identity import ENV_NAME, config_of
from tests.helpers.bench_fakes import bench_model, built_for
from tests.helpers.device_trees import pi5_tree
from tests.helpers.fakes import RIGHT
from tests.helpers.run_fake import RunFake
from tests.helpers.run_folder import manifest_of

NEW_X86 = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
NEW_PI = "CPU : NEON = 1 | ARM_FMA = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "


@pytest.fixture(autouse=True)
def _no_name_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_NAME, raising=False)


def _rewrite(run_dir: Path, **identity: str) -> None:
    path = run_dir / "manifest.json"
    data = json.loads(path.read_text())
    data["device"]["identity"].update(identity)
    path.write_text(json.dumps(data))


def test_a_run_records_its_device_by_name_and_fingerprint(run_fake: RunFake) -> None:
    result = run_fake(FakeBackend([RIGHT] * 2, system_info=NEW_X86), n=2, device_name="lab-1")
    device = manifest_of(result.run_dir)["device"]
    identity = device["identity"]
    assert identity["name"] == "lab-1"
    assert identity["unit_sources"]  # this machine has at least a machine-id or hostname
    # the config covers the build features the first load reported
    assert device["build_features"] == ["SSE3", "SSSE3", "AVX", "AVX2", "F16C", "FMA", "BMI2"]
    assert identity["config_id"] == config_of(device)


def test_the_environment_names_the_device_when_the_option_does_not(
    run_fake: RunFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_NAME, "from-env")
    result = run_fake([RIGHT])
    assert manifest_of(result.run_dir)["device"]["identity"]["name"] == "from-env"


def test_a_resume_keeps_the_identity_the_run_started_with(run_fake: RunFake) -> None:
    run_dir = run_fake([RIGHT] * 3, device_name="lab-1").run_dir
    before = manifest_of(run_dir)["device"]["identity"]
    run_fake([RIGHT] * 3, resume=True, device_name="renamed")
    after = manifest_of(run_dir)
    assert after["device"]["identity"] == before
    assert len(after["resumes"]) == 1


def test_a_resume_on_another_device_is_refused_naming_both(run_fake: RunFake) -> None:
    run_dir = run_fake([RIGHT] * 3, device_name="here").run_dir
    now = manifest_of(run_dir)["device"]["identity"]
    # as if the run had started on another board of the same model
    _rewrite(run_dir, name="pi5-b", unit_id="u0123456789ab", fingerprint="dfedcba987654")
    with pytest.raises(UserError) as info:
        run_fake([RIGHT] * 3, resume=True, device_name="here")
    message = str(info.value)
    assert message.startswith(f"cannot resume {run_dir}: it was started on another device")
    assert f"run: pi5-b · dfedcba987654 · {now['model_label']}" in message
    assert "now: here · d" in message and message.endswith("resume it on pi5-b")
    assert manifest_of(run_dir)["resumes"] == []


def test_a_resume_of_a_run_from_before_identities_compares_the_cpu(run_fake: RunFake) -> None:
    run_dir = run_fake([RIGHT] * 3).run_dir
    path = run_dir / "manifest.json"
    data = json.loads(path.read_text())
    data["schema_version"] = "2.7"
    del data["device"]["identity"]
    path.write_text(json.dumps(data))
    run_fake([RIGHT] * 3, resume=True)  # the same machine: resumed
    assert manifest_of(run_dir)["device"]["identity"] is None  # none is made up
    data = json.loads(path.read_text())
    data["device"]["cpu_model"] = "Cortex-A76"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="device cpu_model differs"):
        run_fake([RIGHT] * 3, resume=True)


def test_a_bench_record_carries_the_identity_with_its_build(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    settings = BenchSettings(prompt_tokens=(0,), gen_tokens=(8,), repetitions=1, out=out)
    worker, root = built_for(NEW_PI), pi5_tree(tmp_path)
    execute_bench(settings, [bench_model()], worker_factory=worker, root=root, device_name="p5")
    device = json.loads(out.read_text())["device"]
    identity = device["identity"]
    assert identity["name"] == "p5" and identity["hostname"] == "raspberrypi"
    assert identity["unit_sources"] == ["soc-serial", "machine-id"]
    assert identity["model_label"] == "Raspberry Pi 5 Model B Rev 1.0 · 8 GB"
    assert device["build_features"] and identity["config_id"] == config_of(device)
