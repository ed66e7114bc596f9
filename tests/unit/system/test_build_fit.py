"""A llama.cpp build made for another CPU (a Pi 5's wheel on a Pi 4) is one line and exit 1
before any model loads, naming what the CPU lacks and the rebuild; qemu-user's host
/proc/cpuinfo is read through the aux vector. Fake /proc trees, no qemu."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from edgebench.errors import RunFailure
from edgebench.system import build_fit, build_flags
from edgebench.system.build_fit import check_build_fits, missing_for, needed_features
from edgebench.system.device import SystemTree, cpu_facts
from tests.helpers.cli import assert_one_line_error, run_cli, run_one_row
from tests.helpers.device_trees import PI4_FEATURES, PI5_FEATURES, pi4_tree, pi5_tree
from tests.helpers.gguf_factory import isolate, write_gguf

PI5_BUILD = "-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod+fp16"
PI4_BUILD = "-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8-a"


def test_a_pi5_build_needs_armv8_2_dotprod_and_fp16() -> None:
    assert [name for name, _ in needed_features(PI5_BUILD)] == ["armv8.2-a", "dotprod", "fp16"]
    assert needed_features(PI4_BUILD) == []
    # -mcpu of the boards' cores reads as the -march it implies
    assert needed_features("-DCMAKE_C_FLAGS=-mcpu=cortex-a76") == needed_features(PI5_BUILD)


def test_a_pi5_build_fits_a_pi5_not_a_pi4() -> None:
    assert missing_for(PI5_BUILD, PI5_FEATURES.split()) == []
    assert missing_for(PI5_BUILD, PI4_FEATURES.split()) == ["armv8.2-a", "dotprod", "fp16"]
    assert missing_for(PI4_BUILD, PI4_FEATURES.split()) == []


def test_an_avx512_build_on_an_avx2_cpu_names_avx512() -> None:
    build = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=ON -DGGML_AMX_TILE=OFF"
    assert missing_for(build, ["sse2", "avx", "avx2", "fma", "f16c"]) == ["avx512"]


def test_a_pi5_build_on_a_pi4_tree_is_one_line_with_the_rebuild(tmp_path: Path) -> None:
    with pytest.raises(RunFailure) as caught:
        check_build_fits(pi4_tree(tmp_path), PI5_BUILD)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("the installed llama.cpp build needs armv8.2-a, dotprod, fp16, ")
    assert message.endswith(
        "rebuild it for this CPU with ./install.sh (it chooses -DGGML_NATIVE=OFF "
        "-DGGML_CPU_ARM_ARCH=armv8-a)"
    )
    check_build_fits(pi5_tree(tmp_path), PI5_BUILD)  # fits: nothing raised
    check_build_fits(pi4_tree(tmp_path / "b"), PI4_BUILD)


def test_a_build_install_sh_did_not_stamp_or_native_is_not_judged(tmp_path: Path) -> None:
    check_build_fits(pi4_tree(tmp_path), "")
    check_build_fits(pi4_tree(tmp_path / "b"), "-DGGML_NATIVE=ON")


def _auxv(hwcap: int, hwcap2: int = 0) -> bytes:
    pairs = [(6, 4096), (16, hwcap), (26, hwcap2), (0, 0)]
    return b"".join(struct.pack("<QQ", key, value) for key, value in pairs)


def _bits(names: str, table: tuple[str, ...]) -> int:
    return sum(1 << table.index(name) for name in names.split())


def test_the_aux_vector_reads_as_the_kernels_features_line() -> None:
    auxv = _auxv(_bits(PI5_FEATURES, build_flags.ARM_HWCAP), _bits("i8mm", build_flags.ARM_HWCAP2))
    assert build_flags.auxv_features(auxv) == [*PI5_FEATURES.split(), "i8mm"]


def test_under_qemu_user_the_aux_vector_replaces_the_hosts_cpuinfo(tmp_path: Path) -> None:
    # qemu-user 7.2 shows the x86 host's /proc/cpuinfo to an arm64 process
    host = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx2\n"
    auxv = _auxv(_bits(PI4_FEATURES, build_flags.ARM_HWCAP))
    assert build_flags.arm_cpuinfo(host, "aarch64", auxv) == f"Features\t: {PI4_FEATURES}\n"
    assert build_flags.arm_cpuinfo(host, "x86_64", auxv) == host
    assert build_flags.choose(build_flags.arm_cpuinfo(host, "aarch64", auxv), "aarch64") == (
        PI4_BUILD
    )
    root = tmp_path / "qemu"
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/cpuinfo").write_text(host)
    (root / "proc/self/auxv").write_bytes(auxv)
    facts = cpu_facts(SystemTree(root), "aarch64")
    assert facts["cpu_flags"] == PI4_FEATURES.split() and facts["cpu_model"] is None


@pytest.fixture
def pi5_build_on_a_pi4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine read as a Pi 4 whose installed build install.sh made on a Pi 5."""
    isolate(monkeypatch, tmp_path)
    monkeypatch.setattr(build_fit, "ROOT", pi4_tree(tmp_path))
    monkeypatch.setattr(build_fit, "installed_cmake_args", lambda: PI5_BUILD)


@pytest.mark.usefixtures("pi5_build_on_a_pi4")
def test_doctor_says_it_in_one_line_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(capsys, "doctor", "--no-probe")
    assert_one_line_error(code, err, "dotprod, fp16", "./install.sh", exit_code=1)


@pytest.mark.usefixtures("pi5_build_on_a_pi4")
def test_run_says_it_before_any_worker_or_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers_started: list[object]
) -> None:
    model = write_gguf(tmp_path / "m.gguf")
    code, err, out = run_one_row(capsys, tmp_path, model, "p")
    assert_one_line_error(code, err, "needs armv8.2-a, dotprod, fp16", exit_code=1)
    assert workers_started == [] and not out.exists()


@pytest.mark.usefixtures("pi5_build_on_a_pi4")
def test_bench_says_it_before_any_worker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers_started: list[object]
) -> None:
    model = write_gguf(tmp_path / "m.gguf")
    out = tmp_path / "bench.json"
    code, err = run_cli(capsys, "bench", "--model", str(model), "--out", str(out))
    assert_one_line_error(code, err, "dotprod, fp16", "./install.sh", exit_code=1)
    assert workers_started == [] and not out.exists()
