"""`edgebench doctor` on fake /proc and /sys trees, with a fake llama.cpp build and
in-process speed workers on the fake backend: what it prints, its JSON, and the probe
skipped, absent (model not cached), measured and crashed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from edgebench.doctor import diagnose as doctor
from edgebench.system.device import device_info
from edgebench.system.identity import ENV_NAME, config_of
from tests.helpers.bench_fakes import SpeedWorkers
from tests.helpers.cli import cli_error, stdout_of
from tests.helpers.device_trees import laptop_tree, pi5_tree
from tests.helpers.gguf_factory import isolate, write_gguf

NEW_PI = "CPU : NEON = 1 | ARM_FMA = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
BUILD = {
    "name": "llama.cpp",
    "llama_cpp_python": "0.3.36",
    "ggml_version": "0.25.3",
    "ggml_commit": "0c1e570",
    "system_info": NEW_PI,
}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_network: list[str]) -> None:
    isolate(monkeypatch, tmp_path)


def on_device(
    monkeypatch: pytest.MonkeyPatch,
    tree: Path,
    build: tuple[dict[str, Any] | None, str | None] = (BUILD, None),
    throttled: str | None = None,
) -> None:
    """doctor reads the fake tree `tree` (vcgencmd answers `throttled`) and this build."""

    def fake_device(threads: int, root: Path) -> dict[str, Any]:  # `root`: the real one
        return device_info(threads, root=tree, runner=lambda argv: throttled)

    monkeypatch.setattr(doctor, "device_info", fake_device)
    monkeypatch.setattr(doctor, "llama_build", lambda: build)
    monkeypatch.setattr(doctor, "runtime_facts", list)  # tests/unit/doctor: their sections


def test_pi5_text_names_features_build_hint_governor_and_thermal_state(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    on_device(monkeypatch, pi5_tree(tmp_path))
    monkeypatch.delenv(ENV_NAME, raising=False)
    out = stdout_of(capsys, "doctor", "--no-probe", "--threads", "4")
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert [line for line in out.splitlines() if not line.startswith(" ")] == [
        "device",
        "llama.cpp build",
        "speed probe",
    ]
    assert "board Raspberry Pi 5 Model B Rev 1.0" in lines
    # its identity as a run on this board records it, the build's features included
    device = json.loads(stdout_of(capsys, "doctor", "--no-probe", "--json"))["device"]
    identity = device["identity"]
    name = f"name raspberrypi · {identity['fingerprint']} (unit from soc-serial, machine-id)"
    assert name in lines
    assert device["build_features"] and identity["config_id"] == config_of(device)
    assert "CPU Cortex-A76 (ARM), 4 logical / 4 physical cores" in lines
    assert "CPU features asimd asimdhp asimddp" in lines
    assert "memory 7475 MB available of 8052 MB, swap 200 MB" in lines
    assert "governor ondemand" in lines
    assert "clock now 1500 MHz, max 2400 MHz" in lines
    assert "temperature 51.4 °C (thermal_zone0 (cpu-thermal))" in lines
    assert "thermal zones thermal_zone0 (cpu-thermal) 51.4 °C" in lines
    # /sys's get_throttled 0x50005: under-voltage and throttled, now and since boot
    assert (
        "throttling now: under-voltage, throttled; since boot: under-voltage, throttled "
        "(0x50005)" in lines
    )
    assert "version llama-cpp-python 0.3.36, ggml 0.25.3 (0c1e570)" in lines
    assert "uses NEON ARM_FMA LLAMAFILE OPENMP REPACK" in lines
    assert "missing dotprod, fp16" in lines
    assert (
        "hint this CPU has dotprod, fp16, the llama.cpp build does not use them: rebuild with "
        'EDGEBENCH_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod+fp16" '
        "./install.sh" in lines
    )
    assert "skipped speed probe skipped (--no-probe)" in lines


def test_vcgencmd_throttling_decoded(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    on_device(monkeypatch, pi5_tree(tmp_path), throttled="throttled=0x20002")
    out = stdout_of(capsys, "doctor", "--no-probe")
    assert "now: arm frequency capped; since boot: arm frequency capped (0x20002)" in out


def test_json_has_the_device_block_build_facts_and_probe(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    on_device(monkeypatch, laptop_tree(tmp_path))
    report = json.loads(stdout_of(capsys, "doctor", "--no-probe", "--json"))
    device = report["device"]
    assert device["governor"] == "powersave" and device["cpu_temp_c"] == 62.0
    assert device["thermal_zones"] == {
        "thermal_zone0 (acpitz)": 45.0,
        "thermal_zone5 (x86_pkg_temp)": 62.0,
    }
    assert device["throttling"] is None  # not a Raspberry Pi
    assert device["runtime"] == BUILD
    assert device["build_features"] == ["NEON", "ARM_FMA", "LLAMAFILE", "OPENMP", "REPACK"]
    # an x86 CPU against an ARM build's list: every x86 feature it has is missing
    assert device["build_missing"][:3] == ["avx", "avx2", "fma"]
    assert device["build_hint"].endswith('-DGGML_AVX_VNNI=ON" ./install.sh')
    assert report["probe"] == {
        "status": "skipped",
        "message": "speed probe skipped (--no-probe)",
        "model": None,
        "threads": None,
        "load_s": None,
        "result": None,
    }
    assert report["build_error"] is None


def test_a_build_that_cannot_be_read_is_said(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    on_device(monkeypatch, pi5_tree(tmp_path), build=(None, "llama-cpp-python is not installed"))
    out = stdout_of(capsys, "doctor", "--no-probe")
    assert "error  llama-cpp-python is not installed" in out
    report = json.loads(stdout_of(capsys, "doctor", "--no-probe", "--json"))
    assert report["device"]["build_missing"] is None and report["device"]["build_hint"] is None


def test_probe_without_the_model_in_the_cache_says_how_to_pull_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    on_device(monkeypatch, pi5_tree(tmp_path))
    out = stdout_of(capsys, "doctor")
    assert (
        "unavailable  no speed probe: model 'smollm2-135m-instruct' is not in the cache: "
        "run `edgebench models pull smollm2-135m-instruct`" in out
    )


def test_a_model_that_does_not_exist_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    on_device(monkeypatch, pi5_tree(tmp_path))
    assert "no-such-model" in cli_error(capsys, "doctor", "-m", "no-such-model")
    assert "model file not found" in cli_error(capsys, "doctor", "-m", str(tmp_path / "x.gguf"))


def test_probe_measures_tg64_in_a_worker(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    on_device(monkeypatch, pi5_tree(tmp_path))
    workers = SpeedWorkers()
    monkeypatch.setattr(
        doctor, "start_worker", lambda model, mode, *, threads, guard: workers(model, threads)
    )
    monkeypatch.setattr(doctor, "_MAX_REPETITIONS", 4)  # the fake is instant: cap the loop
    model = str(write_gguf(tmp_path / "tiny.gguf"))
    report = json.loads(stdout_of(capsys, "doctor", "-m", model, "-t", "2", "--json"))
    probe = report["probe"]
    assert (probe["status"], probe["model"], probe["threads"]) == ("measured", "tiny", 2)
    assert workers.made == [2]
    result = probe["result"]
    assert result["test"] == "tg64" and result["repetitions"] == 4
    assert result["tok_s"] == pytest.approx([100.0] * 4)  # 10 ms per token
    out = stdout_of(capsys, "doctor", "-m", model, "-t", "2")
    assert "tg64 100.0 ± 0.0 tok/s (mean ± std of 4 repetitions, 2.6 s)" in " ".join(out.split())


def test_a_crashed_probe_is_reported_not_raised(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    on_device(monkeypatch, pi5_tree(tmp_path))
    workers = SpeedWorkers(die_at=1)
    monkeypatch.setattr(
        doctor, "start_worker", lambda model, mode, *, threads, guard: workers(model, threads)
    )
    model = str(write_gguf(tmp_path / "tiny.gguf"))
    out = stdout_of(capsys, "doctor", "-m", model, "-t", "1")
    assert "failed  the model worker was killed by SIGSEGV" in out
    assert "during the speed probe" in out


def test_an_optional_runtime_is_a_section_in_text_and_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from edgebench.doctor.runtime_facts import RuntimeFacts

    on_device(monkeypatch, pi5_tree(tmp_path))
    facts = RuntimeFacts(
        "openvino",
        "OpenVINO GenAI",
        False,
        {"not installed": "pip install 'edgebench[openvino]'"},
    )
    monkeypatch.setattr(doctor, "runtime_facts", lambda: [facts])
    out = stdout_of(capsys, "doctor", "--no-probe")
    assert [line for line in out.splitlines() if not line.startswith(" ")] == [
        "device",
        "llama.cpp build",
        "OpenVINO GenAI",
        "speed probe",
    ]
    assert "  not installed  pip install 'edgebench[openvino]'" in out.splitlines()
    report = json.loads(stdout_of(capsys, "doctor", "--no-probe", "--json"))
    assert report["runtimes"] == [facts.to_dict()]
