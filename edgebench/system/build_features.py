"""Which CPU features the installed llama.cpp build uses, and which this CPU has beyond them.

llama.cpp reports its build in `llama_print_system_info()`, in one of two formats:

    old:  "AVX = 1 | AVX2 = 1 | AVX512 = 0 | ... | LLAMAFILE = 1 | "
          every feature listed, 0 or 1; a feature it does not list is unknown
    new:  "CPU : SSE3 = 1 | AVX2 = 1 | ... | OPENMP = 1 | REPACK = 1 | "
          per backend ("NAME : "), only the features that are on: one not listed is off

The CPU's features come from /proc/cpuinfo (x86 `flags`, ARM `Features`), which list
what the kernel enables, so a feature found there does not SIGILL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edgebench.system import build_flags

_CPU_BACKEND = "CPU"


@dataclass(frozen=True)
class BuildFeatures:
    """The CPU backend's features as llama.cpp lists them (`values`: name -> "1"/"0"/...);
    `lists_all`: the old format (a feature not listed is unknown, not off)."""

    values: dict[str, str]
    lists_all: bool

    def enabled(self) -> list[str]:
        return [name for name, value in self.values.items() if value not in ("0", "")]

    def uses(self, feature: str) -> bool | None:
        """True/False when the build says; None when its format leaves it unknown."""
        if feature in self.values:
            return self.values[feature] not in ("0", "")
        return None if self.lists_all else False


def parse_system_info(text: str) -> BuildFeatures:
    """Both formats of `llama_print_system_info()` -> the CPU backend's features."""
    values: dict[str, str] = {}
    backend: str | None = None
    for piece in text.split("|"):
        head, colon, rest = piece.partition(" : ")
        if colon:  # "CPU : SSE3 = 1": a backend's first feature
            backend, piece = head.strip(), rest
        name, equals, value = piece.partition("=")
        if equals and backend in (None, _CPU_BACKEND):
            values[name.strip()] = value.strip()
    return BuildFeatures(values=values, lists_all=backend is None)


@dataclass(frozen=True)
class Feature:
    """A CPU feature llama.cpp has kernels for: the /proc/cpuinfo flags it needs and the
    name the build reports it under (how a build turns it on: build_flags.py)."""

    flag: str  # the name a user knows (/proc/cpuinfo)
    needs: tuple[str, ...]  # every /proc/cpuinfo flag it needs
    build_name: str  # in llama_print_system_info()


# AMX is left out: VMs advertise it without allowing it (SIGILL); the flag chooser of
# the install decides that with what the kernel enables (XSAVE state), not this table.
# The flags each needs are the install's own (build_flags.X86_OPTIONS), keyed by option.
_NEEDS = dict(build_flags.X86_OPTIONS)
X86_FEATURES = (
    Feature("avx", _NEEDS["GGML_AVX"], "AVX"),
    Feature("avx2", _NEEDS["GGML_AVX2"], "AVX2"),
    Feature("fma", _NEEDS["GGML_FMA"], "FMA"),
    Feature("f16c", _NEEDS["GGML_F16C"], "F16C"),
    Feature("bmi2", _NEEDS["GGML_BMI2"], "BMI2"),
    Feature("avx_vnni", _NEEDS["GGML_AVX_VNNI"], "AVX_VNNI"),
    Feature("avx512f", _NEEDS["GGML_AVX512"], "AVX512"),  # f, cd, vl, dq and bw
    Feature("avx512vbmi", _NEEDS["GGML_AVX512_VBMI"], "AVX512_VBMI"),
    Feature("avx512_vnni", _NEEDS["GGML_AVX512_VNNI"], "AVX512_VNNI"),
    Feature("avx512_bf16", _NEEDS["GGML_AVX512_BF16"], "AVX512_BF16"),
)
ARM_FEATURES = (
    Feature("dotprod", ("asimddp",), "DOTPROD"),
    Feature("fp16", ("asimdhp",), "FP16_VA"),
    Feature("i8mm", ("i8mm",), "MATMUL_INT8"),
    Feature("sve", ("sve",), "SVE"),
)


def _table(flags: set[str]) -> tuple[Feature, ...]:
    if "asimd" in flags:
        return ARM_FEATURES
    return X86_FEATURES if "sse2" in flags else ()


def cpu_features(cpu_flags: list[str]) -> list[Feature]:
    """The features of the table this CPU has (every flag each needs)."""
    flags = set(cpu_flags)
    return [f for f in _table(flags) if all(need in flags for need in f.needs)]


def suggest_cmake_args(cpu_flags: list[str]) -> str | None:
    """CMake arguments for a llama.cpp build using every feature this CPU has: what
    install.sh chooses (build_flags.py), so the hint and the install never disagree
    (None: a CPU neither x86 nor ARM as far as its flags tell)."""
    flags = set(cpu_flags)
    if "asimd" in flags:
        return f"{build_flags.PORTABLE_OTHER} -DGGML_CPU_ARM_ARCH={build_flags.arm_march(flags)}"
    if not cpu_features(cpu_flags):
        return None
    # The options install.sh turns on; its explicit OFFs guard other CPUs, not this one.
    return " ".join(
        a for a in build_flags.x86_args(flags) if not a.endswith("=OFF") or "NATIVE" in a
    )


def missing_features(cpu_flags: list[str], build: BuildFeatures) -> list[str]:
    """Features this CPU has that the build says it does not use (unknown ones are not
    counted: an old-format build that does not list DOTPROD may well use it)."""
    return [f.flag for f in cpu_features(cpu_flags) if build.uses(f.build_name) is False]


def rebuild_hint(cpu_flags: list[str], missing: list[str]) -> str | None:
    """ "this CPU has avx512f, the build does not: rebuild with ..." (None: nothing missing)."""
    args = suggest_cmake_args(cpu_flags) if missing else None
    if args is None:
        return None
    return (
        f"this CPU has {', '.join(missing)}, the llama.cpp build does not use "
        f"{'it' if len(missing) == 1 else 'them'}: rebuild with "
        f'EDGEBENCH_CMAKE_ARGS="{args}" ./install.sh'
    )


def build_facts(cpu_flags: list[str] | None, runtime: dict[str, Any] | None) -> dict[str, Any]:
    """The device block's build fields from the CPU flags and the runtime's build (its
    `system_info`); all None when either is unknown (an ONNX run, no /proc/cpuinfo)."""
    text = (runtime or {}).get("system_info")
    if not isinstance(text, str) or not text.strip():
        return dict.fromkeys(("build_features", "build_missing", "build_hint"))
    build = parse_system_info(text)
    missing = missing_features(cpu_flags, build) if cpu_flags is not None else None
    return {
        "build_features": build.enabled(),
        "build_missing": missing,
        "build_hint": rebuild_hint(cpu_flags, missing) if cpu_flags and missing else None,
    }
