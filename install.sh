#!/usr/bin/env bash
# Install edgebench with the llama.cpp runtime, compiled for this machine's CPU.
#
#   ./install.sh            the tool and its llama.cpp runtime
#   ./install.sh dev        ... plus what the tests need (pytest, ruff, the report extra,
#                           and Debian's chromium for the HTML report's browser test)
#   ./install.sh dev,hf     extras are comma-separated (see pyproject.toml)
#   ./install.sh --portable [extras]   the portable build (same as EDGEBENCH_BUILD=portable)
#
# llama-cpp-python compiles llama.cpp from source. Its default (GGML_NATIVE=ON) asks the
# compiler for every instruction the CPU reports, which dies with SIGILL ("Illegal
# instruction") where the CPU advertises instructions the OS does not allow (VMs
# advertising AMX). So the flags are chosen by edgebench/system/build_flags.py from what
# the kernel enables (/proc/cpuinfo): AVX-512 where the OS allows it, never AMX; on ARM
# the board's -march (armv8.2-a+dotprod+fp16 on a Raspberry Pi 5, armv8-a on a Pi 4).
#   EDGEBENCH_BUILD=portable ./install.sh     the AVX2 build for any x86-64 CPU from ~2015 on
#   EDGEBENCH_CMAKE_ARGS="-DGGML_NATIVE=ON" ./install.sh   your own flags win
#
# pip caches a built wheel by the sdist, not by CMAKE_ARGS, so edgebench keeps its own
# wheel per flag set ($EDGEBENCH_WHEELS, default ~/.cache/edgebench/wheels): a set is
# compiled once (4-7 minutes on 2 cores), reinstalled in seconds after that, and never
# mixed up with a wheel compiled with other flags.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON="${PYTHON:-python3}"
LLAMA_VERSION="0.3.36"
build="${EDGEBENCH_BUILD:-native}"
if [ "${1:-}" = "--portable" ]; then
  build="portable"
  shift
fi
extras="llama${1:+,$1}"

case "$build" in
  native)   flags="$("$PYTHON" edgebench/system/build_flags.py)" ;;
  portable) flags="$("$PYTHON" edgebench/system/build_flags.py --portable)" ;;
  *) echo "edgebench: EDGEBENCH_BUILD must be native or portable, not '$build'" >&2; exit 2 ;;
esac
if [ -n "${EDGEBENCH_CMAKE_ARGS:-}" ]; then
  build="override"
  flags="$EDGEBENCH_CMAKE_ARGS"
fi

# --opt=VALUE: a lone "-DGGML_NATIVE=ON" would otherwise read as an option.
if "$PYTHON" edgebench/system/build_flags.py --installed="$flags"; then
  echo "edgebench: llama-cpp-python $LLAMA_VERSION already built with these flags ($build): $flags"
else
  key="$("$PYTHON" -c 'import hashlib, sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])' "$LLAMA_VERSION $flags")"
  wheels="${EDGEBENCH_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/edgebench/wheels}/llama-cpp-python-$LLAMA_VERSION-$key"
  if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "edgebench: compiling llama-cpp-python $LLAMA_VERSION ($build build, a few minutes): $flags"
    rm -rf "$wheels.part" && mkdir -p "$wheels"
    CMAKE_ARGS="$flags" "$PYTHON" -m pip wheel --no-cache-dir --no-deps \
      -w "$wheels.part" "llama-cpp-python==$LLAMA_VERSION"
    mv "$wheels.part"/llama_cpp_python-*.whl "$wheels"/ && rmdir "$wheels.part"
  fi
  echo "edgebench: installing llama-cpp-python $LLAMA_VERSION ($build build) from $wheels"
  "$PYTHON" -m pip install --force-reinstall --no-deps "$wheels"/llama_cpp_python-*.whl
  "$PYTHON" edgebench/system/build_flags.py --stamp="$flags" --build "$build"
fi

echo "edgebench: installing edgebench[$extras]"
CMAKE_ARGS="$flags" "$PYTHON" -m pip install -e ".[$extras]"

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
