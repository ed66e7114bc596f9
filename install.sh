#!/usr/bin/env bash
# Install edgebench with the llama.cpp runtime, built for any x86-64 CPU from ~2015 on.
#
#   ./install.sh            the tool and its llama.cpp runtime
#   ./install.sh dev        ... plus what the tests need (pytest, ruff, the report extra,
#                           and Debian's chromium for the HTML report's browser test)
#   ./install.sh dev,hf     extras are comma-separated (see pyproject.toml)
#
# llama-cpp-python compiles llama.cpp from source. Its default (GGML_NATIVE=ON) tunes the
# build for the build machine's CPU, which dies with SIGILL ("Illegal instruction") on
# machines that advertise instructions they do not allow (seen on VMs advertising AMX).
# So the default here is a portable AVX2 build. Your own flags win:
#   EDGEBENCH_CMAKE_ARGS="-DGGML_NATIVE=ON" ./install.sh          # tuned for this CPU
#   EDGEBENCH_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_CPU_ARM_ARCH=armv8.2-a+dotprod" ./install.sh
# On ARM (Raspberry Pi) the default is GGML_NATIVE=OFF without the x86 flags.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON="${PYTHON:-python3}"
LLAMA_VERSION="0.3.36"
extras="llama${1:+,$1}"

case "$(uname -m)" in
  x86_64|amd64)
    portable="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" ;;
  *)
    portable="-DGGML_NATIVE=OFF" ;;
esac

if [ -n "${EDGEBENCH_CMAKE_ARGS:-}" ]; then
  # pip caches built wheels by version, not by flags: rebuild so the flags take effect.
  echo "edgebench: building llama-cpp-python with EDGEBENCH_CMAKE_ARGS=$EDGEBENCH_CMAKE_ARGS"
  CMAKE_ARGS="$EDGEBENCH_CMAKE_ARGS" "$PYTHON" -m pip install --no-cache-dir \
    --force-reinstall --no-deps "llama-cpp-python==$LLAMA_VERSION"
fi

echo "edgebench: installing edgebench[$extras] (llama.cpp flags: ${EDGEBENCH_CMAKE_ARGS:-$portable})"
CMAKE_ARGS="${EDGEBENCH_CMAKE_ARGS:-$portable}" "$PYTHON" -m pip install -e ".[$extras]"

# The HTML report test renders the page in a real headless browser: Debian's chromium
# (the test never downloads a browser). Installed where apt is available and we may use it.
case ",$extras," in
  *,dev,*)
    if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
      if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo"
        echo "edgebench: installing chromium (apt) for the HTML report test"
        $sudo apt-get update -q && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
          || echo "edgebench: could not install chromium; the browser test will be skipped (fails in CI)"
      else
        echo "edgebench: no apt-get; install Chromium yourself for the HTML report test"
      fi
    fi ;;
esac
