"""The llama.cpp CMake flags for the CPU at hand, from /proc/cpuinfo and `uname -m`.

Standard library only: install.sh runs this file (`python3 edgebench/system/build_flags.py`)
before edgebench is installed; doctor and the tests import it.

x86: every instruction-set option is set explicitly ON or OFF from the kernel's `flags`
line. The kernel lists an extension there only when the OS enables its register state
(it clears the AVX-512 flags when XSAVE does not enable ZMM state), so a build from these
flags cannot die with SIGILL the way GGML_NATIVE=ON does on a VM that advertises AMX
(AMX needs a per-process arch_prctl permission that llama.cpp does not ask for): AMX is
never turned on. Explicit OFFs matter: with GGML_NATIVE=OFF llama.cpp's own defaults
switch AVX2/FMA/F16C/BMI2 ON whatever the CPU has.

ARM: `-DGGML_CPU_ARM_ARCH=<-march>` from the `Features` line, the same mapping llama.cpp
uses for its runtime-dispatched ARM variants (ggml/src/ggml-cpu/CMakeLists.txt):
dotprod (asimddp) -> armv8.2-a+dotprod, fp16 arithmetic (asimdhp) -> +fp16, int8 matrix
multiply (i8mm) -> armv8.6-a+i8mm. A Raspberry Pi 5 (Cortex-A76) gets
armv8.2-a+dotprod+fp16, a Pi 4 (Cortex-A72) plain armv8-a.

Runtime-dispatched variants (GGML_BACKEND_DL + GGML_CPU_ALL_VARIANTS) are not used:
llama-cpp-python 0.3.36 installs only the `ggml-cpu` target, not the ggml-cpu-<variant>
libraries, and llama.cpp searches for them next to the executable (python), so they would
not load; see docs/start/install.md.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import platform
import sys
from pathlib import Path
from typing import Any

# The build install.sh made before it chose per CPU: any x86-64 CPU from ~2015 on.
PORTABLE_X86 = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
)
PORTABLE_OTHER = "-DGGML_NATIVE=OFF"

# (CMake option, the /proc/cpuinfo flags it needs), in llama.cpp's order.
X86_OPTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("GGML_SSE42", ("sse4_2",)),
    ("GGML_AVX", ("avx",)),
    ("GGML_AVX2", ("avx2",)),
    ("GGML_FMA", ("fma",)),
    ("GGML_F16C", ("f16c",)),
    ("GGML_BMI2", ("bmi2",)),
    ("GGML_AVX_VNNI", ("avx_vnni",)),
    # GGML_AVX512 compiles with -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw.
    ("GGML_AVX512", ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw")),
    ("GGML_AVX512_VBMI", ("avx512f", "avx512vbmi")),
    ("GGML_AVX512_VNNI", ("avx512f", "avx512_vnni")),
    ("GGML_AVX512_BF16", ("avx512f", "avx512_bf16")),
)
# Never ON: AMX tiles need arch_prctl(ARCH_REQ_XCOMP_PERM) per process.
X86_ALWAYS_OFF = ("GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16")

# (-march extension, the /proc/cpuinfo Features it needs, the base it needs at least).
ARM_EXTENSIONS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("dotprod", ("asimddp",), "armv8.2-a"),
    ("fp16", ("asimdhp",), "armv8.2-a"),
    ("i8mm", ("i8mm",), "armv8.6-a"),
)
_ARM_BASES = ("armv8-a", "armv8.2-a", "armv8.6-a")

# AT_HWCAP and AT_HWCAP2 bits of arm64 Linux (arch/arm64/include/uapi/asm/hwcap.h), by
# the name the kernel's `Features` line gives each. Read from /proc/self/auxv where
# /proc/cpuinfo has no `Features` line: qemu-user (7.2) passes the host's cpuinfo through
# but gives the emulated CPU's (`QEMU_CPU=cortex-a72`) capabilities in the aux vector.
ARM_HWCAP = tuple(
    [
        "fp",
        "asimd",
        "evtstrm",
        "aes",
        "pmull",
        "sha1",
        "sha2",
        "crc32",
        "atomics",
        "fphp",
        "asimdhp",
        "cpuid",
        "asimdrdm",
        "jscvt",
        "fcma",
        "lrcpc",
        "dcpop",
        "sha3",
        "sm3",
        "sm4",
        "asimddp",
        "sha512",
        "sve",
        "asimdfhm",
        "dit",
        "uscat",
        "ilrcpc",
        "flagm",
        "ssbs",
        "sb",
        "paca",
        "pacg",
    ]
)
ARM_HWCAP2 = tuple(
    [
        "dcpodp",
        "sve2",
        "sveaes",
        "svepmull",
        "svebitperm",
        "svesha3",
        "svesm4",
        "flagm2",
        "frint",
        "svei8mm",
        "svef32mm",
        "svef64mm",
        "svebf16",
        "i8mm",
        "bf16",
        "dgh",
        "rng",
        "bti",
        "mte",
    ]
)
_AT_HWCAP, _AT_HWCAP2 = 16, 26

X86_MACHINES = ("x86_64", "amd64")
ARM_MACHINES = ("aarch64", "arm64")


def cpu_flags(cpuinfo: str) -> set[str]:
    """The first `flags` (x86) or `Features` (ARM) line of /proc/cpuinfo, as a set."""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() in ("flags", "features"):
            return set(value.split())
    return set()


def x86_args(flags: set[str]) -> list[str]:
    args = ["-DGGML_NATIVE=OFF"]
    for option, needs in X86_OPTIONS:
        args.append(f"-D{option}={'ON' if flags.issuperset(needs) else 'OFF'}")
    args += [f"-D{option}=OFF" for option in X86_ALWAYS_OFF]
    return args


def arm_march(flags: set[str]) -> str:
    """The -march for these ARM Features, e.g. armv8.2-a+dotprod+fp16 on a Cortex-A76."""
    base, tags = "armv8-a", ""
    for extension, needs, least in ARM_EXTENSIONS:
        if flags.issuperset(needs):
            tags += f"+{extension}"
            base = max(base, least, key=_ARM_BASES.index)
    return base + tags


def choose(cpuinfo: str, machine: str) -> str:
    """The CMAKE_ARGS for this CPU; GGML_NATIVE=OFF alone where we know no better."""
    machine = machine.lower()
    flags = cpu_flags(cpuinfo)
    if machine in X86_MACHINES and flags:
        return " ".join(x86_args(flags))
    if machine in ARM_MACHINES:
        return f"{PORTABLE_OTHER} -DGGML_CPU_ARM_ARCH={arm_march(flags)}"
    return portable(machine)


def portable(machine: str) -> str:
    """The build that runs on any CPU of this architecture install.sh supports."""
    return PORTABLE_X86 if machine.lower() in X86_MACHINES else PORTABLE_OTHER


# -- the record of what a build was made with ------------------------------------------
# install.sh writes it into the installed llama_cpp package; it holds the hash of the CPU
# library so a later `pip install llama-cpp-python` with other flags is not misreported.
STAMP = "edgebench-build.json"
BUILDS = ("native", "portable", "override")


def _cpu_library(package: Path) -> Path | None:
    found = sorted((package / "lib").glob("*ggml-cpu*"))
    return found[0] if found else None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_stamp(package: Path, cmake_args: str, build: str) -> None:
    library = _cpu_library(package)
    stamp = {
        "build": build,
        "cmake_args": cmake_args,
        "library": library.name if library else None,
        "sha256": _sha256(library) if library else None,
    }
    (package / STAMP).write_text(json.dumps(stamp, indent=1) + "\n", encoding="utf-8")


def read_stamp(package: Path) -> dict[str, Any] | None:
    """{build, cmake_args} install.sh recorded for this llama_cpp package, or None when it
    did not build it, or the library changed since (rebuilt by other means)."""
    try:
        stamp = json.loads((package / STAMP).read_text(encoding="utf-8"))
        library = _cpu_library(package)
        if library is None or stamp.get("sha256") != _sha256(library):
            return None
    except (OSError, ValueError, AttributeError):
        return None
    return {"build": stamp.get("build"), "cmake_args": stamp.get("cmake_args")}


def installed_package() -> Path | None:
    """The llama_cpp package directory this interpreter would import (without loading it)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def describe_build(version: str, build: str | None, cmake_args: str | None) -> str:
    """ "0.3.36 native -DGGML_NATIVE=OFF ...": a stamped llama.cpp build in one line."""
    return f"{version} {build} {cmake_args}"


