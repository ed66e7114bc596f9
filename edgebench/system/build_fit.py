"""Does the installed llama.cpp build fit this CPU? Read from the flags it was built with.

A build made for another CPU (a Raspberry Pi 5's armv8.2-a+dotprod+fp16 wheel or SD card
moved to a Pi 4's Cortex-A72, an AVX-512 wheel on a laptop) loads, then dies with SIGILL
("Illegal instruction") in every worker that decodes. Its CMake flags (install.sh's stamp,
build_flags.py) say which instructions it needs; /proc/cpuinfo says which this CPU has.
llama.cpp's own system info cannot tell: on ARM it lists a feature only when the CPU has
it too. A build install.sh did not stamp, or one with GGML_NATIVE=ON, is not judged.
"""

from __future__ import annotations

import platform
import re
from pathlib import Path

from edgebench.errors import RunFailure
from edgebench.system import build_flags
from edgebench.system.device import ROOT, SystemTree, cpu_facts

# -march extension -> the /proc/cpuinfo Features it needs.
ARM_EXTENSION_NEEDS: dict[str, tuple[str, ...]] = {
    "dotprod": ("asimddp",),
    "fp16": ("fphp", "asimdhp"),
    "i8mm": ("i8mm",),
    "bf16": ("bf16",),
    "sve": ("sve",),
    "sve2": ("sve2",),
    "crc": ("crc32",),
}
# Every base from armv8.1-a on lets the compiler emit LSE atomics and RDM instructions
# (a Cortex-A72 is armv8.0-a: it has neither).
_ARMV81_NEEDS = ("atomics", "asimdrdm")
# -mcpu of the boards' cores -> what it implies for llama.cpp, as a -march.
MCPU_ARCH = {
    "cortex-a53": "armv8-a+crc",
    "cortex-a72": "armv8-a+crc",
    "cortex-a55": "armv8.2-a+dotprod+fp16",
    "cortex-a76": "armv8.2-a+dotprod+fp16",
}
_ARCH = re.compile(r"-DGGML_CPU_ARM_ARCH=(\S+)")
_MCPU = re.compile(r"-mcpu=([\w.-]+)")
_ON = re.compile(r"-D(GGML_\w+)=(?:ON|1|TRUE)\b", re.IGNORECASE)


def arm_needs(march: str) -> list[tuple[str, tuple[str, ...]]]:
    """(what a user knows it by, the Features it needs) for a -march like armv8.2-a+fp16."""
    base, *extensions = march.lower().split("+")
    needs: list[tuple[str, tuple[str, ...]]] = []
    version = re.fullmatch(r"armv8\.(\d+)-a", base)
    if version and int(version.group(1)) >= 1:
        needs.append((base, _ARMV81_NEEDS))
    needs += [(e, ARM_EXTENSION_NEEDS[e]) for e in extensions if e in ARM_EXTENSION_NEEDS]
    return needs


def needed_features(cmake_args: str) -> list[tuple[str, tuple[str, ...]]]:
    """The instruction sets a build with these CMake flags uses beyond its base ISA."""
    march = _ARCH.search(cmake_args)
    mcpu = _MCPU.search(cmake_args)
    if march or mcpu:
        if march:
            return arm_needs(march.group(1))
        assert mcpu is not None
        return arm_needs(MCPU_ARCH.get(mcpu.group(1).lower(), ""))
    options = dict(build_flags.X86_OPTIONS)
    on = [m.group(1).upper() for m in _ON.finditer(cmake_args)]
    # named as the option is (GGML_AVX512_VBMI: avx512_vbmi)
    return [(o.removeprefix("GGML_").lower(), options[o]) for o in on if o in options]


def missing_for(cmake_args: str, cpu_flags: list[str]) -> list[str]:
    """What the build needs that these /proc/cpuinfo flags lack (names a user knows)."""
    have = set(cpu_flags)
    return [label for label, needs in needed_features(cmake_args) if not have.issuperset(needs)]


def misfit(cmake_args: str | None, cpu_flags: list[str] | None, machine: str) -> str | None:
    """One line when the build needs what this CPU lacks, naming it and the rebuild."""
    if not cmake_args or not cpu_flags or "GGML_NATIVE=ON" in cmake_args.upper():
        return None
    missing = missing_for(cmake_args, cpu_flags)
    if not missing:
        return None
    flags = build_flags.choose(f"flags: {' '.join(cpu_flags)}", machine)
    return (
        f"the installed llama.cpp build needs {', '.join(missing)}, which this CPU does not "
        f"have (every example would die with SIGILL): rebuild it for this CPU with "
        f"./install.sh (it chooses {flags})"
    )


def installed_cmake_args() -> str | None:
    """The flags install.sh built the installed llama.cpp with (None: not stamped)."""
    package = build_flags.installed_package()
    stamp = build_flags.read_stamp(package) if package is not None else None
    return stamp["cmake_args"] if stamp else None


def check_build_fits(root: Path | None = None, cmake_args: str | None = None) -> None:
    """RunFailure (exit 1, one line) before any model loads when the build does not fit.
    `root`: the /proc and /sys tree (None: this machine's); `cmake_args`: the build's
    flags (None: the installed build's stamp)."""
    root = root or ROOT
    real = root == Path("/")
    machine = platform.machine() if real else ""
    facts = cpu_facts(SystemTree(root), machine or None)
    machine = machine or SystemTree(root).text("proc/sys/kernel/arch") or ""
    args = cmake_args if cmake_args is not None else installed_cmake_args()
    message = misfit(args, facts["cpu_flags"], machine)
    if message:
        raise RunFailure(message)
