"""install.sh builds llama-cpp-python with the flags edgebench/system/build_flags.py chooses,
keeps one wheel per flag set, and never reuses a wheel or an install made with other flags.

The real install.sh runs with PYTHON set to a stub that logs the pip calls (nothing is
compiled or installed) and keeps the build stamp in a file; build_flags.py itself runs for
real, without site-packages, as it does before edgebench is installed. The ARM flags
chosen for a Raspberry Pi 5 and a Pi 4 go through a real aarch64 cross compiler (Debian's
gcc-aarch64-linux-gnu) where one is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edgebench.system import build_flags
from tests.helpers.cpuinfo import PI4, PI5, options

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(build_flags.__file__)

STUB = """#!/usr/bin/env bash
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  echo "pip $3 | ${{*: -1}} | CMAKE_ARGS=${{CMAKE_ARGS:-}}" >> "$STUB_LOG"
  if [ "$3" = "wheel" ]; then
    while [ $# -gt 0 ]; do
      [ "$1" = "-w" ] && mkdir -p "$2" && touch "$2/llama_cpp_python-0.3.36-py3-linux.whl"
      shift
    done
  fi
  exit 0
fi
case "$2" in
  --installed=*) [ -f "$STUB_STAMP" ] && [ "$(cat "$STUB_STAMP")" = "${{2#*=}}" ]; exit $? ;;
  --stamp=*) echo "stamp $4" >> "$STUB_LOG"; printf '%s' "${{2#*=}}" > "$STUB_STAMP"; exit 0 ;;
esac
exec {python} -S "$@"
"""


class Installer:
    def __init__(self, tmp_path: Path) -> None:
        self.log = tmp_path / "log"
        stub = tmp_path / "python3"
        stub.write_text(STUB.format(python=sys.executable))
        stub.chmod(0o755)
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "PYTHON": str(stub),
            "EDGEBENCH_WHEELS": str(tmp_path / "wheels"),
            "STUB_LOG": str(self.log),
            "STUB_STAMP": str(tmp_path / "stamp"),
        }

    def __call__(self, *args: str, **env: str) -> list[str]:
        """install.sh's pip calls and stamps, one line each."""
        self.log.write_text("")
        done = subprocess.run(
            ["bash", str(REPO / "install.sh"), *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return self.log.read_text().splitlines()


@pytest.fixture()
def install(tmp_path: Path) -> Installer:
    return Installer(tmp_path)


NATIVE = build_flags.this_machine()
PORTABLE = build_flags.portable(os.uname().machine)


def test_the_default_compiles_the_chosen_flags_once(install: Installer) -> None:
    calls = install()
    assert calls[0].startswith("pip wheel | llama-cpp-python==0.3.36")
    assert calls[0].endswith(f"CMAKE_ARGS={NATIVE}")
    assert calls[1].startswith("pip install | ") and "/wheels/llama-cpp-python-0.3.36-" in calls[1]
    assert calls[2:] == ["stamp native", f"pip install | .[llama] | CMAKE_ARGS={NATIVE}"]
    # Installed with these flags: the next install neither compiles nor reinstalls it.
    assert install() == [f"pip install | .[llama] | CMAKE_ARGS={NATIVE}"]


def test_the_portable_build_by_flag_and_back_without_compiling_again(install: Installer) -> None:
    install()
    calls = install("--portable", "dev")
    assert calls[0].startswith("pip wheel") and calls[0].endswith(f"CMAKE_ARGS={PORTABLE}")
    assert calls[-2:] == ["stamp portable", f"pip install | .[llama,dev] | CMAKE_ARGS={PORTABLE}"]
    # Back to the default: its wheel is kept under its own flags, reinstalled, not rebuilt.
    back = install()
    assert [call.split(" |")[0] for call in back] == ["pip install", "stamp native", "pip install"]
    assert install(EDGEBENCH_BUILD="portable")[0].startswith("pip install | /")


@pytest.mark.parametrize("mine", ["-DGGML_NATIVE=OFF -DGGML_AVX512=ON", "-DGGML_NATIVE=ON"])
def test_edgebench_cmake_args_win(install: Installer, mine: str) -> None:
    calls = install(EDGEBENCH_CMAKE_ARGS=mine)
    assert calls[0] == f"pip wheel | llama-cpp-python==0.3.36 | CMAKE_ARGS={mine}"
    assert calls[-2:] == ["stamp override", f"pip install | .[llama] | CMAKE_ARGS={mine}"]
    assert install(EDGEBENCH_CMAKE_ARGS=mine) == [f"pip install | .[llama] | CMAKE_ARGS={mine}"]


def test_a_lone_flag_is_a_value_for_the_chooser_not_an_option() -> None:
    # The real script, not the stub: "-DGGML_NATIVE=ON" alone after --installed=.
    done = run_script("--installed=-DGGML_NATIVE=ON")
    assert done.returncode == 1, done.stderr  # no llama_cpp without site-packages: not built


def test_an_unknown_build_is_one_line(tmp_path: Path) -> None:
    env = {**Installer(tmp_path).env, "EDGEBENCH_BUILD": "fast"}
    done = subprocess.run(
        ["bash", str(REPO / "install.sh")], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    message = "edgebench: EDGEBENCH_BUILD must be native or portable, not 'fast'"
    assert done.stderr.strip() == message


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    # -S: no site-packages, as install.sh runs it before edgebench is installed.
    return subprocess.run(
        [sys.executable, "-S", str(SCRIPT), *args], capture_output=True, text=True, check=False
    )


def test_the_chooser_runs_without_edgebench_installed(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nFeatures\t: fp asimd fphp asimdhp asimddp cpuid\n")
    done = run_script("--cpuinfo", str(cpuinfo), "--machine", "aarch64")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod+fp16"
    assert run_script().stdout.strip() == NATIVE
    assert run_script("--portable", "--machine", "x86_64").stdout.strip() == (
        build_flags.PORTABLE_X86
    )


def test_an_unreadable_cpuinfo_is_one_line(tmp_path: Path) -> None:
    done = run_script("--cpuinfo", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"build_flags: cannot read {tmp_path / 'missing'}: No such file or directory"
    ]


CROSS_GCC = shutil.which("aarch64-linux-gnu-gcc")
# The macros ggml's ARM kernels are compiled under (ggml-cpu/arch/arm/*.c, simd-mappings.h).
ARM_MACROS = ("__ARM_FEATURE_DOTPROD", "__ARM_FEATURE_FP16_VECTOR_ARITHMETIC")


@pytest.mark.skipif(CROSS_GCC is None, reason="no aarch64 cross compiler (gcc-aarch64-linux-gnu)")
@pytest.mark.parametrize(("board", "cpuinfo", "expected"), [
    ("Raspberry Pi 5", PI5, set(ARM_MACROS)),
    ("Raspberry Pi 4", PI4, set()),
])  # fmt: skip
def test_an_aarch64_compiler_gets_the_boards_features(
    board: str, cpuinfo: str, expected: set[str]
) -> None:
    """The -march chosen for the board switches on exactly the ARM features ggml's fast
    quantized dot products are compiled under (checked with a real aarch64 compiler)."""
    march = options(build_flags.choose(cpuinfo, "aarch64"))["GGML_CPU_ARM_ARCH"]
    assert CROSS_GCC is not None
    done = subprocess.run(
        [CROSS_GCC, f"-march={march}", "-dM", "-E", "-"],
        input="",
        capture_output=True,
        text=True,
        check=True,
    )
    defined = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("#define")}
    assert defined & set(ARM_MACROS) == expected, board