def installed_build(package: Path | None = None) -> str | None:
    """The llama.cpp installed for this interpreter in one line, without loading it:
    "0.3.36 native -DGGML_NATIVE=OFF ..." (install.sh's stamp), else "0.3.36 library
    sha256 1a2b3c4d5e6f" (built by other means); None when llama_cpp is not installed."""
    package = package or installed_package()
    if package is None:
        return None
    try:
        version = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown version"
    stamp = read_stamp(package)
    if stamp is not None:
        return describe_build(version, stamp["build"], stamp["cmake_args"])
    library = _cpu_library(package)
    return f"{version} library sha256 {_sha256(library)[:12]}" if library else version


def read_cpuinfo(path: Path = Path("/proc/cpuinfo")) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def auxv_features(auxv: bytes) -> list[str]:
    """The `Features` an arm64 kernel would list, from a 64-bit /proc/self/auxv."""
    words = [int.from_bytes(auxv[i : i + 8], "little") for i in range(0, len(auxv) - 7, 8)]
    vector = dict(zip(words[::2], words[1::2], strict=False))
    hwcap, hwcap2 = vector.get(_AT_HWCAP, 0), vector.get(_AT_HWCAP2, 0)
    return [name for bit, name in enumerate(ARM_HWCAP) if hwcap >> bit & 1] + [
        name for bit, name in enumerate(ARM_HWCAP2) if hwcap2 >> bit & 1
    ]


