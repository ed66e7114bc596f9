"""llama.cpp's system info in both formats, and what a CPU has that the build does not use."""

from __future__ import annotations

from pathlib import Path

from edgebench.system.build_features import (
    build_facts,
    missing_features,
    parse_system_info,
    suggest_cmake_args,
)
from edgebench.system.device import device_info
from tests.helpers.device_trees import laptop_tree, pi5_tree

# llama.cpp before the backend registry: every feature, 0 or 1 (no DOTPROD key)
OLD_X86 = (
    "AVX = 1 | AVX_VNNI = 0 | AVX2 = 1 | AVX512 = 0 | AVX512_VBMI = 0 | AVX512_VNNI = 0 | "
    "AVX512_BF16 = 0 | FMA = 1 | NEON = 0 | SVE = 0 | ARM_FMA = 0 | F16C = 1 | FP16_VA = 0 | "
    "WASM_SIMD = 0 | BLAS = 0 | SSE3 = 1 | SSSE3 = 1 | VSX = 0 | MATMUL_INT8 = 0 | "
    "LLAMAFILE = 1 | "
)
OLD_ARM = (
    "AVX = 0 | AVX2 = 0 | NEON = 1 | ARM_FMA = 1 | FP16_VA = 0 | MATMUL_INT8 = 0 | LLAMAFILE = 1 | "
)
# llama-cpp-python 0.3.36 as installed by ./install.sh on x86 (only what is on)
NEW_X86 = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)
# the default aarch64 build on a Pi 5: NEON only
NEW_PI = "CPU : NEON = 1 | ARM_FMA = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "

EPYC_FLAGS = [
    "fpu",
    "sse",
    "sse2",
    "pni",
    "ssse3",
    "fma",
    "sse4_1",
    "sse4_2",
    "avx",
    "f16c",
    "bmi1",
    "avx2",
    "bmi2",
    "avx512f",
    "avx512dq",
    "avx512cd",
    "avx512bw",
    "avx512vl",
    "avx512vbmi",
    "avx512_vnni",
    "avx512_bf16",
    "hypervisor",
]
PI4_FLAGS = ["fp", "asimd", "evtstrm", "crc32", "cpuid"]  # Cortex-A72: no dotprod, no fp16


def test_old_format_lists_every_feature_with_zeros() -> None:
    build = parse_system_info(OLD_X86)
    assert build.lists_all
    assert build.enabled() == ["AVX", "AVX2", "FMA", "F16C", "SSE3", "SSSE3", "LLAMAFILE"]
    assert build.uses("AVX512") is False
    assert build.uses("DOTPROD") is None  # not listed by the old format: unknown


def test_new_format_lists_only_what_is_on() -> None:
    build = parse_system_info(NEW_X86)
    assert not build.lists_all
    assert build.enabled()[:4] == ["SSE3", "SSSE3", "AVX", "AVX2"]
    assert build.uses("AVX2") is True
    assert build.uses("AVX512") is False  # not listed: off


def test_only_the_cpu_backends_features_count() -> None:
    build = parse_system_info("Metal : EMBED_LIBRARY = 1 | CPU : NEON = 1 | DOTPROD = 1 | ")
    assert build.enabled() == ["NEON", "DOTPROD"]


def test_laptop_old_build_misses_avx_vnni(tmp_path: Path) -> None:
    device = device_info(2, root=laptop_tree(tmp_path))
    facts = build_facts(device.cpu_flags, {"system_info": OLD_X86})
    assert facts["build_missing"] == ["avx_vnni"]
    assert facts["build_hint"] == (
        "this CPU has avx_vnni, the llama.cpp build does not use it: rebuild with "
        'EDGEBENCH_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON '
        '-DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=ON" ./install.sh'
    )


def test_avx512_cpu_with_the_avx2_build() -> None:
    facts = build_facts(EPYC_FLAGS, {"system_info": NEW_X86})
    assert facts["build_missing"] == ["avx512f", "avx512vbmi", "avx512_vnni", "avx512_bf16"]
    assert "-DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON" in facts["build_hint"]
    assert facts["build_hint"].startswith("this CPU has avx512f, avx512vbmi")


def test_avx512_needs_every_flag_ggml_compiles_it_with() -> None:
    partial = [f for f in EPYC_FLAGS if f != "avx512vl"]
    assert "avx512f" not in missing_features(partial, parse_system_info(NEW_X86))


def test_pi5_default_build_misses_dotprod_and_fp16(tmp_path: Path) -> None:
    device = device_info(4, root=pi5_tree(tmp_path), runner=lambda argv: None)
    facts = build_facts(device.cpu_flags, {"system_info": NEW_PI})
    assert facts["build_features"] == ["NEON", "ARM_FMA", "LLAMAFILE", "OPENMP", "REPACK"]
    assert facts["build_missing"] == ["dotprod", "fp16"]
    assert facts["build_hint"] == (
        "this CPU has dotprod, fp16, the llama.cpp build does not use them: rebuild with "
        'EDGEBENCH_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod+fp16" '
        "./install.sh"
    )


def test_old_arm_build_reports_fp16_but_not_dotprod(tmp_path: Path) -> None:
    device = device_info(4, root=pi5_tree(tmp_path), runner=lambda argv: None)
    facts = build_facts(device.cpu_flags, {"system_info": OLD_ARM})
    assert facts["build_missing"] == ["fp16"]  # DOTPROD unknown in the old format


def test_a_build_with_everything_has_no_hint(tmp_path: Path) -> None:
    device = device_info(4, root=pi5_tree(tmp_path), runner=lambda argv: None)
    facts = build_facts(device.cpu_flags, {"system_info": NEW_PI + "DOTPROD = 1 | FP16_VA = 1"})
    assert facts["build_missing"] == [] and facts["build_hint"] is None


def test_pi4_has_nothing_to_add() -> None:
    assert missing_features(PI4_FLAGS, parse_system_info(NEW_PI)) == []
    assert suggest_cmake_args(PI4_FLAGS) == "-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8-a"


def test_no_system_info_no_build_facts() -> None:
    """An ONNX runtime, or a build that could not be asked: unknown, never guessed."""
    empty = dict.fromkeys(("build_features", "build_missing", "build_hint"))
    assert build_facts(EPYC_FLAGS, {"name": "onnxruntime"}) == empty
    assert build_facts(EPYC_FLAGS, None) == empty
    assert build_facts(None, {"system_info": NEW_X86})["build_missing"] is None


def test_unknown_cpu_gets_no_suggestion() -> None:
    assert suggest_cmake_args(["rv64", "zba"]) is None
