"""/proc/cpuinfo of the boards install.sh builds llama.cpp for (a Raspberry Pi 5 and a
Pi 4), and the CMake arguments it chooses read back as options: for the build-flag
tests, unit (the choice) and system (install.sh itself, a cross compiler)."""

from __future__ import annotations

# /proc/cpuinfo of a Raspberry Pi 5 (BCM2712, 4x Cortex-A76) under Raspberry Pi OS bookworm.
PI5_CORE = """processor\t: {n}
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid {rest}
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x4
CPU part\t: 0xd0b
CPU revision\t: 1
"""
PI5 = "\n".join(PI5_CORE.format(n=n, rest="asimdrdm lrcpc dcpop asimddp") for n in range(4)) + (
    "\nRevision\t: d04170\nSerial\t\t: 5c2d1f0e8a3b7c61\n"
    "Model\t\t: Raspberry Pi 5 Model B Rev 1.0\n"
)

# A Raspberry Pi 4 (BCM2711, 4x Cortex-A72, ARMv8.0: no dotprod, no fp16 arithmetic).
PI4_CORE = """processor\t: {n}
BogoMIPS\t: 108.00
Features\t: fp asimd evtstrm crc32 cpuid
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x0
CPU part\t: 0xd08
CPU revision\t: 3
"""
PI4 = "\n".join(PI4_CORE.format(n=n) for n in range(4)) + (
    "\nRevision\t: c03114\nSerial\t\t: 10000000a1b2c3d4\n"
    "Model\t\t: Raspberry Pi 4 Model B Rev 1.4\n"
)


def options(cmake_args: str) -> dict[str, str]:
    """-DNAME=VALUE ... as {NAME: VALUE}."""
    pairs = (arg.removeprefix("-D").split("=", 1) for arg in cmake_args.split())
    return {name: value for name, value in pairs}
