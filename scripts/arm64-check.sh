#!/usr/bin/env bash
# The ARM64 check: edgebench installed and run as on a Raspberry Pi 5 and 4, under emulation.
#
#   sudo scripts/arm64-check.sh                       both CPU models, cross-compiled llama.cpp
#   sudo scripts/arm64-check.sh --cpus cortex-a72     one CPU model
#   sudo scripts/arm64-check.sh --build native        compile llama.cpp under emulation (slow)
#   sudo scripts/arm64-check.sh --build-only          only the cross builds (the runs later)
#   sudo scripts/arm64-check.sh --no-run              build, install, pull and doctor, no run
#
# Needs root (chroot, mounts) and Debian's qemu-user-static, binfmt-support and mmdebstrap
# (and g++-aarch64-linux-gnu for the cross build):
#   apt-get install -y qemu-user-static binfmt-support mmdebstrap g++-aarch64-linux-gnu
# For each CPU model (QEMU_CPU, which qemu-user reads) it makes an arm64 Debian bookworm
# root (Raspberry Pi OS's base: Python 3.11 that refuses a system-wide pip install), clones
# this repository's HEAD into it, and does what docs/start/install.md says for a Pi:
# `python3 -m venv .venv && . .venv/bin/activate && ./install.sh`; then pulls the default
# model, runs `edgebench doctor` and `edgebench run --limit 3 --constraint none,mask`
# (with --retime none: emulated speed is not measured, and re-timing an example another
# process slowed would only decode it again at ~1 token/s).
# The emulated run takes about an hour per CPU model; one stopped (SIGTERM) is resumed by
# the next check from where it stopped.
# Last, the Cortex-A76 build under QEMU_CPU=cortex-a72 must be refused in one line
# (exit 1) before any example. Every step prints its time.
#
# Cached under $EDGEBENCH_ARM64_CACHE (default ~/.cache/edgebench/arm64): the root
# (bookworm/), the llama.cpp wheels (bookworm/root/.cache/edgebench/wheels: install.sh's
# own cache, one wheel per flag set) and the model. --clean starts from nothing.
#
# --build cross (the default) compiles llama-cpp-python on this machine with
# aarch64-linux-gnu-g++ for the flags install.sh chooses inside the root under that CPU
# model, and puts the wheel where install.sh looks first: install.sh then installs it as
# it would its own. --build native lets install.sh compile under emulation (measured
# 5-20 times slower; see docs/guides/raspberry-pi.md).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
cache="${EDGEBENCH_ARM64_CACHE:-$HOME/.cache/edgebench/arm64}"
cpus="cortex-a76 cortex-a72"
build="cross"
clean=0
build_only=0
no_run=0
mirror="${EDGEBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
llama_version="$(sed -n 's/^LLAMA_VERSION="\(.*\)"/\1/p' "$repo/install.sh")"
while [ $# -gt 0 ]; do
  case "$1" in
    --cpus) cpus="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --clean) clean=1; shift ;;
    --build-only) build_only=1; shift ;;
    --no-run) no_run=1; shift ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    *) echo "arm64-check: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$build" in cross|native) ;; *) echo "arm64-check: --build is cross or native, not '$build'" >&2; exit 2 ;; esac
[ "$build_only" -eq 0 ] || [ "$build" = cross ] || { echo "arm64-check: --build-only is for the cross build" >&2; exit 2; }

fail() { echo "arm64-check: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (chroot and mounts): run it with sudo"
command -v mmdebstrap >/dev/null || fail "mmdebstrap is missing: apt-get install -y mmdebstrap"
command -v qemu-aarch64-static >/dev/null || fail "qemu-user-static is missing: apt-get install -y qemu-user-static binfmt-support"
[ "$build" = native ] || command -v aarch64-linux-gnu-g++ >/dev/null \
  || fail "the cross compiler is missing: apt-get install -y g++-aarch64-linux-gnu (or --build native)"
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  update-binfmts --enable qemu-aarch64 || true
fi
grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null \
  || fail "qemu-aarch64 is not registered with binfmt_misc's F flag (apt-get install -y binfmt-support qemu-user-static)"

# -- timing: each step's wall time, and all of them again at the end -----------------
summary=()
step() {  # step NAME CMD...: run it, print and remember its time
  local name="$1" start end status=0
  shift
  echo "== $name"
  start=$(date +%s.%N)
  "$@" || status=$?
  end=$(date +%s.%N)
  local took
  took=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", b - a }')
  echo "== $name: ${took} s (exit $status)"
  summary+=("$(printf '%-44s %6s s  exit %s' "$name" "$took" "$status")")
  return "$status"
}

root="$cache/bookworm"
[ "$clean" -eq 1 ] && rm -rf "$root" "$root.part"
mkdir -p "$cache"

make_root() {
  rm -rf "$root.part"
  mmdebstrap --arch=arm64 --variant=minbase \
    --include=python3,python3-venv,python3-pip,python3-dev,build-essential,cmake,git,ca-certificates \
    bookworm "$root.part" "$mirror"
  mv "$root.part" "$root"
}
if [ ! -x "$root/usr/bin/python3" ]; then
  step "arm64 bookworm root (mmdebstrap)" make_root
fi

mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap unmount_all EXIT
for fs in proc dev sys; do
  if ! mountpoint -q "$root/$fs"; then
    case "$fs" in
      proc) mount -t proc proc "$root/proc" ;;
      *) mount --rbind "/$fs" "$root/$fs" ;;
    esac
    mounted+=("$root/$fs")
  fi
