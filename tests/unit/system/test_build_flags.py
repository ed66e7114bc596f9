"""The llama.cpp flags install.sh chooses from /proc/cpuinfo (edgebench/system/build_flags.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.system import build_flags
from edgebench.system.build_flags import choose
from tests.helpers.cpuinfo import PI4, PI5, options

# An ARMv8.6 core with int8 matrix multiply (e.g. a Cortex-A78-class phone SoC or Graviton3).
I8MM = "processor\t: 0\nFeatures\t: fp asimd asimdhp asimddp i8mm bf16 sve cpuid\n"

X86_CORE = """processor\t: {n}
vendor_id\t: {vendor}
cpu family\t: 25
model\t\t: 17
model name\t: {model}
flags\t\t: {flags}
bugs\t\t: sysret_ss_attrs spectre_v1 spectre_v2
"""
BASE = (
    "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr"
    " sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl"
    " pni pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand"
    " hypervisor lahf_lm abm sse4a bmi1 avx2 smep bmi2 erms invpcid"
)
AVX512 = (
    " avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb avx512cd sha_ni avx512bw"
    " avx512vl xsaveopt xsavec xgetbv1 xsaves avx512_bf16 avx512vbmi umip pku ospke"
    " avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq"
)
AMX = " amx_bf16 avx512_fp16 amx_tile amx_int8 avx_vnni"


def x86(flags: str, model: str = "AMD EPYC", vendor: str = "AuthenticAMD") -> str:
    return "\n".join(X86_CORE.format(n=n, model=model, vendor=vendor, flags=flags) for n in (0, 1))


def test_raspberry_pi_5_gets_dotprod_and_fp16() -> None:
    assert choose(PI5, "aarch64") == (
        "-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod+fp16"
    )


def test_raspberry_pi_4_gets_plain_armv8() -> None:
    assert choose(PI4, "aarch64") == "-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8-a"


def test_int8_matrix_multiply_needs_armv8_6() -> None:
    assert options(choose(I8MM, "arm64"))["GGML_CPU_ARM_ARCH"] == "armv8.6-a+dotprod+fp16+i8mm"


def test_x86_with_avx512_turns_the_avx512_kernels_on() -> None:
    chosen = options(choose(x86(BASE + AVX512), "x86_64"))
    assert chosen["GGML_NATIVE"] == "OFF"
    for name in ("GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2", "GGML_AVX512"):
        assert chosen[name] == "ON", name
    for name in ("GGML_AVX512_VNNI", "GGML_AVX512_BF16", "GGML_AVX512_VBMI"):
        assert chosen[name] == "ON", name
    assert chosen["GGML_AVX_VNNI"] == "OFF"


def test_x86_without_avx512_sets_every_avx512_option_off() -> None:
    chosen = options(choose(x86(BASE, "Intel(R) Core(TM) i5-8250U", "GenuineIntel"), "x86_64"))
    assert chosen["GGML_AVX2"] == "ON"
    assert {chosen[n] for n in chosen if n.startswith("GGML_AVX512")} == {"OFF"}


def test_avx512_f_alone_is_not_enough_for_ggml_avx512() -> None:
    # ggml's GGML_AVX512 compiles with -mavx512f/cd/vl/dq/bw: all five must be enabled.
    chosen = options(choose(x86(BASE + " avx512f avx512cd"), "x86_64"))
    assert chosen["GGML_AVX512"] == "OFF"


def test_amx_is_never_chosen_even_when_advertised() -> None:
    chosen = options(choose(x86(BASE + AVX512 + AMX, "Intel(R) Xeon(R) Platinum"), "x86_64"))
    assert {chosen[n] for n in ("GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")} == {"OFF"}
    assert chosen["GGML_AVX_VNNI"] == "ON"


def test_an_old_x86_cpu_gets_no_instruction_it_lacks() -> None:
    # llama.cpp's own defaults with GGML_NATIVE=OFF turn AVX2 on: the chooser says OFF.
    sandy_bridge = "fpu sse sse2 pni ssse3 sse4_1 sse4_2 popcnt xsave avx"
    chosen = options(choose(x86(sandy_bridge), "x86_64"))
    assert chosen["GGML_AVX"] == "ON"
    assert all(chosen[n] == "OFF" for n in ("GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2"))


def test_unknown_cpus_and_missing_cpuinfo_get_the_portable_build() -> None:
    assert choose("", "x86_64") == build_flags.PORTABLE_X86
    assert choose("", "riscv64") == "-DGGML_NATIVE=OFF"


def test_the_portable_build_is_the_old_avx2_build() -> None:
    assert build_flags.portable("x86_64") == (
        "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
    )
    assert build_flags.portable("aarch64") == "-DGGML_NATIVE=OFF"


@pytest.fixture()
def package(tmp_path: Path) -> Path:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libggml-cpu.so").write_bytes(b"avx512 kernels")
    return tmp_path


def test_the_stamp_records_the_flags_of_this_library(package: Path) -> None:
    build_flags.write_stamp(package, "-DGGML_NATIVE=OFF -DGGML_AVX512=ON", "native")
    assert build_flags.read_stamp(package) == {
        "build": "native",
        "cmake_args": "-DGGML_NATIVE=OFF -DGGML_AVX512=ON",
    }


def test_a_library_rebuilt_by_other_means_is_not_misreported(package: Path) -> None:
    build_flags.write_stamp(package, "-DGGML_NATIVE=OFF -DGGML_AVX512=ON", "native")
    (package / "lib" / "libggml-cpu.so").write_bytes(b"built by pip with other flags")
    assert build_flags.read_stamp(package) is None


def test_no_stamp_or_a_broken_one_reads_as_none(package: Path) -> None:
    assert build_flags.read_stamp(package) is None
    (package / build_flags.STAMP).write_text("[not an object")
    assert build_flags.read_stamp(package) is None