def arm_cpuinfo(cpuinfo: str, machine: str, auxv: bytes | None) -> str:
    """/proc/cpuinfo as an ARM machine's: unchanged when it has a `Features` line or the
    machine is not ARM; else (qemu-user shows the host's, another CPU's) a `Features`
    line from the aux vector alone, or the text unchanged when there is none."""
    if machine.lower() not in ARM_MACHINES or "asimd" in cpu_flags(cpuinfo):
        return cpuinfo
    features = auxv_features(auxv) if auxv else []
    return f"Features\t: {' '.join(features)}\n" if features else cpuinfo


def read_auxv(path: Path = Path("/proc/self/auxv")) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def this_machine_cpuinfo() -> str:
    """/proc/cpuinfo (on ARM with the aux vector's Features where it lacks them), empty
    where there is none (then the portable flags are chosen)."""
    try:
        cpuinfo = read_cpuinfo()
    except OSError:
        cpuinfo = ""
    return arm_cpuinfo(cpuinfo, platform.machine(), read_auxv())


def this_machine() -> str:
    """The flags install.sh chooses on this machine."""
    return choose(this_machine_cpuinfo(), platform.machine())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print llama.cpp's CMAKE_ARGS for this CPU.")
    parser.add_argument("--portable", action="store_true", help="the portable build instead")
    parser.add_argument("--cpuinfo", type=Path, help="read this file, not /proc/cpuinfo")
    parser.add_argument("--machine", help="`uname -m` to assume (default: this machine's)")
    parser.add_argument(
        "--installed", metavar="CMAKE_ARGS", help="exit 0 if the installed llama_cpp has these"
    )
    parser.add_argument("--stamp", metavar="CMAKE_ARGS", help="record these for llama_cpp")
    parser.add_argument("--build", choices=BUILDS, default="native", help="with --stamp")
    args = parser.parse_args(argv)
    machine = args.machine or platform.machine()
    if args.installed is not None or args.stamp is not None:
        return _stamp_command(args.installed, args.stamp, args.build)
    if args.portable:
        print(portable(machine))
        return 0
    if args.cpuinfo is None:
        print(choose(this_machine_cpuinfo(), machine))
        return 0
    try:
        cpuinfo = read_cpuinfo(args.cpuinfo)
    except OSError as error:
        print(f"build_flags: cannot read {args.cpuinfo}: {error.strerror}", file=sys.stderr)
        return 2
    print(choose(cpuinfo, machine))
    return 0


def _stamp_command(installed: str | None, stamp: str | None, build: str) -> int:
    package = installed_package()
    if installed is not None:
        recorded = read_stamp(package) if package else None
        return 0 if recorded and recorded["cmake_args"] == installed else 1
    if package is None:
        print("build_flags: llama_cpp is not installed", file=sys.stderr)
        return 2
    write_stamp(package, stamp or "", build)
    return 0


if __name__ == "__main__":
    sys.exit(main())