done
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# pip in the root trusts what this machine trusts (a TLS-inspecting proxy's CA included)
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

# in_root CPU CMD: a login-like shell in the root as its root user, on that CPU model.
# QEMU_CPU must stay in the environment: binfmt starts a new qemu for every arm64 program
# exec'd, and one started without it emulates qemu's "max" CPU (i8mm, SVE ...).
in_root() {
  local cpu="$1"
  shift
  QEMU_CPU="$cpu" chroot "$root" /usr/bin/env -i QEMU_CPU="$cpu" HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$*"
}

# The repository as a Pi owner gets it: a clone of HEAD (uncommitted changes are not in it).
clone() {
  rm -rf "$root/root/edgebench"
  git clone -q --no-local "$repo" "$root/root/edgebench"
}
step "clone of $(git -C "$repo" rev-parse --short HEAD)" clone

# The cross build: the flags install.sh chooses on this CPU model, built here, put in
# install.sh's wheel cache under its key, with the wheel's tag made linux_aarch64 (the
# package is Python and ctypes-loaded libraries: no CPython ABI in it).
cross_build() {
  local cpu="$1" flags key wheels out sdist
  flags="$(in_root "$cpu" "cd /root/edgebench && python3 edgebench/system/build_flags.py")"
  key="$(python3 -c 'import hashlib, sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])' "$llama_version $flags")"
  wheels="$root/root/.cache/edgebench/wheels/llama-cpp-python-$llama_version-$key"
  echo "install.sh's flags on $cpu: $flags"
  if ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "cached: $(ls "$wheels")"
    return 0
  fi
  sdist="$cache/src/llama_cpp_python-$llama_version.tar.gz"
  if [ ! -f "$sdist" ]; then
    python3 -m pip download --no-deps --no-binary :all: -d "$cache/src" "llama-cpp-python==$llama_version"
  fi
  out="$cache/cross/$key"
  rm -rf "$out" && mkdir -p "$out"  # the build folder stays: a stopped build goes on
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" CMAKE_ARGS="-DCMAKE_SYSTEM_NAME=Linux \
-DCMAKE_SYSTEM_PROCESSOR=aarch64 -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc \
-DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++ $flags" \
    python3 -m pip wheel --no-cache-dir --no-deps -w "$out" \
    --config-settings=build-dir="$cache/cross/build-$key" "$sdist"
  mkdir -p "$wheels"
  python3 "$repo/scripts/retag_wheel.py" "$out"/llama_cpp_python-*.whl linux_aarch64 "$wheels"
}

check_cpu() {
  local cpu="$1" venv="/root/venvs/$1"
  # one venv per CPU model (each its own build), made as the install page says (outside
  # the clone, which each check replaces)
  if [ "$build" = cross ]; then
    step "$cpu: cross-compiled llama-cpp-python" cross_build "$cpu"
  fi
  [ "$build_only" -eq 0 ] || return 0
  step "$cpu: venv + ./install.sh ($build build)" in_root "$cpu" \
    "cd /root/edgebench && python3 -m venv $venv && . $venv/bin/activate && ./install.sh"
  step "$cpu: edgebench models pull" in_root "$cpu" \
    "cd /root/edgebench && . $venv/bin/activate && edgebench models pull smollm2-135m-instruct"
  step "$cpu: edgebench doctor" in_root "$cpu" \
    "cd /root/edgebench && . $venv/bin/activate && edgebench doctor"
  [ "$no_run" -eq 0 ] || return 0
  # An emulated run takes about an hour per CPU model: a stopped one is resumed, not redone
  # (its run folder stays in the root; --clean starts over).
  step "$cpu: edgebench run --limit 3 --constraint none,mask" in_root "$cpu" \
    "cd /root/edgebench && . $venv/bin/activate && \
     if [ -e /root/run-$cpu/manifest.json ]; then edgebench run --resume /root/run-$cpu; \
     else edgebench run --limit 3 --constraint none,mask --retime none --out /root/run-$cpu; fi"
}

status=0
for cpu in $cpus; do
  check_cpu "$cpu" || status=1
done

# A Pi 5's build on a Pi 4: one line, exit 1, no example started.
misfit() {
  local out code
  set +e
  out="$(in_root cortex-a72 "cd /root/edgebench && . /root/venvs/cortex-a76/bin/activate && rm -rf /root/run-misfit && \
     edgebench run --limit 3 --constraint none,mask --out /root/run-misfit" 2>&1)"
  code=$?
  set -e
  echo "$out"
  [ "$code" -eq 1 ] || { echo "expected exit 1, got $code"; return 1; }
  [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] || { echo "expected one line"; return 1; }
  [ ! -e "$root/root/run-misfit" ] || { echo "a run folder was made"; return 1; }
}
if [ "$build_only" -eq 0 ] && [ -d "$root/root/venvs/cortex-a76" ]; then
  step "cortex-a76 build under cortex-a72: refused" misfit || status=1
fi

echo "== summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m) host, $(qemu-aarch64-static -version | head -1))"
printf '%s\n' "${summary[@]}"
exit "$status"
